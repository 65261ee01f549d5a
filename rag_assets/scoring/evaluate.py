"""Score a RAG run on a golden set: retrieval from the golden labels, answers through the judge.

Every metric comes from the registry (``rag_assets.scoring.metrics``). Per item, one judge call per
judge task that a metric scoring the item's question type reads: four for the core metrics (see
judge_prompts); adversarial items, which have no reference, get two (faithfulness, and the noncommittal
flag that says whether the system correctly declined). A failed judge call is recorded per item and metric and leaves those
metrics unset; it is never replaced by a default score. An item the RAG system failed on is
recorded as a RAG error, not judged, and counts at the worst value of every metric that would have scored it
(``score_errored``): left out of the means, it would let a system lift them by raising on the items it misses.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace

from rag_assets.corpus.models import SnapshotChunk
from rag_assets.evidence.documents import Documents
from rag_assets.evidence.spans import DEFAULT_MIN_OVERLAP, EvidenceSpan
from rag_assets.golden.models import GoldenItem
from rag_assets.llm.cache import LLMCache
from rag_assets.llm.client import LLMClient
from rag_assets.llm.results import LLMCall, LLMResult, LLMStats
from rag_assets.rag.models import RagResponse
from rag_assets.scoring.embedding import Embedder
from rag_assets.scoring.item_scores import ItemScores
from rag_assets.scoring.metrics import DEFAULT_K, REGISTRY, citation_accuracy
from rag_assets.scoring.metrics.context import ItemContext
from rag_assets.scoring.metrics.registry import ADVERSARIAL, IncompleteJudgment, JudgeTask, Metric
from rag_assets.scoring.statements import NO_STATEMENTS, Stated

__all__ = ["ADVERSARIAL", "UNMAPPED_SHARE", "EvaluationOutcome", "ItemScores", "JudgeFailureBudget", "MetricFailures",
           "PlannedCall", "SCORING_RULES", "document_versions", "evaluate", "evidence_spans", "judge_calls", "judge_failure_budget",
           "metric_failures", "planned_calls", "score_answers", "score_context", "score_errored", "score_item"]

UNMAPPED_SHARE = "contexts_unmapped_share"
#: raised when a rule that turns answers and judge answers into figures changes, so that Dagster and the CLI see the
#: figures made under the old rule as stale (2: an errored item counts at its worst, not left out of the means; 3:
#: evidence is found when the retrieved contexts together cover enough of it, not by any one context inside it)
SCORING_RULES = "scoring-3"


def _percent(share: float) -> str:
    """A budget as people write it: 5%, 2.5%."""
    return f"{round(share * 100, 2):g}%"


@dataclass(frozen=True)
class MetricFailures:
    """One judge metric's failed judge calls among its own items: those it was asked to score (its judge task was
    called for the item, answered or failed, and it scores the item's question type)."""

    metric: str
    failed: int
    items: int
    #: why the judge failed on the first of them (as the judge client wrote it: secrets blanked), None when none did
    first_error: str | None = None

    @property
    def rate(self) -> float:
        return self.failed / self.items if self.items else 0.0

    def describe(self, budget: float) -> str:
        return (f"{self.metric}: {self.failed} of {self.items} items ({self.rate:.1%}) not judged; "
                f"budget {_percent(budget)}")


def metric_failures(items: Sequence[ItemScores], metrics: Sequence[str] | None = None,
                    k: int = DEFAULT_K) -> list[MetricFailures]:
    """Per judge metric (of ``metrics``' keys, every registered one when None, at cutoff ``k``), in registry order:
    how many of the items it was asked to score the judge failed on. Items the RAG system failed on are not judged
    and not counted; a metric asked of no item is left out."""
    wanted = None if metrics is None else set(metrics)
    found = []
    for metric in REGISTRY.metrics("judge"):
        key, task = metric.key(k), metric.task.name if metric.task is not None else ""
        if wanted is not None and key not in wanted:
            continue
        failed = asked = 0
        first_error = None
        for item in items:
            if item.rag_error is not None:
                continue
            if key in item.failures:
                first_error = first_error or item.failures[key]
                failed += 1
                asked += 1
            elif metric.scores_type(item.question_type) and task in item.outputs:
                asked += 1
        if asked:
            found.append(MetricFailures(key, failed, asked, first_error))
    return found


