"""Retrieval metrics at the granularity of the evidence: each evidence span is one relevant unit,
whatever the chunking of the system that retrieved it or of the snapshot.

An evidence span is *found* at the first rank by which the retrieved contexts (each a ``Span`` of the pinned
revision, or None when it could not be located there) together cover at least ``min_overlap`` (0.5 by default)
of its characters: whether the system brought back the evidence's text is asked of the union of what it
retrieved, so the same text found in one context or cut into five gives the same recall and hit rate. A context
*hits* an evidence span (a relevant rank, for precision) when the span is found within the cutoff and the two
overlap by at least ``min_overlap`` of the shorter of the two, or the span is found at its rank (it completed it):
a context that lies inside evidence the system did not bring back is no hit. With k the cutoff:

- hit_rate@k: 1 if the top k find an evidence span, else 0 (never fractional);
- recall@k: the share of evidence spans the top k find;
- precision@k: the share of the k ranks whose context hits some evidence span (missing ranks, and
  contexts that could not be located, are misses);
- MRR@k: 1 / the rank at which the first evidence span is found, 0 if none;
- nDCG@k: a span counts once, at the rank it is found; a rank's gain is the highest grade among the
  spans found there (1 for binary labels), discounted by log2(rank + 1); the ideal ranking puts
  the spans in grade order, one per rank. A negative grade (judged harmful) is a gain of 0;
- average precision: over the ranks at which a span is found, the mean of precision at that rank, divided
  by the number of evidence spans, over every context the system returned (trec_eval's ``map``, not cut at k).

A context repeated counts once, at its first rank, before the cut: repeated exactly (same document and offsets),
or the same text at another of its places (two contexts whose places share one; a context exactly at a place of a
piece of evidence is at every place of it), so retrieving a page and its archived copy is one relevant rank.

A text found in several places (a page and its archived copy: ``rag_assets.evidence.locate``) is one context and
one piece of evidence wherever it lies: the evidence is found when the contexts cover enough of its text, a part
read at one place and the rest at another counting together, and a context hits it when any place of the context's
text hits any place of the evidence's text, so it is one rank for precision and the evidence one unit for recall,
found through any copy; one that hits no place is one miss. Token figures count each at one place, where they
meet: a context at its place that shares the most characters with any place of the evidence (its first place when
none does), then each piece of evidence at its place that shares the most with those contexts (its first on a tie).
Every metric is undefined (NaN) for an item without relevant evidence (an adversarial question).
When the contexts are exactly the labelled units, these are trec_eval's figures (pytrec_eval checks it
in the tests).

Token figures (Smith & Troynikov, 2024, Chroma's chunking evaluation) measure how much of the retrieved
text is evidence, so chunk sizes compare fairly: token recall, token precision and IoU of the union of
the top-k contexts against the union of the evidence, counted in the document's word tokens; a context
that could not be located counts its tokens as retrieved and not evidence.

Diversity@k asks whether the top-k contexts bring complementary text or repeat each other: 1 - the mean
redundancy over pairs, a pair's redundancy being the overlap of their spans over the shorter one where
they overlap, else the Jaccard similarity of their word 3-shingles (near-duplicate text elsewhere).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations

import numpy as np

from rag_assets.evidence.spans import DEFAULT_MIN_OVERLAP, EvidenceSpan, Span
from rag_assets.text.tokens import tokenize

NAN = float("nan")
SHINGLE = 3


#: raised when how the retrieval figures are counted changes, and stored with every evaluation (``RULES_KEY`` in its
#: gates): a baseline counted under other rules is not compared on them (2: evidence found by what the contexts cover
#: together; an evaluation stored without it was counted under 1, where a context inside longer evidence hit it)
RULES = "retrieval-2"
RULES_KEY = "retrieval_rules"
EARLIER_RULES = "retrieval-1"


def counted_under(gates: Mapping[str, object]) -> str:
    """The retrieval rules a stored evaluation (its ``gates``) was counted under."""
    return str(gates.get(RULES_KEY, EARLIER_RULES))


#: a ranked context: its span, or every place its text is found (its span first); None or () when not located
Ranked = Span | Sequence[Span] | None


def _places(context: Ranked) -> tuple[Span, ...]:
    if context is None:
        return ()
    return (context,) if isinstance(context, Span) else tuple(context)


def _deduplicated(ranked: Sequence[Ranked], k: int | None,
                  copies: Sequence[tuple[Span, ...]] = ()) -> list[tuple[Span, ...]]:
    """Each rank's places, a located context that is the same text as an earlier one (they share a place) dropped
    after its first rank. ``copies``: the places of each piece of evidence, the same text at each: a context exactly
    at one of them is at the others too (a context named by chunk id knows only its own place)."""
    same = {place: places for places in copies for place in places}
    seen: set[Span] = set()
    out: list[tuple[Span, ...]] = []
    for context in ranked:
        places = _places(context)
        if places:
            known = {copy for place in places for copy in same.get(place, (place,))}
            if not seen.isdisjoint(known):
                continue
            seen |= known
        out.append(places)
    return out if k is None else out[:k]


def _covered(places: Sequence[Span], retrieved: Sequence[Span]) -> int:
    """Characters of a piece of evidence (its ``places``: the same text at each) that ``retrieved`` covers together,
    wherever each part was read: a part retrieved from a page and the rest from its archived copy cover it as one
    text."""
    relative = [Span("", max(r.start, p.start) - p.start, min(r.end, p.end) - p.start)
                for p in places for r in retrieved if r.overlap(p)]
    return sum(end - start for intervals in _merged(relative).values() for start, end in intervals)


def _found_ranks(ranks: Sequence[tuple[Span, ...]], evidence: Sequence[EvidenceSpan],
                 min_overlap: float) -> dict[int, int]:
    """For each relevant (grade > 0) evidence span the contexts of ``ranks`` find (by index), the rank at which
    it is found: the first by which the contexts so far cover ``min_overlap`` of its text."""
    found: dict[int, int] = {}
    so_far: list[Span] = []
    for rank, places in enumerate(ranks, start=1):
        so_far.extend(places)
        for index, piece in enumerate(evidence):
            if piece.grade > 0 and index not in found and _covered(piece.places, so_far) >= min_overlap * min(
                    place.length for place in piece.places):
                found[index] = rank
    return found


def rank_hits(ranked: Sequence[Ranked], evidence: Sequence[EvidenceSpan], k: int | None,
              min_overlap: float = DEFAULT_MIN_OVERLAP) -> tuple[list[frozenset[int]], dict[int, int]]:
    """For each of the top k ranks, the indices of the evidence spans found within the top k that it hits at any of
    their places, or that are found at that rank (the context that completes a span hits it, however little of it
    it holds); and the rank at which each of those is found."""
    ranks = _deduplicated(ranked, k, [e.places for e in evidence])
    found = _found_ranks(ranks, evidence, min_overlap)
    hits = [frozenset(index for index, at in found.items()
                      if at == rank or any(place.hits(target, min_overlap)
                                           for place in places for target in evidence[index].places))
            for rank, places in enumerate(ranks, start=1)]
    return hits, found


def credited(contexts: Sequence[tuple[Span, ...]],
             evidence: Sequence[tuple[Span, ...]]) -> tuple[list[Span], list[Span]]:
    """One place per located context and per piece of evidence (each given by its places), where they meet (see the
    module docstring): what the token figures count."""
    def best(places: tuple[Span, ...], others: Sequence[Span], shared: Callable[..., int]) -> Span:
        return max(places, key=lambda place: shared(place.overlap(other) for other in others))

    targets = [target for places in evidence for target in places]
    chosen = [best(places, targets, lambda overlaps: max(overlaps, default=0)) for places in contexts if places]
    return chosen, [best(places, chosen, sum) for places in evidence]


def _relevant(evidence: Sequence[EvidenceSpan]) -> int:
    return sum(1 for e in evidence if e.grade > 0)


def _found_per_rank(found: dict[int, int], ranks: int) -> list[frozenset[int]]:
    """Per rank, the spans found there."""
    return [frozenset(index for index, at in found.items() if at == rank) for rank in range(1, ranks + 1)]


def ndcg(found: dict[int, int], evidence: Sequence[EvidenceSpan], k: int) -> float:
    ideal = np.sort(np.array([e.grade for e in evidence if e.grade > 0], dtype=float))[::-1][:k]
    if ideal.size == 0:
        return NAN
    ranks = max(found.values(), default=0)
    gains = np.array([max((evidence[i].grade for i in new), default=0.0) for new in _found_per_rank(found, ranks)],
                     dtype=float)
    discount = lambda n: 1.0 / np.log2(np.arange(2, n + 2))  # noqa: E731
    return float(np.sum(gains * discount(gains.size)) / np.sum(ideal * discount(ideal.size)))


def average_precision(hits: Sequence[frozenset[int]], found: dict[int, int], relevant: int) -> float:
    if relevant == 0:
        return NAN
    hitting = np.cumsum([bool(rank) for rank in hits]) / np.arange(1, len(hits) + 1) if hits else np.array([])
    return float(sum(hitting[at - 1] for at in set(found.values()))) / relevant


def rank_metrics(ranked: Sequence[Ranked], evidence: Sequence[EvidenceSpan], k: int,
                 min_overlap: float = DEFAULT_MIN_OVERLAP) -> dict[str, float]:
    """hit rate, recall, precision, MRR and nDCG at k, and average precision, of one item."""
    relevant = _relevant(evidence)
    names = (f"precision@{k}", f"recall@{k}", f"ndcg@{k}", f"mrr@{k}", f"hit_rate@{k}", "average_precision")
    if relevant == 0:
        return dict.fromkeys(names, NAN)
    hits, found = rank_hits(ranked, evidence, k, min_overlap)
    first = min(found.values(), default=None)
    values = (sum(1 for rank in hits if rank) / k, len(found) / relevant, ndcg(found, evidence, k),
              1.0 / first if first else 0.0, 1.0 if first else 0.0,
              average_precision(*rank_hits(ranked, evidence, None, min_overlap), relevant))
    return dict(zip(names, values))


def _merged(spans: Sequence[Span]) -> dict[str, list[tuple[int, int]]]:
    """Each document's spans as disjoint sorted intervals."""
    by_path: dict[str, list[tuple[int, int]]] = {}
    for span in sorted(spans):
        intervals = by_path.setdefault(span.path, [])
        if intervals and span.start <= intervals[-1][1]:
            intervals[-1] = (intervals[-1][0], max(intervals[-1][1], span.end))
        else:
            intervals.append((span.start, span.end))
    return by_path


