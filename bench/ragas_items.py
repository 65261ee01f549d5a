"""The items bench/cost.py judges, as a file bench/ragas_bill.py gives ragas, and the bill it measured on them.

Standard library only: bench/ragas_bill.py imports it from ragas's own venv, where the project is not
installed. Each line holds ragas's sample fields (``user_input``, ``response``, ``retrieved_contexts``:
the texts the judge reads, ``reference``) and the item's id and type. A measured bill is kept beside the
items file (``<name>.ragas.json``) with the SHA-256 of the file it was measured on, so bench/cost.py
uses it only for exactly those items.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def write_judged_items(world: Any, path: Path) -> str:
    """Write every item the judge scores (those with a RAG answer) to ``path``; the file's SHA-256."""
    lines = []
    for item in world.items:
        response = world.responses.get(item.item_id)
        if response is None or not response.ok:
            continue
        lines.append(json.dumps({"item_id": item.item_id, "question_type": item.question_type,
                                 "user_input": item.question, "response": response.answer or "",
                                 "retrieved_contexts": [r.text for r in response.retrieved],
                                 "reference": item.reference_answer}, ensure_ascii=False))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return file_sha256(path)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def bill_path(items: Path) -> Path:
    """Where bench/ragas_bill.py keeps its figures for ``items``."""
    return items.with_name(items.stem + ".ragas.json")


def measured_bill(items: Path) -> dict[str, Any] | None:
    """ragas's measured figures for ``items`` as it is now, or None (not measured, or measured on other items)."""
    saved = bill_path(items)
    if not saved.exists():
        return None
    bill = json.loads(saved.read_text(encoding="utf-8"))
    return bill if bill.get("items_sha256") == file_sha256(items) else None
