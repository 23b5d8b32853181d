"""Words and numbers shared by every report, read from a test's typed result.

Every format renders the same figures the same way, so they are spelled here once. Each helper
returns ``None`` (or an empty list) when the result has nothing to say.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

from assay.judge import ANYTIME_METHOD, TestResult, Verdict, share_text
from assay.judge import ci_text as ci_text  # one copy, in assay.judge; read here as tx.ci_text
from assay.judge import pct as pct
from assay.judge import rate_text as judged_rate_text
from assay.report._behaviour import behaviour_lines, cost_text
from assay.report._links import TraceText, trace_link
from assay.stats import Flakiness, ScoreSummary, ToolConsistency

VERDICT_ORDER = {Verdict.FAIL: 0, Verdict.INCONCLUSIVE: 1, Verdict.PASS: 2}
"""Reports list the tests that need attention first."""

VERDICT_MARK = {Verdict.PASS: "✅", Verdict.FAIL: "❌", Verdict.INCONCLUSIVE: "⚠️"}


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def counted(n: int, word: str) -> str:
    """``1 test``, ``2 tests``: a count with its noun (a regular plural)."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def path_label(index: int) -> str:
    """The name of the ``index``-th tool-sequence variant in a report: ``path 1``, ``path 2``.

    Not ``V1``: an agent version is often ``v1``, and the two were read as one.
    """
    return f"path {index + 1}"


def num(value: float | None, digits: int = 3) -> str:
    """A number with up to ``digits`` significant digits; ``—`` when missing."""
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:.{digits}g}"


def by_severity(tests: Iterable[TestResult]) -> list[TestResult]:
    """Tests ordered FAIL, INCONCLUSIVE, PASS, then by test id (a stable order)."""
    return sorted(tests, key=lambda t: (VERDICT_ORDER[t.verdict], t.test_id))


def shown_interval(test: TestResult) -> tuple[float, float] | None:
    """The interval a report draws beside the verdict: the one the verdict was read from.

    After adaptive stopping that is the anytime-valid interval (a fixed-n interval is not valid
    then), else the confidence interval.
    """
    if test.interval is not None:
        return test.interval.low, test.interval.high
    return None


def _anytime(test: TestResult) -> bool:
    return test.interval is not None and test.interval.method == ANYTIME_METHOD


def interval_label(test: TestResult, *, template: str = "[{low}, {high}]") -> str:
    """``[61.0%, 82.9%]``, ``anytime [61.0%, 82.9%]`` after adaptive stopping; ``—`` if none."""
    shown = shown_interval(test)
    if shown is None:
        return "—"
    text = template.format(low=pct(shown[0]), high=pct(shown[1]))
    return f"anytime {text}" if _anytime(test) else text


def interval_header(tests: Sequence[TestResult]) -> str:
    """The heading of the interval column: ``95% CI``, else ``CI`` or ``interval``.

    ``CI`` when the levels differ; ``interval`` when some test shows an anytime-valid one.
    """
    if any(_anytime(t) for t in tests):
        return "interval"
    levels = {t.interval.confidence for t in tests if t.interval is not None}
    return f"{100 * levels.pop():g}% CI" if len(levels) == 1 else "CI"


def rate_text(test: TestResult) -> str:
    """``43.3% (26/60)``; with people's labels ``70.1% corrected; judge 75.5% (1933/2560)``."""
    judged = judged_rate_text(test.passed, test.n)
    if test.judge_error is None:
        return judged
    return f"{pct(test.pass_rate)} corrected; judge {judged}"


def headline(test: TestResult) -> str:
    """``FAIL: pass rate 20.0% (1/5), ...``: the verdict and its reason."""
    return f"{test.verdict.value}: {test.verdict_reason}"


def sequential_text(test: TestResult) -> str | None:
    """What the interval of an adaptive test is, in words; None for a fixed-n interval."""
    interval = test.interval
    if interval is None or not _anytime(test):
        return None
    return (
        f"anytime-valid interval [{pct(interval.low)}, {pct(interval.high)}]: a "
        f"{100 * interval.confidence:g}% confidence sequence, valid however early the test "
        "stopped"
    )


def passk_points(values: Mapping[str, float | None] | None) -> list[tuple[int, float | None]]:
    """``{k: value}`` (k a string) as pairs sorted by k."""
    return sorted((int(k), v) for k, v in (values or {}).items())


