"""A ``--review`` file with a bad row stops ``rag-assets run`` at the door: one line, exit 2, nothing staged."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from rag_assets.cli import main
from tests.test_cli import checkout_curation  # noqa: F401  (a fixture)
from tests.test_cli_rerun import _rows, first_run  # noqa: F401  (first_run is a fixture)


def test_a_review_file_with_a_bad_row_is_one_line_and_exit_2_and_nothing_is_staged_or_applied(
        first_run: str, checkout_curation: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):  # noqa: F811
    """A tester's file: a typo in one decision was rejected by the import, after the run had started: exit 1 and
    several lines, the brief asks for one line naming file, row and field, and exit 2."""
    (sample,) = (checkout_curation / "sample").glob("review-cv-*.csv")
    with sample.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    review = tmp_path / sample.name.replace("review-", "typo-review-")
    with review.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=[c for c in rows[0] if c != "rows_written"], extrasaction="ignore")
        writer.writeheader()
        writer.writerows([{**rows[0], "decision": "reject"}, {**rows[1], "decision": "acept"}])
    before = _rows()

    code = main(["run", "--review", str(review)])

    captured = capsys.readouterr()
    assert (code, captured.out) == (2, "")
    assert captured.err == (f"error: {review}: row 3, decision: unknown decision 'acept'; use accept, reject or edit; "
                            "nothing staged or applied\n")
    assert not list((checkout_curation / "inbox").glob("typo-review-*")), "not staged"
    assert _rows() == before
