"""A framework's retrieved document as an entry of the open retrieval contract: the system's own id,
its text, where it came from and its score; never one of our snapshot's chunk ids."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rag_assets.rag.adapters import FINITE_LIMIT

SOURCE_KEYS = ("source", "file_path", "file_name")
SCORE_KEYS = ("score", "relevance_score")


def relative_source(source: str, root: Path | None) -> str:
    """A file path relative to the corpus root when it lies under it; a URL or other path as given."""
    if root is None or "://" in source or not Path(source).is_absolute():
        return source
    try:
        return Path(source).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return source


def context_entry(own_id: Any, text: str, metadata: Mapping[str, Any], root: Path | None,
                  score: Any = None) -> dict[str, Any]:
    """``{"id", "text", "source", "score"}``, each key only when the framework knows it.

    The score is the one given, else the first numeric ``score``/``relevance_score`` in the metadata
    (finite: NaN fails the comparison).
    """
    entry: dict[str, Any] = {"text": text}
    if own_id not in (None, ""):
        entry["id"] = str(own_id)
    source = next((metadata[key] for key in SOURCE_KEYS if isinstance(metadata.get(key), str) and metadata[key]), None)
    if source is not None:
        entry["source"] = relative_source(source, root)
    candidates = [score, *(metadata.get(key) for key in SCORE_KEYS)]
    found = next((c for c in candidates if isinstance(c, (int, float)) and not isinstance(c, bool)
                  and abs(c) < FINITE_LIMIT), None)
    if found is not None:
        entry["score"] = float(found)
    return entry
