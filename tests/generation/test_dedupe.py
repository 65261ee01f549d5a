from rag_assets.generation.dedupe import NearDuplicateFilter
from rag_assets.text.tokens import content_words, jaccard


def test_reordered_question_is_a_near_duplicate_and_a_different_fact_is_not():
    dedupe = NearDuplicateFilter(0.8)
    assert dedupe.duplicate_of("What is the maximum file size in version 2.0?") is None
    assert dedupe.duplicate_of("In version 2.0, what is the maximum file size?") == "What is the maximum file size in version 2.0?"
    assert dedupe.duplicate_of("What is the minimum file size in version 2.0?") is None


def test_threshold_is_inclusive_on_hand_computed_jaccard():
    # {maximum, file, size, vault, limit} vs {maximum, file, size, vault, quota}: 4 shared of 6 -> 0.667
    a, b = "maximum file size vault limit", "maximum file size vault quota"
    assert round(jaccard(content_words(a), content_words(b)), 3) == 0.667
    assert NearDuplicateFilter(2 / 3, [a]).duplicate_of(b) == a
    assert NearDuplicateFilter(0.7, [a]).duplicate_of(b) is None


def test_existing_questions_count_as_kept():
    assert NearDuplicateFilter(0.8, ["How many devices can a user link?"]).duplicate_of(
        "How many devices can a user link") == "How many devices can a user link?"
