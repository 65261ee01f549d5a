"""rag_assets.RagEvaluation: several lifecycles in one code location, each with its own keys and store."""

from __future__ import annotations

import json
import re
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
import yaml
from sqlalchemy import create_engine, text

from rag_assets import RagEvaluation
from rag_assets.corpus.snapshot import plan_snapshot
from rag_assets.curation.review_writer import write_review_files
from rag_assets.curation.simulate import simulate_review
from rag_assets.errors import ConfigError
from tests.conftest import PROJECT_ROOT
from tests.defs.lifecycle import check_evaluations, metadata

EXAMPLE = PROJECT_ROOT / "examples" / "two_products"
DG = Path(sys.executable).with_name("dg")


@pytest.fixture
def two_products(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dg.Definitions:
    """examples/two_products loaded as Dagster loads it (its workspace.yaml puts the folder on the path), with every
    instance's home under tmp_path."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    monkeypatch.setenv("RAG_ASSETS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("RAG_ASSETS_DATABASE_URL", raising=False)
    return dg.load_from_defs_folder(path_within_project=EXAMPLE)


def _version(defs: dg.Definitions, name: str) -> str:
    corpus, store = defs.resources[f"{name}_corpus"], defs.resources[f"{name}_store"]
    return plan_snapshot(corpus.resolved_root(), corpus.chunker(), store.corpus()).version_id


def _run(defs: dg.Definitions, instance: dg.DagsterInstance, job: str, version: str,
         run_config: dict | None = None, succeed: bool = True) -> dg.ExecuteInProcessResult:
    result = defs.resolve_job_def(job).execute_in_process(partition_key=version, instance=instance,
                                                          run_config=run_config or {}, raise_on_error=False)
    assert result.success == succeed, [e.step_failure_data.error.message for e in result.all_events
                                       if e.is_step_failure]
    return result


def _review_as_simulated_expert(defs: dg.Definitions, name: str, version: str) -> None:
    """The instance's review queue, decided by the simulated expert, dropped in the instance's inbox."""
    folders = defs.resources[f"{name}_curation"].folders()
    queue = folders.outbox / f"review-{version}.jsonl"
    rows = simulate_review([json.loads(line) for line in queue.read_text(encoding="utf-8").splitlines()])
    target = folders.inbox / f"review-{version}.csv"
    target.parent.mkdir(parents=True, exist_ok=True)
    write_review_files(rows, target, target.with_suffix(".jsonl"))
    target.with_suffix(".jsonl").unlink()


def _rows(database: Path, query: str) -> set:
    engine = create_engine(f"sqlite:///{database}")
    try:
        with engine.connect() as connection:
            return {row[0] for row in connection.execute(text(query))}
    finally:
        engine.dispose()


def test_two_instances_each_run_snapshot_to_evaluation_with_own_keys_partitions_and_store(
        two_products: dg.Definitions, tmp_path: Path):
    defs = two_products
    versions = {name: _version(defs, name) for name in ("handbook", "library")}
    assert versions["handbook"] != versions["library"]
    with dg.instance_for_test() as instance:
        for name, version in versions.items():
            instance.add_dynamic_partitions(f"{name}_corpus_versions", [version])
            first = _run(defs, instance, f"{name}_lifecycle", version)
            built = {e.asset_key.to_user_string() for e in first.get_asset_materialization_events()}
            assert f"{name}/question_candidates" in built and f"{name}/golden_set" not in built  # nothing reviewed yet
            assert "golden_set_quality" not in check_evaluations(first), "no golden set, no check: no RAG run"
            _review_as_simulated_expert(defs, name, version)
            with dg.build_sensor_context(instance=instance, definitions=defs, resources=defs.resources) as context:
                tick = defs.get_sensor_def(f"{name}_curation_inbox_sensor")(context)
            (request,) = tick.run_requests
            assert request.partition_key == version
            imported = _run(defs, instance, f"{name}_curation_import", version, request.run_config)
            golden = metadata(imported, f"{name}/golden_set")
            evaluation = metadata(imported, f"{name}/evaluation")
            assert golden["golden_version"] == 1 and golden["items"] > 0
            assert evaluation["golden_version"] == 1 and evaluation["items"] == golden["items"]
            assert evaluation["rag_errors"] == 0
            assert evaluation["thresholds"] == {"handbook": "profile offline", "library": str(
                EXAMPLE / "two_products" / "defs" / "library" / "thresholds.yaml")}[name]  # the instance's own gates
            assert set(check_evaluations(imported)) >= {"golden_set_quality", "evaluation_thresholds"}
            keys = {e.asset_key for e in imported.get_asset_materialization_events()}
            assert keys and all(key.path[0] == name for key in keys)

        for name, version in versions.items():
            assert instance.get_dynamic_partitions(f"{name}_corpus_versions") == [version]
        assert not instance.get_dynamic_partitions("corpus_versions")

    home = tmp_path / "home"
    for name, other in (("handbook", "library"), ("library", "handbook")):
        database = home / name / "rag_assets.db"
        assert _rows(database, "SELECT version_id FROM corpus_snapshot") == {versions[name]}
        assert _rows(database, "SELECT DISTINCT corpus_version FROM question_candidate") == {versions[name]}
        assert _rows(database, "SELECT DISTINCT corpus_version FROM golden_version") == {versions[name]}
        assert _rows(database, "SELECT DISTINCT corpus_version FROM rag_run") == {versions[name]}
        assert not _rows(database, f"SELECT version_id FROM corpus_snapshot WHERE version_id = '{versions[other]}'")
        assert list((home / name / "reports").iterdir()), "each instance writes its reports in its own home"


def test_the_example_lists_both_prefixes_and_binds_resources_per_instance(two_products: dg.Definitions):
    defs = two_products
    defs.validate_loadable(defs)
    keys = defs.resolve_asset_graph().get_all_asset_keys()
    assert {key.path[0] for key in keys} == {"handbook", "library"}
    assert dg.AssetKey(["library", "evaluation"]) in keys and dg.AssetKey("evaluation") not in keys
    assert set(defs.resources) == {f"{name}_{key}" for name in ("handbook", "library") for key in
                                   ("store", "corpus", "llm", "curation", "golden_policy", "rag", "production_logs")}
    assert Path(defs.resources["handbook_corpus"].root) == PROJECT_ROOT / "data" / "corpus"
    assert defs.resources["library_rag"].k == 3
    assert defs.resources["library_llm"].max_cost_usd == 2.0 and defs.resources["library_llm"].requests_per_minute == 50
    assert defs.resources["handbook_llm"].requests_per_minute is None
    assert defs.resources["library_llm"].api_key is None  # ${ANTHROPIC_API_KEY} is unset: offline
    schedules = {s.name: s.cron_schedule for s in defs.schedules}
    assert schedules == {"handbook_reevaluation_schedule": "0 6 * * *", "library_reevaluation_schedule": "30 6 * * 1"}
    groups = {defs.resolve_assets_def(key).group_names_by_key[key] for key in keys}
    assert groups == {f"{name}_{group}" for name in ("handbook", "library")
                      for group in ("corpus", "generation", "curation", "golden", "rag", "evaluation", "production",
                                    "calibration")}


def test_the_bundled_code_location_is_the_unnamed_instance_with_bare_keys():
    from rag_assets.definitions import defs

    assert {key.to_user_string() for key in defs.resolve_asset_graph().get_all_asset_keys()} == {
        "corpus_snapshot", "question_candidates", "curation_queue", "curated_decisions", "golden_set", "rag_answers",
        "evaluation", "judge_probes", "ab_comparison", "production_sample", "judge_calibration"}
    loaded = defs.resolve_assets_def("evaluation")
    assert loaded.partitions_def.name == "corpus_versions" and loaded.group_names_by_key == {loaded.key: "evaluation"}
    assert [node.name for node in loaded.node_def.node_defs] == ["plan_judge_shards", "judge_shard", "score_evaluation"]
    assert set(defs.resources) == {"store", "corpus", "llm", "curation", "golden_policy", "rag", "production_logs"}


def _component(**attributes) -> RagEvaluation:
    return RagEvaluation.resolve_from_yaml(yaml.safe_dump(attributes))


def test_the_key_is_taken_only_as_a_variable_reference(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    with pytest.raises(ConfigError, match=r"instance support: llm.api_key must name the environment variable that "
                                          r"holds the key, as '\$\{ANTHROPIC_API_KEY\}', never the key itself"):
        _component(name="support", llm={"api_key": "sk-ant-literal"}).resources(tmp_path)
    monkeypatch.setenv("SUPPORT_KEY", "sk-ant-from-env")
    llm = _component(name="support", llm={"api_key": "${SUPPORT_KEY}", "judge_model": "claude-x"}).resources(
        tmp_path)["llm"]
    assert llm.api_key == dg.EnvVar("SUPPORT_KEY") and llm.judge_model == "claude-x"


def test_bad_settings_name_the_field(tmp_path: Path):
    with pytest.raises(ConfigError, match=r"^evaluation_cron='daily' is not a cron expression; for example "
                                          r"evaluation_cron='0 6 \* \* \*' \(or @daily\)$"):
        _component(name="support", evaluation_cron="daily").lifecycle()
    with pytest.raises(ConfigError, match=r"^production_start='2026/01/01' is not an ISO date"):
        _component(name="support", production_start="2026/01/01").lifecycle()
    with pytest.raises(ConfigError, match="instance name 'Support-Docs' must be lower-case letters"):
        _component(name="Support-Docs").lifecycle()
    with pytest.raises(ConfigError, match="database_url_env RAG_ASSETS_DATABASE_URL is the unnamed instance's"):
        _component(name="support", database_url_env="RAG_ASSETS_DATABASE_URL").resources(tmp_path)
    with pytest.raises(ConfigError, match=r"^instance support: system: RAG system kind must be reference, callable, "
                                          r"http, langchain or llamaindex, got 'htpp'$"):
        _component(name="support", system={"kind": "htpp", "target": "http://127.0.0.1:9/rag"}).resources(tmp_path)
    with pytest.raises(ConfigError, match=r"^instance support: system: a callable RAG system needs target"):
        _component(name="support", system={"kind": "callable"}).resources(tmp_path)


def test_an_unnamed_instance_takes_no_yaml_settings():
    with pytest.raises(ConfigError, match="^the unnamed instance takes its settings from the RAG_ASSETS_\\* variables; "
                                          "give it a name to set corpus_root, evaluation_cron$"):
        dg.build_defs_for_component(_component(corpus_root="elsewhere", evaluation_cron="@daily"))


@pytest.mark.skipif(not DG.exists(), reason="the dg CLI (dagster-dg-cli) is not installed")
def test_dg_scaffolds_an_instance_that_loads(tmp_path: Path):
    project = tmp_path / "proj"
    (project / "proj" / "defs").mkdir(parents=True)
    (project / "proj" / "__init__.py").write_text("")
    (project / "proj" / "defs" / "__init__.py").write_text("")
    (project / "pyproject.toml").write_text('[project]\nname = "proj"\nversion = "0.0.1"\n\n[tool.dg]\n'
                                           'directory_type = "project"\n\n[tool.dg.project]\nroot_module = "proj"\n')
    env = {**os.environ, "PATH": f"{DG.parent}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1"}
    listed = subprocess.run([str(DG), "list", "components"], cwd=project, env=env, capture_output=True, text=True,
                            timeout=300)
    assert "rag_assets.RagEvaluation" in listed.stdout, listed.stderr
    scaffold = subprocess.run([str(DG), "scaffold", "defs", "rag_assets.RagEvaluation", "support-docs"], cwd=project,
                              env=env, capture_output=True, text=True, timeout=300)
    assert scaffold.returncode == 0, scaffold.stderr
    folder = project / "proj" / "defs" / "support-docs"
    written = yaml.safe_load((folder / "defs.yaml").read_text())
    assert written["type"] == "rag_assets.RagEvaluation"
    assert written["attributes"]["name"] == "support_docs"
    assert written["attributes"]["llm"]["api_key"] == "${ANTHROPIC_API_KEY}"
    assert sorted(p.name for p in (folder / "corpus").iterdir()) == [".gitkeep"], "the corpus folder the docs promise"
    shutil.copytree(EXAMPLE / "library_corpus", folder / "corpus", dirs_exist_ok=True)
    loaded = subprocess.run(
        [sys.executable, "-c", "import dagster as dg, pathlib; d = dg.load_from_defs_folder(path_within_project="
                               "pathlib.Path('.')); print(sorted(k.to_user_string() for k in "
                               "d.resolve_asset_graph().get_all_asset_keys())[0], d.resources['support_docs_corpus'].root)"],
        cwd=project, env={**env, "PYTHONPATH": str(project), "RAG_ASSETS_HOME": str(tmp_path / "home")},
        capture_output=True, text=True, timeout=300)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.split() == ["support_docs/ab_comparison", str(folder / "corpus")]


def test_two_instances_on_one_database_are_refused(tmp_path: Path):
    from rag_assets.defs.resources import StoreResource

    url = f"sqlite:///{tmp_path / 'shared.db'}"
    support = StoreResource(home=str(tmp_path), database_url_env="SHARED_URL", instance="support")
    billing = StoreResource(home=str(tmp_path), database_url_env="OTHER_URL", instance="billing")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SHARED_URL", url)
        env.setenv("OTHER_URL", url)
        support.corpus()  # the first instance to open the store claims it
        support.golden()
        with pytest.raises(ConfigError, match=rf"^the store {re.escape(url)} belongs to 'support'; instance 'billing' "
                                              r"needs a database of its own \(database_url_env naming another URL, "
                                              r"or none for SQLite in its home\)$"):
            billing.corpus()
    assert _rows(tmp_path / "shared.db", "SELECT instance FROM store_owner") == {"support"}


def test_paths_start_at_the_defs_folder_and_default_into_the_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("RAG_ASSETS_HOME", str(tmp_path / "home"))
    folder = tmp_path / "defs" / "support"
    defaults = _component(name="support", corpus_root="corpus").resources(folder)
    assert defaults["corpus"].root == str(folder / "corpus")
    assert defaults["store"].home == str(tmp_path / "home" / "support")
    assert defaults["curation"].root == str(tmp_path / "home" / "support" / "curation")
    assert defaults["production_logs"].root == str(tmp_path / "home" / "support" / "production_logs")
    assert defaults["store"].database_url_env is None and defaults["store"].instance == "support"
    placed = _component(name="support", home="../state", production_logs="/var/log/rag").resources(folder)
    assert placed["store"].home == str(tmp_path / "defs" / "state")
    assert placed["curation"].root == str(tmp_path / "defs" / "state" / "curation")
    assert placed["production_logs"].root == "/var/log/rag"


def test_the_documented_defs_yaml_resolves_to_an_instance_with_its_settings(tmp_path: Path):
    readme = (PROJECT_ROOT / "docs" / "components.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "type: rag_assets.RagEvaluation" in b]
    component = RagEvaluation.resolve_from_yaml(yaml.safe_dump(yaml.safe_load(block)["attributes"]))
    resources = component.resources(tmp_path)
    assert resources["rag"].kind == "http" and resources["rag"].headers == {"Authorization": "Bearer ${SUPPORT_RAG_TOKEN}"}
    assert resources["llm"].max_cost_usd == 5 and resources["llm"].requests_per_minute == 50
    assert component.lifecycle(tmp_path).key_prefix == ["support"]
