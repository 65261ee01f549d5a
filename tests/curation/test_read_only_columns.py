"""An edit typed into a read-only column (question, reference_answer) rejects the file naming the column to use."""

from __future__ import annotations

from rag_assets.curation.inbox import import_review_file
from rag_assets.curation.review_file import read_review_file
from rag_assets.store.curation_repository import SqlCurationRepository
from tests.curation.test_rejected_files_leave_the_store_unchanged import _csv, _dump, world  # noqa: F401  (fixture)


def test_an_edit_in_the_question_cell_is_rejected_naming_edited_question_and_the_store_is_unchanged(world):  # noqa: F811
    engine, version, good, folders = world
    repo = SqlCurationRepository(engine)
    folders.inbox.mkdir(parents=True)
    first, second, third = good[:3]
    path = folders.inbox / "wrong-column.csv"
    path.write_bytes(_csv([{**first, "question": "A better question?"},
                           {**second, "reference_answer": second["reference_answer"] + " Also this."},
                           {**third, "question": "  " + third["question"].replace(" ", "\n", 1) + " "}]))
    before = _dump(engine)

    result = import_review_file(path, folders, repo.candidates.corpus_versions_by_id(), read_review_file,
                                repo.apply_review)

    assert result.status == "rejected" and _dump(engine) == before
    assert [str(p) for p in result.problems] == [
        "row 2, question: question is read-only and was changed; put the new text in edited_question with decision "
        "'edit' (and leave question as written)",
        "row 3, reference_answer: reference_answer is read-only and was changed; put the new text in edited_answer "
        "with decision 'edit' (and leave reference_answer as written)",
    ], "re-wrapped whitespace (row 4) is no edit"
    assert "put the new text in edited_question" in (folders.rejected / "wrong-column.csv.errors.txt").read_text()
