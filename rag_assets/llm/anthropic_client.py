"""Claude through the official ``anthropic`` SDK (AsyncAnthropic).

Structured output is a forced tool call whose input schema is the template's pydantic model.
Retries on 429/529/5xx/timeouts are the SDK's own (``max_retries``); the count comes from the
SDK's raw response (``retries_taken``). The API key is handed to the SDK and kept nowhere else.

With ``batch`` settings and a journal, a run with at least ``min_calls`` cache misses sends them
as Message Batches (half the price; see ``rag_assets.llm.batch``) with exactly the parameters of
a direct request, and asks directly only what the batches could not answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anthropic

from rag_assets.llm.batch import BatchJournal, BatchOutcome, BatchRequest, BatchRun, BatchSettings
from rag_assets.llm.client import ApiCallError, BulkOutcome, LLMClient, Reply, Request, parse_json_object
from rag_assets.llm.pricing import DEFAULT_PRICES, Price, cost_usd
from rag_assets.llm.results import ANTHROPIC
from rag_assets.llm.templates import PromptTemplate


class AnthropicClient(LLMClient):
    provider = ANTHROPIC

    def __init__(self, api_key: str, model: str, *, base_url: str | None = None, timeout: float = 60.0,
                 max_retries: int = 4, max_concurrency: int = 4, requests_per_minute: int | None = None,
                 prices: Mapping[str, Price] = DEFAULT_PRICES, batch: BatchSettings | None = None,
                 journal: BatchJournal | None = None) -> None:
        super().__init__(max_concurrency, requests_per_minute)
        if not api_key:
            raise ValueError("an Anthropic API key is required (set ANTHROPIC_API_KEY)")
        if batch is not None and journal is None:
            raise ValueError("the batch path needs a journal in the store, to resume a batch after a crash")
        self.model = model
        self._sdk_options = {"api_key": api_key, "base_url": base_url, "timeout": timeout, "max_retries": max_retries}
        self._prices = prices
        self._batch, self._journal = batch, journal
        self._sdk: anthropic.AsyncAnthropic | None = None

    def __repr__(self) -> str:
        mode = ", batch" if self._batch is not None else ""
        return f"AnthropicClient(model={self.model!r}, base_url={self._sdk_options['base_url']!r}{mode})"

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        return cost_usd(self.model, input_tokens, output_tokens, self._prices)

    async def _open(self) -> None:
        self._sdk = anthropic.AsyncAnthropic(**self._sdk_options)

    async def _close(self) -> None:
        if self._sdk is not None:
            await self._sdk.close()
            self._sdk = None

    def _create_params(self, template: PromptTemplate, system: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The Messages API parameters of one request, direct or in a batch."""
        return {
            "model": self.model,
            "max_tokens": template.max_tokens,
            "system": system,
            "messages": messages,
            "tools": [{"name": template.tool_name, "description": template.tool_description,
                       "input_schema": template.input_schema()}],
            "tool_choice": {"type": "tool", "name": template.tool_name},
        }

    async def _ask(self, template: PromptTemplate, inputs: dict[str, Any], system: str,
                   messages: list[dict[str, Any]]) -> Reply:
        assert self._sdk is not None, "_open() runs before any request"
        try:
            raw = await self._sdk.messages.with_raw_response.create(**self._create_params(template, system, messages))
        except anthropic.APIError as exc:
            raise self._api_call_error(exc) from exc
        retries = raw.retries_taken
        try:
            message = await raw.parse()
        except Exception as exc:  # a 200 whose body is not a Messages API response
            return Reply(answer=None, raw_text=f"unreadable response body ({type(exc).__name__})", retries=retries)
        return self._reply(message, retries)

    def _api_call_error(self, exc: anthropic.APIError) -> ApiCallError:
        """What a failed SDK call is recorded as, with the retries the SDK made before giving up."""
        if isinstance(exc, anthropic.APIStatusError):
            retried = exc.status_code in (408, 409, 429) or exc.status_code >= 500
            return ApiCallError(f"Anthropic API error {exc.status_code}: {_error_message(exc)}",
                                retries=self._sdk_options["max_retries"] if retried else 0)
        if isinstance(exc, anthropic.APIConnectionError):
            return ApiCallError(f"Anthropic API unreachable: {type(exc).__name__}",
                                retries=self._sdk_options["max_retries"])
        return ApiCallError(f"Anthropic API answer unusable: {type(exc).__name__}")

    def _reply(self, message: Any, retries: int, *, batch: bool = False) -> Reply:
        usage = message.usage
        input_tokens, output_tokens = usage.input_tokens, usage.output_tokens
        blocks = [block.model_dump(mode="json", exclude_none=True) for block in message.content]
        tool = next((b for b in message.content if b.type == "tool_use"), None)
        text = "".join(b.text for b in message.content if b.type == "text")
        answer = tool.input if tool is not None and isinstance(tool.input, dict) else parse_json_object(text)
        return Reply(
            answer=answer,
            raw_text=text or str(answer),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            retries=retries,
            cost_usd=cost_usd(self.model, input_tokens, output_tokens, self._prices, batch=batch),
            transcript=[{"role": "assistant", "content": blocks}] if blocks else [],
            tool_use_id=tool.id if tool is not None else None,
        )

    @asynccontextmanager
    async def _in_bulk(self, requests: Sequence[Request]) -> AsyncIterator[dict[str, BulkOutcome]]:
        if self._batch is None or self._journal is None or len(requests) < self._batch.min_calls:
            yield {}
            return
        run = BatchRun(_MessageBatches(self), self._journal, self._batch, self.provider, self.model)
        yield await run.answer([
            BatchRequest(r.key, r.call.key, r.template.ref,
                         self._create_params(r.template, r.system, [{"role": "user", "content": r.user}]))
            for r in requests])
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
            raise self._client._api_call_error(exc) from exc
        return batch.id

    async def ended(self, batch_id: str) -> bool | None:
        """None also for an archived batch: its results are gone (Anthropic keeps them 29 days)."""
        try:
            batch = await self._batches.retrieve(batch_id)
        except anthropic.NotFoundError:
            return None
        except anthropic.APIError as exc:
            raise self._client._api_call_error(exc) from exc
        if batch.archived_at is not None or (batch.processing_status == "ended" and not batch.results_url):
            return None
        return batch.processing_status == "ended"

    async def results(self, batch_id: str) -> AsyncIterator[tuple[str, BatchOutcome]]:
        try:
            lines = await self._batches.results(batch_id)
            async for line in lines:
                yield line.custom_id, self._outcome(line.result)
        except anthropic.APIError as exc:
            raise self._client._api_call_error(exc) from exc

    def _outcome(self, result: Any) -> BatchOutcome:
        if result.type == "succeeded":
            return self._client._reply(result.message, 0, batch=True)
        if result.type == "errored":
            error = result.error.error
            return f"the batch request errored: {error.type}: {error.message}"
        return f"the batch request was {result.type}"


def _error_message(exc: anthropic.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else {}
    return f"{error.get('type', 'error')}: {error.get('message', exc.message)}"
