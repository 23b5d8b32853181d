"""The HTML report: one self-contained file (inline CSS and SVG charts), readable offline.

It answers three questions at a glance: which tests fail (the summary and the pass-rate chart),
why they are flaky (flakiness factors, score distributions, tool-sequence variants) and which
trials to open (failing trials first, each with its trace id). It renders the analysis result,
the trials table and the tool-sequence variants (:func:`assay.analysis.tool_variants`) as
given; it computes no statistic.

A report of many tests stays fast to write and to open: the summary table lists every test,
but charts (each a matplotlib figure, the costly part) are drawn for the
:data:`MAX_CHARTED_TESTS` tests that need attention most and the pass-rate chart shows the
:data:`MAX_OVERVIEW_ROWS` most severe; the other tests' sections keep their figures in words
and start collapsed. The report says so where it happens.
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from assay.choices import Adjustment
from assay.judge import AnalysisResult, OptionValue, TestResult, Verdict, pct
from assay.report import _charts as ch
from assay.report import _text as tx
from assay.report._behaviour import behaviour_html
from assay.report._comparison_chart import case_changes, comparison_chart
from assay.report._json import SCHEMA
from assay.report._links import trace_link
from assay.report._rows import Row, TrialRow, VariantRow, trials_by_test, variants_by_test
from assay.report._safe import code_spans, visible
from assay.report._suites import (
    comparison_lines,
    decision_headline,
    decision_notes,
    figure_lines,
    shown_suites,
    suite_name,
    threshold_label,
)

MAX_TRIAL_ROWS = 200
"""Trials listed per test (failing ones first); the rest are counted, not listed."""
TRIALS_TO_OPEN = 8
MAX_VARIANTS = 8
MAX_CHARTED_TESTS = 5
"""Tests (most severe first) whose sections get charts and start open; the rest are words."""
MAX_SCORE_CHARTS = 3
"""Score histograms per test (by name); further scores are in the figures, in words."""
MAX_OVERVIEW_ROWS = 25
"""Tests (most severe first) drawn in the pass-rate chart; the summary table lists them all."""

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#24292f;margin:0;
 background:#f6f8fa}
main{max-width:1180px;margin:0 auto;padding:24px}
h1{margin:0 0 4px}h2{margin:0 0 8px;font-size:20px}h3{font-size:15px;margin:16px 0 6px}
.muted{color:#57606a}.cards{display:flex;gap:12px;margin:16px 0}
.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:10px 18px;
 min-width:110px}.card b{font-size:26px;display:block}
section.test{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:16px 20px;
 margin:18px 0;border-left:8px solid #57606a}
section.FAIL{border-left-color:#cf222e}section.PASS{border-left-color:#1a7f37}
section.INCONCLUSIVE{border-left-color:#bf8700}
section.test>details>summary{cursor:pointer}section.test>details>summary h2{display:inline}
.badge{display:inline-block;padding:1px 9px;border-radius:12px;color:#fff;font-size:12px;
 font-weight:600;vertical-align:middle}
.badge.FAIL{background:#cf222e}.badge.PASS{background:#1a7f37}
.badge.INCONCLUSIVE{background:#9a6700}
table{border-collapse:collapse;width:100%;margin:6px 0;background:#fff}
th,td{border-bottom:1px solid #d8dee4;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}td.num{text-align:right}
tr.fail td{background:#fff5f5}code{font:12px ui-monospace,monospace}
.charts{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
svg.chart{max-width:100%;height:auto}
ul.reasons li{margin:2px 0}.open li{margin:3px 0}
div.summary{max-height:70vh;overflow:auto;border:1px solid #d0d7de}
div.summary th{position:sticky;top:0}
"""


def _e(value: Any) -> str:
    r"""Data as HTML text: control characters shown (``\x1b``), markup characters escaped."""
    return html.escape(visible(value), quote=True)


def _prose(text: str) -> str:
    """One of assay's sentences: escaped, and the names it quotes in backticks as code."""
    return code_spans(_e(text))


