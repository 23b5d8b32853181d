"""What changed between two versions, and what a test cost: JSON and words for every report.

``behaviour_to_dict`` is the ``behaviour`` object of a test in ``assay.analysis/v1``;
the other helpers read that object (and ``cost``) back from a test's JSON-ready dict, like the
rest of :mod:`assay.report._text`, so that console, Markdown, JUnit and HTML say the same.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from assay.verdict import BehaviourChange, BehaviourResult, CostSummary, describe_change

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


def cost_text(test: Mapping[str, Any]) -> str | None:
    """``cost $0.0123 ($0.0004 per trial; prices: default list prices of 2025-06)``."""
    cost = test.get("cost")
    if not isinstance(cost, Mapping) or not cost.get("priced_trials"):
        if isinstance(cost, Mapping) and cost.get("unpriced_trials"):
            return f"cost unknown: no price for the models of {cost['unpriced_trials']} trials"
        return None
    text = f"cost {_usd(float(cost['total_usd']))} ({_usd(float(cost['mean_usd']))} per trial"
    if cost.get("unpriced_trials"):
        text += f"; {cost['unpriced_trials']} trials unpriced"
    return f"{text}; prices: {cost.get('prices')})"


def _short(trace_id: str) -> str:
    return trace_id[:12]


def examples_text(change: Mapping[str, Any]) -> str:
    """``typical trials: baseline 1a2b…, 3c4d…; current 5e6f…``."""
    sides = []
    for side in ("baseline", "current"):
        ids = change.get(f"{side}_traces") or []
        if ids:
            sides.append(f"{side} " + ", ".join(_short(str(i)) for i in ids[:2]))
    return "typical trials: " + "; ".join(sides) if sides else ""


def behaviour_lines(test: Mapping[str, Any], limit: int = SHOWN) -> list[str]:
    """The behaviour verdict and its largest changes, one line each (empty without one)."""
    behaviour = test.get("behaviour")
    if not isinstance(behaviour, Mapping):
        return []
    lines = [f"behaviour {behaviour['verdict']}: {behaviour['reason']}"]
    changes = list(behaviour.get("changes") or ())
    for change in changes[:limit]:
        adjusted = change.get("adjusted_p")
        p = f" (adjusted p = {adjusted:.2g})" if isinstance(adjusted, float) else ""
        examples = examples_text(change)
        lines.append(f"  - {change['text']}{p}" + (f"; {examples}" if examples else ""))
    if len(changes) > limit:
        lines.append(f"  - and {len(changes) - limit} more (see the JSON or HTML report)")
    return lines


def _trace_links(ids: Any, trace_url: str | None) -> str:
    cells = []
    for trace_id in list(ids or ())[:3]:
        code = f"<code>{html.escape(_short(str(trace_id)))}</code>"
        if trace_url:
            url = html.escape(trace_url.replace("{trace_id}", str(trace_id)), quote=True)
            code = f'<a href="{url}">{code}</a>'
        cells.append(code)
    return " ".join(cells) or "—"


def behaviour_html(test: Mapping[str, Any], trace_url: str | None = None) -> str:
    """The "what changed" section of a test's HTML report ("" without a behaviour diff)."""
    behaviour = test.get("behaviour")
    if not isinstance(behaviour, Mapping):
        return ""
    e = html.escape
    rows = []
    for change in behaviour.get("changes") or ():
        rows.append(
            "<tr>"
            f"<td>{e(str(change['text']))}</td>"
            f"<td>{change['adjusted_p']:.2g}</td>"
            f"<td>{_trace_links(change.get('baseline_traces'), trace_url)}</td>"
            f"<td>{_trace_links(change.get('current_traces'), trace_url)}</td>"
            "</tr>"
        )
    table = (
        "<table><thead><tr><th>change</th><th>adjusted p</th><th>baseline trials</th>"
        f"<th>current trials</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        if rows
        else ""
    )
    return (
        f'<section class="behaviour"><h3>What changed: {e(str(behaviour["verdict"]))}</h3>'
        f"<p>{e(str(behaviour['reason']))}</p>{table}</section>"
    )
