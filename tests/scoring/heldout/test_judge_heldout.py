"""The offline judge beside the lexical baseline on the held-out human-labelled samples (see PROVENANCE.txt).

The samples are built locally by scripts/make_heldout_samples.py from fetched public data and are not
committed, so these tests skip where they are absent. The figures are those bench/judge_heldout.py prints
(pairwise accuracy with ties counting half; ROC-AUC for detection), computed on the built files. The judge
passes the baseline on the two pairwise sets and on CNN/DM detection; on XSum detection it stays below it,
inside the baseline's interval: that is asserted as measured, not hidden. These sets were measured before and
after changes to the judge, so they are no longer cleanly held out (see docs/judge.md).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT

HELDOUT = Path(__file__).parent
pytestmark = pytest.mark.skipif(not (HELDOUT / "qags_cnndm.jsonl").is_file(), reason=(
    "held-out samples not built: run scripts/make_heldout_samples.py (see tests/scoring/heldout/PROVENANCE.txt)"))


@pytest.fixture(scope="module")
def measured():
    spec = importlib.util.spec_from_file_location("judge_heldout", PROJECT_ROOT / "bench" / "judge_heldout.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # its dataclass looks its module up there
    spec.loader.exec_module(bench)
    return bench, {m.name.split(":")[0]: m for m in bench.heldout(HELDOUT)}


def test_the_samples_hold_the_counts_the_script_writes(measured):
    _, measured = measured
    assert {name: m.n for name, m in measured.items()} == {
        "QAGS CNN/DM": 108, "SQuAD 2.0": 96, "SQuAD 2.0 padded (by construction)": 96, "QAGS CNN/DM summaries": 235, "QAGS XSum summaries": 239}


def test_on_the_pairwise_sets_the_judge_is_at_least_the_baseline(measured):
    _, measured = measured
    faithfulness, context = measured["QAGS CNN/DM"], measured["SQuAD 2.0"]
    assert (round(faithfulness.judge.value, 3), round(faithfulness.baseline.value, 3)) == (0.778, 0.542)
    assert (round(context.judge.value, 3), round(context.baseline.value, 3)) == (0.990, 0.927)
    assert faithfulness.judge.value >= faithfulness.baseline.value and context.judge.value >= context.baseline.value


def test_context_relevance_no_longer_ties(measured):
    _, measured = measured
    context = measured["SQuAD 2.0"]
    assert (context.judge_ties, context.baseline_ties) == (0, 12)


def test_a_context_padded_with_another_paragraph_scores_lower(measured):
    """Labels by construction: the paragraph a question was written on, alone, against the same paragraph
    followed by the distractor in one chunk. The baseline (the answer's words in the context) ties on all but
    one pair; read over the chunk's pooled words, the judge had tied on 38 and ranked the padded one first on
    27."""
    _, measured = measured
    m = measured["SQuAD 2.0 padded (by construction)"]
    assert (round(m.judge.value, 3), round(m.baseline.value, 3), m.judge_ties) == (0.833, 0.495, 0)


def test_on_cnndm_detection_the_judge_passes_the_baseline(measured):
    _, measured = measured
    m = measured["QAGS CNN/DM summaries"]
    assert (round(m.judge.value, 3), round(m.baseline.value, 3)) == (0.736, 0.594)


def test_on_xsum_detection_the_judge_stays_inside_the_baselines_interval_but_below_it(measured):
    _, measured = measured
    m = measured["QAGS XSum summaries"]
    assert (round(m.judge.value, 3), round(m.baseline.value, 3)) == (0.660, 0.677)
    assert m.baseline.low < m.judge.value < m.baseline.value


@pytest.mark.skipif(not (HELDOUT / "begin_wow.jsonl").is_file() or not (HELDOUT / "lfqa_sentences.jsonl").is_file(),
                    reason="BEGIN and LFQA samples not built (make_heldout_samples.py --begin, --lfqa)")
def test_on_begin_and_lfqa_the_baseline_leads_but_on_lfqa_pairs(measured):
    """Measured on sets first met after the judge was built (PROVENANCE.txt): the baseline leads on every row
    but LFQA's pairs, beyond the intervals on BEGIN, where a reply that asks back claims nothing and so scores 1.
    Kept to the responses that state something, BEGIN's rows are within a point of the baseline (TopicalChat
    above it): the lead is that definition. LFQA's supported sentences judged fabricated or inconsistent were
    read one by one for v3's name rule."""
    bench, _ = measured
    rows = {m.name.split(":")[0]: m for m in [*bench.begin(HELDOUT), *bench.lfqa(HELDOUT)]}
    figures = {name: (m.n, round(m.judge.value, 3), round(m.baseline.value, 3)) for name, m in rows.items()}
    assert figures == {
        "BEGIN WoW": (199, 0.925, 0.942),
        "BEGIN WoW (test) responses": (999, 0.878, 0.912),
        "BEGIN CMU-DoG (dev) responses": (337, 0.830, 0.959),
        "BEGIN TopicalChat (dev) responses": (381, 0.764, 0.907),
        "BEGIN WoW (test) responses stating something": (968, 0.911, 0.914),
        "BEGIN CMU-DoG (dev) responses stating something": (287, 0.958, 0.962),
        "BEGIN TopicalChat (dev) responses stating something": (318, 0.936, 0.916),
        "LFQA-Verification": (81, 0.790, 0.784),
        "LFQA-Verification answer sentences": (917, 0.899, 0.910),
    }


