"""What a RAG team's own system does before any framework sees the text, knowing nothing of
rag_assets: its own chunking (paragraphs packed to ~600 characters, ids ``path#n``) and a
deterministic bag-of-words embedding (hashed words, so similar wording means similar vectors)."""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Iterator
from pathlib import Path

DIMENSIONS = 1024
_STOP = frozenset("a an and are as at be by do does for from how in is it of on or the to what when which with".split())


def word_vector(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if word not in _STOP:
            vector[zlib.crc32(word.encode()) % DIMENSIONS] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def chunks(root: Path, target_chars: int = 600) -> Iterator[tuple[str, str, Path]]:
    """(own id, text, file) for every markdown file under ``root``: whole paragraphs, packed."""
    for path in sorted(root.rglob("*.md")):
        packed: list[str] = []
        number = 0
        for paragraph in path.read_text(encoding="utf-8").split("\n\n"):
            packed.append(paragraph)
            if sum(len(p) for p in packed) >= target_chars:
                yield f"{path.relative_to(root).as_posix()}#{number}", "\n\n".join(packed), path
                packed, number = [], number + 1
        if packed:
            yield f"{path.relative_to(root).as_posix()}#{number}", "\n\n".join(packed), path
