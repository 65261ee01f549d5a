"""Map texts onto the pinned snapshot's chunks by token containment (``map_texts_to_chunks``: which
chunks did this text become?), for the golden-set importers and the re-queue of stale items. Retrieved
contexts are not mapped onto chunks any more: they are located as spans (``rag_assets.evidence.locate``).

Domain code: no Dagster, no SQL.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from itertools import chain

from rag_assets.corpus.models import ChunkRef, SnapshotChunk
from rag_assets.text.tokens import tokenize


def _needed(size: int, min_overlap: float) -> int:
    """Fewest shared tokens that reach ``min_overlap`` of ``size`` tokens."""
    return max(1, math.ceil(min_overlap * size - 1e-9))


# Chunks (evenly spread) that estimate how common a token is among all chunks. Estimates only
# steer which tokens are looked up, never what matches.
_FREQUENCY_SAMPLE = 2000
# How far prefixes reach beyond the minimum, as a share of the tokens a match needs: a longer
# prefix costs longer postings but lets the count bound drop most candidates before they are
# checked. On 1,000 texts x 69,000 chunks, 0.05 to 0.25 did about equally well; 0 and 0.4 were
# clearly slower.
_PREFIX_REACH = 0.15


class _Texts:
    """The texts of one mapping call, indexed so that one pass over the chunks finds every
    (text, chunk) pair that passes the containment test.

    Prefix filtering with a count bound: for any set P of one side's tokens, the shared count
    is at most what P's tokens can share plus the occurrences outside P. A pair is checked only
    if its score on P reaches ``need - outside(P)``; P holds the side's rarest tokens, so the
    postings looked up are short. Two routes, by which side is smaller:

    * the text is smaller (a chunk may hold it): P is the text's rarest tokens among the chunks
      (estimated on a sample); each chunk looks its tokens up in postings of text prefixes;
    * the chunk is smaller (it may be a piece of a text): P is the chunk's rarest tokens among
      the texts (whole tiers of rarity, which needs no sort), tokens no text has first: they
      share nothing, so a chunk with many of them is dropped at once. P's tokens are looked up
      in postings of all text tokens.

    Any order of tokens keeps the bound exact; rarity only keeps the candidates few. Candidates
    are then checked rarest tokens first, which stops a non-match after a few tokens.
    """

    def __init__(self, counts: Sequence[Counter], chunks: Sequence[SnapshotChunk], min_overlap: float) -> None:
        self.counts = counts
        self.sizes = [sum(c.values()) for c in counts]
        self.min_overlap = min_overlap
        self.postings: defaultdict[str, list[int]] = defaultdict(list)
        for text_index, text_counts in enumerate(counts):
            for token in text_counts:
                self.postings[token].append(text_index)
        # Tokens by how many texts have them (1, 2-3, 4-9, ...): chunk prefixes take whole tiers.
        tiers: defaultdict[int, set[str]] = defaultdict(set)
        for token, found in self.postings.items():
            tiers[int(math.log(len(found), 3))].add(token)
        self.tiers = [tiers[level] for level in sorted(tiers)]

        step = max(1, len(chunks) // _FREQUENCY_SAMPLE)
        sampled: Counter = Counter()
        for chunk in chunks[::step]:
            sampled.update(self.postings.keys() & set(tokenize(chunk.text)))
        self.prefix_postings: defaultdict[str, list[int]] = defaultdict(list)
        self.prefix_need: list[int] = []
        self.ordered: list[list[tuple[str, int]]] = []  # each text's tokens, rarest among chunks first
        for text_index, (text_counts, size) in enumerate(zip(counts, self.sizes)):
            need = _needed(size, min_overlap)
            ordered = sorted(text_counts.items(), key=lambda item: (sampled.get(item[0], 0), item[0]))
            self.ordered.append(ordered)
            reach = need - math.ceil(_PREFIX_REACH * need)  # stop once fewer than this are outside
            outside = size
            for token, count in ordered:
                if outside < reach or outside == 0:
                    break
                # A score adds the text's count: it bounds what the token can share.
                self.prefix_postings[token].extend([text_index] * count)
                outside -= count
            self.prefix_need.append(need - outside)
        self.prefix_vocabulary = set(self.prefix_postings)

    def _text_inside(self, counts: Counter, size: int) -> list[tuple[int, int]]:
        """Texts no bigger than the chunk that it holds, with the shared counts."""
        hits = self.prefix_vocabulary.intersection(counts)
        if not hits:
            return []
        # Texts are numbered by size: those no bigger than the chunk come before ``bound``.
        bound = bisect_right(self.sizes, size)
        if not bound:
            return []
        score = Counter(chain.from_iterable(map(self.prefix_postings.__getitem__, hits)))
        prefix_need, sizes, get = self.prefix_need, self.sizes, counts.get
        out: list[tuple[int, int]] = []
        for text_index, value in score.items():
            if value < prefix_need[text_index] or text_index >= bound:
                continue
            allowed = sizes[text_index] - _needed(sizes[text_index], self.min_overlap)
            missing = 0
            for token, count in self.ordered[text_index]:
                have = get(token, 0)
                if have < count:
                    missing += count - have
                    if missing > allowed:
                        break
            else:
                out.append((text_index, sizes[text_index] - missing))
        return out

    def _chunk_inside(self, counts: Counter, size: int) -> list[tuple[int, int]]:
        """Texts bigger than the chunk that hold it, with the shared counts."""
        bound = bisect_right(self.sizes, size)  # texts from here on are bigger than the chunk
        if bound == len(self.sizes):
            return []
        need = _needed(size, self.min_overlap)
        postings = self.postings
        known_tokens = counts.keys() & postings.keys()
        known = sum(map(counts.__getitem__, known_tokens))  # occurrences of tokens some text has
        if known < need:
            return []
        # Take the rarest tokens, tier by tier, while at least ``reach`` occurrences (and one)
        # remain outside; a whole tier is taken at once (a longer prefix only tightens the bound).
        reach = max(1, need - math.ceil(_PREFIX_REACH * need))
        outside = known
        taken: list[str] = []
        for tier in self.tiers:
            if outside < reach:
                break
            found = tier.intersection(known_tokens)
            if found:
                taken.extend(found)
                outside -= sum(map(counts.__getitem__, found))
        # A token adds the chunk's count of it to each text that has it: a bound on what it shares.
        # Texts are numbered by size: only those from ``bound`` on are bigger than the chunk.
        score = Counter(chain.from_iterable(
            posting[bisect_left(posting, bound):] * counts[token]
            for token, posting in zip(taken, map(postings.__getitem__, taken))))
        threshold = need - outside
        allowed = size - need
        out: list[tuple[int, int]] = []
        ordered: list[str] | None = None
        for text_index, value in score.items():
            if value < threshold:
                continue
            if ordered is None:  # rarest first: a text that lacks the chunk stops early
                ordered = taken + list(known_tokens.difference(taken))
            get = self.counts[text_index].get
            missing = size - known  # tokens no text has
            for token in ordered:
                count, have = counts[token], get(token, 0)
                if have < count:
                    missing += count - have
                    if missing > allowed:
                        break
            else:
                out.append((text_index, size - missing))
        return out

    def match(self, counts: Counter, size: int) -> list[tuple[int, int]]:
        """(text, shared tokens) for every text that passes with a chunk of these token counts."""
        return self._text_inside(counts, size) + self._chunk_inside(counts, size)


def _select(text_counts: Counter, size: int, matches: list[tuple[int, int]], chunks: Sequence[SnapshotChunk],
            chunk_counts: Mapping[int, Counter], min_overlap: float) -> list[int]:
    """The chunks a text maps onto, from its (chunk, shared tokens) matches; see ``map_texts_to_chunks``."""
    need = _needed(size, min_overlap)
    pieces: defaultdict[str, list[int]] = defaultdict(list)
    holders: list[int] = []
    for index, shared in matches:
        if shared >= _needed(sum(chunk_counts[index].values()), min_overlap):
            pieces[chunks[index].path].append(index)
        elif shared >= need:
            holders.append(index)
    held: dict[str, Counter] = {}  # what each document's pieces hold of the text
    for path, found in pieces.items():
        together: Counter = Counter()
        for index in found:
            together.update(chunk_counts[index])
        held[path] = together & text_counts
    coverage = {path: sum(counts.values()) for path, counts in held.items()}
    whole = [path for path in pieces if coverage[path] >= need]
    if not whole and sum(coverage.values()) >= need:
        # The text spans documents: add them, best first, while they hold something new.
        covered: Counter = Counter()
        for path in sorted(held, key=lambda p: (-coverage[p], p)):
            grown = covered | held[path]
            if sum(grown.values()) > sum(covered.values()):
                covered = grown
                whole.append(path)
                if sum(covered.values()) >= need:
                    break
        else:
            whole = []
    chosen = [index for path in whole for index in pieces[path]] or holders
    chosen.sort(key=lambda index: (chunks[index].path, index))
    return chosen


def map_texts_to_chunks(
    texts: Sequence[str], chunks: Sequence[SnapshotChunk], *, min_overlap: float = 0.8
) -> list[tuple[ChunkRef, ...]]:
    """The snapshot chunks each external text became: one tuple of refs per text, empty if none.

    Tokens are ``rag_assets.text.tokens.tokenize`` tokens, counted as multisets. A chunk C is a
    *piece* of a text T when at least ``min_overlap`` of C's tokens are in T; C *holds* T when at
    least ``min_overlap`` of T's tokens are in C. T maps onto

    * its pieces in every document whose pieces of T together hold ``min_overlap`` of T (T was
      kept whole, or the snapshot chunker split it into several chunks);
    * else, when T spans documents, the pieces of the fewest documents that together hold
      ``min_overlap`` of T (documents taken by how much of T they hold, each adding something);
    * else the chunks that hold T (T is a small part of a bigger snapshot chunk).

    The document rule keeps out chunks that merely repeat a few lines of T elsewhere (a shared
    footer, a code sample, a heading-only chunk), which plain containment takes for pieces.
    Candidates come from inverted indexes over rare tokens (see ``_Texts``): one tokenizing pass
    over the chunks plus the candidates, never texts x chunks. Refs are in snapshot order (path,
    then position in ``chunks``).
    """
    counted, sizes, matches, chunk_counts = _match(texts, chunks, min_overlap)
    refs = {
        text: tuple(chunks[i].ref for i in _select(counts, size, found, chunks, chunk_counts, min_overlap))
        for (text, counts), size, found in zip(counted, sizes, matches)
    }
    return [refs.get(text, ()) for text in texts]


def _match(texts: Sequence[str], chunks: Sequence[SnapshotChunk], min_overlap: float):
    """The containment matches of distinct non-empty texts: (texts with token counts, sizes,
    (chunk, shared) per text, token counts of matched chunks)."""
    if not 0 < min_overlap <= 1:
        raise ValueError(f"min_overlap must be in (0, 1], got {min_overlap}")
    counted = [(text, Counter(tokenize(text))) for text in dict.fromkeys(texts)]
    # Numbered by size: the index finds the texts bigger or smaller than a chunk by bisection.
    counted = sorted(((text, counts) for text, counts in counted if counts), key=lambda item: sum(item[1].values()))
    index = _Texts([counts for _, counts in counted], chunks, min_overlap)
    matches: list[list[tuple[int, int]]] = [[] for _ in counted]
    chunk_counts: dict[int, Counter] = {}
    if not counted:
        return counted, index.sizes, matches, chunk_counts
    # Chunks with the same text match the same texts (counts are kept only for matches).
    seen: dict[str, tuple[list[tuple[int, int]], Counter | None]] = {}
    for chunk_index, chunk in enumerate(chunks):
        known = seen.get(chunk.text)
        if known is None:
            counts = Counter(tokenize(chunk.text))
            found = index.match(counts, sum(counts.values())) if counts else []
            known = seen[chunk.text] = (found, counts if found else None)
        found, counts = known
        if found and counts is not None:
            chunk_counts[chunk_index] = counts
            for text_index, shared in found:
                matches[text_index].append((chunk_index, shared))
    return counted, index.sizes, matches, chunk_counts
