"""GitHub: a Markdown step summary and ``::error`` / ``::warning`` workflow annotations.

The Markdown is GitHub-flavoured (a table, ``<details>`` blocks) and reads as well in a pull
request comment or a GitLab job summary. Annotations follow GitHub's workflow-command syntax
(``::error title=...::message``) with the documented escaping of ``%``, CR and LF (and of
``:`` and ``,`` in properties).
"""

from __future__ import annotations

import re
from urllib.parse import quote

from assay.judge import AnalysisResult, TestResult, Verdict
from assay.report import _text as tx
from assay.report._links import trace_link
from assay.report._safe import visible
from assay.report._suites import (
    comparison_lines,
    figure_lines,
    listed_cases,
    shown_suites,
    suite_name,
)

_INLINE = str.maketrans({c: "\\" + c for c in "\\`*_[]|~"})
_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
#: Where :func:`_code` text goes inside a line escaped as a whole (private-use characters).
_CODE_OPEN, _CODE_CLOSE = "\ue000", "\ue001"
#: A trace id named in such a line: ``OPEN index SEP shown CLOSE``, made a link after escaping.
_LINK_OPEN, _LINK_SEP, _LINK_CLOSE = "\ue002", "\ue003", "\ue004"
_LINK = re.compile(f"{_LINK_OPEN}(\\d+){_LINK_SEP}(.*?){_LINK_CLOSE}")
_URL_UNSAFE = " ()<>[]`\"'\\"
"""Characters percent-encoded in a link's URL, so that no template or id can end the link."""


def _md(text: object) -> str:
    """Text from the traces as inert Markdown: shown as it is, never markup.

    Test, score, check and tool names come from the traces and go into PR comments and step
    summaries. HTML (``<script>``, ``<img onerror=…>``) becomes entities; the characters that
    open Markdown constructs inside a line (code spans, emphasis, links, table cells,
    strikethrough) are backslash-escaped; control characters are shown (:func:`visible`). A
    backtick in a name once ended a code span early and left a live ``javascript:`` link.
    """
    return visible(text).translate(_HTML).translate(_INLINE)


def _code(text: object) -> str:
    """A name shown as code: ``<code>`` around its escaped text (a backtick cannot close it)."""
    return f"<code>{_md(text)}</code>"


class _Traces:
    """The trace ids a report's lines name, marked while the lines are escaped, then linked."""

    def __init__(self, template: str | None) -> None:
        self.template = template
        self.ids: list[str] = []

    def mark(self, trace_id: str, shown: str) -> str:
        """:data:`assay.report._links.TraceText`: the id marked, to be linked by :meth:`link`."""
        self.ids.append(trace_id)
        return f"{_LINK_OPEN}{len(self.ids) - 1}{_LINK_SEP}{shown}{_LINK_CLOSE}"

    def link(self, escaped: str) -> str:
        """``escaped`` (a line through :func:`_md`) with each marked id a link to its trace."""

        def linked(match: re.Match[str]) -> str:
            shown = f"<code>{match.group(2)}</code>"
            url = trace_link(self.template, self.ids[int(match.group(1))])
            if url is None:
                return shown
            safe = "".join(quote(ch, safe="") if ch in _URL_UNSAFE else ch for ch in url)
            return f"[{shown}]({visible(safe)})"

        return _LINK.sub(linked, escaped)


def _line(text: str, traces: _Traces | None = None) -> str:
    """A line of assay's own text holding names: escaped whole, its code and link marks made."""
    escaped = _md(text).replace(_CODE_OPEN, "<code>").replace(_CODE_CLOSE, "</code>")
    return traces.link(escaped) if traces is not None else escaped


def _score_cell(test: TestResult) -> str:
    parts = []
    for name, summary in test.scores.items():
        mean = tx.num(summary.mean)
        shown = tx.score_interval_text(summary)
        if shown is not None:
            mean += f" ({shown})"
        parts.append(f"{name} {mean}")
    return "; ".join(parts) or "—"


def _suite_lines(result: AnalysisResult) -> list[str]:
    """The suites' answer, first: one paragraph per suite of two cases or more."""
    lines = []
    for suite in shown_suites(result):
        lines.append(
            f"**{tx.VERDICT_MARK[suite.verdict]} suite {_code(suite_name(suite))}: "
            f"{suite.verdict.value}** — {_md(suite.reason)}"
        )
        lines += [f"- {_md(line)}" for line in [*figure_lines(suite), *comparison_lines(suite)]]
        lines += [f"- note: {_md(note)}" for note in suite.notes]
        lines.append("")
    return lines


