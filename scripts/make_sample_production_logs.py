"""Write the bundled production logs (data/production_logs/) from the sample corpus.

Seven days of traffic served by the reference RAG system (BM25 + the offline extractive
generator) on the Kestrel Sync corpus. Users ask the accepted questions of the bundled review
and a few questions the documentation does not cover (coverage gaps). Two things are planted:

* on the last day (PLANTED_BAD_DAY) most answers are made unfaithful: every number in them is
  changed, as a broken generator deployment would do, so the drift check must fire on that day;
* one day's file has two malformed lines, which must be reported, not crash the read.

Run from the repository root: ``python scripts/make_sample_production_logs.py``. The output is
deterministic (seeded per day).
"""

from __future__ import annotations

import csv
import json
import random
import re
import tempfile
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.llm.offline import OfflineClient
from rag_assets.production.sampling import day_seed
from rag_assets.rag.bm25 import index_for
from rag_assets.rag.chunks import SnapshotChunks
from rag_assets.rag.models import RagQuery
from rag_assets.rag.reference import ReferenceRagSystem
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "production_logs"
FIRST_DAY = date(2026, 11, 20)
DAYS = 7
PLANTED_BAD_DAY = date(2026, 11, 26)
MALFORMED_DAY = date(2026, 11, 23)
QUERIES_PER_DAY = 40
K = 3
BAD_SHARE = 0.7
UNCOVERED_QUESTIONS = (
    "Is there a dark mode in the Kestrel desktop app?",
    "How do I move my files from Dropbox to Kestrel Sync?",
    "Can I pay for Kestrel with a purchase order instead of a credit card?",
    "Does Kestrel Sync run on a Raspberry Pi?",
    "Who do I call when the mobile app crashes on start?",
)
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")


def review_questions() -> list[str]:
    """The accepted, answerable questions of the bundled simulated review."""
    (path,) = sorted((ROOT / "data" / "curation" / "sample").glob("review-*.csv"))
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return sorted({row["question"] for row in csv.DictReader(handle)
                       if row["decision"] in ("accept", "edit") and row["question_type"] != "adversarial"})


def corrupt(answer: str, rng: random.Random) -> str:
    """Every number changed: claims that contradict the retrieved chunks."""
    return _NUMBER.sub(lambda m: str(int(float(m.group())) + rng.randint(2, 9)), answer)


def day_records(day: date, system: ReferenceRagSystem, pool: list[str]) -> list[dict]:
    rng = random.Random(day_seed(day))
    questions = [rng.choice(pool) if rng.random() > 0.1 else rng.choice(UNCOVERED_QUESTIONS)
                 for _ in range(QUERIES_PER_DAY)]
    responses = system.answer([RagQuery(f"prod-{day:%Y%m%d}-{i:03d}", q, "sample") for i, q in enumerate(questions)])
    start = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    records = []
    for i, (question, response) in enumerate(zip(questions, responses)):
        answer = response.answer
        if day == PLANTED_BAD_DAY and answer and _NUMBER.search(answer) and rng.random() < BAD_SHARE:
            answer = corrupt(answer, rng)
        records.append({
            "query_id": response.item_id,
            "timestamp": (start + timedelta(seconds=int(86_399 * (i + rng.random()) / QUERIES_PER_DAY))).isoformat(),
            "question": question,
            "answer": answer,
            "retrieved": [{"chunk_id": r.chunk_id, "text": r.text, "score": round(r.score, 4)} for r in response.retrieved],
            "citations": [{"claim": c.claim, "chunk_id": c.chunk_id} for c in response.citations],
            "system_id": "kestrel-help-bot@2.3",
            "feedback": {"rating": rng.choice([None, None, 1, 1, 1, -1]), "comment": None},
        })
    return records


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        repo = SqlCorpusRepository(get_engine(f"sqlite:///{home}/store.db"))
        outcome = snapshot_corpus(ROOT / "data" / "corpus", ChunkerConfig(), repo)
        chunks = repo.snapshot_chunks(outcome.version_id)
        system = ReferenceRagSystem(index_for(outcome.version_id, SnapshotChunks.of(chunks), None), K, OfflineClient(), None,
                                    {c.chunk_id: c.doc_version for c in chunks})
        pool = review_questions()
        OUT.mkdir(parents=True, exist_ok=True)
        for offset in range(DAYS):
            day = FIRST_DAY + timedelta(days=offset)
            lines = [json.dumps(record, ensure_ascii=False) for record in day_records(day, system, pool)]
            if day == MALFORMED_DAY:
                lines.insert(5, '{"question": "truncated by a log rotation", "retrieved": [')
                lines.insert(12, json.dumps({"timestamp": f"{day}T12:00:00Z", "question": "where is my invoice?",
                                             "answer": None, "retrieved": [{"chunk_id": 42, "text": "", "score": 1}]}))
            path = OUT / f"served-{day}.jsonl"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            print(f"{path.relative_to(ROOT)}: {len(lines)} lines")


if __name__ == "__main__":
    main()
