"""Offline questions people can read (issue 29), on the bundled corpus and on public documentation.

Public corpora: the Anthropic docs sample kept in tests/fixtures/anthropic_docs_sample (MIT; pages
extracted from HTML, with JSON and code run into the prose: where "...say about rolecontentuserextract
name size?" came from), written as one Markdown file per chunk as ``rag-assets`` imports it; and eight
Markdown pages of Microsoft's C++ docs (CC BY 4.0; front matter, code fences, JSON, tables, DocFX
directives) read from ../shared/data, skipped where that folder is absent. A small hand-written
Markdown page holds every hostile shape at once, so each checkout tests them.

Every question must open with a question word or an auxiliary, end with "?", never repeat a word
twice in a row, and use no word the corpus does not use as a word. A corpus word is a word as written
with at most one lower-to-upper hump ("TypeScript"), or a part of a word with more ("RoleContentUser"
gives role, content and user), so glued words fail whichever case they are written in.
"""

from __future__ import annotations

import json
import re
import tarfile
from collections import Counter
from pathlib import Path

import pytest

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.generation.generate import run_generation
from rag_assets.generation.models import GenerationConfig
from rag_assets.generation.offline import offline_questions
from rag_assets.generation.planning import ABSENT_TOPICS, SYNONYMS, GenerationTask, plan_tasks
from rag_assets.golden.importers import json_chunks_to_corpus
from rag_assets.llm.offline import OfflineClient
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine
from tests.conftest import PROJECT_ROOT, SAMPLE_CORPUS, SHARED_DATA

ANTHROPIC_SAMPLE = PROJECT_ROOT / "tests" / "fixtures" / "anthropic_docs_sample" / "sample.json"
CPP_DOCS = SHARED_DATA / "cpp_docs.tar.gz"
CPP_PAGES = tuple(f"cpp_docs/docs/{page}.md" for page in (
    "build/tasks-vs-json-schema-reference-cpp", "build/customize-cmake-settings", "build/linking-an-executable-to-a-dll",
    "build/ieee-floating-point-representation", "build/exporting-from-a-dll-using-def-files",
    "build/compare-inclusion-methods", "error-messages/compiler-errors-1/compiler-error-c2001",
    "c-runtime-library/reference/strcpy-wcscpy-mbscpy",
))
HOSTILE_PAGE = """---
title: Webhook delivery
version: "3.1"
---
# Webhook delivery

Webhooks are sent as HTTP POST requests to the URL you register. Each delivery is retried up to 5 times.

RoleContentUserExtract the name, size, price, and color from this product description.

{"role": "user", "content": "Extract the name, size and price"}

See [the delivery log](https://example.com/docs/logs) and https://example.com/status for outages.

ShellPythonTypeScript

## Payload format

```json
{"event": "file.created", "payload": {"id": 42, "size_bytes": 1024}}
```

| Field | Type | Notes |
|-------|------|-------|
| event | string | The event name, such as file.created. |

The payload is a JSON object with an event name and the changed object.

To verify a delivery, compare the signature header with an HMAC of the body.

## Retries

If the receiver answers with an error, the delivery is retried after 30 seconds. Deliveries are kept for 14 days.
The `retry_policy` field is set with <code>client.webhooks.update(id, retry_policy="none")</code>.
"""
OPENERS = {"What", "Which", "Who", "Whom", "Whose", "When", "Where", "Why", "How", "Is", "Are", "Was", "Were", "Does",
           "Do", "Did", "Can", "Could", "Should", "Must", "Will", "Would", "May", "Has", "Have"}
TEMPLATE_WORDS = {"what", "does", "do", "the", "section", "page", "explain", "say", "about", "can", "you", "summarize",
                  "how", "differ", "between", "version", "and", "each", "compare", "on", "in", "many", "happens",
                  "should", "if", "when"}
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’._-][A-Za-z0-9]+)*")
_HUMP = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _anthropic_corpus(folder: Path) -> Path:
    pages = json.loads(ANTHROPIC_SAMPLE.read_text(encoding="utf-8"))["pages"]
    chunks = folder / "chunks.json"
    folder.mkdir()
    chunks.write_text(json.dumps([chunk for page in pages for chunk in page["chunks"]]), encoding="utf-8")
    json_chunks_to_corpus(chunks, folder / "corpus")
    return folder / "corpus"


def _cpp_corpus(folder: Path) -> Path:
    if not CPP_DOCS.is_file():
        pytest.skip(f"the C++ docs corpus is not here ({CPP_DOCS}); see ../shared/data/README.md")
    with tarfile.open(CPP_DOCS) as archive:
        archive.extractall(folder, members=[archive.getmember(name) for name in CPP_PAGES], filter="data")
    return folder / "cpp_docs"


