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