def render_markdown(
    result: AnalysisResult, *, all_cases: bool = False, trace_url: str | None = None
) -> str:
    """The step-summary Markdown: a headline, the suites, the verdict table, and the reasons.

    Args:
        result: The analysis result.
        all_cases: List every case, however many (by default a large set lists the cases
            needing a look and counts the rest, as the console does).
        trace_url: A trace-viewer template (``{trace_id}``, docs/reports.md): every trace id
            the reasons name is a link to its trace.

    Returns:
        GitHub-flavoured Markdown ending with a newline.
    """
    listing = listed_cases(result, all_cases=all_cases)
    tests = list(listing.listed)
    counts = result.counts
    level = tx.interval_header(tests)
    shown = ", ".join(f"{counts[v]} {v}" for v in ("FAIL", "INCONCLUSIVE", "PASS") if counts[v])
    total = len(result.tests)
    lines = [f"## assay: {shown or 'no tests'} ({total} {'test' if total == 1 else 'tests'})", ""]
    lines += _suite_lines(result)
    lines += [
        f"| | test | verdict | passed | pass rate | {level} | threshold | errors "
        "| pass@k | score | flakiness |",
        "|---|---|---|---:|---:|---|---:|---:|---|---|---|",
    ]
    for test in tests:
        figures = [
            f"{test.passed}/{test.n}",
            tx.pct(test.pass_rate),
            tx.interval_label(test, template="{low} – {high}"),
            tx.pct(test.threshold, 0),
            str(test.errors),
            tx.passk_text(test.pass_at_k, "@") or "—",
            _score_cell(test),
            tx.flakiness_headline(test.flakiness) or "—",
        ]
        cells = [
            tx.VERDICT_MARK[test.verdict],
            _code(test.test_id),
            f"**{test.verdict.value}**",
            *(_md(c) for c in figures),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    more = listing.more_text()
    if more:
        lines += [_md(more), ""]
    warnings = result.data_quality.warnings
    if warnings:
        lines.append("**Data quality:**")
        lines += [f"- ⚠️ {_md(finding.message)}" for finding in warnings]
        lines.append("")
    traces = _Traces(trace_url)
    for test in tests if listing.in_full else [t for t in tests if t.verdict is Verdict.FAIL]:
        body = _explanation(test, traces)
        if test.verdict is Verdict.PASS and len(body) <= 1:
            continue
        lines.append(
            f"<details{' open' if test.verdict is Verdict.FAIL else ''}><summary>"
            f"{tx.VERDICT_MARK[test.verdict]} {_code(test.test_id)}: "
            f"{test.verdict.value}</summary>"
        )
        lines.append("")
        lines += [
            line[:4] + _line(line[4:], traces)
            if line.startswith("  - ")
            else f"- {_line(line, traces)}"
            for line in body
        ]
        lines += ["", "</details>", ""]
    for path, reason in result.skipped_files:
        lines.append(f"> skipped {_code(path)}: {_md(reason)}")
    for note in result.notes:
        lines.append(f"> {_md(note)}")
    return "\n".join(lines).rstrip("\n") + "\n"


def _explanation(test: TestResult, traces: _Traces) -> list[str]:
    return tx.explanation_lines(
        test, label=lambda name: f"score {_CODE_OPEN}{name}{_CODE_CLOSE}", trace=traces.mark
    )


def _escape_data(text: str) -> str:
    # Control characters from the data (an ESC would colour the CI log) are shown first;
    # the line feeds left are the message's own.
    text = visible(text, newlines=True)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_annotations(result: AnalysisResult, *, inconclusive_ok: bool = False) -> str:
    """GitHub workflow annotations: ``::error`` per FAIL, ``::warning`` per INCONCLUSIVE.

    Each data-quality warning is a ``::warning`` too.

    Args:
        result: The analysis result.
        inconclusive_ok: Annotate INCONCLUSIVE tests as ``::notice`` (they do not fail the
            build) instead of ``::warning``.

    Returns:
        One workflow command per line (empty when every test passed).
    """
    lines = []
    for suite in shown_suites(result):
        # The verdicts that count in the exit code (docs/cli.md) are annotated.
        judged = [(suite.verdict, suite.reason, "")] if suite.counts else []
        if suite.comparison is not None:
            judged.append((suite.comparison.verdict, suite.comparison.reason, " vs baseline"))
        for verdict, reason, what in judged:
            if verdict is Verdict.PASS:
                continue
            level = (
                "error" if verdict is Verdict.FAIL else ("notice" if inconclusive_ok else "warning")
            )
            title = _escape_property(
                visible(f"assay {verdict.value}: suite {suite_name(suite)}{what}")
            )
            lines.append(f"::{level} title={title}::{_escape_data(visible(reason))}")
    for test in tx.by_severity(result.tests):
        verdict = test.verdict
        if verdict is Verdict.PASS:
            continue
        level = "error" if verdict is Verdict.FAIL else ("notice" if inconclusive_ok else "warning")
        title = _escape_property(visible(f"assay {verdict.value}: {test.test_id}"))
        message = visible(tx.headline(test))
        reasons = [*tx.failure_explanations(test), *tx.flakiness_reasons(test.flakiness)]
        reasons = reasons[:3]
        if reasons:
            message += "\n" + "\n".join(f"- {visible(reason)}" for reason in reasons)
        lines.append(f"::{level} title={title}::{_escape_data(message)}")
    # A data-quality warning can stand behind a PASS (evaluations no rule read, mixed runs): it
    # is annotated too, or a green run would hide it.
    for finding in result.data_quality.warnings:
        title = _escape_property(visible(f"assay data quality: {finding.kind}"))
        lines.append(f"::warning title={title}::{_escape_data(finding.message)}")
    return "".join(line + "\n" for line in lines)
