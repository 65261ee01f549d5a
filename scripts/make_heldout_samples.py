"""Write the offline judge's held-out samples (tests/scoring/heldout/) from public human-labelled data.

Two sources, each read as fetched (see tests/scoring/heldout/PROVENANCE.txt for repository, commit, file
and licence):

* QAGS (Wang et al., 2020; ``data/mturk_cnndm.jsonl`` and ``data/mturk_xsum.jsonl``): model summaries of
  news articles, each summary sentence judged by three crowd workers "is it supported by the article?".
  A sentence is consistent when most of its three votes say yes; a summary is hallucinated when any of
  its sentences is not. ``qags_cnndm.jsonl`` and ``qags_xsum.jsonl``: every summary with its article and
  label (detection). ``qags_cnndm_pairs.jsonl``: within one summary, its first consistent and first
  inconsistent sentence (pairwise faithfulness; XSum summaries have one sentence, so no pairs).
* SQuAD 2.0 dev, article "Normans" (crowd workers wrote each question on one paragraph):
  ``squad_context_pairs.jsonl``: per answerable question, the paragraph it was written on against the
  other paragraph of the article that shares most content words with the question (the distractor a
  lexical retriever would rank first; ties to the earlier paragraph), with the first gold answer.

Run from the repository root (no randomness: rows keep their source order)::

    python scripts/make_heldout_samples.py --qags <qags checkout>/data --squad dev-v2.0.json \\
        --out tests/scoring/heldout
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rag_assets.text.tokens import content_words

SUMMARY_QUESTION = "Summarise the article."


def _consistent(sentence: dict[str, Any]) -> bool:
    votes = [r["response"] == "yes" for r in sentence["responses"]]
    return sum(votes) * 2 > len(votes)


def qags_rows(path: Path, source: str) -> Iterator[dict[str, Any]]:
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        row = json.loads(line)
        sentences = [{"text": s["sentence"], "consistent": _consistent(s)} for s in row["summary_sentences"]]
        yield {"id": f"{source}-{n}", "question": SUMMARY_QUESTION, "context": row["article"],
               "answer": " ".join(s["text"] for s in sentences), "hallucinated": not all(s["consistent"] for s in sentences),
               "sentences": sentences}


def qags_pairs(rows: Sequence[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for row in rows:
        good = next((s["text"] for s in row["sentences"] if s["consistent"]), None)
        bad = next((s["text"] for s in row["sentences"] if not s["consistent"]), None)
        if good and bad:
            yield {"id": row["id"], "question": row["question"], "context": row["context"], "good": good, "bad": bad}


def squad_pairs(path: Path) -> Iterator[dict[str, Any]]:
    article = json.loads(path.read_text(encoding="utf-8"))["data"][0]
    paragraphs = [p["context"] for p in article["paragraphs"]]
    words = [set(content_words(p)) for p in paragraphs]
    for index, paragraph in enumerate(article["paragraphs"]):
        for qa in paragraph["qas"]:
            if qa.get("is_impossible") or not qa["answers"]:
                continue
            asked = set(content_words(qa["question"]))
            other = max((i for i in range(len(paragraphs)) if i != index), key=lambda i: (len(asked & words[i]), -i))
            yield {"id": qa["id"], "question": qa["question"], "answer": qa["answers"][0]["text"],
                   "good": paragraphs[index], "bad": paragraphs[other]}


def write(rows: Sequence[dict[str, Any]], path: Path) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--qags", type=Path, required=True, help="QAGS's data/ folder (mturk_cnndm.jsonl, mturk_xsum.jsonl)")
    parser.add_argument("--squad", type=Path, required=True, help="a SQuAD 2.0 dev JSON file (its first article)")
    parser.add_argument("--out", type=Path, default=Path("tests/scoring/heldout"))
    args = parser.parse_args()
    cnndm = list(qags_rows(args.qags / "mturk_cnndm.jsonl", "qags-cnndm"))
    xsum = list(qags_rows(args.qags / "mturk_xsum.jsonl", "qags-xsum"))
    pairs, context = list(qags_pairs(cnndm)), list(squad_pairs(args.squad))
    write(cnndm, args.out / "qags_cnndm.jsonl")
    write(xsum, args.out / "qags_xsum.jsonl")
    write(pairs, args.out / "qags_cnndm_pairs.jsonl")
    write(context, args.out / "squad_context_pairs.jsonl")
    print(f"{len(cnndm)} + {len(xsum)} QAGS summaries, {len(pairs)} QAGS sentence pairs, "
          f"{len(context)} SQuAD context pairs -> {args.out}")


if __name__ == "__main__":
    main()
