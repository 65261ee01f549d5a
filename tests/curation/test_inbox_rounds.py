"""The inbox sensor's decision per review file: request, wait, retry, give up after IMPORT_ATTEMPTS, reject."""

from __future__ import annotations

import json

from rag_assets.curation.inbox_rounds import (CURSOR_MEMORY, IMPORT_ATTEMPTS, FileState, dump_cursor, load_cursor,
                                              next_step)


def _status(ended: bool, run_id: str | None = "run-1"):
    asked: list[str] = []

    def status(run_key: str) -> tuple[bool, str | None]:
        asked.append(run_key)
        return ended, run_id

    return status, asked


def GENERATED(version: str) -> bool:
    """Every corpus version's candidates exist."""
    return True


def test_a_review_of_a_version_whose_candidates_are_not_generated_yet_waits_in_the_inbox():
    """dagster dev on a fresh home with a review already in the inbox imported it before question_candidates ran:
    every id was unknown and the file was moved to rejected/."""
    status, asked = _status(True)
    step = next_step(FileState(), "abc", status, "cv-1", False, {"cv-1"}, lambda version: False)
    assert (step.action, step.state) == ("wait", FileState())
    assert step.problem == "the candidates of corpus version cv-1 are not generated yet"
    assert next_step(step.state, "abc", status, "cv-1", False, {"cv-1"}, GENERATED).action == "request"


def test_a_review_of_stored_candidates_waits_for_its_partition_and_one_of_neither_is_rejected():
    """dagster dev on another Dagster instance than the one the candidates were generated under: the inbox sensor
    may tick before the corpus sensor adds the partition; the review was rejected then."""
    status, _ = _status(True)
    step = next_step(FileState(), "abc", status, "cv-1", False, set(), GENERATED)
    assert (step.action, step.state) == ("wait", FileState())
    assert step.problem == ("corpus version cv-1 has no partition in this Dagster instance yet (the corpus sensor adds "
                            "the current corpus version's; add another in the UI)")
    assert next_step(step.state, "abc", status, "cv-1", False, {"cv-1"}, GENERATED).action == "request"
    unknown = next_step(FileState(), "abc", status, "cv-1", False, {"cv-2"}, lambda version: False)
    assert (unknown.action, unknown.problem) == ("reject",
                                                 "names corpus version 'cv-1', which has no partition (known: cv-2)")


def test_a_review_waits_while_the_store_cannot_be_read_whether_its_version_has_a_partition_or_not():
    """A store outage said nothing about the file, yet a review whose version had no partition yet went to
    rejected/ because no version looked generated."""
    status, _ = _status(True)
    for known in ({"cv-1"}, set()):
        step = next_step(FileState(), "abc", status, "cv-1", False, known, lambda version: None)
        assert (step.action, step.state) == ("wait", FileState())
        assert step.problem == ("the store cannot be read; whether the candidates of corpus version cv-1 exist is "
                                "asked again on a later tick")


def test_a_new_file_of_a_known_version_gets_its_first_run_keyed_by_its_hash():
    status, asked = _status(True)
    step = next_step(FileState(), "abc", status, "cv-1", False, {"cv-1"}, GENERATED)
    assert (step.action, step.state) == ("request", FileState(requests=1, attempts=1, run_key="abc"))
    assert asked == [], "a file without a run asks for no run status"


def test_a_judge_review_needs_no_corpus_version():
    status, _ = _status(True)
    assert next_step(FileState(), "abc", status, None, True, set(), GENERATED).action == "request"


def test_a_file_whose_run_is_going_waits_unchanged():
    status, asked = _status(False)
    state = FileState(requests=1, attempts=1, run_key="abc")
    assert next_step(state, "abc", status, "cv-1", False, {"cv-1"}, GENERATED).action == "wait"
    assert asked == ["abc"]


def test_a_file_still_in_the_inbox_after_its_run_ended_is_retried_under_a_new_run_key():
    status, _ = _status(True)
    step = next_step(FileState(requests=1, attempts=1, run_key="abc"), "abc", status, "cv-1", False, {"cv-1"}, GENERATED)
    assert (step.action, step.state) == ("retry", FileState(requests=2, attempts=2, run_key="abc:2"))


def test_after_the_last_attempt_the_file_is_rejected_and_a_new_round_keeps_run_keys_unique():
    status, _ = _status(True, None)
    step = next_step(FileState(requests=4, attempts=IMPORT_ATTEMPTS, run_key="abc:4"), "abc", status, "cv-1", False,
                     {"cv-1"}, GENERATED)
    assert step.action == "reject" and step.field is None
    assert step.problem.startswith(f"the import failed {IMPORT_ATTEMPTS} times (last run: never started)")
    assert step.state == FileState(requests=4, attempts=0, run_key=None)
    again = next_step(step.state, "abc", status, "cv-1", False, {"cv-1"}, GENERATED)
    assert again.state == FileState(requests=5, attempts=1, run_key="abc:5")


def test_a_file_of_an_unknown_or_no_version_is_rejected_naming_the_known_ones():
    status, _ = _status(True)
    stored = {"cv-1", "cv-2"}.__contains__  # the store has candidates of these versions only
    unknown = next_step(FileState(), "abc", status, "cv-9", False, {"cv-2", "cv-1"}, stored)
    assert (unknown.action, unknown.field) == ("reject", "corpus_version")
    assert unknown.problem == "names corpus version 'cv-9', which has no partition (known: cv-1, cv-2)"
    assert next_step(FileState(), "abc", status, None, False, set(), stored).problem == (
        "names no corpus version (neither in its file name nor in a corpus_version column)")


def test_the_cursor_reads_the_old_list_form_and_keeps_the_newest_hashes():
    assert load_cursor('["a", "b"]') == {"a": FileState(1, 1, "a"), "b": FileState(1, 1, "b")}
    assert load_cursor(None) == {}
    states = {f"h{i}": FileState(1, 1, f"h{i}") for i in range(CURSOR_MEMORY + 2)}
    kept = json.loads(dump_cursor(states))
    assert len(kept) == CURSOR_MEMORY and "h0" not in kept and "h1" not in kept
    assert kept[f"h{CURSOR_MEMORY + 1}"] == {"requests": 1, "attempts": 1, "run_key": f"h{CURSOR_MEMORY + 1}"}
    assert load_cursor(dump_cursor(states)) == dict(list(states.items())[2:])
