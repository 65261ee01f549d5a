"""validate_frame: GE 1.x results mapped back to columns and DataFrame index labels."""

from __future__ import annotations

import math

import great_expectations as gx
import pandas as pd
import pytest

from rag_assets.quality.expectations import ExpectationFailure, _batch_definition, validate_frame


@pytest.fixture
def golden() -> pd.DataFrame:
    # indexed by the row numbers a reviewer would see, not 0..n-1
    return pd.DataFrame(
        {
            "id": ["g-1", "g-2", "g-1", "g-4"],
            "question": ["What is X?", "", "What is Y?", None],
            "kind": ["factual", "factual", "bogus", "multi_hop"],
        },
        index=pd.Index([2, 3, 5, 9], name="row"),
    )


def test_failures_name_column_and_index_labels_in_the_order_given(golden: pd.DataFrame) -> None:
    failures = validate_frame(
        golden,
        [
            gx.expectations.ExpectColumnValuesToBeUnique(column="id"),
            gx.expectations.ExpectColumnValuesToBeInSet(column="kind", value_set=["factual", "multi_hop"]),
            gx.expectations.ExpectColumnValuesToMatchRegex(column="question", regex=r"\S"),
            gx.expectations.ExpectTableRowCountToBeBetween(min_value=10, max_value=100),
        ],
    )

    assert failures == [
        ExpectationFailure("expect_column_values_to_be_unique", "id", (2, 5), ["g-1", "g-1"]),
        ExpectationFailure("expect_column_values_to_be_in_set", "kind", (5,), ["bogus"]),
        ExpectationFailure("expect_column_values_to_match_regex", "question", (3,), [""]),
        ExpectationFailure("expect_table_row_count_to_be_between", None, (), 4),
    ]


def test_not_null_reports_the_null_rows(golden: pd.DataFrame) -> None:
    [failure] = validate_frame(golden, [gx.expectations.ExpectColumnValuesToNotBeNull(column="question")])

    assert (failure.expectation, failure.column, failure.row_indexes) == (
        "expect_column_values_to_not_be_null",
        "question",
        (9,),
    )
    assert len(failure.observed) == 1 and (failure.observed[0] is None or math.isnan(failure.observed[0]))


def test_passing_expectations_give_no_failures(golden: pd.DataFrame) -> None:
    assert validate_frame(golden, []) == []
    assert (
        validate_frame(
            golden,
            [
                gx.expectations.ExpectTableRowCountToBeBetween(min_value=1, max_value=10),
                gx.expectations.ExpectColumnValuesToNotBeNull(column="id"),
            ],
        )
        == []
    )


def test_a_missing_column_is_a_failure_with_the_exception_not_a_crash(golden: pd.DataFrame) -> None:
    [failure] = validate_frame(golden, [gx.expectations.ExpectColumnValuesToNotBeNull(column="answer")])

    assert (failure.column, failure.row_indexes) == ("answer", ())
    assert failure.exception is not None and 'column "answer"' in failure.exception


def test_expectations_are_not_changed_and_can_be_reused(golden: pd.DataFrame) -> None:
    unique = gx.expectations.ExpectColumnValuesToBeUnique(column="id", meta={"owner": "golden"})

    first = validate_frame(golden, [unique, unique])
    second = validate_frame(golden.drop(index=5), [unique])

    assert [f.row_indexes for f in first] == [(2, 5), (2, 5)]
    assert second == []
    assert unique.id is None and unique.meta == {"owner": "golden"}


def test_default_index_and_string_labels(golden: pd.DataFrame) -> None:
    expectation = gx.expectations.ExpectColumnValuesToBeInSet(column="kind", value_set=["factual"])

    assert validate_frame(golden.reset_index(drop=True), [expectation])[0].row_indexes == (2, 3)
    assert validate_frame(golden.set_index("id"), [expectation])[0].row_indexes == ("g-1", "g-4")


def test_context_is_built_once_and_progress_bars_are_quiet(
    golden: pd.DataFrame, capfd: pytest.CaptureFixture[str]
) -> None:
    validate_frame(golden, [gx.expectations.ExpectColumnValuesToBeUnique(column="id")])

    assert _batch_definition() is _batch_definition()
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""
