"""Generate question candidates: plan tasks, estimate, call the LLM layer, vet and dedupe answers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from rag_assets.generation.dedupe import NearDuplicateFilter
from rag_assets.generation.models import Candidate, QuestionType
from rag_assets.generation.planning import GenerationTask
from rag_assets.generation.prompts import GENERATE_QUESTIONS
from rag_assets.llm.cache import LLMCache
from rag_assets.llm.client import LLMClient
from rag_assets.llm.results import LLMCall, LLMResult, LLMStats


@dataclass
class GenerationOutcome:
    candidates: list[Candidate] = field(default_factory=list)
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    failures: list[LLMResult] = field(default_factory=list)
    stats: LLMStats = field(default_factory=LLMStats)
    tasks: int = 0

    def by_type(self) -> dict[str, int]:
        counts = Counter(c.question_type for c in self.candidates)
        return {t.value: counts.get(t.value, 0) for t in QuestionType}


def generation_calls(tasks: Sequence[GenerationTask]) -> list[LLMCall]:
    """One generation call per task, named by the task."""
    return [LLMCall(t.task_id, GENERATE_QUESTIONS, t.inputs()) for t in tasks]


def _vet(task: GenerationTask, item: dict, corpus_version: str, result: LLMResult) -> Candidate | str:
    """A candidate from one generated question, or the reason it cannot be one."""
    by_id = {c.chunk_id: c for c in task.chunks}
    ids = list(dict.fromkeys(item["relevant_chunk_ids"]))
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        return f"relevant_chunk_ids {unknown} were not among the chunks given"
    adversarial = task.question_type == QuestionType.ADVERSARIAL.value
    if adversarial and ids:
        return "an adversarial question must have no relevant chunks"
    if not adversarial and not ids:
        return "a non-adversarial question needs at least one relevant chunk"
    relevant = tuple(by_id[i].ref for i in ids)
    source = tuple(c.ref for c in task.chunks)
    question = " ".join(item["question"].split())
    return Candidate(
        candidate_id=Candidate.make_id(task.question_type, question, relevant, source),
        question=question,
        reference_answer=item["answer"].strip(),
        question_type=task.question_type,
        relevant_chunks=relevant,
        source_chunks=source,
        corpus_version=corpus_version,
        provider=result.provider,
        model=result.model,
        prompt_ref=result.template_ref,
    )


def ask_generator(tasks: Sequence[GenerationTask], client: LLMClient, cache: LLMCache | None,
                  progress: Callable[[int, int], None] | None = None) -> list[LLMResult]:
    """The generation calls of some tasks (one shard's), in task order; ``progress(done, total)`` per answered call."""
    return client.run(generation_calls(tasks), cache, progress)


def collect_candidates(
    tasks: Sequence[GenerationTask],
    results: Sequence[LLMResult],
    corpus_version: str,
    existing_questions: Iterable[str] = (),
    dedupe_threshold: float = 0.8,
) -> GenerationOutcome:
    """Vet and dedupe the answers of every task at once: near-duplicates are found across shards."""
    outcome = GenerationOutcome(tasks=len(tasks))
    outcome.stats.add(results)
    dedupe = NearDuplicateFilter(dedupe_threshold, existing_questions)
    for task, result in zip(tasks, results, strict=True):
        if not result.ok:
            outcome.failures.append(result)
            continue
        for item in result.output["questions"]:
            vetted = _vet(task, item, corpus_version, result)
            if isinstance(vetted, str):
                outcome.rejected.append((task.task_id, vetted))
            elif (original := dedupe.duplicate_of(vetted.question)) is not None:
                outcome.duplicates.append((vetted.question, original))
            else:
                outcome.candidates.append(vetted)
    return outcome


def run_generation(
    tasks: Sequence[GenerationTask],
    client: LLMClient,
    cache: LLMCache | None,
    corpus_version: str,
    existing_questions: Iterable[str] = (),
    dedupe_threshold: float = 0.8,
) -> GenerationOutcome:
    return collect_candidates(tasks, ask_generator(tasks, client, cache), corpus_version, existing_questions,
                              dedupe_threshold)
