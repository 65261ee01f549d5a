"""Importing external golden sets: JSON chunks to a corpus, anthropic_docs and ragas formats, and
pinning external relevant texts to snapshot chunks (hand-made cases, a brute-force reference, and
the real anthropic_docs set when ../shared/data is there)."""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from pathlib import Path

import pytest

from rag_assets.corpus.models import ChunkerConfig, SnapshotChunk, sha256_hex
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.golden.importers import (
    ExternalDataError,
    chunk_file_name,
    content_id,
    json_chunks_to_corpus,
    read_anthropic_docs_dataset,
    read_ragas_testset,
    write_ragas_testset,
)
from rag_assets.evidence.documents import Documents
from rag_assets.evidence.spans import Span
from rag_assets.golden.models import ExternalItem
from rag_assets.golden.pinning import PinnedItem, pin_external_items
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine

ANTHROPIC_DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "anthropic_docs_rag"


def _snapshot(corpus: Path, tmp_path: Path) -> tuple[str, list[SnapshotChunk]]:
    repo = SqlCorpusRepository(get_engine(f"sqlite:///{tmp_path / 'store.db'}"))
    outcome = snapshot_corpus(corpus, ChunkerConfig(), repo)
    return outcome.version_id, repo.snapshot_chunks(outcome.version_id)


def _paragraph(topic: str, n: int) -> str:
    return (f"The {topic} service number {n} keeps {topic}{n} records in region r{n} and retries "
            f"failed {topic} calls {n} times before it reports error code e{n}{topic} to the operator.")


NO_TEXTS = ("has no reference contexts to locate (mark it question_type: adversarial if nothing in the corpus "
            "answers it)")
LONG_TEXT = "Retries\n\n\n" + "\n\n".join(_paragraph("billing", n) for n in range(14))
CHUNKS_JSON = [
    {"chunk_link": "https://docs.example.com/en/api/retries#overview", "chunk_heading": "Retries: an overview",
     "text": LONG_TEXT},
    {"chunk_link": "https://docs.example.com/en/api/limits#rate-limits", "chunk_heading": 'Rate "limits" & quotas',
     "text": "Rate limits\n\n\nEach workspace may send 50 requests per minute; bursts above it get HTTP 429.\n"},
    {"chunk_link": "https://docs.example.com/en/api/limits#headers", "chunk_heading": "- Headers #1",
     "text": "Headers\n\n\nThe retry-after header tells a client how many seconds to wait.\n"},
]


@pytest.fixture
def chunks_json(tmp_path: Path) -> Path:
    path = tmp_path / "chunks.json"
    path.write_text(json.dumps(CHUNKS_JSON), encoding="utf-8")
    return path


# --- JSON chunks -> corpus folder --------------------------------------------------------------

def test_json_chunks_become_a_corpus_the_snapshot_reads(chunks_json: Path, tmp_path: Path):
    mapping = json_chunks_to_corpus(chunks_json, tmp_path / "corpus")
    assert list(mapping) == [c["chunk_link"] for c in CHUNKS_JSON]
    assert sorted(p.name for p in (tmp_path / "corpus").iterdir()) == sorted(mapping.values())
    for link, name in mapping.items():
        assert re.fullmatch(r"[a-z0-9-]+-[0-9a-f]{10}\.md", name), name
        assert sha256_hex(link)[:10] in name
    assert mapping["https://docs.example.com/en/api/limits#rate-limits"].startswith("en-api-limits-rate-limits-")

    _version, chunks = _snapshot(tmp_path / "corpus", tmp_path)
    by_path = defaultdict(list)
    for chunk in chunks:
        by_path[chunk.path].append(chunk)
    assert set(by_path) == set(mapping.values())
    titles = {link: by_path[name][0].title for link, name in mapping.items()}
    assert titles == {c["chunk_link"]: c["chunk_heading"] for c in CHUNKS_JSON}
    # The long text was split by the snapshot chunker; the body is the text, front matter cut off.
    long_chunks = by_path[mapping[CHUNKS_JSON[0]["chunk_link"]]]
    assert len(long_chunks) >= 2
    assert long_chunks[0].text.startswith("Retries") and "source:" not in long_chunks[0].text


