"""Score a RAG run on a golden set: retrieval from the golden labels, answers through the judge.

Per item, at most four judge calls for the core metrics (see judge_prompts); adversarial items,
which have no reference, get two (faithfulness, and the noncommittal flag that says whether the
system correctly declined). A failed judge call is recorded per item and metric and leaves those
metrics unset; it is never replaced by a default score. An item the RAG system failed on is
recorded as a RAG error and not judged.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

from rag_assets.corpus.models import SnapshotChunk
from rag_assets.evidence.documents import Documents
from rag_assets.evidence.spans import DEFAULT_MIN_OVERLAP, EvidenceSpan
from rag_assets.golden.models import GoldenItem
from rag_assets.llm.cache import LLMCache
from rag_assets.llm.client import LLMClient
from rag_assets.llm.results import LLMCall, LLMResult, LLMStats
from rag_assets.rag.models import RagResponse, RetrievedChunk
from rag_assets.scoring import formulas
from rag_assets.scoring.embedding import Embedder
from rag_assets.scoring.judge_prompts import ANSWER_RELEVANCE, CONTEXT_PRECISION, CONTEXT_RECALL, FAITHFULNESS
from rag_assets.scoring.retrieval import diversity, document_hit_rate_at_k, rank_metrics, token_metrics
from rag_assets.text.tokens import tokenize

JUDGE_METRICS = ("faithfulness", "answer_relevance", "context_precision", "context_recall", "citation_accuracy",
                 "temporal_faithfulness", "decline_accuracy")
CORE_METRICS = ("faithfulness", "answer_relevance", "context_precision", "context_recall")
ADVERSARIAL = "adversarial"


UNMAPPED_SHARE = "contexts_unmapped_share"


def retrieval_metric_names(k: int) -> tuple[str, ...]:
    return (f"precision@{k}", f"recall@{k}", f"ndcg@{k}", f"mrr@{k}", f"hit_rate@{k}", "average_precision",
            f"doc_hit_rate@{k}", f"token_recall@{k}", f"token_precision@{k}", f"token_iou@{k}", f"diversity@{k}")


@dataclass
class ItemScores:
    item_id: str
    revision: int
    question_type: str
    values: dict[str, float] = field(default_factory=dict)       # defined values only
    failures: dict[str, str] = field(default_factory=dict)       # metric -> why the judge could not score it
    hallucinations: dict[str, int] = field(default_factory=dict)  # verdict -> claims
    fabricated_citations: int = 0
    rag_error: str | None = None
    claims: list[dict] = field(default_factory=list)   # the judge's claims: claim, verdict, supporting_chunk_ids
    useful: dict[str, bool] = field(default_factory=dict)  # chunk id -> the judge's context-precision verdict
    outputs: dict[str, dict] = field(default_factory=dict)  # judge template -> its parsed answer: the reasons shown to experts


@dataclass
class EvaluationOutcome:
    items: list[ItemScores]
    stats: LLMStats
    judge_calls: int
    judge_failures: int
    k: int

    @property
    def judge_failure_rate(self) -> float:
        return self.judge_failures / self.judge_calls if self.judge_calls else 0.0

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
                   data["judge_failures"], data["k"])

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
                   sum(p.judge_failures for p in parts), k)


def _version(chunk: RetrievedChunk, versions: Mapping[str, str | None]) -> str | None:
    """The version of the document a context lies in (``versions``: document path -> its version; a
    context named by an id and placed nowhere, as a production log or a single judged answer gives it,
    by that id)."""
    if chunk.span is not None:
        return versions.get(chunk.span.path)
    return versions.get(chunk.chunk_id) if chunk.chunk_id is not None else None


def _chunks(response: RagResponse, versions: Mapping[str, str | None]) -> list[dict]:
    """What the judge reads: the texts the system really returned, under the ids it knows them by."""
    return [{"chunk_id": r.key, "text": r.text, "version": _version(r, versions)} for r in response.retrieved]


def _documents(chunk: RetrievedChunk) -> set[str]:
    return ({chunk.span.path} if chunk.span is not None else set()) | ({chunk.source} if chunk.source else set())


def evidence_spans(item: GoldenItem, chunks: Mapping[str, SnapshotChunk]) -> tuple[EvidenceSpan, ...]:
    """The item's evidence: its own spans, else the spans of its relevant chunks (``chunks``: by id)."""
    if item.evidence:
        return item.evidence
    found = [chunks[r.chunk_id] for r in item.relevant_chunks if r.chunk_id in chunks]
    return tuple(EvidenceSpan(c.path, "", c.start, c.end, c.content_hash) for c in found)


