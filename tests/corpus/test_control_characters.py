"""A corpus file with NUL or another control character is a skipped file with a reason, on every store."""

from __future__ import annotations

from pathlib import Path

from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine

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
