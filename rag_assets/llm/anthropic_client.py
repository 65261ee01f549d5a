"""Claude through the official ``anthropic`` SDK (AsyncAnthropic).

Structured output is a forced tool call whose input schema is the template's pydantic model: every request
sets ``tool_choice`` to the template's tool, so only a ``tool_use`` of that tool is an answer. Prose (even
prose holding a JSON object, such as a refusal quoting the expected format) or a call of another tool is
unparseable: it gets the one repair request, then is recorded as a parse_error.
Retries on 429/529/5xx/timeouts are the SDK's own (``max_retries``); the count comes from the
SDK's raw response (``retries_taken``). The API key is handed to the SDK and kept nowhere else; a
server or proxy that echoes it (or an ``ANTHROPIC_AUTH_TOKEN`` the SDK sends) back in an error body or
an answer does not get it stored: every error text, raw text and answer the client returns has it
blanked out as ``***`` (``_redacted``), so no store, report, review file or run log downstream sees it.

With ``batch`` settings and a journal, a run with at least ``min_calls`` cache misses sends them
as Message Batches (half the price; see ``rag_assets.llm.batch``) with exactly the parameters of
a direct request, and asks directly only what the batches could not answer.

A budget's pre-flight estimate counts input tokens with the token counting endpoint: one request
of each template is counted, and the others are scaled from it by their length (a count per
request would double the requests of a large run); where counting fails, or the client was refused
before, the project's estimate.

With ``prompt_caching`` (the default) each request marks cache breakpoints (``cache_control``) after
its static instructions and after its item context when another call of the run shares it (see
``rag_assets.llm.prompt_cache``), in batches too; the tokens the API reports as written to and read
from its cache are priced apart.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anthropic

from rag_assets.errors import redact_json
from rag_assets.llm.batch import BatchJournal, BatchOutcome, BatchRequest, BatchRun, BatchSettings
from rag_assets.llm.budget import Budget
from rag_assets.llm.client import ApiCallError, BulkOutcome, LLMClient, Reply, Request
from rag_assets.llm.pricing import DEFAULT_PRICES, Price, cost_usd, min_cacheable_tokens
from rag_assets.llm.prompt_cache import prompt_chars
from rag_assets.llm.results import ANTHROPIC


class AnthropicClient(LLMClient):
    provider = ANTHROPIC

    def __init__(self, api_key: str, model: str, *, base_url: str | None = None, timeout: float = 60.0,
                 max_retries: int = 4, max_concurrency: int = 4, requests_per_minute: int | None = None,
                 prices: Mapping[str, Price] = DEFAULT_PRICES, batch: BatchSettings | None = None,
                 journal: BatchJournal | None = None, budget: Budget | None = None,
                 prompt_caching: bool = True) -> None:
        super().__init__(max_concurrency, requests_per_minute, budget)
        if not api_key:
            raise ValueError("an Anthropic API key is required (set ANTHROPIC_API_KEY)")
        if batch is not None and journal is None:
            raise ValueError("the batch path needs a journal in the store, to resume a batch after a crash")
        self.model = model
        self._sdk_options = {"api_key": api_key, "base_url": base_url, "timeout": timeout, "max_retries": max_retries}
        self._prices = prices
        self._batch, self._journal = batch, journal
        self.prompt_caching = prompt_caching
        self._sdk: anthropic.AsyncAnthropic | None = None

    def __repr__(self) -> str:
        mode = (", batch" if self._batch is not None else "") + ("" if self.prompt_caching else ", no prompt caching")
        return f"AnthropicClient(model={self.model!r}, base_url={self._sdk_options['base_url']!r}{mode})"

    def cost(self, input_tokens: int, output_tokens: int, *, batch: bool = False, cache_write_tokens: int = 0,
             cache_read_tokens: int = 0) -> float | None:
        return cost_usd(self.model, input_tokens, output_tokens, self._prices, batch=batch,
                        cache_write_tokens=cache_write_tokens, cache_read_tokens=cache_read_tokens)

    def _prompt_cache_minimum(self) -> int | None:
        return min_cacheable_tokens(self.model) if self.prompt_caching else None

    def _batches(self, misses: Sequence[Request]) -> bool:
        return self._batch is not None and self._journal is not None and len(misses) >= self._batch.min_calls

    async def _tokens_per_char(self, requests: Sequence[Request], *, exact: bool) -> tuple[dict[str, float], bool]:
        if not exact or not requests or self._unsendable() is not None:  # a refused client counts nothing
            return await super()._tokens_per_char(requests, exact=False)
        assert self._sdk is not None, "_open() runs before any request"
        samples: dict[str, Request] = {}
        for request in requests:
            samples.setdefault(request.template.ref, request)
        per_char: dict[str, float] = {}
        try:
            for ref, sample in samples.items():
                params = self._first_params(sample)
                counted = await self._sdk.messages.count_tokens(
                    **{k: v for k, v in params.items() if k != "max_tokens"})
                per_char[ref] = counted.input_tokens / prompt_chars(sample.prompt)
        except anthropic.APIError as exc:
            self._refuse(self._api_call_error(exc, refusals=(401,)))  # a refused key: nothing is sent after it
            return await super()._tokens_per_char(requests, exact=False)
        return per_char, True

    def _secrets(self) -> tuple[str, ...]:
        """What the SDK authenticates with (the key, and a bearer token it read from ANTHROPIC_AUTH_TOKEN), longest first."""
        found = [self._sdk_options["api_key"]]
        if self._sdk is not None:
            found += [self._sdk.api_key or "", self._sdk.auth_token or ""]
        return tuple(sorted({s for s in found if s}, key=len, reverse=True))

    def _redacted(self, value: Any) -> Any:
        """``value`` (a text, or a JSON value such as a tool input) with the secrets blanked out of every string."""
        return redact_json(value, self._secrets())

    async def _open(self) -> None:
        self._sdk = anthropic.AsyncAnthropic(**self._sdk_options)

    async def _close(self) -> None:
        if self._sdk is not None:
            await self._sdk.close()
            self._sdk = None

    def _create_params(self, request: Request, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The Messages API parameters of one request, direct or in a batch: system blocks of the static
        instructions, then of the item context, each a cache breakpoint when prompt caching is on (the
        context's only when another call of the run shares it)."""
        prompt, template = request.prompt, request.template
        cache_control = {"cache_control": {"type": "ephemeral"}} if self.prompt_caching else {}
        system = [{"type": "text", "text": prompt.instructions, **cache_control}]
        if prompt.context is not None:
            system.append({"type": "text", "text": prompt.context, **(cache_control if prompt.cache_context else {})})
        return {
            "model": self.model,
            "max_tokens": request.output_limit,
            "system": system,
            "messages": messages,
            "tools": list(prompt.tools),
            "tool_choice": {"type": "tool", "name": template.tool_name},
        }

    def _first_params(self, request: Request) -> dict[str, Any]:
        """The parameters of a request's first (not a repair) attempt."""
        return self._create_params(request, [{"role": "user", "content": request.user}])

    async def _ask(self, request: Request, messages: list[dict[str, Any]]) -> Reply:
        assert self._sdk is not None, "_open() runs before any request"
        try:
            raw = await self._sdk.messages.with_raw_response.create(**self._create_params(request, messages))
        except anthropic.APIError as exc:
            raise self._api_call_error(exc) from None
        retries = raw.retries_taken
        try:
            message = await raw.parse()
        except Exception as exc:  # a 200 whose body is not a Messages API response
            return Reply(answer=None, raw_text=f"unreadable response body ({type(exc).__name__})", retries=retries)
        return self._reply(message, retries)

    def _api_call_error(self, exc: anthropic.APIError, refusals: Sequence[int] = (401, 403)) -> ApiCallError:
        """What a failed SDK call is recorded as, with the retries the SDK made before giving up (the error
        body's message with the secrets blanked out: a proxy may echo the key). Raised ``from None``: the SDK's
        exception holds the body as sent, and Dagster keeps an error's whole chain of causes in its event log.
        A status of ``refusals`` (the key refused, 401, or its permission, 403) is ``refused``: the client sends no
        more requests (``LLMClient._refuse``); a 403 from another endpoint than the Messages API's may concern
        that endpoint alone, so its callers count only the 401."""
        if isinstance(exc, anthropic.APIStatusError):
            retried = exc.status_code in (408, 409, 429) or exc.status_code >= 500
            message = _error_message(exc)
            kind = self._redacted(message.split(":", 1)[0])  # the body's error type: a proxy may echo the key
            refused = None if exc.status_code not in refusals else (
                f"the API refused the key ({exc.status_code} {kind})" if exc.status_code == 401
                else f"the API refused permission ({exc.status_code} {kind})")
            return ApiCallError(self._redacted(f"Anthropic API error {exc.status_code}: {message}"),
                                retries=self._sdk_options["max_retries"] if retried else 0, refused=refused)
        if isinstance(exc, anthropic.APIConnectionError):
            return ApiCallError(f"Anthropic API unreachable: {type(exc).__name__}",
                                retries=self._sdk_options["max_retries"])
        return ApiCallError(f"Anthropic API answer unusable: {type(exc).__name__}")

    def _reply(self, message: Any, retries: int, *, batch: bool = False) -> Reply:
        """The reply to one request, direct or batched: its answer and raw text with the secrets blanked out
        (the transcript, sent back to the API in a repair request only, is left as the API wrote it)."""
        usage = message.usage
        written, read = usage.cache_creation_input_tokens or 0, usage.cache_read_input_tokens or 0
        blocks = [block.model_dump(mode="json", exclude_none=True) for block in message.content]
        tool = next((b for b in message.content if b.type == "tool_use"), None)
        text = "".join(b.text for b in message.content if b.type == "text")
        truncated = message.stop_reason == "max_tokens"  # cut off mid-answer: never taken, even if it parses
        # the request forced the template's tool (_create_params): text, even holding JSON, is no answer
        answer = tool.input if tool is not None and isinstance(tool.input, dict) else None
        return Reply(
            answer=None if truncated else self._redacted(answer),
            raw_text=self._redacted(text or str(tool.input if tool is not None else None)),
            input_tokens=usage.input_tokens + written + read,
            output_tokens=usage.output_tokens,
            retries=retries,
            cost_usd=self.cost(usage.input_tokens, usage.output_tokens, batch=batch, cache_write_tokens=written,
                               cache_read_tokens=read),
            prompt_cache_write_tokens=written,
            prompt_cache_read_tokens=read,
            transcript=[{"role": "assistant", "content": blocks}] if blocks else [],
            tool_use_id=tool.id if tool is not None else None,
            tool_name=self._redacted(tool.name) if tool is not None else None,
            truncated=truncated,
            empty=not blocks,
        )

    @asynccontextmanager
    async def _in_bulk(self, requests: Sequence[Request]) -> AsyncIterator[dict[str, BulkOutcome]]:
        if (self._batch is None or self._journal is None or len(requests) < self._batch.min_calls
                or self._unsendable() is not None):  # a refused client neither submits nor polls: calls not sent
            yield {}
            return
        run = BatchRun(_MessageBatches(self), self._journal, self._batch, self.provider, self.model)
        yield await run.answer([
            BatchRequest(r.key, r.call.key, r.template.ref, self._first_params(r)) for r in requests])
        run.finish()


