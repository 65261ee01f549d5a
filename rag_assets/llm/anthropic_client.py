"""Claude through the official ``anthropic`` SDK (AsyncAnthropic).

Structured output is a forced tool call whose input schema is the template's pydantic model.
Retries on 429/529/5xx/timeouts are the SDK's own (``max_retries``); the count comes from the
SDK's raw response (``retries_taken``). The API key is handed to the SDK and kept nowhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anthropic

from rag_assets.llm.client import ApiCallError, LLMClient, Reply, parse_json_object
from rag_assets.llm.pricing import DEFAULT_PRICES, Price, cost_usd
from rag_assets.llm.results import ANTHROPIC
from rag_assets.llm.templates import PromptTemplate


class AnthropicClient(LLMClient):
    provider = ANTHROPIC

    def __init__(self, api_key: str, model: str, *, base_url: str | None = None, timeout: float = 60.0,
                 max_retries: int = 4, max_concurrency: int = 4, requests_per_minute: int | None = None,
                 prices: Mapping[str, Price] = DEFAULT_PRICES) -> None:
        super().__init__(max_concurrency, requests_per_minute)
        if not api_key:
            raise ValueError("an Anthropic API key is required (set ANTHROPIC_API_KEY)")
        self.model = model
        self._sdk_options = {"api_key": api_key, "base_url": base_url, "timeout": timeout, "max_retries": max_retries}
        self._prices = prices
        self._sdk: anthropic.AsyncAnthropic | None = None

    def __repr__(self) -> str:
        return f"AnthropicClient(model={self.model!r}, base_url={self._sdk_options['base_url']!r})"

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        return cost_usd(self.model, input_tokens, output_tokens, self._prices)

    async def _open(self) -> None:
        self._sdk = anthropic.AsyncAnthropic(**self._sdk_options)

    async def _close(self) -> None:
        if self._sdk is not None:
            await self._sdk.close()
            self._sdk = None

    async def _ask(self, template: PromptTemplate, inputs: dict[str, Any], system: str,
                   messages: list[dict[str, Any]]) -> Reply:
        assert self._sdk is not None, "_open() runs before any request"
        try:
            raw = await self._sdk.messages.with_raw_response.create(
                model=self.model,
                max_tokens=template.max_tokens,
                system=system,
                messages=messages,
                tools=[{"name": template.tool_name, "description": template.tool_description,
                        "input_schema": template.input_schema()}],
                tool_choice={"type": "tool", "name": template.tool_name},
            )
        except anthropic.APIStatusError as exc:
            retried = exc.status_code in (408, 409, 429) or exc.status_code >= 500
            raise ApiCallError(f"Anthropic API error {exc.status_code}: {_error_message(exc)}",
                               retries=self._sdk_options["max_retries"] if retried else 0) from exc
        except anthropic.APIConnectionError as exc:
            raise ApiCallError(f"Anthropic API unreachable: {type(exc).__name__}",
                               retries=self._sdk_options["max_retries"]) from exc
        retries = raw.retries_taken
        try:
            message = await raw.parse()
        except Exception as exc:  # a 200 whose body is not a Messages API response
            return Reply(answer=None, raw_text=f"unreadable response body ({type(exc).__name__})", retries=retries)
        return self._reply(message, retries)

    def _reply(self, message: Any, retries: int) -> Reply:
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
            cost_usd=self.cost(input_tokens, output_tokens),
            transcript=[{"role": "assistant", "content": blocks}] if blocks else [],
            tool_use_id=tool.id if tool is not None else None,
        )


def _error_message(exc: anthropic.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else {}
    return f"{error.get('type', 'error')}: {error.get('message', exc.message)}"
