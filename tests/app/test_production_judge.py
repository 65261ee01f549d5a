"""Production drift compares a day only with days the same judge scored: two judges are two scales."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from rag_assets.app.production import DayPolicy, score_production_day
from rag_assets.calibration.models import JudgeConfig
from rag_assets.defs.resources import StoreResource
from rag_assets.llm.offline import OfflineClient
from rag_assets.scoring.embedding import make_embedder
from tests.conftest import PROJECT_ROOT, SAMPLE_CORPUS

LOGS = PROJECT_ROOT / "data" / "production_logs"


class EarlierOffline(OfflineClient):
    """The offline heuristics under another version: another judge configuration, the same code."""

    model = "offline-heuristics-v0"


def test_a_day_is_compared_only_with_days_its_own_judge_scored(tmp_path: Path):
    store = StoreResource(database_url_env=None, home=str(tmp_path / "home"))
    embedder, policy = make_embedder("hashing"), DayPolicy()

    def score(day: int, judge: OfflineClient):
        return score_production_day(store, date(2026, 11, day), LOGS, judge, embedder, SAMPLE_CORPUS, policy)

    for day in range(20, 26):
        score(day, EarlierOffline())
    other = score(26, OfflineClient())
    assert other.previous == [] and not other.drift["faithfulness"].alert, \
        "the six days before were scored by another judge configuration: no baseline, no alert"
    same = score(26, EarlierOffline())
    assert [d.day.day for d in same.previous] == [20, 21, 22, 23, 24, 25]
    assert same.drift["faithfulness"].alert, "the planted bad day, against the same judge's days"
    assert {d.judge_key for d in same.previous} == {JudgeConfig.of(EarlierOffline(), "hashing-v1").key}
