"""Heading-aware chunking with character offsets.

A document body is cut into sections at Markdown headings (outside code fences), sections into
paragraphs, over-long paragraphs at line, sentence and word boundaries. Paragraphs are packed
greedily up to ``target_chars``. A chunk never spans a heading unless the section before it is
shorter than ``min_chars`` (tiny sections are merged rather than left as useless chunks), and
consecutive chunks of one section overlap by about ``overlap_chars``. Every chunk is an exact
slice ``body[start:end]``, so offsets always point at the text a citation quotes.
"""

from __future__ import annotations

import re
from hashlib import sha256
from itertools import chain

from rag_assets.corpus.models import Chunk, ChunkerConfig

# A heading line (groups 1 and 2: hashes and title) or a code fence line (group 3: its marker).
_STRUCTURE = r"(?:(#{1,6})[ \t]+([^\n]+?)[ \t#]*|[ \t]{0,3}(```|~~~)[^\n]*)$"
# The first line is matched on its own and every later one with the newline before it, rather than
# searching with ``^`` under MULTILINE: a pattern that starts with a literal newline is found by a
# fast scan for that character, while ``^`` has the regex engine try every position of the text
# (on cpp_docs, a third of the chunker's time).
_FIRST_LINE = re.compile(_STRUCTURE, re.MULTILINE)
_LATER_LINE = re.compile("\n" + _STRUCTURE, re.MULTILINE)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_SPLITTERS = (re.compile(r"\n"), re.compile(r"(?<=[.!?])\s+"), re.compile(r"\s+"))


# A section is (start, end, heading): tuples, not objects, since a large corpus has 100,000 of them.
_Section = tuple[int, int, str]


def _sections(body: str) -> list[_Section]:
    sections: list[_Section] = []
    # The open headings, innermost last, each with the joined heading it gives ("A > B"); levels
    # strictly increase, so closing the headings at or below a new one's level pops from the end.
    stack: list[tuple[int, str]] = []
    open_fence: str | None = None
    start, heading = 0, ""
    first = _FIRST_LINE.match(body)
    later = _LATER_LINE.finditer(body, first.end() if first else 0)
    for match in chain((first,), later) if first else later:
        if match.lastindex == 3:  # a fence line: group 3 is the last that took part
            fence = match.group(3)
            open_fence = None if open_fence == fence else (open_fence or fence)
            continue
        if open_fence:
            continue
        at = match.start(1)  # a heading's hashes start its line
        if at > start:
            sections.append((start, at, heading))
        level, title = len(match.group(1)), match.group(2).strip()
        while stack and stack[-1][0] >= level:
            stack.pop()
        heading = f"{stack[-1][1]} > {title}" if stack else title
        stack.append((level, heading))
        start = at
    if len(body) > start:
        sections.append((start, len(body), heading))
    return sections


def _split_long(body: str, start: int, end: int, limit: int, level: int = 0) -> list[tuple[int, int]]:
    """Cut a span longer than ``limit`` at the coarsest boundary that works."""
    if end - start <= limit:
        return [(start, end)]
    if level == len(_SPLITTERS):
        return [(pos, min(pos + limit, end)) for pos in range(start, end, limit)]
    pieces: list[tuple[int, int]] = []
    cursor = start
    for match in _SPLITTERS[level].finditer(body, start, end):
        if match.start() - cursor > 0:
            pieces.append((cursor, match.start()))
        cursor = match.end()
    if cursor < end:
        pieces.append((cursor, end))
    if len(pieces) <= 1:
        return _split_long(body, start, end, limit, level + 1)
    out: list[tuple[int, int]] = []
    for piece in pieces:
        out.extend(_split_long(body, piece[0], piece[1], limit, level + 1))
    return out


