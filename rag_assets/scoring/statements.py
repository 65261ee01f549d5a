"""Reference statements for context recall, extracted through the judge: once per item revision when a golden set is
built (kept with it and exported), and by the scoring judge for each evaluation (``stated``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from rag_assets.golden.models import GoldenItem
from rag_assets.llm.cache import LLMCache
from rag_assets.llm.client import LLMClient
from rag_assets.llm.results import LLMCall, LLMStats
from rag_assets.scoring.judge_prompts import REFERENCE_STATEMENTS

#: why an item that context recall scores has no value for it
NO_STATEMENTS = "no statements could be extracted from the reference (the extraction call failed or found none)"


def extract_statements(items: Sequence[GoldenItem], client: LLMClient,
                       cache: LLMCache | None) -> tuple[dict[tuple[str, int], list[str]], LLMStats]:
    """Statements for every non-adversarial item that has none yet; a failed call leaves the item
    without statements (its context recall is then reported as not scored), to be tried next build."""
    todo = [i for i in items if i.question_type != "adversarial" and not i.reference_statements]
    calls = [LLMCall(f"{i.item_id}|{i.revision}", REFERENCE_STATEMENTS,
                     {"question": i.question, "reference": i.reference_answer}) for i in todo]
    results = client.run(calls, cache)
    found = {(i.item_id, i.revision): r.output["statements"] for i, r in zip(todo, results) if r.ok and r.output["statements"]}
    return found, LLMStats().add(results)


def stated(items: Sequence[GoldenItem], client: LLMClient,
           cache: LLMCache | None) -> tuple[list[GoldenItem], LLMStats]:
    """The items with the statements ``client`` reads in their reference answers, whatever statements they carry,
    and the tally of those calls: the statements stored with a golden set were made by the judge that built it, and
    a Claude-judged context recall rested on the offline judge's statements (a tester's home, built offline and then
    evaluated with a key). The calls go through the cache, so the judge that built the set answers them from it."""
    found, stats = extract_statements([replace(i, reference_statements=()) for i in items], client, cache)
    return [replace(i, reference_statements=tuple(found.get((i.item_id, i.revision), ()))) for i in items], stats
