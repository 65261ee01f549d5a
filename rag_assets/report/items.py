"""The report's drill-down: every item on its own expandable row, and filters over them.

Each item is a ``<details>`` element: question, reference, the system's answer with each claim
marked by the judge's verdict and the chunks it was checked against, the retrieved contexts in rank
order with their relevance marks, citations, every metric and every failure. A few lines of inline
script filter the rows by question type, by a metric below its threshold, and by claim verdict;
without script every row is simply shown.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Claim", "Context", "ItemDetail", "items_section", "FILTER_SCRIPT"]

# Below this a metric with no threshold counts as low for the metric filter.
LOW_WITHOUT_THRESHOLD = 0.5


@dataclass(frozen=True)
class Claim:
    text: str
    verdict: str  # grounded | out_of_context | inconsistency | fabrication
    chunk_ids: Sequence[str] = ()


@dataclass(frozen=True)
class Context:
    rank: int
    chunk_id: str
    text: str
    relevant: bool  # a golden label says this chunk answers the question
    useful: bool | None = None  # the judge's context-precision verdict, None when not judged


@dataclass(frozen=True)
class ItemDetail:
    """One item of the evaluation with everything needed to see why it scored as it did."""

    item_id: str
    question_type: str
    question: str
    reference: str
    answer: str | None
    metrics: Mapping[str, float] = field(default_factory=dict)
    claims: Sequence[Claim] = ()
    contexts: Sequence[Context] = ()
    citations: Sequence[tuple[str, str]] = ()  # (sentence, chunk id)
    failures: Mapping[str, str] = field(default_factory=dict)
    rag_error: str | None = None


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value))


def low_metrics(item: ItemDetail, thresholds: Mapping[str, float | None]) -> list[str]:
    """The metrics of ``item`` below their threshold (or below 0.5 where there is none)."""
    low = []
    for name, value in item.metrics.items():
        limit = thresholds.get(name)
        if math.isfinite(value) and value < (LOW_WITHOUT_THRESHOLD if limit is None else limit):
            low.append(name)
    return low


def _claims(item: ItemDetail) -> str:
    if not item.claims:
        return '<p class="muted">No claim was extracted (the answer declines, or the judge failed).</p>'
    rows = "".join(
        f'<li class="claim v-{_e(c.verdict)}" data-verdict="{_e(c.verdict)}"><span class="verdict">{_e(c.verdict)}'
        f"</span> {_e(c.text)} <small>checked against: {_e(', '.join(c.chunk_ids) or 'no supporting chunk')}"
        "</small></li>" for c in item.claims)
    return f'<ul class="claims">{rows}</ul>'


def _mark(flag: bool | None, yes: str, no: str) -> str:
    if flag is None:
        return '<span class="mark none">not judged</span>'
    return f'<span class="mark {"yes" if flag else "no"}">{yes if flag else no}</span>'


def _contexts(item: ItemDetail) -> str:
    if not item.contexts:
        return '<p class="muted">Nothing was retrieved.</p>'
    rows = "".join(
        f'<li class="context"><div><strong>#{c.rank}</strong> <code>{_e(c.chunk_id)}</code> '
        f"{_mark(c.relevant, 'relevant (golden label)', 'not in the golden labels')} "
        f"{_mark(c.useful, 'useful (judge)', 'not useful (judge)')}</div>"
        f'<div class="ctx">{_e(c.text)}</div></li>' for c in sorted(item.contexts, key=lambda c: c.rank))
    return f'<ol class="contexts">{rows}</ol>'


def _metrics(item: ItemDetail, low: Sequence[str]) -> str:
    cells = "".join(f'<li class="{"low" if name in low else ""}"><span>{_e(name)}</span> <b>{value:.3f}</b></li>'
                    for name, value in item.metrics.items())
    failures = "".join(f'<li class="failure"><b>{_e(name)}</b>: {_e(why)}</li>' for name, why in item.failures.items())
    failed = f'<ul class="failures">{failures}</ul>' if failures else ""
    return f'<ul class="item-metrics">{cells}</ul>{failed}'


def _item(item: ItemDetail, thresholds: Mapping[str, float | None]) -> str:
    low = low_metrics(item, thresholds)
    verdicts = sorted({c.verdict for c in item.claims})
    summary = (f'<summary><code>{_e(item.item_id)}</code> <span class="type">{_e(item.question_type)}</span> '
               f'<span class="q">{_e(item.question)}</span>'
               + "".join(f'<span class="tag v-{_e(v)}">{_e(v)}</span>' for v in verdicts if v != "grounded")
               + (f'<span class="tag low">{len(low)} low</span>' if low else "") + "</summary>")
    if item.rag_error:
        body = f'<p class="failure">The RAG system failed on this item: {_e(item.rag_error)}</p>'
    else:
        citations = "".join(f"<li>{_e(sentence)} <code>[{_e(chunk)}]</code></li>" for sentence, chunk in item.citations)
        body = (f'<div class="pair"><div><h4>Reference</h4><p>{_e(item.reference) or "<i>none (adversarial)</i>"}'
                f'</p></div><div><h4>Answer</h4><p>{_e(item.answer)}</p></div></div>'
                f"<h4>Claims</h4>{_claims(item)}"
                f"<h4>Retrieved contexts</h4>{_contexts(item)}"
                f"<h4>Citations</h4>{f'<ul>{citations}</ul>' if citations else '<p class=muted>None.</p>'}")
    body += f"<h4>Metrics</h4>{_metrics(item, low)}"
    return (f'<details class="item" data-type="{_e(item.question_type)}" data-verdicts="{_e(" ".join(verdicts))}" '
            f'data-low="{_e(" ".join(low))}">{summary}{body}</details>')


def _select(name: str, label: str, options: Sequence[tuple[str, str]]) -> str:
    choices = "".join(f'<option value="{_e(v)}">{_e(t)}</option>' for v, t in options)
    return f'<label>{_e(label)} <select data-filter="{name}"><option value="">any</option>{choices}</select></label>'


def items_section(items: Sequence[ItemDetail], metric_names: Sequence[str],
                  thresholds: Mapping[str, float | None]) -> Iterator[str]:
    """The filter bar and one expandable row per item (worst first is the caller's order), in parts: a
    row is about 6,000 characters, so 10,000 items would make one string of 60 million (four bytes a
    character once any of them is outside the Basic Multilingual Plane)."""
    if not items:
        yield '<p class="empty">No data: no item was evaluated.</p>'
        return
    types = sorted({i.question_type for i in items})
    verdicts = sorted({c.verdict for i in items for c in i.claims})
    used = [n for n in metric_names if any(n in i.metrics for i in items)]
    yield ('<div class="filters">'
           + _select("type", "question type", [(t, t) for t in types])
           + _select("low", "metric below threshold", [(n, n) for n in used])
           + _select("verdicts", "claim verdict", [(v, v) for v in verdicts])
           + '<span class="shown"></span></div><div class="items">')
    yield from (_item(i, thresholds) for i in items)
    yield "</div>"


FILTER_SCRIPT = """<script>
(function(){
  var selects = document.querySelectorAll('select[data-filter]');
  function apply(){
    var shown = 0, rows = document.querySelectorAll('details.item');
    rows.forEach(function(row){
      var ok = true;
      selects.forEach(function(s){
        if (!s.value) return;
        var have = (row.dataset[s.dataset.filter] || '').split(' ');
        if (have.indexOf(s.value) < 0) ok = false;
      });
      row.hidden = !ok; if (ok) shown++;
    });
    var note = document.querySelector('.filters .shown');
    if (note) note.textContent = shown + ' of ' + rows.length + ' items shown';
  }
  selects.forEach(function(s){ s.addEventListener('change', apply); });
  apply();
})();
</script>"""
