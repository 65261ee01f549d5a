"""The ``rag-assets`` command: its commands (``commands``), the checks of their arguments before anything
runs (``door``), the instance a command drives (``instance``), the summary it prints (``summary``) and
the RAG system named by ``--system`` (``system``)."""

from rag_assets.cli.commands import main

__all__ = ["main"]