def test_corpus_conversion_is_deterministic_and_leaves_unchanged_files_alone(chunks_json: Path, tmp_path: Path):
    first = json_chunks_to_corpus(chunks_json, tmp_path / "a")
    second = json_chunks_to_corpus(chunks_json, tmp_path / "b")
    assert first == second
    for name in first.values():
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    mtimes = {name: (tmp_path / "a" / name).stat().st_mtime_ns for name in first.values()}
    assert json_chunks_to_corpus(chunks_json, tmp_path / "a") == first
    assert {name: (tmp_path / "a" / name).stat().st_mtime_ns for name in first.values()} == mtimes


@pytest.mark.parametrize(("chunks", "message"), [
    ([{"chunk_link": "a", "text": "x"}], r"item 0 \(chunk_link 'a'\): missing field 'chunk_heading'"),
    ([{"chunk_link": "a", "chunk_heading": "A", "text": "x"}, {"chunk_link": "b", "chunk_heading": "B", "text": 3}],
     r"item 1 \(chunk_link 'b'\): field 'text' must be a string"),
    ([{"chunk_link": "a", "chunk_heading": "A", "text": "x"}, {"chunk_link": "a", "chunk_heading": "B", "text": "y"}],
     r"item 1 \(chunk_link 'a'\): field 'chunk_link' repeats the link of item 0"),
    ({"chunk_link": "a"}, r"expected a JSON list of chunks"),
])
def test_bad_chunks_json_names_item_and_field(tmp_path: Path, chunks, message):
    path = tmp_path / "chunks.json"
    path.write_text(json.dumps(chunks), encoding="utf-8")
    with pytest.raises(ExternalDataError, match=message):
        json_chunks_to_corpus(path, tmp_path / "corpus")


# --- anthropic_docs dataset ------------------------------------------------------------------

def test_anthropic_dataset_items_carry_the_texts_of_their_chunks(chunks_json: Path, tmp_path: Path):
    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps([{
        "id": "q1", "question": "How many requests per minute?", "correct_answer": "50.",
        "correct_chunks": [CHUNKS_JSON[1]["chunk_link"], CHUNKS_JSON[2]["chunk_link"]],
    }]), encoding="utf-8")
    [item] = read_anthropic_docs_dataset(dataset, chunks_json)
    assert item == ExternalItem(
        external_id="q1", question="How many requests per minute?", reference_answer="50.",
        question_type="factual", relevant_texts=(CHUNKS_JSON[1]["text"], CHUNKS_JSON[2]["text"]),
        external_chunk_ids=(CHUNKS_JSON[1]["chunk_link"], CHUNKS_JSON[2]["chunk_link"]),
        relevant_sources=(chunk_file_name(CHUNKS_JSON[1]["chunk_link"]), chunk_file_name(CHUNKS_JSON[2]["chunk_link"])),
    )
    assert (item.location, item.texts_field) == ("item 0 (id 'q1')", "correct_chunks"), "as the reader's errors say"


@pytest.mark.parametrize(("items", "message"), [
    ([{"id": "q7", "question": "?", "correct_answer": "!", "correct_chunks": ["https://nowhere#x"]}],
     r"item 0 \(id 'q7'\): field 'correct_chunks' names chunk 'https://nowhere#x', which is not in"),
    ([{"id": "q8", "question": "?", "correct_chunks": []}], r"item 0 \(id 'q8'\): missing field 'correct_answer'"),
    ([{"question": "?", "correct_answer": "!", "correct_chunks": []}], r"item 0: missing field 'id'"),
    ([{"id": "q9", "question": "?", "correct_answer": "!", "correct_chunks": []}],
     r"item 0 \(id 'q9'\): field 'correct_chunks' must be a non-empty list"),
])
def test_bad_anthropic_dataset_names_item_and_field(chunks_json: Path, tmp_path: Path, items, message):
    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps(items), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_anthropic_docs_dataset(dataset, chunks_json)


