"""Golden items pinned to a new corpus version by their evidence spans, through a real store: an edit
elsewhere in a document or another chunk size repins an item, an edit of its evidence makes it stale,
and its re-review shows the old and the new text."""

from __future__ import annotations

from pathlib import Path

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.evidence.spans import Span
from rag_assets.golden.build import build_golden, diff_golden
from rag_assets.golden.models import GoldenItem
from rag_assets.golden.repin import PinTarget, pin_items
from rag_assets.golden.requeue import requeue_candidates
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine, write_transaction
from rag_assets.store.golden_repository import SqlGoldenRepository, add_revision

CONFIG = ChunkerConfig(target_chars=300, overlap_chars=0, min_chars=100)


def _paragraphs(topic: str, count: int) -> str:
    return "\n\n".join(f"The {topic} rule number {n} says that {topic} item {n} weighs {n * 3} grams and ships "
                       f"within {n + 1} days of the order." for n in range(count))


def _corpus(root: Path) -> None:
    root.mkdir()
    for name in ("alpha", "beta", "gamma", "delta"):
        (root / f"{name}.md").write_text(f"# {name.title()}\n\n{_paragraphs(name, 8)}\n", encoding="utf-8")


def _items(corpus: SqlCorpusRepository, version: str) -> list[GoldenItem]:
    """One item per document, on its third chunk: generated items name chunks and store no spans; alpha's,
    as an imported item, keeps the span of one sentence of it."""
    chunks = corpus.snapshot_chunks(version)
    documents = corpus.documents(version)
    items = []
    for name in ("alpha", "beta", "gamma", "delta"):
        chunk = [c for c in chunks if c.path == f"{name}.md"][2]
        sentence = chunk.text.split("\n\n")[1]
        start = chunk.start + chunk.text.index(sentence)
        evidence = (documents.evidence(Span(chunk.path, start, start + len(sentence))),) if name == "alpha" else ()
        items.append(GoldenItem(f"q-{name}", 1, "factual", f"What does {name} say?", "It says so.", (chunk.ref,),
                                version, evidence=evidence))
    return items


def _store(tmp_path: Path) -> tuple[Path, SqlCorpusRepository, str, list[GoldenItem]]:
    root = tmp_path / "corpus"
    _corpus(root)
    corpus = SqlCorpusRepository(get_engine(f"sqlite:///{tmp_path / 'store.db'}"))
    version = snapshot_corpus(root, CONFIG, corpus).version_id
    return root, corpus, version, _items(corpus, version)


def test_an_edit_elsewhere_repins_an_edit_of_the_evidence_makes_stale_and_nothing_else_moves(tmp_path: Path):
    root, corpus, version, items = _store(tmp_path)
    old_text = {i.item_id: corpus.snapshot_chunks(version, [i.relevant_chunks[0].chunk_id])[0].text for i in items}
    old_text["q-alpha"] = corpus.evidence_texts(items[0].evidence)[items[0].evidence[0]]
    alpha = root / "alpha.md"
    alpha.write_text("A new opening paragraph that moves every later offset of this file.\n\n" + alpha.read_text())
    beta = root / "beta.md"
    beta.write_text(beta.read_text().replace(old_text["q-beta"], old_text["q-beta"].replace("grams", "kilograms", 1)))
    (root / "delta.md").unlink()
    new = snapshot_corpus(root, CONFIG, corpus).version_id
    target = PinTarget(new, corpus.snapshot_chunks(new), corpus)

    pinning = pin_items(items, target)

    current = {i.item_id: i for i in pinning.current}
    assert sorted(current) == ["q-alpha", "q-gamma"] and pinning.repinned == ("q-alpha",)
    assert current["q-gamma"] is items[2], "an untouched document keeps its item as it was"
    (span,) = current["q-alpha"].evidence
    body = corpus.documents(new, ["alpha.md"])["alpha.md"].body
    assert body[span.start:span.end] == old_text["q-alpha"] and span.start > 0
    new_chunks = {c.chunk_id: c for c in target.chunks}
    assert all(ref.chunk_id in new_chunks for ref in current["q-alpha"].relevant_chunks)
    assert [(s.item.item_id, len(s.kept), len(s.lost)) for s in pinning.stale] == [("q-beta", 0, 1), ("q-delta", 0, 1)]

    beta_again, delta_again = requeue_candidates(pinning, target)
    assert beta_again.origin_item_id == "q-beta" and beta_again.corpus_version == new
    was, now = beta_again.change_note.splitlines()[1:3]
    assert was.startswith("WAS: ") and now.startswith("NOW: ") and "kilograms" in now and "kilograms" not in was
    assert beta_again.relevant_chunks and all(r.chunk_id in new_chunks for r in beta_again.relevant_chunks)
    assert delta_again.relevant_chunks == () and delta_again.evidence_vanished
    # the import refuses anything but a rejection of it (refuse_undoable), so its note offers nothing else
    assert delta_again.change_note.splitlines()[2] == (
        "NOW: (not found in delta.md, and no evidence of the item is left: reject it)")


