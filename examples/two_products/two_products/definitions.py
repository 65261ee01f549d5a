"""Every defs.yaml under defs/, one RagEvaluation instance each, loaded by Dagster's component loader."""

from pathlib import Path

import dagster as dg

defs = dg.load_from_defs_folder(path_within_project=Path(__file__).parent)
