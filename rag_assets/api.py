"""``rag_assets.evaluate``: score a RAG system on a golden set from Python, without Dagster.

It runs the steps the ``golden_set``, ``rag_answers`` and ``evaluation`` assets run, through the
evaluation use case they call (``rag_assets.app.evaluation``: the statements, the answers, the judging,
the gates and the report): on the same golden items, chunks and judge the per-item values are the
asset's. Nothing is stored; the result holds everything.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_assets.app.evaluation import Assessment, Gating, assess, evaluate_golden, render_report, scorecard
from rag_assets.console import terminal_progress
from rag_assets.corpus.models import ChunkerConfig
from rag_assets.golden.models import GoldenItem
from rag_assets.golden.sources import golden_source
from rag_assets.llm.cache import LLMCache
from rag_assets.llm.client import LLMClient
from rag_assets.llm.results import OFFLINE
from rag_assets.rag.error_budget import DEFAULT_MAX_ERROR_RATE, error_budget
from rag_assets.rag.factory import system_for
from rag_assets.rag.models import RagResponse
from rag_assets.ranges import at_least_one
from rag_assets.report.build import judge_label
from rag_assets.scoring.embedding import make_embedder
from rag_assets.scoring.evaluate import UNMAPPED_SHARE, EvaluationOutcome
from rag_assets.scoring.gate_settings import check_judge_budget
from rag_assets.scoring.metrics import REGISTRY
from rag_assets.scoring.metrics.registry import DEFAULT_K
from rag_assets.scoring.scorecard import MAX_JUDGE_FAILURE_RATE, Gates, Scorecard
from rag_assets.scoring.single import default_judge
from rag_assets.scoring.thresholds import AUTO, GIVEN, checked_thresholds, load_thresholds, resolve_profile


def _is_file(given: str | Path) -> bool:
    """A thresholds file (a Path, or a name ending in .yaml, .yml or .json) rather than a profile name."""
    return isinstance(given, Path) or given.endswith((".yaml", ".yml", ".json"))


@dataclass(frozen=True)
class _Run:
    """What the report says of the run: no golden-set version is stored, so it shows 0."""

    system_name: str
    system_config_hash: str
    golden_version: int = 0


@dataclass
class EvaluationResult:
    """One evaluation: the golden items, the system's responses, the per-item scores and their aggregates."""

    items: list[GoldenItem]
    responses: dict[str, RagResponse]
    outcome: EvaluationOutcome
    system_name: str
    system_config_hash: str
    corpus_version: str
    judge: str          # the judge's label: offline heuristics, or provider / model
    judge_offline: bool

    @property
    def metrics(self) -> tuple[str, ...]:
        return REGISTRY.names(k=self.outcome.k)

    @property
    def scorecard(self) -> Scorecard:
        return scorecard(self.outcome)

    @property
    def summary(self) -> dict[str, Any]:
        """The judge, the counts (the fabricated citations: of ids the system did not return; the judge calls: those
        that judge answers and those that split references into statements, the figure the evaluation asset's
        ``judge_calls_per_item`` and ``llm_calls`` count), and per metric its mean, std, n and judge failures (over
        every item it scores, those the system failed on at their worst value)."""
        card = self.scorecard
        return {"judge": self.judge, "system": self.system_name, "items": len(self.items), "rag_errors": card.rag_errors,
                "fabricated_citations": card.fabricated_citations,
                "judge_calls": self.outcome.calls, "judge_failures": self.outcome.judge_failures,
                "contexts_unmapped_share": self.outcome.contexts_unmapped_share,
                "metrics": {name: agg.as_dict() for name, agg in card.overall.items()}}

    def to_pandas(self) -> Any:
        """One row per item: question, answer, every metric (NaN where undefined), the judge's failures
        (metric -> why) and the RAG error, if any."""
        import pandas as pd

        golden = {i.item_id: i for i in self.items}
        columns = (*self.metrics, UNMAPPED_SHARE)
        rows = []
        for scores in self.outcome.items:
            response = self.responses.get(scores.item_id)
            rows.append({"item_id": scores.item_id, "question_type": scores.question_type,
                         "question": golden[scores.item_id].question, "answer": response.answer if response else None,
                         **{m: scores.values.get(m, float("nan")) for m in columns},
                         "failures": dict(scores.failures), "rag_error": scores.rag_error})
        return pd.DataFrame(rows, columns=["item_id", "question_type", "question", "answer", *columns, "failures",
                                           "rag_error"])

    def thresholds(self, profile_or_thresholds: str | Path | Mapping[str, float] = AUTO) -> dict[str, float]:
        """Minimums from a profile name (``auto``: the offline profile for the offline judge, else general),
        a thresholds file (YAML or JSON) or a ``{metric: minimum}`` mapping; a file or mapping is checked as the
        CLI and the evaluation asset check it (``checked_thresholds``), at this result's k."""
        if isinstance(profile_or_thresholds, Mapping):
            return checked_thresholds(profile_or_thresholds, GIVEN, self.outcome.k)
        if _is_file(profile_or_thresholds):
            return load_thresholds(AUTO, str(profile_or_thresholds), self.outcome.k)
        return load_thresholds(resolve_profile(profile_or_thresholds, self.judge_offline), k=self.outcome.k)

    def thresholds_label(self, profile_or_thresholds: str | Path | Mapping[str, float] = AUTO) -> str:
        """Where the minimums come from, as a failure message names it."""
        if isinstance(profile_or_thresholds, Mapping):
            return GIVEN
        if _is_file(profile_or_thresholds):
            return f"thresholds file {profile_or_thresholds}"
        return f"profile {resolve_profile(profile_or_thresholds, self.judge_offline)}"

    def gates(self, profile_or_thresholds: str | Path | Mapping[str, float] = AUTO,
              max_judge_failure_rate: float = MAX_JUDGE_FAILURE_RATE,
              max_rag_error_rate: float = DEFAULT_MAX_ERROR_RATE) -> Gates:
        """The asset's threshold and judge-failure gates, with the RAG run's error budget (rag_answers' blocking
        check, which stops the assets before they score); no regression gate: there is no stored baseline. A
        system that failed on every item fails here even when no gated metric applies to what is left."""
        return self._assessment(profile_or_thresholds, max_judge_failure_rate, max_rag_error_rate).gates

    def _assessment(self, profile_or_thresholds: str | Path | Mapping[str, float] = AUTO,
                    max_judge_failure_rate: float = MAX_JUDGE_FAILURE_RATE,
                    max_rag_error_rate: float = DEFAULT_MAX_ERROR_RATE) -> Assessment:
        check_judge_budget(max_judge_failure_rate)
        assessment = assess(self.outcome, Gating(self.thresholds(profile_or_thresholds), max_judge_failure_rate))
        assessment.gates.rag_errors = error_budget(
            [self.responses[i.item_id] for i in self.items if i.item_id in self.responses], max_rag_error_rate)
        return assessment

    def write_report(self, path: str | Path, profile_or_thresholds: str | Path | Mapping[str, float] = AUTO) -> Path:
        """The evaluation asset's HTML report of this result (gated by ``profile_or_thresholds``)."""
        name = f"python-{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%SZ}"
        assessment = self._assessment(profile_or_thresholds)
        report = render_report(name, self.corpus_version, _Run(self.system_name, self.system_config_hash), assessment,
                               self.items, self.responses)
        return report.write(Path(path))


