"""Runnable examples of plugging a team's own code into rag_assets: they sit above the package's layers, as user code does."""
