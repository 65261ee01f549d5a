"""The offline judge against labelled pairs from the sample corpus, and its signals on hand-computed cases.

The pairs (tests/scoring/judge_pairs.yaml) are scored with the real formulas and the default
HashingEmbedder: the better member of each pair must score strictly higher (a tie is a failure). They are
dev figures: the judge this one replaced was developed on these pairs (with the sample corpus's product
name and synonyms in its word lists) and scored at least 0.96 / 0.80 / 0.80; the lexical judge has no
word of the corpus and is not fitted to them. The targets are its measured figures (0.741, 0.875, 0.981),
rounded down, so a change that loses ground fails.
"""

from __future__ import annotations

import json
import math
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
from rag_assets.scoring import metrics, offline_judge
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
from rag_assets.scoring.offline_judge.support import Evidence
from rag_assets.scoring.offline_judge.text import (
    clock_times, is_decline, name_runs, names, numbers, numbers_stated, statements, stems, strip_citations,
)
from rag_assets.scoring.offline_judge.answer_relevance import question_parts
from tests.conftest import PROJECT_ROOT, SAMPLE_CORPUS

PAIRS = yaml.safe_load((Path(__file__).parent / "judge_pairs.yaml").read_text(encoding="utf-8"))
FAITHFULNESS_TARGET, RELEVANCE_TARGET, PRECISION_TARGET = 0.74, 0.87, 0.98


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
            values.append(metrics.faithfulness.formula(judgment)[0])
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
            values.append(metrics.answer_relevance.formula(pair["question"], judgment, embedder))
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
            grades = {v["chunk_id"]: v["score"] for v in judgment["verdicts"]}
            values.append(metrics.context_precision.formula([grades[c["chunk_id"]] for c in context]))
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
# The signals on hand-computed cases. IDF weights: ln((N + 1) / (df + 0.5)) over the N sentences of
# the chunks; support: the weight of a statement's stems one sentence holds over the weight of all.
# ------------------------------------------------------------------------------------------------

BACKUPS = {"chunk_id": "a", "text": "Backups run every night. Logs are kept for 30 days."}
ENCRYPTED = {"chunk_id": "b", "text": "Backups are encrypted with AES."}
# sentences: {backup, run, everi, night}, {log, kept, 30, day}, {backup, encrypt, ae}; N = 3
SHARED, ONCE = math.log(4 / 2.5), math.log(4 / 1.5)  # df 2 (backup), 1; a stem in no sentence weighs as df 1


def _claims(answer: str, *chunks: Mapping[str, str], question: str = "How do backups work?") -> list[tuple]:
    output = offline_judge.faithfulness({"question": question, "answer": answer, "chunks": list(chunks)})
    FAITHFULNESS.output_model.model_validate(output)
    return [(c["claim"], c["verdict"], c["supporting_chunk_ids"], c["support"]) for c in output["claims"]]


def test_text_is_read_as_stemmed_content_words_numbers_names_and_statements():
    assert stems("The files were linked nightly") == ["file", "link", "night"]
    assert stems("Set max_retries in sync.conf") == ["set", "max", "retri", "sync.conf"], "an identifier's parts"
    assert numbers("1,200 requests in 2.0 during the 1050s") == {"1200", "2.0", "1050"}
    assert names("Backups go to Amazon Glacier daily.") == {"amazon", "glacier"}, "the opening word is no name"
    assert statements("The agent uploads changed files every hour; the server keeps old versions for thirty days. "
                      "Is it fast? It is [1].") == ["The agent uploads changed files every hour",
                                                    "the server keeps old versions for thirty days."], \
        "a question is no statement, nor a sentence without a content word"
    assert statements("Files sync, and they are small.") == ["Files sync, and they are small."], \
        "a clause of fewer than three content words stays with its sentence"
    assert [is_decline(s) for s in ("I'm not sure about that.", "The passage does not mention the price.",
                                    "It depends on a number of factors.", "The price is 10 dollars.")] == [
        True, True, True, False]