def _anchor(test_id: str) -> str:
    """The element id of a test's section: ``test-<id>``.

    An id with characters outside ``[A-Za-z0-9_-]`` gets a hash suffix, so that ids differing
    only in those characters keep distinct anchors.
    """
    slug = "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "-" for c in test_id)
    if slug != test_id:
        slug += "-" + hashlib.sha1(test_id.encode("utf-8")).hexdigest()[:8]
    return f"test-{slug}"


def _index(trial: TrialRow) -> str:
    # Traces from production carry no trial index: their trace id (beside it) names them.
    return "—" if trial.trial_index is None else str(trial.trial_index)


def _trace_cell(trace_id: str, trace_url: str | None) -> str:
    if not trace_id:
        return "—"
    code = f"<code>{_e(trace_id)}</code>"
    url = trace_link(trace_url, str(trace_id))
    return f'<a href="{_e(url)}">{code}</a>' if url else code


def _scores_text(trial: TrialRow) -> str:
    return ", ".join(f"{s.name} {tx.num(s.value)}" for s in trial.scores)


def _ordered_trials(trials: Sequence[TrialRow]) -> list[TrialRow]:
    """Error and failing trials first (the ones to open), then by trial index."""
    rank = {"error": 0, "fail": 1, "pass": 2}
    return sorted(trials, key=lambda t: (rank[t.status], t.trial_index or 0, t.trace_id))


class _Charts:
    """Numbers the inline SVGs so that their ids stay unique in one document."""

    def __init__(self) -> None:
        self.count = 0

    def svg(self, fig: Any, name: str) -> str:
        self.count += 1
        return ch.to_svg(fig, name, f"assay-{self.count}")


def _overview(result: AnalysisResult, tests: Sequence[TestResult], charts: _Charts) -> str:
    counts = result.counts
    cards = "".join(
        f'<div class="card"><b style="color:{ch.COLOURS[v]}">{counts[v]}</b>{v}</div>'
        for v in ("FAIL", "INCONCLUSIVE", "PASS")
    )
    rows = "".join(
        f'<tr class="{"fail" if t.verdict is Verdict.FAIL else ""}">'
        f'<td><a href="#{_anchor(t.test_id)}">{_e(t.test_id)}</a></td>'
        f'<td><span class="badge {t.verdict.value}">{t.verdict.value}</span></td>'
        f'<td class="num">{t.passed}/{t.n}</td><td class="num">{tx.pct(t.pass_rate)}</td>'
        f"<td>{_e(tx.interval_label(t))}</td><td class=num>{tx.pct(t.threshold, 0)}</td>"
        f'<td class="num">{t.errors}</td>'
        f"<td>{_e(tx.flakiness_headline(t.flakiness) or '—')}</td></tr>"
        for t in tests
    )
    drawn = tests[:MAX_OVERVIEW_ROWS]
    chart = charts.svg(ch.overview_chart(drawn), "pass-rates") if tests else ""
    if len(drawn) < len(tests):
        chart += (
            f"<p class=muted>The chart shows the {len(drawn)} most severe of {len(tests)} "
            "tests; the table below lists every one.</p>"
        )
    return (
        f'<div class="cards"><div class="card"><b>{len(tests)}</b>tests</div>{cards}</div>'
        f"<h2>Pass rates against the threshold</h2>{chart}"
        # A long summary scrolls in its own box, so that the sections stay a scroll away.
        '<div class="summary">'
        "<table><tr><th>test</th><th>verdict</th><th>passed</th><th>rate</th><th>interval</th>"
        f"<th>threshold</th><th>errors</th><th>flakiness</th></tr>{rows}</table></div>"
    )


def _figures(test: TestResult) -> str:
    items = [_prose(line) for line in tx.figure_lines(test)]
    for line in (tx.sequential_text(test), tx.regression_text(test)):
        if line:
            items.append(_prose(line))
    if test.first_error:  # the agent's own message: shown as it is
        items.append(_e(f"first error, {test.first_error}"))
    items += [_prose(note) for note in test.notes]
    return "<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>" if items else ""


