"""The one LLM client interface used by generation, the reference RAG system and the judge.

``LLMClient.run(calls)`` answers a batch of calls: cache look-ups first, then the provider for
the misses with bounded concurrency (and, if set, a requests-per-minute pace), schema validation
with one repair attempt (an answer that leaves out part of what it was asked, such as a verdict for one of the
chunks, is repaired like a malformed one; see ``PromptTemplate.uncovered``), and a result per call (an answer or a
recorded error). Subclasses implement ``_ask`` (one request), and may answer
many misses at once in ``_in_bulk`` (the Anthropic client's Message Batches path): a bulk reply
takes the place of the first request and goes through the same validation, repair and caching,
so a call's result is what the direct path would record.

With a ``Budget``, a run first estimates what its cache misses cost at most and raises
BudgetExceeded without a request when that does not fit; each paid request is recorded in the
budget's ledger, and once a limit is spent no new request is sent: the calls in flight finish (their
answers are cached when the run has a cache) and the run raises BudgetExceeded naming what was answered
and what was not.

Once the provider refuses the key or its permission (``ApiCallError.refused``: 401, 403), the client sends no
further request, in this run or a later one (a step makes its own client, and may run it more than once: the
judge's statements, then its verdicts): the calls in flight finish, and every call not yet sent is recorded
as an ``api_error`` naming that first refusal (``not sent: ...``), never asked only to be refused again.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ValidationError

from rag_assets.llm.budget import Budget, CostEstimate
from rag_assets.llm.cache import CachedAnswer, LLMCache, cache_key
from rag_assets.llm.prompt_cache import CHARS_PER_TOKEN, Warmup, lone_contexts, split_input, without_lone_context
from rag_assets.llm.rate_limit import shared_pacer
from rag_assets.llm.sync import run_sync
from rag_assets.llm.results import LLMCall, LLMResult
from rag_assets.llm.templates import Prompt, PromptTemplate


class ApiCallError(Exception):
    """The provider could not answer (after its own retries); the call is recorded as failed. ``refused``: why no
    later request of the client can succeed either (the API refused the key, 401, or its permission, 403), else None."""

    def __init__(self, message: str, retries: int = 0, refused: str | None = None) -> None:
        super().__init__(message)
        self.retries = retries
        self.refused = refused


@dataclass
class Reply:
    """One provider response: the structured answer if it had one, else its raw text. ``tool_name``: the tool
    the answer called (None for a provider without tools); only the template's own tool is an answer.
    ``truncated``: the output stopped at the token limit (``max_tokens``), so whatever it holds may be cut
    short and is no answer. ``empty``: the response held no content block at all (neither text nor a tool call)."""

    answer: dict[str, Any] | None
    raw_text: str
    input_tokens: int = 0  # all of them: uncached, written to and read from the prompt cache
    output_tokens: int = 0
    retries: int = 0
    cost_usd: float | None = 0.0
    prompt_cache_write_tokens: int = 0
    prompt_cache_read_tokens: int = 0
    transcript: list[dict[str, Any]] = field(default_factory=list)
    tool_use_id: str | None = None
    tool_name: str | None = None
    truncated: bool = False
    empty: bool = False


@dataclass(frozen=True)
class Request:
    """A call rendered: its prompt and cache key (which also names it in a provider batch)."""

    call: LLMCall
    prompt: Prompt
    key: str
    max_tokens: int | None = None  # the template's unless an answer was cut off at it (see ``_answer``)

    @property
    def template(self) -> PromptTemplate:
        return self.call.template

    @property
    def output_limit(self) -> int:
        return self.max_tokens or self.template.max_tokens

    @property
    def system(self) -> str:
        return self.prompt.system

    @property
    def user(self) -> str:
        return self.prompt.user


#: what a bulk path gives for one request: the provider's reply, or why there is none
BulkOutcome = Reply | str

#: the error kind of a call not sent because the budget was spent (the run raises BudgetExceeded)
UNSENT = "budget_stop"


#: how much the token limit grows when an answer is cut off at it: asked again once with that much room
CUT_OFF_GROWTH = 2


def _validate(request: Request, reply: Reply) -> tuple[dict[str, Any] | None, str | None]:
    template = request.template
    if reply.truncated:  # a partial tool input may still be a schema-valid object: a judgment missing its end
        return None, (f"the answer was cut off at the token limit (max_tokens {request.output_limit}) and may be "
                      f"incomplete: {reply.raw_text[:200]!r}")
    if reply.tool_name is not None and reply.tool_name != template.tool_name:
        return None, f"the answer called the tool {reply.tool_name[:100]!r}, not {template.tool_name}"
    if reply.empty:
        return None, "the answer was empty (no content blocks)"
    if reply.answer is None:
        return None, f"the answer was not a {template.tool_name} tool call: {reply.raw_text[:200]!r}"
    try:
        output = template.output_model.model_validate(reply.answer).model_dump(mode="json")
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()[:5])
        return None, f"the answer does not match the schema: {problems}"
    if gap := template.gap(request.call.inputs, output):
        return None, f"the answer is incomplete: {gap}"
    return output, None


class LLMClient(ABC):
    provider: str
    model: str

    def __init__(self, max_concurrency: int = 4, requests_per_minute: int | None = None,
                 budget: Budget | None = None) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if requests_per_minute is not None and requests_per_minute < 1:
            raise ValueError("requests_per_minute must be at least 1 (or None for no bound)")
        self.max_concurrency = max_concurrency
        self.requests_per_minute = requests_per_minute
        self.budget = budget
        self.last_estimate: CostEstimate | None = None  # of the last run's cache misses
        self._refusal: str | None = None  # why this client sends no more requests (see ``_refuse``)

    @abstractmethod
    async def _ask(self, request: Request, messages: list[dict[str, Any]]) -> Reply:
        """Send one request (``messages``: its user turn, or the turns of a repair); raise ApiCallError when the
        provider gives up."""

    async def _open(self) -> None:
        """Create per-run resources (connection pools live inside one event loop)."""

    async def _close(self) -> None:
        """Release what ``_open`` created."""

    async def _pace(self) -> None:
        """Wait for this process's next send slot when a requests-per-minute bound is set."""
        if self.requests_per_minute:
            await shared_pacer(self.provider, self.model, self.requests_per_minute).wait()

    def _refuse(self, error: ApiCallError) -> None:
        """Remember the client's first refusal: no request is sent after it (``_unsendable``); the key and model
        stay those of the refused request for the client's life."""
        if error.refused is not None and self._refusal is None:
            self._refusal = f"{error.refused} on an earlier call ({error})"

    def _unsendable(self) -> str | None:
        """Why a request must not be sent: the provider refused this client's key or its permission earlier."""
        return None if self._refusal is None else f"not sent: {self._refusal}"

    def cost(self, input_tokens: int, output_tokens: int, *, batch: bool = False, cache_write_tokens: int = 0,
             cache_read_tokens: int = 0) -> float | None:
        """What so many tokens would cost with this client's model (None when unpriced); ``input_tokens``
        are those not written to nor read from the prompt cache."""
        return 0.0

    def run(self, calls: Sequence[LLMCall], cache: LLMCache | None = None,
            progress: Callable[[int, int], None] | None = None) -> list[LLMResult]:
        """Answer every call; results come back in the order of ``calls``. ``progress(done, total)`` is
        told as each call finishes (a terminal shows it; see ``rag_assets.console``)."""
        return run_sync(self._run_all(calls, cache, progress))

    def estimate(self, calls: Sequence[LLMCall], cache: LLMCache | None = None) -> CostEstimate:
        """What ``run(calls, cache)`` would cost at most, without sending a request."""

        async def estimate() -> CostEstimate:
            requests, hits, misses = self._split(calls, cache)
            await self._open()
            try:
                return await self._estimate(misses, sum(1 for r in requests if r.key in hits))
            finally:
                await self._close()

        return run_sync(estimate())

    def _split(self, calls: Sequence[LLMCall], cache: LLMCache | None
               ) -> tuple[list[Request], dict[str, CachedAnswer], list[Request]]:
        """Every call's request, the cache hits by key, and the distinct misses."""
        requests = [self._request(call) for call in calls]
        found = cache.get_many([r.key for r in requests]) if cache is not None else {}
        # an answer cached before its template checked what it covers may leave something out: asked again
        hits = {r.key: found[r.key] for r in requests
                if r.key in found and r.template.gap(r.call.inputs, found[r.key].output) is None}
        misses = list({r.key: r for r in requests if r.key not in hits}.values())
        if self._prompt_cache_minimum() is not None and (lone := lone_contexts(r.prompt for r in misses)):
            unmarked = {r.key: replace(r, prompt=without_lone_context(r.prompt, lone)) for r in misses}
            requests, misses = [unmarked.get(r.key, r) for r in requests], list(unmarked.values())
        return requests, hits, misses

    async def _run_all(self, calls: Sequence[LLMCall], cache: LLMCache | None,
                       progress: Callable[[int, int], None] | None = None) -> list[LLMResult]:
        semaphore = asyncio.Semaphore(self.max_concurrency)
        requests, hits, misses = self._split(calls, cache)
        started = time.perf_counter()
        await self._open()
        try:
            self.last_estimate = await self._estimate(misses, sum(1 for r in requests if r.key in hits))
            if self.budget is not None:
                self.budget.check(self.last_estimate)
            minimum = self._prompt_cache_minimum()
            warmup = None if minimum is None else Warmup({r.key: r.prompt for r in misses}, minimum)
            async with self._in_bulk(misses) as bulk:
                done = itertools.count(1)
                results = list(await asyncio.gather(*(
                    _told(self._one(r, hits.get(r.key), bulk.get(r.key), cache, semaphore, started, warmup),
                          progress, done, len(requests))
                    for r in requests)))
        finally:
            await self._close()
        unsent = sum(1 for r in results if r.error_kind == UNSENT)
        if unsent and self.budget is not None:
            raise self.budget.stopped(sum(1 for r in results if r.ok), unsent, cached=cache is not None)
        return results

    async def _estimate(self, misses: Sequence[Request], cache_hits: int) -> CostEstimate:
        """What ``misses`` cost at most: every answer at its maximum length, the input as the provider bills
        it (each shared prefix written to its prompt cache once and read after)."""
        batch = self._batches(misses)
        per_char, counted = await self._tokens_per_char(misses, exact=self.budget is not None and self.budget.limited)
        split = split_input(((r.prompt, per_char.get(r.template.ref, 1 / CHARS_PER_TOKEN)) for r in misses),
                            self._prompt_cache_minimum())
        max_output = sum(r.template.max_tokens for r in misses)
        cost = self.cost(split.fresh, max_output, batch=batch, cache_write_tokens=split.written,
                         cache_read_tokens=split.read)
        return CostEstimate(len(misses), cache_hits, split.total, max_output, cost, batch, counted)

    def _batches(self, misses: Sequence[Request]) -> bool:
        """Whether these misses would go through the provider's batch path."""
        return False

    def _prompt_cache_minimum(self) -> int | None:
        """The shortest prefix the provider's prompt cache keeps; None when the client does not use one."""
        return None

    async def _tokens_per_char(self, requests: Sequence[Request], *, exact: bool) -> tuple[dict[str, float], bool]:
        """Input tokens per prompt character by template ref, and whether the provider counted them (``exact``
        asks for that where the provider can); a template without a ratio takes the project's estimate."""
        return {}, False

    @asynccontextmanager
    async def _in_bulk(self, requests: Sequence[Request]) -> AsyncIterator[dict[str, BulkOutcome]]:
        """Outcomes for many cache misses at once, by request key; a request without a reply is asked
        directly. What follows the block runs once every answer is validated and cached. The base
        client has no bulk path."""
        yield {}

    def _params(self, template: PromptTemplate, prompt: Prompt) -> dict[str, Any]:
        """What besides the prompt texts shapes an answer; a call in its suite's layout carries every member's tool."""
        params = {"max_tokens": template.max_tokens, "schema": template.input_schema()}
        return params if len(prompt.tools) == 1 else {**params, "suite_tools": list(prompt.tools)}

    def _request(self, call: LLMCall) -> Request:
        """The call's prompt, in its suite's layout when this client uses a prompt cache."""
        template: PromptTemplate = call.template
        prompt = template.prompt(call.inputs, shared=self._prompt_cache_minimum() is not None)
        return Request(call, prompt,
                       cache_key(self.provider, self.model, template.ref, prompt.system, prompt.user,
                                 self._params(template, prompt)))

    async def _one(self, request: Request, hit: CachedAnswer | None, bulk: BulkOutcome | None,
                   cache: LLMCache | None, semaphore: asyncio.Semaphore, run_started: float,
                   warmup: Warmup | None) -> LLMResult:
        """A bulk-answered call's latency is the batch's (from the run's start), the others' their own (the
        wait for the call that warms its prompt prefix included)."""
        started = run_started if bulk is not None else time.perf_counter()
        if warmup is None:
            result = await self._answer(request, hit, bulk, cache, semaphore)
        else:
            if hit is None and bulk is None:
                await warmup.wait(request.key)
            try:
                result = await self._answer(request, hit, bulk, cache, semaphore)
            finally:
                warmup.release(request.key)
        return replace(result, latency_ms=(time.perf_counter() - started) * 1000)

    async def _answer(self, request: Request, hit: CachedAnswer | None, bulk: BulkOutcome | None,
                      cache: LLMCache | None, semaphore: asyncio.Semaphore) -> LLMResult:
        template = request.template
        base = {"key": request.call.key, "provider": self.provider, "model": self.model, "template_ref": template.ref}
        if hit is not None:
            return LLMResult(**base, output=hit.output, cached=True, input_tokens=hit.input_tokens,
                             output_tokens=hit.output_tokens, cost_usd=0.0)
        first = bulk if isinstance(bulk, Reply) else None
        budget = self.budget
        base.update(via_batch=first is not None, batch_fallback=bulk if isinstance(bulk, str) else None)
        messages: list[dict[str, Any]] = [{"role": "user", "content": request.user}]
        totals = {"requests": 0, "retries": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
                  "prompt_cache_write_tokens": 0, "prompt_cache_read_tokens": 0}
        error = None
        for attempt in range(2):
            if attempt == 0 and first is not None:
                reply = first
            else:
                async with semaphore:
                    if budget is not None and (why := budget.exhausted()):
                        return LLMResult(**base, output=None, error=f"not sent: {why}", error_kind=UNSENT, **totals)
                    if (why := self._unsendable()) is None:
                        await self._pace()
                        why = self._unsendable()  # refused while this call waited for its slot
                    if why is not None:
                        return LLMResult(**base, output=None, error=why, error_kind="api_error", **totals)
                    try:
                        reply = await self._ask(request, messages)
                    except ApiCallError as exc:
                        self._refuse(exc)
                        return LLMResult(**base, output=None, error=str(exc), error_kind="api_error",
                                         **_with(totals, requests=1, retries=exc.retries))
            if budget is not None:
                budget.record(reply.cost_usd)
            totals = _with(totals, requests=1, retries=reply.retries, input_tokens=reply.input_tokens,
                           output_tokens=reply.output_tokens, cost_usd=reply.cost_usd,
                           prompt_cache_write_tokens=reply.prompt_cache_write_tokens,
                           prompt_cache_read_tokens=reply.prompt_cache_read_tokens)
            output, error = _validate(request, reply)
            if output is not None:
                if cache is not None:
                    cache.put(request.key, provider=self.provider, model=self.model, template_ref=template.ref,
                              answer=CachedAnswer(output, totals["input_tokens"], totals["output_tokens"],
                                                  totals["cost_usd"]))
                return LLMResult(**base, output=output, repaired=attempt == 1, **totals)
            if reply.truncated:  # the same request would stop at the same place: asked afresh, with more room
                request = replace(request, max_tokens=request.output_limit * CUT_OFF_GROWTH)
            else:
                messages = messages + reply.transcript + [_repair_request(template, reply, error)]
        return LLMResult(**base, output=None, error=error, error_kind="parse_error", repaired=True, **totals)


async def _told(answer: Awaitable[LLMResult], progress: Callable[[int, int], None] | None, done: Iterator[int],
                total: int) -> LLMResult:
    result = await answer
    if progress is not None:
        progress(next(done), total)
    return result


def _with(totals: dict[str, Any], **more: Any) -> dict[str, Any]:
    """Add counters; a None cost (unpriced model) stays None."""
    out = dict(totals)
    for name, value in more.items():
        out[name] = None if value is None or out[name] is None else out[name] + value
    return out


def _repair_request(template: PromptTemplate, reply: Reply, error: str) -> dict[str, Any]:
    """The user turn that asks for a corrected answer (a tool_result when the model used the tool)."""
    text = (f"Your previous answer could not be used: {error}. Answer again by calling the "
            f"{template.tool_name} tool exactly once with input that matches its schema.")
    if reply.tool_use_id:
        return {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": reply.tool_use_id, "is_error": True, "content": text}]}
    return {"role": "user", "content": text}