def test_support_is_the_idf_weighted_share_held_by_the_best_single_sentence():
    evidence = Evidence([BACKUPS, ENCRYPTED])
    assert evidence.weight("backup") == pytest.approx(SHARED) and evidence.weight("zzz") == pytest.approx(ONCE)
    score, best = evidence.best("Backups run every night in the cloud.")  # backup, run, everi, night, cloud
    assert score == pytest.approx((SHARED + 3 * ONCE) / (SHARED + 4 * ONCE))
    assert [s.text for s in best] == ["Backups run every night."]
    score, _ = evidence.best("Encrypted logs are kept.")  # encrypt, log, kept: no sentence holds all three
    assert score == pytest.approx(2 * ONCE / (3 * ONCE)), "pooled words of two sentences are not support"


def test_faithfulness_gives_each_claim_a_verdict_and_a_graded_support():
    assert _claims("Backups run every night [a]. Logs are kept for 30 days.", BACKUPS, ENCRYPTED) == [
        ("Backups run every night.", "grounded", ["a"], 1.0), ("Logs are kept for 30 days.", "grounded", ["a"], 1.0)]
    assert _claims("Logs are kept for 90 days.", BACKUPS)[0][1:] == ("inconsistency", [], 0.0), \
        "90 is in no chunk, whose sentence on the rest of the claim gives 30"
    assert _claims("Backups run every 90 minutes.", ENCRYPTED)[0][1:] == ("fabrication", [], 0.0), \
        "90 is in no chunk, and no sentence with a number supports the rest"
    assert _claims("Backups are copied to Glacier.", BACKUPS)[0][1] == "fabrication", "a name found in no chunk"
    assert _claims("Backups do not run every night.", BACKUPS)[0][1] == "grounded", \
        "negation is not read (see offline_judge.faithfulness): a model judge's job"
    with_days = {"chunk_id": "c", "text": "Logs are kept for 30 days. Reports take 7 days."}
    assert _claims("Logs are kept for 7 days.", with_days)[0][1] == "inconsistency", "another value of the chunks"
    [(_, verdict, chunks, support)] = _claims("Backups need a weekly restore test.", BACKUPS, ENCRYPTED)
    # backup, need, week, restor, test: only "backup" is held, by two sentences of df 2
    assert (verdict, chunks) == ("out_of_context", []) and support == pytest.approx(
        SHARED / (SHARED + 4 * ONCE), abs=1e-6)
    [(_, verdict, chunks, support)] = _claims("Backups run every night in the cloud.", BACKUPS, ENCRYPTED)
    assert (verdict, chunks) == ("grounded", ["a"]) and support == pytest.approx(
        (SHARED + 3 * ONCE) / (SHARED + 4 * ONCE), abs=1e-6), "grounded, less than one with a word no chunk holds"
    assert _claims("I cannot answer this from the documentation.", BACKUPS) == [], "a decline claims nothing"


def test_a_name_or_number_the_question_gives_is_not_invented_but_not_grounded_either():
    assert _claims("Backups to Glacier run every night.", BACKUPS)[0][1] == "fabrication"
    assert _claims("Backups to Glacier run every night.", BACKUPS, question="Do backups to Glacier run nightly?"
                   )[0][1:] == ("out_of_context", [], 0.5), "the user named Glacier; no chunk does"
    assert _claims("Version 4 backups run every night.", BACKUPS, question="Do version 4 backups run nightly?"
                   )[0][1:] == ("out_of_context", [], 0.5), "the user gave the 4; no chunk does"
    assert _claims("Logs are kept for 90 days.", BACKUPS, question="Are logs kept for 90 days?")[0][1] == \
        "inconsistency", "a false premise taken up: the chunk's sentence gives 30"
    yearly = {"chunk_id": "y", "text": "Logs are kept for a year."}
    assert _claims("Logs are kept for 1 year.", yearly, question="Which one keeps logs longer?")[0][1] == \
        "fabrication", "a question's number words are no digits it gives"


