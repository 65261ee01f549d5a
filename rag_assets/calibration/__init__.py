"""Calibration of the judge against the team's experts: sample judged items, read their verdicts back,
and measure how far the judge agrees with them (no Dagster here; rag_assets.defs.assets.calibration wires it)."""
