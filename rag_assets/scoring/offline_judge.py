"""The offline judge: deterministic heuristics answering the judge templates without a model.

(Placeholder signatures; the implementations come with their labelled-pair benchmark.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def faithfulness(inputs: Mapping[str, Any]) -> dict[str, Any]:
    raise NotImplementedError


def answer_questions(inputs: Mapping[str, Any]) -> dict[str, Any]:
    raise NotImplementedError


def context_precision(inputs: Mapping[str, Any]) -> dict[str, Any]:
    raise NotImplementedError


def reference_statements(inputs: Mapping[str, Any]) -> dict[str, Any]:
    raise NotImplementedError


def context_recall(inputs: Mapping[str, Any]) -> dict[str, Any]:
    raise NotImplementedError
