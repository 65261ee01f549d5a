"""Rebuild tests/fixtures/anthropic_docs_sample/ from the Anthropic cookbook's RAG evaluation set.

    python scripts/make_anthropic_docs_sample.py [--data ../shared/data/anthropic_docs_rag]

The cookbook's corpus is 232 labelled chunks of 45 documentation pages. The sample keeps whole pages
(their chunks in order, so a page is a document with its own chunking: the labels), the smallest
first while they fit in 250,000 characters, and the questions whose labelled chunks all lie in those
pages. Deterministic: the same input gives the same files. MIT licence (see LICENSE there).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "anthropic_docs_sample"
BUDGET = 250_000


def page_of(link: str) -> str:
    return link.split("#")[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "anthropic_docs_rag")
    data = parser.parse_args().data
    chunks = json.loads((data / "anthropic_docs.json").read_text(encoding="utf-8"))
    questions = json.loads((data / "docs_evaluation_dataset.json").read_text(encoding="utf-8"))
    pages: dict[str, list[dict]] = defaultdict(list)
    for chunk in chunks:
        pages[page_of(chunk["chunk_link"])].append(chunk)
    size = {page: sum(len(c["text"]) for c in found) for page, found in pages.items()}
    chosen: list[str] = []
    total = 0
    for page in sorted(pages, key=lambda p: (size[p], p)):
        if total + size[page] <= BUDGET:
            chosen.append(page)
            total += size[page]
    kept = set(chosen)
    sample = {
        "pages": [{"page": page, "chunks": pages[page]} for page in sorted(chosen)],
        "questions": [q for q in questions if {page_of(link) for link in q["correct_chunks"]} <= kept],
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "sample.json").write_text(json.dumps(sample, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (OUT / "LICENSE").write_bytes((data / "LICENSE").read_bytes())
    print(f"{len(chosen)} pages ({total:,} characters), {len(sample['questions'])} questions -> {OUT}")


if __name__ == "__main__":
    main()
