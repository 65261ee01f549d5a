"""Write the offline judge's held-out samples (tests/scoring/heldout/) from public human-labelled data.

Seven sources, each read as fetched (see tests/scoring/heldout/PROVENANCE.txt for repository, commit, file
and licence); the last five are optional:

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
* BEGIN (Dziri et al., 2022): dialogue models' responses to a turn, each with the knowledge snippet it
  should be grounded on and one human label: "Fully attributable", "Not fully attributable" or "Generic".
  ``begin_wow.jsonl``: a seeded sample of the Wizard of Wikipedia test responses
  (``wow/begin_test_wow.tsv``; detection; the previous turn stands as the question).
  ``begin_wow_pairs.jsonl``: per knowledge and turn answered by several models there, the first fully and
  the first not fully attributable response, from the whole file (pairwise faithfulness).
  ``begin_cmu.jsonl`` and ``begin_tc.jsonl``: the CMU-DoG and TopicalChat dev responses (their test files
  are not in the snapshot), with knowledge several paragraphs long and more Generic responses.
* LFQA-Verification (Chen et al., 2023; ``data/``): GPT-3 and Alpaca long answers to ELI5 questions
  written from four WebGPT evidence documents, every answer sentence judged by three annotators against
  those documents: "supported", "partially" or "not_supported". ``lfqa_sentences.jsonl``: a seeded sample
  of the sentences with their majority label ("none" without one; detection). ``lfqa_pairs.jsonl``:
  within one answer, its first supported and first not-supported sentence (pairwise faithfulness).
* WikiQA (Yang et al., 2015; the test split with its labels, ``WikiQA-test.tsv`` or a copy of it): Bing
  questions, each with the sentences of the Wikipedia summary it led to, crowd workers marking the sentences
  that answer it. ``wikiqa_pairs.jsonl``: per question, its first answering and first non-answering sentence
  (pairwise answer relevance: both come from the page the question led to).
* LLMBar (Zeng et al., 2024; ``Dataset/``): an instruction with two outputs and which one is better, checked
  by the authors; in the Adversarial subsets the worse output answers a nearby instruction (Neighbor,
  GPTInst) or is superficially better (GPTOut, Manual). Its ``Processed/MT-Bench`` holds 200 first-turn
  MT-Bench pairs with the majority vote of its expert human judges, ties removed. ``llmbar_*.jsonl`` and
  ``mtbench_human.jsonl``: every pair, the better output first (pairwise answer relevance).
* HaluEval QA (Li et al., 2023; ``generation/qa/``): HotpotQA questions with the Wikipedia knowledge that
  answers them and HotpotQA's gold answer, beside a hallucinated answer ChatGPT was asked to write for the same
  question (one-turn and multi-turn instructions, 500 each). ``halueval_qa_pairs.jsonl``: every pair, the gold
  answer as the good one (pairwise faithfulness; labels by the dataset's construction, not by annotators).

Run from the repository root (rows keep their source order; a sample is drawn with a fixed seed and
keeps source order too)::

    python scripts/make_heldout_samples.py --qags <qags checkout>/data --squad dev-v2.0.json \\
        [--begin <BEGIN checkout>] [--lfqa <LFQA-Verification checkout>/data] \\
        [--wikiqa WikiQA-test.tsv] [--llmbar <LLMBar checkout>/Dataset] \\
        [--halueval <HaluEval checkout>/generation/qa] --out tests/scoring/heldout
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rag_assets.text.tokens import content_words

SUMMARY_QUESTION = "Summarise the article."
SAMPLE_SIZE, SAMPLE_SEED = 1000, 0  # enough for intervals a few points wide; the seed is fixed, never tuned
ATTRIBUTABLE, NOT_ATTRIBUTABLE = "Fully attributable", "Not fully attributable"
SUPPORTED, NOT_SUPPORTED = "supported", "not_supported"
BEGIN_FILES = {"begin_wow.jsonl": "wow/begin_test_wow.tsv", "begin_cmu.jsonl": "cmu-dog/begin_dev_cmu.tsv",
               "begin_tc.jsonl": "topicalchat/begin_dev_tc.tsv"}  # sample: the BEGIN file it is drawn from
LFQA_SETS = ("gpt3_wdoc", "alpaca_wdoc")  # the answers written from the documents they are judged against
LLMBAR_SETS = {"llmbar_natural.jsonl": "LLMBar/Natural", "llmbar_neighbor.jsonl": "LLMBar/Adversarial/Neighbor",
               "llmbar_gptinst.jsonl": "LLMBar/Adversarial/GPTInst", "llmbar_gptout.jsonl": "LLMBar/Adversarial/GPTOut",
               "llmbar_manual.jsonl": "LLMBar/Adversarial/Manual",
               "mtbench_human.jsonl": "Processed/MT-Bench"}  # sample: the LLMBar folder holding its dataset.json
HALUEVAL_FILES = ("qa_one-turn_data.json", "qa_multi-turn_data.json")  # JSON lines, despite the name


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


def first_pair(items: Sequence[tuple[str, object]], good: object, bad: object) -> tuple[str, str] | None:
    """The first text labelled ``good`` and the first labelled ``bad`` among (text, label), if both exist."""
    first = {label: next((text for text, lab in items if lab == label), None) for label in (good, bad)}
    return (first[good], first[bad]) if first[good] is not None and first[bad] is not None else None


def qags_pairs(rows: Sequence[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for row in rows:
        pair = first_pair([(s["text"], s["consistent"]) for s in row["sentences"]], True, False)
        if pair:
            yield {"id": row["id"], "question": row["question"], "context": row["context"], "good": pair[0],
                   "bad": pair[1]}


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


def sample(rows: Sequence[dict[str, Any]], size: int = SAMPLE_SIZE, seed: int = SAMPLE_SEED) -> list[dict[str, Any]]:
    """``size`` rows drawn with a fixed seed, in source order (all of them when there are no more)."""
    if len(rows) <= size:
        return list(rows)
    return [rows[i] for i in sorted(random.Random(seed).sample(range(len(rows)), size))]


def begin_rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8", newline="") as file:
        records = list(csv.DictReader(file, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [{"id": f"begin-{r['data_source']}-{n}", "question": r["message"], "context": r["knowledge"],
             "answer": r["response"], "label": r["begin_label"], "model": r["model_name"]}
            for n, r in enumerate(records)]


def begin_pairs(rows: Sequence[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Responses of two models to the same turn and knowledge: only the response differs within a pair."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["context"], row["question"]), []).append(row)
    for (context, question), group in groups.items():
        pair = first_pair([(r["answer"], r["label"]) for r in group], ATTRIBUTABLE, NOT_ATTRIBUTABLE)
        if pair:
            yield {"id": group[0]["id"], "question": question, "context": context, "good": pair[0], "bad": pair[1]}


def _majority(labels: Sequence[str]) -> str:
    label, votes = Counter(labels).most_common(1)[0]
    return label if votes * 2 > len(labels) else "none"


def lfqa_answers(data: Path) -> Iterator[dict[str, Any]]:
    """Per annotated answer: its question, the WebGPT documents it was written from, its labelled sentences."""
    docs = {d["question_id"]: [doc["text"] for doc in d["docs"]]
            for d in json.loads((data / "docs" / "docs-webgpt.json").read_text(encoding="utf-8"))}
    for name in LFQA_SETS:
        for answer in json.loads((data / "annotations" / f"annotations-{name}.json").read_text(encoding="utf-8")):
            yield {"id": f"lfqa-{name}-{answer['question_id']}", "question": answer["question"],
                   "contexts": docs[answer["question_id"]],
                   "sentences": [(a["answer"].strip(), _majority(a["labels"])) for a in answer["annotations"]]}


def lfqa_sentences(answers: Sequence[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for answer in answers:
        for n, (text, label) in enumerate(answer["sentences"]):
            yield {"id": f"{answer['id']}-{n}", "question": answer["question"], "contexts": answer["contexts"],
                   "answer": text, "label": label}


def lfqa_pairs(answers: Sequence[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for answer in answers:
        pair = first_pair(answer["sentences"], SUPPORTED, NOT_SUPPORTED)
        if pair:
            yield {"id": answer["id"], "question": answer["question"], "contexts": answer["contexts"],
                   "good": pair[0], "bad": pair[1]}


def wikiqa_pairs(path: Path) -> Iterator[dict[str, Any]]:
    """Per question (in file order), its first sentence labelled 1 and its first labelled 0, if it has both."""
    with path.open(encoding="utf-8", newline="") as file:
        records = list(csv.DictReader(file, delimiter="\t", quoting=csv.QUOTE_NONE))
    questions: dict[str, list[dict[str, str]]] = {}
    for record in records:
        questions.setdefault(record["QuestionID"], []).append(record)
    for qid, sentences in questions.items():
        pair = first_pair([(s["Sentence"], s["Label"]) for s in sentences], "1", "0")
        if pair:
            yield {"id": f"wikiqa-{qid}", "question": sentences[0]["Question"], "title": sentences[0]["DocumentTitle"],
                   "good": pair[0], "bad": pair[1]}


def llmbar_pairs(path: Path, source: str) -> Iterator[dict[str, Any]]:
    """An LLMBar ``dataset.json``: its pairs with the output its label names as better first."""
    for n, row in enumerate(json.loads(path.read_text(encoding="utf-8"))):
        better = row["label"]
        yield {"id": f"{source}-{n}", "question": row["input"], "good": row[f"output_{better}"],
               "bad": row[f"output_{3 - better}"]}


def halueval_pairs(folder: Path) -> Iterator[dict[str, Any]]:
    """HaluEval's QA files: per row, HotpotQA's gold answer against the hallucinated one, with the knowledge."""
    for file in HALUEVAL_FILES:
        for n, line in enumerate((folder / file).read_text(encoding="utf-8").splitlines()):
            row = json.loads(line)
            yield {"id": f"halueval-{file.split('_')[1]}-{n}", "question": row["question"], "context": row["knowledge"],
                   "good": row["right_answer"], "bad": row["hallucinated_answer"]}


def write(rows: Sequence[dict[str, Any]], path: Path) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--qags", type=Path, required=True, help="QAGS's data/ folder (mturk_cnndm.jsonl, mturk_xsum.jsonl)")
    parser.add_argument("--squad", type=Path, required=True, help="a SQuAD 2.0 dev JSON file (its first article)")
    parser.add_argument("--begin", type=Path, help="a BEGIN checkout (optional)")
    parser.add_argument("--lfqa", type=Path, help="LFQA-Verification's data/ folder (optional)")
    parser.add_argument("--wikiqa", type=Path, help="WikiQA's labelled test TSV (optional)")
    parser.add_argument("--llmbar", type=Path, help="LLMBar's Dataset/ folder (optional)")
    parser.add_argument("--halueval", type=Path, help="HaluEval's generation/qa/ folder (optional)")
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
    if args.begin:
        for name, source in BEGIN_FILES.items():
            responses = begin_rows(args.begin / source)
            drawn = sample(responses)
            write(drawn, args.out / name)
            print(f"{len(drawn)} of {len(responses)} BEGIN responses ({source}) -> {args.out / name}")
        pairs = list(begin_pairs(begin_rows(args.begin / BEGIN_FILES["begin_wow.jsonl"])))
        write(pairs, args.out / "begin_wow_pairs.jsonl")
        print(f"{len(pairs)} BEGIN pairs -> {args.out}")
    if args.lfqa:
        answers = list(lfqa_answers(args.lfqa))
        sentences = list(lfqa_sentences(answers))
        drawn, pairs = sample(sentences), list(lfqa_pairs(answers))
        write(drawn, args.out / "lfqa_sentences.jsonl")
        write(pairs, args.out / "lfqa_pairs.jsonl")
        print(f"{len(drawn)} of {len(sentences)} LFQA answer sentences, {len(pairs)} LFQA pairs -> {args.out}")
    if args.wikiqa:
        pairs = list(wikiqa_pairs(args.wikiqa))
        write(pairs, args.out / "wikiqa_pairs.jsonl")
        print(f"{len(pairs)} WikiQA pairs -> {args.out}")
    if args.llmbar:
        for name, folder in LLMBAR_SETS.items():
            pairs = list(llmbar_pairs(args.llmbar / folder / "dataset.json", name.removesuffix(".jsonl")))
            write(pairs, args.out / name)
            print(f"{len(pairs)} LLMBar pairs ({folder}) -> {args.out / name}")
    if args.halueval:
        pairs = list(halueval_pairs(args.halueval))
        write(pairs, args.out / "halueval_qa_pairs.jsonl")
        print(f"{len(pairs)} HaluEval QA pairs -> {args.out}")


if __name__ == "__main__":
    main()
