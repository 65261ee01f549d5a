"""Turn a file's text into a document body plus metadata, one loader per file suffix.

Markdown and plain text may start with YAML front matter (title, version, date). HTML is
reduced to text with its headings rewritten as Markdown headings, so one heading-aware chunker
serves every format. More formats plug in through the ``rag_assets.loaders`` entry-point group
(a callable ``(text, path) -> LoadedDocument``) or ``register_loader``.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable
from functools import cache
from html.parser import HTMLParser
from importlib.metadata import entry_points
from pathlib import PurePosixPath

import yaml

from rag_assets.corpus.models import DocumentMeta, LoadedDocument

Loader = Callable[[str, str], LoadedDocument]

# libyaml's parser is about ten times faster than the pure-Python one.
_YamlLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Front matter runs from an opening "---" line to the first closing "---" line after it (or, with
# no such line, to a "---" line right after the opening one: empty front matter). The closing line
# is found by searching for its newline and dashes, a fast scan, rather than by one pattern with a
# lazy ``.*?``, which tries the closing line at every character of the front matter.
_FRONT_MATTER_OPEN = re.compile(r"---[ \t]*\n")
_FRONT_MATTER_CLOSE = re.compile(r"\n---[ \t]*(?:\n|\Z)")
_FRONT_MATTER_EMPTY = re.compile(r"---[ \t]*(?:\n|\Z)")
# A one-line key whose value YAML reads as exactly the text it shows: double-quoted without
# escapes, single-quoted without quotes inside, or plain text that starts with a letter and holds
# no ": " or " #" (which would end it). Such a value is taken as it stands (see ``_simple_value``).
_SIMPLE_KEY = re.compile(
    r"""([a-z]+): +(?:"([^"\\\n]*)"|'([^'\n]*)'|([A-Za-z](?:[^:#\n]|:(?=[^ \t\n])|(?<=[^ \t])\#)*?)) *\Z"""
)
# Plain words YAML 1.1 may resolve to booleans or null rather than to strings (compared lower-cased,
# which also sends spellings PyYAML leaves as strings to the parser: slower, never wrong).
_YAML_WORDS = frozenset({"yes", "no", "true", "false", "on", "off", "null", "y", "n"})
_FIRST_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_VERSION_DIR = re.compile(r"^v?(\d+(?:\.\d+)*)$")


class LoaderError(ValueError):
    """The file's content cannot be turned into a document; the message says why."""