@dataclass(frozen=True)
class JudgeFailureBudget:
    """The judge failure budget, per metric: each judge metric's failed share of its own items is at most
    ``max_rate``. Pooling every call would let failures concentrated on one metric (say the unfaithful answers'
    faithfulness calls) hide under the calls that succeeded, and the mean of what is left would be lifted."""

    metrics: tuple[MetricFailures, ...]
    max_rate: float

    @property
    def over(self) -> tuple[MetricFailures, ...]:
        """The metrics over the budget, in registry order."""
        return tuple(m for m in self.metrics if m.rate > self.max_rate)

    @property
    def passed(self) -> bool:
        return not self.over

    @property
    def first_error(self) -> str | None:
        """Why the judge failed, on the first item of the first metric over the budget: a wrong key or a refused
        request fails every call alike, and names its cause where the counts alone do not."""
        return next((m.first_error for m in self.over if m.first_error), None)

    def describe(self) -> str:
        """Every metric over the budget with its rate, or that all are within it."""
        if self.over:
            return "; ".join(m.describe(self.max_rate) for m in self.over)
        worst = max(self.metrics, key=lambda m: m.rate, default=None)
        most = f" (most: {worst.metric} {worst.failed} of {worst.items})" if worst is not None and worst.failed else ""
        return f"every judge metric within the budget of {_percent(self.max_rate)} of its items not judged{most}"


def judge_failure_budget(items: Sequence[ItemScores], max_rate: float, metrics: Sequence[str] | None = None,
                         k: int = DEFAULT_K) -> JudgeFailureBudget:
    """The judge failure budget of scored ``items``. ``metric_failures`` and ``JudgeFailureBudget`` are the one place
    it is computed: the gates (``Scorecard.build`` counts, ``Gates.judge_budget`` decides), hence the evaluation's
    judge_failure_budget check and report, ``rag_assets.evaluate``'s gates and ``assert_quality``, and the A/B
    comparison (through this function) all read them."""
    return JudgeFailureBudget(tuple(metric_failures(items, metrics, k)), max_rate)


@dataclass
class EvaluationOutcome:
    items: list[ItemScores]
    stats: LLMStats
    judge_calls: int
    judge_failures: int
    k: int
    statement_calls: int = 0

    @property
    def calls(self) -> int:
        """Every call sent to the judge: those that judge answers (``judge_calls``) and those that split the
        references into statements (``statement_calls``). The one figure of the judge's calls the evaluation asset
        (``judge_calls_per_item``), its report, ``rag_assets.evaluate``'s summary and the failure rate show."""
        return self.judge_calls + self.statement_calls

    @property
    def judge_failure_rate(self) -> float:
        """The share of all calls sent to the judge that failed: a figure to show, not the budget (see
        ``judge_failure_budget``, which is per metric). ``judge_failures`` counts the failed statement splits too,
        so the calls are the judge answers and the statement splits alike: a true share, never over 100%."""
        return self.judge_failures / self.calls if self.calls else 0.0

    def failure_budget(self, max_rate: float, metrics: Sequence[str] | None = None) -> JudgeFailureBudget:
        """The judge failure budget of these scores (``judge_failure_budget``)."""
        return judge_failure_budget(self.items, max_rate, metrics, self.k)

    @property
    def contexts_unmapped_share(self) -> float:
        """Mean over the items that returned contexts of their unmapped share (0 when none did)."""
        shares = [i.values[UNMAPPED_SHARE] for i in self.items if UNMAPPED_SHARE in i.values]
        return sum(shares) / len(shares) if shares else 0.0

    def to_json(self) -> str:
        """The outcome as JSON, kept so that unchanged work is not judged again; ``from_json`` gives it back equal."""
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> EvaluationOutcome:
        data = json.loads(text)
        return cls([ItemScores(**item) for item in data["items"]], LLMStats(**data["stats"]), data["judge_calls"],
                   data["judge_failures"], data["k"], data.get("statement_calls", 0))

    def replayed(self) -> EvaluationOutcome:
        """This outcome used again: the same scores, its calls counted as a re-run answered by the cache counts them."""
        return replace(self, stats=self.stats.replayed())

    @classmethod
    def merge(cls, parts: Sequence[EvaluationOutcome], k: int) -> EvaluationOutcome:
        """One outcome from the outcomes of the shards of one golden set, in shard order."""
        stats = LLMStats()
        for part in parts:
            stats.merge(part.stats)
        return cls([item for part in parts for item in part.items], stats, sum(p.judge_calls for p in parts),
                   sum(p.judge_failures for p in parts), k, sum(p.statement_calls for p in parts))