def test_a_re_review_that_lost_one_passage_but_keeps_another_offers_an_edit_and_one_that_lost_all_only_a_rejection(
        tmp_path: Path):
    root, corpus, version, items = _store(tmp_path)
    chunks = corpus.snapshot_chunks(version)
    gamma, delta = ([c for c in chunks if c.path == f"{name}.md"][3] for name in ("gamma", "delta"))
    both = GoldenItem("q-both", 1, "factual", "What do gamma and delta say?", "Both say so.", (gamma.ref, delta.ref),
                      version)
    (root / "delta.md").unlink()
    new = snapshot_corpus(root, CONFIG, corpus).version_id

    target = PinTarget(new, corpus.snapshot_chunks(new), corpus)
    kept_one, lost_all = requeue_candidates(pin_items([both, items[3]], target), target)

    assert (kept_one.origin_item_id, lost_all.origin_item_id) == ("q-both", "q-delta")
    assert kept_one.relevant_chunks and not kept_one.evidence_vanished and lost_all.evidence_vanished
    assert kept_one.change_note.splitlines()[2] == (
        "NOW: (not found in delta.md; its other evidence stands: accept or edit it against that, or reject it)")
    assert lost_all.change_note.splitlines()[2] == (
        "NOW: (not found in delta.md, and no evidence of the item is left: reject it)")


def test_another_chunk_size_repins_every_item_and_makes_none_stale(tmp_path: Path):
    root, corpus, version, items = _store(tmp_path)
    new = snapshot_corpus(root, ChunkerConfig(target_chars=700, overlap_chars=50, min_chars=200), corpus).version_id
    chunks = corpus.snapshot_chunks(new)
    assert not {r.chunk_id for i in items for r in i.relevant_chunks} & {c.chunk_id for c in chunks}

    build = build_golden(PinTarget(new, chunks, corpus), items)

    assert build.stale == () and sorted(build.repinned) == sorted(i.item_id for i in items)
    for item in build.items:
        (span,) = item.evidence
        assert corpus.evidence_texts([span])[span] == corpus.documents(new, [span.path])[span.path].body[span.start:span.end]
        assert item.relevant_chunks, "the chunks of the new size that hold the evidence"


def test_a_version_keeps_its_repinned_spans_and_its_diff_says_which_items_moved(tmp_path: Path):
    root, corpus, version, items = _store(tmp_path)
    golden = SqlGoldenRepository(corpus.engine)
    with write_transaction(corpus.engine) as conn:
        for item in items:
            add_revision(conn, item.item_id, question=item.question, answer=item.reference_answer,
                         refs=item.relevant_chunks, corpus_version=version, decision_id=None,
                         question_type=item.question_type, origin="generated")
    first = build_golden(PinTarget(version, corpus.snapshot_chunks(version), corpus), items)
    assert first.repinned == ()
    parent = golden.save_version(first, None, diff_golden((), first))
    alpha = root / "alpha.md"
    alpha.write_text("Moved down.\n\n" + alpha.read_text())
    new = snapshot_corpus(root, CONFIG, corpus).version_id
    second = build_golden(PinTarget(new, corpus.snapshot_chunks(new), corpus), items)
    diff = diff_golden(golden.version_items(parent.number), second)
    saved = golden.save_version(second, parent, diff)

    assert (diff.repinned, diff.changed, diff.added, diff.removed, diff.stale) == (("q-alpha",), (), (), (), ())
    stored = {i.item_id: i for i in golden.version_items(saved.number)}
    assert stored["q-alpha"].evidence == next(i for i in second.items if i.item_id == "q-alpha").evidence
    assert stored["q-alpha"].evidence[0].start == items[0].evidence[0].start + len("Moved down.\n\n")
    assert stored["q-beta"].evidence == () and stored["q-beta"].relevant_chunks == items[1].relevant_chunks
    assert golden.version_items(parent.number)[0].evidence == (), "the parent version is as it was"


def test_the_copies_of_an_evidence_span_move_with_it_and_a_deleted_copy_is_dropped(tmp_path: Path):
    root = tmp_path / "corpus"
    _corpus(root)
    (root / "archive").mkdir()
    (root / "archive" / "alpha.md").write_text((root / "alpha.md").read_text())
    corpus = SqlCorpusRepository(get_engine(f"sqlite:///{tmp_path / 'store.db'}"))
    version = snapshot_corpus(root, CONFIG, corpus).version_id
    documents = corpus.documents(version)
    sentence = _paragraphs("alpha", 8).split("\n\n")[3]
    place = lambda path, body: Span(path, body.index(sentence), body.index(sentence) + len(sentence))  # noqa: E731
    body = documents["alpha.md"].body
    evidence = documents.evidence(place("alpha.md", body), elsewhere=[place("archive/alpha.md", body)])
    chunk = next(c for c in corpus.snapshot_chunks(version) if c.path == "alpha.md" and sentence in c.text)
    item = GoldenItem("q-copy", 1, "factual", "What does alpha say?", "It says so.", (chunk.ref,), version,
                      evidence=(evidence,))
    for path in ("alpha.md", "archive/alpha.md"):
        (root / path).write_text(f"A new opening paragraph of {path}.\n\n" + (root / path).read_text())
    moved = snapshot_corpus(root, CONFIG, corpus).version_id
    (root / "archive" / "alpha.md").unlink()
    deleted = snapshot_corpus(root, CONFIG, corpus).version_id

    (current,) = pin_items([item], PinTarget(moved, corpus.snapshot_chunks(moved), corpus)).current
    bodies = corpus.documents(moved)
    assert current.evidence[0].places == (place("alpha.md", bodies["alpha.md"].body),
                                           place("archive/alpha.md", bodies["archive/alpha.md"].body))
    assert [e.revision for e in current.evidence[0].elsewhere] == [bodies["archive/alpha.md"].revision]
    pinning = pin_items([current], PinTarget(deleted, corpus.snapshot_chunks(deleted), corpus))
    assert pinning.stale == () and pinning.repinned == ("q-copy",), "the live page's span still stands"
    assert pinning.current[0].evidence[0].places == (place("alpha.md", bodies["alpha.md"].body),)


