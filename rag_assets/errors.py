"""Domain exceptions.

Every message names what a user needs to find the problem (file, row, field), because these
messages travel unchanged into failed Dagster runs and check metadata; so a secret (an API key, a
token a server echoed back) is blanked out of a message with ``redact`` where the message is made.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from typing import Any
from urllib.parse import quote, quote_plus

#: A piece derived from a secret (the credential after ``Bearer``, a Basic password) shorter than this is not blanked:
#: it could be an ordinary word, and blanking it would garble every message; in an error a secret as given is always
#: blanked, in a reply (what gets scored) a secret shorter than this is not either.
MIN_DERIVED_SECRET = 6
#: In a reply, a Basic password alone is blanked inside other text only from this length and when it is not all
#: letters; one that may be a word ("correcthorsebattery", "password") is blanked where it stands as a whole word
#: (``_reply_passwords``), so "passwords" or "passwordless" in an answer stay as the server sent them.
MIN_REPLY_PASSWORD = 8
_SCHEMED = re.compile(r"\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)\s+(\S(?:.*\S)?)\s*", re.DOTALL)


def _pieces(secret: str) -> tuple[list[str], list[str]]:
    """What a server may echo of ``secret`` besides all of it, as (credentials, passwords): the secret stripped, the
    credential after an auth scheme word (``Bearer``, ``Basic``, ``Token``, ``ApiKey`` …, RFC 7235), and for a base64
    credential its decoded ``user:password``; the passwords alone apart, as a reply keeps a short or plain one."""
    credentials, passwords = [secret.strip()], []
    if scheme := _SCHEMED.fullmatch(secret):
        credentials.append(scheme.group(2))
    for credential in list(credentials):
        try:
            decoded = base64.b64decode(credential, validate=True).decode("utf-8")
        except ValueError:  # not base64, or not text (binascii.Error and UnicodeDecodeError are ValueErrors)
            continue
        if ":" in decoded and decoded.isprintable():
            credentials.append(decoded)
            passwords.append(decoded.split(":", 1)[1])
    return credentials, passwords


def _encoded(form: str) -> set[str]:
    """``form`` as a server may echo it inside JSON (``/`` escaped or not) or a URL (``%20`` or ``+`` for a space)."""
    escaped = json.dumps(form)[1:-1]
    return {escaped, escaped.replace("/", "\\/"), quote(form, safe=""), quote_plus(form, safe="")} - {form}


@functools.lru_cache(maxsize=64)
def secret_forms(secrets: tuple[str, ...], in_reply: bool = False) -> tuple[str, ...]:
    """Every form of ``secrets`` to blank out, longest first (so a form inside another is not left half-shown), each
    also JSON-escaped and URL-encoded (``_encoded``).

    In an error (``in_reply`` false) that is each secret as given and every piece ``_pieces`` finds of at least
    ``MIN_DERIVED_SECRET`` characters. In a successful reply, whose answer and retrieved texts get scored, only what
    cannot be part of an ordinary word: the credentials of at least ``MIN_DERIVED_SECRET`` characters, and a password
    alone of at least ``MIN_REPLY_PASSWORD`` that is not all letters (``_reply_passwords`` blanks the others whole).
    """
    forms: set[str] = set()
    for secret in filter(None, secrets):
        credentials, passwords = _pieces(secret)
        if in_reply:
            forms.update(piece for piece in credentials if len(piece) >= MIN_DERIVED_SECRET)
            forms.update(piece for piece in passwords if len(piece) >= MIN_REPLY_PASSWORD and not piece.isalpha())
        else:
            forms.add(secret)
            forms.update(piece for piece in credentials + passwords if len(piece) >= MIN_DERIVED_SECRET)
    forms.update(encoded for form in list(forms) for encoded in _encoded(form))
    return tuple(sorted(forms, key=lambda form: (-len(form), form)))


def _whole(form: str) -> str:
    """A pattern of ``form`` where it is not part of a longer word: no letter, digit or ``_`` joins its ends."""
    before = r"(?<!\w)" if re.match(r"\w", form) else ""
    after = r"(?!\w)" if re.match(r"\w", form[-1]) else ""
    return before + re.escape(form) + after


@functools.lru_cache(maxsize=64)
def _reply_passwords(secrets: tuple[str, ...]) -> re.Pattern[str] | None:
    """The Basic passwords of ``secrets`` of at least ``MIN_DERIVED_SECRET`` characters (and their encoded forms),
    matched as whole words, longest first; None when there are none.

    A password of letters only may be a passphrase ("correcthorsebattery") as well as a word, and nothing tells the
    two apart, so a reply that quotes it as a word has it blanked; inside a longer word ("passwords" for the
    password "password") it is left, as there it is a piece of another word, not the password a server echoed."""
    forms = {piece for secret in filter(None, secrets) for piece in _pieces(secret)[1]
             if len(piece) >= MIN_DERIVED_SECRET}
    forms.update(encoded for form in list(forms) for encoded in _encoded(form))
    if not forms:
        return None
    return re.compile("|".join(_whole(form) for form in sorted(forms, key=lambda form: (-len(form), form))))


def redact(text: str, secrets: tuple[str, ...], in_reply: bool = False) -> str:
    """``text`` with every form of each (non-empty) secret replaced by ``***`` (``secret_forms``): a server that
    echoes only the token of ``Bearer <token>``, the password of a Basic credential, or the header JSON-escaped
    or URL-encoded, shows stars too. ``in_reply`` for a text that gets scored: only forms no word can be, and a
    password that may be a word where it stands whole (``_reply_passwords``)."""
    for form in secret_forms(tuple(secrets), in_reply):
        text = text.replace(form, "***")
    if in_reply and (passwords := _reply_passwords(tuple(secrets))):
        text = passwords.sub("***", text)
    return text


def redact_json(value: Any, secrets: tuple[str, ...], in_reply: bool = False) -> Any:
    """``value`` (a text, or a JSON value such as a response body or a tool input) with ``redact`` applied to
    every string in it, keys included."""
    if isinstance(value, str):
        return redact(value, secrets, in_reply)
    if isinstance(value, dict):
        return {redact_json(k, secrets, in_reply): redact_json(v, secrets, in_reply) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_json(v, secrets, in_reply) for v in value]
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
