"""What the inbox sensor does with one review file it sees again: its runs so far decide.

A run that fails (store down, crash) leaves its file in the inbox; a later tick requests it again until
``IMPORT_ATTEMPTS`` runs of the round have ended, then rejects it. The cursor keeps, per file hash, how many
runs were ever requested (run keys stay unique: Dagster runs a run key once), how many in the current round,
and the last run key (None once the round ended in a rejection).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass

from rag_assets.text.excerpt import excerpt

#: How many runs one inbox file gets before it is rejected.
IMPORT_ATTEMPTS = 3
#: How many file hashes the cursor remembers (the newest).
CURSOR_MEMORY = 2000

#: A run key -> (whether its run has ended, the run's id); no run at all is a dropped request: ended.
RunStatus = Callable[[str], tuple[bool, str | None]]
#: A corpus version -> whether its question candidates exist (what a review file's ids are checked against); None
#: when the store cannot be read: unknown, so the file waits (an outage is no reason to reject a review).
Generated = Callable[[str], bool | None]


@dataclass(frozen=True)
class FileState:
    """One file hash in the cursor."""

    requests: int = 0
    attempts: int = 0
    run_key: str | None = None

    def requested(self, digest: str, attempt: int) -> FileState:
        """The state after one more run is requested for the file (its ``attempt``-th of the round)."""
        number = self.requests + 1
        return FileState(number, attempt, digest if number == 1 else f"{digest}:{number}")


@dataclass(frozen=True)
class Decision:
    """What to do with the file: ``wait`` (its run is still going, or its corpus version's candidates are not
    generated yet or its partition not added yet: then ``problem`` says so), ``request`` a run (``retry`` when the
    last ended with the file still here), or ``reject`` it with ``problem`` (``field``: the column it is about)."""

    action: str
    state: FileState
    problem: str | None = None
    field: str | None = None


def next_step(state: FileState, digest: str, run_status: RunStatus, version: str | None, judge_review: bool,
              known: set[str], generated: Generated) -> Decision:
    """The step for a file with hash ``digest`` that declares corpus ``version`` (a judge review needs none),
    given its ``state`` and the corpus versions with a partition (``known``). A question review waits until its
    version's candidates are ``generated`` (in the store): imported before, every id would be unknown and the file
    rejected for a timing reason (a review dropped in the inbox before the first ``dagster dev`` start). A review of
    candidates the store holds waits for its version's partition too: on a Dagster instance other than the one the
    candidates were generated under, the corpus sensor adds it on its first tick. While the store cannot be read
    (``generated`` says None) a question review waits, whether its version has a partition or not."""
    if state.run_key:
        ended, run_id = run_status(state.run_key)
        if not ended:
            return Decision("wait", state)
        if state.attempts >= IMPORT_ATTEMPTS:
            return Decision("reject", FileState(state.requests), (
                f"the import failed {state.attempts} times (last run: {run_id or 'never started'}); nothing was "
                "applied. Fix the cause (is the store up?) and drop the file in the inbox again"))
        return Decision("retry", state.requested(digest, state.attempts + 1))
    if judge_review:
        return Decision("request", state.requested(digest, 1))
    made = generated(version) if version is not None else False
    if made is None:
        return Decision("wait", state, f"the store cannot be read; whether the candidates of corpus version {version} "
                                       "exist is asked again on a later tick")
    if version in known:
        if not made:
            return Decision("wait", state, f"the candidates of corpus version {version} are not generated yet")
        return Decision("request", state.requested(digest, 1))
    if made:
        return Decision("wait", state, f"corpus version {version} has no partition in this Dagster instance yet (the "
                                       "corpus sensor adds the current corpus version's; add another in the UI)")
    problem = (f"names corpus version {excerpt(version)}, which has no partition (known: {', '.join(sorted(known)) or 'none'})"
               if version else "names no corpus version (neither in its file name nor in a corpus_version column)")
    return Decision("reject", state, problem, "corpus_version")


def load_cursor(raw: str | None) -> dict[str, FileState]:
    """The cursor's file states; an old cursor (a list of hashes) had one request each."""
    loaded = json.loads(raw) if raw else {}
    if isinstance(loaded, list):
        return {digest: FileState(1, 1, digest) for digest in loaded}
    return {digest: FileState(**state) for digest, state in loaded.items()}


def dump_cursor(states: dict[str, FileState]) -> str:
    """The newest ``CURSOR_MEMORY`` states, as the cursor keeps them."""
    return json.dumps({digest: asdict(state) for digest, state in list(states.items())[-CURSOR_MEMORY:]})