def _intersection(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if start < end:
            out.append((start, end))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def _tokens_in(intervals: Sequence[tuple[int, int]], starts: Sequence[int]) -> int:
    """Tokens (by their start offsets, sorted) that start inside the disjoint intervals."""
    return sum(bisect_left(starts, end) - bisect_left(starts, start) for start, end in intervals)


def token_metrics(ranked: Sequence[Ranked], unlocated_tokens: int, evidence: Sequence[EvidenceSpan], k: int,
                  token_starts: Callable[[str], Sequence[int]]) -> dict[str, float]:
    """Token recall, precision and IoU of the top k contexts against the evidence (NaN without evidence).

    ``unlocated_tokens``: tokens of the top-k contexts that could not be located (retrieved, not
    evidence); ``token_starts(path)``: the start offsets of the document's word tokens, sorted."""
    names = (f"token_recall@{k}", f"token_precision@{k}", f"token_iou@{k}")
    relevant_places = [e.places for e in evidence if e.grade > 0]
    if not relevant_places:
        return dict.fromkeys(names, NAN)
    located, targets = credited(_deduplicated(ranked, k, [e.places for e in evidence]), relevant_places)
    wanted, got = _merged(targets), _merged(located)
    count = lambda spans: sum(_tokens_in(intervals, token_starts(path)) for path, intervals in spans.items())  # noqa: E731
    relevant, retrieved = count(wanted), count(got) + unlocated_tokens
    shared = sum(_tokens_in(_intersection(intervals, got.get(path, [])), token_starts(path))
                 for path, intervals in wanted.items())
    union = relevant + retrieved - shared
    return dict(zip(names, (shared / relevant if relevant else NAN, shared / retrieved if retrieved else 0.0,
                            shared / union if union else NAN)))


def _shingles(text: str) -> frozenset[tuple[str, ...]]:
    tokens = tokenize(text)
    if len(tokens) < SHINGLE:
        return frozenset([tuple(tokens)]) if tokens else frozenset()
    return frozenset(tuple(tokens[i:i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1))


def redundancy(a: tuple[Span | None, str], b: tuple[Span | None, str]) -> float:
    """How much two contexts repeat each other, in [0, 1] (see the module docstring)."""
    (span_a, text_a), (span_b, text_b) = a, b
    if span_a is not None and span_b is not None and span_a.overlap(span_b):
        return span_a.overlap(span_b) / min(span_a.length, span_b.length)
    left, right = _shingles(text_a), _shingles(text_b)
    return len(left & right) / len(left | right) if left and right else 0.0


def diversity(contexts: Sequence[tuple[Span | None, str]], k: int) -> float:
    """1 - mean pairwise redundancy of the top k contexts; NaN with fewer than two."""
    pairs = list(combinations(contexts[:k], 2))
    return 1.0 - sum(redundancy(a, b) for a, b in pairs) / len(pairs) if pairs else NAN


def document_hit_rate_at_k(documents: Sequence[set[str]], relevant_documents: set[str], k: int) -> float:
    """1 if a document of any of the top k contexts (``documents``: per rank, the documents it comes
    from) holds evidence; NaN without evidence."""
    if not relevant_documents:
        return NAN
    return float(any(not docs.isdisjoint(relevant_documents) for docs in documents[:k]))
