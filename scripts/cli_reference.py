#!/usr/bin/env python
"""Write docs/cli.md from the command line's parser (rag_assets.cli.build_parser); with --check, exit 1 when the
committed page differs from the generated one.

The page is built from the parser's actions, not from ``format_help()``: argparse wraps help text to the width
of the terminal it runs in, and the page must come out the same wherever it is generated."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rag_assets.cli import build_parser

PAGE = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
HEADER = """# Command line

`rag-assets COMMAND [OPTIONS]`: every command and option. Settings that are not options come from environment
variables ([environment variables](environment.md)); a bad option or setting stops the command with one line and
exit code 2 ([bad input](bad-input.md)). This page is generated from the parser in `rag_assets/cli.py` by
`scripts/cli_reference.py`: edit the parser, not this page.
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;")


def _name(action: argparse.Action) -> str:
    """How the option is written: ``--out OUT``, ``-p, --port PORT``, or the positional's name."""
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    shown = action.metavar or ("{" + ",".join(action.choices) + "}" if action.choices else action.dest.upper())
    takes = "" if action.nargs == 0 else f" {shown}"
    return ", ".join(f"`{option}{takes}`" for option in action.option_strings)


def _meaning(action: argparse.Action) -> str:
    parts = [action.help.rstrip(".") + "." if action.help else ""]
    if action.required and action.option_strings:
        parts.append("Required.")
    return _cell(" ".join(p for p in parts if p))


def _table(actions: list[argparse.Action]) -> str:
    rows = [a for a in actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]
    if not rows:
        return "No options.\n"
    return "| argument or option | meaning |\n|---|---|\n" + "".join(f"| {_name(a)} | {_meaning(a)} |\n" for a in rows)


def page() -> str:
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    helps = {choice.dest: choice.help for choice in commands._choices_actions}
    parts = [HEADER, f"\n{_cell(parser.description or '')}\n\n", "## Options of `rag-assets`\n\n", _table(parser._actions)]
    parts.append("\n| command | what it does |\n|---|---|\n")
    parts.extend(f"| [`{name}`](#{name}) | {_cell(helps[name] or '')} |\n" for name in commands.choices)
    for name, command in commands.choices.items():
        parts.append(f"\n## {name}\n\n`rag-assets {name}`: {_cell(helps[name] or '')}\n\n{_table(command._actions)}")
    return "".join(parts)


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        return 0 if PAGE.read_text(encoding="utf-8") == page() else 1
    PAGE.write_text(page(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
