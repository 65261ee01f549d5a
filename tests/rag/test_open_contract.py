"""The open retrieval contract: parsing each form of a retrieved entry, locating texts in the pinned
revision (exact, normalised, fuzzy, not at all), the run that fills it in, the store round trip and
the error budget, on hand-computed cases."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from rag_assets.corpus.models import SnapshotChunk, sha256_hex
from rag_assets.errors import ConfigError
from rag_assets.evidence.documents import Documents
from rag_assets.evidence.locate import Location, Locator
from rag_assets.evidence.spans import Span
from rag_assets.rag.adapters import ContractError, parse_output, parse_retrieved
from rag_assets.rag.chunks import SnapshotChunks
from rag_assets.rag.error_budget import error_budget
from rag_assets.rag.models import RagQuery, RagResponse, RetrievedChunk, failed
from rag_assets.rag.system import context_mapping, run_rag
from rag_assets.scoring.retrieval import document_hit_rate_at_k
from rag_assets.store.engine import get_engine
from rag_assets.store.rag_repository import SqlRagRepository


def _words(first: int, last: int) -> str:
    return " ".join(f"w{n}" for n in range(first, last + 1))


def _chunk(chunk_id: str, path: str, text: str, start: int = 0) -> SnapshotChunk:
    return SnapshotChunk(chunk_id, sha256_hex(text), path, path, None, None, "", text, start, start + len(text))


# doc.md is "w1 ... w20", cut into two chunks; other.md is "w21 ... w30".
CHUNKS = [_chunk("a", "doc.md", _words(1, 10)), _chunk("b", "doc.md", _words(11, 20), len(_words(1, 10)) + 1),
          _chunk("c", "other.md", _words(21, 30))]
DOC = _words(1, 20)


def _at(text: str, path: str = "doc.md", body: str = DOC) -> Span:
    start = body.index(text)
    return Span(path, start, start + len(text))


def test_each_form_of_a_retrieved_entry_parses_and_keeps_what_the_system_said():
    named = parse_retrieved({"chunk_id": "a", "score": 2}, 1)
    assert (named.chunk_id, named.score, named.mapping, named.key) == ("a", 2.0, "chunk_id", "a")
    own = parse_retrieved({"id": 7, "text": "x y", "source": "doc.md", "score": 1.5}, 2)
    assert (own.chunk_id, own.own_id, own.text, own.source, own.key) == (None, "7", "x y", "doc.md", "7")
    bare = parse_retrieved({"text": "x y"}, 3)
    assert (bare.key, bare.score, bare.mapping) == ("context-3", 0.0, "unmapped")


@pytest.mark.parametrize("row, message", [
    ({"id": "own-1"}, "retrieved[0]: give 'chunk_id' (a snapshot chunk id) or a non-empty 'text'"),
    ({"text": "  "}, "retrieved[0]: give 'chunk_id' (a snapshot chunk id) or a non-empty 'text'"),
    ({"text": 3}, "retrieved[0].text: expected str, got int"),
    ({"chunk_id": "a", "source": 5}, "retrieved[0].source: expected str, got int"),
    ({"text": "x", "id": [1]}, "retrieved[0].id: expected str or int, got list"),
    ({"text": "x", "score": "high"}, "retrieved[0].score: expected int or float, got str"),
    ({"text": "ok \ud83d"}, "retrieved[0].text: contains an unpaired surrogate U+D83D at character 4 (an escape that "
                            "stands for no character)"),
    ({"text": "a\x00b"}, "retrieved[0].text: contains the control character U+0000 at character 2"),
])
def test_a_broken_entry_names_its_field(row, message):
    with pytest.raises(ContractError) as raised:
        parse_retrieved(row, 1)
    assert str(raised.value) == message


def test_a_context_is_found_exactly_normalised_fuzzily_or_not_at_all():
    documents = Documents.from_chunks(CHUNKS)
    assert documents["doc.md"].body == DOC, "a body rebuilt from its chunks: chunk texts at their offsets"
    locator = Locator(documents)
    assert locator.locate(_words(7, 14)) == Location(_at(_words(7, 14)), "exact", 1.0), "across the chunk boundary"
    assert locator.locate("  W7   **w8**\n\nw9 ") == Location(_at(_words(7, 9)), "normalised", 1.0)
    edited = _words(3, 9) + " w99 " + _words(11, 12)  # nine of its ten words are in doc.md, in a row
    assert locator.locate(edited) == Location(_at(_words(3, 12)), "fuzzy", 0.9)
    assert locator.locate("nothing here at all") is None
    assert locator.locate(_words(1, 3), "other.md") == Location(_at(_words(1, 3)), "exact", 1.0), \
        "a wrong source hint falls back to the other documents"


def test_a_fuzzy_window_ends_where_the_text_does_though_the_words_after_it_are_in_its_front_matter():
    """The tester's case: a context with the file's front matter was placed about 100 characters past where its text
    ends, as the window is as long as the text (front matter and all) and was trimmed to the words the text holds
    anywhere, the front matter's among them: a miss became a hit."""
    front = f"--- title: w9 w10 --- {_words(1, 8)}"  # nine of its eleven words are in doc.md's first eleven
    assert Locator(Documents.from_chunks(CHUNKS)).locate(front) == Location(_at(_words(1, 8)), "fuzzy", 0.9091)


