"""The lifecycle instance a ``rag-assets`` command drives: ``--instance NAME`` of the code location, and ``--corpus``.

The code location is the module RAG_ASSETS_CODE_LOCATION names (default: the bundled ``rag_assets.definitions``;
``rag-assets ui`` starts ``dagster dev`` on the same one). Its instances are the lifecycles it binds resources
for (``store`` for the unnamed instance, ``<name>_store`` for a named one, as ``build_definitions`` binds them),
so a command runs the very jobs the UI shows and reads the instance's own store, corpus and curation folders.

``--corpus DIR`` reaches the instance's corpus resource as run config of every run (the run records it, the UI
shows it) and as the resource the command itself reads, never as an environment variable.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dagster as dg

from rag_assets.errors import ConfigError
from rag_assets.settings import CODE_LOCATION_ENV, bad_value

if TYPE_CHECKING:  # imported when an instance is driven: the bundled lifecycle reads the settings as it loads
    from rag_assets.defs.lifecycle import Lifecycle


def instance_names(defs: dg.Definitions) -> list[str | None]:
    """The lifecycle instances of ``defs`` by name (None: the unnamed one, listed first), told by their store."""
    names = {None if key == "store" else key.removesuffix("_store") for key in defs.resources
             if key == "store" or key.endswith("_store")}
    return sorted(names, key=lambda name: (name is not None, name or ""))


@dataclass(frozen=True)
class Driven:
    """One instance of a code location, as a command drives it: its jobs, asset keys and resources, with
    ``corpus_root`` (``--corpus``) over its corpus resource's root. ``lifecycle`` gives the instance's names
    (its schedule and thresholds are in the definitions already)."""

    defs: dg.Definitions
    lifecycle: Lifecycle
    corpus_root: str | None = None

    def job(self, name: str) -> dg.JobDefinition:
        return self.defs.resolve_job_def(self.lifecycle.named(name))

    def key(self, asset: str) -> dg.AssetKey:
        return self.lifecycle.key(asset)

    def resource(self, key: str) -> Any:
        """The instance's resource under its bare key, initialized as a run initializes it: its config resolved,
        an ``EnvVar`` (the LLM's key) to the variable's value, since reading an unresolved one raises. The corpus
        with ``corpus_root`` over its root."""
        resource = self.defs.resources[self.lifecycle.named(key)]
        if key == "corpus" and self.corpus_root:
            resource = type(resource)(**{**resource.model_dump(), "root": self.corpus_root})
        with dg.build_resources({key: resource}) as built:
            return getattr(built, key)

    def run_config(self, resources: Mapping[str, dict] | None = None) -> dict:
        """The run config every run of the command takes: ``resources`` (config by bare resource key, as
        ``--system`` gives it) under the instance's keys, and ``--corpus`` as the corpus resource's root."""
        configs = {self.lifecycle.named(key): config for key, config in (resources or {}).items()}
        if self.corpus_root:
            configs[self.lifecycle.named("corpus")] = {"config": {"root": self.corpus_root}}
        return {"resources": configs} if configs else {}


def driven(module: str, name: str | None, corpus: str | None) -> Driven:
    """Instance ``name`` of the code location ``module``; a name it lacks is a ConfigError listing the ones it has."""
    try:
        with warnings.catch_warnings():  # Dagster's notes on its preview APIs, which the user cannot act on
            warnings.simplefilter("ignore")
            defs = importlib.import_module(module).defs
    except (ImportError, AttributeError) as exc:
        raise bad_value(CODE_LOCATION_ENV, repr(module), f"a module with a `defs` here ({exc})",
                        "two_products.definitions") from None
    names = instance_names(defs)
    if name not in names:
        listed = ", ".join("the unnamed one (no --instance)" if n is None else n for n in names) or "none"
        example = next((f"; for example --instance={n}" for n in names if n), "")
        head = (f"code location {module} has no unnamed instance: give --instance" if name is None
                else f"--instance={name!r} is not an instance of code location {module}")
        raise ConfigError(f"{head} (its instances: {listed}){example}")
    from rag_assets.defs.lifecycle import Lifecycle

    root = str(Path(corpus).expanduser().absolute()) if corpus else None
    return Driven(defs, Lifecycle(name=name), root)
