import pytest

from rag_assets.corpus import loaders
from rag_assets.corpus.loaders import LoaderError, load_html, load_markdown, load_text, split_front_matter

HTML = """<!doctype html><html><head><title>Ports &amp; limits</title>
<meta name="version" content="2.0"><meta name="date" content="2025-03-14">
<style>body { color: red }</style><script>var secret = "drop me";</script></head>
<body><h1>Ports</h1><p>The hub listens on   port 7443.</p>
<ul><li>first item</li><li>second item</li></ul>
<table><tr><th>Plan</th><th>Quota</th></tr><tr><td>Team</td><td>2 TB</td></tr></table></body></html>"""


def test_front_matter_gives_title_version_and_date_and_is_cut_from_the_body():
    doc = load_markdown('---\ntitle: "Limits"\nversion: "2.0"\ndate: 2025-03-14\ntags: [a, b]\n---\n# Heading\n\nText.\n', "v2/limits.md")
    assert (doc.meta.title, doc.meta.version, doc.meta.date, doc.meta.kind) == ("Limits", "2.0", "2025-03-14", "markdown")
    assert doc.body == "# Heading\n\nText.\n"


def test_without_front_matter_title_comes_from_the_first_heading_and_version_from_the_folder():
    doc = load_text("Intro line\n# Getting started\nbody\n", "docs/v1.6/start.txt")
    assert (doc.meta.title, doc.meta.version, doc.meta.date) == ("Getting started", "1.6", None)


def test_a_document_with_no_heading_is_titled_by_its_file_name():
    assert load_text("just text\n", "notes/plain-notes.txt").meta.title == "plain-notes"


def test_broken_yaml_in_a_key_we_read_names_the_line():
    with pytest.raises(LoaderError, match=r"invalid YAML front matter at line 3, field 'version': "):
        split_front_matter('---\ntitle: ok\nversion: [unclosed\n---\nbody\n')


def test_broken_yaml_in_a_key_we_do_not_read_costs_nothing():
    front, body = split_front_matter("---\ntitle: ok\nkeywords: [unclosed\n---\nbody\n")
    assert front == {"title": "ok"} and body == "body\n"


def test_html_keeps_visible_text_headings_lists_and_tables_and_drops_scripts():
    doc = load_html(HTML, "v2/ports.html")
    assert (doc.meta.title, doc.meta.version, doc.meta.date, doc.meta.kind) == ("Ports & limits", "2.0", "2025-03-14", "html")
    assert "# Ports" in doc.body.splitlines()
    assert "The hub listens on port 7443." in doc.body
    assert "- first item" in doc.body and "Team | 2 TB" in doc.body
    assert "drop me" not in doc.body and "color" not in doc.body


# Values that look like strings and are not all strings to YAML: one-line values are read without
# the YAML parser when they are plainly strings, and must then be what the parser would give.
TRICKY_VALUES = [
    '"Game Development with C++"', "'single quoted'", "'it''s'", '"with \\" escape"', '"tab\there"', '"C# and :"',
    "Plain title", "C# basics", "a:b", "a: b", "trailing colon:", "x #comment", "x#not-comment", "yes", "Yes", "ON",
    "off", "null", "Null", "nULL", "y", "n", "true", "NO", "2.0", "1.10", "2025-03-14", "~", "", "[a, b]", "{a: 1}",
    "&anchor x", "*alias", "!tag x", "%x", "@x", "`x", "|", ">", "-x", "- x", ".inf", "<<", "=", "Ünïcödé", "é title",
    "\u00a0nbsp", "plain  ", '"quoted"  ', '"quoted"\t', "tab\tinside", "a  b", "x\u2028y", '"x\u0085y"', "'x\ufeffy'",
]


def _outcome(text: str) -> tuple[str, object]:
    try:
        return "read", split_front_matter(text)
    except LoaderError as exc:
        return "refused", str(exc)


@pytest.mark.parametrize("value", TRICKY_VALUES)
@pytest.mark.parametrize("key", ["title", "version"])
def test_a_one_line_key_reads_as_the_yaml_parser_reads_it(key, value, monkeypatch):
    text = f"---\n{key}: {value}\ndescription: x\n---\nbody\n"
    fast = _outcome(text)
    monkeypatch.setattr(loaders, "_simple_value", lambda _yaml_text: None)
    assert fast == _outcome(text)


def test_a_quoted_or_plain_title_is_read_without_the_yaml_parser(monkeypatch):
    def refuse(*_args, **_kwargs):
        raise AssertionError("the YAML parser was called")

    monkeypatch.setattr(loaders.yaml, "load", refuse)
    text = "---\ntitle: \"Game Development with C++\"\nversion: 'v2'\ndate: March 2025\n---\nx\n"
    front, body = split_front_matter(text)
    assert front == {"title": "Game Development with C++", "version": "v2", "date": "March 2025"} and body == "x\n"
