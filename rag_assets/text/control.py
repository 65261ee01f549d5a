"""The one rule for control characters in text that comes from outside (corpus files, review
cells, production log lines): tab, line feed, carriage return and form feed are text; every other
C0 control character (NUL above all) is not.

PostgreSQL refuses NUL in text columns while SQLite stores it, so a NUL let through fails one
backend and silently corrupts the other; the other controls are invisible in a spreadsheet or a
report and mostly mean a binary or mangled file. Every boundary rejects such text with this
module's message, so the same input gets the same answer wherever it enters.

The same rule refuses an unpaired surrogate (U+D800 to U+DFFF alone), which no UTF-8 text holds but a JSON
escape such as ``"\\ud800"`` decodes to: Python keeps it in a string, and the first hash or write of it as UTF-8
fails, so one such log line stopped the scoring of its whole day.
"""

from __future__ import annotations

import re

_FORBIDDEN = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")
_UNPAIRED = re.compile("[\ud800-\udfff]")
_FORBIDDEN_BYTES = bytes([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x20)])


def has_control_bytes(data: bytes) -> bool:
    """Whether UTF-8 ``data`` holds a forbidden control character, without decoding it.

    UTF-8 writes these characters as the bytes of the same value and never uses a byte below
    0x80 inside another character, so the bytes answer for the text. Deleting them is one pass
    in C, several times faster than the regular expression over a decoded text, which matters
    once per corpus file; ``control_character_problem`` then says which character and where.
    """
    return len(data.translate(None, _FORBIDDEN_BYTES)) != len(data)


def control_character_problem(text: str) -> str | None:
    """Why ``text`` is refused (naming the first forbidden character and its 1-based position), or None."""
    found = _FORBIDDEN.search(text)
    if found is not None:
        return f"contains the control character U+{ord(found.group()):04X} at character {found.start() + 1}"
    found = _UNPAIRED.search(text)
    if found is not None:
        return (f"contains an unpaired surrogate U+{ord(found.group()):04X} at character {found.start() + 1} (an "
                "escape that stands for no character)")
    return None
