"""A Claude-like responder for every prompt of the project, served by the fake Messages API.

It reads each request's forced tool and prompt and answers in the tool's schema with content taken
from the prompt (chunk ids, statements), as a model would. ``BROKEN`` names tools to answer with a
schema-invalid input, to test the judge's failure handling.
"""

from __future__ import annotations

import re

from tests.fakes.anthropic_server import Reply, schema_filler
from tests.fakes.claude_generation import generation_responder

BROKEN: set[str] = set()
#: a chunk's id where a prompt lists it (judge and RAG prompts: "[id] (version ...)"; generation: "[id] document: ...")
_CHUNK = re.compile(r"^\[([^\]\n]+)\] (?:\(version |document: )", re.MULTILINE)


def _prompt(body: dict) -> str:
    """The system blocks (the judge's item context is one) and the first user turn, as one text."""
    system = body.get("system") or ""
    return "\n\n".join([system if isinstance(system, str) else "\n\n".join(b["text"] for b in system), _user(body)])


def _user(body: dict) -> str:
    """The first user turn: where a call's own inputs are (the instructions may number their steps too)."""
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else str(content)


def judge_responder(body: dict) -> Reply:
    tool = body["tool_choice"]["name"]
    prompt = _prompt(body)
    chunks = _CHUNK.findall(prompt)
    if tool in BROKEN:
        return Reply(tool_input={"unexpected": True})
    if tool == "record_generate_questions":
        return generation_responder(body)
    if tool == "record_rag_answer":
        first = chunks[0] if chunks else None
        return Reply(tool_input={"answer": f"The documentation says so [{first}]." if first else "I cannot answer.",
                                 "citations": [{"claim": "The documentation says so.", "chunk_id": first}] if first else [],
                                 "declined": first is None})
    if tool == "record_judge_faithfulness":
        return Reply(tool_input={"claims": [{"claim": "The documentation says so.", "verdict": "grounded",
                                             "supporting_chunk_ids": chunks[:1]}]})
    if tool == "record_judge_answer_relevance":
        question = re.search(r"^Question: (.+)$", prompt, flags=re.MULTILINE).group(1)
        answer = prompt.split("Answer:\n", 1)[1]
        return Reply(tool_input={"question_parts": [{"part": question, "answered": 1.0}],
                                 "statements": [{"statement": answer, "addresses_question": True},
                                                {"statement": "An aside.", "addresses_question": False}],
                                 "noncommittal": False,
                                 "questions": ["What does it say?", "What is stated?", "What is documented?"]})
    if tool == "record_judge_context_precision":
        return Reply(tool_input={"verdicts": [{"chunk_id": c, "useful": i == 0} for i, c in enumerate(chunks)]})
    if tool == "record_extract_reference_statements":
        reference = prompt.split("Reference answer:\n", 1)[-1]
        return Reply(tool_input={"statements": [s.strip() for s in reference.split(".") if s.strip()][:3] or [reference]})
    if tool == "record_judge_context_recall":
        statements = re.findall(r"^\d+\. (.+)$", _user(body), flags=re.MULTILINE)
        return Reply(tool_input={"statements": [{"statement": s, "attributed": True, "chunk_id": chunks[0] if chunks else None}
                                                for s in statements]})
    return schema_filler(body)
