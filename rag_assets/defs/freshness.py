"""What a run on an unchanged home may skip, by Dagster's own account of data versions.

An asset's materialization records its code version and the data versions of its inputs; while
both are what the graph has now, Dagster calls the partition FRESH and materializing it again
would write the same thing. A run then selects only the stale or missing assets and everything
downstream of them (a re-run upstream may give a new data version). What Dagster cannot see is
decided outside it: a file waiting in the curation inbox, run options that change an asset's
config, a production day whose log records changed (``already_scored``), and a materialization whose judge calls
or RAG answers failed (``judged_with_failures``): it holds no verdict or answer for those, so the next run asks again.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Mapping

import dagster as dg

from rag_assets.defs.reuse import CODE_VERSION_TAG, DATA_VERSION_TAG, INPUT_EVENT_TAG, last_materialization
from rag_assets.production.logs import logged_days
from rag_assets.production.scoring import PRODUCTION_METRICS


def outdated(tags: Mapping[str, str] | None, code_version: str | None,
             inputs: Mapping[str, tuple[str | None, str | None]]) -> bool:
    """Whether a materialization with ``tags`` (None: there is none) would be written differently now, by the
    rule Dagster's UI shows as "stale": the asset's ``code_version`` changed (an asset without one never counts
    as changed code), or an upstream asset's data version now is not the one this materialization read
    (``inputs``: upstream name -> (version read, version now); None: no such materialization)."""
    if tags is None:
        return True
    if code_version is not None and tags.get(CODE_VERSION_TAG) != code_version:
        return True
    return any(read is None or read != now for read, now in inputs.values())


#: The metadata labels of the number of calls that failed in a materialization: judge calls (API error or
#: unparseable answer) and the RAG system's answers (rag_answers).
JUDGE_FAILURES, RAG_ERRORS = "judge_failures", "errors"
#: The metadata label of a materialization whose failures did not decide its outcome (an A/B comparison decided
#: within its budgets): it is not made again for them, or a candidate failing on one item for good would be
#: compared again, and paid for, on every run.
DECIDED = "decided"


def judged_with_failures(materialization: dg.AssetMaterialization) -> bool:
    """Whether some of the calls behind ``materialization`` failed (the judge's, or the RAG system's): it is not up
    to date, however fresh its code and inputs, since the same run again would ask those calls again (for the judge
    the LLM cache answers the calls that succeeded and keeps no failed one, so only the failed calls are sent). A
    RAG system's outage is then answered again by a plain re-run, instead of failing its error budget for good.
    Not when it records that it was ``DECIDED`` despite them."""
    decided = materialization.metadata.get(DECIDED)
    if decided is not None and decided.value is True:
        return False
    return any(isinstance(entry.value, (int, float)) and entry.value > 0
               for entry in (materialization.metadata.get(label) for label in (JUDGE_FAILURES, RAG_ERRORS))
               if entry is not None)


def _version_read(instance: dg.DagsterInstance, tags: Mapping[str, str], upstream: dg.AssetKey,
                  newest: dg.EventLogRecord | None) -> str | None:
    """The data version of the ``upstream`` materialization that ``tags``' materialization read, found by the
    event pointer Dagster records for each upstream asset (``newest``: upstream's newest materialization)."""
    pointer = tags.get(INPUT_EVENT_TAG.format(upstream=upstream.to_user_string()))
    if newest is None or pointer is None or not pointer.isdigit():
        return None
    if int(pointer) == newest.storage_id:
        return _data_version(newest)
    read = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=upstream, storage_ids=[int(pointer)]),
                                           limit=1).records
    return _data_version(read[0]) if read else None


def _data_version(record: dg.EventLogRecord | None) -> str | None:
    return None if record is None else record.asset_materialization.tags.get(DATA_VERSION_TAG)


