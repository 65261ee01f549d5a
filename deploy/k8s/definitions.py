"""The rag_assets code location on Kubernetes: the project's Definitions, each step its own pod.

The code server in the image serves this file (``dagster api grpc -f /app/deploy/k8s/definitions.py``,
see values.yaml). ``k8s_job_executor`` runs every step of a run as a Kubernetes Job, so the LLM
steps that wait for a slot of the ``anthropic`` pool are not started until they hold one, and a
long evaluation does not share a pod with the rest of the run. The project's own definitions run
their steps as processes forked on one machine (rag_assets/defs/executors.py); here that executor is
replaced.
"""

import dagster as dg
from dagster_k8s import k8s_job_executor

from rag_assets.definitions import defs as project_defs

# The project's definitions, every part as it is but the executor (a process per step, locally).
defs = dg.Definitions(assets=project_defs.assets, asset_checks=project_defs.asset_checks, jobs=project_defs.jobs,
                      sensors=project_defs.sensors, schedules=project_defs.schedules, resources=project_defs.resources,
                      loggers=project_defs.loggers, metadata=project_defs.metadata, executor=k8s_job_executor)
