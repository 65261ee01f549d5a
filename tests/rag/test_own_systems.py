"""Systems that know nothing of the project score the bundled golden set through the assets.

One with its own 800-character windows and ids (with texts and sources), one returning texts only,
and the same BM25 over the snapshot's chunks returned as snapshot ids (the yardstick). Each runs
rag_answers, its error budget and the evaluation through Dagster on the golden set the bundled
simulated review makes.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from rag_assets.defs.assets.evaluation import evaluation
from rag_assets.defs.assets.rag import rag_answers
from rag_assets.defs.checks import rag_answers_error_budget
from rag_assets.defs.resources import RESOURCES, RagSystemResource
from tests.defs.lifecycle import build_golden_set, check_evaluations, metadata
from tests.fakes.rag_http import TOKEN, FakeRagHttpServer
from tests.rag import own_chunking_system

MODULE = "tests.rag.own_chunking_system"


def _systems(url: str) -> dict[str, RagSystemResource]:
    """Each way a team's system reaches us, all over the same own windows and BM25; snapshot_ids last."""
    return {
        "windows": RagSystemResource(kind="callable", target=f"{MODULE}:windows", timeout_seconds=30),
        "texts_only": RagSystemResource(kind="callable", target=f"{MODULE}:texts_only", timeout_seconds=30),
        "http_bearer": RagSystemResource(kind="http", target=f"{url}/own-windows", timeout_seconds=30,
                                         headers={"Authorization": "Bearer ${RAG_ASSETS_SYSTEM_TOKEN}"}),
        "langchain": RagSystemResource(kind="langchain", target=f"{MODULE}:langchain_chain", timeout_seconds=30),
        "llamaindex": RagSystemResource(kind="llamaindex", target=f"{MODULE}:llamaindex_engine", timeout_seconds=30),
        "snapshot_ids": RagSystemResource(kind="callable", target=f"{MODULE}:snapshot_ids", timeout_seconds=30),
    }


def _score(instance: dg.DagsterInstance, version: str, system: RagSystemResource) -> tuple[dict, dict, bool]:
    result = dg.materialize([rag_answers, rag_answers_error_budget, evaluation], partition_key=version,
                            instance=instance, resources={**RESOURCES, "rag": system}, raise_on_error=False)
    return (metadata(result, "rag_answers"), metadata(result, "evaluation"),
            check_evaluations(result)["rag_answers_error_budget"].passed)


def test_own_chunking_texts_only_http_langchain_and_llamaindex_score_like_the_same_retrieval_by_snapshot_ids(
        project_env: Path, sample_corpus: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OWN_RAG_DOCS", str(sample_corpus))
    monkeypatch.setenv("RAG_ASSETS_SYSTEM_TOKEN", TOKEN)
    with dg.instance_for_test() as instance, FakeRagHttpServer() as server:
        version = build_golden_set(instance)  # the golden set only: the lifecycle's own answers and scores go unused
        own_chunking_system.use_units([(c.chunk_id, c.path, c.text)
                                       for c in RESOURCES["store"].corpus().snapshot_chunks(version)])
        scored = {entry: _score(instance, version, system) for entry, system in _systems(server.base_url).items()}
        assert server.hits["/own-windows"] == 48
    rows = [f"{'system':<14}{'items':>6}{'errors':>7}{'unmapped':>10}{'recall@5':>10}{'hit_rate@5':>12}"
            f"{'doc_hit@5':>11}{'ndcg@5':>8}"]
    for entry, (rag, card, _) in scored.items():
        rows.append(f"{entry:<14}{rag['items']:>6}{rag['errors']:>7}{card['contexts_unmapped_share']:>10.3f}"
                    f"{card['recall@5']:>10.3f}{card['hit_rate@5']:>12.3f}{card['doc_hit_rate@5']:>11.3f}"
                    f"{card['ndcg@5']:>8.3f}")
    print("\n" + "\n".join(rows))
    yardstick = scored["snapshot_ids"][1]["recall@5"]
    for entry in ("windows", "texts_only", "http_bearer", "langchain", "llamaindex"):
        rag, card, budget_passed = scored[entry]
        assert rag["errors"] == 0 and card["rag_errors"] == 0 and budget_passed, entry
        assert card["contexts_unmapped_share"] <= 0.10, (entry, card["contexts_unmapped_share"])
        assert abs(card["recall@5"] - yardstick) <= 0.1, (entry, card["recall@5"], yardstick)
    same_retrieval = {entry: tuple(scored[entry][1][m] for m in ("recall@5", "hit_rate@5", "doc_hit_rate@5", "ndcg@5"))
                      for entry in ("windows", "texts_only", "http_bearer", "langchain", "llamaindex")}
    assert len(set(same_retrieval.values())) == 1, f"one retrieval, five ways to hand it over: {same_retrieval}"
    assert scored["snapshot_ids"][1]["contexts_unmapped_share"] == 0.0
    assert set(scored["snapshot_ids"][0]["context_mapping"]) == {"chunk_id"}
    assert scored["snapshot_ids"][0]["contexts_by_item"].count("\n") == 1, "a header only: no context given by text"
    windows = scored["windows"][0]
    assert set(windows["context_mapping"]) <= {"exact", "normalised", "fuzzy", "part", "unmapped"}
    assert windows["contexts_by_item"].count("\n| q-") == 48, "a row per item (48: under the table's 50)"
