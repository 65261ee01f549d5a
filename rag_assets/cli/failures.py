"""The steps a ``rag-assets run`` saw fail, each as one line a terminal and a CI job can both show.

A step's error travels from the op to Dagster's event log unchanged; the CLI used to print it on the
terminal only, so ``--summary-json`` of a run stopped by the LLM budget or by a store error read like a
run that passed. Here each failed step gets its asset and its error on one line, with the secrets the
run was given (the LLM key, ``--system-header`` values, the store's password) blanked out as
``rag_assets.errors.redact`` blanks them everywhere else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import dagster as dg

from rag_assets.errors import redact
from rag_assets.rag.http_transport import resolve_headers
from rag_assets.settings import API_KEY_ENV, DATABASE_URL_ENV, environment

if TYPE_CHECKING:
    from dagster_shared.error import SerializableErrorInfo

#: the class of the error Dagster wraps an op's error in (its name, as the event's serialised error gives it)
STEP_ERROR_WRAPPER = "DagsterExecutionStepExecutionError"
#: the class of the error an op raises to fail its step with a description of its own (``dg.Failure``)
FAILURE = "Failure"
#: the environment variables besides ``--system-header``'s whose values are secrets
SECRET_VARIABLES = (API_KEY_ENV, "ANTHROPIC_AUTH_TOKEN")


@dataclass(frozen=True)
class FailedStep:
    """One failed step: its run, its key, the asset it computes (None for a step of no asset) and its error."""

    run_id: str
    step: str
    asset: str | None
    error: str

    def line(self) -> str:
        of = f" of asset {self.asset}" if self.asset else ""
        return f"step {self.step}{of} failed: {self.error}"

    def as_json(self) -> dict[str, str | None]:
        return {"run_id": self.run_id, "step": self.step, "asset": self.asset, "error": self.error}


def run_secrets(system: Mapping | None, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The secrets this run holds: the LLM's key and token, those of the credential headers ``--system-header`` sends
    (the HTTP adapter's own, ``resolve_headers``) and the password of the store's URL."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    environ = environment() if environ is None else environ
    config = (system or {}).get("resources", {}).get("rag", {}).get("config", {})
    _, header_secrets = resolve_headers(config.get("headers", {}), environ)  # those the HTTP adapter blanks
    found = [*(environ.get(name, "") for name in SECRET_VARIABLES), *header_secrets]
    try:
        found.append(make_url(environ.get(DATABASE_URL_ENV) or "sqlite://").password or "")
    except ArgumentError:
        pass
    return tuple(secret for secret in found if secret)


def error_line(error: SerializableErrorInfo, secrets: Sequence[str]) -> str:
    """The error the op raised, not Dagster's wrapper around it ("Error occurred while executing op ..."), which says
    nothing the step's key does not, and a ``dg.Failure`` as its description alone (the op wrote it for people); its
    lines joined into one, secrets blanked. Only that wrapper is taken off: an
    error of ours raised from a lower one says what the lower one meant."""
    if error.cls_name == STEP_ERROR_WRAPPER and error.cause is not None:
        error = error.cause
    message = error.message.split(": ", 1)[-1] if error.cls_name == FAILURE else error.message
    return redact(" ".join(line.strip() for line in message.splitlines() if line.strip()), tuple(secrets))


def failed_steps(results: Iterable[dg.ExecuteInProcessResult], asset_of_node: Mapping[str, str],
                 secrets: Sequence[str]) -> list[FailedStep]:
    """Every failed step of ``results``, in order; ``asset_of_node`` names the asset of each top-level node (a step
    key is its node's path, ``evaluation.judge_shard[shard_0000]``, so its first part is the asset's node)."""
    return [FailedStep(result.run_id, event.step_key, asset_of_node.get(event.step_key.split(".")[0].split("[")[0]),
                       error_line(event.step_failure_data.error, secrets))
            for result in results for event in result.all_events if event.is_step_failure]