# --- pinning external items by their texts --------------------------------------------------------

def _chunk(path: str, ordinal: int, text: str) -> SnapshotChunk:
    digest = sha256_hex(text)
    return SnapshotChunk(f"{path}#{ordinal}", digest, path, path, None, None, "", text, 0, len(text))


def _words(prefix: str, count: int) -> str:
    return " ".join(f"{prefix}{n}" for n in range(count))


def test_external_items_are_pinned_by_evidence_spans_and_left_out_ones_say_which_context_failed():
    a, b = _chunk("a.md", 0, _words("a", 20)), _chunk("b.md", 0, _words("b", 20))
    documents = Documents.from_chunks([a, b])
    good = ExternalItem("e1", "q", "r", relevant_texts=(_words("b", 20), _words("a", 5), _words("b", 20)))
    bad = ExternalItem("e2", "q", "r", relevant_texts=(_words("a", 20), "unrelated words", "other unrelated words"))
    empty = ExternalItem("e3", "q", "r")
    linked = ExternalItem("e4", "q", "r", relevant_texts=("unrelated words",), texts_field="correct_chunks")
    pinned, left = pin_external_items([good, bad, empty, linked], documents, [a, b])
    evidence = (documents.evidence(Span.of(b)), documents.evidence(Span("a.md", 0, len(_words("a", 5)))))
    assert pinned == [PinnedItem(good, (a.ref, b.ref), evidence)]
    assert left == [
        (bad, "reference_contexts[1] is not in any document ('unrelated words'); "
              "reference_contexts[2] is not in any document ('other unrelated words')"),
        (empty, NO_TEXTS),
        (linked, "correct_chunks[0] is not in any document ('unrelated words')"),
    ]


def test_an_item_without_texts_is_pinned_to_nothing_when_adversarial_and_refused_when_nothing_says_so():
    """The ragas export writes an adversarial item (the corpus cannot answer it) with no reference contexts: it is
    pinned with no evidence, as it was generated; an item without texts and of another type is a data problem."""
    a = _chunk("a.md", 0, _words("a", 20))
    adversarial = ExternalItem("e1", "q", "not in the documents", question_type="adversarial")
    unmarked = ExternalItem("e2", "q", "r", question_type="factual")
    pinned, left = pin_external_items([adversarial, unmarked], Documents.from_chunks([a]), [a])
    assert pinned == [PinnedItem(adversarial, (), ())]
    assert left == [(unmarked, NO_TEXTS)]


# --- ragas test sets ---------------------------------------------------------------------------

