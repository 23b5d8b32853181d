"""GitHub: a Markdown step summary and ``::error`` / ``::warning`` workflow annotations.

The Markdown is GitHub-flavoured (a table, ``<details>`` blocks) and reads as well in a pull
request comment or a GitLab job summary. Annotations follow GitHub's workflow-command syntax
(``::error title=...::message``) with the documented escaping of ``%``, CR and LF (and of
``:`` and ``,`` in properties).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.report import _text as tx
from assay.report._json import analysis_to_dict
from assay.verdict import AnalysisResult


def _cell(text: Any) -> str:
    """Table cells: no pipes or line breaks may leak into the table structure."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _score_cell(test: Mapping[str, Any]) -> str:
    parts = []
    for name, summary in tx.score_summaries(test).items():
        mean = tx.num(summary.get("mean"))
        if summary.get("ci_low") is not None and summary.get("ci_high") is not None:
            mean += f" ({tx.num(summary['ci_low'])}–{tx.num(summary['ci_high'])})"
        parts.append(f"{name} {mean}" if name else mean)
    return "; ".join(parts) or "—"


def render_markdown(result: AnalysisResult) -> str:
    """The step-summary Markdown: a headline, the verdict table, and the reasons per test.

    Args:
        result: The analysis result.

    Returns:
        GitHub-flavoured Markdown ending with a newline.
    """
    document = analysis_to_dict(result)
    tests = tx.by_severity(document["tests"])
    summary = document["summary"]
    confidence = document["options"].get("confidence")
    level = f"{100 * confidence:g}% CI" if isinstance(confidence, int | float) else "CI"
    counts = ", ".join(
        f"{summary.get(v, 0)} {v}" for v in ("FAIL", "INCONCLUSIVE", "PASS") if summary.get(v)
    )
    lines = [f"## assay: {counts or 'no tests'} ({summary['tests']} tests)", ""]
    lines += [
        f"| | test | verdict | passed | pass rate | {level} | threshold | errors "
        "| pass@k | score | flakiness |",
        "|---|---|---|---:|---:|---|---:|---:|---|---|---|",
    ]
    for test in tests:
        ci = test["ci"]
        interval = "—" if ci["low"] is None else f"{tx.pct(ci['low'])} – {tx.pct(ci['high'])}"
        cells = [
            tx.VERDICT_MARK.get(test["verdict"], ""),
            f"`{test['test_id']}`",
            f"**{test['verdict']}**",
            f"{test['passed']}/{test['n']}",
            tx.pct(test["pass_rate"]),
            interval,
            tx.pct(test["threshold"], 0),
            str(test["errors"]),
            tx.passk_text(test.get("pass_at_k"), "@") or "—",
            _score_cell(test),
            tx.flakiness_headline(test.get("flakiness")) or "—",
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines.append("")
    for test in tests:
        body = _explanation(test)
        if test["verdict"] == "PASS" and len(body) <= 1:
            continue
        lines.append(
            f"<details{' open' if test['verdict'] == 'FAIL' else ''}><summary>"
            f"{tx.VERDICT_MARK.get(test['verdict'], '')} <code>{_html(test['test_id'])}</code>: "
            f"{_html(test['verdict'])}</summary>"
        )
        lines.append("")
        lines += [line if line.startswith("  - ") else f"- {line}" for line in body]
        lines += ["", "</details>", ""]
    for item in document.get("skipped_files") or []:
        lines.append(f"> skipped `{item['path']}`: {item['reason']}")
    for note in document.get("notes") or []:
        lines.append(f"> {note}")
    return "\n".join(lines).rstrip("\n") + "\n"


def _explanation(test: Mapping[str, Any]) -> list[str]:
    return tx.explanation_lines(test, label=lambda name: f"score `{name}`" if name else "score")


def _html(text: Any) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_annotations(result: AnalysisResult, *, inconclusive_ok: bool = False) -> str:
    """GitHub workflow annotations: ``::error`` per FAIL, ``::warning`` per INCONCLUSIVE.

    Args:
        result: The analysis result.
        inconclusive_ok: Annotate INCONCLUSIVE tests as ``::notice`` (they do not fail the
            build) instead of ``::warning``.

    Returns:
        One workflow command per line (empty when every test passed).
    """
    lines = []
    for test in tx.by_severity(analysis_to_dict(result)["tests"]):
        verdict = test["verdict"]
        if verdict == "PASS":
            continue
        level = "error" if verdict == "FAIL" else ("notice" if inconclusive_ok else "warning")
        title = _escape_property(f"assay {verdict}: {test['test_id']}")
        message = tx.verdict_reason(test)
        reasons = [*tx.failure_explanations(test), *tx.flakiness_reasons(test.get("flakiness"))]
        reasons = reasons[:3]
        if reasons:
            message += "\n" + "\n".join(f"- {reason}" for reason in reasons)
        lines.append(f"::{level} title={title}::{_escape_data(message)}")
    return "".join(line + "\n" for line in lines)