def test_inline_list_markers_are_no_numbers():
    assert numbers("You need to 1) write tests, and 2) run them (version 3) daily.") == {"3"}
    assert numbers("(1) write tests, (2) run them") == set() and numbers("(1) a) 2)") == set()
    assert numbers("at 10:30) we") == {"10:30"} and numbers("ratio 3:1) and") == {"3:1"}, "no tail cut off"
    assert _claims("You need to 1) check that backups run every night.", BACKUPS)[0][1] == "grounded"


def test_a_claims_digit_is_found_in_a_number_the_chunk_writes_in_words():
    chunk = {"chunk_id": "e", "text": "The single reached number one and stayed there for three weeks."}
    assert _claims("The single reached number 1 for 3 weeks.", chunk)[0][1] == "grounded"
    assert _claims("The single reached number 2 for 3 weeks.", chunk)[0][1] == "inconsistency"
    assert numbers_stated("number one for twenty weeks, 40 days") == {"1", "20", "40"}
    assert numbers("the one that counts") == frozenset(), "a claim's words are not read as numbers"


def test_digit_groups_split_by_a_spaced_separator_are_read_as_one_number_and_as_a_list():
    assert numbers_stated("some 235, 000 people") == {"235", "000", "235000"}
    assert numbers_stated("a 235 000 km orbit") == {"235", "000", "235000"}
    assert numbers_stated("64, 128 and 256") == {"64", "128", "256", "64128"}, "a list stays a list too"
    assert numbers_stated("in 2010, 500 died") == {"2010", "500"}, "four digits are no thousands group"
    assert numbers_stated("1, 200, 000 and 1 234 567") >= {"1200000", "1234567"}, "every group of a million"
    assert numbers_stated("On March 3, 250 people came") == {"3", "250"}, "a day and a count, not 3,250"
    assert "1234567" in numbers_stated("Active users declined 1 234 567 this year."), "'declined' is no December"
    users = {"chunk_id": "u", "text": "Active users reached 1,234,567 this year."}
    assert _claims("Active users reached 1 234 567 this year.", users)[0][1] == "grounded", "a claim's spaced groups"
    assert _claims("Active users reached 1 234 568 this year.", users)[0][1] == "inconsistency"
    tour = {"chunk_id": "t", "text": "The tour drew 2,500 visitors in 9 buses."}
    assert _claims("The tour drew 2 500 visitors in 2 buses.", tour)[0][1] == "inconsistency", "the other 2 stays"
    assert numbers_stated("it lasts twenty-four months, or thirty one days") >= {"24", "31"}
    assert "3250" in numbers_stated("In March a crowd of 3, 250 came"), (
        "only the words just before are read for a month: a scan of all the text before each number took minutes "
        "on a long table of numbers")
    assert numbers("About 235, 000 people") == {"235", "000"}, "a claim's own numbers are read as written"
    march = {"chunk_id": "m", "text": "Police said some 235, 000 people joined the march."}
    assert _claims("Some 235,000 people joined the march.", march)[0][1] == "grounded"
    assert _claims("Some 236,000 people joined the march.", march)[0][1] == "inconsistency"


def test_a_number_the_chunks_hold_is_a_changed_value_only_where_the_supporting_sentence_gives_another():
    xbox = {"chunk_id": "x", "text": "The Xbox 360 is a games console. It runs Windows Media Center from its menus."}
    assert _claims("The Xbox 360 runs Windows Media Center from its menus.", xbox)[0][1] == "grounded", (
        "the supporting sentence gives no number: the claim joins two sentences, it changes no value")
    arcade = {"chunk_id": "a", "text": "The Xbox 360 is a games console. The Arcade model has 4 gigabytes."}
    assert _claims("The Arcade model has 360 gigabytes.", arcade)[0][1] == "inconsistency"


