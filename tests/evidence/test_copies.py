"""A text that occurs in several places (a live page and its archived copy): placed at every one, credited at
whichever meets the evidence, counted once; on a hand-built corpus with a duplicated file, exact values."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import rag_assets
from rag_assets.corpus.models import SnapshotChunk, sha256_hex
from rag_assets.evidence.documents import Documents
from rag_assets.evidence.locate import Location, Locator
from rag_assets.evidence.spans import EvidenceSpan, Span
from rag_assets.golden.models import ExternalItem, GoldenItem
from rag_assets.golden.pinning import pin_external_items
from rag_assets.llm.offline import OfflineClient
from rag_assets.rag.adapters import CallableRagSystem
from rag_assets.rag.chunks import SnapshotChunks
from rag_assets.rag.models import RagQuery
from rag_assets.rag.system import run_rag
from rag_assets.scoring.metrics.context import ItemContext
from rag_assets.scoring.metrics.retrieval import figures
from rag_assets.scoring.retrieval import rank_metrics, token_metrics

CYGNUS = ("The Cygnus pricing worker processes at most 55 messages per second in pricing mode 3-0. When the "
          "Cygnus limit of 55 is exceeded, Harbor Queue retries after 5 seconds and logs code HQ-1830.")
AQUILA = ("The Aquila pricing worker processes at most 56 messages per second in pricing mode 3-1. When the "
          "Aquila limit of 56 is exceeded, Harbor Queue retries after 6 seconds and logs code HQ-1831.")
REFUNDS = ("Refunds are issued to the original card within ten business days of the request; invoices "
           "already paid by bank transfer are refunded by transfer.")
PRICING = f"# Pricing\n\n{CYGNUS}\n\n{AQUILA}\n"
BODIES = {"pricing.md": PRICING, "archive/pricing.md": PRICING, "billing.md": f"# Billing\n\n{REFUNDS}\n"}
LIVE, ARCHIVE = "pricing.md", "archive/pricing.md"
K = 5


def _at(text: str, path: str) -> Span:
    start = BODIES[path].index(text)
    return Span(path, start, start + len(text))


def _documents() -> Documents:
    return Documents.of(BODIES)


def _chunks() -> list[SnapshotChunk]:
    """One chunk per paragraph, ids ``path#n``."""
    found = []
    for path, body in BODIES.items():
        for n, text in enumerate((CYGNUS, AQUILA) if path != "billing.md" else (REFUNDS,)):
            span = _at(text, path)
            found.append(SnapshotChunk(f"{path}#{n}", sha256_hex(text), path, path, None, None, "", text, span.start,
                                       span.end))
    return found


def test_a_text_in_a_file_and_its_copy_is_placed_in_both_the_named_one_first():
    locator = Locator(_documents())
    assert locator.locate(CYGNUS) == Location(_at(CYGNUS, ARCHIVE), "exact", 1.0, (_at(CYGNUS, LIVE),)), \
        "no source named: the candidates in path order, every copy kept"
    assert locator.locate(CYGNUS, LIVE) == Location(_at(CYGNUS, LIVE), "exact", 1.0, (_at(CYGNUS, ARCHIVE),))
    assert locator.locate(CYGNUS.upper(), ARCHIVE) == Location(
        _at(CYGNUS, ARCHIVE), "normalised", 1.0, (_at(CYGNUS, LIVE),))
    assert locator.locate(REFUNDS) == Location(_at(REFUNDS, "billing.md"), "exact", 1.0), "one place: nothing else"
    twice = Locator(Documents.of({"faq.md": f"{REFUNDS}\n\nAsk again.\n\n{REFUNDS}"}))
    assert twice.locate(REFUNDS).elsewhere == (Span("faq.md", len(REFUNDS) + 14, 2 * len(REFUNDS) + 14),), \
        "a passage a document repeats is in both places too"


def _live(text: str, grade: float = 1.0) -> EvidenceSpan:
    return _documents().evidence(_at(text, LIVE), grade)


def test_a_context_found_in_two_places_is_one_rank_that_hits_at_either():
    both = (_at(CYGNUS, ARCHIVE), _at(CYGNUS, LIVE))
    scores = rank_metrics([both, _at(REFUNDS, "billing.md")], [_live(CYGNUS), _live(AQUILA)], K)
    assert scores == pytest.approx({"precision@5": 1 / 5, "recall@5": 1 / 2, "ndcg@5": 1 / (1 + 1 / math.log2(3)),
                                    "mrr@5": 1.0, "hit_rate@5": 1.0, "average_precision": 1 / 2})
    assert rank_metrics([both], [_live(CYGNUS)], K)["precision@5"] == pytest.approx(1 / 5), \
        "two places of one context are one rank, not two hits"
    assert rank_metrics([(_at(AQUILA, ARCHIVE), _at(AQUILA, LIVE))], [_live(CYGNUS)], K)["hit_rate@5"] == 0.0, \
        "a context that hits the evidence at none of its places is one miss"


