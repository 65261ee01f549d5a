"""One POST to a user's RAG endpoint, bounded in time and size, with secret headers from env vars.

urllib's ``timeout`` bounds each socket read, so a server that drips a byte every few seconds
never times out; here a timer shuts the socket down at the deadline, which ends whatever read is
blocked, so ``timeout`` is a deadline for the whole request (connect, headers and body). The body
is read in pieces and abandoned past ``max_bytes``, so a runaway response never sits in memory.

Header values are templates: ``"Bearer ${RAG_ASSETS_SYSTEM_TOKEN}"`` names the environment
variable that holds the secret, so the configuration (shown in the UI, hashed into the run) holds
only the name. Values are read when the system is set up; they are never returned by ``config()``;
those of credential headers are blanked out of error messages and of what the server answers, in every form a
server may echo (``rag_assets.errors.secret_forms``). That is the one way to send a secret: a URL that holds one
(``user:password@`` or a query parameter such as ``api_key``) is refused where it is configured,
since the URL is the system's name in the store, the report, the event log and Dagster's run storage.
"""

from __future__ import annotations

import http.client
import re
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

from rag_assets.errors import ConfigError
from rag_assets.settings import environment

_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SECRET_HEADER = re.compile(r"authorization|cookie|token|key|secret|password|auth", re.IGNORECASE)
#: An auth scheme word (RFC 7235 and common vendor ones) opening a header value: the header carries a credential.
_AUTH_SCHEME = re.compile(r"\s*(basic|bearer|digest|token|api-?key|key|negotiate|ntlm|oauth|dpop|hoba|mutual|ssws|sso-key|"
                          r"aws4-hmac-sha256)\s+\S", re.IGNORECASE)
_SECRET_PARAMETER = re.compile(r"token|key|secret|passw|pwd|auth|signature|credential|session|^sig$", re.IGNORECASE)
_PIECE = 64 * 1024
#: How the ``headers`` setting carries a secret (for a refusal message).
HEADERS_INSTEAD = "headers: {Authorization: 'Bearer ${VARIABLE}'}"


class ResponseTooLarge(Exception):
    """The body went past the size cap; reading stopped there."""


@dataclass(frozen=True)
class HttpReply:
    status: int
    body: bytes


def _is_credential(name: str, value: str, variables: list[str]) -> bool:
    """Whether a header carries a credential: its name says so (``Authorization``, ``X-Api-Key``, ``Cookie`` …), its
    value opens with an auth scheme word, or it reads an env var whose name says so (``${TEAM_TOKEN}``)."""
    return bool(_SECRET_HEADER.search(name) or _AUTH_SCHEME.match(value)
                or any(_SECRET_HEADER.search(variable) for variable in variables))


def resolve_headers(templates: Mapping[str, str], environ: Mapping[str, str] | None = None) -> tuple[dict[str, str], tuple[str, ...]]:
    """The headers to send and the secrets in them (to blank out of what the server sends back): of each credential
    header (``_is_credential``) its env vars' values and its value (``rag_assets.errors.redact`` also blanks what a
    server may echo of them alone). Any other header (``X-Tenant: ${TENANT}``) holds no secret: its value, a word
    such as "docs", is left in answers and retrieved texts, which blanking it would garble before they are scored.

    A header whose name suggests a credential must take its value from an env var: a literal
    secret in the config would be shown in the UI and stored with the run.
    """
    environ = environment() if environ is None else environ
    headers: dict[str, str] = {}
    secrets: list[str] = []
    for name, template in templates.items():
        names = _ENV_REFERENCE.findall(template)
        if not names and _SECRET_HEADER.search(name):
            raise ConfigError(f"header {name}: a credential must come from an environment variable, "
                              f"written as ${{VARIABLE}} in the value (e.g. 'Bearer ${{RAG_ASSETS_SYSTEM_TOKEN}}')")
        missing = [var for var in names if not environ.get(var)]
        if missing:
            raise ConfigError(f"header {name}: environment variable {', '.join(missing)} is not set")
        headers[name] = _ENV_REFERENCE.sub(lambda match: environ[match.group(1)], template)
        if names and _is_credential(name, headers[name], names):
            secrets.extend([environ[var] for var in names] + [headers[name]])
    return headers, tuple(sorted(set(secrets), key=len, reverse=True))


def url_credential(url: str) -> str | None:
    """What in ``url`` is a credential, in words that do not repeat it; None when it holds none."""
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        return "user:password before the host" if parts.password is not None else "a user name before the host"
    names = sorted({name for name, _ in parse_qsl(parts.query, keep_blank_values=True) if _SECRET_PARAMETER.search(name)})
    return f"query parameter {', '.join(names)}" if names else None


def refuse_url_credentials(url: str, setting: str, instead: str) -> None:
    """ConfigError (one line, naming ``setting``, never the URL) when ``url`` holds a credential;
    ``instead`` shows how that setting's user passes the secret as a header from an env var."""
    found = url_credential(url)
    if found:
        raise ConfigError(f"{setting}: the URL holds a credential ({found}), which would be stored and shown with "
                          f"the run; pass the secret as a header from an environment variable instead: {instead}")


def post(url: str, body: bytes, headers: Mapping[str, str], timeout: float, max_bytes: int) -> HttpReply:
    """POST ``body``; TimeoutError past ``timeout`` seconds in all, ResponseTooLarge past ``max_bytes``.

    Connection failures raise OSError or http.client.HTTPException; any status is returned as is.
    """
    parts = urlsplit(url)
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(parts.hostname or "", parts.port, timeout=timeout)
    expired = threading.Event()
    sockets: list[socket.socket] = []  # the connection drops its socket once the response is open; keep it

    def cut() -> None:
        expired.set()
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    timer = threading.Timer(timeout, cut)
    timer.daemon = True
    timer.start()
    try:
        connection.connect()
        sockets.append(connection.sock)
        if expired.is_set():  # the deadline passed while connecting, before cut() could see the socket
            raise TimeoutError
        connection.request("POST", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""), body,
                           dict(headers))
        response = connection.getresponse()
        declared = response.getheader("Content-Length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise ResponseTooLarge(f"response: body of {int(declared)} bytes is over the {max_bytes}-byte cap")
        pieces, size = [], 0
        while piece := response.read1(_PIECE):
            size += len(piece)
            if size > max_bytes:
                raise ResponseTooLarge(f"response: body cut at the {max_bytes}-byte cap")
            pieces.append(piece)
        if expired.is_set():
            raise TimeoutError(f"no complete answer within {timeout:g} s")
        return HttpReply(response.status, b"".join(pieces))
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set() or isinstance(exc, TimeoutError):
            raise TimeoutError(f"no complete answer within {timeout:g} s") from exc
        raise
    finally:
        timer.cancel()
        connection.close()
