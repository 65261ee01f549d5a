"""``rag-assets run --accept-all``: trial mode through the same run config the UI gives curated_decisions.

The CLI adds nothing of its own: it forces curated_decisions with ``accept_all: true`` (what a user sets in the
UI's launchpad when materializing it) and reads back the label the golden_set asset records
(:mod:`rag_assets.curation.accept_all`), so the summary says as loudly as the report that nobody reviewed.
"""

from __future__ import annotations

from pathlib import Path

from rag_assets.cli.instance import Driven
from rag_assets.cli.summary import RunState


def accept_all_ops(target: Driven) -> dict[str, dict]:
    """The ``ops`` run config that makes curated_decisions accept every pending candidate, unreviewed."""
    node = target.defs.resolve_assets_def(target.key("curated_decisions")).node_def.name
    return {node: {"config": {"accept_all": True}}}


def unreviewed_lines(state: RunState, outbox: Path) -> list[str]:
    """The summary's closing words on a golden set with unreviewed items: how many, and where the review is;
    none when every item shown was reviewed."""
    notes = [str(note.value) for shown in state.materializations
             if shown.materialization.asset_key.path[-1] == "golden_set"
             and (note := shown.materialization.metadata.get("unreviewed_note")) is not None]
    if not notes:
        return []
    return [f"\n{notes[-1]}",
            f"trial mode: the candidates still wait for review in {outbox} (review-<corpus version>.xlsx or .csv); "
            "an expert's accept removes the label, a reject takes the item out of the next golden-set version"]
