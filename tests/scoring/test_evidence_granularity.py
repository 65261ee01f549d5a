"""Retrieval figures at the granularity of the labels, whatever the team's chunking.

Public data with its own labelled chunks (tests/fixtures/anthropic_docs_sample: 33 documentation
pages, each the concatenation of its labelled chunks, and 52 questions naming their chunks), a team's
own BM25 over fixed windows of 300, 800 and 2,000 characters of those pages, evaluated through
``rag_assets.evaluate``. The same figures are computed here independently, from where the test put
each label and each window, by the definitions alone: a label is found at the first rank by which the windows
so far cover at least half of its characters, and a window hits a found label when they overlap in the same page
by at least half of the shorter of the two or the label is found at its rank.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

import rag_assets
from rag_assets.llm.offline import OfflineClient
from tests.rag.own_chunking_system import Bm25

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "anthropic_docs_sample" / "sample.json"
K = 5
SEPARATOR = "\n\n"


def _corpus(folder: Path) -> tuple[dict[str, str], dict[str, tuple[str, int, int]]]:
    """Write one text file per page; (page file -> text, chunk link -> (file, start, end))."""
    sample = json.loads(SAMPLE.read_text(encoding="utf-8"))
    folder.mkdir()
    texts, labels = {}, {}
    for page in sample["pages"]:
        name = re.sub(r"[^a-z0-9]+", "-", page["page"].split("://", 1)[1].lower()).strip("-") + ".txt"
        cursor, parts = 0, []
        for chunk in page["chunks"]:
            labels[chunk["chunk_link"]] = (name, cursor, cursor + len(chunk["text"]))
            parts.append(chunk["text"])
            cursor += len(chunk["text"]) + len(SEPARATOR)
        texts[name] = SEPARATOR.join(parts)
        (folder / name).write_text(texts[name], encoding="utf-8")
    return texts, labels


def _windows(texts: dict[str, str], size: int) -> list[tuple[str, str, str]]:
    """The team's chunking: fixed windows, no overlap, ids of its own."""
    return [(f"{name}@{start}", name, text[start:start + size])
            for name, text in sorted(texts.items()) for start in range(0, len(text), size)]


def _overlap(a: tuple[str, int, int], b: tuple[str, int, int]) -> bool:
    if a[0] != b[0]:
        return False
    shared = min(a[2], b[2]) - max(a[1], b[1])
    return shared > 0 and shared >= 0.5 * min(a[2] - a[1], b[2] - b[1])


def _covered(windows: list[tuple[str, int, int]], label: tuple[str, int, int]) -> int:
    """Characters of ``label`` that the windows cover together, counted one by one."""
    return sum(1 for at in range(label[1], label[2])
               if any(w[0] == label[0] and w[1] <= at < w[2] for w in windows))


def _by_definition(ranked: list[tuple[str, int, int]], labelled: list[tuple[str, int, int]]) -> dict[str, float]:
    top = ranked[:K]
    found = {n: next(rank for rank in range(1, len(top) + 1) if _covered(top[:rank], label) >= 0.5 * (label[2] - label[1]))
             for n, label in enumerate(labelled) if _covered(top, label) >= 0.5 * (label[2] - label[1])}
    hits = [{n for n, at in found.items() if at == rank or _overlap(window, labelled[n])}
            for rank, window in enumerate(top, start=1)]
    first = min(found.values(), default=None)
    return {"hit_rate@5": float(first is not None), "recall@5": len(found) / len(labelled),
            "precision@5": sum(1 for hit in hits if hit) / K, "mrr@5": 1 / first if first else 0.0}


@pytest.mark.parametrize("size", [300, 800, 2000])
def test_figures_at_every_window_size_are_the_labels_figures(tmp_path: Path, size: int):
    texts, labels = _corpus(tmp_path / "corpus")
    questions = json.loads(SAMPLE.read_text(encoding="utf-8"))["questions"]
    index = Bm25(_windows(texts, size))
    text_of = {link: texts[path][start:end] for link, (path, start, end) in labels.items()}

    def system(request: dict) -> dict:
        hits = index.search(request["question"], request["k"])
        return {"answer": hits[0][1][2][:200] if hits else "",
                "retrieved": [{"id": unit, "text": text, "source": source} for _, (unit, source, text) in hits]}

    frame = pd.DataFrame({"item_id": [q["id"] for q in questions], "user_input": [q["question"] for q in questions],
                          "reference": [q["correct_answer"] for q in questions],
                          "reference_contexts": [[text_of[link] for link in q["correct_chunks"]] for q in questions]})
    result = rag_assets.evaluate(frame, system, OfflineClient(), k=K, corpus=tmp_path / "corpus")

    expected = {}
    for q in questions:
        ranked = [(source, int(unit.rsplit("@", 1)[1]), int(unit.rsplit("@", 1)[1]) + len(text))
                  for _, (unit, source, text) in index.search(q["question"], K)]
        expected[q["id"]] = _by_definition(ranked, [labels[link] for link in q["correct_chunks"]])
    got = {i.item_id: i.values for i in result.outcome.items}
    assert {got[q][f"hit_rate@5"] for q in got} <= {0.0, 1.0}, "a hit or a miss, never a share of one"
    means = {}
    for metric in ("recall@5", "hit_rate@5", "precision@5", "mrr@5"):
        ours = sum(got[q][metric] for q in expected) / len(expected)
        theirs = sum(e[metric] for e in expected.values()) / len(expected)
        means[metric] = (round(ours, 3), round(theirs, 3))
        assert abs(ours - theirs) <= 0.02, (size, metric, ours, theirs)
    tokens = {m: round(sum(got[q][m] for q in expected) / len(expected), 3)
              for m in ("token_recall@5", "token_precision@5", "token_iou@5", "diversity@5")}
    print(f"\nwindows of {size}: (evaluate, by definition) {means}; {tokens}")
