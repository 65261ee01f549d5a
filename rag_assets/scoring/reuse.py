"""Fingerprints of what scoring reads, so that judging work whose inputs did not change is not done again.

An item's digest covers what scoring it reads: the golden item as pinned (question, reference and
its statements, relevant chunks, type, revision) and the RAG system's response (answer, contexts,
citations, error), not its latency, tokens, cost or extras, which no score reads. A judge shard's
fingerprint is its items' digests under the judge that scores them (provider, model, templates,
embedder, k, the package's code and the corpus version): two shards with one fingerprint get one
outcome, so a stored outcome stands for judging the shard again.
"""

from __future__ import annotations

import json
from dataclasses import asdict, is_dataclass
from typing import Any

from rag_assets.corpus.models import sha256_hex
from rag_assets.golden.models import GoldenItem
from rag_assets.rag.models import RagResponse

NOT_SCORED = frozenset({"latency_ms", "input_tokens", "output_tokens", "cost_usd", "extra"})


def fingerprint(*parts: Any) -> str:
    """A hash of JSON-able parts (a dataclass by its fields); equal parts, equal hash."""
    return sha256_hex(json.dumps(parts, sort_keys=True, ensure_ascii=False, default=_fields))


def _fields(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    raise TypeError(f"cannot fingerprint a {type(value).__name__}")


def item_digest(item: GoldenItem, response: RagResponse | None) -> str:
    """What scoring ``item`` on ``response`` reads (None: the system gave no response for it)."""
    scored = None if response is None else {k: v for k, v in asdict(response).items() if k not in NOT_SCORED}
    return fingerprint(item, scored)