ROWS = [
    {"item_id": "g-1", "question": "What does a 429 mean, \"exactly\"?", "reference_answer": "Too many requests,\nslow down.",
     "question_type": "factual", "relevant_chunk_ids": ["c1", "c2"],
     "reference_contexts": ["Rate limits: 50/min, bursts get HTTP 429.", "Retry-after, in seconds; ünïcode “ok”"]},
    {"item_id": "g-2", "question": "How do retries and limits interact?", "reference_answer": "Retries wait.",
     "question_type": "multi_hop", "relevant_chunk_ids": [], "reference_contexts": ["a, b; c", "x\ty"]},
    {"item_id": "g-3", "question": "Summarise the retry policy.", "reference_answer": "Back off.",
     "question_type": "abstractive", "relevant_chunk_ids": ["c9"], "reference_contexts": ["It backs off. " * 20000]},
    {"item_id": "g-4", "question": "Which is larger, A or B?", "reference_answer": "B.",
     "question_type": "comparative", "relevant_chunk_ids": ["c3"], "reference_contexts": ["A is 1; B is 2."]},
]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_ragas_round_trip(tmp_path: Path, suffix: str):
    path = tmp_path / f"testset{suffix}"
    write_ragas_testset(ROWS, path)
    items = read_ragas_testset(path)
    assert items == [
        ExternalItem(external_id=r["item_id"], question=r["question"], reference_answer=r["reference_answer"],
                     question_type=r["question_type"], relevant_texts=tuple(r["reference_contexts"]),
                     external_chunk_ids=tuple(r["relevant_chunk_ids"]))
        for r in ROWS
    ]
    if suffix == ".jsonl":
        first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
        assert list(first)[:4] == ["user_input", "reference_contexts", "reference", "synthesizer_name"]
        assert first["synthesizer_name"] == "single_hop_specific_query_synthesizer"


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_the_synthesizer_name_alone_keeps_the_types_ragas_has_no_name_for(tmp_path: Path, suffix: str):
    """A file cut down to ragas' own columns (a team's spreadsheet, a DataFrame) says which items are adversarial by
    the synthesizer name we write for them."""
    path = tmp_path / f"testset{suffix}"
    adversarial = {**ROWS[3], "item_id": "g-5", "question_type": "adversarial", "relevant_chunk_ids": [],
                   "reference_contexts": []}
    write_ragas_testset([ROWS[3], adversarial, {**ROWS[3], "item_id": "g-6", "question_type": "terminology"}], path)
    if suffix == ".jsonl":
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        path.write_text("".join(json.dumps({k: v for k, v in row.items() if k != "question_type"}) + "\n"
                                for row in rows), encoding="utf-8")
    else:
        path.write_text(re.sub(r",(comparative|adversarial|terminology),", ",,", path.read_text(encoding="utf-8")),
                        encoding="utf-8")
    items = read_ragas_testset(path)
    assert [(i.external_id, i.question_type, i.relevant_texts) for i in items] == [
        ("g-4", "comparative", ("A is 1; B is 2.",)), ("g-5", "adversarial", ()),
        ("g-6", "terminology", ("A is 1; B is 2.",))]


def test_a_ragas_csv_with_python_literal_lists_and_synthesizer_names(tmp_path: Path):
    path = tmp_path / "ragas.csv"
    path.write_text(
        'user_input,reference_contexts,reference,synthesizer_name\n'
        '"Q one?","[\'first context\', ""it\'s quoted""]","A one.",single_hop_specifc_query_synthesizer\n'
        '"Q two?","[""json context""]","A two.",multi_hop_abstract_query_synthesizer\n'
        '"Q three?","[]","A three.",abstract_query_synthesizer\n'
        '"Q four?","[\'x\']","A four.",\n',
        encoding="utf-8")
    items = read_ragas_testset(path)
    assert [(i.external_id, i.question_type) for i in items] == [
        (content_id("ragas", q, a), t) for q, a, t in (("Q one?", "A one.", "factual"), ("Q two?", "A two.", "multi_hop"),
                                                      ("Q three?", "A three.", "abstractive"),
                                                      ("Q four?", "A four.", "factual"))]
    assert items[0].relevant_texts == ("first context", "it's quoted")
    assert items[1].relevant_texts == ("json context",) and items[2].relevant_texts == ()


def test_a_ragas_item_says_its_row_and_the_line_it_starts_on(tmp_path: Path):
    """A blank line, or a CSV cell over two lines, puts a row's first line past its number: a message names both."""
    row = '{"user_input": "q%d", "reference": "r", "reference_contexts": ["c"]}\n'
    jsonl = tmp_path / "team.jsonl"
    jsonl.write_text(row % 1 + "\n" + row % 2 + row % 3, encoding="utf-8")
    assert [i.location for i in read_ragas_testset(jsonl)] == ["row 1 (line 1)", "row 2 (line 3)", "row 3 (line 4)"]
    table = tmp_path / "team.csv"
    table.write_bytes(b'user_input,reference,reference_contexts\r\n'
                      b'q1,r,"[""first context"",\n""second context""]"\r\n'
                      b'\r\n'
                      b'q2,r,"[""c""]"\r\n'
                      b'q3,r,"[""c""]"\n')
    assert [i.location for i in read_ragas_testset(table)] == ["row 1 (line 2)", "row 2 (line 5)", "row 3 (line 6)"]
    assert {i.texts_field for i in read_ragas_testset(table)} == {"reference_contexts"}


