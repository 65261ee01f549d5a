"""Malformed review files through the real import path: rejected whole, reported, store untouched."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlmodel import SQLModel

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.curation.inbox import CurationFolders, ImportResult, import_review_file
from rag_assets.curation.models import OUTBOX_COLUMNS, ReviewLimits
from rag_assets.curation.queue import review_rows
from rag_assets.curation.review_file import read_review_file
from rag_assets.generation.generate import run_generation
from rag_assets.generation.planning import plan_tasks
from rag_assets.generation.models import GenerationConfig
from rag_assets.llm.offline import OfflineClient
from rag_assets.store.candidate_repository import SqlCandidateRepository
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.curation_repository import SqlCurationRepository
from rag_assets.store.engine import get_engine
from tests.conftest import SAMPLE_CORPUS


def _csv(rows: list[dict], delimiter: str = ",", header: list[str] | None = None) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=header or list(OUTBOX_COLUMNS), delimiter=delimiter, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode("utf-8-sig")


def _dump(engine) -> dict:
    with engine.connect() as conn:
        return {table.name: sorted(map(repr, conn.execute(select(table)).all()))
                for table in SQLModel.metadata.sorted_tables}


def pending_review(engine) -> tuple[str, list[dict]]:
    """The sample corpus snapshotted into ``engine``, 12 generated candidates saved, and their review rows."""
    corpus, candidates = SqlCorpusRepository(engine), SqlCandidateRepository(engine)
    version = snapshot_corpus(SAMPLE_CORPUS, ChunkerConfig(), corpus).version_id
    chunks = corpus.snapshot_chunks(version)
    outcome = run_generation(plan_tasks(chunks, set(), GenerationConfig(max_tasks=12)), OfflineClient(), None, version)
    candidates.save(outcome.candidates)
    return version, review_rows(candidates.for_version(version), {c.chunk_id: c for c in chunks})


@pytest.fixture
def world(store_url: str, tmp_path: Path):
    engine = get_engine(store_url)
    version, rows = pending_review(engine)
    good = [{**r, "decision": "accept", "reviewer": "ana"} for r in rows]
    return engine, version, good, CurationFolders(tmp_path / "curation")


def _cases(version: str, good: list[dict]) -> dict[str, tuple[bytes, str]]:
    first, second = good[0], good[1]
    plain = next(r for r in good[1:] if not any(";" in v for v in r.values()))  # splits on ';' as on ','
    semicolon_row = _csv([plain], delimiter=";").split(b"\r\n", 1)[1]
    found = len(next(csv.reader(io.StringIO(semicolon_row.decode("utf-8")))))
    truncated = _csv(good[:3])
    return {
        "wrong-columns.csv": (_csv(good, header=[c for c in OUTBOX_COLUMNS if c != "reviewer"]),
                              "file, reviewer: missing column(s): reviewer"),
        "unknown-id.csv": (_csv([{**first, "candidate_id": "q-000000000000"}]),
                           "row 2, candidate_id: unknown candidate id 'q-000000000000'"),
        "bad-decision.csv": (_csv([first, {**second, "decision": "maybe"}]),
                             "row 3, decision: unknown decision 'maybe'; use accept, reject or edit"),
        "edit-without-text.csv": (_csv([{**first, "decision": "edit"}]),
                                  "row 2, edited_question, edited_answer: decision 'edit' needs edited_question or edited_answer"),
        "conflicting-duplicates.csv": (_csv([first, second, {**first, "decision": "reject"}]),
                                       f"row 4, candidate_id: rows 2 and 4 disagree on candidate {first['candidate_id']}: accept vs reject"),
        "wrong-corpus-version.csv": (_csv([{**r, "corpus_version": "cv-aaaaaaaaaaaa"} for r in good[:2]]),
                                     f"row 2, corpus_version: candidate {first['candidate_id']} belongs to corpus version {version}, not cv-aaaaaaaaaaaa"),
        "empty.csv": (b"", "file: file is empty: no header row"),
        "latin1.csv": (_csv([{**first, "notes": "caf"}]).replace(b"caf", b"caf\xe9"),
                       "file: starts with a UTF-8 mark but is not valid UTF-8 (invalid byte at offset"),
        "semicolon-rows.csv": (_csv([first]) + semicolon_row,
                               f"row 3: expected 13 fields, found {found}: the row splits into 13 fields on ';', but the header uses ','; save the whole file with one delimiter"),
        "truncated.csv": (truncated[: truncated.rindex(b',"') + 12], "row 4: malformed CSV: unexpected end of data"),
        "formula.csv": (_csv([{**first, "notes": "=HYPERLINK(\"http://x\")"}]),
                        "row 2, notes: starts with '=' (a spreadsheet formula)"),
        "huge.csv": (_csv(good * 40), "file: file is"),
        "missing-reviewer.csv": (_csv([{**first, "reviewer": ""}]),
                                 "row 2, reviewer: reviewer is empty"),
    }


def test_each_malformed_file_is_rejected_whole_with_a_report_and_the_store_is_unchanged(world):
    engine, version, good, folders = world
    repo = SqlCurationRepository(engine)
    known = repo.candidates.corpus_versions_by_id()
    limits = ReviewLimits(max_bytes=40_000)
    folders.inbox.mkdir(parents=True)
    cases = _cases(version, good)
    assert len(cases) >= 12
    for name, (content, message) in cases.items():
        path = folders.inbox / name
        path.write_bytes(content)
        before = _dump(engine)
        result = import_review_file(path, folders, known, read_review_file, repo.apply_review, limits)
        assert result.status == "rejected", name
        assert _dump(engine) == before, f"{name} changed the store"
        report = (folders.rejected / f"{name}.errors.txt").read_text()
        assert message in report, (name, report)
        assert not path.exists() and (folders.rejected / name).exists()


def _apply_good_file(world) -> tuple[SqlCurationRepository, Path, ImportResult]:
    """The good review file dropped in the inbox and imported once."""
    engine, version, good, folders = world
    repo = SqlCurationRepository(engine)
    folders.inbox.mkdir(parents=True)
    path = folders.inbox / f"review-{version}.csv"
    path.write_bytes(_csv(good))
    return repo, path, import_review_file(path, folders, repo.candidates.corpus_versions_by_id(), read_review_file,
                                          repo.apply_review)


def test_a_good_file_after_the_bad_ones_applies_every_row_once(world):
    good, folders = world[2], world[3]
    repo, path, result = _apply_good_file(world)
    assert result.status == "applied" and result.summary["accepted"] == len(good)
    decisions = repo.decisions()
    assert [(d["reviewer"], d["source_file"], d["source_row"]) for d in decisions][:2] == [
        ("ana", path.name, 2), ("ana", path.name, 3)]
    path.write_bytes(_csv(good))
    again = import_review_file(path, folders, repo.candidates.corpus_versions_by_id(), read_review_file,
                               repo.apply_review)
    assert again.status == "already_applied" and len(repo.decisions()) == len(good)


_REIMPORT_IN_A_FRESH_PROCESS = """
import json, sys
from pathlib import Path
from rag_assets.curation.inbox import CurationFolders, ImportResult, import_review_file
from rag_assets.curation.review_file import read_review_file
from rag_assets.store.curation_repository import SqlCurationRepository
from rag_assets.store.engine import get_engine
url, path, root = sys.argv[1:]
repo = SqlCurationRepository(get_engine(url))
result = import_review_file(Path(path), CurationFolders(Path(root)), repo.candidates.corpus_versions_by_id(),
                            read_review_file, repo.apply_review, is_applied=repo.is_applied)
print(json.dumps([result.status, "great_expectations" in sys.modules, "pandas" in sys.modules]))
"""


def test_an_already_applied_file_is_filed_away_before_any_validation_import(world):
    engine, version, good, folders = world
    _, path, first = _apply_good_file(world)
    assert first.status == "applied"
    before = _dump(engine)
    path.write_bytes(_csv(good))
    url = engine.url.render_as_string(hide_password=False)
    out = subprocess.run([sys.executable, "-c", _REIMPORT_IN_A_FRESH_PROCESS, url, str(path), str(folders.root)],
                         check=True, capture_output=True, text=True).stdout
    assert json.loads(out) == ["already_applied", False, False]
    assert _dump(engine) == before and not path.exists()
    assert {p.name for p in folders.processed.iterdir()} == {path.name, f"review-{version}.{first.sha256[:8]}.csv"}
