"""``rag-assets --instance NAME``: the CLI drives a RagEvaluation instance of the code location by name, running the
jobs the UI shows; ``--corpus`` reaches the corpus resource as run config, never as an environment variable."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from rag_assets.cli import main
from tests.conftest import PROJECT_ROOT

EXAMPLE = PROJECT_ROOT / "examples" / "two_products"


@pytest.fixture
def two_products(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """examples/two_products as the CLI's code location, every instance's home under tmp_path."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    for module in [name for name in sys.modules if name.split(".")[0] == "two_products"]:
        monkeypatch.delitem(sys.modules, module)  # its instances read RAG_ASSETS_HOME when the module loads
    monkeypatch.setenv("RAG_ASSETS_CODE_LOCATION", "two_products.definitions")
    monkeypatch.setenv("RAG_ASSETS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("RAG_ASSETS_DATABASE_URL", raising=False)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    return tmp_path / "home"


def test_a_name_the_bundled_location_lacks_exits_2_listing_its_instances(project_env: Path,
                                                                       capsys: pytest.CaptureFixture[str]):
    assert main(["status", "--instance", "library"]) == 2
    assert capsys.readouterr().err == ("error: --instance='library' is not an instance of code location "
                                       "rag_assets.definitions (its instances: the unnamed one (no --instance))\n")


def test_a_location_without_an_unnamed_instance_asks_for_one_of_its_names(two_products: Path,
                                                                         capsys: pytest.CaptureFixture[str]):
    assert main(["status"]) == 2
    assert capsys.readouterr().err == ("error: code location two_products.definitions has no unnamed instance: give "
                                       "--instance (its instances: handbook, library); for example "
                                       "--instance=handbook\n")


def test_run_drives_the_named_instance_with_its_own_jobs_store_and_folders(two_products: Path, sample_corpus: Path,
                                                                          capsys: pytest.CaptureFixture[str]):
    before = dict(os.environ)
    assert main(["run", "--instance", "library", "--no-production", "--corpus", str(sample_corpus)]) == 0
    out = capsys.readouterr().out
    assert f"store: sqlite:///{two_products / 'library' / 'rag_assets.db'}" in out
    assert re.search(r"^library/corpus_snapshot +cv-\S+ +documents=49,", out, re.MULTILINE), out
    assert re.search(r"^library/curation_queue +cv-\S+ +pending=", out, re.MULTILINE)
    assert "next step: nobody has reviewed corpus version" in out
    assert list((two_products / "library" / "curation" / "outbox").glob("review-*.csv"))
    assert not (two_products / "handbook").exists(), "the other instance is left alone"
    assert dict(os.environ) == before, "--corpus is run config, not an environment variable"
    assert main(["status", "--instance", "library"]) == 0
    assert str(sample_corpus) in capsys.readouterr().out, "the run snapshotted the --corpus folder"


def test_a_named_instance_reads_its_own_corpus_not_the_bundled_default(two_products: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]):
    """Run from a folder without data/corpus: the library's corpus is the one its defs.yaml names."""
    monkeypatch.chdir(tmp_path)
    assert main(["simulate-review", "--instance", "library"]) == 2
    assert capsys.readouterr().err.startswith("error: no review queue "
                                              f"{two_products / 'library' / 'curation' / 'outbox'}")
