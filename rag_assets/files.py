"""Read a file found by a folder walk (the corpus root, the curation inbox) without following links, and
replace an output file (an export) in one step.

A walk that skips symbolic links is not enough: between the walk and the read, a file can be
replaced by a link to a file the reader may read and the owner of the folder may not (a 0600
secret), and ``open`` would follow it. Here the file is opened with ``O_NOFOLLOW`` (a link as the
last component fails to open) and ``O_NONBLOCK`` (a FIFO put in its place cannot block the open),
and the open descriptor is checked with ``fstat``: a regular file, and the very inode the walk
saw, so a folder on the way swapped for a link is caught too. Refusals are :class:`UnsafeFile`,
an ``OSError`` whose ``strerror`` says why in words a skipped-file list or an error report shows.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

LINK_REASON = "symbolic link; links are not followed"


class UnsafeFile(OSError):
    """Not read: a link, not a regular file, or not the file the walk saw."""


class FileTooLarge(Exception):
    """Over the size cap; ``size`` is what was found (at least)."""

    def __init__(self, size: int) -> None:
        super().__init__(f"{size:,} bytes")
        self.size = size


def read_regular_file(path: str | Path, seen: tuple[int, int] | None = None, max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file at ``path``, opened without following a link.

    ``seen`` is the ``(st_dev, st_ino)`` the walk saw; a different file there now is refused.
    Past ``max_bytes`` (checked on the open descriptor, then on what was read, since a file can
    grow) :class:`FileTooLarge` is raised with the size.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFile(errno.ELOOP, LINK_REASON) from None
        raise
    with os.fdopen(descriptor, "rb") as handle:
        found = os.fstat(descriptor)
        if not stat.S_ISREG(found.st_mode):
            raise UnsafeFile(errno.EINVAL, "not a regular file")
        if seen is not None and (found.st_dev, found.st_ino) != seen:
            raise UnsafeFile(errno.ESTALE, "replaced by another file since the folder was listed; not read")
        if max_bytes is not None and found.st_size > max_bytes:
            raise FileTooLarge(found.st_size)
        data = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
    if max_bytes is not None and len(data) > max_bytes:
        raise FileTooLarge(len(data))
    return data


def is_regular_file(path: Path) -> bool:
    """Whether ``path`` itself (not what a link there leads to) is a regular file."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


@contextlib.contextmanager
def replaced_in_one_step(path: Path, encoding: str = "utf-8", newline: str | None = None) -> Iterator[TextIO]:
    """A text file to write whose content replaces ``path`` when the block ends, so a reader never sees half of
    it; on an error it is removed and ``path`` is left as it was.

    The temporary file is created with mode 0666 less the umask, as ``open`` creates a file (0644 under the
    usual umask 022): ``tempfile`` makes it 0600, which the replace would keep, leaving an export unreadable to
    the group that shares the folder.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        with os.fdopen(descriptor, "w", encoding=encoding, newline=newline) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