class _MessageBatches:
    """The batch API (``rag_assets.llm.batch.BatchApi``) over the SDK's ``messages.batches``."""

    def __init__(self, client: AnthropicClient) -> None:
        assert client._sdk is not None, "_open() runs before any request"
        self._client, self._batches = client, client._sdk.messages.batches

    async def submit(self, requests: Sequence[BatchRequest]) -> str:
        try:
            batch = await self._batches.create(
                requests=[{"custom_id": r.custom_id, "params": r.params} for r in requests])
        except anthropic.APIError as exc:
            error = self._client._api_call_error(exc, refusals=(401,))
            self._client._refuse(error)  # a refused key: no further batch, and no call asked directly
            raise error from None
        return batch.id

    async def ended(self, batch_id: str) -> bool | None:
        """None also for an archived batch: its results are gone (Anthropic keeps them 29 days)."""
        try:
            batch = await self._batches.retrieve(batch_id)
        except anthropic.NotFoundError:
            return None
        except anthropic.APIError as exc:
            raise self._client._api_call_error(exc) from None
        if batch.archived_at is not None or (batch.processing_status == "ended" and not batch.results_url):
            return None
        return batch.processing_status == "ended"

    async def results(self, batch_id: str) -> AsyncIterator[tuple[str, BatchOutcome]]:
        try:
            lines = await self._batches.results(batch_id)
            async for line in lines:
                yield line.custom_id, self._outcome(line.result)
        except anthropic.APIError as exc:
            raise self._client._api_call_error(exc) from None

    def _outcome(self, result: Any) -> BatchOutcome:
        if result.type == "succeeded":
            return self._client._reply(result.message, 0, batch=True)
        if result.type == "errored":
            error = result.error.error
            return self._client._redacted(f"the batch request errored: {error.type}: {error.message}")
        return f"the batch request was {result.type}"


def _error_message(exc: anthropic.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else {}
    return f"{error.get('type', 'error')}: {error.get('message', exc.message)}"
