"""Store a written report where a browser can reach it: any fsspec URL (s3://bucket/prefix,
gs://..., file:///srv/reports, memory://...), so the report is not only a path on the machine that
ran the evaluation (unreachable from a browser when Dagster runs in Kubernetes)."""

from __future__ import annotations

from pathlib import Path

from fsspec.core import url_to_fs
from fsspec.implementations.local import LocalFileSystem

__all__ = ["publish_report"]


def publish_report(path: Path, base_url: str) -> str:
    """Copy the report at ``path`` to ``base_url``/<its file name> and return that URL.

    The protocol's package must be installed (s3fs for s3://, gcsfs for gs://); fsspec names it
    in its error when it is missing. Credentials come from that package's usual sources, never
    from the URL, so the URL can be shown in metadata."""
    url = f"{base_url.rstrip('/')}/{Path(path).name}"
    fs, target = url_to_fs(url)
    if isinstance(fs, LocalFileSystem):  # object stores have no folders to make
        fs.makedirs(fs._parent(target), exist_ok=True)
    fs.pipe_file(target, Path(path).read_bytes())
    return url