def evaluate(golden: Any, system: Any, judge: LLMClient | None = None, k: int = 5, *,
             corpus: str | Path | None = None, embedder: str = "hashing", cache: LLMCache | None = None,
             chunker: ChunkerConfig | None = None) -> EvaluationResult:
    """Score ``system`` on ``golden``, as the evaluation asset would.

    ``golden``: a golden-set export (``golden-v<N>.jsonl``, needs ``corpus``), a ragas test set
    (``.csv`` / ``.jsonl``) or a pandas DataFrame with ragas' columns (``user_input`` or ``question``,
    ``reference`` or ``ground_truth``, ``reference_contexts``). ``system``: a function taking the
    contract's request dict, ``"module:function"``, an http(s) URL, a LangChain chain, a LlamaIndex
    query engine, or ``"reference"`` (see ``rag_assets.rag.factory.system_for``). ``judge``: an LLM
    client; None is Claude when ANTHROPIC_API_KEY is set, the offline heuristics otherwise (and it
    also generates the reference system's answers). ``k``: for the system and the retrieval metrics.
    ``corpus``: the corpus folder the golden set was made from (see ``rag_assets.golden.sources``).
    """
    at_least_one("k", k, DEFAULT_K)  # before anything is read, built or asked: k 0 divided by zero when judged
    source = golden_source(golden, corpus, chunker)
    client = judge or default_judge()
    scores = evaluate_golden(
        source.items, source.chunks, source.documents, source.corpus_version,
        lambda snapshot: system_for(system, source.corpus_version, snapshot, client, cache, source.corpus_root, k),
        client, cache, make_embedder(embedder), k, terminal_progress)
    return EvaluationResult(scores.items, scores.responses, scores.outcome, scores.system_name,
                            scores.system_config_hash, source.corpus_version, judge_label(client.provider, client.model),
                            client.provider == OFFLINE)
