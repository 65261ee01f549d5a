"""Partitions: every corpus-pinned asset by corpus version id; production traffic by day (UTC)."""

import dagster as dg

from rag_assets.settings import Settings

corpus_versions = dg.DynamicPartitionsDefinition(name="corpus_versions")

production_days = dg.DailyPartitionsDefinition(start_date=Settings.production_start())
