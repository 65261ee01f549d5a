"""Progress on a terminal: items done / total, rate and ETA; nothing when not a terminal or in CI."""

from __future__ import annotations

import io

import pandas as pd
import pytest

import rag_assets
from rag_assets.console import Progress, terminal_progress
from rag_assets.settings import Settings
from rag_assets.rag.adapters import CallableRagSystem
from rag_assets.rag.models import RagQuery


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_redraws_one_line_with_done_total_rate_and_eta_and_ends_it_at_the_last_item():
    screen, clock = Terminal(), Clock()
    progress = Progress("judging", screen, interval=0.5, clock=clock)
    for done, at in ((1, 100.5), (2, 101.0), (3, 101.2), (4, 102.0)):
        clock.now = at
        progress(done, 4)
    assert screen.getvalue() == ("\rjudging: 1/4  2.0/s  ETA 2s"      # 1 item in 0.5 s, 3 to go
                                 "\rjudging: 2/4  2.0/s  ETA 1s"      # 0.5 s after the last redraw
                                 "\rjudging: 4/4  2.0/s  took 2s\n")  # 3/4 came 0.2 s after: not redrawn


def test_a_new_count_restarts_the_rate():
    screen, clock = Terminal(), Clock()
    progress = Progress("rag answers", screen, interval=0.0, clock=clock)
    clock.now = 110.0
    progress(1, 1)
    clock.now = 111.0
    progress(1, 2)
    assert screen.getvalue().rsplit("\r", 1)[-1] == "rag answers: 1/2  1.0/s  ETA 1s"


@pytest.mark.parametrize(("stream", "environ"), [(io.StringIO(), {}), (Terminal(), {"CI": "true"}),
                                                 (Terminal(), {"CI": "1"}), (Terminal(), {"DAGSTER_IS_DEV_CLI": "1"})])
def test_no_progress_when_the_output_is_not_a_terminal_in_ci_or_under_dagster_dev(stream, environ):
    assert terminal_progress("judging", stream, Settings.from_env(environ)) is None


def test_a_terminal_outside_ci_gets_progress():
    assert isinstance(terminal_progress("judging", Terminal(), Settings.from_env({"CI": "false"})), Progress)


def test_the_rag_adapters_and_the_judge_report_each_item_done_of_the_total(monkeypatch: pytest.MonkeyPatch):
    told: list[tuple[int, int]] = []
    system = CallableRagSystem("echo", function=lambda request: {"answer": request["question"], "retrieved": []})
    system.answer([RagQuery(f"i{n}", f"q{n}", "cv") for n in range(5)], lambda done, total: told.append((done, total)))
    assert sorted(told) == [(n, 5) for n in range(1, 6)]

    screen = Terminal()
    monkeypatch.setattr("sys.__stderr__", screen)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("DAGSTER_IS_DEV_CLI", raising=False)
    frame = pd.DataFrame({"user_input": ["a?", "b?"], "reference": ["a.", "b."], "reference_contexts": [["a"], ["b"]]})
    rag_assets.evaluate(frame, lambda request: {"answer": "a.", "retrieved": [{"text": "a"}]})
    lines = screen.getvalue().split("\r")
    assert [line for line in lines if line.endswith("\n")] == [
        line for line in lines if line.startswith(("rag answers: 2/2 ", "judging: 8/8 "))], "each count ends its line"
    assert any(line.startswith("rag answers: 2/2 ") for line in lines) and any(line.startswith("judging: 8/8 ") for line in lines)
