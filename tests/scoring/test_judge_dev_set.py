"""The offline judge on its dev set (tests/scoring/judge_dev, from SQuAD 2.0 and the Anthropic cookbook).

Dev figures, not quality claims (see judge_dev/PROVENANCE.txt): the lexical offline judge was looked at
on this set while it was built (the held-out, human-labelled figures are tests/scoring/heldout's). The test
asserts its figures as measured (pairwise agreement, a tie counting half: 0.902 relevance, 0.941
faithfulness), that both beat "the longer answer wins" beyond the bootstrap noise, and that the set is
rebuilt byte for byte by scripts/make_judge_dev_set.py from the public data.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from rag_assets.scoring.calibration import calibrate
from tests.conftest import PROJECT_ROOT

DEV_SET = Path(__file__).parent / "judge_dev"
ANTHROPIC_DOCS = PROJECT_ROOT.parent / "shared" / "data" / "anthropic_docs_rag"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    both = tmp_path_factory.mktemp("dev") / "pairs.jsonl"
    both.write_text("".join((DEV_SET / f).read_text(encoding="utf-8")
                            for f in ("squad_pairs.jsonl", "anthropic_docs_pairs.jsonl")), encoding="utf-8")
    return calibrate(both)


def test_offline_answer_relevance_beats_the_longer_answer_beyond_the_noise(report):
    print("\n" + report.markdown())
    [relevance] = [m for m in report.metrics if m.metric == "answer_relevance"]
    assert relevance.judge.n == 107 and relevance.unscored == 0
    assert round(relevance.judge.agreement.value, 3) == 0.902
    assert relevance.judge.agreement.low > relevance.longer_answer.agreement.high, (
        relevance.judge.agreement, relevance.longer_answer.agreement)


def test_offline_faithfulness_prefers_the_grounded_answer_more_often_than_the_longer_one(report):
    [faithfulness] = [m for m in report.metrics if m.metric == "faithfulness"]
    assert faithfulness.judge.n == 76 and faithfulness.judge.roc_auc.low > 0.5
    assert round(faithfulness.judge.agreement.value, 3) == 0.941
    assert faithfulness.judge.agreement.low > faithfulness.longer_answer.agreement.high


@pytest.mark.skipif(not ANTHROPIC_DOCS.is_dir(), reason="the shared Anthropic docs data is not next to the project")
def test_the_script_rebuilds_the_anthropic_docs_pairs_byte_for_byte(tmp_path: Path):
    spec = importlib.util.spec_from_file_location("make_judge_dev_set", PROJECT_ROOT / "scripts" / "make_judge_dev_set.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    script.write(script.sample(list(script.anthropic_rows(ANTHROPIC_DOCS))), tmp_path / "rebuilt.jsonl")
    assert (tmp_path / "rebuilt.jsonl").read_bytes() == (DEV_SET / "anthropic_docs_pairs.jsonl").read_bytes()
