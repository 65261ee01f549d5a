"""The one Definitions object (workspace.yaml and ``dagster dev`` load ``defs`` from here).

It is the component instances of ``rag_assets/location/`` (the unnamed, RAG_ASSETS_*-configured one),
loaded by Dagster's component loader from the installed package: ``from_module`` takes the project
root as an argument, so no pyproject.toml beside the package is needed.
"""

from pathlib import Path

import dagster as dg

import rag_assets.location

defs = dg.ComponentTree.from_module(rag_assets.location, Path(rag_assets.location.__file__).parent).build_defs()