def evidence_spans(item: GoldenItem, chunks: Mapping[str, SnapshotChunk]) -> tuple[EvidenceSpan, ...]:
    """The item's evidence: its own spans, else the spans of its relevant chunks (``chunks``: by id)."""
    if item.evidence:
        return item.evidence
    found = [chunks[r.chunk_id] for r in item.relevant_chunks if r.chunk_id in chunks]
    return tuple(EvidenceSpan(c.path, "", c.start, c.end, c.content_hash) for c in found)


@dataclass(frozen=True)
class PlannedCall:
    """A judge call with what it is for: the item and the judge task (its ``call.key`` only has to be unique)."""

    item_id: str
    task: str
    call: LLMCall


def _asked(task: JudgeTask, question_type: str) -> bool:
    """Whether some registered metric that reads ``task`` scores items of ``question_type``."""
    return any(m.scores_type(question_type) for m in REGISTRY.readers(task))


def planned_calls(context: ItemContext) -> list[PlannedCall]:
    """The judge calls one answered item needs: one per judge task that a metric scoring its question type
    reads, in task order, unless the task has nothing to send for it."""
    planned = []
    for task in REGISTRY.tasks():
        inputs = task.inputs(context) if _asked(task, context.item.question_type) else None
        if inputs is not None:
            planned.append(PlannedCall(context.item.item_id, task.name,
                                       LLMCall(f"{context.item.item_id}|{task.name}", task.template, inputs)))
    return planned


def judge_calls(item: GoldenItem, response: RagResponse, versions: Mapping[str, str | None],
                statements: Sequence[str]) -> list[LLMCall]:
    """The judge calls one item needs (``versions``: document path -> version; ``statements``: its reference
    statements)."""
    return [p.call for p in planned_calls(ItemContext(item, response, versions, statements))]


def _set(scores: ItemScores, metric: str, value: float) -> None:
    if not math.isnan(value):
        scores.values[metric] = float(value)


def _judged(metric: Metric, context: ItemContext, result: LLMResult, scores: ItemScores) -> None:
    """A judge metric from its task's answer; a failed call is recorded against it, never scored."""
    if not result.ok:
        scores.failures[metric.key(context.k)] = f"{result.template_ref} {result.error_kind}: {result.error}"
        return
    try:
        value = metric.score(context, result.output)
    except IncompleteJudgment as incomplete:
        scores.failures[metric.key(context.k)] = f"{result.template_ref} incomplete: {incomplete}"
        return
    _set(scores, metric.key(context.k), value)
    if metric.record is not None:
        metric.record(context, result.output, scores)


