"""The Kubernetes example cannot run here (no cluster); what can be checked without one is.

The code location loads with the k8s_job_executor, the launchpad run config is valid for it, and
the files name the same Secret, volume, environment variables and limits, so a rename in one of
them cannot silently break a deployment.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import dagster as dg
import yaml

from rag_assets.defs.resources import API_KEY_ENV
from rag_assets.settings import CORPUS_ROOT_ENV, CURATION_ROOT_ENV, DATABASE_URL_ENV, HOME_ENV, LLM_RPM_ENV
from tests.conftest import PROJECT_ROOT

K8S = PROJECT_ROOT / "deploy" / "k8s"


def _yaml(name: str) -> dict:
    return yaml.safe_load((K8S / name).read_text())


def test_every_job_of_the_k8s_code_location_runs_its_steps_as_kubernetes_jobs_with_the_documented_config():
    # A code server loads its definitions with an instance at hand; so does this test (without one,
    # Dagster falls back on whatever instance an earlier test of the process left behind).
    with dg.instance_for_test():
        defs = runpy.run_path(str(K8S / "definitions.py"))["defs"]
        dg.Definitions.validate_loadable(defs)
    jobs = [job for job in defs.resolve_all_job_defs() if not job.name.startswith("__")]
    assert {job.name for job in jobs} >= {"lifecycle", "curation_import", "reevaluate"}
    assert {job.executor_def.name for job in jobs} == {"k8s"}
    validation = dg.validate_run_config(defs.resolve_job_def("lifecycle"), _yaml("run_config.yaml"))
    assert validation["execution"]["k8s"]["env_secrets"] == ["rag-assets-secrets"]


def test_the_manifests_values_and_run_config_agree_on_secret_volume_environment_and_limits():
    secrets = {doc["metadata"]["name"]: doc for doc in yaml.safe_load_all((K8S / "secret.example.yaml").read_text())}
    project_secret = secrets["rag-assets-secrets"]["stringData"]
    assert set(project_secret) == {API_KEY_ENV, DATABASE_URL_ENV}
    assert not project_secret[API_KEY_ENV].startswith("sk-"), "a placeholder, never a key"

    values, run_config = _yaml("values.yaml"), _yaml("run_config.yaml")["execution"]["config"]
    (deployment,) = values["dagster-user-deployments"]["deployments"]
    assert deployment["envSecrets"] == values["runLauncher"]["config"]["k8sRunLauncher"]["envSecrets"] == [
        {"name": "rag-assets-secrets"}]
    assert run_config["env_secrets"] == ["rag-assets-secrets"]
    assert values["postgresql"]["postgresqlScheme"] == "postgresql+psycopg2"

    env = {item["name"]: item["value"] for item in deployment["env"]}
    assert set(env) == {HOME_ENV, CORPUS_ROOT_ENV, CURATION_ROOT_ENV, LLM_RPM_ENV}
    assert f"{LLM_RPM_ENV}={env[LLM_RPM_ENV]}" in run_config["env_vars"]
    claim = yaml.safe_load((K8S / "volume.yaml").read_text())["metadata"]["name"]
    mount = deployment["volumeMounts"][0]["mountPath"]
    assert all(path.startswith(mount + "/") for name, path in env.items() if name != LLM_RPM_ENV)
    for volumes in (deployment["volumes"], run_config["volumes"]):
        assert volumes == [{"name": "rag-assets-data", "persistentVolumeClaim": {"claimName": claim}}]

    code_file = deployment["dagsterApiGrpcArgs"][1]
    assert code_file == "/app/deploy/k8s/definitions.py"
    assert "COPY deploy/k8s/definitions.py ./deploy/k8s/definitions.py" in (K8S / "Dockerfile").read_text()

    instance = yaml.safe_load((PROJECT_ROOT / "deploy" / "dagster.yaml").read_text())["concurrency"]
    chart = values["concurrency"]
    assert (chart["pools"]["defaultLimit"], chart["pools"]["granularity"]) == (
        instance["pools"]["default_limit"], instance["pools"]["granularity"])
    assert chart["runs"]["maxConcurrentRuns"] == instance["runs"]["max_concurrent_runs"]
    assert chart["runs"]["tagConcurrencyLimits"] == instance["runs"]["tag_concurrency_limits"]
