"""Benchmark the reference RAG system's retrieval.

    python bench/retrieval.py quality [--data ../shared/data/anthropic_docs_rag]
    python bench/retrieval.py speed   [--corpus ../shared/data/cpp_docs.tar.gz] [--queries 2000]

quality: the anthropic_docs corpus (232 pre-chunked documents) becomes a corpus folder, is
snapshotted, and the reference retriever answers the 100 evaluation questions at k=3. Snapshot
chunks are mapped back to the external chunk they came from, so precision@3, recall@3 and MRR@3
are over the same 232 units as the figures published with the data (dense embeddings:
0.43 / 0.66 / 0.74).

speed: index build time and queries per second of the reference retriever (Bm25Index with the
version-aware re-rank) beside bm25s used directly with the same tokenization, on cpp_docs chunks.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


def _snapshot(folder: Path, db: Path):
    from rag_assets.corpus.models import ChunkerConfig
    from rag_assets.corpus.snapshot import snapshot_corpus
    from rag_assets.store.corpus_repository import SqlCorpusRepository
    from rag_assets.store.engine import get_engine

    repo = SqlCorpusRepository(get_engine(f"sqlite:///{db}"))
    version = snapshot_corpus(folder, ChunkerConfig(), repo).version_id
    return version, repo.snapshot_chunks(version)


def quality(data: Path, k: int) -> None:
    from rag_assets.golden.importers import json_chunks_to_corpus, read_anthropic_docs_dataset
    from rag_assets.llm.offline import OfflineClient
    from rag_assets.rag.bm25 import Bm25Index
    from rag_assets.rag.reference import ReferenceRagSystem
    from rag_assets.scoring.retrieval import precision_at_k, recall_at_k, reciprocal_rank

    with tempfile.TemporaryDirectory() as scratch:
        files = json_chunks_to_corpus(data / "anthropic_docs.json", Path(scratch) / "corpus")
        link_of = {path: link for link, path in files.items()}
        _, chunks = _snapshot(Path(scratch) / "corpus", Path(scratch) / "bench.db")
        system = ReferenceRagSystem(Bm25Index.build(chunks), k * 4, OfflineClient(), None,
                                    {c.chunk_id: c.doc_version for c in chunks})
        link_of_chunk = {c.chunk_id: link_of[c.path] for c in chunks}
        items = read_anthropic_docs_dataset(data / "docs_evaluation_dataset.json", data / "anthropic_docs.json")
        started = time.perf_counter()
        hits = system.retrieve([item.question for item in items])
        seconds = time.perf_counter() - started
        scores = {"precision": [], "recall": [], "mrr": []}
        for item, found in zip(items, hits):
            ranking = list(dict.fromkeys(link_of_chunk[h.chunk_id] for h in found))[:k]
            relevance = {link: 1 for link in item.external_chunk_ids}
            scores["precision"].append(precision_at_k(ranking, relevance, k))
            scores["recall"].append(recall_at_k(ranking, relevance, k))
            scores["mrr"].append(reciprocal_rank(ranking, relevance, k))
    print(f"anthropic_docs_rag: {len(items)} questions, {len(files)} documents -> {len(chunks)} snapshot chunks, "
          f"{seconds * 1000 / len(items):.2f} ms per query")
    print(f"{'metric':<14}{'reference BM25':>16}{'published dense':>17}")
    for name, published in (("precision", 0.43), ("recall", 0.66), ("mrr", 0.74)):
        print(f"{name + '@' + str(k):<14}{statistics.mean(scores[name]):>16.3f}{published:>17.2f}")


def speed(corpus: Path, queries: int) -> None:
    import bm25s

    from rag_assets.llm.offline import OfflineClient
    from rag_assets.rag.bm25 import Bm25Index, _document, _tokenize
    from rag_assets.rag.reference import ReferenceRagSystem

    with tempfile.TemporaryDirectory() as scratch:
        folder = corpus
        if corpus.is_file():
            with tarfile.open(corpus) as archive:
                archive.extractall(Path(scratch) / "c", filter="data")
            folder = next((Path(scratch) / "c").iterdir())
        _, chunks = _snapshot(folder, Path(scratch) / "bench.db")
    rng = random.Random(0)
    questions = [f"{c.heading.split(' > ')[-1]} {c.title}" for c in rng.sample(chunks, min(queries, len(chunks)))]

    started = time.perf_counter()
    direct = bm25s.BM25()
    direct.index(_tokenize([_document(c) for c in chunks]), show_progress=False)
    direct_build = time.perf_counter() - started
    started = time.perf_counter()
    direct.retrieve(_tokenize(questions), k=5, show_progress=False, n_threads=1)
    direct_query = time.perf_counter() - started

    started = time.perf_counter()
    index = Bm25Index.build(chunks)
    ours_build = time.perf_counter() - started
    system = ReferenceRagSystem(index, 5, OfflineClient(), None, {c.chunk_id: c.doc_version for c in chunks})
    started = time.perf_counter()
    system.retrieve(questions)
    ours_query = time.perf_counter() - started

    print(f"cpp_docs: {len(chunks):,} chunks, {len(questions):,} queries, k=5")
    print(f"{'':<26}{'index build s':>14}{'queries/s':>12}")
    print(f"{'bm25s directly':<26}{direct_build:>14.2f}{len(questions) / direct_query:>12.0f}")
    print(f"{'reference retriever':<26}{ours_build:>14.2f}{len(questions) / ours_query:>12.0f}")
    print(f"{'ratio (ours / direct)':<26}{ours_build / direct_build:>14.2f}{direct_query / ours_query:>12.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    q = sub.add_parser("quality")
    q.add_argument("--data", type=Path, default=SHARED / "anthropic_docs_rag")
    q.add_argument("-k", type=int, default=3)
    s = sub.add_parser("speed")
    s.add_argument("--corpus", type=Path, default=SHARED / "cpp_docs.tar.gz")
    s.add_argument("--queries", type=int, default=2000)
    args = parser.parse_args()
    if args.what == "quality":
        quality(args.data, args.k)
    else:
        speed(args.corpus, args.queries)


if __name__ == "__main__":
    main()