def score_context(context: ItemContext, results: Mapping[str, LLMResult]) -> ItemScores:
    """Every registered metric of one answered item (``results``: its judge answers by task): retrieval figures,
    the unmapped share, each judge task's metrics in task order, then the deterministic metrics."""
    item, response = context.item, context.response
    scores = ItemScores(item.item_id, item.revision, item.question_type)
    for metric in REGISTRY.metrics("retrieval"):
        _set(scores, metric.key(context.k), metric.score(context, {}))
    if response.contexts_unmapped_share is not None:
        _set(scores, UNMAPPED_SHARE, response.contexts_unmapped_share)
    scores.outputs = {name: dict(result.output) for name, result in results.items() if result.ok}
    scores.fabricated_citations = citation_accuracy.fabricated(response.citations, set(context.retrieved_ids))
    for task in REGISTRY.tasks():
        if task.name in results:
            for metric in REGISTRY.readers(task):
                if metric.scores_type(item.question_type):
                    _judged(metric, context, results[task.name], scores)
    for metric in REGISTRY.metrics("deterministic"):
        if metric.scores_type(item.question_type):
            _set(scores, metric.key(context.k), metric.score(context, {}))
    return scores


def score_errored(context: ItemContext) -> ItemScores:
    """One item the RAG system failed on (``context.response``: its error), the one place its scores are decided for the
    evaluation asset, ``rag-assets run``, ``rag_assets.evaluate``, the A/B comparison and production: every
    metric that scores its question type at ``Metric.score_errored`` (0 for faithfulness, answer relevance,
    context precision and recall, decline accuracy and the retrieval figures; undefined where an answer that cites
    nothing or rests on no chunk is), as if it had answered nothing and retrieved nothing, yet never credited as a
    decline. No judge is asked, so it has no claims, verdicts or judge failures."""
    item, error = context.item, context.response.error or "no RAG response for this item"
    empty = replace(context, response=RagResponse(item_id=item.item_id, answer=None, error=error), _shared={})
    scores = ItemScores(item.item_id, item.revision, item.question_type, rag_error=error)
    for metric in REGISTRY:
        if metric.scores_type(item.question_type):
            _set(scores, metric.key(context.k), metric.score_errored(empty))
    return scores


def score_item(item: GoldenItem, evidence: Sequence[EvidenceSpan], response: RagResponse,
               versions: Mapping[str, str | None], documents: Documents | None, results: Mapping[str, LLMResult],
               embedder: Embedder, k: int, min_overlap: float) -> ItemScores:
    """Every registered metric of one answered item, from its judge answers (``results``: by task)."""
    return score_context(ItemContext(item, response, versions, (), evidence, documents, embedder, k, min_overlap),
                         results)


def evaluate(items: Sequence[GoldenItem], responses: Mapping[str, RagResponse], versions: Mapping[str, str | None],
             statements: Mapping[str, Sequence[str]], client: LLMClient, cache: LLMCache | None,
             embedder: Embedder, k: int, evidence: Mapping[str, Sequence[EvidenceSpan]] | None = None,
             documents: Documents | None = None,
             progress: Callable[[int, int], None] | None = None,
             min_overlap: float = DEFAULT_MIN_OVERLAP) -> EvaluationOutcome:
    """Score every item of the golden set on the RAG run's responses.

    Retrieval metrics compare the spans of the returned contexts with each item's evidence spans
    (``evidence``: item id -> spans; see ``scoring.retrieval``), token figures need ``documents``
    (the pinned revision's bodies); ``versions`` maps document paths to their versions. Judges read
    the returned texts. Each answered item also records ``contexts_unmapped_share``, kept out of the
    gated metrics. ``progress(done, total)`` is told of each judge call as it finishes. A context hits
    an evidence span when they share ``min_overlap`` of the shorter of the two. An item without a response, or
    whose response is an error, makes no judge call and is scored by ``score_errored``.
    """
    contexts: dict[str, ItemContext] = {}
    for item in items:
        response = responses.get(item.item_id) or RagResponse(item_id=item.item_id, answer=None,
                                                               error="no RAG response for this item")
        contexts[item.item_id] = ItemContext(item, response, versions, statements.get(item.item_id, ()),
                                             (evidence or {}).get(item.item_id, ()), documents, embedder, k,
                                             min_overlap)
    planned = [p for context in contexts.values() if context.response.ok for p in planned_calls(context)]
    results = client.run([p.call for p in planned], cache, progress)
    owner = {p.call.key: p for p in planned}
    by_item: dict[str, dict[str, LLMResult]] = {}
    for result in results:
        plan = owner[result.key]
        by_item.setdefault(plan.item_id, {})[plan.task] = result
    scored = [score_context(context, by_item.get(context.item.item_id, {})) if context.response.ok
              else score_errored(context) for context in (contexts[item.item_id] for item in items)]
    return EvaluationOutcome(scored, LLMStats().add(results), len(results), sum(1 for r in results if not r.ok), k)


