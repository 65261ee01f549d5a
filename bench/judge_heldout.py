"""The offline judge beside the lexical baseline on held-out human-labelled samples, and on its dev set.

    python scripts/make_heldout_samples.py --qags <qags>/data --squad dev-v2.0.json \\
        [--begin <BEGIN>] [--lfqa <LFQA-Verification>/data] \\
        [--wikiqa WikiQA-test.tsv] [--llmbar <LLMBar>/Dataset] [--halueval <HaluEval>/generation/qa]   # once
    python bench/judge_heldout.py [--heldout tests/scoring/heldout] [--dev tests/scoring/judge_dev]

Every answer goes through ``rag_assets.scoring.single.judge_cases`` (what ``rag_assets.judge`` runs) with
the offline judge. The lexical baseline is support: the share of the answer's content words found in the
contexts. Pairwise sets print accuracy, the share of pairs whose better member scores higher, a TIE
COUNTING HALF (ties are printed too); detection sets print ROC-AUC (a consistent answer outscoring a
hallucinated one; ties half). Intervals: 95% percentile bootstrap over pairs or answers (2,000 draws,
seed 0). Detection on a set with more than two labels scores the two it names and prints every label's
mean score beside it. Answer relevance (WikiQA, LLMBar, MT-Bench) has no contexts to support, so its
lexical baseline is the share of the answer's content words found in the question, printed beside the share
of the question's content words found in the answer and "the longer answer wins" (words; ties half).
BEGIN, LFQA-Verification, WikiQA, LLMBar and HaluEval are optional: without their samples their rows are
skipped with a note. HaluEval's labels and the dev set's come from construction, not people; the dev set's
figures are dev figures.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag_assets.llm.offline import OfflineClient  # noqa: E402
from rag_assets.scoring.agreement import Estimate, bootstrap, pair_agreement, roc_auc  # noqa: E402
from rag_assets.scoring.offline_judge.text import is_decline, statements  # noqa: E402
from rag_assets.scoring.single import Case, judge_cases  # noqa: E402
from rag_assets.text.tokens import content_words  # noqa: E402


def support(answer: str, contexts: Sequence[str]) -> float:
    """The lexical baseline: the share of the answer's content words found in the contexts (0 without any)."""
    words, held = content_words(answer), set(content_words(" ".join(contexts)))
    return sum(w in held for w in words) / len(words) if words else 0.0


@dataclass(frozen=True)
class Measured:
    name: str
    statistic: str  # "pairwise accuracy" or "ROC-AUC"
    n: int
    judge: Estimate
    baseline: Estimate
    judge_ties: int = 0
    baseline_ties: int = 0
    by_label: tuple[tuple[str, int, float, float], ...] = ()  # label, n, judge's mean, baseline's mean
    others: tuple[tuple[str, Estimate, int], ...] = ()  # further comparators: name, estimate, ties


def _judged(cases: Sequence[Case], metric: str) -> np.ndarray:
    return np.array([math.nan if r[metric] is None else r[metric] for r in judge_cases(cases, OfflineClient())])


def _compared(good: np.ndarray, bad: np.ndarray) -> tuple[Estimate, int]:
    """Pairwise accuracy of ``good`` over ``bad`` (ties half) with its interval, and the number of ties."""
    return bootstrap(len(good), lambda i: pair_agreement(good[i], bad[i])), int((good == bad).sum())


def _pairwise(name: str, good: Sequence[Case], bad: Sequence[Case], metric: str) -> Measured:
    scored = _judged([*good, *bad], metric)
    judge, judge_ties = _compared(scored[:len(good)], scored[len(good):])
    baseline, baseline_ties = _compared(*(np.array([support(c.answer, c.contexts) for c in cases])
                                          for cases in (good, bad)))
    return Measured(name, "pairwise accuracy", len(good), judge, baseline, judge_ties, baseline_ties)


def _preferred(name: str, pairs: Sequence[dict[str, Any]]) -> Measured:
    """Answer relevance of the preferred answer against the other one to the same question, beside the two
    lexical overlaps of answer and question and the answer's length (answer relevance reads no context)."""
    good, bad = ([Case(p["question"], p[side], []) for p in pairs] for side in ("good", "bad"))
    scored = _judged([*good, *bad], "answer_relevance")
    judge, judge_ties = _compared(scored[:len(good)], scored[len(good):])
    measures = (lambda c: support(c.answer, [c.question]), lambda c: support(c.question, [c.answer]),
                lambda c: len(c.answer.split()))
    (baseline, baseline_ties), coverage, length = (
        _compared(np.array([f(c) for c in good], dtype=float), np.array([f(c) for c in bad], dtype=float))
        for f in measures)
    return Measured(name, "pairwise accuracy", len(good), judge, baseline, judge_ties, baseline_ties,
                    others=(("question's words in the answer", *coverage), ("longer answer wins", *length)))


