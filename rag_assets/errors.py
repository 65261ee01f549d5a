"""Domain exceptions.

Every message names what a user needs to find the problem (file, row, field), because these
messages travel unchanged into failed Dagster runs and check metadata; so a secret (an API key, a
token a server echoed back) is blanked out of a message with ``redact`` where the message is made.
"""

from __future__ import annotations

import base64
import functools
import re
from typing import Any

#: A piece derived from a secret (the credential after ``Bearer``, a Basic password) shorter than this is not blanked:
#: it could be an ordinary word, and blanking it would garble every message; a secret as given is always blanked.
MIN_DERIVED_SECRET = 6
_SCHEMED = re.compile(r"\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)\s+(\S(?:.*\S)?)\s*", re.DOTALL)


def _derived(secret: str) -> list[str]:
    """What a server may echo of ``secret`` instead of all of it: the credential after an auth scheme word
    (``Bearer``, ``Basic``, ``Token``, ``ApiKey`` …, RFC 7235), and for a base64 credential its decoded
    ``user:password`` and the password."""
    found = [secret.strip()]
    if scheme := _SCHEMED.fullmatch(secret):
        found.append(scheme.group(2))
    for credential in list(found):
        try:
            decoded = base64.b64decode(credential, validate=True).decode("utf-8")
        except ValueError:  # not base64, or not text (binascii.Error and UnicodeDecodeError are ValueErrors)
            continue
        if ":" in decoded and decoded.isprintable():
            found += [decoded, decoded.split(":", 1)[1]]
    return [piece for piece in found if len(piece) >= MIN_DERIVED_SECRET]


@functools.lru_cache(maxsize=64)
def secret_forms(secrets: tuple[str, ...]) -> tuple[str, ...]:
    """Every form of ``secrets`` to blank out, longest first (so a form inside another is not left half-shown):
    each secret as given (a header value, an env var's value, a key) and what ``_derived`` finds in it."""
    forms = {secret for secret in secrets if secret}
    forms.update(piece for secret in secrets for piece in _derived(secret))
    return tuple(sorted(forms, key=lambda form: (-len(form), form)))


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every form of each (non-empty) secret replaced by ``***`` (``secret_forms``): a server that
    echoes only the token of ``Bearer <token>``, or the password of a Basic credential, shows stars too."""
    for form in secret_forms(tuple(secrets)):
        text = text.replace(form, "***")
    return text


def redact_json(value: Any, secrets: tuple[str, ...]) -> Any:
    """``value`` (a text, or a JSON value such as a response body or a tool input) with ``redact`` applied to
    every string in it, keys included."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {redact_json(k, secrets): redact_json(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_json(v, secrets) for v in value]
    return value


class RagAssetsError(Exception):
    """Base class of every error the domain core raises on purpose."""


class CorpusError(RagAssetsError):
    """The corpus root cannot be snapshotted at all (missing, empty, not a folder)."""


class ConfigError(RagAssetsError):
    """A setting or environment variable has a value the project cannot use."""


class StoreUnavailable(RagAssetsError):
    """The store's database cannot be used as it is (disk full, read-only, corrupt, locked by another
    process): the message is one line naming the file and what to do; the failed transaction wrote nothing."""


class ReviewFileRejected(RagAssetsError):
    """A review file failed validation; nothing from it is applied. ``problems`` name row and field."""

    def __init__(self, path: str, problems: list) -> None:
        self.path = path
        self.problems = problems
        shown = "\n".join(f"  - {p}" for p in problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(f"{path} rejected ({len(problems)} problem(s)):\n{shown}{more}")

    def first_line(self) -> str:
        """The file and its first problem, on one line, with how many more there are."""
        more = f" (and {len(self.problems) - 1} more problem(s))" if len(self.problems) > 1 else ""
        return f"{self.path}: {self.problems[0]}{more}"


class BatchNotFinished(RagAssetsError):
    """A provider batch has not ended by the poll deadline, or could not be polled. It stays
    recorded as pending in the store, and the next run with the same calls resumes polling it."""
