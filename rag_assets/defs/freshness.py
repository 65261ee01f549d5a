"""What a run on an unchanged home may skip, by Dagster's own account of data versions.

An asset's materialization records its code version and the data versions of its inputs; while
both are what the graph has now, Dagster calls the partition FRESH and materializing it again
would write the same thing. A run then selects only the stale or missing assets and everything
downstream of them (a re-run upstream may give a new data version). What Dagster cannot see is
decided outside it: a file waiting in the curation inbox, run options that change an asset's
config, a production day whose log records changed (``already_scored``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

import dagster as dg
from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
from dagster._core.definitions.data_version import DATA_VERSION_TAG, CachingStaleStatusResolver, StaleStatus
from dagster._time import get_current_datetime

from rag_assets.defs.reuse import last_materialization
from rag_assets.production.logs import logged_days


def stale_selection(instance: dg.DagsterInstance, defs: dg.Definitions, selection: dg.AssetSelection,
                    partition: str, forced: Iterable[dg.AssetKey] = ()) -> list[dg.AssetKey]:
    """The assets of ``selection`` that are stale or missing in ``partition``, or ``forced``, with all of
    ``selection`` downstream of them, in key order; empty when the partition is up to date."""
    graph = defs.resolve_asset_graph()
    keys = selection.resolve(graph)
    view = AssetGraphView(temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
                          instance=instance, asset_graph=graph)
    resolver = CachingStaleStatusResolver(instance=instance, asset_graph=graph, loading_context=view)
    changed = {key for key in keys if resolver.get_status(key, partition) != StaleStatus.FRESH} | (set(forced) & keys)
    if not changed:
        return []
    return sorted(dg.AssetSelection.assets(*changed).downstream().resolve(graph) & keys)


def already_scored(instance: dg.DagsterInstance, asset: dg.AssetKey, folder, days: Collection[str]) -> set[str]:
    """The days whose newest production_sample materialization (by the CLI, a backfill or the log
    sensor) has the data version the day's records give now: scoring them again would change nothing.
    A log that cannot be read now counts as changed: the run is requested, never lost."""
    try:
        current = logged_days(folder) if days else {}
    except OSError:
        return set()
    scored = set()
    for day in days:
        record = last_materialization(instance, asset, day)
        if record is not None and record.asset_materialization.tags.get(DATA_VERSION_TAG) == current.get(day):
            scored.add(day)
    return scored
