"""Run a coroutine to completion from synchronous code, also where an event loop is already running.

``asyncio.run`` refuses to start inside a running loop, which is where a notebook (Jupyter, IPython)
runs every cell: ``rag_assets.evaluate`` must work there too. Inside a running loop the coroutine gets
its own loop on a worker thread, and the caller waits for it (the caller is synchronous, so it would
block that loop either way); elsewhere it is plain ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-assets-sync") as worker:
        return worker.submit(asyncio.run, coroutine).result()