def test_evidence_found_in_two_places_is_one_unit_hit_by_either_copy():
    evidence = _documents().evidence(_at(CYGNUS, ARCHIVE), elsewhere=[_at(CYGNUS, LIVE)])
    for context in (_at(CYGNUS, LIVE), _at(CYGNUS, ARCHIVE)):
        assert rank_metrics([context], [evidence], K)["recall@5"] == 1.0
    assert rank_metrics([_at(CYGNUS, LIVE), _at(CYGNUS, ARCHIVE)], [evidence], K) == pytest.approx({
        "precision@5": 1 / 5, "recall@5": 1.0, "ndcg@5": 1.0, "mrr@5": 1.0, "hit_rate@5": 1.0,
        "average_precision": 1.0}), "a page and its archived copy are one context: one relevant rank, as the tokens say"
    assert token_metrics([_at(CYGNUS, LIVE), _at(CYGNUS, ARCHIVE)], 0, [evidence], K,
                         _documents().token_starts)["token_precision@5"] == pytest.approx(1.0)


def test_token_figures_count_a_context_and_its_evidence_once_where_they_meet():
    documents = _documents()
    both = (_at(CYGNUS, ARCHIVE), _at(CYGNUS, LIVE))
    assert token_metrics([both], 0, [_live(CYGNUS)], K, documents.token_starts) == pytest.approx(
        {"token_recall@5": 1.0, "token_precision@5": 1.0, "token_iou@5": 1.0})
    copied = documents.evidence(_at(CYGNUS, ARCHIVE), elsewhere=[_at(CYGNUS, LIVE)])
    starts, cygnus = documents[LIVE].token_starts, _at(CYGNUS, LIVE)
    inside = sum(1 for start in starts if cygnus.start <= start < cygnus.end)
    assert (inside, len(starts)) == (33, 67), "the heading's one word and the two paragraphs' 33 each"
    assert token_metrics([Span(LIVE, 0, len(PRICING))], 0, [copied], K, documents.token_starts) == pytest.approx({
        "token_recall@5": 1.0, "token_precision@5": 33 / 67, "token_iou@5": 33 / 67}), \
        "the evidence counted once, at the copy the context holds"


def _item(evidence: tuple[EvidenceSpan, ...]) -> GoldenItem:
    return GoldenItem("q1", 1, "factual", "What happens above the Cygnus limit?", "It retries after 5 seconds.", (),
                      "v1", evidence=evidence)


def _answered(retrieved: list[dict], item: GoldenItem) -> dict[str, float]:
    """The RAG step over the snapshot (contexts located there), then the item's retrieval figures."""
    system = CallableRagSystem("team:rag", K, function=lambda request: {"answer": "5 s", "retrieved": retrieved})
    documents = _documents()
    [response] = run_rag(system, [RagQuery("q1", item.question, "v1")], SnapshotChunks.of(_chunks(), documents))
    return figures(ItemContext(item, response, documents.versions, evidence=item.evidence, documents=documents, k=K))


@pytest.mark.parametrize("retrieved", [[{"text": CYGNUS}], [{"text": CYGNUS, "source": LIVE}],
                                       [{"text": CYGNUS, "source": ARCHIVE}], [{"chunk_id": "pricing.md#0"}]],
                         ids=["text-only", "live-source", "archive-source", "live-chunk"])
def test_the_same_perfect_context_scores_the_same_however_it_is_sent(retrieved):
    """D2: evidence pinned to the live page only; the text alone was placed in the archived copy and missed."""
    scores = _answered(retrieved, _item((_live(CYGNUS),)))
    assert {m: scores[f"{m}@5"] for m in ("hit_rate", "recall", "precision", "doc_hit_rate", "token_precision")} == \
        pytest.approx({"hit_rate": 1.0, "recall": 1.0, "precision": 1 / 5, "doc_hit_rate": 1.0,
                       "token_precision": 1.0})


def test_a_context_from_another_document_stays_a_miss():
    scores = _answered([{"text": REFUNDS}, {"text": AQUILA}], _item((_live(CYGNUS),)))
    assert (scores["hit_rate@5"], scores["recall@5"], scores["precision@5"], scores["doc_hit_rate@5"]) == \
        (0.0, 0.0, 0.0, 1.0), "the Aquila paragraph comes from the evidence's page, it is not the evidence"


