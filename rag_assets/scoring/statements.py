"""Reference statements for context recall, extracted through the judge: once per item revision when a golden set is
built (kept with it and exported), and by the scoring judge for each evaluation (``stated``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from rag_assets.golden.models import GoldenItem
from rag_assets.llm.cache import LLMCache
from rag_assets.llm.client import LLMClient
from rag_assets.llm.results import LLMCall, LLMResult, LLMStats
from rag_assets.scoring.judge_prompts import REFERENCE_STATEMENTS

#: why an item that context recall scores has no value for it
NO_STATEMENTS = "no statements could be extracted from the reference (the extraction call failed or found none)"


def _split(items: Sequence[GoldenItem], client: LLMClient, cache: LLMCache | None) -> list[tuple[GoldenItem, LLMResult]]:
    """One statements call per non-adversarial item that has none yet, with its result."""
    todo = [i for i in items if i.question_type != "adversarial" and not i.reference_statements]
    calls = [LLMCall(f"{i.item_id}|{i.revision}", REFERENCE_STATEMENTS,
                     {"question": i.question, "reference": i.reference_answer}) for i in todo]
    return list(zip(todo, client.run(calls, cache)))


def extract_statements(items: Sequence[GoldenItem], client: LLMClient,
                       cache: LLMCache | None) -> tuple[dict[tuple[str, int], list[str]], LLMStats]:
    """Statements for every non-adversarial item that has none yet; a failed call leaves the item
    without statements (its context recall is then reported as not scored), to be tried next build."""
    found, stats, _failed = extract_statements_failing(items, client, cache)
    return found, stats


def extract_statements_failing(items: Sequence[GoldenItem], client: LLMClient, cache: LLMCache | None
                               ) -> tuple[dict[tuple[str, int], list[str]], LLMStats, dict[str, str]]:
    """``extract_statements``, with why the call of an item failed by item id (``"<template ref> <error kind>:
    <error>"``, as ``Stated.failed``), in the order the calls were asked."""
    done = _split(items, client, cache)
    found = {(i.item_id, i.revision): r.output["statements"] for i, r in done if r.ok and r.output["statements"]}
    failed = {i.item_id: f"{r.template_ref} {r.error_kind}: {r.error}" for i, r in done if not r.ok}
    return found, LLMStats().add(r for _, r in done), failed


@dataclass(frozen=True)
class Stated:
    """Items with the statements a judge reads in their references; the tally of those calls; and, by item id, why
    the call of an item failed (``"<template ref> <error kind>: <error>"``), so that an evaluation counts it as the
    judge failure it is (retried on the next run, within the failure budget) rather than as a reference with no
    statement."""

    items: list[GoldenItem]
    stats: LLMStats
    failed: dict[str, str]


def stated(items: Sequence[GoldenItem], client: LLMClient, cache: LLMCache | None) -> Stated:
    """The items with the statements ``client`` reads in their reference answers, whatever statements they carry:
    those stored with a golden set were made by the judge that built it, and a Claude-judged context recall rested
    on the offline judge's statements (a tester's home, built offline and then evaluated with a key). The calls go
    through the cache, so the judge that built the set answers them from it."""
    done = _split([replace(i, reference_statements=()) for i in items], client, cache)
    found = {i.item_id: tuple(r.output["statements"]) for i, r in done if r.ok}
    return Stated([replace(i, reference_statements=found.get(i.item_id, ())) for i in items],
                  LLMStats().add(r for _, r in done),
                  {i.item_id: f"{r.template_ref} {r.error_kind}: {r.error}" for i, r in done if not r.ok})