def judge_calls(item: GoldenItem, response: RagResponse, versions: Mapping[str, str | None],
                statements: Sequence[str]) -> list[LLMCall]:
    """The judge calls one item needs (keys ``item_id|template``)."""
    chunks = _chunks(response, versions)
    answer = response.answer or ""
    calls = [LLMCall(f"{item.item_id}|faithfulness", FAITHFULNESS, {"question": item.question, "answer": answer, "chunks": chunks}),
             LLMCall(f"{item.item_id}|answer_relevance", ANSWER_RELEVANCE, {"question": item.question, "answer": answer})]
    if item.question_type != ADVERSARIAL:
        calls.append(LLMCall(f"{item.item_id}|context_precision", CONTEXT_PRECISION,
                             {"question": item.question, "reference": item.reference_answer, "chunks": chunks}))
        if statements:
            calls.append(LLMCall(f"{item.item_id}|context_recall", CONTEXT_RECALL,
                                 {"statements": list(statements), "chunks": chunks}))
    return calls


def _fail(scores: ItemScores, metrics: Sequence[str], result: LLMResult) -> None:
    for metric in metrics:
        scores.failures[metric] = f"{result.template_ref} {result.error_kind}: {result.error}"


def _set(scores: ItemScores, metric: str, value: float) -> None:
    if not math.isnan(value):
        scores.values[metric] = float(value)


def _retrieval(scores: ItemScores, evidence: Sequence[EvidenceSpan], response: RagResponse,
               documents: Documents | None, k: int, min_overlap: float) -> None:
    """Rank, token and diversity figures of one answered item (see ``scoring.retrieval``); token
    figures only where the documents' words are known."""
    ranked = [r.span for r in response.retrieved]
    for metric, value in rank_metrics(ranked, evidence, k, min_overlap).items():
        _set(scores, metric, value)
    _set(scores, f"doc_hit_rate@{k}", document_hit_rate_at_k(
        [_documents(r) for r in response.retrieved], {e.path for e in evidence if e.grade > 0}, k))
    if documents is not None:
        unlocated = sum(len(tokenize(r.text)) for r in response.retrieved[:k] if r.span is None)
        for metric, value in token_metrics(ranked, unlocated, evidence, k, documents.token_starts).items():
            _set(scores, metric, value)
    _set(scores, f"diversity@{k}", diversity([(r.span, r.text) for r in response.retrieved], k))


