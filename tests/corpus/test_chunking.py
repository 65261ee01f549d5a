from rag_assets.corpus.chunking import chunk_document
from rag_assets.corpus.models import ChunkerConfig

SMALL = ChunkerConfig(target_chars=200, overlap_chars=40, min_chars=50)


def _doc() -> str:
    long_para = " ".join(f"Sentence number {i} explains a limit." for i in range(20))
    return (
        "# Guide\n\nIntro paragraph that is long enough to stand alone as a chunk, honestly.\n\n"
        "## Limits\n\n" + long_para + "\n\n"
        "## Code\n\n```bash\n# not a heading\nkestrel sync --all --verbose\n```\n\n"
        "## Tiny\n\nx.\n\n## After tiny\n\nThe last section.\n"
    )


def test_every_chunk_is_the_exact_slice_its_offsets_name():
    body = _doc()
    chunks = chunk_document("guide.md", body, SMALL)
    assert chunks, "a non-empty document yields chunks"
    for chunk in chunks:
        assert body[chunk.start:chunk.end] == chunk.text
        assert chunk.text == chunk.text.strip()
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_chunks_respect_the_target_size_and_overlap_within_a_section():
    body = _doc()
    chunks = chunk_document("guide.md", body, SMALL)
    assert max(len(c.text) for c in chunks) <= SMALL.target_chars
    limits = [c for c in chunks if c.heading == "Guide > Limits"]
    assert len(limits) >= 3
    for first, second in zip(limits, limits[1:]):
        assert second.start < first.end, "consecutive chunks of one section overlap"
        assert first.end - second.start <= SMALL.overlap_chars


def test_headings_start_chunks_and_code_fences_hide_hash_lines():
    chunks = chunk_document("guide.md", _doc(), SMALL)
    headings = [c.heading for c in chunks]
    assert "Guide > Code" in headings
    assert not any("not a heading" in h for h in headings)
    code = next(c for c in chunks if c.heading == "Guide > Code")
    assert code.text.startswith("## Code") and "# not a heading" in code.text


def test_a_section_shorter_than_min_chars_merges_into_the_next():
    chunks = chunk_document("guide.md", _doc(), SMALL)
    tiny = next(c for c in chunks if "x." in c.text.split("\n"))
    assert tiny.heading == "Guide > Tiny"
    assert "## After tiny" in tiny.text and "The last section." in tiny.text


def test_no_chunk_crosses_into_a_new_section_once_it_is_big_enough():
    chunks = chunk_document("guide.md", _doc(), SMALL)
    intro = chunks[0]
    assert intro.heading == "Guide"
    assert "## Limits" not in intro.text


def test_ids_depend_on_path_text_and_config_only():
    body = _doc()
    first = chunk_document("guide.md", body, SMALL)
    again = chunk_document("guide.md", body, SMALL)
    assert [c.chunk_id for c in first] == [c.chunk_id for c in again]
    moved = chunk_document("other/guide.md", body, SMALL)
    assert not {c.chunk_id for c in first} & {c.chunk_id for c in moved}
    other_config = chunk_document("guide.md", body, ChunkerConfig(target_chars=200, overlap_chars=40, min_chars=60))
    assert not {c.chunk_id for c in first} & {c.chunk_id for c in other_config}


def test_an_edit_elsewhere_keeps_the_ids_of_untouched_chunks():
    body = _doc()
    edited = body.replace("The last section.", "The last section, now edited.")
    before = {c.chunk_id for c in chunk_document("guide.md", body, SMALL)}
    after = {c.chunk_id for c in chunk_document("guide.md", edited, SMALL)}
    assert len(before - after) == 1 and len(after - before) == 1


def test_repeated_text_gets_distinct_ids():
    body = "## One\n\nIdentical paragraph text for both.\n\n" * 2
    chunks = chunk_document("dup.md", body, ChunkerConfig(target_chars=100, overlap_chars=10, min_chars=0))
    texts = [c.text for c in chunks]
    assert texts.count("## One\n\nIdentical paragraph text for both.") == 2
    assert len({c.chunk_id for c in chunks}) == len(chunks)


def test_an_overlong_word_run_is_cut_hard_at_the_target():
    body = "x" * 450
    chunks = chunk_document("blob.txt", body, ChunkerConfig(target_chars=200, overlap_chars=0, min_chars=0))
    assert [len(c.text) for c in chunks] == [200, 200, 50]
