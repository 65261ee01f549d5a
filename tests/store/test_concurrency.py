"""Two processes at once: imports lose no decision, golden versions never share a number."""

from __future__ import annotations

import pickle
from pathlib import Path

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.curation.review_file import read_review_file
from rag_assets.curation.review_writer import write_review_files
from rag_assets.curation.queue import review_rows
from rag_assets.generation.generate import run_generation
from rag_assets.generation.planning import plan_tasks
from rag_assets.generation.models import GenerationConfig
from rag_assets.golden.models import ExternalItem
from rag_assets.golden.pinning import PinnedItem
from rag_assets.llm.offline import OfflineClient
from rag_assets.store.candidate_repository import SqlCandidateRepository
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.curation_repository import SqlCurationRepository
from rag_assets.store.engine import get_engine
from rag_assets.store.golden_repository import SqlGoldenRepository
from tests.conftest import SAMPLE_CORPUS
from tests.store.processes import AWAIT_GO, start_together

# Applies a review file read and validated beforehand (by the test, pickled): the race under test is the store's
# import transaction. Reading a file in each process cost more than the rest of the test (the validation imports
# Great Expectations, about 4 s of CPU per process) and happens before the processes are released anyway.
IMPORT = f"""
import pickle, sys
from pathlib import Path
from rag_assets.store.engine import get_engine
from rag_assets.store.curation_repository import SqlCurationRepository
url, path = sys.argv[1], Path(sys.argv[2])
repo = SqlCurationRepository(get_engine(url))
review = pickle.loads(path.read_bytes())
{AWAIT_GO}
print(repo.apply_review(review))
"""

BUILD = f"""
import sys
from rag_assets.golden.build import GoldenBuild, GoldenDiff
from rag_assets.store.engine import get_engine
from rag_assets.store.golden_repository import SqlGoldenRepository
url, name = sys.argv[1], sys.argv[2]
repo = SqlGoldenRepository(get_engine(url))
items = tuple(repo.accepted_items())
{AWAIT_GO}
print([repo.save_version(GoldenBuild(f"cv-{{name}}-{{n}}", items, (), f"{{name}}-{{n}}"), None, GoldenDiff()).number
       for n in range(8)])
"""


def test_two_imports_at_once_lose_no_decision(store_url: str, tmp_path: Path):
    engine = get_engine(store_url)
    corpus, candidates = SqlCorpusRepository(engine), SqlCandidateRepository(engine)
    version = snapshot_corpus(SAMPLE_CORPUS, ChunkerConfig(), corpus).version_id
    chunks = corpus.snapshot_chunks(version)
    outcome = run_generation(plan_tasks(chunks, set(), GenerationConfig()), OfflineClient(), None, version)
    candidates.save(outcome.candidates)
    rows = review_rows(candidates.for_version(version), {c.chunk_id: c for c in chunks})
    halves = {"a": rows[0::2], "b": rows[1::2]}
    for name, half in halves.items():
        decided = [{**r, "decision": "edit" if i % 3 == 0 else "accept", "edited_answer": f"{name}{i}" if i % 3 == 0 else "",
                    "reviewer": name} for i, r in enumerate(half)]
        write_review_files(decided, tmp_path / f"{name}.csv", tmp_path / f"{name}.jsonl")
        review = read_review_file(tmp_path / f"{name}.csv", candidates.corpus_versions_by_id())
        assert len(review.rows) == len(half)
        (tmp_path / f"{name}.review.pickle").write_bytes(pickle.dumps(review))
    start_together(IMPORT, [(store_url, str(tmp_path / f"{name}.review.pickle")) for name in halves])
    decisions = SqlCurationRepository(engine).decisions()
    assert len(decisions) == len(rows)
    assert {d["candidate_id"] for d in decisions} == {r["candidate_id"] for r in rows}
    golden = SqlGoldenRepository(engine)
    assert len(golden.accepted_items()) == len(rows)


def test_two_processes_saving_golden_versions_never_share_a_number(store_url: str):
    item = ExternalItem("1", "What is the default port?", "7443.")
    SqlCurationRepository(get_engine(store_url)).import_items([PinnedItem(item, (), ())], "cv-x", "test", "t.json", "0" * 64)
    start_together(BUILD, [(store_url, name) for name in ("a", "b")])
    numbers = [v.number for v in SqlGoldenRepository(get_engine(store_url)).versions()]
    assert numbers == list(range(1, 17))