def _detection(name: str, cases: Sequence[Case], labels: Sequence[str], good: str, bad: str) -> Measured:
    """ROC-AUC of ``good`` against ``bad`` answers; any other label is left out of it and only shown in the
    per-label means (printed when there are more than two labels)."""
    judged = _judged(cases, "faithfulness")
    base = np.array([support(c.answer, c.contexts) for c in cases])
    label_of = np.array(labels)
    named = (label_of == good) | (label_of == bad)
    positive, judged_named, base_named = (label_of == good)[named], judged[named], base[named]
    by_label = tuple((label, int(mask.sum()), float(np.nanmean(judged[mask])), float(base[mask].mean()))
                     for label in sorted(set(labels)) for mask in [label_of == label])
    return Measured(name, "ROC-AUC", len(positive),
                    bootstrap(len(positive), lambda i: roc_auc(judged_named[i], positive[i])),
                    bootstrap(len(positive), lambda i: roc_auc(base_named[i], positive[i])),
                    by_label=by_label if len(by_label) > 2 else ())


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def heldout(directory: Path) -> list[Measured]:
    """The held-out sets written by scripts/make_heldout_samples.py."""
    out = []
    pairs = _rows(directory / "qags_cnndm_pairs.jsonl")
    out.append(_pairwise("QAGS CNN/DM: consistent vs inconsistent summary sentence (faithfulness)",
                         [Case(p["question"], p["good"], [p["context"]]) for p in pairs],
                         [Case(p["question"], p["bad"], [p["context"]]) for p in pairs], "faithfulness"))
    pairs = _rows(directory / "squad_context_pairs.jsonl")
    out.append(_pairwise("SQuAD 2.0: paragraph the question was written on vs top lexical distractor "
                         "(context precision)", [Case(p["question"], p["answer"], [p["good"]]) for p in pairs],
                         [Case(p["question"], p["answer"], [p["bad"]]) for p in pairs], "context_precision"))
    out.append(_pairwise("SQuAD 2.0 padded (by construction): the paragraph alone vs followed by the distractor "
                         "in one chunk (context precision)", [Case(p["question"], p["answer"], [p["good"]]) for p in pairs],
                         [Case(p["question"], p["answer"], [f"{p['good']} {p['bad']}"]) for p in pairs],
                         "context_precision"))
    for name, file in (("QAGS CNN/DM summaries", "qags_cnndm.jsonl"), ("QAGS XSum summaries", "qags_xsum.jsonl")):
        rows = _rows(directory / file)
        out.append(_detection(f"{name}: hallucination detection (faithfulness)",
                              [Case(r["question"], r["answer"], [r["context"]]) for r in rows],
                              ["hallucinated" if r["hallucinated"] else "consistent" for r in rows],
                              "consistent", "hallucinated"))
    return out


def begin(directory: Path) -> list[Measured]:
    """BEGIN: dialogue responses against their knowledge snippet (Wizard of Wikipedia test; CMU-DoG and
    TopicalChat dev, whose snippets are several paragraphs long)."""
    pairs = _rows(directory / "begin_wow_pairs.jsonl")
    out = [_pairwise("BEGIN WoW: fully vs not fully attributable response to one turn (faithfulness)",
                     [Case(p["question"], p["good"], [p["context"]]) for p in pairs],
                     [Case(p["question"], p["bad"], [p["context"]]) for p in pairs], "faithfulness")]
    for name, file in (("BEGIN WoW (test)", "begin_wow.jsonl"), ("BEGIN CMU-DoG (dev)", "begin_cmu.jsonl"),
                       ("BEGIN TopicalChat (dev)", "begin_tc.jsonl")):
        rows = _rows(directory / file)
        for subset, kept in (("responses", rows), ("responses stating something", [r for r in rows if _states(r)])):
            out.append(_detection(f"{name} {subset}: fully vs not fully attributable (faithfulness)",
                                  [Case(r["question"], r["answer"], [r["context"]]) for r in kept],
                                  [r["label"] for r in kept], "Fully attributable", "Not fully attributable"))
    return out


def _states(row: dict[str, Any]) -> bool:
    """Whether a response states something: a sentence that is no question and no decline. A reply that only
    asks back ("have you seen it?") or does not know claims nothing, so faithfulness gives it 1 by definition
    (the product's: a decline is not unfaithful), while BEGIN labels it not attributable; rows kept to responses
    that state something show how the two compare where that definition does not decide."""
    return any(not is_decline(s, row["question"]) for s in statements(row["answer"]))


def lfqa(directory: Path) -> list[Measured]:
    """LFQA-Verification: long-answer sentences against the four documents the answer was written from."""
    pairs = _rows(directory / "lfqa_pairs.jsonl")
    rows = _rows(directory / "lfqa_sentences.jsonl")
    return [_pairwise("LFQA-Verification: supported vs not-supported sentence of one answer (faithfulness)",
                      [Case(p["question"], p["good"], p["contexts"]) for p in pairs],
                      [Case(p["question"], p["bad"], p["contexts"]) for p in pairs], "faithfulness"),
            _detection("LFQA-Verification answer sentences: supported vs not supported (faithfulness)",
                       [Case(r["question"], r["answer"], r["contexts"]) for r in rows], [r["label"] for r in rows],
                       "supported", "not_supported")]


