"""Write the judge's dev set (tests/scoring/judge_dev/) from openly licensed QA data.

Pairs of answers to one question, one better than the other by construction, in the labelled JSONL
format ``rag-assets calibrate`` reads (each row: question, answer, contexts, optional reference, and
per metric ``{"pair": id, "label": "good" | "bad"}``):

* SQuAD 2.0 (dev set, article "Normans", CC BY-SA 4.0): the good answer is the passage sentence
  that holds the gold answer span. Answer relevance pairs: the sentence that answers ANOTHER question
  about the same passage (``other``), and a noncommittal reply that restates the question
  (``noncommittal``). Faithfulness pairs: the good sentence with its answer span swapped for the gold
  answer of another question of the article (``swapped``).
* Anthropic cookbook RAG evaluation set (MIT): the good answer is the reference answer, the contexts
  its gold chunks. Answer relevance: the reference answer of another question about the same page
  (``other``) and the first sentence alone of a reference of several sentences (``partial``).
  Faithfulness: the reference with a number changed (``swapped``) and the reference of a question
  about another page (``ungrounded``).

Each pair has a ``split`` (``dev`` or ``held_out``, by a hash of its id) so that a method can be
looked at on one half and reported on the other. Labels come from the construction, not from
people: figures on this set are dev figures, never quality claims.

Run from the repository root::

    python scripts/make_judge_dev_set.py --squad dev-v2.0.json \\
        --anthropic-docs ../shared/data/anthropic_docs_rag --out tests/scoring/judge_dev

The output is deterministic.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

MAX_CONTEXT_CHARS = 3000
PAIRS_PER_KIND = 30  # per source and kind: a small set, spread over the source by a hash of the pair id
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"(])")


def _hash(pair_id: str) -> int:
    return int(hashlib.sha256(pair_id.encode()).hexdigest(), 16)


def _split(pair_id: str) -> str:
    return "dev" if _hash(pair_id) % 2 == 0 else "held_out"


def sample(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """At most PAIRS_PER_KIND pairs of each kind, chosen by a hash of their id, in their original order."""
    pairs: dict[str, list[str]] = {}
    for row in rows:
        pair_id = next(v["pair"] for v in row.values() if isinstance(v, dict))
        if pair_id not in pairs.setdefault(row["kind"], []):
            pairs[row["kind"]].append(pair_id)
    kept = {p for ids in pairs.values() for p in sorted(ids, key=lambda p: _hash(p) // 2)[:PAIRS_PER_KIND]}
    return [r for r in rows if next(v["pair"] for v in r.values() if isinstance(v, dict)) in kept]


def _row(pair_id: str, kind: str, metric: str, label: str, question: str, answer: str, contexts: Sequence[str],
         source: str) -> dict[str, Any]:
    return {"question": question, "answer": answer, "contexts": list(contexts),
            metric: {"pair": pair_id, "label": label}, "kind": kind, "split": _split(pair_id), "source": source}


def _pair(pair_id: str, kind: str, metric: str, question: str, good: str, bad: str, contexts: Sequence[str],
          source: str) -> list[dict[str, Any]]:
    return [_row(pair_id, kind, metric, "good", question, good, contexts, source),
            _row(pair_id, kind, metric, "bad", question, bad, contexts, source)]


def _sentences(text: str) -> list[tuple[int, str]]:
    """Sentences with their start offsets."""
    out, start = [], 0
    for match in _SENTENCE.finditer(text):
        out.append((start, text[start:match.start()]))
        start = match.end()
    out.append((start, text[start:]))
    return out


def _sentence_at(text: str, offset: int) -> str:
    return next(s for start, s in reversed(_sentences(text)) if start <= offset).strip()


def squad_rows(path: Path) -> Iterator[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    source = "squad2-dev/" + data["data"][0]["title"]
    answers = [a["text"] for article in data["data"] for p in article["paragraphs"] for qa in p["qas"]
               for a in qa["answers"][:1]]
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            answerable = [qa for qa in paragraph["qas"] if not qa["is_impossible"] and qa["answers"]]
            good = {qa["id"]: _sentence_at(context, qa["answers"][0]["answer_start"]) for qa in answerable}
            for index, qa in enumerate(answerable):
                question, sentence, span = qa["question"].strip(), good[qa["id"]], qa["answers"][0]["text"]
                others = [good[o["id"]] for o in answerable[index + 1:] + answerable[:index] if good[o["id"]] != sentence]
                if others:
                    yield from _pair(f"sq-{qa['id']}-other", "other", "answer_relevance", question, sentence,
                                     others[0], [context], source)
                yield from _pair(f"sq-{qa['id']}-noncommittal", "noncommittal", "answer_relevance", question,
                                 sentence, f'The text gives no definite answer to "{question.rstrip("?")}?"; '
                                           "it depends on how one reads it.", [context], source)
                digits = bool(re.search(r"\d", span))
                at = answers.index(span)
                swaps = [a for a in answers[at + 1:] + answers[:at] if a != span and a not in sentence
                         and a.lower() not in context.lower() and bool(re.search(r"\d", a)) == digits]
                if span in sentence and swaps:
                    yield from _pair(f"sq-{qa['id']}-swapped", "swapped", "faithfulness", question, sentence,
                                     sentence.replace(span, swaps[0], 1), [context], source)


def _changed_number(text: str) -> str | None:
    """The text with its first number changed (doubled, a year moved by one), None if it has none."""
    match = re.search(r"(?<![\w.])(\d+)(?![\w.]*\d)", text)
    if not match:
        return None
    value = int(match.group(1))
    new = value + 1 if 1900 <= value <= 2100 else value * 2 if value else 3
    return text[:match.start()] + str(new) + text[match.end():]


def anthropic_rows(directory: Path) -> Iterator[dict[str, Any]]:
    chunks = {c["chunk_link"]: c["text"] for c in json.loads((directory / "anthropic_docs.json").read_text("utf-8"))}
    items = json.loads((directory / "docs_evaluation_dataset.json").read_text("utf-8"))
    page = {x["id"]: {link.split("#")[0] for link in x["correct_chunks"]} for x in items}
    source = "anthropic-cookbook-rag"
    for index, item in enumerate(items):
        contexts = [chunks[link] for link in item["correct_chunks"]]
        if sum(len(c) for c in contexts) > MAX_CONTEXT_CHARS:
            continue
        question, reference = item["question"].strip(), item["correct_answer"].strip()
        rotated = items[index + 1:] + items[:index]
        same_page = [o for o in rotated if page[o["id"]] & page[item["id"]]]
        if same_page:
            yield from _pair(f"ad-{item['id']}-other", "other", "answer_relevance", question, reference,
                             same_page[0]["correct_answer"].strip(), contexts, source)
        sentences = [s for _, s in _sentences(reference)]
        if len(sentences) >= 2:
            yield from _pair(f"ad-{item['id']}-partial", "partial", "answer_relevance", question, reference,
                             sentences[0].strip(), contexts, source)
        changed = _changed_number(reference)
        if changed:
            yield from _pair(f"ad-{item['id']}-swapped", "swapped", "faithfulness", question, reference, changed,
                             contexts, source)
        elsewhere = [o for o in rotated if not page[o["id"]] & page[item["id"]]]
        yield from _pair(f"ad-{item['id']}-ungrounded", "ungrounded", "faithfulness", question, reference,
                         elsewhere[0]["correct_answer"].strip(), contexts, source)


def write(rows: Sequence[dict[str, Any]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--squad", type=Path, required=True, help="a SQuAD 2.0 dev JSON file (its first article)")
    parser.add_argument("--anthropic-docs", type=Path, required=True, help="the anthropic_docs_rag directory")
    parser.add_argument("--out", type=Path, default=Path("tests/scoring/judge_dev"))
    args = parser.parse_args(argv)
    squad, anthropic = sample(list(squad_rows(args.squad))), sample(list(anthropic_rows(args.anthropic_docs)))
    write(squad, args.out / "squad_pairs.jsonl")
    write(anthropic, args.out / "anthropic_docs_pairs.jsonl")
    print(f"{len(squad) // 2} SQuAD pairs, {len(anthropic) // 2} Anthropic docs pairs -> {args.out}")


if __name__ == "__main__":
    main()
