"""Partitions of the bundled instance: every corpus-pinned asset by corpus version id; production
traffic by day (UTC). Each instance has its own (``Lifecycle.corpus_versions``)."""

from rag_assets.defs.lifecycle import BUNDLED

corpus_versions = BUNDLED.corpus_versions

production_days = BUNDLED.production_days