def passk_text(values: Mapping[str, float | None] | None, symbol: str) -> str | None:
    """``pass@1 73% · pass@5 99%``; None when absent."""
    points = passk_points(values)
    if not points:
        return None
    return " · ".join(f"{symbol}{k} {pct(value, 0)}" for k, value in points)


def score_text(summary: ScoreSummary) -> str:
    """``mean 71.2 (95% CI 68.1–74.3), p50 70, p90 88, range 45–95``."""
    text = f"mean {num(summary.mean)}"
    shown = score_interval_text(summary)
    if shown is not None:
        text += f" ({'' if summary.note else 'CI '}{shown})"
    elif summary.std is not None:
        text += f" ± {num(summary.std)} sd"
    parts = [text, f"p50 {num(summary.p50)}", f"p90 {num(summary.p90)}"]
    parts.append(f"range {num(summary.min)}–{num(summary.max)}")
    return ", ".join(parts)


def score_interval_text(summary: ScoreSummary) -> str | None:
    """``68.1–74.3``, ``0.41–1 cut to its assumed range 0–1`` or ``all tied: no interval``."""
    if summary.ci_low is not None and summary.ci_high is not None:
        text = f"{num(summary.ci_low)}–{num(summary.ci_high)}"
        if summary.clipped and summary.range_low is not None and summary.range_high is not None:
            span = f"{num(summary.range_low)}–{num(summary.range_high)}"
            text += f" cut to its {summary.range_source} range {span}"
        return text
    if summary.note is not None:
        return "all tied: no interval"
    return None


def tool_consistency_text(value: ToolConsistency | None) -> str | None:
    """Tool-choice consistency in words; None when absent."""
    if value is None:
        return None
    parts = []
    if _finite(value.agreement):
        parts.append(f"{pct(value.agreement, 0)} of trial pairs took the same path")
    parts.append(f"{value.distinct} distinct sequence{'s' if value.distinct != 1 else ''}")
    if _finite(value.mean_similarity):
        parts.append(f"mean similarity {num(value.mean_similarity, 2)}")
    if value.most_common:
        sequence, count = value.most_common[0]
        parts.append(f"most common: {sequence_text(sequence)} ({count}×)")
    return "; ".join(parts)


def sequence_text(sequence: Sequence[str]) -> str:
    """``lookup → search ×3 → rebook``: repeated neighbours folded into a count."""
    if not sequence:
        return "(no tool calls)"
    parts: list[str] = []
    previous, run = sequence[0], 1
    for name in [*sequence[1:], None]:
        if name == previous:
            run += 1
            continue
        parts.append(previous if run == 1 else f"{previous} ×{run}")
        if name is not None:
            previous, run = name, 1
    return " → ".join(parts)


def flakiness_headline(value: Flakiness | None) -> str | None:
    """``0.41 (moderate variance)``; None when absent."""
    if value is None:
        return None
    category = value.category.replace("_", " ")
    return f"{num(value.score, 2)}" + (f" ({category})" if category else "")


def flakiness_reasons(value: Flakiness | None, limit: int = 5) -> list[str]:
    """The factors behind a flakiness score, as sentences, largest contribution first.

    Factors whose value is 0 (nothing varies) are left out unless every factor is 0.
    """
    if value is None:
        return []
    varying = [f for f in value.factors if not math.isfinite(f.value) or f.value > 0]
    lines = []
    for factor in varying or list(value.factors[:1]):
        name = factor.name.replace("_", " ")
        lines.append(f"{factor.detail or name} [{name} {num(factor.value, 2)}]")
    return lines[:limit]


def failure_explanations(test: TestResult, limit: int = 3) -> list[str]:
    """What failing trials do differently, as sentences, most significant first."""
    lines = []
    for item in test.failure_explanations[:limit]:
        detail = item.detail or item.feature
        if not any(mark in detail for mark in ("p <", "p =", "p=", "p<")):
            detail += f" (p = {num(item.p_adjusted, 2)})"
        lines.append(detail)
    return lines


def regression_text(test: TestResult) -> str | None:
    """The comparison with the baseline in one phrase; None without a baseline."""
    regression = test.regression
    if regression is None:
        return None
    parts = []
    if regression.baseline_n:
        base = regression.baseline_passed / regression.baseline_n
        parts.append(
            f"baseline {pct(base)} ({regression.baseline_passed}/{regression.baseline_n}) → "
            f"now {pct(test.pass_rate)}"
        )
    parts.append(f"p = {num(regression.p_value, 2)} ({regression.test})")
    parts.append(f"power {pct(regression.power, 0)} to detect a {pct(regression.delta, 0)} drop")
    return f"regression {regression.verdict.value}: " + ", ".join(parts)


