"""Versioned prompt templates, and the layout of a call's prompt for the provider's prompt cache.

A template is everything that shapes one kind of LLM call: its id and version (both enter the
cache key and the asset's code_version), the static instructions (``system`` and worked
``examples``), how inputs render into the user message, the pydantic model the answer must
validate against (sent to Claude as a forced tool's input schema), and the deterministic offline
implementation that answers when no key is set. Each use (generation, reference RAG, judge) keeps
its templates in its own ``prompts`` module.

A prompt is laid out so that what many calls share comes first, where a provider can cache it
(Anthropic matches a cached prefix in the order tools, system, messages): the tools and static
instructions (shared by every call of the template), then the ``context`` the template renders
from an item's inputs (shared by every call about that item, e.g. the judge's retrieved chunks),
then the user turn (what differs). Templates that work on the same items form a ``PromptSuite``:
each of their calls carries the tools and instructions of all of them, so the calls of one item
share their prefix up to and including the item's context, whichever template they are of. That
only pays with a prompt cache: without one, a call carries its own template's tool and instructions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from pydantic import BaseModel

OfflineAnswer = Callable[[Mapping[str, Any]], dict[str, Any]]
Render = Callable[[Mapping[str, Any]], str]


@dataclass(frozen=True, eq=False)
class PromptSuite:
    """Templates whose calls share one prefix: every member's tool, then every member's instructions."""

    name: str
    tools: tuple[dict[str, Any], ...]
    instructions: str


@dataclass(frozen=True)
class Prompt:
    """One call's prompt in cache order: ``tools`` and ``instructions`` (static), ``context`` (shared by the
    calls about one item; None when the template has none), ``user`` (this call's own part).
    ``cache_context``: whether a prompt cache breakpoint follows the context (not when no other call of
    the run shares it: the provider would bill writing it, and nothing would read it)."""

    tools: tuple[dict[str, Any], ...]
    instructions: str
    context: str | None
    user: str
    cache_context: bool = True

    @property
    def system(self) -> str:
        """The system prompt as one text (for providers without blocks, token estimates and cache keys)."""
        return self.instructions if self.context is None else f"{self.instructions}\n\n{self.context}"


@dataclass(frozen=True)
class PromptTemplate:
    id: str
    version: str
    system: str
    user: Render
    output_model: type[BaseModel]
    offline: OfflineAnswer
    tool_description: str
    max_tokens: int = 2048
    examples: str = ""  # worked examples: static, sent with the instructions
    rules: str = ""  # rules shared with the other members of its suite, which states them once for all
    context: Render | None = None  # the part of the inputs shared by the calls about one item
    suite: PromptSuite | None = None
    #: what a schema-valid answer leaves out of what it was asked (a retrieved chunk without a verdict), or None:
    #: such an answer is asked to be repaired, never cached, and a cached one is asked again (see ``LLMClient``)
    uncovered: Callable[[Mapping[str, Any], Mapping[str, Any]], str | None] | None = None

    def gap(self, inputs: Mapping[str, Any], output: Mapping[str, Any]) -> str | None:
        """What ``output`` leaves out of ``inputs`` (None when it answers all of it)."""
        return None if self.uncovered is None else self.uncovered(inputs, output)

    @property
    def ref(self) -> str:
        """``id@version``: how a template is named in records, cache keys and code versions."""
        return f"{self.id}@{self.version}"

    @property
    def tool_name(self) -> str:
        return f"record_{self.id}"

    def input_schema(self) -> dict[str, Any]:
        """Built once per output model: every request and cache key needs it, and pydantic rebuilds it on each
        ``model_json_schema()`` (most of the time of building a request). Callers must not modify it."""
        return _json_schema(self.output_model)

    def tool(self) -> dict[str, Any]:
        return {"name": self.tool_name, "description": self.tool_description, "input_schema": self.input_schema()}

    def instructions(self, *, rules: bool = True) -> str:
        """The static instructions; ``rules=False``: without the rules, as a member of a suite that states them."""
        text = f"{self.system}\n{self.rules}" if rules and self.rules else self.system
        return f"{text}\n\n{self.examples}" if self.examples else text

    def render(self, inputs: Mapping[str, Any]) -> str:
        return self.user(inputs)

    def prompt(self, inputs: Mapping[str, Any], *, shared: bool = True) -> Prompt:
        """The call's prompt; ``shared``: in its suite's layout (for a prompt cache), if it has a suite."""
        context = self.context(inputs) if self.context is not None else None
        if self.suite is None or not shared:
            return Prompt((self.tool(),), self.instructions(), context, self.render(inputs))
        return Prompt(self.suite.tools, self.suite.instructions, context,
                      f"Task {self.tool_name}:\n\n{self.render(inputs)}")


@cache
def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


def in_suite(name: str, preamble: str, templates: Sequence[PromptTemplate]) -> tuple[PromptTemplate, ...]:
    """``templates`` as members of one suite (same order): their calls share tools and instructions, in which
    the rules the members share are stated once."""
    rules = dict.fromkeys(t.rules for t in templates if t.rules)
    instructions = "\n\n".join([preamble, *rules, *(f"Task {t.tool_name}:\n{t.instructions(rules=False)}"
                                                      for t in templates)])
    suite = PromptSuite(name, tuple(t.tool() for t in templates), instructions)
    return tuple(replace(t, suite=suite) for t in templates)
