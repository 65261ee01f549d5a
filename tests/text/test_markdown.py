"""Text from data in the Markdown the Dagster UI renders: shown as text, never an image, a link or HTML,
and a ``|`` stays inside its table cell. Checked by parsing the output with markdown-it (CommonMark and
GFM tables), as a renderer would."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from rag_assets.text.markdown import escape_markdown, markdown_list, markdown_table

HOSTILE = ["![x](http://127.0.0.1:9/q-pixel.png)", "<img src=x onerror=alert(1)>", "[link](javascript:alert(1))",
           "a | b", "see www.example.com or mail ana@example.com", "\\[x](http://127.0.0.1:9/y)", "<http://127.0.0.1:9/>"]
_PARSER = MarkdownIt("commonmark").enable("table")
_MARKUP = {"image", "link_open", "html_inline", "html_block"}


def _tokens(markdown: str) -> list:
    tokens = []
    for token in _PARSER.parse(markdown):
        tokens += [token, *(token.children or [])]
    return tokens


def _cells(markdown: str) -> list[list[str]]:
    rows, row, text = [], None, []
    for token in _PARSER.parse(markdown):
        if token.type == "tr_open":
            row = []
        elif token.type == "inline" and row is not None:
            row.append("".join(child.content for child in token.children or [] if child.type == "text"))
        elif token.type == "tr_close":
            rows.append(row)
            row = None
    return rows


@pytest.mark.parametrize("text", HOSTILE)
def test_a_hostile_cell_is_one_cell_of_plain_text(text: str):
    table = markdown_table(["query", "question"], [("q-1", text)])
    assert not {t.type for t in _tokens(table)} & _MARKUP, table
    assert _cells(table) == [["query", "question"], ["q-1", text]]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_in_a_list_or_a_heading_is_plain_text(text: str):
    markdown = f"## {escape_markdown(text)}\n\n" + markdown_list([text, "second"])
    assert not {t.type for t in _tokens(markdown)} & _MARKUP, markdown
    assert [t.content for t in _PARSER.parse(markdown) if t.type == "inline"] == [escape_markdown(text)] * 2 + ["second"]


def test_no_autolink_literal_survives_for_a_gfm_renderer():
    escaped = escape_markdown("http://127.0.0.1:9/a https://x.example/b www.example.com ana@example.com recall@5")
    assert escaped == ("http\\://127.0.0.1:9/a https\\://x.example/b www\\.example.com ana\\@example.com recall@5")


def test_a_newline_in_data_cannot_start_a_block():
    assert _cells(markdown_table(["q"], [("line one\n![x](http://127.0.0.1:9/p.png)\n| c |",)])) == [
        ["q"], ["line one ![x](http://127.0.0.1:9/p.png) | c |"]]