def _flakiness(test: TestResult, charts: _Charts | None) -> tuple[str, str]:
    """How flaky the test is and why (factors, in words and as a chart); what failures do."""
    flakiness = test.flakiness
    headline = tx.flakiness_headline(flakiness)
    text = chart = ""
    if headline and flakiness is not None:
        reasons = "".join(
            f"<li>{_prose(r)}</li>" for r in tx.flakiness_reasons(flakiness, limit=10)
        )
        # "Flakiness", not "why it is flaky": the score may say the test is stable.
        text = f"<h3>Flakiness: {_e(headline)}</h3><ul class=reasons>{reasons}</ul>"
        if flakiness.factors and charts is not None:
            chart = charts.svg(ch.factors_chart(flakiness.factors), "flakiness")
    explanations = tx.failure_explanations(test, limit=6)
    if explanations:
        items = "".join(f"<li>{_prose(line)}</li>" for line in explanations)
        text += f"<h3>What failing trials do differently</h3><ul class=reasons>{items}</ul>"
    return text, chart


def _score_charts(
    test: TestResult, trials: Sequence[TrialRow], charts: _Charts | None
) -> list[str]:
    if charts is None:
        return []
    by_name: dict[str, tuple[list[float], list[float]]] = {}
    for trial in trials:
        for score in trial.scores:
            if score.value is not None:
                passing, failing = by_name.setdefault(score.name, ([], []))
                (passing if trial.passed else failing).append(float(score.value))
    return [
        charts.svg(
            ch.score_chart(name, p, f, test.scores[name] if name in test.scores else None), "score"
        )
        for name, (p, f) in sorted(by_name.items())[:MAX_SCORE_CHARTS]
    ]


def _variants(variants: Sequence[VariantRow], charts: _Charts | None) -> str:
    if not variants:
        return ""
    shown = list(variants)[:MAX_VARIANTS]
    labels = [tx.sequence_text(v.sequence) for v in shown]
    rows = "".join(
        f'<tr class="{"fail" if v.pass_rate < 0.5 else ""}"><td>{tx.path_label(i)}</td>'
        f"<td><code>{_e(label)}</code></td><td class=num>{v.count}</td>"
        f"<td class=num>{v.passes}</td><td class=num>{tx.pct(v.pass_rate, 0)}</td></tr>"
        for i, (v, label) in enumerate(zip(shown, labels, strict=True))
    )
    # One path for every trial needs no chart: the table says it.
    chart = ""
    if charts is not None and len(shown) > 1:
        chart = charts.svg(ch.variants_chart(shown, labels), "variants")
    more = len(variants) - len(shown)
    note = f"<p class=muted>{more} rarer variants not shown.</p>" if more > 0 else ""
    return (
        "<h3>Tool-sequence variants</h3>"
        f'<div class="charts">{chart}'
        '<div style="flex:1;min-width:380px"><table><tr><th></th><th>tool sequence</th>'
        f"<th>trials</th><th>passed</th><th>pass rate</th></tr>{rows}</table>{note}</div></div>"
    )


def _tools(trial: TrialRow) -> str:
    """The trial's tool sequence as code, or ``unknown`` (work no convention claims)."""
    if trial.work_unknown:
        return "<i>unknown</i>"
    return f"<code>{_e(tx.sequence_text(trial.tool_sequence))}</code>"


