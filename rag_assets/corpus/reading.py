"""Read, hash, decode and chunk the files a snapshot must look at: in worker processes when many.

Turning a file into chunks is pure CPU and independent per file, so a large cold snapshot spreads
it over the machine's cores. Results come back in the order of the input list and every file goes
through the same ``_read_values`` and ``_file_read`` in either path, so the pool changes how long a
snapshot takes, never what it stores. A small corpus (the usual incremental change) stays
in-process: starting workers costs more than it saves below a few hundred files.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import repeat

from rag_assets.corpus.chunking import ChunkRow, chunk_rows, chunks_from_rows
from rag_assets.corpus.loaders import LoaderError, loader_for, registered_in_code
from rag_assets.corpus.models import Chunk, ChunkerConfig, DocumentMeta, LoadedDocument, ScannedFile, sha256_hex
from rag_assets.files import read_regular_file
from rag_assets.text.control import control_character_problem, has_control_bytes

# Below both thresholds the files are read in-process.
POOL_MIN_FILES = 400
POOL_MIN_BYTES = 4_000_000
# Files per task: enough to amortise pickling, small enough to balance uneven file sizes.
_TASKS_PER_WORKER = 8


@dataclass(frozen=True)
class FileRead:
    """What reading one file gave: its hash, metadata and chunks, or why it cannot be used.

    ``content_hash`` is None when the file could not be read at all; ``problem`` says why the
    file is skipped (then ``meta`` is None). ``body`` (the text chunk offsets point into) is kept
    when the file was chunked: the store keeps it once per revision and slices chunk texts from it.
    """

    path: str
    content_hash: str | None
    problem: str | None
    meta: DocumentMeta | None = None
    chunks: tuple[Chunk, ...] | None = None
    body: str | None = None


def decode_document(data: bytes, path: str) -> LoadedDocument:
    """Bytes to a loaded document; raises LoaderError with the reason it cannot be used."""
    if not data.strip():
        raise LoaderError("empty file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LoaderError(f"not valid UTF-8 (invalid byte at offset {exc.start})") from exc
    problem = control_character_problem(text) if has_control_bytes(data) else None
    if problem:
        raise LoaderError(f"{problem}: a binary or damaged file, not text")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    loader = loader_for(path)
    assert loader is not None, "scan() only yields files with a loader"
    document = loader(text, path)
    if not document.body.strip():
        raise LoaderError("empty document: no text after front matter or markup")
    return document


# What reading one file gives, as plain values (path, content hash, problem, metadata, chunk rows,
# body): what a worker process sends back, since plain values pickle several times faster than objects.
_ReadValues = tuple[str, str | None, str | None, DocumentMeta | None, list[ChunkRow] | None, str | None]


def _read_values(file: ScannedFile, config: ChunkerConfig, chunk: bool) -> _ReadValues:
    try:
        data = read_regular_file(file.abs_path, file.identity)
    except OSError as exc:  # UnsafeFile among them: a link or another file there since the walk
        return file.path, None, f"cannot be read: {exc.strerror}", None, None, None
    content_hash = sha256_hex(data)
    try:
        document = decode_document(data, file.path)
    except LoaderError as exc:
        return file.path, content_hash, str(exc), None, None, None
    if not chunk:
        return file.path, content_hash, None, document.meta, None, None
    return file.path, content_hash, None, document.meta, chunk_rows(file.path, document.body, config), document.body


def _file_read(values: _ReadValues) -> FileRead:
    path, content_hash, problem, meta, rows, body = values
    if rows is None or body is None:
        return FileRead(path, content_hash, problem, meta)
    return FileRead(path, content_hash, problem, meta, chunks_from_rows(path, body, rows), body)


def read_file(file: ScannedFile, config: ChunkerConfig, chunk: bool) -> FileRead:
    """Read and decode one file, and cut it into chunks when ``chunk`` is set."""
    return _file_read(_read_values(file, config, chunk))


def _read_batch(files: Sequence[ScannedFile], config: ChunkerConfig, chunk: bool) -> list[_ReadValues]:
    return [_read_values(file, config, chunk) for file in files]


def _available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def pool_size(files: Sequence[ScannedFile]) -> int:
    """Worker processes worth starting for ``files``; 1 means read them in-process.

    Loaders registered in code exist only in this process, so their corpora are read here.
    """
    large = len(files) >= POOL_MIN_FILES or sum(file.size for file in files) >= POOL_MIN_BYTES
    if not large or registered_in_code():
        return 1
    return _available_cores()


def read_files(
    files: Sequence[ScannedFile], config: ChunkerConfig, chunk: bool, workers: int | None = None
) -> list[FileRead]:
    """``read_file`` for every file, in input order; ``workers`` defaults to ``pool_size(files)``.

    Workers are spawned, so a script that reaches this with many files must guard its entry point
    with ``if __name__ == "__main__":`` (each worker imports the main module, as ``spawn`` does).
    """
    workers = pool_size(files) if workers is None else workers
    if workers <= 1 or len(files) <= 1:
        return [read_file(file, config, chunk) for file in files]
    size = max(1, -(-len(files) // (workers * _TASKS_PER_WORKER)))
    batches = [files[start:start + size] for start in range(0, len(files), size)]
    # spawn, not fork: the caller may be a Dagster step with threads, which fork does not copy safely.
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        return [_file_read(values) for batch in pool.map(_read_batch, batches, repeat(config), repeat(chunk))
                for values in batch]