def stale_selection(instance: dg.DagsterInstance, defs: dg.Definitions, selection: dg.AssetSelection,
                    partition: str, forced: Iterable[dg.AssetKey] = ()) -> list[dg.AssetKey]:
    """The assets of ``selection`` (partitioned alike, as the lifecycle's are) that are stale or missing in
    ``partition``, or whose judge calls failed there, or ``forced``, with all of ``selection`` downstream of them,
    in key order; empty when the partition is up to date. Read from the tags and metadata Dagster records on each
    materialization (public event data); each asset's newest materialization is fetched once.

    An unpartitioned asset of ``selection`` (judge_calibration, over every corpus version) reads every partition of
    its upstream assets, not one input version: it is stale when it is missing, its code changed, or an upstream
    asset's materialization in ``partition`` is newer than its own (an evaluation it has not followed yet)."""
    graph = defs.resolve_asset_graph()
    keys = selection.resolve(graph)
    newest = functools.cache(lambda key: last_materialization(instance, key, held_in(defs, key, partition)))
    changed = set(forced) & keys
    for key in keys - changed:
        assets = defs.resolve_assets_def(key)
        spec = next(spec for spec in assets.specs if spec.key == key)
        record = newest(key)
        tags = None if record is None else record.asset_materialization.tags
        if assets.partitions_def is None:
            behind = record is not None and any(
                (upstream := newest(dep.asset_key)) is not None and upstream.storage_id > record.storage_id
                for dep in spec.deps)
            if behind or outdated(tags, assets.code_versions_by_key.get(key), {}):
                changed.add(key)
            continue
        inputs = {} if tags is None else {
            dep.asset_key.to_user_string(): (_version_read(instance, tags, dep.asset_key, newest(dep.asset_key)),
                                             _data_version(newest(dep.asset_key)))
            for dep in spec.deps}
        if outdated(tags, assets.code_versions_by_key.get(key), inputs) or judged_with_failures(
                record.asset_materialization):
            changed.add(key)
    if not changed:
        return []
    return sorted(dg.AssetSelection.assets(*changed).downstream().resolve(graph) & keys)


def held_in(defs: dg.Definitions, key: dg.AssetKey, partition: str) -> str | None:
    """The partition of asset ``key`` that holds its results for corpus version ``partition``: that one, or None for
    an unpartitioned asset (one result for every version)."""
    return partition if defs.resolve_assets_def(key).partitions_def is not None else None


def _metric_failures(materialization: dg.AssetMaterialization) -> bool:
    """Whether a production day's materialization counts items the judge failed on for some metric
    (``faithfulness_failures`` ...): what a day scored before ``judge_failures`` was recorded shows of its failures."""
    return any(isinstance(entry.value, int) and entry.value > 0
               for entry in (materialization.metadata.get(f"{m}_failures") for m in PRODUCTION_METRICS)
               if entry is not None)


def already_scored(instance: dg.DagsterInstance, asset: dg.AssetKey, code_version: str, folder,
                   days: Collection[str]) -> set[str]:
    """The days whose newest production_sample materialization (by the CLI, a backfill or the log
    sensor) has the data version the day's records give now, was scored under ``code_version`` (the
    asset's now: the same judge) and none of its judge calls failed (``judged_with_failures``): scoring them again
    would change nothing. A day whose judge calls failed is not done: the next `rag-assets run` judges it again, and the LLM
    cache sends only the failed calls. A log that cannot be read now counts as changed: the run is requested,
    never lost."""
    try:
        current = logged_days(folder) if days else {}
    except OSError:
        return set()
    def scored(day: str) -> bool:
        record = last_materialization(instance, asset, day)
        return (record is not None and current.get(day) is not None and _data_version(record) == current[day]
                and record.asset_materialization.tags.get(CODE_VERSION_TAG) == code_version
                and not judged_with_failures(record.asset_materialization)
                and not _metric_failures(record.asset_materialization))

    return {day for day in days if scored(day)}
