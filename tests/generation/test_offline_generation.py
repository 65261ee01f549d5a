"""The offline generator on the sample corpus: deterministic, every type, answers grounded in chunks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.generation.generate import run_generation
from rag_assets.generation.models import GenerationConfig, QuestionType
from rag_assets.generation.planning import allocate, plan_tasks
from rag_assets.llm.offline import OfflineClient
from rag_assets.store.candidate_repository import SqlCandidateRepository
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine
from rag_assets.text.tokens import content_words
from tests.conftest import PROJECT_ROOT, SAMPLE_CORPUS


def _generate(db: Path, corpus: Path = SAMPLE_CORPUS, config: GenerationConfig = GenerationConfig()):
    engine = get_engine(f"sqlite:///{db}")
    corpus_repo, candidates = SqlCorpusRepository(engine), SqlCandidateRepository(engine)
    version = snapshot_corpus(corpus, ChunkerConfig(), corpus_repo).version_id
    chunks = corpus_repo.snapshot_chunks(version)
    tasks = plan_tasks(chunks, candidates.covered_chunk_ids(excluding_version=version), config)
    outcome = run_generation(tasks, OfflineClient(), None, version, candidates.questions(excluding_version=version))
    candidates.save(outcome.candidates)
    return version, chunks, outcome, candidates


GENERATE_IN_A_PROCESS = """
import json, sys
from dataclasses import asdict
from pathlib import Path
from tests.generation.test_offline_generation import _generate
_, _, outcome, _ = _generate(Path(sys.argv[1]))
print(json.dumps([asdict(c) for c in outcome.candidates], sort_keys=True))
"""


def test_same_corpus_gives_the_same_candidates_byte_for_byte_in_any_process(tmp_path: Path):
    """Two processes with different string-hash seeds: nothing may depend on set or dict hashing."""
    outputs = []
    for seed in ("1", "2"):
        done = subprocess.run([sys.executable, "-c", GENERATE_IN_A_PROCESS, str(tmp_path / f"{seed}.db")],
                              capture_output=True, text=True, check=True, cwd=PROJECT_ROOT,
                              env={**os.environ, "PYTHONHASHSEED": seed})
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert len(json.loads(outputs[0])) >= 40


def test_all_six_types_are_generated_and_labelled_offline(tmp_path: Path):
    _, _, outcome, _ = _generate(tmp_path / "a.db")
    assert all(outcome.by_type()[t.value] > 0 for t in QuestionType), outcome.by_type()
    assert {(c.provider, c.prompt_ref) for c in outcome.candidates} == {("offline", "generate_questions@1")}
    assert outcome.stats.provider == "offline" and outcome.stats.requests == 0


def test_each_answer_is_supported_by_its_relevant_chunks_and_adversarial_ones_by_none(tmp_path: Path):
    _, chunks, outcome, _ = _generate(tmp_path / "a.db")
    text = {c.chunk_id: c.text for c in chunks}
    doc_version = {c.chunk_id: c.doc_version for c in chunks}
    vocabulary = {w for c in chunks for w in content_words(c.heading + " " + c.text)}
    for candidate in outcome.candidates:
        if candidate.question_type == "adversarial":
            assert candidate.relevant_chunks == ()
            assert "does not cover" in candidate.reference_answer
            continue
        support = set(content_words(" ".join(text[r.chunk_id] for r in candidate.relevant_chunks)))
        framing = {"version"} | {doc_version[r.chunk_id] for r in candidate.relevant_chunks}  # "In version 1.6: ..."
        missing = set(content_words(candidate.reference_answer)) - support - framing
        assert not missing, (candidate.question, missing)
        if candidate.question_type == "terminology":
            assert set(content_words(candidate.question)) - vocabulary, candidate.question
        if candidate.question_type in ("multi_hop", "comparative"):
            assert len(candidate.relevant_chunks) == 2


def test_relevant_chunks_carry_the_content_hash_of_the_snapshot(tmp_path: Path):
    _, chunks, outcome, repo = _generate(tmp_path / "a.db")
    hashes = {c.chunk_id: c.content_hash for c in chunks}
    stored = repo.for_version(outcome.candidates[0].corpus_version)
    assert {c.candidate_id for c in stored} == {c.candidate_id for c in outcome.candidates}
    for candidate in stored:
        assert all(hashes[r.chunk_id] == r.content_hash for r in candidate.relevant_chunks + candidate.source_chunks)


def test_a_new_corpus_version_only_asks_about_chunks_no_earlier_version_covered(tmp_path: Path, sample_corpus: Path):
    db = tmp_path / "a.db"
    first_version, _, first, repo = _generate(db, sample_corpus)
    covered = repo.covered_chunk_ids()
    limits = sample_corpus / "v2" / "limits.md"
    limits.write_text(limits.read_text() + "\n## Archive tier\n\nThe archive tier keeps cold vaults for 7 years at 40% lower cost.\n")
    version, _, second, _ = _generate(db, sample_corpus)
    assert version != first_version
    assert second.candidates, "the new chunk gets questions"
    for candidate in second.candidates:
        assert any(r.chunk_id not in covered for r in candidate.source_chunks)


def test_materializing_the_same_version_again_adds_nothing(tmp_path: Path):
    db = tmp_path / "a.db"
    version, _, first, repo = _generate(db)
    _, _, again, _ = _generate(db)
    assert [c.candidate_id for c in again.candidates] == [c.candidate_id for c in first.candidates]
    assert repo.save(again.candidates) == 0


def test_type_quotas_follow_the_mix_by_largest_remainder():
    assert allocate(10, {"factual": 0.5, "multi_hop": 0.25, "adversarial": 0.25}) == {
        "factual": 5, "multi_hop": 3, "adversarial": 2}
    assert allocate(7, {"a": 1, "b": 1, "c": 1}) == {"a": 3, "b": 2, "c": 2}
    assert sum(allocate(60, {"factual": 0.3, "multi_hop": 0.15, "abstractive": 0.15, "comparative": 0.15,
                             "adversarial": 0.1, "terminology": 0.15}).values()) == 60


def test_a_type_mix_with_an_unknown_type_is_refused():
    with pytest.raises(ValueError, match="unknown question types in type_mix: trivia"):
        GenerationConfig(type_mix={"trivia": 1.0})