def tool_errors_text(
    test: TestResult, trace_url: str | None = None, trace: TraceText | None = None
) -> str | None:
    """``8 in 5 of 20 trials (...); first in trial 3, trace 0af7…: RuntimeError: boom``.

    With a ``trace_url`` template the trace is its URL in the user's viewer; ``trace`` shows
    the id as the report shows trace ids. None when no tool call failed.
    """
    errors = test.tool_errors
    if errors is None or errors.count == 0:
        return None
    first = errors.first_trace_id
    shown = trace_link(trace_url, first) or str(first)
    where = f"trace {trace(first, shown) if trace is not None and first else shown}"
    if errors.first_trial_index is not None:
        where = f"trial {errors.first_trial_index}, {where}"
    text = (
        f"{errors.count} in {errors.trials} of {test.trials} trials (the agent may have "
        f"recovered); first in {where}"
    )
    if errors.messages:
        text += ": " + " | ".join(errors.messages)
    return text


def work_unknown_text(test: TestResult) -> str | None:
    """Why the tool and LLM figures are unknown, in words; None when they are known."""
    if not test.work_unknown:
        return None
    return (
        f"unknown: {test.work_unknown} of {test.trials} trials hold spans that look like tool "
        "or LLM calls in a convention assay does not read (see the unclaimed_work warning), so "
        "tool paths, calls, tokens, cost and tool errors are not reported"
    )


def source_lines(test: TestResult) -> list[str]:
    """``trials from 2 runs: run-a 30, run-b 30`` (and agent versions), when several."""
    lines = []
    for held, what in ((test.runs, "runs"), (test.agent_versions, "agent versions")):
        if len(held) > 1:
            lines.append(f"trials from {len(held)} {what}: {share_text(held)}")
    return lines


def score_label(name: str) -> str:
    """``score quality`` for a named score."""
    return f"score {name}"


def figure_lines(
    test: TestResult,
    *,
    label: Callable[[str], str] = score_label,
    trace: TraceText | None = None,
) -> list[str]:
    """pass@k, pass^k, each score and the tool consistency, one line each (those present).

    ``trace`` shows the trace ids named (:data:`assay.report._links.TraceText`).
    """
    lines = []
    for values, symbol in ((test.pass_at_k, "pass@"), (test.pass_hat_k, "pass^")):
        text = passk_text(values, symbol)
        if text:
            lines.append(text)
    for name, summary in test.scores.items():
        lines.append(f"{label(name)}: {score_text(summary)}")
    tools = work_unknown_text(test) or tool_consistency_text(test.tool_consistency)
    if tools:
        lines.append(f"tools: {tools}")
    spent = cost_text(test.cost)
    if spent:
        lines.append(spent)
    failed_tools = tool_errors_text(test, trace=trace)
    if failed_tools:
        lines.append(f"tool errors: {failed_tools}")
    lines += source_lines(test)
    return lines


def explanation_lines(
    test: TestResult,
    *,
    label: Callable[[str], str] = score_label,
    trace: TraceText | None = None,
) -> list[str]:
    """Everything a text report says of one test, one line each.

    The reason for the verdict (and, for a sequential verdict, the interval it rests on), the
    figures, why it is flaky, what failing trials do differently, and the notes. ``trace``
    shows the trace ids named (a link in Markdown).
    """
    lines = [headline(test)]
    sequential = sequential_text(test)
    if sequential:
        lines.append(sequential)
    regression = regression_text(test)
    if regression:
        lines.append(regression)
    lines += figure_lines(test, label=label, trace=trace)
    flaky = flakiness_headline(test.flakiness)
    if flaky:
        lines.append(f"flakiness {flaky}")
        lines += [f"  - {reason}" for reason in flakiness_reasons(test.flakiness)]
    explanations = failure_explanations(test)
    if explanations:
        lines.append("failing trials differ:")
        lines += [f"  - {line}" for line in explanations]
    lines += behaviour_lines(test.behaviour, trace=trace)
    if test.first_error:
        lines.append(f"first error, {test.first_error}")
    lines += list(test.notes)
    return lines
