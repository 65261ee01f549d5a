"""The metric reference page (docs/metrics.md), generated from the registry so it cannot drift from the code.

``python -m rag_assets.scoring.metrics.reference docs/metrics.md`` writes it; with ``--check`` first, exits 1
when the file differs from what the registry generates (a test runs that).
"""

from __future__ import annotations

import sys
from pathlib import Path

from rag_assets.scoring.metrics import REGISTRY
from rag_assets.scoring.metrics.registry import PROFILES, Metric, Registry

HEADER = """# Metrics

Every metric an evaluation computes, with what it measures, the items it scores, its minimum in each threshold
profile (empty: not gated by that profile) and the drop the regression gate and the A/B comparison allow before
they test significance. Metrics named `@k` take the evaluation's k (5 by default; a profile's `@k` minimum applies
at the evaluation's k). Each metric is one module of `rag_assets/scoring/metrics/`; this page is generated from them by
`python -m rag_assets.scoring.metrics.reference docs/metrics.md`: edit the metric, not this page. How to read
the figures: [reading the evaluation](evaluation.md); the judge behind the judge metrics: [the judge](judge.md).

An item your RAG system failed on (it raised, timed out, or gave no valid answer) has no answer and retrieved
nothing. It is not judged, and counts at the worst value of every metric that would have scored it, never left
out of a mean: 0 for every retrieval metric on an item with evidence (diversity included), for faithfulness (an
error is not a decline, whose faithfulness is 1), answer relevance, context precision, context recall (on an item
with reference statements) and decline accuracy (an adversarial question is not declined by an error). Citation
accuracy and temporal faithfulness stay undefined for it, as for any answer that cites nothing or rests on no chunk.
So raising on the items a system would miss lowers its figures as missing them does; the RAG error budget is a
separate gate.

"""
ITEMS = {"every": "every item", "answerable": "answerable items (not adversarial)",
         "adversarial": "adversarial items"}


def _name(metric: Metric) -> str:
    return f"{metric.name}@k" if metric.at_k else metric.name


def _row(metric: Metric) -> str:
    minimums = [f"{metric.thresholds[p]:.2f}" if p in metric.thresholds else "" for p in PROFILES]
    cells = [f"[`{_name(metric)}`](#{metric.name})", metric.kind, *minimums, f"{metric.allowed_drop:.2f}"]
    return f"| {' | '.join(cells)} |\n"


def _section(metric: Metric) -> str:
    facts = [f"kind: {metric.kind}", f"scores: {ITEMS[metric.items]}"]
    if metric.task is not None:
        facts.append(f"judge task: `{metric.task.name}` (template `{metric.task.template.ref}`)")
    if metric.only_where_data:
        facts.append("gated only where some item has a value")
    if metric.reason is not None:
        facts.append("reviewed by your experts in the judge review")
    if metric.production_drift:
        facts.append(f"scored on production traffic; a drop there likely means: {metric.production_drift[0]}")
    if metric.when_low:
        facts.append(f"when low, the diagnosis says: {metric.when_low}")
    return (f"## {metric.name}\n\n**{metric.label}** (`{_name(metric)}`). {metric.definition}\n\n"
            + "".join(f"- {fact}\n" for fact in facts) + "\n")


def page(registry: Registry = REGISTRY) -> str:
    table = (f"| metric | kind | {' | '.join(PROFILES)} | allowed drop |\n"
             f"|---|---|{'---|' * len(PROFILES)}---|\n")
    return HEADER + table + "".join(_row(m) for m in registry) + "\n" + "".join(_section(m) for m in registry)


def main(argv: list[str]) -> int:
    """``PATH`` writes the page there; ``--check PATH`` exits 1 when the file there is not the generated page."""
    if len(argv) == 2 and argv[0] == "--check":
        path = Path(argv[1])
        return 0 if path.is_file() and path.read_text(encoding="utf-8") == page() else 1
    if len(argv) != 1:
        print("usage: python -m rag_assets.scoring.metrics.reference [--check] docs/metrics.md", file=sys.stderr)
        return 2
    Path(argv[0]).write_text(page(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