def _trials(
    trials: Sequence[TrialRow], variants: Sequence[VariantRow], trace_url: str | None
) -> str:
    if not trials:
        return ""
    label = {v.sequence: f" ({tx.path_label(i)})" for i, v in enumerate(variants)}
    ordered = _ordered_trials(trials)
    to_open = [t for t in ordered if t.status != "pass"][:TRIALS_TO_OPEN]
    out = ""
    if to_open:
        items = "".join(
            f"<li>{_trace_cell(t.trace_id, trace_url)}"
            # Without a trial index, the trace id that leads the line names the trial.
            + (f" — trial {t.trial_index}" if t.trial_index is not None else "")
            + f" ({_e(t.agent_version or '')}) <b>{t.status}</b>"
            + (f"; failed: {_e(', '.join(t.failed_checks))}" if t.failed_checks else "")
            + (f"; {_e(t.status_message)}" if t.status_message else "")
            + f"; tools {_tools(t)}"
            + ("" if t.work_unknown else label.get(t.tool_sequence, ""))
            + (f"; {_e(_scores_text(t))}" if _scores_text(t) else "")
            + "</li>"
            for t in to_open
        )
        out += f"<h3>Trials to open</h3><ul class=open>{items}</ul>"
    shown = ordered[:MAX_TRIAL_ROWS]
    rows = "".join(
        f'<tr class="{"fail" if t.status != "pass" else ""}">'
        f"<td class=num>{_index(t)}</td>"
        f"<td>{_e(t.agent_version or '')}</td><td>{t.status}</td>"
        f"<td>{_e(_scores_text(t))}</td><td>{_e(', '.join(t.failed_checks))}</td>"
        f"<td>{_tools(t)}</td>"
        f"<td class=num>{tx.num(t.duration_s)}</td>"
        f"<td>{_trace_cell(t.trace_id, trace_url)}</td></tr>"
        for t in shown
    )
    more = f" (first {len(shown)} shown, failing first)" if len(ordered) > len(shown) else ""
    return (
        out + f"<details><summary>All {len(ordered)} trials{more}</summary>"
        "<table><tr><th>#</th><th>version</th><th>result</th><th>scores</th>"
        "<th>failed checks</th><th>tools</th><th>seconds</th><th>trace id</th></tr>"
        f"{rows}</table></details>"
    )


def _section(
    test: TestResult,
    trials: Sequence[TrialRow],
    variants: Sequence[VariantRow],
    trace_url: str | None,
    charts: _Charts | None,
) -> str:
    """One test's section; ``charts`` None keeps it to words and collapsed (a long report)."""
    verdict = test.verdict.value
    # A PASS needs fewer pictures: its factors and pass@k stay in words (and the page fast).
    full = charts is not None and test.verdict is not Verdict.PASS
    flaky_text, flaky_chart = _flakiness(test, charts if full else None)
    chart_list = _score_charts(test, trials, charts)
    if charts is not None and full and (test.pass_at_k or test.pass_hat_k):
        chart_list.append(charts.svg(ch.passk_chart(test.pass_at_k, test.pass_hat_k), "passk"))
    if charts is not None and test.regression is not None and test.regression.baseline_n:
        chart_list.append(charts.svg(ch.regression_chart(test, test.regression), "regression"))
    if flaky_chart:
        chart_list.insert(0, flaky_chart)
    drawn = f'<div class="charts">{"".join(chart_list)}</div>' if chart_list else ""
    # <details> keeps a long report short: the browser lays out only the open sections, and
    # a link to a collapsed section (#test-...) opens it.
    return (
        f'<section class="test {verdict}" id="{_anchor(test.test_id)}">'
        f"<details{' open' if charts is not None else ''}><summary>"
        f'<h2>{_e(test.test_id)} <span class="badge {verdict}">{verdict}</span></h2></summary>'
        f"<p>{_prose(test.verdict_reason)}</p>{_figures(test)}"
        f"{behaviour_html(test.behaviour, trace_url)}{flaky_text}{drawn}"
        # Variants of unknown work would show one "(no tool calls)" path: its figures say unknown.
        f"{'' if test.work_unknown else _variants(variants, charts)}"
        f"{_trials(trials, variants, trace_url)}"
        "</details></section>"
    )


def _badge(verdict: Verdict) -> str:
    return f'<span class="badge {verdict.value}">{verdict.value}</span>'


