"""Metadata shown in the terminal: plain, bounded lines, never an escape sequence from the data."""

from __future__ import annotations

import dagster as dg

from rag_assets.cli.metadata_text import detail_lines, scalar_text
from rag_assets.text.markdown import markdown_table


def test_a_long_table_shows_its_first_lines_and_how_many_more():
    table = markdown_table(["file", "reason"], [(f"f{n:02d}.md", "not valid UTF-8") for n in range(12)])
    assert detail_lines(dg.MetadataValue.md(table)) == [
        "file | reason", *(f"f{n:02d}.md | not valid UTF-8" for n in range(9)), "... and 3 more"]


def test_a_table_with_no_row_shows_nothing_and_markdown_escapes_are_taken_off():
    assert detail_lines(dg.MetadataValue.md(markdown_table(["file", "reason"], []))) == []
    link = markdown_table(["question"], [("see [x](http://host/a|b) <b>",)])
    assert detail_lines(dg.MetadataValue.md(link)) == ["question", "see [x](http://host/a|b) <b>"]


def test_control_characters_are_shown_escaped_in_tables_json_and_scalars():
    assert detail_lines(dg.MetadataValue.md(markdown_table(["file"], [("red\x1b[31m.md",)]))) == [
        "file", "red\\x1b[31m.md"]
    assert detail_lines(dg.MetadataValue.json({"name": "a\x07", "k": [1, 2]})) == ['name: "a\\u0007"', "k: [1, 2]"]
    assert detail_lines(dg.MetadataValue.json(["x\u202e"])) == ['"x\\u202e"']
    assert scalar_text(dg.MetadataValue.text("bell\x07")) == "bell\\x07"
    assert scalar_text(dg.MetadataValue.int(22642)) == "22,642"
    assert detail_lines(dg.MetadataValue.int(3)) is None and scalar_text(dg.MetadataValue.md("x")) is None


def test_a_very_long_line_is_cut():
    (line,) = detail_lines(dg.MetadataValue.md("a" * 350))
    assert line == "a" * 300 + "... (50 more characters)"
