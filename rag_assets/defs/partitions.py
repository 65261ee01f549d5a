"""Partitions: every corpus-pinned asset is partitioned by corpus version id."""

import dagster as dg

corpus_versions = dg.DynamicPartitionsDefinition(name="corpus_versions")
