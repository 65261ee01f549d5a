"""Materialize one evaluation partition in this process, as a run worker would (for tests that kill it).

    python -m tests.defs.evaluation_in_child VERSION SHARD_SIZE

The Dagster instance is ``DAGSTER_HOME``'s; the project's settings and the judge (``ANTHROPIC_API_KEY``,
``ANTHROPIC_BASE_URL``) come from the environment, as in a deployment.
"""

from __future__ import annotations

import sys

import dagster as dg

from rag_assets.defs.assets.evaluation import evaluation
from rag_assets.defs.assets.rag import rag_answers
from rag_assets.defs.resources import RESOURCES


def main(version: str, shard_size: int) -> None:
    dg.materialize([rag_answers, evaluation], selection=[evaluation], partition_key=version,
                   instance=dg.DagsterInstance.get(), resources=RESOURCES,
                   run_config={"ops": {"evaluation": {"config": {"shard_size": shard_size}}}})


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
