"""``rag-assets run --system / --system-url / --system-header``: try a RAG system without editing code.

The flags become run config of the ``rag`` resource (``RagSystemResource``), so the run records
which system answered exactly as a deployment's config would. Header values are never taken from
the command line: ``NAME=ENVVAR`` names the environment variable that holds the value, and the run
config carries only the reference ``${ENVVAR}``, which the HTTP adapter resolves when it sends.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

from rag_assets.errors import ConfigError
from rag_assets.rag.adapters import load_target
from rag_assets.rag.factory import is_system
from rag_assets.rag.http_transport import refuse_url_credentials
from rag_assets.settings import bad_value, environment

_HEADER = re.compile(r"^([A-Za-z0-9!#$%&'*+.^_`|~-]+)=([A-Za-z_][A-Za-z0-9_]*)$")


def importable_from_here() -> None:
    """Let ``module:function`` name a module in the current directory, as ``python -m`` would. The CLI's runs
    execute in this process (``execute_in_process``), so no step process needs it on its PYTHONPATH."""
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)


def header_templates(pairs: Sequence[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``NAME=ENVVAR`` pairs as ``{NAME: "${ENVVAR}"}``; ConfigError naming the pair or the unset variable."""
    environ = environment() if environ is None else environ
    headers: dict[str, str] = {}
    for pair in pairs:
        match = _HEADER.match(pair)
        if match is None:
            raise ConfigError(f"--system-header {pair!r}: expected NAME=ENVVAR (the value is read from the "
                              "environment variable ENVVAR, never given on the command line)")
        name, variable = match.groups()
        if variable not in environ:
            raise ConfigError(f"--system-header {name}: environment variable {variable} is not set")
        headers[name] = f"${{{variable}}}"
    return headers


def system_run_config(target: str | None, url: str | None, headers: Sequence[str] = (),
                      environ: Mapping[str, str] | None = None) -> dict:
    """The run config selecting the system the flags name; {} for the configured (default) one.

    A target is imported once here, so a typo fails before any step runs; what it names (a function, a
    factory, a LangChain chain, a LlamaIndex engine) is told apart where the system is built
    (``rag_assets.rag.factory``), as for ``rag_assets.evaluate``.
    """
    if target and url:
        raise ConfigError("give --system or --system-url, not both")
    if headers and not url:
        raise ConfigError("--system-header needs --system-url")
    if target:
        importable_from_here()
        found = load_target(target)
        if not is_system(found):
            raise ConfigError(f"--system {target}: names a {type(found).__name__}, not a function, a LangChain chain "
                              "or a LlamaIndex query engine (for example --system my_rag:answer)")
        config: dict = {"kind": "callable", "target": target}
    elif url:
        refuse_url_credentials(url, "--system-url", "--system-header Authorization=VARIABLE (sends $VARIABLE's value)")
        parts = urlsplit(url)  # shown only now: it holds no credential
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise bad_value("--system-url", repr(url), "an http(s) URL", "http://127.0.0.1:8000/answer")
        config = {"kind": "http", "target": url}
        if headers:
            config["headers"] = header_templates(headers, environ)
    else:
        return {}
    return {"resources": {"rag": {"config": config}}}
