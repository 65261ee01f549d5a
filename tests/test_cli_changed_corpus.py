"""The first ``rag-assets run`` after a corpus change, on a home whose golden set was reviewed already: the new
version's lineage holds the accepted items, so the run builds the golden set, answers and scores it, and its
checks decide the exit code; it does not stop at the candidates as if nobody had reviewed the corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_assets.cli import main
from tests.test_cli import checkout_curation  # noqa: F401  (a fixture)


#: minimums the offline reference system does not reach on the sample corpus: the gate fails (the tester's case: the
#: skipped run exited 0 with no check although the last evaluation had failed its gate)
STRICT = "faithfulness: 1.0\ncontext_recall: 1.0\n"


def test_the_first_run_after_a_one_line_corpus_edit_builds_and_evaluates_the_golden_set_and_fails_its_gate(
        project_env: Path, checkout_curation: Path, sample_corpus: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path):
    monkeypatch.setenv("DAGSTER_HOME", "")  # the CLI's own instance in the home
    main(["run", "--no-production"])  # the bundled review applied: accepted items for this corpus version
    first = capsys.readouterr().out
    assert "next step: nobody has reviewed" not in first
    page = sorted(sample_corpus.rglob("*.md"))[0]
    page.write_text(page.read_text(encoding="utf-8") + "\n\nA new paragraph about offline mode.\n", encoding="utf-8")

    summary = tmp_path / "s.json"
    thresholds = tmp_path / "strict.yaml"
    thresholds.write_text(STRICT, encoding="utf-8")
    code = main(["run", "--no-production", "--summary-json", str(summary), "--thresholds", str(thresholds)])
    out = capsys.readouterr().out
    data = json.loads(summary.read_text(encoding="utf-8"))

    assert "next step: nobody has reviewed" not in out
    snapshot = next(iter(data["assets"]["corpus_snapshot"].values()))
    version = snapshot["corpus_version"]
    assert snapshot["new_version"] and snapshot["parent_version"] != version
    assert {"golden_set", "rag_answers", "evaluation"} <= set(data["assets"]), sorted(data["assets"])
    assert data["assets"]["golden_set"][version]["items"] > 0
    evaluation = [c for c in data["checks"] if c["asset"] == "evaluation"]
    assert evaluation and all(c["partition"] == version for c in evaluation), data["checks"]
    failed = sorted(c["check"] for c in data["checks"] if not c["passed"])
    assert code == 1 and "evaluation_thresholds" in failed, (code, failed)

    # a review of the version before the edit: it was staged, applied to nothing, and the run exited 0 (tester)
    (old,) = (checkout_curation / "sample").glob("review-cv-*.csv")
    again = tmp_path / old.name
    again.write_bytes(old.read_bytes().replace(b",accept,", b",reject,", 1))
    assert main(["run", "--no-production", "--review", str(again)]) == 2
    refused = capsys.readouterr()
    assert refused.out == "" and refused.err.startswith(f"error: {again} reviews corpus version {old.stem[7:]}, but "
                                                        f"the corpus is now {version} and a run imports")
    assert not list((checkout_curation / "inbox").glob(old.name)), "not staged"
    (checkout_curation / "inbox").mkdir(exist_ok=True)
    (checkout_curation / "inbox" / old.name).write_bytes(again.read_bytes())  # dropped by hand
    assert main(["status"]) == 0
    assert (f"review file in the inbox for corpus version {old.stem[7:]}, not {version} the corpus holds: `rag-assets "
            "run` does not import it") in capsys.readouterr().out, "status said: to import with `rag-assets run`"