def test_a_fuzzy_label_whose_sentences_are_swapped_is_placed_on_both_of_them():
    """A reviewer's case: the window was trimmed to the words that line up with the text in order, so a label whose
    two sentences the body holds the other way round was placed on one of them, and a golden label lost half of its
    evidence."""
    first, second = _words(1, 10), _words(11, 20)
    assert Locator(Documents.from_chunks(CHUNKS)).locate(f"{second}. {first}.") == Location(_at(DOC), "fuzzy", 1.0)


def test_a_context_cut_inside_a_word_is_placed_up_to_the_cut_as_when_it_is_found_exactly():
    """A splitter's chunk that ends in the middle of a word is found exactly up to its last character, but a fuzzy
    window or a part ended at its last whole word: the same text lost a word of token recall where it carried front
    matter, and a context that overlaps a reference context a word more than the corpus path counts."""
    locator = Locator(Documents.from_chunks(CHUNKS))
    assert locator.locate(f"{_words(1, 8)} w", part=True) == Location(Span("doc.md", 0, len(_words(1, 8)) + 2),
                                                                      "exact", 1.0)
    fuzzy = f"--- title: w9 w10 --- {_words(1, 8)} w"  # "w" is the start of "w9"
    assert locator.locate(fuzzy) == Location(Span("doc.md", 0, len(_words(1, 8)) + 2), "fuzzy", 0.8333)
    part = f"9 {_words(10, 20)} {_words(101, 112)}"  # "9" is the end of "w9"
    assert locator.locate(part, part=True) == Location(Span("doc.md", DOC.index("w9") + 1, len(DOC)), "part", 0.5)


def test_a_text_found_exactly_in_one_version_is_placed_there_not_on_a_near_copy_tried_first():
    """A tester's case: a v2 page's sentence was placed by a fuzzy window on the v1 page, which says 30 days where
    v2 says 90, so a golden label pointed at the wrong version and a perfect retrieval scored a miss."""
    v1 = "Deleted files are kept for 30 days in the trash before they are removed for good from every device."
    v2 = v1.replace("30 days", "90 days")
    locator = Locator(Documents.of({"v1/retention.md": v1, "v2/retention.md": v2}))
    assert locator.locate(v2) == Location(Span("v2/retention.md", 0, len(v2)), "exact", 1.0)
    named = locator.locate(v2, "v1/retention.md")
    assert (named.span.path, named.method, named.score) == ("v1/retention.md", "fuzzy", 0.9474), \
        "the document the caller names wins with any method: the system says it retrieved it"