def test_a_changed_value_needs_a_number_the_claim_does_not_state():
    sapp = {"chunk_id": "s", "text": "Sapp was charged with two counts of assault in February. In a video, Sapp, 42, "
            "cries and confesses."}
    assert _claims("Sapp, 42, was charged with two counts of assault in February.", sapp)[0][1] == "grounded", (
        "the supporting sentence's only number is the claim's own 'two'")
    assert _claims("Sapp, 42, was charged with 3 counts of assault in February.", sapp)[0][1] == "inconsistency"


def test_a_name_is_held_where_any_word_of_it_is():
    assert name_runs("This is explained by Ray Kurzweil and by Purple Magazine.") == [
        {"ray", "kurzweil"}, {"purpl", "magazin"}]
    kurzweil = {"chunk_id": "k", "text": "Kurzweil argued that each generation of technology builds on the last."}
    assert _claims("Ray Kurzweil argued that each generation of technology builds on the last.", kurzweil)[0][1] \
        == "grounded"
    assert _claims("Ray Bradbury argued that each generation of technology builds on the last.", kurzweil)[0][1] \
        == "fabrication", "a name none of whose words the chunks hold is still invented"


def test_a_sentence_with_a_decline_phrase_that_states_something_is_a_claim():
    assert is_decline("I'm not sure how good they are.") and is_decline("It depends.")
    assert not is_decline("Water does not contain proteins or fats, so it forms no skin when heated.")
    assert not is_decline("I don't know him, but he is a great athlete and philanthropist.")
    warranty = "What is the warranty period of the X200 printer?"
    for framed in ("Based on the provided context, I cannot determine the warranty period.",
                   "Unfortunately, the retrieved documents do not specify the warranty period.",
                   "I am sorry, but the available documentation does not say how long the warranty lasts."):
        assert is_decline(framed, warranty), "where the answer looked and apologies state nothing"
    question = "In what country is Normandy located?"
    restated = "I cannot say in what country Normandy is located; it depends on how one reads it."
    assert is_decline(restated, question) and not is_decline(restated), "the question's words state nothing"
    assert is_decline(f'The text gives no definite answer to "{question}".'), "a decline that speaks of the source"
    milk = {"chunk_id": "k", "text": "Milk forms a skin when heated, because its proteins set."}
    answer = "Water does not contain proteins, so it forms no skin. I am not sure."
    claims = _claims(answer, milk, question="What happens when milk is heated?")
    assert [c[0] for c in claims] == ["Water does not contain proteins, so it forms no skin."]
    assert [c[0] for c in _claims(answer, milk, question="Why does milk form a skin?")] == [
        "Water does not contain proteins, so it forms no skin."], "'does not contain' declines about a source only"


def test_a_model_judge_s_usual_declines_and_pleasantries_claim_nothing():
    """Phrasings a tester found scored as claims: contractions, other verbs, a decline that speaks of the sources
    and rewords the question, and pleasantries."""
    warranty = "What is the warranty period?"
    for decline in ("The provided context doesn't include the warranty period.",
                    "The documents do not mention how long the device is covered after purchase.",
                    "There is no information in the given sources about the duration of coverage for this device.",
                    "I couldn't find the warranty period.", "The context is silent on the warranty.",
                    "None of the provided sources discuss warranty terms.",
                    "I don't have enough information to answer.",
                    "The warranty period is not found in the provided context.",
                    "I hope this helps!", "Let me know if you need anything else!"):
        assert is_decline(decline, warranty), decline
    devices = {"chunk_id": "d", "text": "The plan covers 64 devices."}
    assert _claims("It covers 64 devices. I hope this helps!", devices, question="How many devices?") == [
        ("It covers 64 devices.", "grounded", ["d"], 1.0)]