def document_versions(chunks: Sequence[SnapshotChunk], documents: Documents | None = None) -> dict[str, str | None]:
    """Path -> version of every document the contexts may lie in: those of ``documents`` (the revision's bodies
    a step read, which cover every context it located, whichever chunks it read), and of ``chunks``' documents.
    A step that reads only some chunks (a judge shard reads the evidence's and those the answers name) thus
    knows the version of a context of a system's own chunking as well as a step that read every chunk."""
    versions = {c.path: c.doc_version for c in chunks}
    if documents is not None:
        versions.update({path: version for path, version in documents.versions.items() if version is not None})
    return versions


def score_answers(items: Sequence[GoldenItem], responses: Mapping[str, RagResponse], chunks: Sequence[SnapshotChunk],
                  judge: LLMClient, cache: LLMCache | None, embedder: Embedder, k: int,
                  progress: Callable[[int, int], None] | None = None,
                  documents: Documents | None = None, min_overlap: float = DEFAULT_MIN_OVERLAP) -> EvaluationOutcome:
    """The judging step of an evaluation over a snapshot, one code path for the evaluation asset, the A/B
    comparison and ``rag_assets.evaluate``: evidence from the items (or their chunks among ``chunks``),
    document versions from the documents and chunks (``document_versions``), context recall from the items'
    reference statements: an item context recall scores whose reference gave none is recorded as not judged, as
    ``rag_assets.judge`` records it (skipped, it left both the metric's mean and its failure budget)."""
    by_id = {c.chunk_id: c for c in chunks}
    outcome = evaluate(items, responses, document_versions(chunks, documents),
                       {i.item_id: i.reference_statements for i in items}, judge, cache, embedder, k,
                       {i.item_id: evidence_spans(i, by_id) for i in items}, documents, progress, min_overlap)
    recall, unstated = REGISTRY.find("context_recall"), {i.item_id for i in items if not i.reference_statements}
    for scores in outcome.items if recall is not None else ():
        key = recall.key(k)
        if (scores.item_id in unstated and scores.rag_error is None and recall.scores_type(scores.question_type)
                and key not in scores.values and key not in scores.failures):
            scores.failures[key] = NO_STATEMENTS
    return outcome


def with_statement_calls(outcome: EvaluationOutcome, stated: Stated) -> EvaluationOutcome:
    """``outcome`` with the calls that split its items' references into statements in its tally (what was sent and
    billed), and a failed one as a judge failure recorded against the item's context recall (in place of
    ``NO_STATEMENTS``): an outage while splitting is then retried on the next run and spends the failure budget, as
    one while judging. ``judge_calls`` stays the calls that judge answers (four at most per item); the splits are
    counted in ``statement_calls``, and ``calls`` (the figure shown) is both, so that the failed share of all calls
    counts them in both terms."""
    recall = REGISTRY.find("context_recall")
    key = recall.key(outcome.k) if recall is not None else None
    for scores in outcome.items:
        if scores.item_id in stated.failed and key in scores.failures:
            scores.failures[key] = stated.failed[scores.item_id]
    stats = LLMStats().merge(outcome.stats).merge(stated.stats)
    return replace(outcome, stats=stats, judge_failures=outcome.judge_failures + len(stated.failed),
                   statement_calls=outcome.statement_calls + stated.stats.calls)
