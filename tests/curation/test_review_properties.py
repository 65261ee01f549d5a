"""Property: any review file, however hostile, is applied whole or rejected whole with every problem
naming its row or field; a rejected file leaves the store unchanged; no exception escapes."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_assets.curation.inbox import CurationFolders, import_review_file
from rag_assets.curation.models import OUTBOX_COLUMNS
from rag_assets.curation.review_file import read_review_file
from rag_assets.curation.review_writer import write_review_files
from rag_assets.errors import ReviewFileRejected
from rag_assets.text.control import control_character_problem
from rag_assets.store.curation_repository import SqlCurationRepository
from rag_assets.store.engine import get_engine
from tests.curation.test_rejected_files_leave_the_store_unchanged import _dump, pending_review


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory):
    """A SQLite store with the sample corpus and a dozen candidates, and their outbox rows."""
    root = tmp_path_factory.mktemp("review-properties")
    engine = get_engine(f"sqlite:///{root / 'store.db'}")
    _, rows = pending_review(engine)
    return engine, rows, root


hostile_text = st.one_of(st.text(max_size=12), st.sampled_from(
    ["=1+1", "-2+3+cmd|' /C calc'!A0", "+1", "@x", "\tx", "\rx", "-3.5", "a\x00b", "\x1b[31m", "'=x", "", " "]))
decisions = st.one_of(st.sampled_from(["accept", "reject", "edit", "Accept ", ""]), hostile_text)


@st.composite
def review_tables(draw, rows: list[dict]) -> list[dict]:
    chosen = draw(st.lists(st.sampled_from(range(len(rows))), max_size=6))
    table = []
    for index in chosen:
        row = dict(rows[index])
        row["decision"] = draw(decisions)
        for column in draw(st.sets(st.sampled_from(OUTBOX_COLUMNS), max_size=3)):
            row[column] = draw(hostile_text)
        table.append(row)
    return table


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data(), delimiter=st.sampled_from([",", ";", "\t"]))
def test_any_review_file_is_applied_whole_or_rejected_whole_naming_row_or_field(shop, data, delimiter) -> None:
    engine, rows, root = shop
    table = data.draw(review_tables(rows))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(OUTBOX_COLUMNS), delimiter=delimiter, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(table)
    folders = CurationFolders(root / "curation")
    folders.inbox.mkdir(parents=True, exist_ok=True)
    path = folders.inbox / "review.csv"
    path.write_bytes(out.getvalue().encode("utf-8-sig"))
    repo = SqlCurationRepository(engine)
    before, decisions_before = _dump(engine), len(repo.decisions())

    result = import_review_file(path, folders, repo.candidates.corpus_versions_by_id(), read_review_file,
                                repo.apply_review)

    assert not path.exists(), "the file is filed away either way"
    if result.status == "rejected":
        assert result.problems and _dump(engine) == before
        assert all(p.row is not None or p.field is not None or p.message.startswith(("file", "not valid UTF-8"))
                   for p in result.problems), result.problems
    elif result.status == "applied":
        assert len(repo.decisions()) == decisions_before + result.summary["decisions"]
    else:
        assert result.status == "already_applied" and _dump(engine) == before


# text an expert can type: any character but the C0 controls every boundary rejects (rag_assets.text.control)
typed = hostile_text.filter(lambda text: control_character_problem(text) is None)


@st.composite
def decided_rows(draw, rows: list[dict]) -> list[dict]:
    """Outbox rows, each decided validly, with any typed text in the free-text cells."""
    table = []
    for row in draw(st.lists(st.sampled_from(rows), min_size=1, max_size=6, unique_by=lambda r: r["candidate_id"])):
        decision = draw(st.sampled_from(["accept", "reject", "edit"]))
        edited = draw(typed.filter(str.strip)) if decision == "edit" else ""
        table.append({**row, "decision": decision, "edited_answer": edited, "notes": draw(typed),
                      "reviewer": draw(typed.filter(str.strip))})
    return table


def _one_line(problems) -> bool:
    return all("\n" not in str(p) and (p.row is not None or p.field is not None or str(p).startswith("file: "))
               for p in problems)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_written_review_reads_back_exactly_and_any_cut_of_it_is_rejected_or_reads_the_same(shop, tmp_path, data):
    _, rows, _ = shop
    table = data.draw(decided_rows(rows))
    known = {row["candidate_id"]: row["corpus_version"] for row in rows}
    write_review_files(table, tmp_path / "review.csv", tmp_path / "review.jsonl")
    for name in ("review.csv", "review.jsonl"):
        whole = read_review_file(tmp_path / name, known)
        assert [(r.candidate_id, r.decision.value, r.edited_answer, r.notes, r.reviewer) for r in whole.rows] == [
            (t["candidate_id"], t["decision"], (t["edited_answer"].strip() or None) if t["decision"] == "edit" else None,
             t["notes"].strip() or None, t["reviewer"].strip()) for t in table]
        data_bytes = (tmp_path / name).read_bytes()
        cut = tmp_path / f"cut-{name}"
        cut.write_bytes(data_bytes[:data.draw(st.integers(0, len(data_bytes) - 1), label=f"cut of {name}")])
        try:
            partial = read_review_file(cut, known)
        except ReviewFileRejected as rejected:
            assert rejected.problems and _one_line(rejected.problems), rejected.problems
        else:
            assert partial.rows == whole.rows, "a cut file that reads must read as the whole file"
