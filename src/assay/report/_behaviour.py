"""What changed between two versions, and what a test cost: JSON and words for every report.

``behaviour_to_dict`` and ``cost_to_dict`` are the ``behaviour`` and ``cost`` objects of a test
in ``assay.analysis/v1``; the other helpers put the same into words for console, Markdown,
JUnit and HTML, so that every format says the same.
"""

from __future__ import annotations

import html
from typing import Any

from assay.judge import BehaviourChange, BehaviourResult, CostSummary, describe_change
from assay.report._links import TraceText, trace_link
from assay.report._safe import code_spans, visible

SHOWN = 5
"""Changes listed per test in text reports (JSON has every one)."""


def _change_to_dict(change: BehaviourChange) -> dict[str, Any]:
    return {
        "feature": change.feature,
        "label": change.label,
        "kind": change.kind,
        "baseline": change.baseline,
        "current": change.current,
        "effect": change.effect,
        "measure": change.measure,
        "ci": {"low": change.ci_low, "high": change.ci_high},
        "p_value": change.p_value,
        "adjusted_p": change.adjusted_p,
        "method": change.method,
        "changed": change.changed,
        "power": change.power,
        "minimal_effect": change.minimal_effect,
        "path": list(change.path) if change.path is not None else None,
        "note": change.note,
        "text": describe_change(change),
        "baseline_traces": list(change.baseline_traces),
        "current_traces": list(change.current_traces),
    }


def behaviour_to_dict(result: BehaviourResult) -> dict[str, Any]:
    """The ``behaviour`` object: verdict, reason, the changes (largest first), every feature."""
    return {
        "verdict": result.verdict.value,
        "reason": result.reason,
        "baseline_n": result.baseline_n,
        "current_n": result.current_n,
        "alpha": result.alpha,
        "adjust": result.adjust,
        "family_size": result.family_size,
        "required_power": result.required_power,
        "trials_needed": result.trials_needed,
        "changes": [_change_to_dict(c) for c in result.changes],
        "features": [_change_to_dict(c) for c in result.features],
    }


def cost_to_dict(cost: CostSummary) -> dict[str, Any]:
    """The ``cost`` object of a test."""
    return {
        "total_usd": cost.total_usd,
        "mean_usd": cost.mean_usd,
        "priced_trials": cost.priced,
        "unpriced_trials": cost.unpriced,
        "prices": cost.prices,
    }


def _usd(value: float) -> str:
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def cost_text(cost: CostSummary | None) -> str | None:
    """``cost $0.0123 ($0.0004 per trial; prices: default list prices of 2025-06)``."""
    if cost is None:
        return None
    if cost.mean_usd is None:
        if cost.unpriced:
            return f"cost unknown: no price for the models of {cost.unpriced} trials"
        return None
    if cost.total_usd == 0 and not cost.unpriced:
        return None  # nothing spent (no LLM call, or no cost recorded): "$0.0000" says nothing
    text = f"cost {_usd(cost.total_usd)} ({_usd(cost.mean_usd)} per trial"
    if cost.unpriced:
        text += f"; {cost.unpriced} trials unpriced"
    return f"{text}; prices: {cost.prices})"


def _short(trace_id: str) -> str:
    return trace_id[:12]


def examples_text(change: BehaviourChange, trace: TraceText | None = None) -> str:
    """``typical trials: baseline 1a2b…, 3c4d…; current 5e6f…`` (``trace`` shows each id)."""
    sides = []
    for side, ids in (("baseline", change.baseline_traces), ("current", change.current_traces)):
        if ids:
            shown = [trace(i, _short(i)) if trace else _short(i) for i in ids[:2]]
            sides.append(f"{side} " + ", ".join(shown))
    return "typical trials: " + "; ".join(sides) if sides else ""


def behaviour_lines(
    behaviour: BehaviourResult | None, limit: int = SHOWN, trace: TraceText | None = None
) -> list[str]:
    """The behaviour verdict and its largest changes, one line each (empty without one).

    ``trace`` shows the typical trials' trace ids (a link in Markdown).
    """
    if behaviour is None:
        return []
    lines = [f"behaviour {behaviour.verdict.value}: {behaviour.reason}"]
    changes = behaviour.changes
    for change in changes[:limit]:
        examples = examples_text(change, trace)
        lines.append(
            f"  - {describe_change(change)} (adjusted p = {change.adjusted_p:.2g})"
            + (f"; {examples}" if examples else "")
        )
    if len(changes) > limit:
        lines.append(f"  - and {len(changes) - limit} more (see the JSON or HTML report)")
    return lines


def _trace_links(ids: tuple[str, ...], trace_url: str | None) -> str:
    cells = []
    for trace_id in ids[:3]:
        code = f"<code>{html.escape(_short(trace_id))}</code>"
        url = trace_link(trace_url, trace_id)
        if url:
            code = f'<a href="{html.escape(url, quote=True)}">{code}</a>'
        cells.append(code)
    return " ".join(cells) or "—"


def behaviour_html(behaviour: BehaviourResult | None, trace_url: str | None = None) -> str:
    """The "what changed" section of a test's HTML report ("" without a behaviour diff)."""
    if behaviour is None:
        return ""

    def e(text: str) -> str:  # tool names in the changes are data: controls shown, escaped
        return html.escape(visible(text))

    def prose(text: str) -> str:  # the names a sentence quotes in backticks, as code
        return code_spans(e(text))

    rows = [
        "<tr>"
        f"<td>{prose(describe_change(change))}</td>"
        f"<td>{change.adjusted_p:.2g}</td>"
        f"<td>{_trace_links(change.baseline_traces, trace_url)}</td>"
        f"<td>{_trace_links(change.current_traces, trace_url)}</td>"
        "</tr>"
        for change in behaviour.changes
    ]
    table = (
        "<table><thead><tr><th>change</th><th>adjusted p</th><th>baseline trials</th>"
        f"<th>current trials</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        if rows
        else ""
    )
    return (
        f'<section class="behaviour"><h3>What changed: {e(behaviour.verdict.value)}</h3>'
        f"<p>{prose(behaviour.reason)}</p>{table}</section>"
    )