@pytest.mark.parametrize(("suffix", "content", "message"), [
    (".jsonl", '{"user_input": "q", "reference": "r", "reference_contexts": ["c"]}\n'
               '{"reference": "r", "reference_contexts": ["c"]}\n', r"row 2: field 'user_input' is missing"),
    (".jsonl", '{"user_input": "q", "reference": "r", "reference_contexts": "not a list"}\n',
     r"row 1: field 'reference_contexts' is not a list"),
    (".jsonl", '{"user_input": "q", "reference": "r", "reference_contexts": ["c", 3]}\n',
     r"row 1: field 'reference_contexts' element 2 must be a string"),
    (".jsonl", '{"user_input": "q \\ud800", "reference": "r", "reference_contexts": ["c"]}\n',
     r"row 1: field 'user_input' contains an unpaired surrogate U\+D800 at character 3"),
    (".jsonl", '{"user_input": "q", "reference": "r", "reference_contexts": ["c", "a\\u0000b"]}\n',
     r"row 1: field 'reference_contexts' element 2 contains the control character U\+0000 at character 2"),
    (".jsonl", '{"user_input": "q", "reference": "r", "reference_contexts": ["c", ""]}\n',
     r"row 1: field 'reference_contexts' element 2 is empty"),
    (".csv", 'user_input,reference,reference_contexts\nq,r,"[""c""]"\nq2,r,"[""  \\n ""]"\n',
     r"row 2: field 'reference_contexts' element 1 is empty"),
    (".jsonl", '{"user_input": "q", "reference": "r", "reference_contexts": ["c"]}\n{broken\n',
     r"row 2 \(line 2\): not valid JSON"),
    (".csv", 'user_input,reference,reference_contexts\nq,r,"[""c""]"\nq2,,"[""c""]"\n',
     r"row 2: field 'reference' is missing or empty"),
    (".csv", 'user_input,reference\nq,r\n', r"row 1: field 'reference_contexts' is missing"),
    (".txt", "", r"unsupported ragas test-set format '.txt'"),
])
def test_bad_ragas_rows_name_row_and_field(tmp_path: Path, suffix: str, content: str, message: str):
    path = tmp_path / f"bad{suffix}"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_ragas_testset(path)


def test_writing_a_bad_row_names_row_and_field_and_writes_nothing(tmp_path: Path):
    path = tmp_path / "out.jsonl"
    rows = [ROWS[0], {**ROWS[1], "reference_contexts": "not a list"}]
    with pytest.raises(ExternalDataError, match=r"row 2: field 'reference_contexts' must be a list of strings"):
        write_ragas_testset(rows, path)
    assert not path.exists() and list(tmp_path.iterdir()) == []


# --- the real anthropic_docs set ---------------------------------------------------------------

def test_the_anthropic_docs_set_maps_onto_a_snapshot_of_its_own_corpus(tmp_path: Path, capsys):
    if not (ANTHROPIC_DOCS / "anthropic_docs.json").is_file():
        pytest.skip(f"reference data not found at {ANTHROPIC_DOCS} (only present next to the project checkout)")
    chunks_json = ANTHROPIC_DOCS / "anthropic_docs.json"
    files_of = json_chunks_to_corpus(chunks_json, tmp_path / "corpus")
    assert len(files_of) == 232
    _version, chunks = _snapshot(tmp_path / "corpus", tmp_path)
    assert {c.path for c in chunks} == set(files_of.values())
    items = read_anthropic_docs_dataset(ANTHROPIC_DOCS / "docs_evaluation_dataset.json", chunks_json)
    assert len(items) == 100

    started = time.perf_counter()
    pinned, left = pin_external_items(items, SqlCorpusRepository(get_engine(f"sqlite:///{tmp_path / 'store.db'}"))
                                      .documents(_version), chunks)
    elapsed = time.perf_counter() - started

    assert left == [] and len(pinned) == 100
    for found in pinned:
        correct_files = {files_of[link] for link in found.item.external_chunk_ids}
        assert {e.path for e in found.evidence} == correct_files, found.item.external_id
        assert len(found.evidence) == len(found.item.relevant_texts), "one span per labelled chunk"
    with capsys.disabled():
        print(f"\nanthropic_docs: 232 external chunks -> {len(chunks)} snapshot chunks; "
              f"{len(pinned)}/100 items located, {sum(len(p.evidence) for p in pinned)} evidence spans, in {elapsed:.3f}s")


