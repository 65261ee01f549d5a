"""Test RAG systems a user might plug in as callables: one good, and one per way of breaking."""

from __future__ import annotations

import time

KNOWN_CHUNK = {"id": ""}  # set by a test to a chunk id of the snapshot it uses


def good(request: dict) -> dict:
    return {"answer": f"Echo: {request['question']} [{KNOWN_CHUNK['id']}]",
            "retrieved": [{"chunk_id": KNOWN_CHUNK["id"], "score": 2.5}],
            "citations": [{"claim": "Echo", "chunk_id": KNOWN_CHUNK["id"]}],
            "usage": {"input_tokens": 10, "output_tokens": 3}}


def by_question(request: dict) -> dict:
    """Breaks in the way the question asks for."""
    question = request["question"]
    if "raise" in question:
        raise ValueError("index not loaded")
    if "slow" in question:
        time.sleep(3)
    if "badtype" in question:
        return {"answer": 42, "retrieved": []}
    if "notadict" in question:
        return ["not", "a", "dict"]
    if "unknown" in question:
        return {"answer": "x", "retrieved": [{"chunk_id": "ffffffffffffffff", "score": 1.0}]}
    return good(request)


not_callable = 3


def unknown_ids(request: dict) -> dict:
    """Returns snapshot-looking chunk ids the snapshot never had, for every question."""
    return {"answer": "x", "retrieved": [{"chunk_id": f"0000{n:012d}", "score": 1.0} for n in range(request["k"])]}


def revoked(request: dict) -> dict:
    """A system whose LLM key was revoked: every question fails with the provider's 401."""
    raise PermissionError("401 authentication_error: invalid x-api-key")
