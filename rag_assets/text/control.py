"""The one rule for control characters in text that comes from outside (corpus files, review
cells, production log lines): tab, line feed, carriage return and form feed are text; every other
C0 control character (NUL above all) is not.

PostgreSQL refuses NUL in text columns while SQLite stores it, so a NUL let through fails one
backend and silently corrupts the other; the other controls are invisible in a spreadsheet or a
report and mostly mean a binary or mangled file. Every boundary rejects such text with this
module's message, so the same input gets the same answer wherever it enters.
"""

from __future__ import annotations

import re

_FORBIDDEN = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")


def control_character_problem(text: str) -> str | None:
    """Why ``text`` is refused (naming the first forbidden character and its 1-based position), or None."""
    found = _FORBIDDEN.search(text)
    if found is None:
        return None
    return f"contains the control character U+{ord(found.group()):04X} at character {found.start() + 1}"
