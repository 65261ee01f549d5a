"""Plan a generation run: which chunks, which question types, which partner chunks.

Uncovered chunks are visited in a seeded hash order (spread over the corpus, the same every
run), type quotas follow the configured mix, and each chunk serves one task per run. Partners
for multi-hop and comparative questions are found through an inverted index of content words,
so planning costs O(tasks x postings), not O(chunks^2).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from rag_assets.corpus.models import sha256_hex
from rag_assets.corpus.models import SnapshotChunk
from rag_assets.generation.models import GenerationConfig, QuestionType
from rag_assets.text.tokens import content_words, sentences

# Everyday words a user might type for words documentation tends to use. Only pairs whose
# replacement the corpus never uses are offered, so a terminology question really does miss
# keyword matching.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "maximum": ("largest", "biggest"), "minimum": ("smallest", "lowest"), "limit": ("cap", "ceiling"),
    "limits": ("caps", "ceilings"), "default": ("out-of-the-box", "factory"), "restore": ("recover", "bring back"),
    "delete": ("erase", "wipe"), "deleted": ("erased", "wiped"), "remove": ("take out", "strip"),
    "retention": ("keeping", "holding"), "window": ("period", "span"), "encryption": ("scrambling", "ciphering"),
    "encrypted": ("scrambled", "ciphered"), "rotation": ("cycling", "swapping"), "rotate": ("cycle", "swap"),
    "price": ("charge", "fee"), "install": ("put on", "deploy"), "upgrade": ("move up", "update"),
    "deprecated": ("phased out", "being retired"), "removed": ("dropped", "taken out"),
    "supports": ("works with", "handles"), "supported": ("compatible", "handled"), "devices": ("gadgets", "machines"),
    "device": ("gadget", "machine"), "users": ("people", "members"), "user": ("person", "member"),
    "conflict": ("clash", "collision"), "conflicts": ("clashes", "collisions"), "backup": ("safety copy", "spare copy"),
    "bandwidth": ("throughput", "line speed"), "upload": ("send up", "push up"), "download": ("pull down", "fetch"),
    "timeout": ("time cap", "wait cap"), "retries": ("reattempts", "second tries"), "error": ("fault", "failure"),
    "errors": ("faults", "failures"), "password": ("passphrase", "pass phrase"), "expires": ("lapses", "runs out"),
    "plan": ("tier", "subscription"), "plans": ("tiers", "subscriptions"), "storage": ("disk space", "capacity"),
    "quota": ("allowance", "allotment"), "server": ("host machine", "box"), "console": ("dashboard", "control panel"),
    "configure": ("tune", "adjust"), "enable": ("switch on", "turn on"), "disable": ("switch off", "turn off"),
    "files": ("documents", "items"), "file": ("document", "item"), "size": ("footprint", "bulk"),
    "schedule": ("timetable", "calendar"), "snapshot": ("point-in-time copy", "frozen copy"),
    "sync": ("mirroring", "keeping in step"), "synchronization": ("mirroring", "keeping in step"),
}

ABSENT_TOPICS: tuple[str, ...] = (
    "Bluetooth pairing", "a fax gateway", "blockchain notarization", "an IRC bot", "voice commands",
    "a Windows Phone app", "floppy disk import", "a Gopher mirror", "smartwatch notifications",
    "quantum key distribution", "a mainframe connector", "a VR viewer", "SMS-based restores",
    "a Lotus Notes bridge", "holographic previews", "a CB radio relay",
)

# Scarce types first, so they get the chunks they need before common ones take them.
PLANNING_ORDER = (
    QuestionType.COMPARATIVE, QuestionType.MULTI_HOP, QuestionType.TERMINOLOGY,
    QuestionType.ABSTRACTIVE, QuestionType.FACTUAL, QuestionType.ADVERSARIAL,
)


@dataclass(frozen=True)
class GenerationTask:
    task_id: str
    question_type: str
    chunks: tuple[SnapshotChunk, ...]
    count: int
    extras: dict[str, Any] = field(default_factory=dict)

    def inputs(self) -> dict[str, Any]:
        return {
            "question_type": self.question_type,
            "count": self.count,
            "chunks": [{"chunk_id": c.chunk_id, "path": c.path, "title": c.title, "version": c.doc_version,
                        "heading": c.heading, "text": c.text} for c in self.chunks],
            **self.extras,
        }


def allocate(total: int, mix: dict[str, float]) -> dict[str, int]:
    """Split ``total`` tasks over types by weight (largest remainder; ties in declaration order)."""
    weight = sum(mix.values())
    exact = {t: total * w / weight for t, w in mix.items()}
    counts = {t: math.floor(v) for t, v in exact.items()}
    for t in sorted(exact, key=lambda t: -(exact[t] - counts[t]))[: total - sum(counts.values())]:
        counts[t] += 1
    return counts


class _Corpus:
    """Vocabulary and an inverted index over the chunks, built once per plan."""

    def __init__(self, chunks: Sequence[SnapshotChunk]) -> None:
        self.chunks = {c.chunk_id: c for c in chunks}
        self.words = {c.chunk_id: set(content_words(f"{c.heading} {c.text}")) for c in chunks}
        self.vocabulary: set[str] = set().union(*self.words.values()) if chunks else set()
        self.postings: dict[str, list[str]] = defaultdict(list)
        for chunk_id, words in self.words.items():
            for word in words:
                self.postings[word].append(chunk_id)
        self.by_name: dict[str, list[SnapshotChunk]] = defaultdict(list)
        for chunk in chunks:
            self.by_name[PurePosixPath(chunk.path).stem].append(chunk)

    def absent(self, phrase: str) -> bool:
        return not set(content_words(phrase)) & self.vocabulary

    def best_partner(self, chunk: SnapshotChunk, candidates: Iterable[SnapshotChunk]) -> SnapshotChunk | None:
        mine = self.words[chunk.chunk_id]
        scored = [(len(mine & self.words[c.chunk_id]) / (len(mine | self.words[c.chunk_id]) or 1), c.chunk_id, c)
                  for c in candidates]
        scored = [s for s in scored if s[0] > 0.05]
        return max(scored)[2] if scored else None

    def related(self, chunk: SnapshotChunk, limit: int = 200) -> list[SnapshotChunk]:
        """Chunks sharing its rarest words (short posting lists first)."""
        words = sorted(self.words[chunk.chunk_id], key=lambda w: (len(self.postings[w]), w))[:12]
        seen = dict.fromkeys(cid for w in words for cid in self.postings[w][:limit] if cid != chunk.chunk_id)
        return [self.chunks[cid] for cid in seen]


def _has_facts(chunk: SnapshotChunk, minimum: int = 1) -> bool:
    return sum(1 for s in sentences(chunk.text) if 30 <= len(s) <= 300 and len(content_words(s)) >= 3) >= minimum


def _task(corpus: _Corpus, qtype: QuestionType, chunk: SnapshotChunk, count: int, seed: int) -> GenerationTask | None:
    chunks: tuple[SnapshotChunk, ...] = (chunk,)
    extras: dict[str, Any] = {}
    if not _has_facts(chunk, 2 if qtype == QuestionType.ABSTRACTIVE else 1):
        return None
    if qtype == QuestionType.COMPARATIVE:
        others = [c for c in corpus.by_name[PurePosixPath(chunk.path).stem]
                  if c.path != chunk.path and c.doc_version != chunk.doc_version]
        partner = corpus.best_partner(chunk, others)
        if partner is None or not _has_facts(partner):
            return None
        chunks = tuple(sorted((chunk, partner), key=lambda c: (c.doc_version or "", c.path)))
    elif qtype == QuestionType.MULTI_HOP:
        partner = corpus.best_partner(chunk, [c for c in corpus.related(chunk)
                                              if c.path != chunk.path and c.doc_version == chunk.doc_version])
        if partner is None or not _has_facts(partner):
            return None
        chunks = (chunk, partner)
    elif qtype == QuestionType.TERMINOLOGY:
        offered = {word: next((alt for alt in alternatives if corpus.absent(alt)), None)
                   for word, alternatives in SYNONYMS.items() if word in corpus.words[chunk.chunk_id]}
        extras["synonyms"] = {word: alt for word, alt in sorted(offered.items()) if alt}
        if not extras["synonyms"]:
            return None
    elif qtype == QuestionType.ADVERSARIAL:
        topics = [t for t in ABSENT_TOPICS if corpus.absent(t)]
        if not topics:
            return None
        extras["absent_topic"] = topics[int(sha256_hex(f"{seed}:{chunk.chunk_id}"), 16) % len(topics)]
    task_id = sha256_hex(f"{qtype.value}\0{seed}\0" + "\0".join(c.chunk_id for c in chunks))[:16]
    return GenerationTask(task_id, qtype.value, chunks, count, extras)


def plan_tasks(chunks: Sequence[SnapshotChunk], covered: set[str], config: GenerationConfig) -> list[GenerationTask]:
    """Tasks for this run, in a stable order; chunks already covered are not used as sources."""
    corpus = _Corpus(chunks)
    order = sorted((c for c in chunks if c.chunk_id not in covered),
                   key=lambda c: sha256_hex(f"{config.seed}:{c.chunk_id}"))
    quotas = allocate(config.max_tasks, config.type_mix)
    used: set[str] = set()
    tasks: list[GenerationTask] = []
    for qtype in PLANNING_ORDER:
        need = quotas.get(qtype.value, 0)
        for chunk in order:
            if need == 0:
                break
            if chunk.chunk_id in used:
                continue
            task = _task(corpus, qtype, chunk, config.per_task, config.seed)
            if task is not None:
                tasks.append(task)
                used.add(chunk.chunk_id)
                need -= 1
    return tasks
