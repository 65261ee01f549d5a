"""Review files: the outbox writer and the all-or-nothing reader, round trip and malformed files."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import pytest

from rag_assets.curation.models import OUTBOX_COLUMNS, Decision, ReviewLimits, ReviewProblem, ReviewRow
from rag_assets.curation.review_file import read_review_file
from rag_assets.curation.review_writer import write_review_files
from rag_assets.errors import ReviewFileRejected
from rag_assets.text.spreadsheet import neutralise

KNOWN = {"q-001": "cv-A", "q-002": "cv-A", "q-003": "cv-A", "q-004": "cv-A", "q-b01": "cv-B"}


def outbox_row(candidate_id: str, corpus_version: str = "cv-A", **cells: str) -> dict[str, str]:
    row = {
        "candidate_id": candidate_id,
        "corpus_version": corpus_version,
        "question_type": "factual",
        "question": f"What does section {candidate_id} say, in short?",
        "reference_answer": "It says that refunds take 14 days.",
        "source_document": "policies/refunds.md",
        "chunk_excerpt": "Refunds are paid within 14 days, by bank transfer.",
        "decision": "",
        "edited_question": "",
        "edited_answer": "",
        "notes": "",
        "reviewer": "",
        "rows_written": "",
    }
    row.update(cells)
    return row


def write_csv(
    path: Path,
    rows: list[dict[str, str]],
    *,
    columns: tuple[str, ...] | list[str] = OUTBOX_COLUMNS,
    delimiter: str = ",",
) -> Path:
    """A review file as a spreadsheet saves it (UTF-8 with BOM, CRLF)."""
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle, delimiter=delimiter, lineterminator="\r\n")
        writer.writerow(columns)
        writer.writerows([row.get(column, "") for column in columns] for row in rows)
    return path


def decided(candidate_id: str, decision: str, **cells: str) -> dict[str, str]:
    return outbox_row(candidate_id, **{"decision": decision, "reviewer": "ana", **cells})


def problems_of(path: Path, known: dict[str, str] = KNOWN, limits: ReviewLimits = ReviewLimits()) -> list[str]:
    with pytest.raises(ReviewFileRejected) as rejected:
        read_review_file(path, known, limits)
    assert rejected.value.path == str(path)
    assert all(isinstance(problem, ReviewProblem) for problem in rejected.value.problems)
    return [str(problem) for problem in rejected.value.problems]


# --- round trips -------------------------------------------------------------------------------


def test_outbox_edited_in_a_spreadsheet_reads_back_as_exact_rows(tmp_path: Path) -> None:
    csv_path, jsonl_path = tmp_path / "review.csv", tmp_path / "review.jsonl"
    write_review_files([outbox_row(c) for c in ("q-001", "q-002", "q-003", "q-004")], csv_path, jsonl_path)
    assert csv_path.read_bytes().startswith(b"\xef\xbb\xbfcandidate_id,corpus_version,")
    assert b"\r\n" in csv_path.read_bytes()

    # the expert fills decision cells (cells, not the file format, are what they touch)
    with csv_path.open(encoding="utf-8-sig", newline="") as handle:
        table = list(csv.reader(handle))
    header = table[0]
    fills = {
        1: {"decision": "Accept ", "reviewer": " ana", "notes": "fine"},
        2: {"decision": "EDIT", "reviewer": "ana", "edited_answer": "Refunds take 14 calendar days.\nBank transfer only."},
        3: {"decision": "reject", "notes": "not answerable, from the chunk", "reviewer": "bo"},
        # row 4 (q-004) stays undecided
    }
    for index, cells in fills.items():
        for column, value in cells.items():
            table[index][header.index(column)] = value
    with csv_path.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle, lineterminator="\r\n").writerows(table)

    review = read_review_file(csv_path, KNOWN)

    assert review.rows == (
        ReviewRow(2, "q-001", "cv-A", Decision.ACCEPT, None, None, "fine", "ana"),
        ReviewRow(
            3, "q-002", "cv-A", Decision.EDIT, None, "Refunds take 14 calendar days.\nBank transfer only.", None, "ana"
        ),
        ReviewRow(4, "q-003", "cv-A", Decision.REJECT, None, None, "not answerable, from the chunk", "bo"),
    )
    assert (review.undecided, review.corpus_version, review.file_format) == (1, "cv-A", "csv")
    assert review.sha256 == hashlib.sha256(csv_path.read_bytes()).hexdigest()
    assert review.path == str(csv_path)


def test_an_untouched_outbox_is_accepted_with_every_row_undecided(tmp_path: Path) -> None:
    csv_path, jsonl_path = tmp_path / "review.csv", tmp_path / "review.jsonl"
    write_review_files([outbox_row("q-001"), outbox_row("q-002")], csv_path, jsonl_path)

    for path in (csv_path, jsonl_path):
        review = read_review_file(path, KNOWN)
        assert (review.rows, review.undecided, review.corpus_version) == ((), 2, "cv-A")


def test_jsonl_outbox_edited_by_a_tool_reads_back(tmp_path: Path) -> None:
    csv_path, jsonl_path = tmp_path / "review.csv", tmp_path / "review.jsonl"
    write_review_files([outbox_row("q-001"), outbox_row("q-002")], csv_path, jsonl_path)
    items = [json.loads(line) for line in jsonl_path.read_text(encoding="utf-8").splitlines()]
    assert list(items[0]) == list(OUTBOX_COLUMNS)
    items[0].update(decision="edit", edited_question="=What is the refund window?", reviewer="ana")
    # line 2 blank (skipped), line 3 the second object
    jsonl_path.write_text(json.dumps(items[0]) + "\n\n" + json.dumps(items[1]) + "\n", encoding="utf-8")

    review = read_review_file(jsonl_path, KNOWN)

    # JSONL is never opened in a spreadsheet: its text is taken literally
    assert review.rows == (
        ReviewRow(1, "q-001", "cv-A", Decision.EDIT, "=What is the refund window?", None, None, "ana"),
    )
    assert (review.undecided, review.file_format) == (1, "jsonl")


def test_a_semicolon_file_from_a_european_spreadsheet_is_accepted(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "review.csv",
        [decided("q-001", "accept", notes="ok; checked"), decided("q-002", "reject")],
        delimiter=";",
    )

    review = read_review_file(path, KNOWN)

    assert [(r.row, r.candidate_id, r.decision, r.notes) for r in review.rows] == [
        (2, "q-001", Decision.ACCEPT, "ok; checked"),
        (3, "q-002", Decision.REJECT, None),
    ]


def test_a_tab_separated_file_without_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "review.csv"
    lines = ["\t".join(OUTBOX_COLUMNS), "\t".join(decided("q-001", "accept")[c] for c in OUTBOX_COLUMNS)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    assert [r.candidate_id for r in read_review_file(path, KNOWN).rows] == ["q-001"]


def test_neutralised_formula_text_round_trips_unchanged(tmp_path: Path) -> None:
    formula_question = "=SUM(A1:A3) is what the sheet shows?"
    csv_path, jsonl_path = tmp_path / "review.csv", tmp_path / "review.jsonl"
    rows = [
        outbox_row("q-001", question=formula_question, decision="edit", reviewer="ana",
                   edited_question="@mention the team?", edited_answer="-20% for members"),
        outbox_row("q-002", decision="edit", reviewer="ana", edited_question="'= is assignment?", notes="+note"),
    ]
    write_review_files(rows, csv_path, jsonl_path)
    with csv_path.open(encoding="utf-8-sig", newline="") as handle:
        table = list(csv.reader(handle))
    assert table[1][OUTBOX_COLUMNS.index("question")] == "'" + formula_question
    assert table[1][OUTBOX_COLUMNS.index("edited_answer")] == "'-20% for members"
    assert table[2][OUTBOX_COLUMNS.index("edited_question")] == "''= is assignment?"
    assert json.loads(jsonl_path.read_text(encoding="utf-8").splitlines()[0])["question"] == formula_question

    review = read_review_file(csv_path, KNOWN)

    assert [(r.edited_question, r.edited_answer, r.notes) for r in review.rows] == [
        ("@mention the team?", "-20% for members", None),
        ("'= is assignment?", None, "+note"),
    ]
    assert [(r.edited_question, r.notes) for r in read_review_file(jsonl_path, KNOWN).rows] == [
        ("@mention the team?", None),
        ("'= is assignment?", "+note"),
    ]


def test_neutralise() -> None:
    cells = ("=1+1", "+A1", "-x", "@f", "\tx", "\rx", "'=x", "''-x", "'x", "''", "", "a=b", "5", "  =1", "' @x", "a =b")
    assert [neutralise(cell) for cell in cells] == [
        "'=1+1", "'+A1", "'-x", "'@f", "'\tx", "'\rx", "''=x", "'''-x", "'x", "''", "", "a=b", "5", "'  =1", "'' @x",
        "a =b",
    ]


def test_every_cell_round_trips_through_the_writer_and_reader(tmp_path: Path) -> None:
    texts = ["=x", "'=x", "''=x", "'x", "''", "-", "+", "-5 °C", "\tindented", "a\nb", 'say "hi", then; go']
    for start in range(0, len(texts), 4):  # four known candidates per file
        chunk = texts[start:start + 4]
        rows = [outbox_row(f"q-00{i}", decision="edit", reviewer="ana", edited_answer=text)
                for i, text in enumerate(chunk, start=1)]
        write_review_files(rows, tmp_path / "r.csv", tmp_path / "r.jsonl")
        for name in ("r.csv", "r.jsonl"):
            got = [r.edited_answer for r in read_review_file(tmp_path / name, KNOWN).rows]
            assert got == [text.strip() for text in chunk], name


def test_identical_duplicates_are_kept_once_and_undecided_rows_are_counted(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "review.csv",
        [
            decided("q-001", "edit", edited_question="How long do refunds take?", notes="first"),
            outbox_row("q-002"),
            decided("q-001", " Edit ", edited_question="How long do refunds take?", reviewer="bo", notes="again"),
            outbox_row("q-003", decision="   "),
            decided("q-004", "reject", edited_answer="ignored on a reject"),
            decided("q-004", "reject"),
        ],
    )

    review = read_review_file(path, KNOWN)

    assert review.rows == (  # a second reviewer's decision is kept beside the first (see curation.agreement)
        ReviewRow(2, "q-001", "cv-A", Decision.EDIT, "How long do refunds take?", None, "first", "ana"),
        ReviewRow(4, "q-001", "cv-A", Decision.EDIT, "How long do refunds take?", None, "again", "bo"),
        ReviewRow(6, "q-004", "cv-A", Decision.REJECT, None, None, None, "ana"),
    )
    assert review.undecided == 2


def csv_line(cells: list[str] | tuple[str, ...]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerow(cells)  # "\r\n" also decides which cells get quoted
    return buffer.getvalue().removesuffix("\r\n")


def test_blank_rows_and_multi_line_cells_keep_spreadsheet_row_numbers(tmp_path: Path) -> None:
    lines = [
        csv_line(OUTBOX_COLUMNS),
        csv_line(list(decided("q-001", "accept").values())),
        "",
        csv_line(list(decided("q-002", "edit", edited_answer="line one\r\nline two").values())),
        csv_line(list(decided("q-003", "maybe").values())),
    ]
    path = tmp_path / "review.csv"
    # rows: 1 header, 2 q-001, 3 blank, 4 multi-line q-002 (two lines, one row), 5 q-003
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8", newline="")

    assert problems_of(path) == ["row 5, decision: unknown decision 'maybe'; use accept, reject or edit"]


def test_every_problem_in_a_file_is_listed_in_row_order(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "review.csv",
        [
            decided("q-001", "approve", reviewer=""),
            decided("q-zzz", "accept"),
            outbox_row("q-002", notes="=HYPERLINK(\"x\")"),
            decided("q-003", "edit", reviewer=""),
        ],
    )

    assert problems_of(path) == [
        "row 2, decision: unknown decision 'approve'; use accept, reject or edit",
        "row 2, reviewer: reviewer is empty; a decided row needs the reviewer's name",
        "row 3, candidate_id: unknown candidate id 'q-zzz'",
        "row 4, notes: starts with '=' (a spreadsheet formula); remove it or prefix it with an apostrophe",
        "row 5, edited_question, edited_answer: decision 'edit' needs edited_question or edited_answer",
        "row 5, reviewer: reviewer is empty; a decided row needs the reviewer's name",
    ]


# --- malformed files: each rejected with an exact message naming row and field ----------------


def test_missing_columns(tmp_path: Path) -> None:
    columns = [c for c in OUTBOX_COLUMNS if c not in ("decision", "reviewer")]
    path = write_csv(tmp_path / "review.csv", [outbox_row("q-001")], columns=columns)

    assert problems_of(path) == ["file, decision, reviewer: missing column(s): decision, reviewer"]


def test_header_names_are_stripped_and_case_insensitive_but_not_duplicated(tmp_path: Path) -> None:
    columns = [f" {c.upper()} " for c in OUTBOX_COLUMNS]
    path = tmp_path / "review.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerow(decided("q-001", "accept").values())
    assert [r.candidate_id for r in read_review_file(path, KNOWN).rows] == ["q-001"]

    path = write_csv(tmp_path / "dup.csv", [], columns=[*OUTBOX_COLUMNS, "Reviewer"])
    assert problems_of(path) == ["file, reviewer: duplicate column(s): reviewer"]


def test_unknown_candidate_id(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "review.csv", [decided("q-001", "accept"), decided("q-zzz", "reject")])

    assert problems_of(path) == ["row 3, candidate_id: unknown candidate id 'q-zzz'"]


def test_bad_decision_value(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "review.csv", [decided("q-001", "yes"), decided("q-002", "Accept")])

    assert problems_of(path) == ["row 2, decision: unknown decision 'yes'; use accept, reject or edit"]


def test_edit_without_edited_text(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "review.csv", [decided("q-001", "edit", notes="should be shorter")])

    assert problems_of(path) == [
        "row 2, edited_question, edited_answer: decision 'edit' needs edited_question or edited_answer"
    ]


def test_accept_with_edited_text(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "review.csv", [decided("q-001", "accept", edited_answer="Fourteen days.")])

    assert problems_of(path) == ["row 2, edited_answer: edited text given but decision is 'accept'; use 'edit'"]


def test_missing_reviewer(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "review.csv", [decided("q-001", "accept", reviewer="  ")])

    assert problems_of(path) == ["row 2, reviewer: reviewer is empty; a decided row needs the reviewer's name"]


def test_conflicting_duplicates(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "review.csv",
        [
            decided("q-001", "accept"),
            decided("q-002", "edit", edited_question="A?"),
            decided("q-001", "reject"),
            decided("q-002", "edit", edited_question="B?"),
        ],
    )

    assert problems_of(path) == [
        "row 4, candidate_id: rows 2 and 4 disagree on candidate q-001: accept vs reject",
        "row 5, candidate_id: rows 3 and 5 disagree on candidate q-002: edit with different edited_question",
    ]


def test_candidate_from_another_corpus_version(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "review.csv", [decided("q-001", "accept"), decided("q-b01", "accept")])

    assert problems_of(path) == [
        "row 3, corpus_version: candidate q-b01 belongs to corpus version cv-B, not cv-A"
    ]


def test_mixed_corpus_versions(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "review.csv",
        [
            decided("q-001", "accept"),
            decided("q-b01", "accept", corpus_version="cv-B"),
            decided("q-002", "reject"),
            decided("q-003", "reject", corpus_version=""),
        ],
    )

    assert problems_of(path) == [
        "row 3, corpus_version: mixed corpus versions: this row says cv-B, row 2 says cv-A; "
        "a review file is for one corpus version",
        "row 5, corpus_version: corpus_version is empty",
    ]


@pytest.mark.parametrize("content", [b"", b"  \r\n\t\n", b"\xef\xbb\xbf"])
def test_empty_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "review.csv"
    path.write_bytes(content)

    assert problems_of(path) == ["file: file is empty: no header row"]


def test_excel_saved_csv_in_cp1252_with_semicolons_imports(tmp_path: Path) -> None:
    """Excel on Windows saves "CSV (separated by semicolons)" in Windows-1252: it reads as written."""
    path = tmp_path / "review.csv"
    rows = [decided("q-001", "accept", notes="vérifié – “ok” €"), decided("q-002", "reject", reviewer="Zoë")]
    lines = [";".join(OUTBOX_COLUMNS)] + [";".join(row[c] for c in OUTBOX_COLUMNS) for row in rows]
    data = ("\r\n".join(lines) + "\r\n").encode("cp1252")
    assert b"\xe9" in data and b"\x80" in data and b"\x96" in data  # é, €, – as Windows-1252 bytes
    path.write_bytes(data)

    review = read_review_file(path, KNOWN)
    assert [(r.candidate_id, r.decision, r.notes, r.reviewer) for r in review.rows] == [
        ("q-001", Decision.ACCEPT, "vérifié – “ok” €", "ana"), ("q-002", Decision.REJECT, None, "Zoë")]


def test_neither_utf8_nor_cp1252(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "review.csv", [decided("q-001", "accept")])
    header = path.read_bytes()[3:].split(b"\r\n")[0]
    row = ",".join(decided("q-001", "accept", notes="caf?")[c] for c in OUTBOX_COLUMNS).encode("ascii")
    row = row.replace(b"caf?", b"caf\x81")  # 0x81 is undefined in Windows-1252
    path.write_bytes(header + b"\r\n" + row + b"\r\n")
    offset = len(header) + 2 + row.index(b"\x81")

    assert problems_of(path) == [
        f"file: neither UTF-8 nor Windows-1252 (byte 0x81 at offset {offset}); save the file as CSV UTF-8"]


def test_utf8_mark_with_invalid_bytes(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "review.csv", [decided("q-001", "accept", notes="caf?")])
    data = path.read_bytes().replace(b"caf?", b"caf\xe9")
    path.write_bytes(data)

    assert problems_of(path) == [f"file: starts with a UTF-8 mark but is not valid UTF-8 (invalid byte at offset "
                                 f"{data.index(b'caf') + 3}); save the file as UTF-8"]


def test_header_with_commas_but_rows_with_semicolons(tmp_path: Path) -> None:
    path = tmp_path / "review.csv"
    rows = [";".join(decided(c, "accept")[k] for k in OUTBOX_COLUMNS) for c in ("q-001", "q-002")]
    path.write_text("\r\n".join([",".join(OUTBOX_COLUMNS), *rows]) + "\r\n", encoding="utf-8")

    message = (
        "expected 13 fields, found 3: the row splits into 13 fields on ';', but the header uses ','; "
        "save the whole file with one delimiter"
    )
    # the sample question holds one comma and the chunk excerpt one more: 3 fields on ','
    assert problems_of(path) == [f"row 2: {message}", f"row 3: {message}"]


def test_row_with_missing_fields(tmp_path: Path) -> None:
    path = tmp_path / "review.csv"
    path.write_text(",".join(OUTBOX_COLUMNS) + "\nq-001,cv-A,factual\n", encoding="utf-8")

    assert problems_of(path) == ["row 2: expected 13 fields, found 3"]


def test_truncated_file_with_an_unterminated_quote(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "review.csv", [decided("q-001", "accept"), decided("q-002", "accept")])
    content = path.read_bytes()
    path.write_bytes(content + b'q-003,cv-A,factual,"What is cut')

    assert problems_of(path) == [
        "row 4: malformed CSV: unexpected end of data (a quoted cell is never closed: was the file cut short?)"
    ]


CUT = ("row 4, {field}: the file ends inside this row (no line break after its last cell) and rows_written does not "
       "confirm the row is whole: the file was probably cut short; save or export the whole file again")


@pytest.mark.parametrize("columns", [OUTBOX_COLUMNS, OUTBOX_COLUMNS[:-1]], ids=["rows_written", "no_rows_written"])
@pytest.mark.parametrize("cut", range(1, 8))
def test_a_file_cut_inside_its_last_cell_is_rejected_naming_the_row(tmp_path: Path, columns, cut: int) -> None:
    rows = [decided(f"q-00{i}", "accept", reviewer="simulated-expert", rows_written="3") for i in (1, 2, 3)]
    path = write_csv(tmp_path / "review.csv", rows, columns=columns)
    path.write_bytes(path.read_bytes()[:-2 - cut])  # the line break and `cut` characters of the last cell

    problems = problems_of(path)
    assert CUT.format(field="rows_written" if cut == 1 and columns == OUTBOX_COLUMNS else "reviewer") in problems


def test_a_whole_file_saved_without_a_final_line_break_is_read(tmp_path: Path) -> None:
    rows = [decided(f"q-00{i}", "accept", rows_written="3") for i in (1, 2, 3)]
    path = write_csv(tmp_path / "review.csv", rows)
    path.write_bytes(path.read_bytes()[:-2])  # as Google Sheets saves a CSV

    assert [r.candidate_id for r in read_review_file(path, KNOWN).rows] == ["q-001", "q-002", "q-003"]
    path.write_bytes(path.read_bytes() + b"\r\n,,,,,,,,,,,,")  # a blank row after it: the data row ended
    assert len(read_review_file(path, KNOWN).rows) == 3


def test_text_after_a_closing_quote(tmp_path: Path) -> None:
    path = tmp_path / "review.csv"
    path.write_text(",".join(OUTBOX_COLUMNS) + '\nq-001,"cv-A"x,\n', encoding="utf-8")

    assert problems_of(path) == ["row 2: malformed CSV: ',' expected after '\"'"]


def test_formula_cells_in_editable_columns(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "review.csv",
        [
            decided("q-001", "edit", edited_answer="=1+1", notes="-5 is fine, so is - this"),
            decided("q-002", "edit", edited_question="+A1?", reviewer="@ana"),
            outbox_row("q-003", notes="-cmd|' /C calc'!A0"),
            decided("q-004", "accept", question="=not an editable column, left alone"),
        ],
    )

    hint = "(a spreadsheet formula); remove it or prefix it with an apostrophe"
    assert problems_of(path) == [
        f"row 2, edited_answer: starts with '=' {hint}",
        f"row 2, notes: starts with '-' {hint}",  # OWASP: only a plain number may start with '-'
        f"row 3, edited_question: starts with '+' {hint}",
        f"row 3, reviewer: starts with '@' {hint}",
        f"row 4, notes: starts with '-' {hint}",
    ]


def test_huge_file_is_rejected_before_parsing(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "review.csv", [decided("q-001", "accept")] * 3)
    size = path.stat().st_size

    assert problems_of(path, limits=ReviewLimits(max_bytes=size - 1)) == [
        f"file: file is {size:,} bytes, over the {size - 1:,}-byte limit"
    ]
    assert problems_of(path, limits=ReviewLimits(max_rows=2)) == ["file: file has 3 data rows, over the 2-row limit"]


@pytest.mark.parametrize(("name", "message"), [
    ("review.xls", "unsupported file type '.xls'; save the review file as .csv, .jsonl or .xlsx"),
    ("review", "file has no suffix; save the review file as .csv, .jsonl or .xlsx"),
])
def test_unsupported_suffix(tmp_path: Path, name: str, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"PK\x03\x04")

    assert problems_of(path) == [f"file: {message}"]


def test_bad_jsonl_lines(tmp_path: Path) -> None:
    good = json.dumps(decided("q-001", "accept"))
    no_reviewer = {k: v for k, v in decided("q-002", "accept").items() if k != "reviewer"}
    wrong_type = {**decided("q-003", "accept"), "notes": 42}
    path = tmp_path / "review.jsonl"
    path.write_text(
        "\n".join([good, '{"candidate_id": "q-002" "decision": "accept"}', "[1, 2]", json.dumps(no_reviewer),
                   json.dumps(wrong_type)]) + "\n",
        encoding="utf-8",
    )

    assert problems_of(path) == [
        "row 2: not valid JSON: Expecting ',' delimiter (column 26)",
        "row 3: expected a JSON object, found an array",
        "row 4, reviewer: missing key(s): reviewer",
        "row 5, notes: expected a string or null, found a number",
    ]


def test_empty_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "review.jsonl"
    path.write_text("\n\n", encoding="utf-8")

    assert problems_of(path) == ["file: file is empty: no JSON lines"]


def test_missing_file(tmp_path: Path) -> None:
    assert problems_of(tmp_path / "gone.csv") == ["file: cannot read the file: No such file or directory"]


def test_rejection_message_lists_the_problems(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "review.csv", [decided("q-zzz", "accept")])

    with pytest.raises(ReviewFileRejected, match=r"rejected \(1 problem\(s\)\):\n  - row 2, candidate_id: unknown"):
        read_review_file(path, KNOWN)


def test_nul_and_control_characters_in_cells_reject_the_file_naming_row_and_column(tmp_path: Path) -> None:
    rows = [decided("q-001", "accept", notes="ok\x00"), decided("q-002", "reject", reviewer="b\x1bob"),
            decided("q-003", "edit", edited_answer="Two\tlines:\r\nfine")]
    write_csv(tmp_path / "r.csv", rows)
    expected = ["row 2, notes: contains the control character U+0000 at character 3; remove it",
                "row 3, reviewer: contains the control character U+001B at character 2; remove it"]
    assert problems_of(tmp_path / "r.csv") == expected

    with (tmp_path / "r.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    assert problems_of(tmp_path / "r.jsonl") == [line.replace("row 2", "row 1").replace("row 3", "row 2")
                                                 for line in expected]


# --- completeness ------------------------------------------------------------------------------


def test_a_file_cut_at_a_row_boundary_is_rejected_and_a_deliberate_removal_is_not(tmp_path: Path) -> None:
    rows = [outbox_row(c) for c in ("q-001", "q-002", "q-003", "q-004")]
    write_review_files(rows, tmp_path / "out.csv", tmp_path / "out.jsonl")
    with (tmp_path / "out.csv").open(encoding="utf-8-sig", newline="") as handle:
        table = [{**row, "decision": "accept", "reviewer": "ana"} for row in csv.DictReader(handle)]
    assert {row["rows_written"] for row in table} == {"4"}
    lost = ("file, rows_written: the file has 2 data rows but was written with 4: rows were lost (a file cut short?). "
            "Leave rows undecided rather than deleting them; to remove rows on purpose, clear the rows_written column")

    cut = write_csv(tmp_path / "cut.csv", table[:2])
    assert problems_of(cut) == [lost]
    jsonl_lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    (tmp_path / "cut.jsonl").write_text("\n".join(jsonl_lines[:2]) + "\n", encoding="utf-8")
    assert problems_of(tmp_path / "cut.jsonl") == [lost]

    on_purpose = write_csv(tmp_path / "partial.csv", [{**row, "rows_written": ""} for row in table[:2]])
    assert [r.candidate_id for r in read_review_file(on_purpose, KNOWN).rows] == ["q-001", "q-002"]
    # sorted by the spreadsheet and saved with ';' as a European locale does: every row and its count survive
    resorted = write_csv(tmp_path / "sorted.csv", sorted(table, key=lambda r: r["candidate_id"], reverse=True),
                         delimiter=";")
    assert len(read_review_file(resorted, KNOWN).rows) == 4
    added = write_csv(tmp_path / "added.csv", [*table, table[0]])
    assert problems_of(added)[-1] == (
        "file, rows_written: the file has 5 data rows but was written with 4: rows were added (a row copied, or rows "
        "pasted from another file?). Decide the rows the file was written with; to add rows on purpose, clear the "
        "rows_written column")
    garbled = write_csv(tmp_path / "garbled.csv", [{**table[0], "rows_written": "four"}, *table[1:]])
    assert problems_of(garbled) == ["row 2, rows_written: expected the number of rows the file was written with, "
                                    "found 'four'"]


def test_formula_cells_follow_owasp_every_trigger_character_except_plain_numbers(tmp_path: Path) -> None:
    cells = ["-2+3+cmd|' /C calc'!A0", "+1+cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0", "=1+1",
             "\t=1+1", "\r=1+1", "- see the ticket", "-3.5", "+49", "1e-3", "'-2+3+cmd|' /C calc'!A0"]
    rows = [decided(f"q-00{i}", "reject", notes=cell) for i, cell in enumerate(cells[:4], start=1)]
    rows += [decided("q-001", "reject", notes=cell, reviewer=f"r{i}") for i, cell in enumerate(cells[4:], start=5)]
    path = write_csv(tmp_path / "r.csv", rows)

    def formula(row: int, character: str) -> str:
        return (f"row {row}, notes: starts with {character!r} (a spreadsheet formula); remove it or prefix it with "
                "an apostrophe")

    assert problems_of(path) == [formula(2, "-"), formula(3, "+"), formula(4, "@"), formula(5, "="),
                                 formula(6, "\t"), formula(7, "\r"), formula(8, "-")]
    accepted = write_csv(tmp_path / "ok.csv", rows[7:])
    assert [row.notes for row in read_review_file(accepted, KNOWN).rows] == [
        "-3.5", "+49", "1e-3", "-2+3+cmd|' /C calc'!A0"]
