"""Run great-expectations 1.x expectations against a pandas DataFrame and say which rows failed.

A thin, generic wrapper: the caller builds ``gx.expectations.*`` objects, and gets back one
:class:`ExpectationFailure` per expectation that did not pass, naming the column and the row
*index labels* that failed (``result_format="COMPLETE"`` / ``unexpected_index_list``). Give the
DataFrame the index you want reported (for example the row numbers a spreadsheet shows).

great-expectations is imported lazily (importing it takes seconds), and the ephemeral Data
Context with its pandas data source is built once per process and reused.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import great_expectations as gx
    import pandas as pd
    from great_expectations.core.batch_definition import BatchDefinition

__all__ = ["ExpectationFailure", "validate_frame"]

# The meta key that carries an expectation's position through GE, which reorders results.
_POSITION_KEY = "rag_assets_position"
# Batch data lives in the data source's execution engine, shared by every validation.
_LOCK = threading.Lock()


@dataclass(frozen=True)
class ExpectationFailure:
    """One expectation that did not pass.

    ``expectation`` is the GE type name (``expect_column_values_to_be_in_set``); ``column`` the
    column it checks (None for table-level expectations); ``row_indexes`` the DataFrame index
    labels of the failing rows (empty for aggregate expectations such as row counts);
    ``observed`` the failing values for column-map expectations, otherwise GE's observed value;
    ``exception`` GE's error message when the expectation could not be evaluated at all (a
    missing column, for example), else None.
    """

    expectation: str
    column: str | None
    row_indexes: tuple[int, ...]
    observed: object
    exception: str | None = None


def _quiet_great_expectations() -> None:
    for name in ("great_expectations", "great_expectations.core", "great_expectations.data_context"):
        logging.getLogger(name).setLevel(logging.ERROR)


@functools.lru_cache(maxsize=1)
def _batch_definition() -> BatchDefinition:
    """The ephemeral context's whole-DataFrame batch definition, built once per process."""
    _quiet_great_expectations()
    import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    config = DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False),
        analytics_enabled=False,
        progress_bars=ProgressBarsConfig(globally=False, metric_calculations=False),
    )
    context = gx.get_context(mode="ephemeral", project_config=config)
    asset = context.data_sources.add_pandas("rag_assets_frames").add_dataframe_asset("frame")
    return asset.add_batch_definition_whole_dataframe("whole_frame")


def _as_index(label: Any) -> Any:
    try:
        as_int = int(label)
    except (TypeError, ValueError):
        return label
    return as_int if as_int == label else label


def _exception_message(exception_info: Any) -> str | None:
    """GE reports an expectation it could not evaluate through ``exception_info``: either one
    ``{raised_exception, exception_message}`` dict or a dict of them keyed by metric."""
    if not isinstance(exception_info, dict):
        return None
    candidates = [exception_info] if "raised_exception" in exception_info else list(exception_info.values())
    for info in candidates:
        if isinstance(info, dict) and info.get("raised_exception"):
            return str(info.get("exception_message") or "great-expectations raised an exception")
    return None


def validate_frame(df: pd.DataFrame, expectations: Sequence[gx.expectations.Expectation]) -> list[ExpectationFailure]:
    """Validate ``df`` against ``expectations``; return the failures in the order given.

    The expectations are copied, never changed, so the same objects can be reused.
    """
    if not expectations:
        return []
    import great_expectations as gx

    if any(name is not None for name in df.index.names):
        # GE reports rows of a frame with a *named* index as {column: value, index name: label}
        # dicts instead of labels; an unnamed index gives plain labels.
        df = df.copy(deep=False)
        df.index = df.index.set_names([None] * df.index.nlevels)

    copies = []
    for position, expectation in enumerate(expectations):
        meta = {**(expectation.meta or {}), _POSITION_KEY: position}
        copies.append(expectation.copy(update={"id": None, "meta": meta}, deep=True))
    suite = gx.ExpectationSuite(name="rag_assets_validate_frame", expectations=copies)

    with _LOCK:
        batch = _batch_definition().get_batch(batch_parameters={"dataframe": df})
        outcome = batch.validate(suite, result_format="COMPLETE")

    failures: list[tuple[int, ExpectationFailure]] = []
    for result in outcome.results:
        if result.success:
            continue
        config = result.expectation_config
        position = int((config.meta or {}).get(_POSITION_KEY, len(expectations)))
        details = result.result or {}
        exception = _exception_message(result.exception_info)
        if "unexpected_index_list" in details:
            indexes = tuple(_as_index(i) for i in details.get("unexpected_index_list") or ())
            observed = list(details.get("unexpected_list") or [])
        else:
            indexes = ()
            observed = details.get("observed_value")
        failures.append(
            (
                position,
                ExpectationFailure(
                    expectation=config.type,
                    column=config.kwargs.get("column"),
                    row_indexes=indexes,
                    observed=exception if exception is not None and observed in (None, []) else observed,
                    exception=exception,
                ),
            )
        )
    failures.sort(key=lambda item: item[0])
    return [failure for _, failure in failures]
