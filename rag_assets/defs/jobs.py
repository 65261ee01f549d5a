"""Jobs: ``lifecycle`` materializes the whole corpus-pinned chain for one corpus version."""

import dagster as dg

lifecycle_job = dg.define_asset_job(
    name="lifecycle",
    selection=dg.AssetSelection.all() - dg.AssetSelection.groups("production", "calibration"),
    description="Everything for one corpus version, upstream first: what the README's first command runs.",
)

production_job = dg.define_asset_job(
    name="production",
    selection=dg.AssetSelection.groups("production"),
    description="Sample, judge and watch one day of production traffic: what the production-log sensor runs.",
)

curation_import_job = dg.define_asset_job(
    name="curation_import",
    selection=dg.AssetSelection.assets("curated_decisions", "golden_set", "rag_answers", "evaluation"),
    description="Import reviewed files for one corpus version, rebuild its golden set, answer and score it: what "
                "the inbox sensor runs.",
)
