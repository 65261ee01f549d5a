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
from dataclasses import dataclass

from rag_assets.corpus.models import Chunk, ChunkerConfig, sha256_hex

_STRUCTURE = re.compile(
    r"^(?:(?P<hashes>#{1,6})[ \t]+(?P<title>[^\n]+?)[ \t#]*|[ \t]{0,3}(?P<fence>```|~~~)[^\n]*)$",
    re.MULTILINE,
)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_SPLITTERS = (re.compile(r"\n"), re.compile(r"(?<=[.!?])\s+"), re.compile(r"\s+"))


@dataclass(frozen=True)
class _Section:
    start: int
    end: int
    heading: str


def _sections(body: str) -> list[_Section]:
    sections: list[_Section] = []
    stack: list[tuple[int, str]] = []
    open_fence: str | None = None
    start, heading = 0, ""
    for match in _STRUCTURE.finditer(body):
        fence = match.group("fence")
        if fence:
            open_fence = None if open_fence == fence else (open_fence or fence)
            continue
        if open_fence:
            continue
        if match.start() > start:
            sections.append(_Section(start, match.start(), heading))
        level = len(match.group("hashes"))
        stack = [item for item in stack if item[0] < level] + [(level, match.group("title").strip())]
        heading = " > ".join(title for _, title in stack)
        start = match.start()
    if len(body) > start:
        sections.append(_Section(start, len(body), heading))
    return sections


def _strip_span(body: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and body[start].isspace():
        start += 1
    while end > start and body[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


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


def _paragraphs(body: str, section: _Section, limit: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    cursor = section.start
    for match in _PARAGRAPH_BREAK.finditer(body, section.start, section.end):
        spans.append((cursor, match.start()))
        cursor = match.end()
    spans.append((cursor, section.end))
    out: list[tuple[int, int]] = []
    for span in spans:
        stripped = _strip_span(body, *span)
        if stripped:
            out.extend(_split_long(body, *stripped, limit))
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
    chunks: list[tuple[int, int, str]] = []
    current: list = []  # [start, end, heading, section_start]
    for section in _sections(body):
        for index, (start, end) in enumerate(_paragraphs(body, section, config.target_chars)):
            if not current:
                current = [start, end, section.heading, section.start]
            elif index == 0 and current[1] - current[0] >= config.min_chars:
                chunks.append((current[0], current[1], current[2]))
                current = [start, end, section.heading, section.start]
            elif end - current[0] <= config.target_chars:
                current[1] = end
            else:
                chunks.append((current[0], current[1], current[2]))
                floor = section.start if index else start
                begin = _overlap_start(body, current[1], floor, config.overlap_chars)
                if begin >= start or end - begin > config.target_chars:
                    begin = start
                current = [begin, end, section.heading, section.start]
    if current:
        chunks.append((current[0], current[1], current[2]))
    return chunks


def chunk_document(path: str, body: str, config: ChunkerConfig) -> list[Chunk]:
    """Cut ``body`` into chunks whose ids depend only on path, chunk text and chunker config."""
    seen: dict[str, int] = {}
    chunks: list[Chunk] = []
    fingerprint = config.fingerprint
    for ordinal, (start, end, heading) in enumerate(_spans(body, config)):
        text = body[start:end]
        content_hash = sha256_hex(text)
        occurrence = seen.get(content_hash, 0)
        seen[content_hash] = occurrence + 1
        suffix = f"\0{occurrence}" if occurrence else ""
        chunk_id = sha256_hex(f"{path}\0{content_hash}\0{fingerprint}{suffix}")[:16]
        chunks.append(Chunk(chunk_id, path, ordinal, start, end, text, heading, content_hash))
    return chunks