def test_a_fact_beside_a_decline_phrase_stays_a_claim():
    """A reviewer's cases: with a number left, or with the phrase not about a source, the sentence states
    something."""
    warranty = "What is the warranty period?"
    for claim in ("The text message arrives within 5 seconds; it does not include the PIN.",
                  "Error 42 is raised when the document is not found in the index.",
                  "The library is open source and does not include telemetry.",
                  "The manual recommends a damp cloth and does not mention solvents.",
                  "Smith wrote the article in 2019, but the text does not say where.",
                  "Cruise control isn't included.", "Let me know if the device stays off after that."):
        assert not is_decline(claim, warranty), claim
    sms = {"chunk_id": "s", "text": "The verification text message arrives within 30 seconds."}
    assert [c[1] for c in _claims("The text message arrives within 5 seconds; it does not include the PIN.", sms)
            ][0] == "inconsistency"


def test_citation_markers_of_common_formats_are_no_claimed_numbers():
    months = {"chunk_id": "m", "text": "The warranty lasts 24 months."}
    for cited in ("The warranty lasts 24 months.[^1]", "The warranty lasts 24 months (Source 1).",
                  "The warranty lasts 24 months<sup>1</sup>.", "The warranty lasts 24 months【4:0†source】.",
                  "The warranty lasts 24 months (source: manual.pdf, page 12)."):
        assert [c[1] for c in _claims(cited, months)] == ["grounded"], cited
    rate = {"chunk_id": "r", "text": "Paid plans (see below: they allow 1,000 requests per minute) are fast."}
    assert _claims("Paid plans allow 1,000 requests per minute.", rate)[0][1] == "grounded", "a fact in parentheses"
    power = {"chunk_id": "p", "text": "It handles 10<sup>6</sup> requests."}
    assert _claims("It handles 10<sup>9</sup> requests.", power)[0][1] == "inconsistency", "an exponent is no citation"


def test_a_version_written_with_a_v_is_a_number():
    fixed = {"chunk_id": "f", "text": "The bug was fixed in v1.2.3 of the client."}
    assert numbers("fixed in v1.2.3 and V2") == {"1.2.3", "2"}
    assert _claims("The bug was fixed in version 1.2.3 of the client.", fixed)[0][1] == "grounded"
    assert _claims("The bug was fixed in v1.2.4 of the client.", fixed)[0][1] == "inconsistency"


def test_a_clock_time_is_one_number_whatever_its_notation():
    """Opening hours exported as data ("11:0-22:0") and written out in an answer ("from 11 AM to 10 PM") are the
    same times: the answer's "PM" was a fabricated name and "10" a fabricated number."""
    assert clock_times("open 11:0-22:0, or 5:30 p.m. and 12 am") == "open  11:00 - 22:00 , or  17:30  and  0:00 "
    assert clock_times("at 10:30:15, a 1.5:1 ratio") == "at 10:30:15, a 1.5:1 ratio", "no part of a longer number"
    hours = {"chunk_id": "h", "text": "The shop is open Mondays from 11:0 to 22:0."}
    assert _claims("It is open Mondays from 11 AM to 10 PM.", hours)[0][1:] == ("grounded", ["h"], 1.0)
    assert _claims("It is open Mondays from 11 AM to 9 PM.", hours)[0][1:] == ("inconsistency", [], 0.0)
    assert numbers_stated("from 11 AM") == {"11", "11:00"}, "a chunk's time is also read as written"


def test_long_blank_runs_cost_linear_time():
    """Two patterns matched a run of blanks from every position in it: a question with 4,000 spaces took 193 s
    and a chunk with 80,000 spaces 11 s per call. Each now starts at the run's first blank only, so the same
    inputs read at once; a regression would make this test take minutes."""
    assert question_parts("How many requests" + " " * 50_000 + "are allowed?") == [
        "How many requests" + " " * 50_000 + "are allowed?"]
    assert strip_citations("a" + " " * 200_000 + "b [1]") == "a" + " " * 200_000 + "b"