def _paragraphs(body: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """The section's paragraphs, stripped of surrounding whitespace and cut to at most ``limit``.

    Stripped inline rather than by a helper per paragraph: a large corpus has half a million.
    """
    out: list[tuple[int, int]] = []
    cursor = start
    breaks = [match.span() for match in _PARAGRAPH_BREAK.finditer(body, start, end)]
    breaks.append((end, end))
    for right, after in breaks:
        left, cursor = cursor, after
        while left < right and body[left].isspace():
            left += 1
        while right > left and body[right - 1].isspace():
            right -= 1
        if right - left > limit:
            out.extend(_split_long(body, left, right, limit))
        elif right > left:
            out.append((left, right))
    return out


def _overlap_start(body: str, previous_end: int, floor: int, overlap: int) -> int:
    """Start of the overlap: ``overlap`` chars back, moved forward to the start of a word."""
    pos = max(floor, previous_end - overlap)
    if pos > floor:
        while pos < previous_end and not body[pos - 1].isspace():
            pos += 1
    while pos < previous_end and body[pos].isspace():
        pos += 1
    return pos


def _spans(body: str, config: ChunkerConfig) -> list[tuple[int, int, str]]:
    """(start, end, heading) of every chunk, packing each section's paragraphs greedily."""
    target, minimum, overlap = config.target_chars, config.min_chars, config.overlap_chars
    chunks: list[tuple[int, int, str]] = []
    # The chunk being packed: its start and end (end < 0 while there is none) and heading.
    begin, stop, heading = 0, -1, ""
    for section_start, section_end, section_heading in _sections(body):
        first = True
        for start, end in _paragraphs(body, section_start, section_end, target):
            if stop < 0:
                begin, stop, heading = start, end, section_heading
            elif first and stop - begin >= minimum:
                chunks.append((begin, stop, heading))
                begin, stop, heading = start, end, section_heading
            elif end - begin <= target:
                stop = end
            else:
                chunks.append((begin, stop, heading))
                floor = start if first else section_start
                carried = _overlap_start(body, stop, floor, overlap)
                if carried >= start or end - carried > target:
                    carried = start
                begin, stop, heading = carried, end, section_heading
            first = False
    if stop >= 0:
        chunks.append((begin, stop, heading))
    return chunks


# A chunk as plain values, without its path or text: (chunk_id, ordinal, start, end, heading,
# content_hash). A worker process sends chunks back in this form with the body once: a tuple
# pickles several times faster than an object, the path is said once per file rather than once
# per chunk, and the text (a slice of the body) does not cross the process boundary twice.
ChunkRow = tuple[str, int, int, int, str, str]


def chunk_rows(path: str, body: str, config: ChunkerConfig) -> list[ChunkRow]:
    """Cut ``body`` into chunks whose ids depend only on path, chunk text and chunker config.

    ``hashlib`` is called directly (``models.sha256_hex`` gives the same digests): two hashes per
    chunk, 140,000 on a large corpus.
    """
    seen: dict[str, int] = {}
    rows: list[ChunkRow] = []
    id_tail = f"\0{config.fingerprint}"
    for ordinal, (start, end, heading) in enumerate(_spans(body, config)):
        text = body[start:end]
        content_hash = sha256(text.encode()).hexdigest()
        occurrence = seen.get(content_hash, 0)
        seen[content_hash] = occurrence + 1
        suffix = f"\0{occurrence}" if occurrence else ""
        chunk_id = sha256(f"{path}\0{content_hash}{id_tail}{suffix}".encode()).hexdigest()[:16]
        rows.append((chunk_id, ordinal, start, end, heading, content_hash))
    return rows


def chunks_from_rows(path: str, body: str, rows: list[ChunkRow]) -> tuple[Chunk, ...]:
    return tuple(Chunk(chunk_id, path, ordinal, start, end, body[start:end], heading, content_hash)
                 for chunk_id, ordinal, start, end, heading, content_hash in rows)


def chunk_document(path: str, body: str, config: ChunkerConfig) -> list[Chunk]:
    """The chunks of ``body`` (see ``chunk_rows``)."""
    return list(chunks_from_rows(path, body, chunk_rows(path, body, config)))