def test_an_imported_reference_context_keeps_every_place_as_its_evidence():
    """D3: pinned to the archived copy alone, a system retrieving the live page's text or chunk scored 0."""
    items = [ExternalItem("e1", "What happens above the Cygnus limit?", "It retries.", relevant_texts=(CYGNUS,))]
    [pinned], left = pin_external_items(items, _documents(), _chunks())
    [evidence] = pinned.evidence
    assert left == [] and evidence.places == (_at(CYGNUS, ARCHIVE), _at(CYGNUS, LIVE))
    assert EvidenceSpan.from_json(evidence.to_json()) == evidence
    for retrieved in ([{"chunk_id": "pricing.md#0"}], [{"text": CYGNUS, "source": LIVE}]):
        scores = _answered(retrieved, _item(pinned.evidence))
        assert (scores["hit_rate@5"], scores["recall@5"], scores["doc_hit_rate@5"]) == (1.0, 1.0, 1.0), retrieved


@pytest.mark.parametrize("source", [LIVE, ARCHIVE, None])
def test_a_ragas_set_evaluated_on_a_corpus_with_an_archived_copy_credits_either_copy(tmp_path, source):
    """D3 end to end: ``rag_assets.evaluate`` imports the reference contexts from the corpus folder."""
    for path, body in BODIES.items():
        (tmp_path / "corpus" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "corpus" / path).write_text(body, encoding="utf-8")
    frame = pd.DataFrame({"user_input": ["What happens above the Cygnus limit?", "And above the Aquila limit?"],
                          "reference": ["It retries after 5 seconds.", "It retries after 6 seconds."],
                          "reference_contexts": [[CYGNUS], [AQUILA]]})
    texts = {"What happens above the Cygnus limit?": CYGNUS, "And above the Aquila limit?": AQUILA}

    def system(request: dict) -> dict:
        context = {"text": texts[request["question"]]} | ({"source": source} if source else {})
        return {"answer": "It retries.", "retrieved": [context]}

    result = rag_assets.evaluate(frame, system, OfflineClient(), k=K, corpus=tmp_path / "corpus")
    for item in result.outcome.items:
        assert (item.values["hit_rate@5"], item.values["recall@5"], item.values["doc_hit_rate@5"],
                item.values["precision@5"]) == pytest.approx((1.0, 1.0, 1.0, 1 / 5)), item.item_id


SHORT = "Harbor Queue retries after 5 seconds"  # 6 words, in both copies


@pytest.mark.parametrize("retrieved", [
    [{"text": CYGNUS, "source": LIVE}, {"text": CYGNUS, "source": LIVE}],
    [{"text": CYGNUS, "source": LIVE}, {"text": CYGNUS}],
    [{"chunk_id": "pricing.md#0"}, {"text": CYGNUS}],
    [{"chunk_id": "pricing.md#0"}, {"chunk_id": "archive/pricing.md#0"}],
], ids=["exact-repeat", "live-then-no-source", "chunk-then-text", "page-then-archived-copy"])
def test_the_same_text_sent_twice_is_one_relevant_rank(retrieved):
    """Placed (live, archive) then (archive, live), or (live,) then (archive, live), or a chunk of each copy with
    evidence at both: precision@5 was 2/5 where an exact repeat scores 1/5."""
    evidence = _documents().evidence(_at(CYGNUS, ARCHIVE), elsewhere=[_at(CYGNUS, LIVE)])
    scores = _answered(retrieved, _item((evidence,)))
    assert (scores["precision@5"], scores["recall@5"], scores["token_precision@5"]) == pytest.approx((1 / 5, 1.0, 1.0))


def test_only_a_text_found_whole_and_of_eight_words_or_more_has_other_places():
    locator = Locator(_documents())
    short = locator.locate(SHORT, LIVE)
    assert (short.span, short.method, short.elsewhere) == (_at(SHORT, LIVE), "exact", ()), \
        "a six-word phrase in another document is not a copy of it"
    eight = "Harbor Queue retries after 5 seconds and logs"
    assert locator.locate(eight, LIVE).elsewhere == (_at(eight, ARCHIVE),)
    edited = CYGNUS.replace("processes", "handles")
    fuzzy = locator.locate(edited, LIVE)
    assert (fuzzy.span.path, fuzzy.method, fuzzy.elsewhere) == (LIVE, "fuzzy", ()), "an equally good window is a tie"
    framed = f"Pricing notes by the platform team, revised for the third quarter review: {CYGNUS}"
    part = locator.locate(framed, LIVE, part=True)
    cygnus = _at(CYGNUS, LIVE)
    assert (part.span, part.method, part.elsewhere) == (Span(LIVE, cygnus.start, cygnus.end - 1), "part", ()), \
        "the run of its words (the final period is no word); an equally long run is a tie, not a copy"