def test_faithfulness_counts_graded_support_and_keeps_the_verdict_count_for_a_model_judge():
    claims = [{"claim": "x", "verdict": "grounded", "support": 1.0},
              {"claim": "y", "verdict": "out_of_context", "support": 0.25}]
    assert metrics.faithfulness.formula({"claims": claims}) == (0.625, {"grounded": 1, "out_of_context": 1,
                                                                        "inconsistency": 0, "fabrication": 0})
    unsupported = [{k: v for k, v in c.items() if k != "support"} for c in claims]
    assert metrics.faithfulness.formula({"claims": unsupported})[0] == 0.5
    lenient = [{"claim": "x", "verdict": "fabrication", "support": 1.0}, {"claim": "y", "verdict": "inconsistency",
               "support": 0.9}, {"claim": "z", "verdict": "out_of_context", "support": 0.8},
               {"claim": "w", "verdict": "grounded", "support": 0.1}]
    assert metrics.faithfulness.formula({"claims": lenient})[0] == 0.25, (
        "a tester's fake judge: every claim a fabrication with support 1.0 scored faithfulness 1.000; the verdict "
        "bounds the support: 0 + 0 + 0.5 + 0.5 over 4")


def test_answer_relevance_covers_each_part_and_halves_a_part_without_the_kind_of_answer_it_asks():
    question = "When do backups run and where are logs kept?"
    output = offline_judge.answer_relevance({"question": question, "answer": "Backups run every night."})
    ANSWER_RELEVANCE.output_model.model_validate(output)
    assert output["question_parts"] == [{"part": "When do backups run", "answered": 0.5},
                                        {"part": "where are logs kept?", "answered": 0.0}], \
        "both words of part 1, but no time ('night' is no value); no word of part 2"
    answered = offline_judge.answer_relevance({"question": question,
                                               "answer": "Backups run at 2 am. Logs are kept on the server."})
    assert [p["answered"] for p in answered["question_parts"]] == [1.0, 1.0]
    assert not answered["noncommittal"] and answered["questions"] == [
        "Backups run at 2 am.", "Logs are kept on the server.", "Backups run at 2 am."]


def test_answer_relevance_follows_the_topic_and_flags_declines_and_restatements():
    output = offline_judge.answer_relevance({"question": "How are backups protected?", "answer": (
        "Backups are encrypted with AES. The keys rotate yearly. Our office has a nice garden.")})
    # 1: shares "backup"; 2: shares nothing with the question, but "AES"? no: shares nothing with statement 1
    assert [s["addresses_question"] for s in output["statements"]] == [True, False, False]
    chained = offline_judge.answer_relevance({"question": "How are backups protected?", "answer": (
        "Backups are encrypted with AES keys. The keys rotate yearly.")})
    assert [s["addresses_question"] for s in chained["statements"]] == [True, True], "continues on 'key'"
    for answer in ("I'm not sure; it is hard to say.", "Backups are protected.", ""):
        output = offline_judge.answer_relevance({"question": "How are backups protected?", "answer": answer})
        assert output["noncommittal"] and output["question_parts"][0]["answered"] == 0.0, answer