def score_item(item: GoldenItem, evidence: Sequence[EvidenceSpan], response: RagResponse,
                versions: Mapping[str, str | None], documents: Documents | None, results: Mapping[str, LLMResult],
                embedder: Embedder, k: int, min_overlap: float) -> ItemScores:
    scores = ItemScores(item.item_id, item.revision, item.question_type)
    _retrieval(scores, evidence, response, documents, k, min_overlap)
    if response.contexts_unmapped_share is not None:
        _set(scores, UNMAPPED_SHARE, response.contexts_unmapped_share)
    retrieved = [r.key for r in response.retrieved]
    scores.outputs = {name: dict(result.output) for name, result in results.items() if result.ok}
    faith = results.get("faithfulness")
    if faith is not None and faith.ok:
        value, counts = formulas.faithfulness(faith.output)
        _set(scores, "faithfulness", value)
        scores.hallucinations = {v: n for v, n in counts.items() if v != "grounded"}
        scores.claims = [dict(claim) for claim in faith.output["claims"]]
        accuracy, scores.fabricated_citations = formulas.citation_accuracy(response.citations, set(retrieved), faith.output)
        _set(scores, "citation_accuracy", accuracy)
        retrieved_versions = {r.key: _version(r, versions) for r in response.retrieved}
        _set(scores, "temporal_faithfulness", formulas.temporal_faithfulness(item.question, retrieved_versions, faith.output))
    elif faith is not None:
        _fail(scores, ("faithfulness", "citation_accuracy", "temporal_faithfulness"), faith)
    relevance = results.get("answer_relevance")
    if relevance is not None and relevance.ok:
        if item.question_type == ADVERSARIAL:
            _set(scores, "decline_accuracy", 1.0 if relevance.output["noncommittal"] else 0.0)
        else:
            _set(scores, "answer_relevance", formulas.answer_relevance(item.question, relevance.output, embedder))
    elif relevance is not None:
        _fail(scores, ("decline_accuracy",) if item.question_type == ADVERSARIAL else ("answer_relevance",), relevance)
    precision = results.get("context_precision")
    if precision is not None and precision.ok:
        scores.useful = useful = {v["chunk_id"]: v["useful"] for v in precision.output["verdicts"]}
        grades = {v["chunk_id"]: v["useful"] if v.get("score") is None else v["score"] for v in precision.output["verdicts"]}
        _set(scores, "context_precision", formulas.context_precision([grades.get(c, 0.0) for c in retrieved]))
    elif precision is not None:
        _fail(scores, ("context_precision",), precision)
    recall = results.get("context_recall")
    if recall is not None and recall.ok:
        _set(scores, "context_recall", formulas.context_recall([s["attributed"] for s in recall.output["statements"]]))
    elif recall is not None:
        _fail(scores, ("context_recall",), recall)
    return scores


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
    an evidence span when they share ``min_overlap`` of the shorter of the two.
    """
    calls: list[LLMCall] = []
    for item in items:
        response = responses.get(item.item_id)
        if response is not None and response.ok:
            calls.extend(judge_calls(item, response, versions, statements.get(item.item_id, ())))
    results = client.run(calls, cache, progress)
    by_item: dict[str, dict[str, LLMResult]] = {}
    for result in results:
        item_id, _, name = result.key.rpartition("|")
        by_item.setdefault(item_id, {})[name] = result
    scored = []
    for item in items:
        response = responses.get(item.item_id)
        if response is None or not response.ok:
            scored.append(ItemScores(item.item_id, item.revision, item.question_type,
                                     rag_error=response.error if response else "no RAG response for this item"))
            continue
        scored.append(score_item(item, (evidence or {}).get(item.item_id, ()), response, versions, documents,
                                  by_item.get(item.item_id, {}), embedder, k, min_overlap))
    return EvaluationOutcome(scored, LLMStats().add(results), len(results), sum(1 for r in results if not r.ok), k)


def score_answers(items: Sequence[GoldenItem], responses: Mapping[str, RagResponse], chunks: Sequence[SnapshotChunk],
                  judge: LLMClient, cache: LLMCache | None, embedder: Embedder, k: int,
                  progress: Callable[[int, int], None] | None = None,
                  documents: Documents | None = None, min_overlap: float = DEFAULT_MIN_OVERLAP) -> EvaluationOutcome:
    """The judging step of an evaluation over a snapshot, one code path for the evaluation asset, the A/B
    comparison and ``rag_assets.evaluate``: evidence from the items (or their chunks among ``chunks``),
    document versions from the chunks, context recall from the items' reference statements."""
    by_id = {c.chunk_id: c for c in chunks}
    return evaluate(items, responses, {c.path: c.doc_version for c in chunks},
                    {i.item_id: i.reference_statements for i in items}, judge, cache, embedder, k,
                    {i.item_id: evidence_spans(i, by_id) for i in items}, documents, progress, min_overlap)
