"""A corpus file with NUL or another control character is a skipped file with a reason, on every store."""

from __future__ import annotations

from pathlib import Path

from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine
from rag_assets.text.control import control_character_problem, has_control_bytes

from tests.corpus.test_snapshot import CONFIG, _doc, _write, corpus  # noqa: F401  (fixture)


def test_a_file_with_nul_is_skipped_and_the_snapshot_succeeds(corpus: Path, store_url: str):  # noqa: F811
    repo = SqlCorpusRepository(get_engine(store_url))
    _write(corpus, "bad/nul.md", "# Title\n\nA\x00B is a binary blob.\n")
    _write(corpus, "bad/escape.txt", "Coloured \x1b[31mred\x1b[0m terminal output, copied raw.\n")
    _write(corpus, "ok/form-feed.txt", _doc("Pages", 3).replace("\n\nParagraph 1", "\n\f\nParagraph 1"))

    outcome = snapshot_corpus(corpus, CONFIG, repo)

    reasons = {s.path: s.reason for s in outcome.skipped}
    assert reasons == {
        "bad/nul.md": "contains the control character U+0000 at character 11: a binary or damaged file, not text",
        "bad/escape.txt": "contains the control character U+001B at character 10: a binary or damaged file, not text",
    }
    assert outcome.document_count == 5
    assert not any("\x00" in chunk.text for chunk in repo.chunks(outcome.version_id))


def test_the_byte_scan_agrees_with_the_character_rule_for_every_character():
    # Every character of the Basic Multilingual Plane but surrogates, and some beyond it.
    characters = [chr(c) for c in [*range(0xD800), *range(0xE000, 0x10000), 0x1F600, 0x10FFFF]]
    flagged = [c for c in characters if has_control_bytes(f"a{c}b".encode())]
    assert flagged == [c for c in characters if control_character_problem(f"a{c}b")]
    assert [ord(c) for c in flagged] == [*range(0x09), 0x0B, *range(0x0E, 0x20)]