def _decision(result: AnalysisResult) -> str:
    """With a baseline deciding, the page's first badge: the answer and what decided it."""
    headline = decision_headline(result)
    if headline is None:
        return ""
    decision = result.decision
    notes = "".join(f"<li>{_e(note)}</li>" for note in decision_notes(decision))
    said = headline.removeprefix(decision.verdict.value)
    return (
        f'<div class="suite decision"><p>{_badge(decision.verdict)} <b>{_e(said)}</b></p>'
        f"<ul>{notes}</ul></div>"
    )


def _suites(result: AnalysisResult, charts: _Charts) -> str:
    """The suites' answer, first on the page: the comparison, then the threshold verdict.

    A suite compared with a baseline leads with the comparison picture
    (:mod:`assay.report._comparison_chart`): every case's change, the suite's mean difference
    with its interval, and the cases that moved.
    """
    blocks = []
    for suite in shown_suites(result):
        name = _e(suite_name(suite))
        comparison = suite.comparison
        head = ""
        if comparison is not None:
            moved = "".join(f"<li>{_e(line)}</li>" for line in comparison_lines(suite)[1:])
            changes = case_changes(suite, result.tests)
            picture = (
                charts.svg(comparison_chart(comparison, changes), "comparison") if changes else ""
            )
            head = (
                f"<p>{_badge(comparison.verdict)} <b>suite {name} against the baseline</b> — "
                f"{_e(comparison.reason)}</p>{picture}<ul>{moved}</ul>"
            )
            label = _e(threshold_label(suite))
        else:
            label = f"suite {name}"
        items = "".join(f"<li>{_e(line)}</li>" for line in [*figure_lines(suite), *suite.notes])
        blocks.append(
            f'<div class="suite">{head}<p>{_badge(suite.verdict)} <b>{label}</b> — '
            f"{_e(suite.reason)}</p><ul>{items}</ul></div>"
        )
    return f"<h2>Suites</h2>{''.join(blocks)}" if blocks else ""


_WORDS: dict[str, Callable[[OptionValue], str]] = {
    "threshold": lambda v: f"threshold {v} for every test",
    "confidence": lambda v: f"{pct(float(v), 0)} confidence",  # type: ignore[arg-type]
    "ci_method": lambda v: f"{str(v).capitalize()} intervals for pass rates",
    "test_attribute": lambda v: f"tests named by {v}",
    "ks": lambda v: "pass@k for k = " + ", ".join(str(k) for k in v),  # type: ignore[union-attr]
    "score_ci": lambda v: f"score means with {v} intervals",
    "regression_test": lambda v: f"regressions by a one-sided {str(v).capitalize()} test",
    "alpha": lambda v: f"at significance {v}",
    "delta": lambda v: f"sized to detect a {100 * float(v):g}-point drop",  # type: ignore[arg-type]
    "power": lambda v: f"with {pct(float(v), 0)} power",  # type: ignore[arg-type]
    "adjust": lambda v: (
        "no adjustment for judging many tests at once"
        if v == Adjustment.NONE
        else f"{v} adjustment for judging many tests at once"
    ),
    "seed": lambda v: f"random seed {v}",
    "errors": lambda v: f"error trials: {v}",
    "min_score": lambda v: f"a score below {v} fails its trial",
    "pass_when": lambda v: f"a trial passes when {v}",
    "fail_on": lambda v: "a test also fails on " + ", ".join(map(str, v)),  # type: ignore[arg-type]
    "anytime": lambda v: (
        "anytime-valid intervals and tests (valid however often one looks)"
        if v
        else "fixed-sample intervals and tests"
    ),
    "suite_attribute": lambda v: f"suites named by {v}",
    "suite_ci": lambda v: f"suite means with {v} intervals over cases",
    "suite_threshold": lambda v: f"suite threshold {v}",
    "margin": lambda v: f"a drop up to {100 * float(v):g} points tolerated",  # type: ignore[arg-type]
    "prices": lambda v: f"prices from {v}",
    "min_mean_score": lambda v: f"a test needs a mean score of at least {v}",
    "max_std_dev": lambda v: f"a test's score may vary by a standard deviation of at most {v}",
    "gate_cases": lambda v: (
        "every case's verdict counts in the exit code"
        if v
        else "the exit code counts the verdicts docs/cli.md's rule names"
    ),
    "case_behaviour": lambda v: (
        "every case's behaviour diffed"
        if v
        else "a case's behaviour diffed where its trials can show a change"
    ),
    "allow_missing_cases": lambda v: (
        "a suite may PASS with cases the current version did not run"
        if v
        else "a suite PASSes only when the current version ran every case"
    ),
}
"""Each analysis option as a reader says it; an option not listed is shown by its name."""


