"""ragas 0.4.3's bill on the items bench/cost.py judged: calls, input and output tokens per item, counted at
the fake Messages API.

    ../venv-ragas/bin/python bench/ragas_bill.py bench/results/cost/bundled.jsonl [--model claude-sonnet-5-5]

ragas is not a project dependency: this script runs in a venv of its own, with ragas 0.4.3, the
instructor it uses for structured output and the anthropic SDK 0.125 (the last before 1.0 dropped the
``temperature`` and ``top_p`` arguments that ragas 0.4.3 passes to ``messages.create``):

    python3 -m venv ../venv-ragas
    ../venv-ragas/bin/pip install ragas==0.4.3 instructor==1.14.5 anthropic==0.125.0 langchain-community==0.4.1

(langchain-community 0.4.2 lacks the ``chat_models.vertexai`` module ragas 0.4.3 imports.) The project is
not installed there: the fake server, its responder and the hashing embedder are imported from the source
tree (standard library and numpy only).

What runs: ragas's own four metrics of the judge's metric set, from ``ragas.metrics.collections`` (the
0.4 API), with an LLM from ``llm_factory(model, provider="anthropic", client=AsyncAnthropic(base_url=fake))``:
Faithfulness (statements, then one NLI call), AnswerRelevancy (strictness 3: three question-generation
calls; embeddings below), ContextPrecision (with reference: one call per retrieved context) and
ContextRecall (one call), on every item of the file: ragas has no notion of an adversarial item, so it
runs all four on every item where our judge skips the two context ones on adversarial items.

The fake server (the one bench/cost.py judges through, with the same responder) answers every ragas
request, a forced tool call, with an input that fills the tool's schema; it counts what it bills. Its
answers are minimal (one statement, "example" reasons), so ragas's output tokens, and the NLI and recall
prompts that carry earlier answers, are a lower bound of a model's: ragas's real bill is higher, and the
ratio bench/cost.py prints against it is on the side that flatters ragas. Tokens are the fake's estimate
(4 characters a token), as for our judge.

Answer relevancy's embeddings are local and deterministic (the project's hashing embedder behind ragas's
``BaseRagasEmbedding``): no network and no model download. ragas's usage analytics are switched off
(``RAGAS_DO_NOT_TRACK``) before it is imported. Prints the figures per item and, last, one JSON line, which
it also writes beside the items (``<name>.ragas.json``, see bench/ragas_items.py) for bench/cost.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ["RAGAS_DO_NOT_TRACK"] = "true"

API_KEY = "fake-key-for-the-local-fake-server"
METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")


def _metrics(llm):
    """ragas 0.4.3's four metrics, each with what it scores an item from."""
    from ragas.embeddings.base import BaseRagasEmbedding
    from ragas.metrics.collections import AnswerRelevancy, ContextPrecision, ContextRecall, Faithfulness

    from rag_assets.scoring.embedding import HashingEmbedder

    class LocalEmbedding(BaseRagasEmbedding):
        """The project's hashing embedder (deterministic, local) behind ragas's embedding interface."""

        def __init__(self) -> None:
            super().__init__()
            self._embedder = HashingEmbedder()

        def embed_text(self, text: str, **kwargs) -> list[float]:
            return self._embedder.embed([text])[0].tolist()

        async def aembed_text(self, text: str, **kwargs) -> list[float]:
            return self.embed_text(text)

    return {
        "faithfulness": (Faithfulness(llm=llm), ("user_input", "response", "retrieved_contexts")),
        "answer_relevancy": (AnswerRelevancy(llm=llm, embeddings=LocalEmbedding()), ("user_input", "response")),
        "context_precision": (ContextPrecision(llm=llm), ("user_input", "reference", "retrieved_contexts")),
        "context_recall": (ContextRecall(llm=llm), ("user_input", "retrieved_contexts", "reference")),
    }


async def _score_all(rows: list[dict], base_url: str, model: str, concurrency: int) -> Counter:
    """Every metric on every row, ``concurrency`` (row, metric) scorings at a time; the errors per metric."""
    from anthropic import AsyncAnthropic
    from ragas.llms import llm_factory

    llm = llm_factory(model, provider="anthropic", client=AsyncAnthropic(api_key=API_KEY, base_url=base_url))
    metrics = _metrics(llm)
    errors: Counter = Counter()
    gate = asyncio.Semaphore(concurrency)

    async def one(row: dict, name: str) -> None:
        metric, fields = metrics[name]
        async with gate:
            try:
                await metric.ascore(**{field: row[field] for field in fields})
            except Exception as exc:  # counted and named: a failed metric still made (and billed) its calls
                errors[f"{name}: {type(exc).__name__}"] += 1

    await asyncio.gather(*(one(row, name) for row in rows for name in METRICS))
    return errors


def measure(items: Path, model: str, concurrency: int) -> dict:
    """Run ragas on every line of ``items`` through a fresh fake server; what that server billed, per item."""
    import ragas
    from ragas_items import file_sha256

    from tests.fakes.anthropic_server import FakeAnthropicServer
    from tests.fakes.claude_judge import judge_responder

    rows = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not rows:
        raise SystemExit(f"{items}: no items")
    with FakeAnthropicServer(judge_responder) as server:
        errors = asyncio.run(_score_all(rows, server.base_url, model, concurrency))
        requests = server.requests
    n = len(rows)
    calls, inputs, outputs = Counter(), Counter(), Counter()
    for request in requests:  # by the prompt's output model, the tool ragas forces
        prompt = (request.body.get("tool_choice") or {}).get("name", "none")
        calls[prompt] += 1
        usage = request.usage or {}
        inputs[prompt] += sum(usage.get(key, 0) for key in
                              ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
        outputs[prompt] += usage.get("output_tokens", 0)
    return {
        "ragas": ragas.__version__, "model": model, "items": n, "items_sha256": file_sha256(items),
        "calls": calls.total() / n, "input": inputs.total() / n, "output": outputs.total() / n,
        "failed_requests": sum(1 for r in requests if r.status != 200),
        "calls_by_prompt": dict(calls),
        "input_by_prompt": {prompt: round(tokens / n, 1) for prompt, tokens in inputs.items()},
        "metric_errors": dict(errors),
        "embeddings": "local hashing embedder (rag_assets.scoring.embedding.HashingEmbedder)",
    }


def main() -> None:
    from ragas_items import bill_path

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("items", type=Path, help="a JSONL file bench/cost.py wrote (bench/results/cost/*.jsonl)")
    parser.add_argument("--model", default="claude-sonnet-5-5")
    parser.add_argument("--concurrency", type=int, default=16, help="(item, metric) scorings at once")
    args = parser.parse_args()
    bill = measure(args.items, args.model, args.concurrency)
    print(f"ragas {bill['ragas']} on {bill['items']} items of {args.items.name}, counted at the fake server: "
          f"{bill['calls']:.2f} calls, {bill['input']:,.0f} input and {bill['output']:,.0f} output tokens per item; "
          f"calls by prompt {bill['calls_by_prompt']}; input tokens per item by prompt {bill['input_by_prompt']}; "
          f"failed requests {bill['failed_requests']}; metric errors {bill['metric_errors'] or 'none'}")
    bill_path(args.items).write_text(json.dumps(bill, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(bill))


if __name__ == "__main__":
    main()
