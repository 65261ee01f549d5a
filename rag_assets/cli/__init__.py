"""The ``rag-assets`` command: its commands and their parser (``commands``), the checks of their arguments
before anything runs (``door``), the instance a command drives (``instance``), the summary it prints
(``summary``), the RAG system named by ``--system`` (``system``) and trial mode, ``--accept-all`` (``trial``)."""

from rag_assets.cli.commands import build_parser, main

__all__ = ["build_parser", "main"]
