"""The suites' answer in words, shared by every report: each leads with it.

A suite of one case says nothing its case does not, so reports show the suites that hold two
cases or more (the JSON lists every suite). A large set lists only the cases that need a look:
:func:`listed_cases` chooses them, the same in every report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assay.judge import (
    SUITE_RULE,
    AnalysisResult,
    Decision,
    SuiteBehaviour,
    SuiteEstimate,
    SuiteResult,
    TestResult,
    Verdict,
    describe_shift,
    pct,
)
from assay.report import _text as tx

CASES_IN_FULL = 12
"""Up to this many cases, every report lists every case with its details, as it always has."""
CASES_LISTED = 20
"""Above :data:`CASES_IN_FULL`, the most cases a report lists (``--all-cases``: every one)."""


def shown_suites(result: AnalysisResult) -> list[SuiteResult]:
    """The suites a report leads with: those of two cases or more in either version.

    A suite the current version ran no case of is shown: its cases are missing.
    """
    return [
        s
        for s in result.suites
        if s.cases >= 2 or (s.comparison is not None and s.comparison.baseline_cases >= 2)
    ]


def suite_name(suite: SuiteResult) -> str:
    """``support``; ``all cases`` for the set's own suite."""
    return "all cases" if suite.suite is None else suite.suite


def _estimate(estimate: SuiteEstimate | None, percent: bool, cases: int) -> str | None:
    if estimate is None or estimate.value is None:
        return None
    show = pct if percent else tx.num
    text = show(estimate.value)
    if estimate.interval is not None:
        text += f" [{show(estimate.interval.low)}, {show(estimate.interval.high)}]"
    if estimate.cases != cases:  # pass@k over the cases with k trials, a score some record
        text += f" ({estimate.cases} of {cases} cases)"
    return text


def figure_lines(suite: SuiteResult) -> list[str]:
    """The suite's other figures: pass@k / pass^k over cases and the main score, with intervals."""
    lines = []
    for symbol, ks in (("pass@", suite.pass_at_k), ("pass^", suite.pass_hat_k)):
        parts = [
            f"{symbol}{k} {text}"
            for k, estimate in (ks or {}).items()
            # pass^1 is pass@1: said once.
            if not (symbol == "pass^" and k == "1")
            and (text := _estimate(estimate, percent=True, cases=suite.cases)) is not None
        ]
        if parts:
            lines.append(" · ".join(parts))
    score = _estimate(suite.score, percent=False, cases=suite.cases)
    if score is not None and suite.score_name is not None:
        lines.append(f"score {suite.score_name}: mean over cases {score}")
    return lines


def comparison_lines(suite: SuiteResult) -> list[str]:
    """The paired comparison against the baseline: its reason, the other figures, what moved."""
    comparison = suite.comparison
    if comparison is None:
        return []
    lines = [f"against the baseline: {comparison.verdict.value} — {comparison.reason}"]
    shifts = []
    # Durations are in the JSON (``duration_s``): wall-clock noise, not a line of the report.
    for label, figure, unit in (
        ("score", comparison.score, ""),
        ("cost/trial", comparison.cost_usd, " USD"),
    ):
        if figure is None or figure.difference is None:
            continue
        text = f"{label} {tx.num(figure.difference)}{unit}"
        if figure.interval is not None:
            text += f" [{tx.num(figure.interval.low)}, {tx.num(figure.interval.high)}]"
        shifts.append(text)
    if shifts:
        lines.append("mean paired change: " + " · ".join(shifts))
    lines += behaviour_lines(comparison.behaviour)
    if comparison.moved:
        moved = ", ".join(
            f"{case} {100 * d:+.0f} points".replace(" -", " −") for case, d in comparison.moved[:5]
        )
        lines.append(f"moved most: {moved}")
    return lines


CHANGES_SHOWN = 4
"""The most changed features the behaviour line names (the JSON holds every one)."""


def behaviour_lines(behaviour: SuiteBehaviour | None) -> list[str]:
    """``behaviour across 2000 cases: CHANGED — uses:search +6.0 points [...] (p ... adj.)``.

    The changed features (at most :data:`CHANGES_SHOWN`) and the count of the others, then the
    verdict's reason, and what was left out.
    """
    if behaviour is None:
        return []
    head = f"behaviour across {behaviour.cases} cases: {behaviour.verdict.value}"
    changed = [f for f in behaviour.features if f.changed]
    if changed:
        shown = ", ".join(describe_shift(f) for f in changed[:CHANGES_SHOWN])
        if len(changed) > CHANGES_SHOWN:
            shown += f", … {len(changed) - CHANGES_SHOWN} more changed"
        others = len(behaviour.features) - len(changed)
        lines = [f"{head} — {shown}; {others} feature(s) unchanged", behaviour.reason]
    else:
        lines = [f"{head} — {behaviour.reason}"]
    return lines + list(behaviour.fail_on) + list(behaviour.left_out)


