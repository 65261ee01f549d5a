"""The golden-set check's one line names its first problems, not only how many there are."""

from rag_assets.golden.quality import QualityReport


def test_the_first_three_problems_are_named_and_the_rest_counted():
    assert QualityReport().named() == ""
    assert QualityReport(("size 0",)).named() == ": size 0"
    assert QualityReport(tuple("abcde")).named() == ": a; b; c (and 2 more)"
