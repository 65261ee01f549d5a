"""rag_assets: the lifecycle of a RAG golden set as Dagster software-defined assets.

The domain core (corpus, generation, curation, golden, rag, scoring, llm, store) knows nothing
of Dagster; ``rag_assets.defs`` wires it into assets, checks, sensors and schedules.
"""
