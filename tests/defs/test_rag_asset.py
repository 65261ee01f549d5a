"""rag_answers through Dagster: the reference system after a review, a user's broken callable, and what
each answer shard reads of the snapshot."""

from __future__ import annotations

import dagster as dg
import pytest

from rag_assets.defs.assets.rag import rag_answers
from rag_assets.defs.checks import rag_answers_pinned
from rag_assets.defs.resources import RESOURCES, RagSystemResource
from rag_assets.rag import bm25
from rag_assets.store.corpus_repository import SqlCorpusRepository
from tests.conftest import SharedCheckout
from tests.defs.lifecycle import LifecycleRun, check_evaluations, metadata
from tests.fakes.rag_systems import KNOWN_CHUNK


def test_the_lifecycle_answers_every_golden_item_with_the_reference_system(lifecycle_run: LifecycleRun):
    result = lifecycle_run.result  # the lifecycle job's run on the sample after its bundled review
    golden, rag = metadata(result, "golden_set"), metadata(result, "rag_answers")
    assert rag["items"] == golden["items"] == rag["answered"] + rag["errors"]
    assert (rag["system"], rag["golden_version"], rag["errors"]) == ("reference", golden["golden_version"], 0)
    assert rag["llm"].startswith("offline")
    assert rag["latency_p95_ms"] >= rag["latency_p50_ms"] > 0
    assert check_evaluations(result)["rag_answers_pinned"].passed


def test_a_broken_user_system_gives_item_errors_the_run_finishes_and_the_check_passes(lifecycle_run: LifecycleRun):
    version = lifecycle_run.version
    with lifecycle_run.instance() as instance:
        KNOWN_CHUNK["id"] = RESOURCES["store"].corpus().snapshot_chunks(version)[0].chunk_id
        broken = RagSystemResource(kind="callable", target="tests.fakes.rag_systems:by_question", timeout_seconds=1)
        result = dg.materialize([rag_answers, rag_answers_pinned], partition_key=version, instance=instance,
                                resources={**RESOURCES, "rag": broken})
        rag = metadata(result, "rag_answers")
        assert rag["system"] == "tests.fakes.rag_systems:by_question" and rag["answered"] == rag["items"] > 0
        assert check_evaluations(result)["rag_answers_pinned"].passed
        down = RagSystemResource(kind="http", target="http://127.0.0.1:9/none", retries=0, timeout_seconds=1)
        result = dg.materialize([rag_answers, rag_answers_pinned], partition_key=version, instance=instance,
                                resources={**RESOURCES, "rag": down})
        rag = metadata(result, "rag_answers")
        assert rag["errors"] == rag["items"] and "http_error" in rag["errors_by_kind"]
        assert check_evaluations(result)["rag_answers_pinned"].passed, "every item has its error record"


SYSTEMS = {"reference": RagSystemResource(),
           "snapshot ids": RagSystemResource(kind="callable", target="tests.fakes.rag_systems:good"),
           "own chunking, texts": RagSystemResource(kind="callable", target="tests.rag.own_chunking_system:texts_only")}


@pytest.mark.parametrize("system", sorted(SYSTEMS))
def test_answer_shards_read_only_the_chunks_their_answers_name_not_the_whole_snapshot(
        lifecycle_run: LifecycleRun, bundled_lifecycle_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch,
        system: str):
    version = lifecycle_run.version
    monkeypatch.setenv("OWN_RAG_DOCS", str(bundled_lifecycle_checkout.corpus))
    with lifecycle_run.instance() as instance:
        whole = RESOURCES["store"].corpus().snapshot_chunks(version)
        KNOWN_CHUNK["id"] = whole[0].chunk_id
        reads: list[int | None] = []  # per read of the snapshot: how many ids it asked for (None: every chunk)
        read = SqlCorpusRepository.snapshot_chunks

        def counted(repo, version_id, chunk_ids=None):
            reads.append(None if chunk_ids is None else len(chunk_ids))
            return read(repo, version_id, chunk_ids)

        monkeypatch.setattr(SqlCorpusRepository, "snapshot_chunks", counted)
        bodies = SqlCorpusRepository.documents
        documents_read: list[int] = []
        monkeypatch.setattr(SqlCorpusRepository, "documents",
                            lambda repo, *args: documents_read.append(1) or bodies(repo, *args))
        monkeypatch.setattr(bm25, "_MEMORY", {})  # the reference system's index is loaded again, once
        result = dg.materialize([rag_answers], partition_key=version, instance=instance,
                                resources={**RESOURCES, "rag": SYSTEMS[system]},
                                run_config={"ops": {"rag_answers": {"config": {"shard_size": 10}}}})
        answered = metadata(result, "rag_answers")
    shards = -(-answered["items"] // 10)
    assert shards > 1 and answered["errors"] == 0
    named = [n for n in reads if n is not None]
    if system == "own chunking, texts":  # each shard locates its texts in the documents once, reads no chunk
        assert len(documents_read) == shards and reads == []
        assert answered["contexts_unmapped_share"] <= 0.10 and set(answered["context_mapping"]) - {"unmapped"}
        return
    assert documents_read == []
    assert reads.count(None) == (1 if system == "reference" else 0)  # the plan's, to load the index
    assert len(named) == shards and all(0 < n < len(whole) for n in named)
