"""The offline judge: plain, explainable lexical signals answering the judge templates without a model.

It runs without a key (CI, demos, a first look); it is no substitute for a calibrated model judge. One module
per template, on two shared readers:

- ``text``: stemmed content words (PyStemmer), numbers, names, sentences and statements, decline phrases;
- ``support``: how much of a statement the best single sentence of the retrieved chunks states, with IDF
  weights from those chunks;
- ``faithfulness``: a verdict per statement of the answer;
- ``answer_relevance``: coverage of the question's words per part, the kind of answer asked, declines;
- ``context_precision``: a graded score per chunk (relevance to the question, support of the reference);
- ``context_recall``: the reference's statements and the chunk each is attributed to.

No word list names a corpus or a product, and nothing is fitted: the thresholds are round numbers set
before any measurement (see docs/judge.md for what the judge is measured to do). Deterministic, no network.
"""

from rag_assets.scoring.offline_judge.answer_relevance import answer_relevance
from rag_assets.scoring.offline_judge.context_precision import context_precision
from rag_assets.scoring.offline_judge.context_recall import context_recall, reference_statements
from rag_assets.scoring.offline_judge.faithfulness import faithfulness

__all__ = ["answer_relevance", "context_precision", "context_recall", "faithfulness", "reference_statements"]
