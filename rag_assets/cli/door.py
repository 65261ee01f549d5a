"""The arguments of a ``rag-assets`` command, checked before the command reads the store or starts a run.

A file that is not there, a corpus folder that is not one, a home that cannot be made: each stops the
command with one line naming the argument or setting, its value and an example of a good one (exit 2),
in the shape of the settings' own messages (:func:`rag_assets.settings.bad_value`). Found later, the
same mistake is a traceback half-way through, or a failed run whose closing line talks of something else.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rag_assets.errors import ConfigError
from rag_assets.settings import CORPUS_ROOT_ENV, DEFAULT_CORPUS_ROOT, HOME_ENV, Settings, bad_value

#: The commands that plan the corpus snapshot (they read the corpus folder), and so take --corpus.
READS_CORPUS = ("run", "simulate-review", "import-golden")
THRESHOLDS_EXAMPLE = "gates.yaml (a file of lines like 'faithfulness: 0.85')"


def argument_problems(args: argparse.Namespace, settings: Settings) -> list[str]:
    """One line per bad argument of the parsed command. The home is made here, which every command that uses
    it does first, but only when nothing else is wrong: a mistake leaves no folder behind."""
    problems: list[str | None] = []
    given = getattr(args, "corpus", None)  # ui takes --corpus for dagster dev; a named instance has its own root
    if given or (args.command in READS_CORPUS and getattr(args, "instance", None) is None):
        problems.append(_corpus_problem(given, settings))
    if args.command == "run":
        problems += [_file_problem("--review", args.review, "reviewed.csv") if args.review else None,
                     _thresholds_problem(args.thresholds) if args.thresholds else None]
    elif args.command == "import-golden":
        problems += [_positional_file_problem("import-golden", "path", args.path, "team.ragas.jsonl --format ragas"),
                     _chunks_problem(args.file_format, args.chunks)]
    elif args.command == "calibrate":
        problems.append(_positional_file_problem("calibrate", "path", args.path, "labelled.jsonl"))
    elif args.command == "corpus-from-json":
        problems.append(_positional_file_problem("corpus-from-json", "chunks_json", args.chunks_json,
                                                 "anthropic_docs.json corpus/"))
    elif args.command == "export":
        problems.append(_export_out_problem(args.file_format, args.out))
    elif args.command == "compare" and args.out:
        problems.append(_writable_file_problem("--out", args.out, "diff.md"))
    found = [problem for problem in problems if problem]
    if found or not _uses_home(args.command, settings):
        return found
    home = _home_problem(settings)
    return [home] if home else []


def _uses_home(command: str, settings: Settings) -> bool:
    """Whether the command keeps state in the home: the store's SQLite file unless a database URL is set, and
    for ``run`` and ``ui`` the Dagster instance and the event log."""
    return command in ("run", "ui") or (command != "corpus-from-json" and not settings.database_url)


def _home_problem(settings: Settings) -> str | None:
    """Make the home, which every command that uses it would make first; a path that cannot be a folder here
    (under /proc, below a file, on a read-only disk) is a bad setting. An existing home that refuses a write
    later is a fault of the machine, told by ``machine_problem``."""
    try:
        settings.home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return str(bad_value(HOME_ENV, repr(str(settings.home)), f"a folder that can be made here ({exc.strerror})",
                             "~/.rag_assets"))
    return None


def _corpus_problem(given: str | None, settings: Settings) -> str | None:
    """The corpus folder named by --corpus, else by RAG_ASSETS_CORPUS_ROOT, else data/corpus under the current folder."""
    if given:
        return None if Path(given).expanduser().is_dir() else str(
            bad_value("--corpus", repr(given), "an existing folder", "data/corpus"))
    if settings.corpus_root.is_dir():
        return None
    if settings.corpus_root != Path(DEFAULT_CORPUS_ROOT).absolute():  # the variable names it
        return str(bad_value(CORPUS_ROOT_ENV, repr(str(settings.corpus_root)), "an existing folder", "~/docs"))
    return (f"corpus root {settings.corpus_root} does not exist. Run rag-assets from the project folder (the one "
            f"holding data/corpus), or pass --corpus DIR, or set {CORPUS_ROOT_ENV}; for example --corpus=~/docs")


def _file_problem(option: str, value: str, example: str) -> str | None:
    if Path(value).expanduser().is_file():
        return None
    return str(bad_value(option, repr(value), "an existing file", example))


def _positional_file_problem(command: str, name: str, value: str, example: str) -> str | None:
    """As :func:`_file_problem`, for an argument given without an option name."""
    if Path(value).expanduser().is_file():
        return None
    return f"{command} {name} {value!r} is not an existing file; for example rag-assets {command} {example}"


def _chunks_problem(file_format: str, chunks: str | None) -> str | None:
    if file_format != "anthropic_docs":
        return None
    if not chunks:
        return ("--chunks (the corpus chunks JSON) is needed for --format anthropic_docs; "
                "for example --chunks=anthropic_docs.json")
    return _file_problem("--chunks", chunks, "anthropic_docs.json")


def _thresholds_problem(path: str) -> str | None:
    """The file must be there and hold minimums the evaluation can gate on (``checked_thresholds``: at least one
    metric, each known at the evaluation's k and given once, in [0, 1]); otherwise the run would gate nothing, or
    fail after the answers are paid for. The problem says what to write instead."""
    from rag_assets.scoring.thresholds import load_thresholds

    missing = _file_problem("--thresholds", path, THRESHOLDS_EXAMPLE)
    if missing:
        return missing
    try:
        load_thresholds("general", path)
    except ConfigError as exc:
        return f"--thresholds={path!r}: {exc}"
    return None


def _writable_file_problem(name: str, value: str, example: str) -> str | None:
    """A file the command will write: not a folder, in a folder that exists, and writable there."""
    path = Path(value).expanduser()
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        wanted = "a file (it is a folder)"
    elif not folder.is_dir():
        wanted = "a file in an existing folder"
    elif not os.access(path if path.exists() else folder, os.W_OK):
        wanted = "a file that can be written here"
    else:
        return None
    return str(bad_value(name, repr(value), wanted, example))


def _export_out_problem(file_format: str, out: str | None) -> str | None:
    """The ragas test set is written as JSONL or CSV, told by the file's extension."""
    from rag_assets.golden.importers import RAGAS_SUFFIXES

    if file_format != "ragas" or out is None or Path(out).suffix.lower() in RAGAS_SUFFIXES:
        return None
    return str(bad_value("--out", repr(out), "a .jsonl or .csv file for --format ragas", "golden.ragas.jsonl"))
