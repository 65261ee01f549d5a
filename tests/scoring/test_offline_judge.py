"""The offline judge against labelled pairs from the sample corpus, and unit tests of each heuristic.

The pairs (tests/scoring/judge_pairs.yaml) are scored with the real formulas and the default
HashingEmbedder: the better member of each pair must score strictly higher (a tie is a failure).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from rag_assets.corpus.models import ChunkerConfig, SnapshotChunk
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.generation.offline import DECLINE_ANSWER
from rag_assets.rag.offline import DECLINE
from rag_assets.scoring import formulas, offline_judge
from rag_assets.scoring.embedding import HashingEmbedder
from rag_assets.scoring.judge_prompts import (
    ANSWER_RELEVANCE,
    CONTEXT_PRECISION,
    CONTEXT_RECALL,
    FAITHFULNESS,
    REFERENCE_STATEMENTS,
)
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine
from tests.conftest import PROJECT_ROOT, SAMPLE_CORPUS

PAIRS = yaml.safe_load((Path(__file__).parent / "judge_pairs.yaml").read_text(encoding="utf-8"))
FAITHFULNESS_TARGET, RELEVANCE_TARGET, PRECISION_TARGET = 0.96, 0.80, 0.80


def _squash(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def corpus_chunks(tmp_path_factory) -> list[SnapshotChunk]:
    repo = SqlCorpusRepository(get_engine(f"sqlite:///{tmp_path_factory.mktemp('judge') / 'store.db'}"))
    version = snapshot_corpus(SAMPLE_CORPUS, ChunkerConfig(), repo).version_id
    return repo.snapshot_chunks(version)


def _lookup(chunks: Sequence[SnapshotChunk], spec: Mapping[str, str]) -> dict[str, Any]:
    """The first chunk of the document that contains the phrase, as the judge templates get it."""
    phrase = _squash(spec["phrase"])
    for chunk in chunks:
        if chunk.path == spec["doc"] and phrase in _squash(chunk.text):
            return {"chunk_id": chunk.chunk_id, "text": chunk.text, "version": chunk.doc_version}
    raise LookupError(f"no chunk of {spec['doc']} contains {spec['phrase']!r}")


def _cite(answer: str, context: Sequence[Mapping[str, Any]]) -> str:
    return re.sub(r"\{c(\d+)\}", lambda m: f"[{context[int(m.group(1))]['chunk_id']}]", answer)


def _accuracy(pairs: Sequence[Mapping[str, Any]], score: Callable[[Mapping[str, Any]], tuple[float, float]]):
    failures = []
    for pair in pairs:
        better, worse = score(pair)
        if not better > worse:
            failures.append(f"{pair['id']} ({pair.get('kind', '')}): {better:.3f} vs {worse:.3f}")
    return 1 - len(failures) / len(pairs), failures


def _report(metric: str, accuracy: float, target: float, failures: Sequence[str], total: int) -> str:
    lines = "\n  ".join(failures)
    return f"{metric}: accuracy {accuracy:.3f} on {total} pairs (target {target}); failing pairs:\n  {lines}"


# ------------------------------------------------------------------------------------------------
# The labelled pairs
# ------------------------------------------------------------------------------------------------

def test_the_pairs_cover_every_metric_and_resolve_to_real_chunks(corpus_chunks):
    assert len(PAIRS["faithfulness"]) >= 40
    assert len(PAIRS["answer_relevance"]) >= 30
    assert len(PAIRS["context_precision"]) >= 30
    ids = [p["id"] for section in PAIRS.values() for p in section]
    assert len(ids) == len(set(ids))
    for pair in PAIRS["faithfulness"]:
        for spec in pair["chunks"]:
            _lookup(corpus_chunks, spec)
    for pair in PAIRS["context_precision"]:
        focused = [_lookup(corpus_chunks, s)["chunk_id"] for s in pair["focused"]]
        noisy = [_lookup(corpus_chunks, s)["chunk_id"] for s in pair["noisy"]]
        assert noisy[0] != focused[0] and any(c in noisy[2:] for c in focused), \
            f"{pair['id']}: the noisy context holds a chunk of the focused one at rank 3 or later, behind others"


def test_faithful_answers_score_higher_on_faithfulness(corpus_chunks):
    def score(pair):
        context = [_lookup(corpus_chunks, s) for s in pair["chunks"]]
        values = []
        for answer in (pair["faithful"], pair["unfaithful"]):
            inputs = {"question": pair["question"], "answer": _cite(answer, context), "chunks": context}
            judgment = FAITHFULNESS.output_model.model_validate(offline_judge.faithfulness(inputs)).model_dump()
            values.append(formulas.faithfulness(judgment)[0])
        return values[0], values[1]

    accuracy, failures = _accuracy(PAIRS["faithfulness"], score)
    print(f"faithfulness pair accuracy: {accuracy:.3f}")
    assert accuracy >= FAITHFULNESS_TARGET, _report("faithfulness", accuracy, FAITHFULNESS_TARGET, failures,
                                                    len(PAIRS["faithfulness"]))


def test_relevant_answers_score_higher_on_answer_relevance():
    embedder = HashingEmbedder()

    def score(pair):
        values = []
        for answer in (pair["relevant"], pair["worse"]):
            judgment = ANSWER_RELEVANCE.output_model.model_validate(
                offline_judge.answer_relevance({"question": pair["question"], "answer": answer})).model_dump()
            values.append(formulas.answer_relevance(pair["question"], judgment, embedder))
        return values[0], values[1]

    accuracy, failures = _accuracy(PAIRS["answer_relevance"], score)
    print(f"answer relevance pair accuracy: {accuracy:.3f}")
    assert accuracy >= RELEVANCE_TARGET, _report("answer relevance", accuracy, RELEVANCE_TARGET, failures,
                                                 len(PAIRS["answer_relevance"]))


def test_focused_contexts_score_higher_on_context_precision(corpus_chunks):
    def score(pair):
        values = []
        for specs in (pair["focused"], pair["noisy"]):
            context = [_lookup(corpus_chunks, s) for s in specs]
            inputs = {"question": pair["question"], "reference": pair["reference"], "chunks": context}
            output = offline_judge.context_precision(inputs)
            judgment = CONTEXT_PRECISION.output_model.model_validate(output).model_dump()
            useful = {v["chunk_id"]: v["useful"] for v in judgment["verdicts"]}
            values.append(formulas.context_precision([useful[c["chunk_id"]] for c in context]))
        return values[0], values[1]

    accuracy, failures = _accuracy(PAIRS["context_precision"], score)
    print(f"context precision pair accuracy: {accuracy:.3f}")
    assert accuracy >= PRECISION_TARGET, _report("context precision", accuracy, PRECISION_TARGET, failures,
                                                 len(PAIRS["context_precision"]))


_DETERMINISM_SCRIPT = """
import json, sys
from rag_assets.scoring import offline_judge as judge
inputs = json.loads(sys.stdin.read())
out = [judge.faithfulness(i) for i in inputs] + [judge.answer_relevance(i) for i in inputs]
out += [judge.context_precision({**i, "reference": i["answer"]}) for i in inputs]
print(json.dumps(out, sort_keys=True))
"""


def test_the_judge_is_deterministic_whatever_the_hash_seed(corpus_chunks):
    inputs = []
    for pair in PAIRS["faithfulness"][:25]:
        context = [_lookup(corpus_chunks, s) for s in pair["chunks"]]
        inputs += [{"question": pair["question"], "answer": _cite(a, context), "chunks": context}
                   for a in (pair["faithful"], pair["unfaithful"])]
    outputs = set()
    for seed in ("1", "2"):
        done = subprocess.run([sys.executable, "-c", _DETERMINISM_SCRIPT], input=json.dumps(inputs), text=True,
                              capture_output=True, check=True, cwd=PROJECT_ROOT,
                              env={**os.environ, "PYTHONHASHSEED": seed})
        outputs.add(done.stdout)
    assert len(outputs) == 1


# ------------------------------------------------------------------------------------------------
# Unit tests on hand-made inputs
# ------------------------------------------------------------------------------------------------

LIMITS = {"chunk_id": "a1b2c3d4e5f60718", "version": "2.0", "text": (
    "## File limits\n\n| Limit | Value |\n|-------|-------|\n| Maximum file size | 15 GB |\n"
    "| Maximum path length | 400 characters |\n\nThe REST API allows 1,200 requests per minute per OAuth client. "
    "Each user can link at most 10 devices. The CLI does not support online-only files.")}
LIMITS_V1 = {"chunk_id": "0f1e2d3c4b5a6978", "version": "1.6", "text": (
    "## File limits\n\n| Limit | Value |\n|-------|-------|\n| Maximum file size | 2 GB |\n\n"
    "Each user can link at most 5 devices.")}
MIGRATION = {"chunk_id": "99aa88bb77cc66dd", "version": "2.0", "text": (
    "| Topic | 1.6 | 2.0 |\n|-------|-----|-----|\n| Maximum file size | 2 GB | 15 GB |\n"
    "| Default retention window | 30 days | 90 days |")}


def _faith(answer: str, chunks=(LIMITS,), question: str = "What are the limits in 2.0?") -> list[dict]:
    output = offline_judge.faithfulness({"question": question, "answer": answer, "chunks": list(chunks)})
    FAITHFULNESS.output_model.model_validate(output)
    return output["claims"]


def test_faithfulness_grounds_a_supported_claim_and_names_its_chunk():
    [claim] = _faith(f"The maximum file size is 15 GB. [{LIMITS['chunk_id']}]")
    assert claim["verdict"] == "grounded" and claim["supporting_chunk_ids"] == [LIMITS["chunk_id"]]
    assert "[" not in claim["claim"], "citation markers are not part of the claim"


def test_faithfulness_normalises_numbers_units_and_number_words():
    for answer in ("The REST API allows 1200 requests per minute per OAuth client.",
                   "Files can be at most 15GB.", "A user can link up to ten devices."):
        [claim] = _faith(answer)
        assert claim["verdict"] == "grounded", answer


def test_faithfulness_flags_a_changed_value_on_the_same_subject_as_an_inconsistency():
    [claim] = _faith("The maximum file size is 20 GB.")
    assert claim["verdict"] == "inconsistency" and claim["supporting_chunk_ids"] == []


def test_faithfulness_flags_invented_specifics_as_fabrication():
    [claim] = _faith("Uploads are throttled with the `kestrel throttle --burst` command to 77 files per hour.")
    assert claim["verdict"] == "fabrication"


def test_faithfulness_flags_unsupported_statements_as_out_of_context():
    [claim] = _faith("Most customers prefer syncing photos from their phones over the weekend.")
    assert claim["verdict"] == "out_of_context"


def test_faithfulness_sees_a_flipped_negation_as_an_inconsistency():
    [claim] = _faith("The CLI supports online-only files.")
    assert claim["verdict"] == "inconsistency"
    [claim] = _faith("The CLI doesn't support online-only files.")
    assert claim["verdict"] == "grounded"


def test_faithfulness_reads_values_in_the_version_the_question_or_claim_names():
    both = (LIMITS, LIMITS_V1)
    [claim] = _faith("The maximum file size is 2 GB.", both, "What is the maximum file size in 2.0?")
    assert claim["verdict"] == "inconsistency", "the 1.6 value does not answer a question about 2.0"
    [claim] = _faith("In 1.6 the maximum file size was 2 GB.", both, "What is the maximum file size in 2.0?")
    assert claim["verdict"] == "grounded" and claim["supporting_chunk_ids"] == [LIMITS_V1["chunk_id"]]
    [claim] = _faith("In 2.0 the maximum file size is 2 GB.", (MIGRATION,))
    assert claim["verdict"] == "inconsistency", "a table column header scopes its values to a version"
    [claim] = _faith("In 2.0 the default retention window is 90 days.", (MIGRATION,))
    assert claim["verdict"] == "grounded"


PLANS = {"chunk_id": "5e6f7a8b9c0d1e2f", "version": "2.0", "text": (
    "| Feature | Starter | Team | Enterprise |\n|---|---|---|---|\n| Price | $4 per user per month | "
    "$10 per user per month | From $18 per user per month |\n| Legal hold | No | No | Yes |\n\n"
    "New vaults larger than 20 GB default to online-only files on Windows and macOS. "
    "On Linux, the default is full sync.")}


def test_faithfulness_reads_table_cells_by_row_and_column():
    [claim] = _faith("The Team plan costs $10 per user per month.", (PLANS,))
    assert claim["verdict"] == "grounded"
    [claim] = _faith("The Starter plan costs $10 per user per month.", (PLANS,))
    assert claim["verdict"] != "grounded", "$10 is the Team column's value, not Starter's"
    [claim] = _faith("Legal hold is included in the Enterprise plan.", (PLANS,))
    assert claim["verdict"] == "grounded"
    [claim] = _faith("Legal hold is included in the Starter plan.", (PLANS,))
    assert claim["verdict"] == "inconsistency", "the Starter cell says No"


def test_faithfulness_does_not_let_a_name_borrow_another_names_fact():
    [claim] = _faith("On Linux, new vaults default to online-only files.", (PLANS,))
    assert claim["verdict"] != "grounded"
    [claim] = _faith("On Linux the default is full sync.", (PLANS,))
    assert claim["verdict"] == "grounded"


def test_faithfulness_checks_every_item_of_a_list_and_every_clause():
    chunk = {"chunk_id": "aa11bb22cc33dd44", "version": None, "text": (
        "Dashboard: storage used, active devices and sync errors in the last 24 hours. "
        "Deleted files stay in the Trash until the retention window ends.")}
    [claim] = _faith("The dashboard shows storage used, active devices, sync errors and each member's monthly bill.",
                     (chunk,))
    assert claim["verdict"] != "grounded"
    [claim] = _faith("Deleted files stay in the Trash until the retention window ends, and support can recover "
                     "them from encrypted backups afterwards.", (chunk,))
    assert claim["verdict"] != "grounded"


def test_faithfulness_splits_claims_at_citations_and_drops_pleasantries():
    claims = _faith(f"The maximum file size is 15 GB [{LIMITS['chunk_id']}] Each user can link at most 10 devices "
                    f"[{LIMITS['chunk_id']}]. Hope this helps! Let me know if you have other questions.")
    assert [c["verdict"] for c in claims] == ["grounded", "grounded"]
    [claim] = _faith("No, the CLI does not support online-only files.")
    assert claim["verdict"] == "grounded", "an answer particle does not negate the sentence"


def test_a_declining_answer_makes_no_claim():
    for answer in (DECLINE, DECLINE_ANSWER, "I'm not sure. Please contact support."):
        assert _faith(answer) == [], answer
    assert formulas.faithfulness({"claims": []})[0] == 1.0


def _relevance(question: str, answer: str) -> tuple[dict, float]:
    output = offline_judge.answer_relevance({"question": question, "answer": answer})
    judgment = ANSWER_RELEVANCE.output_model.model_validate(output).model_dump()
    return output, formulas.answer_relevance(question, judgment, HashingEmbedder())


def test_declines_and_restatements_of_the_question_are_noncommittal_and_score_zero():
    question = "How many OAuth clients can a workspace register?"
    for answer in (DECLINE, DECLINE_ANSWER, "It depends on your setup.", "I'm not sure, please contact support.",
                   "You can do this in the admin console. See the documentation for details.", "",
                   "A workspace can register OAuth clients.",
                   "I cannot say how many OAuth clients a workspace can register."):
        output, score = _relevance(question, answer)
        assert output["noncommittal"] and score == 0.0, answer
    output, score = _relevance(question, "A workspace can register up to 50 OAuth clients. [a1b2c3d4e5f6]")
    assert not output["noncommittal"] and score == 1.0
    assert len(set(output["questions"])) == 3 and all("a1b2c3d4" not in q for q in output["questions"])


def test_an_answer_of_the_wrong_type_gets_half_its_part():
    question = "When was Kestrel Labs founded?"
    assert _relevance(question, "Kestrel Labs was founded in 2019.")[1] == 1.0
    assert _relevance(question, "In 2019.")[1] == 1.0, "an elliptical answer covers the part"
    assert _relevance(question, "Kestrel Labs was founded by three engineers.")[1] == 0.5, "no time for 'when'"
    why = "Why does the agent create conflict copies?"
    assert _relevance(why, "The agent creates conflict copies because two devices changed the same file.")[1] == 1.0
    assert _relevance(why, "The agent creates conflict copies in the sync folder.")[1] == 0.5
    assert _relevance("Who can release a legal hold?", "An owner.")[1] == 1.0


def test_a_question_that_names_nothing_is_covered_by_any_informative_sentence_and_never_crashes():
    assert _relevance("Why?", "Because the cache expired.")[0]["question_parts"] == [{"part": "Why?", "answered": 1.0}]
    assert _relevance("What is it?", "It is.")[0]["question_parts"] == [{"part": "What is it?", "answered": 0.0}]


def test_every_part_of_the_question_counts_for_completeness():
    question = "What does the Starter plan cost, and how much storage does it include?"
    output, partial = _relevance(question, "Starter costs $4 per user per month.")
    assert [p["part"] for p in output["question_parts"]] == ["What does the Starter plan cost",
                                                            "how much storage does it include"]
    assert [p["answered"] for p in output["question_parts"]] == [pytest.approx(2 / 3), 0.0]
    assert partial == pytest.approx(1 / 3), "'plan' unsaid: 2/3 of part one, nothing of part two"
    full = _relevance(question, "Starter costs $4 per user per month and includes 250 GB of storage.")[1]
    assert full == pytest.approx((2 / 3 + 1) / 2)


def test_padding_an_answer_with_other_topics_lowers_its_relevance():
    question = "How often are vault keys rotated in 2.0?"
    focused, score = _relevance(question, "Vault keys are rotated automatically every 60 days.")
    padded, padded_score = _relevance(question, "Blocks are 8 MB. TLS 1.3 is required. The admin console has a "
                                                "dark mode. Vault keys are rotated every 60 days.")
    assert [s["addresses_question"] for s in padded["statements"]] == [True, False, False, True], \
        "a leading short value reads as an elliptical answer; the asides in the middle do not address it"
    assert (score, padded_score) == (1.0, 0.5)


def test_reverse_questions_ask_for_the_values_the_answer_gives():
    output = offline_judge.answer_relevance({"question": "What about snapshots?",
                                             "answer": "Snapshots are taken every 15 minutes and kept for 90 days. "
                                                       "The Team plan costs $10 per user per month."})
    joined = " ".join(output["questions"]).lower()
    assert "how often" in joined and "how long" in joined and "how much" in joined
    assert not re.search(r"\b(?:15|90|10)\b", joined), "questions do not give the answer's values away"


def test_context_precision_marks_chunks_that_support_the_reference_in_order():
    other = {"chunk_id": "1234567890abcdef", "version": "2.0",
             "text": "Bandwidth schedules apply different caps at night."}
    output = offline_judge.context_precision({"question": "What is the maximum file size in 2.0?",
                                              "reference": "15 GB.", "chunks": [other, LIMITS_V1, LIMITS]})
    CONTEXT_PRECISION.output_model.model_validate(output)
    assert [(v["chunk_id"], v["useful"]) for v in output["verdicts"]] == [
        (other["chunk_id"], False), (LIMITS_V1["chunk_id"], False), (LIMITS["chunk_id"], True)]


def test_reference_statements_split_sentences_semicolons_and_full_clauses():
    output = offline_judge.reference_statements({
        "question": "What are the limits?",
        "reference": "The maximum file size is 15 GB; the path length is limited to 400 characters. "
                     "Each user can link 10 devices, and a workspace can register 50 OAuth clients."})
    REFERENCE_STATEMENTS.output_model.model_validate(output)
    assert output["statements"] == ["The maximum file size is 15 GB", "the path length is limited to 400 characters.",
                                    "Each user can link 10 devices.", "a workspace can register 50 OAuth clients."]


def test_context_recall_attributes_statements_with_their_numbers_to_one_chunk():
    output = offline_judge.context_recall({"statements": ["The maximum file size is 15 GB.",
                                                          "Each user can link at most 10 devices.",
                                                          "Each user can link at most 12 devices.",
                                                          "Snapshots are taken every 15 minutes."],
                                           "chunks": [LIMITS_V1, LIMITS]})
    CONTEXT_RECALL.output_model.model_validate(output)
    assert [s["attributed"] for s in output["statements"]] == [True, True, False, False]
    assert output["statements"][0]["chunk_id"] == LIMITS["chunk_id"]
    assert output["statements"][2]["chunk_id"] is None


def test_a_question_is_read_as_parts_with_their_focus_and_expected_answer_type():
    from rag_assets.scoring.offline_judge.question import parts

    def read(question: str) -> list[tuple[str, str]]:
        return [(p.text, p.expects) for p in parts(question)]

    assert read("What does the Starter plan cost, and how much storage does it include?") == [
        ("What does the Starter plan cost", "thing"), ("how much storage does it include", "quantity")]
    assert read("When deciding whether to use CoT for a task, what are two key factors to consider?") == [
        ("When deciding whether to use CoT for a task, what are two key factors to consider", "thing")]
    assert "cot" in parts("When deciding whether to use CoT, what matters?")[0].focus, "the condition is the topic"
    assert [read(q)[0][1] for q in ("What year did the Normans invade England?", "In what country is Normandy?",
                                    "Who was the Norse leader?", "Why does the agent retry?", "How do I rotate a key?",
                                    "Is the CLI able to sync?", "Which port does the Hub use?")] == [
        "time", "place", "person", "reason", "method", "yes_no", "thing"]
