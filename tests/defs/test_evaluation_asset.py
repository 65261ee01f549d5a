"""evaluation through Dagster: offline scores and report, a planted regression, and the same system again."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from rag_assets.cli import main
from rag_assets.defs.assets.evaluation import evaluation
from rag_assets.defs.assets.rag import rag_answers
from rag_assets.defs.resources import RESOURCES, RagSystemResource
from rag_assets.settings import REPORT_URL_ENV
from tests.conftest import SharedCheckout
from tests.defs.lifecycle import (
    LifecycleRun, bundled_lifecycle, check_evaluations, current_version, metadata, run_job, stage_sample_review,
)

LENIENT: dict = {}  # the default profile, auto: the offline judge's own scale


def _published(live: Path) -> Path:
    """Where the shared checkout at ``live`` publishes its reports (inside it, so it is put back with it)."""
    return live / "published" / "reports"


@pytest.fixture(scope="module")
def published_lifecycle_checkout(tmp_path_factory: pytest.TempPathFactory) -> SharedCheckout:
    """``bundled_lifecycle_checkout`` (the lifecycle job with LENIENT, the default run config, on the sample after
    its bundled review), its reports also published to a folder of the checkout (RAG_ASSETS_REPORT_URL)."""
    assert LENIENT == {}, "bundled_lifecycle runs the lifecycle job with the default run config"
    root = tmp_path_factory.mktemp("lifecycle")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(REPORT_URL_ENV, _published(root / "checkout").as_uri())  # SharedCheckout's live folder
        return bundled_lifecycle(root)


@pytest.fixture
def published_lifecycle(published_lifecycle_checkout: SharedCheckout,
                        monkeypatch: pytest.MonkeyPatch) -> LifecycleRun:
    """The state after that run, whatever an earlier test did to it; the environment points at it."""
    published_lifecycle_checkout.use(monkeypatch)
    return published_lifecycle_checkout.made


def _evaluate_with(instance, version: str, rag: RagSystemResource):
    return dg.materialize([rag_answers, evaluation], partition_key=version, instance=instance, raise_on_error=False,
                          resources={**RESOURCES, "rag": rag}, run_config=LENIENT)


def test_offline_evaluation_scores_every_metric_writes_the_report_and_keeps_history(
        published_lifecycle: LifecycleRun, published_lifecycle_checkout: SharedCheckout):
    version, result = published_lifecycle.version, published_lifecycle.result
    published = _published(published_lifecycle_checkout.live)
    meta = metadata(result, "evaluation")
    assert list(meta)[0] == "worst_items" and meta["worst_items"].startswith("| item | type | question | why |")
    assert meta["report_url"] == f"{published.as_uri()}/{Path(meta['report']).name}"
    assert (published / Path(meta["report"]).name).read_bytes() == Path(meta["report"]).read_bytes()
    assert meta["judge"] == "offline (deterministic heuristics, not a model's judgment)"
    for metric in ("faithfulness", "answer_relevance", "context_precision", "context_recall", "recall@5",
                   "ndcg@5", "mrr@5", "hit_rate@5", "precision@5"):
        assert 0.0 <= meta[metric] <= 1.0, metric
    assert meta["judge_calls_per_item"] <= 5.0 and meta["judge_failures"] == 0  # 4 judging, 1 splitting statements
    page = Path(meta["report"]).read_text()
    assert page.count('<script type="application/json" data-chart=') >= 3
    assert page.count('<details class="item"') == meta["items"]  # every item can be drilled into
    assert page.count('<li class="claim v-') >= meta["items"] // 2 and page.count('<li class="context">') >= meta["items"]
    assert "### Per question type" in meta["summary"] and "### Diagnosis" in meta["summary"]
    checks = check_evaluations(result)
    assert checks["evaluation_thresholds"].passed and checks["judge_failure_budget"].passed
    assert checks["evaluation_regression"].passed
    history = RESOURCES["store"].evaluations().history([version])
    assert [h.evaluation_id for h in history] == [meta["evaluation_id"]] and history[0].passed


def test_a_planted_retrieval_regression_fails_the_gate_and_the_same_system_again_passes(
        published_lifecycle: LifecycleRun, tmp_path: Path):
    version = published_lifecycle.version
    baseline = metadata(published_lifecycle.result, "evaluation")  # the lifecycle's, with LENIENT
    with published_lifecycle.instance() as instance:
        worse = _evaluate_with(instance, version, RagSystemResource(k=1))
        regression = check_evaluations(worse)["evaluation_regression"]
        assert not regression.passed
        table = regression.metadata["regressions"].value
        assert "| recall@5 | overall |" in table and "FAIL" in table
        failed = next(line for line in table.splitlines() if line.startswith("| recall@5 | overall |"))
        p_value = float(failed.split("|")[8])
        assert p_value < 0.05
        assert "q-" in failed.split("|")[10], "the worse items are named"
        assert metadata(worse, "evaluation")["baseline"] == baseline["evaluation_id"]
        worse_meta = metadata(worse, "evaluation")
        out = tmp_path / "compare.md"
        assert main(["compare", baseline["evaluation_id"], worse_meta["evaluation_id"], "--out", str(out)]) == 0
        text = out.read_text(encoding="utf-8")
        recall = next(line for line in text.splitlines() if line.startswith("| recall@5 |"))
        assert recall.split("|")[8].strip() == "regression"  # the paired test per metric flags the planted change
        assert "## Items that flipped pass/fail" in text and "## Items that changed (B - A)" in text
        section = Path(worse_meta["report"]).read_text()
        assert f"Against baseline <code>{baseline['evaluation_id']}</code>" in section
        assert main(["compare", baseline["evaluation_id"], "ev-missing"]) == 2
        again = _evaluate_with(instance, version, RagSystemResource())
        assert check_evaluations(again)["evaluation_regression"].passed
        assert metadata(again, "evaluation")["baseline"] == baseline["evaluation_id"]


def test_an_evaluation_whose_report_cannot_be_published_leaves_nothing_half_saved(
        project_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    version = current_version()
    stage_sample_review(version)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the report folder would go", encoding="utf-8")
    monkeypatch.setenv("RAG_ASSETS_REPORT_URL", (blocker / "reports").as_uri())
    outbox = RESOURCES["curation"].folders().outbox
    with dg.instance_for_test() as instance:
        result = run_job(instance, "lifecycle", version, LENIENT, expect_success=False)
    failures = [e.step_key for e in result.all_events if e.is_step_failure]
    assert failures == ["evaluation.score_evaluation"]
    store = RESOURCES["store"]
    assert store.evaluations().history([version]) == []
    with store.engine().connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM evaluation_score").scalar() == 0
        assert conn.exec_driver_sql("SELECT count(*) FROM judge_review_sample").scalar() == 0
    assert list(store.report_dir().glob("*.html")) == []
    assert list(outbox.glob("judge-review-*")) == []