@dataclass(frozen=True, slots=True)
class CaseListing:
    """The cases a report lists, and what it leaves unlisted."""

    listed: tuple[TestResult, ...]
    """The cases to list, in the report's order."""
    unlisted: int
    """Cases not listed."""
    unlisted_counts: dict[str, int]
    """Verdict → cases not listed."""
    in_full: bool
    """Every case is listed with its details (a small set, or ``--all-cases``)."""

    def more_text(self) -> str | None:
        """``… 280 more cases not listed (81 FAIL, 199 INCONCLUSIVE): --all-cases lists them``."""
        if not self.unlisted:
            return None
        counts = ", ".join(f"{n} {v}" for v, n in self.unlisted_counts.items() if n)
        return f"… {self.unlisted} more case(s) not listed ({counts}): --all-cases lists every one"


def listed_cases(result: AnalysisResult, *, all_cases: bool = False) -> CaseListing:
    """The cases a report lists: every one for a small set; else FAILs and what moved most.

    Above :data:`CASES_IN_FULL` cases, the listing holds the cases whose pass rate moved most
    against the baseline, then the FAILs (worst first), then the other non-PASS cases, at most
    :data:`CASES_LISTED`; the rest are counted by verdict.
    """
    ordered = tx.by_severity(result.tests)
    if all_cases or len(ordered) <= CASES_IN_FULL:
        return CaseListing(tuple(ordered), 0, {}, True)
    by_id = {t.test_id: t for t in ordered}
    chosen: dict[str, TestResult] = {}
    for suite in result.suites:
        if suite.comparison is not None:
            for case, _ in suite.comparison.moved[:5]:
                if case in by_id:
                    chosen.setdefault(case, by_id[case])
    for verdict in (Verdict.FAIL, Verdict.INCONCLUSIVE):
        for test in ordered:
            if len(chosen) >= CASES_LISTED:
                break
            if test.verdict is verdict:
                chosen.setdefault(test.test_id, test)
    listed = tuple(t for t in ordered if t.test_id in chosen)
    rest: dict[str, int] = {v.value: 0 for v in Verdict}
    for test in ordered:
        if test.test_id not in chosen:
            rest[test.verdict.value] += 1
    return CaseListing(listed, len(ordered) - len(listed), rest, False)


def decision_headline(result: AnalysisResult) -> str | None:
    """``PASS — decided by the suite comparison against the baseline (support); ...``.

    The answer to the question asked, first in every report, when a suite comparison with a
    baseline decides the exit code (docs/cli.md); None when every case's verdict does (the
    reports then lead as they always have).
    """
    decision = result.decision
    if decision.rule != SUITE_RULE:
        return None
    return f"{decision.verdict.value} — decided by {decision.decided_by}"


def decision_notes(decision: Decision) -> list[str]:
    """What the decision leaves out and what per-case tests can detect, one line each."""
    return [line for line in (decision.not_counted, decision.case_tests) if line]


def threshold_counts(result: AnalysisResult) -> bool:
    """Whether the per-case threshold verdicts count in the exit code."""
    return any(c.kind in ("case", "case threshold") for c in result.decision.counted)


def threshold_label(suite: SuiteResult) -> str:
    """``suite support against the threshold 80.0%``, and ``(reported, not counted)``.

    The mark is added when a suite comparison decides and no suite threshold was asked for.
    """
    label = f"suite {suite_name(suite)} against the threshold {pct(suite.threshold)}"
    if suite.comparison is not None and not suite.counts:
        label += " (reported, not counted)"
    return label


def _difference(suite: SuiteResult) -> str:
    comparison = suite.comparison
    if comparison is None or comparison.difference is None:
        return ""
    text = f", mean difference {100 * comparison.difference:+.1f} points".replace("-", "−")
    if comparison.interval is not None:
        low, high = (100 * comparison.interval.low, 100 * comparison.interval.high)
        text += f" [{low:+.1f}, {high:+.1f}]".replace("-", "−")
    return text + f" over {comparison.paired_cases} paired cases"


def summary_lines(suites: Sequence[SuiteResult]) -> list[str]:
    """One line per suite for a summary: the comparison first, then the threshold verdict."""
    out = []
    for suite in suites:
        interval = suite.interval
        shown = f" [{pct(interval.low)}, {pct(interval.high)}]" if interval else ""
        if suite.comparison is not None:
            out.append(
                f"suite {suite_name(suite)} against the baseline: "
                f"{suite.comparison.verdict.value}{_difference(suite)}"
            )
            out.append(
                f"{threshold_label(suite)}: {suite.verdict.value}, {pct(suite.pass_rate)}{shown}"
                f" over {suite.cases} cases"
            )
            continue
        out.append(
            f"suite {suite_name(suite)}: {suite.verdict.value}, {pct(suite.pass_rate)}{shown} "
            f"over {suite.cases} cases"
        )
    return out