def test_two_ragas_files_without_ids_never_collide_and_ids_derive_from_content(tmp_path: Path):
    import hashlib

    from rag_assets.store.curation_repository import SqlCurationRepository
    from rag_assets.store.engine import get_engine

    header = "user_input,reference_contexts,reference\n"
    (tmp_path / "first.csv").write_text(header + '"How long do refunds take?","[\'c\']","14 days."\n', encoding="utf-8")
    (tmp_path / "second.csv").write_text(header + '"Who pays the shipping?","[\'c\']","The shop."\n'
                                         '" How long do  refunds take? ","[\'c\']","14 days."\n', encoding="utf-8")
    first, second = read_ragas_testset(tmp_path / "first.csv"), read_ragas_testset(tmp_path / "second.csv")

    expected = "ragas-" + hashlib.sha256(b"Who pays the shipping?\x00The shop.").hexdigest()[:16]
    assert [i.external_id for i in second] == [expected, first[0].external_id], "same content, same id in any file"
    repo = SqlCurationRepository(get_engine(f"sqlite:///{tmp_path / 'store.db'}"))
    imported = [repo.import_items([PinnedItem(item, (), ()) for item in items], "cv-000000000000", "ragas", name, name)
                for name, items in (("first.csv", first), ("second.csv", second))]
    assert [done.new for done in imported] == [1, 1], "the second file's new question is imported, the repeated one is not"


SMOKER = "What does a smoker mask?"


