"""What every judge prompt shares: the rubric against verbosity and style, and how the retrieved chunks are shown."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RUBRIC = ("Judge only what the text says against the evidence given. Length, style, confidence and politeness "
          "earn nothing. Do not use outside knowledge to excuse or to fault a statement.")


def chunks_text(inputs: Mapping[str, Any]) -> str:
    return "\n\n".join(f"[{c['chunk_id']}] (version {c.get('version') or 'unversioned'})\n{c['text']}"
                       for c in inputs["chunks"]) or "(no chunks were retrieved)"


def retrieved(inputs: Mapping[str, Any]) -> str:
    """The item context the judge calls about one answer share (sent before their own parts, to be cached)."""
    return f"Retrieved chunks, in rank order:\n\n{chunks_text(inputs)}"
