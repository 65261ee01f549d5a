"""Hostile files in a corpus root, with real symbolic links: a loop is a skipped file, and a file or a
folder swapped for a link between the stat walk and the read is skipped unread (the swap is driven
by calling the walk and the read separately and replacing the file in between)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.corpus.manifest import build_manifest, describe, fingerprint, scan
from rag_assets.corpus.models import ChunkerConfig, SkippedFile

CONFIG = ChunkerConfig(target_chars=300, overlap_chars=50, min_chars=80)
SECRET = "TOPSECRET-hunter2 is the vault password."


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "guide").mkdir(parents=True)
    (root / "intro.md").write_text("# Intro\n\nThe vault keeps 10 GB per user.\n")
    (root / "guide" / "limits.md").write_text("# Limits\n\nA vault holds 200 files.\n")
    return root


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A 0600 file outside the root, in a folder of its own."""
    path = tmp_path / "outside" / "limits.md"
    path.parent.mkdir()
    path.write_text(f"# Secret\n\n{SECRET}\n")
    path.chmod(0o600)
    return path


def _read_text(manifest) -> str:
    return "\n".join(chunk.text for chunks in manifest.chunked.values() for chunk in chunks)


def test_a_symlink_loop_is_a_skipped_file_and_the_rest_is_described(root: Path):
    (root / "loop.md").symlink_to("loop.md")

    manifest = build_manifest(root, CONFIG, {}, chunk=True)

    assert sorted(entry.path for entry in manifest.entries) == ["guide/limits.md", "intro.md"]
    assert manifest.skipped == [SkippedFile("loop.md", "symbolic link that cannot be resolved (a loop); "
                                                       "links are not followed")]
    assert fingerprint(root, CONFIG) == scan(root, CONFIG).fingerprint(CONFIG)  # what the corpus sensor calls


def test_a_file_swapped_for_a_link_after_the_walk_is_skipped_unread(root: Path, secret: Path):
    listing = scan(root, CONFIG)
    (root / "guide" / "limits.md").unlink()
    (root / "guide" / "limits.md").symlink_to(secret)

    manifest = describe(listing, CONFIG, {}, chunk=True)

    assert [entry.path for entry in manifest.entries] == ["intro.md"]
    assert manifest.skipped == [SkippedFile("guide/limits.md", "cannot be read: symbolic link; links are not followed")]
    assert "TOPSECRET" not in _read_text(manifest) and "10 GB" in _read_text(manifest)


def test_a_folder_swapped_for_a_link_after_the_walk_is_skipped_unread(root: Path, secret: Path):
    listing = scan(root, CONFIG)
    (root / "guide").rename(root.parent / "guide-moved")
    (root / "guide").symlink_to(secret.parent)  # guide/limits.md now leads to the secret, through the folder

    manifest = describe(listing, CONFIG, {}, chunk=True)

    assert manifest.skipped == [SkippedFile("guide/limits.md", "cannot be read: replaced by another file since the "
                                                               "folder was listed; not read")]
    assert "TOPSECRET" not in _read_text(manifest) and "guide/limits.md" not in manifest.chunked
