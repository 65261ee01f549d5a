"""Versioned prompt templates.

A template is everything that shapes one kind of LLM call: its id and version (both enter the
cache key and the asset's code_version), the system prompt, how inputs render into the user
message, the pydantic model the answer must validate against (sent to Claude as a forced tool's
input schema), and the deterministic offline implementation that answers when no key is set.
Each use (generation, reference RAG, judge) keeps its templates in its own ``prompts`` module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

OfflineAnswer = Callable[[Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class PromptTemplate:
    id: str
    version: str
    system: str
    user: Callable[[Mapping[str, Any]], str]
    output_model: type[BaseModel]
    offline: OfflineAnswer
    tool_description: str
    max_tokens: int = 2048

    @property
    def ref(self) -> str:
        """``id@version``: how a template is named in records, cache keys and code versions."""
        return f"{self.id}@{self.version}"

    @property
    def tool_name(self) -> str:
        return f"record_{self.id}"

    def input_schema(self) -> dict[str, Any]:
        return self.output_model.model_json_schema()

    def render(self, inputs: Mapping[str, Any]) -> str:
        return self.user(inputs)