def _hostile_corpus(folder: Path) -> Path:
    (folder / "v3").mkdir(parents=True)
    (folder / "v3" / "webhooks.md").write_text(HOSTILE_PAGE, encoding="utf-8")
    return folder


CORPORA = {"bundled": lambda folder: SAMPLE_CORPUS, "anthropic_docs": _anthropic_corpus, "cpp_docs": _cpp_corpus,
           "hostile": _hostile_corpus}


def _generate(corpus: Path, db: Path):
    """Every chunk asked up to three questions (tasks for all of them, not a run's sample of 60)."""
    repo = SqlCorpusRepository(get_engine(f"sqlite:///{db}"))
    version = snapshot_corpus(corpus, ChunkerConfig(), repo).version_id
    chunks = repo.snapshot_chunks(version)
    tasks = plan_tasks(chunks, set(), GenerationConfig(per_task=3, max_tasks=len(chunks)))
    return chunks, run_generation(tasks, OfflineClient(), None, version).candidates


def _vocabulary(texts: list[str]) -> set[str]:
    found = [w for text in texts for w in _WORD.findall(text)]
    return ({part.lower() for w in found for part in _HUMP.split(w)}
            | {w.lower() for w in found if len(_HUMP.findall(w)) <= 1})


def unreadable(question: str, question_type: str, vocabulary: set[str]) -> str | None:
    """Why a question is not readable, or None."""
    said = _WORD.findall(question)
    lowered = [w.lower() for w in said]
    allowed = vocabulary | TEMPLATE_WORDS | {w.lower() for w in OPENERS}
    if question_type == "terminology":
        allowed |= {w for alternatives in SYNONYMS.values() for alt in alternatives for w in alt.lower().split()}
    if question_type == "adversarial":
        allowed |= {w for topic in ABSENT_TOPICS for w in topic.lower().split()}
    if question.split(" ", 1)[0] not in OPENERS:
        return "does not open with a question word or an auxiliary"
    if not question.endswith("?"):
        return 'does not end with "?"'
    if any(a == b for a, b in zip(lowered, lowered[1:])):
        return "repeats a word"
    absent = [w for w in said if w.lower() not in allowed]
    return f"uses words the corpus does not: {absent}" if absent else None


@pytest.mark.parametrize("name", CORPORA)
def test_every_offline_question_is_readable(tmp_path: Path, name: str):
    chunks, candidates = _generate(CORPORA[name](tmp_path / "corpus"), tmp_path / "store.db")
    vocabulary = _vocabulary([f"{c.title}\n{c.doc_version}\n{c.heading}\n{c.text}" for c in chunks])
    failures = [(c.question, why) for c in candidates if (why := unreadable(c.question, c.question_type, vocabulary))]
    assert not failures, failures
    assert len(candidates) >= (3 if name == "hostile" else 30), Counter(c.question_type for c in candidates)


def test_the_glued_words_of_issue_29_fail_the_rule():
    vocabulary = _vocabulary(["RoleContentUserExtract the name, size, price. Built with TypeScript."])
    assert unreadable("What does the page say about rolecontentuserextract name size?", "factual", vocabulary)
    assert unreadable("What are RoleContentUserExtract?", "factual", vocabulary)
    assert unreadable("What is the the name?", "factual", vocabulary) == "repeats a word"
    assert unreadable("Is the page built with TypeScript?", "factual", vocabulary) is None


def test_code_json_tables_and_links_give_neither_questions_nor_answers(tmp_path: Path):
    """Every factual question each chunk of the hostile page gives, and its answer."""
    chunks, _ = _generate(_hostile_corpus(tmp_path / "corpus"), tmp_path / "store.db")
    asked = [q for c in chunks for q in offline_questions(GenerationTask(c.chunk_id, "factual", (c,), 10).inputs())["questions"]]
    said = "\n".join(f"{q['question']}\n{q['answer']}" for q in asked)
    for remnant in ("RoleContent", "role", "{", "}", "|", "http", "](", "retry_policy", "ShellPython", "client."):
        assert remnant not in said, remnant
    assert {q["question"] for q in asked} >= {
        "How many times is each delivery retried in version 3.1?",
        "What happens if the receiver answers with an error in version 3.1?",
        "How many days are deliveries kept in version 3.1?",
        "What is the payload in version 3.1?",
        "How do you verify a delivery in version 3.1?",
    }