def write_ragas(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_ragas_file_asking_one_question_twice_with_different_references_is_refused_naming_both_rows(tmp_path: Path):
    """As a review file refuses two rows deciding one candidate differently: which reference is right is the team's
    to say. The question is compared with its whitespace collapsed, as the review import compares edits."""
    path = write_ragas(tmp_path / "team.jsonl", [
        {"user_input": SMOKER, "reference": "The alarm pheromone.", "reference_contexts": ["c"]},
        {"user_input": "Who pays the shipping?", "reference": "The shop.", "reference_contexts": ["c"]},
        {"user_input": "  What does a  smoker\nmask? ", "reference": "Something else entirely.",
         "reference_contexts": ["c"]},
    ])
    with pytest.raises(ExternalDataError) as raised:
        read_ragas_testset(path)
    assert str(raised.value) == (f"{path}: row 3: field 'reference' differs from row 1's for the same user_input "
                                 f"('What does a smoker mask?'); keep one of the two rows")
    named = write_ragas(tmp_path / "named.jsonl", [{**row, "id": f"q{n}"} for n, row in enumerate(
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())])
    assert [i.reference_answer for i in read_ragas_testset(named)][::2] == [
        "The alarm pheromone.", "Something else entirely."], "two items the team named apart, as an export holds"


@pytest.mark.parametrize("named_first", [True, False])
def test_a_ragas_row_without_an_id_asking_a_named_rows_question_with_another_reference_is_refused(
        tmp_path: Path, named_first: bool):
    """The row without an id is never the named item (that id's item only): the file would hold two answers to one
    question, the unnamed one replacing nothing, so which is right is the team's to say."""
    named = {"id": "smoke", "user_input": SMOKER, "reference": "The alarm pheromone.", "reference_contexts": ["c"]}
    unnamed = {"user_input": f" {SMOKER}", "reference": "Something else entirely.", "reference_contexts": ["c"]}
    path = write_ragas(tmp_path / "team.jsonl", [named, unnamed] if named_first else [unnamed, named])
    with pytest.raises(ExternalDataError) as raised:
        read_ragas_testset(path)
    assert str(raised.value) == (f"{path}: row 2: field 'reference' differs from row 1's for the same user_input "
                                 "('What does a smoker mask?'), the item with id 'smoke'; keep one of the two rows "
                                 "or give this one an id")
    same = write_ragas(tmp_path / "same.jsonl", [named, {**unnamed, "reference": "The alarm  pheromone."}])
    assert [i.derived_id for i in read_ragas_testset(same)] == [False, True], "the same reference: no conflict"


def test_a_ragas_file_asking_one_question_twice_with_the_same_reference_is_refused_as_before(tmp_path: Path):
    path = write_ragas(tmp_path / "team.jsonl", [
        {"user_input": SMOKER, "reference": "The alarm pheromone.", "reference_contexts": ["c"]},
        {"user_input": SMOKER, "reference": "The alarm  pheromone.", "reference_contexts": ["c"]},
    ])
    with pytest.raises(ExternalDataError, match="^" + re.escape(
            f"{path}: row 2: the same user_input and reference as of row 1")):
        read_ragas_testset(path)


@pytest.mark.parametrize(("field", "cell", "start"), [
    ("user_input", '"=HYPERLINK(""http://x"",""q"")"', "="),
    ("user_input", "=LOWER(A1)", "="),
    ("user_input", "+1+1", "+"),
    ("user_input", "-2+3 questions?", "-"),
    ("user_input", "@SUM(A1)", "@"),
    ("user_input", '"  =1+1"', "="),
    ("reference", "=1+1", "="),
    ("id", "=A1", "="),
])
def test_a_formula_cell_of_a_ragas_csv_is_refused_naming_row_and_field(tmp_path: Path, field: str, cell: str,
                                                                          start: str):
    """OWASP's rule, as a review file applies it to the columns experts fill: the text would run as a formula
    when the team opens the golden set in a spreadsheet again."""
    cells = {"id": "q1", "user_input": "What does a smoker mask?", "reference": "The alarm pheromone.", field: cell}
    path = tmp_path / "team.csv"
    path.write_text("id,user_input,reference,reference_contexts\n"
                    'q0,Who pays the shipping?,The shop.,"[""c""]"\n'
                    f'{cells["id"]},{cells["user_input"]},{cells["reference"]},"[""c""]"\n', encoding="utf-8")
    with pytest.raises(ExternalDataError) as raised:
        read_ragas_testset(path)
    assert str(raised.value) == (f"{path}: row 2: field '{field}' starts with {start!r} (a spreadsheet formula); "
                                 "remove it or prefix it with an apostrophe")


def test_a_ragas_csv_cell_escaped_with_an_apostrophe_or_a_plain_number_is_taken_as_text(tmp_path: Path):
    path = tmp_path / "team.csv"
    path.write_text("user_input,reference,reference_contexts\n"
                    """'=HYPERLINK("x"),-3.5,"[""c""]"\n""", encoding="utf-8")
    (item,) = read_ragas_testset(path)
    assert (item.question, item.reference_answer) == ('=HYPERLINK("x")', "-3.5")


@pytest.mark.parametrize(("field", "value", "kind"), [("reference", 42, "int"), ("user_input", 4.5, "float"),
                                                     ("reference", True, "bool")])
def test_a_ragas_jsonl_text_that_is_not_a_json_string_is_refused_naming_row_and_field(
        tmp_path: Path, field: str, value: object, kind: str):
    path = write_ragas(tmp_path / "team.jsonl", [
        {"user_input": "Who pays the shipping?", "reference": "The shop.", "reference_contexts": ["c"]},
        {"user_input": SMOKER, "reference": "The alarm pheromone.", "reference_contexts": ["c"], field: value},
    ])
    with pytest.raises(ExternalDataError) as raised:
        read_ragas_testset(path)
    assert str(raised.value) == f"{path}: row 2: field '{field}' must be a string, got {kind}"