_DEFAULT_RULES = frozenset({"gate_cases", "case_behaviour"})
"""Flags whose unset value is the default rule, said elsewhere: not listed as a setting."""


def settings_in_words(options: Mapping[str, OptionValue]) -> str:
    """The header's line: what the verdicts were computed with, in words, not option names."""
    return " · ".join(
        _WORDS[name](value) if name in _WORDS else f"{name.replace('_', ' ')} {value}"
        for name, value in options.items()
    )


def render_html(
    result: AnalysisResult,
    *,
    trials: Iterable[Row] | None = None,
    variants: Iterable[Row] | None = None,
    trace_url: str | None = None,
    title: str = "assay report",
) -> str:
    """The self-contained HTML report.

    Args:
        result: The analysis result.
        trials: The trials table as rows (``Analysis.trials.to_dicts()``): score distributions
            and the trials list. Optional; without it those parts are left out.
        variants: :func:`assay.analysis.tool_variants` as rows. Optional.
        trace_url: A link template for trace ids, e.g.
            ``https://jaeger.example/trace/{trace_id}``; without it ids are shown as text.
        title: The page title.

    Returns:
        One HTML document with inline CSS and SVG, no scripts and no external resources.
    """
    tests = tx.by_severity(result.tests)
    charts = _Charts()
    # Read once, by column name, into typed rows: the rest of the report uses attributes.
    trials_by = trials_by_test(trials or ())
    variants_by = variants_by_test(variants or ())
    # An option left unset (None, or no --fail-on rule) is not a setting: not listed.
    # --gate-cases unset is the default rule, said by the page's first badge: not listed;
    # nor --case-behaviour unset, said by the notes where a case is not diffed.
    given = {
        k: v
        for k, v in result.options.items()
        if v is not None and v != () and not (k in _DEFAULT_RULES and v is False)
    }
    settings = ", ".join(f"{k} {v}" for k, v in given.items())
    skipped = "".join(
        f"<li>skipped <code>{_e(path)}</code>: {_e(reason)}</li>"
        for path, reason in result.skipped_files
    ) + "".join(f"<li>{_prose(note)}</li>" for note in result.notes)
    warnings = "".join(
        f"<li>⚠️ {_e(finding.message)}</li>" for finding in result.data_quality.warnings
    )
    sections = "".join(
        _section(
            t,
            trials_by.get(t.test_id, []),
            variants_by.get(t.test_id, []),
            trace_url,
            charts if i < MAX_CHARTED_TESTS else None,
        )
        for i, t in enumerate(tests)
    )
    if len(tests) > MAX_CHARTED_TESTS:
        sections = (
            f"<p class=muted>Charts are drawn for the {MAX_CHARTED_TESTS} tests that need "
            f"attention most; the other {len(tests) - MAX_CHARTED_TESTS} sections give their "
            "figures in words and start collapsed.</p>" + sections
        )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body><main>"
        f"<h1>{_e(title)}</h1><p class=muted>{_e(settings_in_words(given))}</p>"
        f"<details class=muted><summary>options, as the JSON names them</summary>"
        f"{_e(SCHEMA)} · {_e(settings)}</details>"
        f"{_decision(result)}{_suites(result, charts)}{_overview(result, tests, charts)}"
        + (f"<h3>Data quality</h3><ul>{warnings}</ul>" if warnings else "")
        + (f"<ul>{skipped}</ul>" if skipped else "")
        + f"{sections}</main></body></html>\n"
    )