def test_context_precision_grades_each_chunk_so_different_contexts_do_not_tie():
    inputs = {"question": "How long are logs kept?", "reference": "Logs are kept for 30 days.",
              "chunks": [BACKUPS, ENCRYPTED]}
    output = offline_judge.context_precision(inputs)
    CONTEXT_PRECISION.output_model.model_validate(output)
    # question: log, kept (each df 1), held by chunk a's second sentence alone: coverage 1, focus (0 + 1) / 2,
    # relevance sqrt(1 * 1/2); reference: that same sentence supports it fully; grade (sqrt(1/2) + 1) / 2
    assert output["verdicts"] == [{"chunk_id": "a", "useful": True, "score": round((math.sqrt(0.5) + 1) / 2, 6)},
                                  {"chunk_id": "b", "useful": False, "score": 0.0}]
    alone = offline_judge.context_precision({"question": "How long are logs kept?", "reference": "",
                                             "chunks": [{"chunk_id": "a", "text": "Logs are kept."}]})
    # no reference: relevance alone; "how long" only shapes the question: log, kept both held
    assert alone["verdicts"] == [{"chunk_id": "a", "useful": True, "score": 1.0}]
    half = offline_judge.context_precision({"question": "Are logs or reports kept?", "reference": "",
                                            "chunks": [{"chunk_id": "x", "text": "Logs are kept."},
                                                       {"chunk_id": "y", "text": "Nothing here."}]})
    # log, kept df 1 of N=2, and report (df 0, weighed as df 1): each ln(3/1.5); x holds log and kept
    assert [v["score"] for v in half["verdicts"]] == [pytest.approx(2 / 3, abs=1e-6), 0.0]
    padded = offline_judge.context_precision({"question": "Are logs kept?", "reference": "", "chunks": [
        {"chunk_id": "p", "text": "Logs are kept. Backups run nightly. Keys rotate yearly. Disks are small."}]})
    # coverage 1 (log, kept), focus 1/4 (one of four sentences holds them): grade sqrt(1/4); still useful
    assert padded["verdicts"] == [{"chunk_id": "p", "useful": True, "score": 0.5}], "padding lowers the grade"
    assert metrics.context_precision.reason(padded) == "1 of 1 retrieved chunks useful: p (grade 0.50)"
    spread = offline_judge.context_precision({"question": "Are logs kept?", "reference": "", "chunks": [
        {"chunk_id": "s", "text": "Logs exist. They are kept."}]})
    # coverage 1, focus 1/2 (each sentence holds one of two equally weighted stems): grade sqrt(1/2); no sentence
    # holds more than half of what is asked, so not useful
    assert spread["verdicts"] == [{"chunk_id": "s", "useful": False, "score": round(math.sqrt(0.5), 6)}]


def test_graded_context_precision_is_average_precision_of_the_grades():
    assert metrics.context_precision.formula([True, False, True]) == pytest.approx((1 + 2 / 3) / 2), "yes/no: AP"
    assert metrics.context_precision.formula([0.4]) == pytest.approx(0.4), "one chunk scores its grade"
    assert metrics.context_precision.formula([0.0, 0.4]) == pytest.approx(0.2), "at rank 2: half of it"
    assert metrics.context_precision.formula([0.8, 0.2]) == pytest.approx((0.8 * 0.8 + 0.2 * 0.5) / 1.0)
    assert metrics.context_precision.formula([0.0, 0.0]) == 0.0 and metrics.context_precision.formula([]) == 0.0


def test_reference_statements_and_context_recall_attribute_each_statement_to_its_best_chunk():
    statements_out = offline_judge.reference_statements({"reference": (
        "Backups run every night and logs are kept for 30 days. I am not sure about restores.")})
    REFERENCE_STATEMENTS.output_model.model_validate(statements_out)
    assert statements_out == {"statements": ["Backups run every night and logs are kept for 30 days."]}, \
        "'and' alone does not split; the decline is dropped"
    assert offline_judge.reference_statements({"reference": "I don't know."}) == {"statements": ["I don't know."]}
    output = offline_judge.context_recall({"statements": ["Logs are kept for 30 days.", "Logs are kept for 60 days.",
                                                          "Backups are encrypted."], "chunks": [BACKUPS, ENCRYPTED]})
    CONTEXT_RECALL.output_model.model_validate(output)
    assert [(s["attributed"], s["chunk_id"]) for s in output["statements"]] == [(True, "a"), (False, None), (True, "b")]


def test_no_word_list_of_the_judge_names_the_sample_corpus():
    source = "\n".join(p.read_text(encoding="utf-8").lower()
                       for p in (PROJECT_ROOT / "rag_assets" / "scoring" / "offline_judge").glob("*.py"))
    assert "kestrel" not in source and sum(len(p.read_text(encoding="utf-8").splitlines()) for p in (
        PROJECT_ROOT / "rag_assets" / "scoring" / "offline_judge").glob("*.py")) < 1000
