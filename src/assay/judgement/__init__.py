"""The judgement spine: trials → figures → verdicts → typed results, one pipeline for all.

``assay analyze``, ``assay compare``, ``assay run`` and the pytest plugin judge trials here:

1. :mod:`~assay.judgement._recorded` — the judgement each test's trials record (threshold,
   confidence, error policy, variance limits, sequential design), overridden by options;
2. :mod:`~assay.judgement._figures` — every figure of a test (scores, pass@k, flakiness...);
3. :mod:`~assay.judgement._verdict` — the sequential test replayed, else the interval against
   the threshold, then the variance limits;
4. :mod:`~assay.judgement._regression` — with a baseline, the regression verdict;
5. :mod:`~assay.judgement._pipeline` — all tests of a trials table, suite-wide notes;
6. :mod:`~assay.judgement._api` — :func:`analyze` and :func:`compare` on trace sets.
"""

from assay.judgement._api import Analysis, Paths, analyze, compare, judge_spans
from assay.judgement._options import AnalyzeOptions, ErrorsPolicy, parse_ks
from assay.judgement._pipeline import judge

__all__ = [
    "Analysis",
    "AnalyzeOptions",
    "ErrorsPolicy",
    "Paths",
    "analyze",
    "compare",
    "judge",
    "judge_spans",
    "parse_ks",
]