def test_a_run_two_versions_hold_alike_is_placed_on_the_named_one_else_on_neither():
    shared = "Refunds are paid within fourteen days to the card that was charged for the order."
    documents = Documents.of({"v1/refunds.md": f"Old intro. {shared}", "v2/refunds.md": f"New intro. {shared}"})
    chunk = f"--- title: Refunds version: 2 --- {shared}"
    assert Locator(documents).locate(chunk, part=True) is None
    found = Locator(documents).locate(chunk, "v2/refunds.md", part=True)
    assert (found.span.path, found.method) == ("v2/refunds.md", "part")


def test_a_context_spanning_two_documents_is_not_stitched_together():
    assert Locator(Documents.from_chunks(CHUNKS)).locate(_words(16, 25)) is None
    assert Locator(Documents.from_chunks(CHUNKS)).locate(_words(16, 25), part=True) is None, "half in each: neither"


def test_a_retrieved_context_is_credited_for_the_part_a_document_holds_and_a_label_is_not():
    """The tester's cases: a window that opens with the file's front matter, which the snapshot drops, and a context
    that holds a whole short reference document with text around it; both were unmapped, so a miss."""
    locator = Locator(Documents.from_chunks(CHUNKS))
    front = "--- title: w1 w2 version: 1.6 --- " + _words(1, 6)
    assert locator.locate(front) is None, "a label must be found whole"
    assert locator.locate(front, part=True) == Location(_at(_words(1, 6)), "part", 0.5455)
    around = "x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 " + _words(21, 30) + " y1 y2 y3 y4 y5 y6 y7 y8 y9 y10"
    assert locator.locate(around, part=True) == Location(Span("other.md", 0, len(_words(21, 30))), "part", 0.3125)
    assert locator.locate("x1 x2 x3 x4 x5 " + _words(5, 8) + " y1 y2 y3 y4", part=True) is None, "a phrase shared"


def test_a_retrieved_context_that_overlaps_a_document_is_placed_on_the_overlap():
    """The tester's case: without a corpus the documents are the reference contexts, and a system's chunk that began
    well before one and ended inside it (in the middle of a word) was unmapped, a miss, though it held almost all of
    it. An overlap of at most half of the document, or a passage both texts go on from at both ends, places nothing."""
    locator = Locator(Documents.from_chunks(CHUNKS))
    other = _words(21, 30)
    ends_inside = f"{_words(101, 112)} {_words(21, 28)} w2"  # "w2" is "w29" cut short
    assert locator.locate(ends_inside, part=True) == Location(
        Span("other.md", 0, len(_words(21, 28)) + len(" w2")), "part", 0.4286), "up to the cut, in w29"
    begins_inside = f"2 {_words(23, 30)} {_words(101, 112)}"  # "2" is the end of "w22"
    assert locator.locate(begins_inside, part=True) == Location(
        Span("other.md", other.index("w22") + 2, len(other)), "part", 0.4286), "from the cut, in w22"
    assert locator.locate(f"{_words(101, 120)} {_words(1, 11)}", part=True) == Location(
        _at(_words(1, 11)), "part", 0.3548), "11 of doc.md's 20 words"
    assert locator.locate(f"{_words(101, 120)} {_words(1, 10)}", part=True) is None, "half of doc.md: no more"
    assert locator.locate(f"{_words(101, 112)} {_words(3, 18)} {_words(113, 124)}", part=True) is None, \
        "a passage both go on from is shared, not an overlap"


def test_a_page_holding_a_whole_reference_context_is_placed_on_it_though_its_rarest_words_are_elsewhere():
    """The tester's case: without a corpus the documents are the reference contexts, and a system's whole page holding
    one of them word for word was unmapped: the page's rarest words picked four other documents as candidates. A
    document the text may hold whole (its own rarest word is in the text) is a candidate too."""
    reference = _words(1, 20)
    decoys = {f"d{n}.md": f"z{n} " + " ".join(f"w{i}" for i in range(20, 0, -1)) for n in range(7)}
    locator = Locator(Documents.of({"ref.md": reference, **decoys}))
    page = f"z0 z1 z2 z3 z4 z5 z6 {reference} {' '.join(f'x{n}' for n in range(40))}"
    assert locator.locate(page, part=True) == Location(Span("ref.md", 0, len(reference)), "part", 0.2985)


