"""A materialization whose inputs did not change, recorded again rather than computed again.

A step's materialization carries, beside the data version Dagster keeps, the fingerprint of all
the step read (tag ``INPUTS_TAG``). When a later run reads inputs with the same fingerprint, the
step records the last materialization again (its data version, metadata and check results, with
what says it was reused) instead of recomputing it: the run's history shows it, and downstream
assets see the same data version, so they stay fresh.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import dagster as dg

INPUTS_TAG = "rag_assets/inputs"
#: Tags Dagster writes on every asset materialization (shown in the UI's event details): the data version it
#: recorded, the code version the asset had, and, per upstream asset, the event (storage id) this one read.
DATA_VERSION_TAG = "dagster/data_version"
CODE_VERSION_TAG = "dagster/code_version"
INPUT_EVENT_TAG = "dagster/input_event_pointer/{upstream}"
TAG_CHARS = 40  # of a fingerprint, in a tag (Dagster keeps tag values under 64 characters)


def last_materialization(instance: dg.DagsterInstance, asset: dg.AssetKey,
                         partition: str | None) -> dg.EventLogRecord | None:
    """The newest materialization of ``asset`` in ``partition`` (None: of an unpartitioned asset) by any run."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=asset, asset_partitions=[partition] if partition else None), limit=1).records
    return records[0] if records else None


def replay(instance: dg.DagsterInstance, previous: dg.EventLogRecord, output_name: str,
           metadata: Mapping[str, dg.MetadataValue]) -> Iterator[dg.Output | dg.AssetCheckResult]:
    """``previous`` materialization as this step's output ``output_name`` with ``metadata`` (what the
    caller keeps of the previous metadata, and what says it was reused), then the check results its run
    recorded for the asset."""
    materialization = previous.asset_materialization
    yield dg.Output(None, output_name=output_name, metadata=metadata,
                    data_version=dg.DataVersion(materialization.tags[DATA_VERSION_TAG]),
                    tags={INPUTS_TAG: materialization.tags[INPUTS_TAG]})
    for record in instance.get_records_for_run(previous.run_id,
                                               of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION).records:
        check = record.event_log_entry.dagster_event.event_specific_data
        if check.asset_key == materialization.asset_key:
            yield dg.AssetCheckResult(check_name=check.check_name, passed=check.passed, severity=check.severity,
                                      description=check.description, metadata=check.metadata)
