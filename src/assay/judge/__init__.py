"""Where verdicts are decided: trials → figures → verdicts → typed results, one pipeline for all.

``assay analyze``, ``assay compare``, ``assay run`` and the pytest plugin judge trials here.
Each module answers one question:

* :mod:`._options` — what may be asked of an analysis (the options, checked once);
* :mod:`._recorded` — the :class:`Judgement` a test's trials record, overridden by options;
* :mod:`._threshold` — does the interval lie above, below or across the threshold?
* :mod:`._sequential` — adaptive stopping: its design, its loop, its replay, its interval;
* :mod:`._variance` — do the scores meet the variance limits?
* :mod:`._regression` — is the current version worse than the baseline?
* :mod:`._behaviour` (with :mod:`._behaviour_result`, :mod:`._gate`) — what else changed,
  and does a ``--fail-on`` rule make it fail?
* :mod:`._cost` — what the trials cost;
* :mod:`._all_figures` — every other figure of every test at once, the one place each is
  computed (scores, pass@k, flakiness, usage, ...); :mod:`._figures` — their types, and each
  trial's scores; :mod:`._path_table` — the distinct tool paths held as codes, each made a
  tuple of names only when read;
* :mod:`._tool_errors` — the tool calls that failed, and where to look;
* :mod:`._sources` — the runs and agent versions a test's trials come from;
* :mod:`._suite` (with :mod:`._suite_result`) — each suite's answer over its cases, and its
  paired comparison against a baseline;
* :mod:`._judge_error` (with :mod:`._judge_error_result`) — with people's labels, each verdict
  read on the pass rate corrected for the LLM judge's measured error;
* :mod:`._reasons` — the one-line reason beside each verdict;
* :mod:`._results` — the typed results every report renders;
* :mod:`._exit` — what decides the exit code: the suite comparison with a baseline, else every
  case (one rule for every command and report);
* :mod:`._pipeline` — all of it, per test, for a whole trials table; :mod:`._collector` — the
  garbage collector held off meanwhile.
"""

from assay.judge._behaviour import behaviour_diff, behaviour_diffs
from assay.judge._behaviour_result import (
    BehaviourChange,
    BehaviourResult,
    BehaviourVerdict,
    describe_change,
)
from assay.judge._collector import collector_paused
from assay.judge._cost import CostSummary, price_table, prices_label
from assay.judge._exit import CASE_KINDS, CASE_RULE, SUITE_RULE, Counted, Decision, compared_suites
from assay.judge._figures import DurationSummary, Usage
from assay.judge._gate import FailOn, gate_failures, parse_fail_on
from assay.judge._judge_error import (
    agreement_findings,
    agreement_text,
    corrected_suites,
    judge_report,
    with_judge_error,
)
from assay.judge._judge_error_result import (
    JudgeAgreement,
    JudgeError,
    JudgeReport,
    ScoreCorrection,
    SelfAgreement,
)
from assay.judge._options import (
    DEFAULT_CONFIDENCE,
    DEFAULT_THRESHOLD,
    AnalyzeOptions,
    ErrorsPolicy,
    check_choice,
    check_range,
    parse_ks,
)
from assay.judge._pipeline import Judged, by_test, judge, judge_all
from assay.judge._reasons import ci_text, pct, rate_text
from assay.judge._recorded import Judgement, read_judgements
from assay.judge._regression import (
    RegressionResult,
    ScoreRegressionResult,
    adjust_regressions,
    decide_regression,
    regression_test,
    score_regression_test,
)
from assay.judge._results import AnalysisResult, OptionValue, TestResult, exit_code
from assay.judge._sequential import (
    ANYTIME_METHOD,
    SequentialDesign,
    SequentialOutcome,
    SequentialTracker,
    anytime_interval,
    running_interval,
)
from assay.judge._sources import Share, mixed_findings, share_text
from assay.judge._suite import case_table, suite_results
from assay.judge._suite_behaviour import describe_shift
from assay.judge._suite_result import (
    SuiteBehaviour,
    SuiteComparison,
    SuiteEstimate,
    SuiteFeatureShift,
    SuiteResult,
)
from assay.judge._threshold import (
    ThresholdResult,
    Verdict,
    follow_up_trials_needed,
    more_trials_needed,
    settle_probability,
    threshold_test,
    threshold_verdict,
)
from assay.judge._tool_errors import ToolErrors
from assay.judge._variance import VarianceCheck, variance_checks

__all__ = [
    "ANYTIME_METHOD",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_THRESHOLD",
    "AnalysisResult",
    "AnalyzeOptions",
    "BehaviourChange",
    "BehaviourResult",
    "BehaviourVerdict",
    "CostSummary",
    "DurationSummary",
    "ErrorsPolicy",
    "FailOn",
    "Judged",
    "JudgeAgreement",
    "JudgeError",
    "JudgeReport",
    "Judgement",
    "OptionValue",
    "RegressionResult",
    "ScoreCorrection",
    "ScoreRegressionResult",
    "SelfAgreement",
    "Share",
    "SequentialDesign",
    "SequentialOutcome",
    "SequentialTracker",
    "SuiteBehaviour",
    "SuiteComparison",
    "SuiteEstimate",
    "SuiteFeatureShift",
    "describe_shift",
    "SuiteResult",
    "TestResult",
    "ThresholdResult",
    "ToolErrors",
    "Usage",
    "VarianceCheck",
    "Verdict",
    "adjust_regressions",
    "agreement_findings",
    "agreement_text",
    "anytime_interval",
    "behaviour_diff",
    "behaviour_diffs",
    "by_test",
    "case_table",
    "check_choice",
    "mixed_findings",
    "share_text",
    "check_range",
    "collector_paused",
    "corrected_suites",
    "ci_text",
    "decide_regression",
    "describe_change",
    "exit_code",
    "compared_suites",
    "Counted",
    "Decision",
    "CASE_RULE",
    "CASE_KINDS",
    "SUITE_RULE",
    "gate_failures",
    "judge",
    "follow_up_trials_needed",
    "judge_all",
    "judge_report",
    "with_judge_error",
    "more_trials_needed",
    "parse_fail_on",
    "parse_ks",
    "pct",
    "price_table",
    "prices_label",
    "rate_text",
    "read_judgements",
    "regression_test",
    "running_interval",
    "score_regression_test",
    "settle_probability",
    "suite_results",
    "threshold_test",
    "threshold_verdict",
    "variance_checks",
]
