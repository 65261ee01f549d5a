"""Turn domain errors into Dagster failures whose description is the domain message."""

from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

from rag_assets.errors import RagAssetsError


@contextmanager
def domain_errors_fail_the_step() -> Iterator[None]:
    try:
        yield
    except RagAssetsError as exc:
        raise dg.Failure(description=str(exc), metadata={"error": type(exc).__name__}) from exc
