"""``rag-assets run --summary-json FILE``: the run's summary as JSON, for CI pipelines.

Shape::

    {"assets": {ASSET: {PARTITION: {METADATA_KEY: value}}},
     "checks": [{"asset", "check", "partition", "passed", "description"}]}

Keys are the metadata labels the Dagster UI shows; values are plain JSON (markdown tables as their
text, paths as strings, NaN as null). A partition key of ``null`` (an unpartitioned asset) is
written as ``""``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dagster as dg


def _plain(value: Any) -> Any:
    """A metadata value as JSON: numbers, strings, lists and objects as they are, anything else as text."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


def summary_dict(results: Sequence[dg.ExecuteInProcessResult]) -> dict:
    """Every materialization's metadata by asset and partition (a later one wins), and every check result."""
    assets: dict[str, dict[str, dict[str, Any]]] = {}
    checks = []
    for result in results:
        for event in result.get_asset_materialization_events():
            materialization = event.step_materialization_data.materialization
            assets.setdefault(materialization.asset_key.to_user_string(), {})[materialization.partition or ""] = {
                label: _plain(entry.value) for label, entry in materialization.metadata.items()}
        for event in result.all_events:
            if event.event_type_value == "ASSET_CHECK_EVALUATION":
                check = event.event_specific_data
                checks.append({"asset": check.asset_key.to_user_string(), "check": check.check_name,
                               "partition": check.partition, "passed": check.passed,
                               "description": check.description})
    return {"assets": assets, "checks": checks}


def write_summary_json(results: Sequence[dg.ExecuteInProcessResult], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary_dict(results), indent=2, sort_keys=True) + "\n", encoding="utf-8")
