"""Judge probes: answers and contexts changed in ways whose effect on a score is known.

A judge is never taken on faith. For a small stratified sample of an evaluation's items, each probe
changes one thing and judges the item again through the same client, cache and budget; a judge that
misses the change fails the probe on that item:

- ``fabricated_claim``: an unsupported claim appended to the answer; faithfulness must drop.
- ``filler``: the answer padded with hedges and filler; answer relevance must not rise (verbosity bias).
- ``other_answer``: the answer of another question; answer relevance must drop.
- ``noncommittal``: a reply that answers nothing; answer relevance must drop.
- ``reversed_contexts``: the contexts in reverse order; faithfulness must not change (position bias).
- ``unrelated_contexts``: the contexts swapped for other items' contexts; context precision must drop.
- ``repeat``: the same answer judged again without the cache; every score must be the same.

An item where a probe cannot show anything (no base score, a base context precision of 0 that cannot
drop) does not count for that probe. An item whose probe call the judge failed (an API error, an answer that
is malformed or leaves out what was asked) counts, as a miss: a pass rate is the items that passed over those
judged and those failed, so a judge that answered 4 of 10 calls, all well, passes 0.40, not 1.00. The probes
work for any judge: they only ask it questions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from rag_assets.corpus.models import sha256_hex
from rag_assets.evidence.spans import DEFAULT_MIN_OVERLAP
from rag_assets.golden.models import GoldenItem
from rag_assets.llm.cache import LLMCache
from rag_assets.llm.client import LLMClient
from rag_assets.llm.results import OFFLINE, LLMResult, LLMStats
from rag_assets.rag.models import RagResponse
from rag_assets.scoring.embedding import Embedder
from rag_assets.scoring.evaluate import ADVERSARIAL, planned_calls, score_item
from rag_assets.scoring.metrics.context import ItemContext
from rag_assets.scoring.reuse import fingerprint
from rag_assets.text.tokens import content_words

FABRICATED_CLAIM = ("It also keeps a second copy of every record on a research station in Antarctica for 400 years, "
                    "approved by the International Archive Council in 1887.")
FILLER = ("Generally speaking, and as is often the case, this may depend on a number of factors. {answer} "
          "That said, details can vary from case to case, so it is always worth keeping in mind that there may be "
          "exceptions, and it is best to check carefully before relying on it.")
NONCOMMITTAL = "I am not sure; it is hard to say, and I cannot really tell you anything about that."
TOLERANCE = 1e-6  # "must not change" and "must not rise" allow float noise only
DEFAULT_SAMPLE = 20
MAX_SHARE = 0.15  # of the evaluation's judge calls that probes may add
MIN_SAMPLE = 10  # fewer items make a pass rate too coarse to gate on (one miss in 4 is 0.75)
CAPPED_FROM = 500  # items: from this size on MAX_SHARE wins over MIN_SAMPLE; below it MIN_SAMPLE wins
DEFAULT_MIN_PASS_RATE = 0.9


@dataclass(frozen=True)
class Probe:
    """One change, the metric it reads (the judge template of the same name is asked again) and what must
    happen to it."""

    name: str
    metric: str
    expect: str  # "drop", "not_rise", "same"
    change: Callable[[GoldenItem, RagResponse, Sequence[RagResponse]], RagResponse | None]
    cached: bool = True

    def holds(self, before: float, after: float) -> bool:
        if self.expect == "drop":
            return after < before - TOLERANCE
        if self.expect == "not_rise":
            return after <= before + TOLERANCE
        return abs(after - before) <= TOLERANCE


def _answer(text: str) -> Callable[[GoldenItem, RagResponse, Sequence[RagResponse]], RagResponse]:
    return lambda item, response, others: replace(response, answer=text.format(answer=response.answer or ""))


def _other_answer(item: GoldenItem, response: RagResponse, others: Sequence[RagResponse]) -> RagResponse | None:
    """The answer of the other question that shares the fewest words with this one (so it cannot answer it
    by chance)."""
    asked = set(content_words(item.question))
    candidates = [o for o in others if o.answer and o.answer != response.answer]
    if not candidates:
        return None
    other = min(candidates, key=lambda o: len(asked & set(content_words(o.answer or ""))))
    return replace(response, answer=other.answer, citations=())


def _reversed(item: GoldenItem, response: RagResponse, others: Sequence[RagResponse]) -> RagResponse | None:
    if len(response.retrieved) < 2:
        return None
    ranked = tuple(replace(c, rank=rank) for rank, c in enumerate(reversed(response.retrieved), 1))
    return replace(response, retrieved=ranked)


def _unrelated(item: GoldenItem, response: RagResponse, others: Sequence[RagResponse]) -> RagResponse | None:
    """As many of the other items' contexts as this one had, those sharing the fewest words with its question
    and reference (another item's context may well be about the same thing)."""
    mine = {c.key for c in response.retrieved} | {c.text for c in response.retrieved}
    pool = {c.key: c for o in others for c in o.retrieved if c.key not in mine and c.text not in mine}
    asked = set(content_words(f"{item.question} {item.reference_answer}"))
    ranked = sorted(pool.values(), key=lambda c: (len(asked & set(content_words(c.text))), c.key))
    chosen = ranked[:max(1, len(response.retrieved))]
    if not chosen:
        return None
    return replace(response, retrieved=tuple(replace(c, rank=rank) for rank, c in enumerate(chosen, 1)), citations=())


PROBES: tuple[Probe, ...] = (
    Probe("fabricated_claim", "faithfulness", "drop", _answer("{answer} " + FABRICATED_CLAIM)),
    Probe("filler", "answer_relevance", "not_rise", _answer(FILLER)),
    Probe("other_answer", "answer_relevance", "drop", _other_answer),
    Probe("noncommittal", "answer_relevance", "drop", _answer(NONCOMMITTAL)),
    Probe("reversed_contexts", "faithfulness", "same", _reversed),
    Probe("unrelated_contexts", "context_precision", "drop", _unrelated),
    Probe("repeat", "faithfulness", "same", lambda item, response, others: response, cached=False),
)


@dataclass(frozen=True)
class ProbeSettings:
    """What decides a probe run besides the evaluation it probes: the most items to probe (``sample``) and the
    pass rate every probe must reach (``min_pass_rate``)."""

    sample: int = DEFAULT_SAMPLE
    min_pass_rate: float = DEFAULT_MIN_PASS_RATE

    @property
    def version(self) -> str:
        """Changes with the settings, the sizing rule and the probes (each one's name, metric, expectation and
        use of the cache, and the texts they write): a probe result recorded under another version is not this
        configuration's, so it must not pass for current. The code of a probe's change is not in it; a new change
        is a new probe name."""
        probes = [(p.name, p.metric, p.expect, p.cached) for p in PROBES]
        return "probes-" + fingerprint(self, probes, MAX_SHARE, MIN_SAMPLE, CAPPED_FROM, TOLERANCE,
                                       FABRICATED_CLAIM, FILLER, NONCOMMITTAL)[:16]


@dataclass
class ProbeResult:
    """One probe over the sample: the items it could test (``tested``: judged and scored; ``judge_failures``: the
    judge's call failed), those where the judge behaved, and why not."""

    name: str
    metric: str
    expect: str
    tested: int = 0
    passed: int = 0
    failed_items: list[str] = field(default_factory=list)
    judge_failures: int = 0

    @property
    def probed(self) -> int:
        """The items the probe asked the judge about: a failed call is no pass, so it counts like a failed probe."""
        return self.tested + self.judge_failures

    @property
    def pass_rate(self) -> float:
        """Passed over probed (NaN when no item could show anything)."""
        return self.passed / self.probed if self.probed else math.nan


def probe_sample_size(items: int, judge_calls: int, wanted: int = DEFAULT_SAMPLE) -> int:
    """How many items to probe: ``wanted`` at most, and no more than keeps the probes' calls (at most one per
    probe and item) within ``MAX_SHARE`` of the evaluation's ``judge_calls``; never more than there are. Below
    ``CAPPED_FROM`` items the sample is never cut under ``MIN_SAMPLE`` (a small evaluation pays a larger share
    for a pass rate worth reading); from ``CAPPED_FROM`` on the share is promised, so it is cut further when
    the evaluation makes few judge calls per item."""
    affordable = math.floor(MAX_SHARE * judge_calls / len(PROBES))
    return min(items, wanted, affordable if items >= CAPPED_FROM else max(MIN_SAMPLE, affordable))


def stratified_sample(items: Sequence[GoldenItem], responses: Mapping[str, RagResponse], size: int,
                      seed: str = "") -> list[GoldenItem]:
    """``size`` answered, answerable items, drawn round-robin over question types, so every type is probed
    before any type twice. Within a type the order is a hash of ``seed`` and the item id: an item stays in the
    sample while it stays in the golden set, so later golden versions are probed on mostly the same items
    (comparable pass rates, cached calls)."""
    usable = [i for i in items if i.question_type != ADVERSARIAL and (r := responses.get(i.item_id)) is not None
              and r.ok and r.answer]
    by_type: dict[str, list[GoldenItem]] = {}
    for item in sorted(usable, key=lambda i: sha256_hex(f"{seed}|{i.item_id}")):
        by_type.setdefault(item.question_type, []).append(item)
    chosen: list[GoldenItem] = []
    while len(chosen) < size and any(by_type.values()):
        for kind in sorted(by_type):
            if by_type[kind] and len(chosen) < size:
                chosen.append(by_type[kind].pop(0))
    return chosen


def _run_probe(probe: Probe, items: Sequence[GoldenItem], responses: Mapping[str, RagResponse],
               base: Mapping[str, Mapping[str, float]], versions: Mapping[str, str | None], judge: LLMClient,
               cache: LLMCache | None, embedder: Embedder, k: int) -> tuple[ProbeResult, list[LLMResult]]:
    """One probe over the sample, and its judge calls' results (each says whether the LLM cache answered it)."""
    outcome = ProbeResult(probe.name, probe.metric, probe.expect)
    answered = [responses[i.item_id] for i in items]
    changed: dict[str, tuple[GoldenItem, RagResponse]] = {}
    for item in items:
        before = base.get(item.item_id, {}).get(probe.metric)
        if before is None or (probe.expect == "drop" and before <= TOLERANCE):
            continue
        after = probe.change(item, responses[item.item_id], [r for r in answered if r.item_id != item.item_id])
        if after is not None:
            changed[item.item_id] = (item, after)
    planned = {p.call.key: p for item, response in changed.values()
               for p in planned_calls(ItemContext(item, response, versions)) if p.task == probe.metric}
    results = judge.run([p.call for p in planned.values()], cache if probe.cached else None)
    for result in results:
        item, response = changed[planned[result.key].item_id]
        if not result.ok:
            outcome.judge_failures += 1
            continue
        scores = score_item(item, (), response, versions, None, {probe.metric: result}, embedder, k,
                            DEFAULT_MIN_OVERLAP)
        if probe.metric in scores.failures:  # an answer that leaves out what was asked: failed, as a call
            outcome.judge_failures += 1
            continue
        if probe.metric not in scores.values:
            continue
        outcome.tested += 1
        if probe.holds(base[item.item_id][probe.metric], scores.values[probe.metric]):
            outcome.passed += 1
        else:
            outcome.failed_items.append(item.item_id)
    return outcome, results


def run_probes(items: Sequence[GoldenItem], responses: Mapping[str, RagResponse],
               base: Mapping[str, Mapping[str, float]], versions: Mapping[str, str | None], judge: LLMClient,
               cache: LLMCache | None, embedder: Embedder, k: int) -> tuple[list[ProbeResult], LLMStats]:
    """Every probe over ``items`` (a sample), against their ``base`` values (item id -> metric -> value) from the
    evaluation; with the tally of the probes' judge calls, where the calls sent to the judge (cache misses) are
    told apart from those the LLM cache answered. No probe reads context recall, so the items' reference
    statements are not needed."""
    ran = [_run_probe(probe, items, responses, base, versions, judge, cache, embedder, k) for probe in PROBES]
    stats = LLMStats(judge.provider, judge.model)
    for _, results in ran:
        stats.add(results)
    return [outcome for outcome, _ in ran], stats


def _failures(result: ProbeResult) -> str:
    """How many of a probe's judge calls failed, for its verdict line ("" when none)."""
    return f" ({result.judge_failures} of {result.probed} judge calls failed)" if result.judge_failures else ""


def probe_verdict(results: Sequence[ProbeResult], min_pass_rate: float) -> tuple[bool, str]:
    """Whether the judge passed its probes, and one line saying why: it fails when a probe's pass rate (its failed
    judge calls counted as misses) is below ``min_pass_rate`` or when the judge could not answer a probe at all;
    the line gives every probe's failed calls. A probe no item could show anything with is not applicable and
    fails nothing."""
    low = [f"{r.name} {r.pass_rate:.2f}{_failures(r)}" for r in results
           if r.tested and r.pass_rate < min_pass_rate]
    unanswered = [r.name for r in results if not r.tested and r.judge_failures]
    idle = [r.name for r in results if not r.probed]
    parts = ([f"below {min_pass_rate:.2f}: {', '.join(low)}"] if low else []) + (
        [f"the judge answered no call of: {', '.join(unanswered)}"] if unanswered else [])
    tested = len(results) - len(unanswered) - len(idle)
    line = "; ".join(parts) or f"{tested} of {len(results)} probes at or above {min_pass_rate:.2f}"
    if passing := [f"{r.name}{_failures(r)}" for r in results
                   if r.tested and r.judge_failures and r.pass_rate >= min_pass_rate]:
        line += f"; failed judge calls counted as misses: {', '.join(passing)}"
    if idle:
        line += f"; not applicable (no item could show it): {', '.join(idle)}"
    return not parts, line


def probe_lines(rates: Mapping[str, float], evaluation_id: str) -> dict[str, str]:
    """Per metric the line the report shows beside it: the pass rate of each probe that reads it (``rates``: probe
    name -> pass rate, the probes that could be tested), and the evaluation they ran on. The probes run after an
    evaluation, so an evaluation's report shows those of the evaluation before it."""
    parts: dict[str, list[str]] = {}
    for probe in PROBES:
        if probe.name in rates:
            parts.setdefault(probe.metric, []).append(f"{probe.name} {rates[probe.name]:.2f}")
    return {metric: f"judge probes on {evaluation_id}: {', '.join(shown)}" for metric, shown in parts.items()}


def no_probe_lines(judge: str) -> dict[str, str]:
    """Per metric a probe reads, the line the report shows when no probes of its ``judge`` (a label) ran yet:
    another judge's pass rates say nothing about this one."""
    return {probe.metric: f"judge probes: none yet for this judge ({judge})" for probe in PROBES}


def self_preference(judge_provider: str, judge_model: str, generators: Mapping[str, str | None]) -> list[str]:
    """The steps (``generators``: step -> the model that wrote its text, None when unknown) whose text the judge's
    own model wrote: an LLM judge tends to prefer its own writing, so its figures there are suspect. The offline
    heuristics are not a model and prefer nothing."""
    if judge_provider == OFFLINE:
        return []
    return sorted(step for step, model in generators.items() if model is not None and model == judge_model)
