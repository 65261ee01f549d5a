"""Jobs: ``lifecycle`` materializes the whole corpus-pinned chain for one corpus version."""

import functools
from typing import Any, TypeAlias

import dagster as dg

from rag_assets.defs.lifecycle import BUNDLED, Lifecycle

AssetJob: TypeAlias = Any
"""What ``dg.define_asset_job`` returns: a job whose assets resolve when Definitions load (its class is not
public API, so it is not named here)."""


@functools.cache
def build_lifecycle_job(lifecycle: Lifecycle) -> AssetJob:
    return dg.define_asset_job(
        name=lifecycle.named("lifecycle"),
        selection=lifecycle.groups() - lifecycle.groups("production"),
        description="Everything for one corpus version, upstream first, and the judge's calibration after its "
                    "evaluation: what the README's first command runs.",
    )


@functools.cache
def build_production_job(lifecycle: Lifecycle) -> AssetJob:
    return dg.define_asset_job(
        name=lifecycle.named("production"),
        selection=lifecycle.groups("production"),
        description="Sample, judge and watch one day of production traffic: what the production-log sensor runs.",
    )


@functools.cache
def build_curation_import_job(lifecycle: Lifecycle) -> AssetJob:
    return dg.define_asset_job(
        name=lifecycle.named("curation_import"),
        selection=lifecycle.assets("curated_decisions", "golden_set", "rag_answers", "evaluation", "judge_probes",
                                   "judge_calibration"),
        description="Import reviewed files for one corpus version, rebuild its golden set, answer and score it, and "
                    "check the judge's agreement with the experts: what the inbox sensor runs.",
    )


lifecycle_job = build_lifecycle_job(BUNDLED)
production_job = build_production_job(BUNDLED)
curation_import_job = build_curation_import_job(BUNDLED)