def wikiqa(directory: Path) -> list[Measured]:
    """WikiQA: a sentence crowd workers marked as answering the question against one they did not, both from
    the Wikipedia summary the question led to."""
    return [_preferred("WikiQA test: answering vs non-answering sentence of one page (answer relevance)",
                       _rows(directory / "wikiqa_pairs.jsonl"))]


#: LLMBar's samples: file, what the worse output of a pair is
LLMBAR = (("llmbar_natural.jsonl", "LLMBar Natural: the better of two outputs to one instruction"),
          ("llmbar_neighbor.jsonl", "LLMBar Adversarial Neighbor: vs an output to a neighbouring instruction"),
          ("llmbar_gptinst.jsonl", "LLMBar Adversarial GPTInst: vs an output to a GPT-4-altered instruction"),
          ("llmbar_gptout.jsonl", "LLMBar Adversarial GPTOut: vs a superficially good GPT-4 output"),
          ("llmbar_manual.jsonl", "LLMBar Adversarial Manual: vs a hand-made superficially good output"),
          ("mtbench_human.jsonl", "MT-Bench (first turn): expert majority preference, ties removed"))


def llmbar(directory: Path) -> list[Measured]:
    """LLMBar's pairs and its 200 MT-Bench pairs with human expert votes: the better output first."""
    return [_preferred(f"{name} (answer relevance)", _rows(directory / file)) for file, name in LLMBAR]


def halueval(directory: Path) -> list[Measured]:
    """HaluEval QA: HotpotQA's gold answer against an answer ChatGPT was asked to hallucinate, with the knowledge."""
    pairs = _rows(directory / "halueval_qa_pairs.jsonl")
    return [_pairwise("HaluEval QA: gold vs hallucinated answer to one question (faithfulness)",
                      [Case(p["question"], p["good"], [p["context"]]) for p in pairs],
                      [Case(p["question"], p["bad"], [p["context"]]) for p in pairs], "faithfulness")]


#: the optional held-out sets: title, who labelled them, the sample whose absence skips them, how to build it,
#: their rows
OPTIONAL = (("BEGIN", "human-labelled", "begin_wow.jsonl", "--begin", begin),
            ("LFQA-Verification", "human-labelled", "lfqa_sentences.jsonl", "--lfqa", lfqa),
            ("WikiQA", "human-labelled", "wikiqa_pairs.jsonl", "--wikiqa", wikiqa),
            ("LLMBar and MT-Bench", "human-labelled", "llmbar_natural.jsonl", "--llmbar", llmbar),
            ("HaluEval", "labels by the dataset's construction", "halueval_qa_pairs.jsonl", "--halueval", halueval))


def dev(directory: Path) -> list[Measured]:
    """The dev set's pairs (tests/scoring/judge_dev, by scripts/make_judge_dev_set.py), per metric."""
    rows = [r for f in sorted(directory.glob("*.jsonl")) for r in _rows(f)]
    out = []
    for metric in ("faithfulness", "answer_relevance"):
        pairs: dict[str, dict[str, Case]] = {}
        for row in rows:
            if metric in row:
                case = Case(row["question"], row["answer"], row["contexts"], row.get("reference"))
                pairs.setdefault(row[metric]["pair"], {})[row[metric]["label"]] = case
        complete = [p for _, p in sorted(pairs.items()) if {"good", "bad"} <= p.keys()]
        out.append(_pairwise(f"dev set: {metric} pairs", [p["good"] for p in complete], [p["bad"] for p in complete],
                             metric))
    return out


def _print(title: str, measured: Sequence[Measured]) -> None:
    print(f"\n{title}\n" + "-" * len(title))
    for m in measured:
        ties = f"  (ties: judge {m.judge_ties}, baseline {m.baseline_ties})" if m.statistic != "ROC-AUC" else ""
        print(f"{m.name}\n  n={m.n}  {m.statistic}: offline judge {m.judge}   lexical baseline {m.baseline}{ties}")
        for other, estimate, tied in m.others:
            print(f"    {other}: {estimate}  (ties {tied})")
        for label, n, judge, baseline in m.by_label:
            print(f"    {label}: n={n}  mean offline judge {judge:.3f}   mean lexical baseline {baseline:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heldout", type=Path, default=ROOT / "tests" / "scoring" / "heldout")
    parser.add_argument("--dev", type=Path, default=ROOT / "tests" / "scoring" / "judge_dev")
    args = parser.parse_args()
    if not (args.heldout / "qags_cnndm.jsonl").is_file():
        sys.exit(f"--heldout {args.heldout}: no samples there; build them with scripts/make_heldout_samples.py "
                 "(e.g. --qags qags/data --squad dev-v2.0.json --out tests/scoring/heldout)")
    _print("Held-out, human-labelled (ties count half)", heldout(args.heldout))
    for title, labels, sample, flag, measure in OPTIONAL:
        if (args.heldout / sample).is_file():
            _print(f"Held-out, {title} ({labels}; ties count half)", measure(args.heldout))
        else:
            print(f"\n{title}: no {sample} in {args.heldout}; skipped (build it with make_heldout_samples.py {flag})")
    _print("Dev set (labels by construction; DEV figures, looked at while building)", dev(args.dev))


if __name__ == "__main__":
    main()