def test_a_stub_document_or_a_footer_several_documents_share_places_no_context():
    """A review's cases: a context holding a whole document of three words, and one that is a system's own words
    and a footer six documents end with, were placed (the second on whichever document came first)."""
    footer = "For more help contact support at the service desk"
    documents = Documents.of({"stub.md": "Overview of settings", **{f"d{n}.md": f"Page {n} text. {footer}"
                                                                    for n in range(6)}})
    locator = Locator(documents)
    assert locator.locate("Overview of settings for the new release and what changed in each of its parts",
                          part=True) is None
    assert locator.locate("Our own summary in our words. " + footer, part=True) is None


class _Fixed:
    """A system that answers every query with one payload, as a user's callable would."""

    name = "fixed"

    def __init__(self, payload: dict) -> None:
        self.payload = payload

    def config(self) -> dict:
        return {}

    def answer(self, queries, progress=None):
        return [parse_output(q.item_id, self.payload, 1.0) for q in queries]


def test_the_run_locates_text_contexts_fills_named_chunks_and_accepts_citations_of_own_ids():
    payload = {"answer": "w2 [own-1]", "citations": [{"claim": "w2", "chunk_id": "own-1"}],
               "retrieved": [{"id": "own-1", "text": _words(7, 14)}, {"chunk_id": "c"}, {"text": "unrelated words"}]}
    (response,) = run_rag(_Fixed(payload), [RagQuery("i1", "q?", "cv-1")], SnapshotChunks.of(CHUNKS))
    window, named, lost = response.retrieved
    assert response.ok and response.citations[0].chunk_id == "own-1"
    assert (window.mapping, window.source, window.span) == ("exact", "doc.md", _at(_words(7, 14)))
    assert (named.text, named.source, named.span) == (_words(21, 30), "other.md", Span("other.md", 0, len(_words(21, 30))))
    assert lost.unmapped and lost.span is None and response.contexts_unmapped_share == pytest.approx(1 / 3)
    assert context_mapping([response]) == (pytest.approx(1 / 3), {"chunk_id": 1, "exact": 1, "unmapped": 1})


def test_unknown_snapshot_ids_in_retrieved_are_an_unknown_chunks_error_naming_each_field():
    payload = {"answer": "x", "retrieved": [{"chunk_id": "zz"}, {"text": _words(1, 9)}, {"chunk_id": "a"},
                                            {"chunk_id": "yy"}],
               "citations": [{"claim": "x", "chunk_id": "ghost"}]}
    (response,) = run_rag(_Fixed(payload), [RagQuery("i1", "q?", "cv-1")], SnapshotChunks.of(CHUNKS))
    assert (response.error_kind, response.error) == (
        "unknown_chunks", "retrieved[0].chunk_id 'zz', retrieved[3].chunk_id 'yy': not a chunk of corpus version "
                          "cv-1 (a retrieved 'chunk_id' names a snapshot chunk; send your own ids as 'id' with the "
                          "'text')")


def test_more_than_five_unknown_snapshot_ids_are_counted_after_the_first_five():
    payload = {"answer": "x", "retrieved": [{"chunk_id": f"z{n}"} for n in range(7)]}
    (response,) = run_rag(_Fixed(payload), [RagQuery("i1", "q?", "cv-1")], SnapshotChunks.of(CHUNKS))
    assert response.error.startswith("retrieved[0].chunk_id 'z0', retrieved[1].chunk_id 'z1', ")
    assert "retrieved[4].chunk_id 'z4' and 2 more: not a chunk of corpus version cv-1 (" in response.error