@pytest.mark.skipif(not (HELDOUT / "wikiqa_pairs.jsonl").is_file() or not (HELDOUT / "llmbar_natural.jsonl").is_file(),
                    reason="WikiQA and LLMBar samples not built (make_heldout_samples.py --wikiqa, --llmbar)")
def test_answer_relevance_on_wikiqa_llmbar_and_mt_bench(measured):
    """First measured on the judge as it was (PROVENANCE.txt): it leads the lexical baseline on WikiQA, but an
    output to a neighbouring instruction repeats the instruction's words, so on LLMBar's Neighbor and GPTInst
    the share of the answer's words found in the question ranks better than the judge; there the longer
    answer is mostly the worse one. On MT-Bench's expert votes the longer answer wins most often."""
    bench, _ = measured
    rows = [*bench.wikiqa(HELDOUT), *bench.llmbar(HELDOUT)]
    longer = [next(e for name, e, _ in m.others if name == "longer answer wins") for m in rows]
    figures = {m.name.split(":")[0]: (m.n, round(m.judge.value, 3), round(m.baseline.value, 3), round(e.value, 3))
               for m, e in zip(rows, longer)}
    assert figures == {
        "WikiQA test": (237, 0.679, 0.563, 0.648),
        "LLMBar Natural": (100, 0.565, 0.53, 0.55),
        "LLMBar Adversarial Neighbor": (134, 0.634, 0.754, 0.134),
        "LLMBar Adversarial GPTInst": (92, 0.707, 0.837, 0.163),
        "LLMBar Adversarial GPTOut": (47, 0.383, 0.277, 0.447),
        "LLMBar Adversarial Manual": (46, 0.37, 0.391, 0.196),
        "MT-Bench (first turn)": (200, 0.547, 0.458, 0.682),
    }


@pytest.mark.skipif(not (HELDOUT / "halueval_qa_pairs.jsonl").is_file(),
                    reason="HaluEval sample not built (make_heldout_samples.py --halueval)")
def test_on_halueval_qa_the_judge_passes_the_baseline(measured):
    """First measured on v3 as it stands, and not looked at item by item: on HotpotQA's gold answers against
    answers ChatGPT was asked to hallucinate, the judge is above the baseline beyond both intervals."""
    bench, _ = measured
    (row,) = bench.halueval(HELDOUT)
    assert (row.n, round(row.judge.value, 3), round(row.baseline.value, 3)) == (1000, 0.908, 0.86)
    assert (row.judge_ties, row.baseline_ties) == (89, 92)
    assert row.judge.low > row.baseline.high
