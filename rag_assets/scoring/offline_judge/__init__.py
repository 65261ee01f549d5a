"""The offline judge: deterministic heuristics answering the judge templates without a model.

One module per metric, on shared readers of text:

- ``text``: normalisation, content words, quantities, identifiers, names, sentences;
- ``chunks``: a retrieved chunk read as units (sentences, lines, table cells) and clauses;
- ``claims``: what an answer's sentence states, and the sentences that state nothing;
- ``support``: whether a chunk supports a claim (shared by the three metrics below that read chunks);
- ``faithfulness``: a verdict per claim of the answer;
- ``question``: what a question asks: its parts, focus words and expected answer types;
- ``answer_relevance``: how fully the answer answers each part, which statements address the question;
- ``context_precision``: which retrieved chunks help to arrive at the reference answer;
- ``context_recall``: the reference answer's statements and the chunk each is attributed to.

Everything is deterministic (no set iteration order reaches an output), with no network and no model.
"""

from rag_assets.scoring.offline_judge.answer_relevance import answer_relevance
from rag_assets.scoring.offline_judge.context_precision import context_precision
from rag_assets.scoring.offline_judge.context_recall import context_recall, reference_statements
from rag_assets.scoring.offline_judge.faithfulness import faithfulness

__all__ = ["answer_relevance", "context_precision", "context_recall", "faithfulness", "reference_statements"]