def test_a_citation_of_an_id_neither_returned_nor_in_the_snapshot_is_kept_and_the_item_answered():
    """The tester's case: a team's own ids, the right contexts, and one citation of an id that does not exist. It
    is a fabricated citation, which citation accuracy counts wrong, not a reason to void the item."""
    payload = {"answer": "w2 [own-1] [own-99]", "retrieved": [{"id": "own-1", "text": _words(7, 14)}],
               "citations": [{"claim": "w2", "chunk_id": "own-1"}, {"claim": "w2", "chunk_id": "own-99"},
                             {"claim": "w2", "chunk_id": "b"}]}
    (response,) = run_rag(_Fixed(payload), [RagQuery("i1", "q?", "cv-1")], SnapshotChunks.of(CHUNKS))
    assert response.ok and response.error_kind is None
    assert [c.chunk_id for c in response.citations] == ["own-1", "own-99", "b"]
    assert [r.key for r in response.retrieved] == ["own-1"]


def test_the_store_keeps_own_ids_texts_sources_and_spans(tmp_path: Path):
    payload = {"answer": "w2", "retrieved": [{"id": "own-1", "text": _words(7, 14), "source": "doc.md", "score": 3},
                                             {"chunk_id": "a", "score": 1}]}
    responses = run_rag(_Fixed(payload), [RagQuery("i1", "q?", "cv-1")], SnapshotChunks.of(CHUNKS))
    repo = SqlRagRepository(get_engine(f"sqlite:///{tmp_path / 'store.db'}"))
    run = repo.save_run("cv-1", 1, "fixed", "h", {}, responses, {"i1": 1})
    (back,) = repo.results(run.run_id, {c.chunk_id: c for c in CHUNKS})
    assert back.retrieved[0] == responses[0].retrieved[0] and back.retrieved[0].span == _at(_words(7, 14))
    assert back.retrieved[1] == RetrievedChunk("a", _words(1, 10), 1.0, 2, source="doc.md", span=Span("doc.md", 0, len(_words(1, 10))))


def test_the_store_keeps_every_place_of_a_text_found_in_a_copy_too(tmp_path: Path):
    copy = [_chunk(f"copy-{c.chunk_id}", f"archive/{c.path}", c.text, c.start) for c in CHUNKS if c.path == "doc.md"]
    payload = {"answer": "w2", "retrieved": [{"text": _words(7, 14)}]}
    responses = run_rag(_Fixed(payload), [RagQuery("i1", "q?", "cv-1")], SnapshotChunks.of(CHUNKS + copy))
    assert responses[0].retrieved[0].places == (_at(_words(7, 14), "archive/doc.md"), _at(_words(7, 14)))
    repo = SqlRagRepository(get_engine(f"sqlite:///{tmp_path / 'store.db'}"))
    run = repo.save_run("cv-1", 1, "fixed", "h", {}, responses, {"i1": 1})
    (back,) = repo.results(run.run_id, {})
    assert back.retrieved == responses[0].retrieved


def test_document_hit_rate_looks_at_the_documents_of_the_top_k():
    documents = [{"a.md"}, set(), {"b.md", "c.md"}]
    assert document_hit_rate_at_k(documents, {"b.md"}, 2) == 0.0
    assert document_hit_rate_at_k(documents, {"b.md"}, 3) == 1.0
    assert math.isnan(document_hit_rate_at_k(documents, set(), 3))


def _responses(errors: int, total: int = 20) -> list[RagResponse]:
    kinds = ["unknown_chunks", "unknown_chunks", "timeout"]
    return [failed(f"q{n}", kinds[n % 3], f"boom {n}") if n < errors else RagResponse(f"q{n}", "ok")
            for n in range(total)]


def test_the_error_budget_passes_at_the_limit_and_fails_above_it_naming_kinds_with_an_example():
    assert error_budget(_responses(1)).passed
    budget = error_budget(_responses(3))
    assert not budget.passed and budget.error_rate == pytest.approx(0.15)
    assert budget.describe() == ("3 of 20 items errored (15.0%, budget 5.0%); unknown_chunks x2, e.g. q0: boom 0; "
                                 "timeout x1, e.g. q2: boom 2")
    assert error_budget(_responses(3), max_error_rate=0.2).passed
    with pytest.raises(ConfigError, match=r"^max_error_rate must be in \[0, 1\], got 1.5; for example max_error_rate: "
                                          r"0.05$"):
        error_budget([], 1.5)
