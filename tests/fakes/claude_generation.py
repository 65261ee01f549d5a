"""A Claude-like responder for the generation prompt, served by the fake Messages API."""

from __future__ import annotations

import re

from tests.fakes.anthropic_server import Reply

API_KEY = "sk-ant-test-" + "K3yV4lu3" * 4


def generation_responder(body: dict) -> Reply:
    """Answers the generate_questions tool from the prompt's own chunk ids, as a model would."""
    prompt = body["messages"][0]["content"]
    qtype = re.search(r"Question type: (\w+)", prompt).group(1)
    ids = re.findall(r"^\[([0-9a-f]{16})\]", prompt, flags=re.MULTILINE)
    relevant = [] if qtype == "adversarial" else ids
    return Reply(tool_input={"questions": [{
        "question": f"Model-written {qtype} question about {' and '.join(ids)}?",
        "answer": "An answer drawn from the chunks.",
        "relevant_chunk_ids": relevant,
    }]}, input_tokens=1000, output_tokens=100)
