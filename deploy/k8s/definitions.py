"""The rag_assets code location on Kubernetes: the project's Definitions, each step its own pod.

The code server in the image serves this file (``dagster api grpc -f /app/deploy/k8s/definitions.py``,
see values.yaml). ``k8s_job_executor`` runs every step of a run as a Kubernetes Job, so the LLM
steps that wait for a slot of the ``anthropic`` pool are not started until they hold one, and a
long evaluation does not share a pod with the rest of the run. The project's own definitions stay
executor-agnostic (the in-process and multiprocess executors run them locally and in tests).
"""

import dagster as dg
from dagster_k8s import k8s_job_executor

from rag_assets.definitions import defs as project_defs

defs = dg.Definitions.merge(project_defs, dg.Definitions(executor=k8s_job_executor))