def test_a_renamed_document_moves_its_items_evidence_to_the_new_path_and_a_renamed_and_edited_one_makes_them_stale(
        tmp_path: Path):
    root, corpus, version, items = _store(tmp_path)
    (root / "archive").mkdir()
    (root / "alpha.md").rename(root / "archive" / "alpha.md")
    beta = (root / "beta.md").read_text()
    (root / "beta.md").unlink()
    (root / "beta-renamed.md").write_text(beta.replace("beta rule number 7", "beta rule number seven"))
    new = snapshot_corpus(root, CONFIG, corpus).version_id
    target = PinTarget(new, corpus.snapshot_chunks(new), corpus)

    build = build_golden(target, items)

    assert (build.repinned, build.moved) == (("q-alpha",), ("q-alpha",))
    assert [s.item.item_id for s in build.stale] == ["q-beta"], "a rename with an edit is the expert's call"
    alpha = next(i for i in build.items if i.item_id == "q-alpha")
    (span,) = alpha.evidence
    assert (span.path, span.start, span.end, span.revision) == ("archive/alpha.md", items[0].evidence[0].start,
                                                                items[0].evidence[0].end, items[0].evidence[0].revision)
    moved_chunks = {c.chunk_id for c in target.chunks if c.path == "archive/alpha.md"}
    assert alpha.relevant_chunks and {r.chunk_id for r in alpha.relevant_chunks} <= moved_chunks
    diff = diff_golden(items, build, parent_stale=("q-beta",))
    assert (diff.moved, diff.repinned, diff.stale, diff.still_stale, diff.stale_total) == (
        ("q-alpha",), (), (), ("q-beta",), ("q-beta",))
    assert diff_golden(items, build).stale == ("q-beta",), "stale at the parent or not decides new or still"


def test_a_renamed_document_with_identical_copies_moves_its_evidence_to_the_rename_target_not_onto_a_copy(
        tmp_path: Path):
    """alpha.md has two identical copies: archive/alpha.md, the span's other place, and backup/alpha.md, which
    the item does not name. Renamed to zeta.md, the span moves to zeta.md: not onto its own other place, nor onto
    the old copy that sorts before the new path."""
    root = tmp_path / "corpus"
    _corpus(root)
    for copy in ("archive", "backup"):
        (root / copy).mkdir()
        (root / copy / "alpha.md").write_text((root / "alpha.md").read_text())
    corpus = SqlCorpusRepository(get_engine(f"sqlite:///{tmp_path / 'store.db'}"))
    version = snapshot_corpus(root, CONFIG, corpus).version_id
    documents = corpus.documents(version)
    body = documents["alpha.md"].body
    sentence = _paragraphs("alpha", 8).split("\n\n")[3]
    start, end = body.index(sentence), body.index(sentence) + len(sentence)
    evidence = documents.evidence(Span("alpha.md", start, end), elsewhere=[Span("archive/alpha.md", start, end)])
    chunk = next(c for c in corpus.snapshot_chunks(version) if c.path == "alpha.md" and sentence in c.text)
    item = GoldenItem("q-copy", 1, "factual", "What does alpha say?", "It says so.", (chunk.ref,), version,
                      evidence=(evidence,))
    (root / "alpha.md").rename(root / "zeta.md")
    new = snapshot_corpus(root, CONFIG, corpus).version_id
    target = PinTarget(new, corpus.snapshot_chunks(new), corpus)

    pinning = pin_items([item], target)

    assert (pinning.repinned, pinning.moved, pinning.stale) == (("q-copy",), ("q-copy",), ())
    (span,) = pinning.current[0].evidence
    assert span.places == (Span("zeta.md", start, end), Span("archive/alpha.md", start, end))
    assert [e.revision for e in (span, *span.elsewhere)] == [evidence.revision, evidence.elsewhere[0].revision]
    refs = {r.chunk_id for r in pinning.current[0].relevant_chunks}
    assert refs and refs <= {c.chunk_id for c in target.chunks if c.path == "zeta.md"}