def _scalar(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return str(value).strip() or None


def _version_from_path(path: str) -> str | None:
    """A folder named like ``v2`` or ``2.1`` is the documents' version when front matter is silent.

    Split on "/" rather than parsed as a path (once per document): the empty and "." parts that
    a path object would drop never look like a version either.
    """
    for part in reversed(path.split("/")[:-1]):
        match = _VERSION_DIR.match(part)
        if match:
            return match.group(1)
    return None


FRONT_MATTER_KEYS = ("title", "version", "date")


def _key_blocks(block: str) -> list[tuple[str, int, str]]:
    """(key, line number in the file, YAML text) for each top-level key the snapshot reads.

    Real front matter often carries long keyword lists; parsing them cost most of a cold
    snapshot, and a malformed key the project never reads should not cost a document.
    """
    found: list[tuple[str, int, str]] = []
    for number, line in enumerate(block.splitlines(), start=2):  # line 1 is the opening ---
        if line[:1] not in (" ", "\t", "#", ""):
            key = line.split(":", 1)[0].strip()
            found.append((key, number, line))
        elif found:
            found[-1] = (found[-1][0], found[-1][1], found[-1][2] + "\n" + line)
    return [item for item in found if item[0] in FRONT_MATTER_KEYS]


def _simple_value(yaml_text: str) -> tuple[str, str] | None:
    """(key, value) of a one-line key whose value is a string as written, else None.

    Real front matter is mostly ``title: "..."`` lines; building a YAML parser for each cost more
    than reading the file. What this accepts, ``yaml.safe_load`` reads as the same string; what
    it declines goes to the parser, errors included.
    """
    match = _SIMPLE_KEY.match(yaml_text)
    if match is None:
        return None
    double, single, plain = match.group(2, 3, 4)
    value = double if double is not None else single if single is not None else plain
    if not value.isprintable() or (plain is not None and plain.lower() in _YAML_WORDS):
        return None
    return match.group(1), value


def _front_matter(text: str) -> tuple[str, int] | None:
    """(the lines between the "---" lines, where the body starts), or None without front matter."""
    opening = _FRONT_MATTER_OPEN.match(text)
    if opening is None:
        return None
    closing = _FRONT_MATTER_CLOSE.search(text, opening.end())
    if closing is not None:
        return text[opening.end():closing.start() + 1], closing.end()
    empty = _FRONT_MATTER_EMPTY.match(text, opening.end())
    return ("", empty.end()) if empty else None


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    """Return (front matter, body). A body keeps no front matter, so offsets start after it."""
    found = _front_matter(text)
    if found is None:
        return {}, text
    block, body_start = found
    data: dict[str, object] = {}
    for key, line_number, yaml_text in _key_blocks(block):
        simple = _simple_value(yaml_text)
        if simple is not None:
            data[simple[0]] = simple[1]
            continue
        try:
            parsed = yaml.load(yaml_text, Loader=_YamlLoader)
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise LoaderError(f"invalid YAML front matter at line {line_number}, field '{key}': {problem}") from exc
        if isinstance(parsed, dict):
            data.update(parsed)
    return data, text[body_start:]


def _meta(front: dict[str, object], body: str, path: str, kind: str) -> DocumentMeta:
    heading = _FIRST_HEADING.search(body)
    title = _scalar(front.get("title")) or (heading.group(1) if heading else PurePosixPath(path).stem)
    return DocumentMeta(
        title=title,
        version=_scalar(front.get("version")) or _version_from_path(path),
        date=_scalar(front.get("date")),
        kind=kind,
    )


def load_markdown(text: str, path: str) -> LoadedDocument:
    front, body = split_front_matter(text)
    return LoadedDocument(meta=_meta(front, body, path, "markdown"), body=body)


def load_text(text: str, path: str) -> LoadedDocument:
    front, body = split_front_matter(text)
    return LoadedDocument(meta=_meta(front, body, path, "text"), body=body)


class _HtmlToText(HTMLParser):
    """Collects visible text; block elements become line breaks and headings become ``#`` lines."""

    _SKIP = {"script", "style", "noscript", "template", "head", "svg"}
    _BLOCK = {
        "p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "ul", "ol",
        "table", "tr", "pre", "blockquote", "dl", "dt", "dd", "figure", "hr", "form",
    }
    _HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self.meta: dict[str, str] = {}
        self._skip_depth = 0
        self._in_title = False
        self._in_pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "meta":
            values = dict(attrs)
            name, content = values.get("name"), values.get("content")
            if name and content is not None:
                self.meta[name.lower()] = content
            return
        if tag == "title":
            self._in_title = True
        if tag in self._SKIP:
            self._skip_depth += 1
            return
        if tag in self._HEADINGS:
            self.parts.append("\n\n" + "#" * self._HEADINGS[tag] + " ")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag in ("td", "th"):
            self.parts.append(" | ")
        elif tag == "br":
            self.parts.append("\n")
        elif tag in self._BLOCK:
            self.parts.append("\n\n")
        if tag == "pre":
            self._in_pre += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in self._SKIP:
            self._skip_depth = max(0, self._skip_depth - 1)
            return
        if tag in self._HEADINGS or tag in self._BLOCK:
            self.parts.append("\n\n")
        if tag == "pre":
            self._in_pre = max(0, self._in_pre - 1)

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._skip_depth:
            return
        self.parts.append(data if self._in_pre else re.sub(r"\s+", " ", data))

    def text(self) -> str:
        joined = "".join(self.parts)
        lines = [line.strip() for line in joined.split("\n")]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"


def load_html(text: str, path: str) -> LoadedDocument:
    parser = _HtmlToText()
    parser.feed(text)
    parser.close()
    body = parser.text()
    front = {"title": parser.title.strip(), "version": parser.meta.get("version"), "date": parser.meta.get("date")}
    return LoadedDocument(meta=_meta(front, body, path, "html"), body=body)


_BUILTIN: dict[str, Loader] = {
    ".md": load_markdown,
    ".markdown": load_markdown,
    ".txt": load_text,
    ".html": load_html,
    ".htm": load_html,
}
_REGISTERED: dict[str, Loader] = {}


def register_loader(suffix: str, loader: Loader) -> None:
    """Teach the snapshot a new file type (suffix with its dot, e.g. ``.rst``)."""
    _REGISTERED[suffix.lower()] = loader
    loaders.cache_clear()


@cache
def loaders() -> dict[str, Loader]:
    """Built-in loaders, then entry-point plug-ins, then ones registered in code."""
    found = dict(_BUILTIN)
    for ep in entry_points(group="rag_assets.loaders"):
        found[ep.name.lower()] = ep.load()
    found.update(_REGISTERED)
    return found


def loader_for(path: str) -> Loader | None:
    # os.path, not PurePosixPath: the stat walk asks this for every file, and a path object per
    # file was half of deciding that a corpus is unchanged.
    return loaders().get(os.path.splitext(path)[1].lower())


def registered_in_code() -> bool:
    """Whether a loader was registered in this process: a worker process would not know it."""
    return bool(_REGISTERED)
