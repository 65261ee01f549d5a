"""What ``rag-assets run`` reports: the results that hold for the corpus version after the run.

A run materializes only what is stale (``defs/freshness.py``); an asset it skipped keeps the results of
the run that last materialized it, and those still hold (same code, same inputs). So the summary is
this invocation's materializations and check results, plus, for each asset partition it did not select,
the newest materialization and the check results of the earlier run that made it, marked as such. An
asset the run selected but did not materialize (a step failed) is left out rather than shown with an
older result that no longer holds. A CI job reading ``--summary-json`` after a run that had nothing to do
therefore still sees every check, and never an empty list that would pass vacuously.

JSON shape::

    {"ok": true | false,
     "failed_steps": [{"run_id", "step", "asset", "error"}],
     "assets": {ASSET: {PARTITION: {METADATA_KEY: value}}},
     "checks": [{"asset", "check", "partition", "passed", "description", "run_id"}],
     "earlier_runs": {ASSET: {PARTITION: RUN_ID}}}

``ok`` is false exactly when ``rag-assets run`` exits 1: a step failed (``failed_steps`` names each, with its asset
and its error on one line, secrets blanked: the LLM budget that stopped the evaluation, a store error), or a
gate failed in this run or still stands from an earlier one.

Keys are the metadata labels the Dagster UI shows; values are plain JSON (markdown tables as their
text, paths as strings, NaN as null). A partition key of ``null`` (an unpartitioned asset) is
written as ``""``. ``earlier_runs`` names the asset partitions whose results come from an earlier run.
One figure is the store's now rather than the one recorded: curation_queue's ``pending`` (``with_pending_review``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg

from rag_assets.app.review_queue import awaiting_review
from rag_assets.app.store import Store
from rag_assets.cli.failures import FailedStep
from rag_assets.defs.reuse import last_materialization

AssetPartition = tuple[dg.AssetKey, str | None]


@dataclass(frozen=True)
class Shown:
    """A materialization or check result the summary shows, and the run that recorded it."""

    run_id: str
    earlier: bool
    materialization: dg.AssetMaterialization | None = None
    check: dg.AssetCheckEvaluation | None = None


@dataclass(frozen=True)
class RunState:
    """The materializations (one per asset partition) and check results (one per check and partition) shown."""

    materializations: list[Shown]
    checks: list[Shown]


def _entries(instance: dg.DagsterInstance, run_ids: Iterable[str]) -> list[dg.EventLogEntry]:
    kinds = {dg.DagsterEventType.ASSET_MATERIALIZATION, dg.DagsterEventType.ASSET_CHECK_EVALUATION}
    return [entry for run_id in run_ids for entry in instance.all_logs(run_id, of_type=kinds)]


def _holding_runs(instance: dg.DagsterInstance, kept: Collection[AssetPartition]) -> list[str]:
    """The runs that made the newest materialization of each kept asset partition, oldest first."""
    runs: dict[str, float] = {}
    for key, partition in kept:
        record = last_materialization(instance, key, partition)
        if record is not None:
            runs[record.run_id] = max(runs.get(record.run_id, 0.0), record.timestamp)
    return sorted(runs, key=runs.__getitem__)


def run_state(instance: dg.DagsterInstance, current_runs: Iterable[str], kept: Collection[AssetPartition]) -> RunState:
    """This invocation's results (``current_runs``, in order) and, for the ``kept`` asset partitions the
    invocation did not select, the results of the earlier runs that still hold them."""
    current = list(current_runs)
    earlier = [run_id for run_id in _holding_runs(instance, kept) if run_id not in current]
    kept_set = set(kept)
    materializations: dict[AssetPartition, Shown] = {}
    checks: dict[tuple[dg.AssetKey, str, str | None], Shown] = {}
    for entry in _entries(instance, [*earlier, *current]):
        is_earlier = entry.run_id not in current
        if entry.asset_materialization is not None:
            found = entry.asset_materialization
            target = (found.asset_key, found.partition)
            if not is_earlier or target in kept_set:
                materializations[target] = Shown(entry.run_id, is_earlier, materialization=found)
        elif entry.asset_check_evaluation is not None:
            check = entry.asset_check_evaluation
            if not is_earlier or (check.asset_key, check.partition) in kept_set:
                checks[(check.asset_key, check.check_name, check.partition)] = Shown(entry.run_id, is_earlier, check=check)
    return RunState(list(materializations.values()), list(checks.values()))


def with_pending_review(state: RunState, store: Store) -> RunState:
    """``state`` with each shown curation_queue partition's ``pending`` read from the store now (``awaiting_review``:
    pending candidates and conflicts, the count ``rag-assets status`` prints) instead of the one the queue recorded: a production day the run scores
    afterwards adds coverage gaps as candidates to the review file, so the recorded figure falls behind it."""
    def current(shown: Shown) -> Shown:
        found = shown.materialization
        if found is None or found.asset_key.path[-1] != "curation_queue" or found.partition is None:
            return shown
        metadata = {**found.metadata, "pending": dg.MetadataValue.int(len(awaiting_review(store, found.partition)))}
        return dataclasses.replace(shown, materialization=dg.AssetMaterialization(
            asset_key=found.asset_key, description=found.description, metadata=metadata, partition=found.partition,
            tags=found.tags))

    return RunState([current(shown) for shown in state.materializations], state.checks)


def fails_run(check: dg.AssetCheckEvaluation) -> bool:
    """Whether a check result fails the run that records it, by Dagster's own rule: a blocking check that failed
    with ERROR severity (a gate). A warning, or a failed check that blocks nothing (a drift alert), does not."""
    return not check.passed and check.severity == dg.AssetCheckSeverity.ERROR and bool(check.blocking)


def failed_gates(state: RunState) -> list[Shown]:
    """The shown check results that fail a run, this invocation's and those of earlier runs that still hold: a
    re-run that had nothing to do must not pass a gate its results failed (``rag-assets run`` exits 1 on them)."""
    return [shown for shown in state.checks if fails_run(shown.check)]


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


def summary_dict(state: RunState, failures: Sequence[FailedStep] = (), ok: bool = True) -> dict:
    """Whether the run passed, its failed steps, every shown materialization's metadata by asset and partition,
    every shown check result, and which of them come from earlier runs."""
    assets: dict[str, dict[str, dict[str, Any]]] = {}
    earlier: dict[str, dict[str, str]] = {}
    for shown in state.materializations:
        materialization = shown.materialization
        name, partition = materialization.asset_key.to_user_string(), materialization.partition or ""
        assets.setdefault(name, {})[partition] = {label: _plain(entry.value)
                                                  for label, entry in materialization.metadata.items()}
        if shown.earlier:
            earlier.setdefault(name, {})[partition] = shown.run_id
    checks = [{"asset": shown.check.asset_key.to_user_string(), "check": shown.check.check_name,
               "partition": shown.check.partition, "passed": shown.check.passed,
               "description": shown.check.description, "run_id": shown.run_id} for shown in state.checks]
    return {"ok": ok, "failed_steps": [failure.as_json() for failure in failures], "assets": assets, "checks": checks,
            "earlier_runs": earlier}


def write_summary_json(state: RunState, path: Path, failures: Sequence[FailedStep] = (), ok: bool = True) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary_dict(state, failures, ok), indent=2, sort_keys=True) + "\n", encoding="utf-8")
