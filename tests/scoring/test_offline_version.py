"""The offline heuristics' version names their scores: a change to what they output must raise it.

Calibrations, regression baselines and the judge-review file key on the judge configuration, whose model
for the offline judge is ``OfflineClient.model``. A change of the heuristics that moves a score but keeps
that name would let a calibration or a baseline made with the old scores stand for the new ones (the
context-precision rescaling of offline-heuristics-v2 did exactly that until the name was raised). This test
pins a digest of what the four judge tasks output on the committed dev set: when it fails, raise the version
in rag_assets/llm/offline.py and put the new digest here, together. A few written cases beside the dev set
cover rules its rows never reach (v3's spaced thousands and declines that state something, v4's clock times, left
the dev set's outputs as they were).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from rag_assets.llm.offline import OfflineClient
from rag_assets.scoring import offline_judge

DEV_SET = Path(__file__).parent / "judge_dev"
PINNED = ("offline-heuristics-v4", "e4912d985380d8c5")


#: cases the dev set does not reach: a number tokenised with a spaced separator; sentences with a decline or hedge
#: phrase that still state something; a model's usual decline framed in where it looked
WRITTEN = [
    {"question": "How many people attended?", "answer": "About 235,000 people attended the march.",
     "contexts": ["Police said some 235, 000 people attended the march on Sunday."]},
    {"question": "Does water form a skin?", "answer": "Water does not contain proteins or fats, so it does not "
     "form a skin when heated. I am not sure.", "contexts": ["Milk forms a skin when heated: its proteins set."]},
    {"question": "What is the warranty period of the X200 printer?", "answer": "Based on the provided context, I "
     "cannot determine the warranty period. Unfortunately, the retrieved documents do not specify it.",
     "contexts": ["The X200 printer prints 30 pages a minute."]},
    {"question": "What is the warranty period?", "answer": "The provided context doesn't include the warranty "
     "period. It covers 64 devices.[^1] I hope this helps!", "contexts": ["The plan covers 64 devices."]},
    {"question": "How many users?", "answer": "Active users reached 1 234 567 in twenty-four months.",
     "contexts": ["Active users reached 1,234,567 within 24 months."]},
    {"question": "How big are digital photos?", "answer": "The file size of digital photos can vary greatly with "
     "compression.", "contexts": ["Compression changes the file size of a digital photo a great deal."]},
    {"question": "When is the shop open?", "answer": "It opens Mondays from 11 AM to 10 PM.",
     "contexts": ['{"hours": {"Monday": "11:0-22:0"}}']},
]


def outputs_digest() -> str:
    rows = [json.loads(line) for path in sorted(DEV_SET.glob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines()] + WRITTEN
    outputs = []
    for row in rows:
        inputs = {"question": row["question"], "answer": row["answer"], "reference": row["answer"],
                  "chunks": [{"chunk_id": f"c{n}", "text": text} for n, text in enumerate(row["contexts"])]}
        stated = {**inputs, **offline_judge.reference_statements(inputs)}
        outputs.append([offline_judge.faithfulness(inputs), offline_judge.answer_relevance(inputs),
                        offline_judge.context_precision(inputs), offline_judge.context_recall(stated)])
    return hashlib.sha256(json.dumps(outputs, sort_keys=True).encode()).hexdigest()[:16]


def test_the_offline_version_is_raised_whenever_its_outputs_change():
    assert (OfflineClient.model, outputs_digest()) == PINNED, (
        "the offline heuristics' outputs changed: raise OfflineClient.model (rag_assets/llm/offline.py) and pin "
        "the new digest in PINNED")
