"""Words and numbers shared by every report, read from a test's JSON-ready dict.

Every format renders the same figures the same way, so they are spelled here once. The input
is always the ``assay.analysis/v1`` object of one test (:func:`assay.report.test_to_dict`),
whose nested figures (pass@k, score, tool consistency, flakiness, regression) may be null;
each helper returns ``None`` (or an empty list) when it has nothing to say.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeGuard

from assay.report._behaviour import behaviour_lines, cost_text

VERDICT_ORDER = {"FAIL": 0, "INCONCLUSIVE": 1, "PASS": 2}
"""Reports list the tests that need attention first."""

VERDICT_MARK = {"PASS": "✅", "FAIL": "❌", "INCONCLUSIVE": "⚠️"}


def pct(value: Any, digits: int = 1) -> str:
    """A proportion as a percentage (``0.433`` → ``43.3%``); ``—`` when missing."""
    if not _is_number(value):
        return "—"
    return f"{100 * float(value):.{digits}f}%"


def num(value: Any, digits: int = 3) -> str:
    """A number with up to ``digits`` significant digits; ``—`` when missing."""
    if not _is_number(value):
        return "—"
    return f"{float(value):.{digits}g}"


def _is_number(value: Any) -> TypeGuard[int | float]:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def by_severity(tests: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Tests ordered FAIL, INCONCLUSIVE, PASS, then by test id (a stable order)."""
    return sorted(tests, key=lambda t: (VERDICT_ORDER.get(str(t["verdict"]), 3), t["test_id"]))


def ci_text(test: Mapping[str, Any]) -> str:
    """``95% CI [61.0%, 82.9%]``, or ``no interval`` when n = 0."""
    ci = test.get("ci") or {}
    if ci.get("low") is None or ci.get("high") is None:
        return "no interval"
    confidence = ci.get("confidence")
    level = f"{100 * float(confidence):g}% " if _is_number(confidence) else ""
    return f"{level}CI [{pct(ci['low'])}, {pct(ci['high'])}]"


def rate_text(test: Mapping[str, Any]) -> str:
    """``43.3% (26/60)``."""
    return f"{pct(test.get('pass_rate'))} ({test['passed']}/{test['n']})"


def verdict_reason(test: Mapping[str, Any], *, with_regression: bool = True) -> str:
    """One sentence: the verdict and the interval against the threshold that decided it.

    Args:
        test: One test's ``assay.analysis/v1`` object.
        with_regression: Append the comparison with the baseline, when there is one.
    """
    verdict = str(test["verdict"])
    regression = test.get("regression")
    gate = test.get("behaviour_gate")
    if gate and isinstance(regression, Mapping):
        # A --fail-on rule decided: say which, then what the regression check found.
        rest = _regression_reason({**test, "verdict": regression.get("verdict")}, regression)
        return f"FAIL: {'; '.join(gate)}; pass rate: {rest.split(': ', 1)[-1]}"
    if isinstance(regression, Mapping) and regression.get("verdict") is not None:
        return _regression_reason(test, regression)
    threshold = pct(test.get("threshold"))
    ci = test.get("ci") or {}
    if ci.get("low") is None:
        reason = f"{verdict}: no pass rate to judge ({test.get('n', 0)} trials counted)"
    elif verdict == "FAIL":
        reason = (
            f"FAIL: pass rate {rate_text(test)}, {ci_text(test)} lies wholly below the "
            f"threshold {threshold}"
        )
    elif verdict == "PASS":
        reason = (
            f"PASS: pass rate {rate_text(test)}, {ci_text(test)} lies at or above the "
            f"threshold {threshold}"
        )
    else:
        reason = (
            f"{verdict}: pass rate {rate_text(test)}, {ci_text(test)} straddles the "
            f"threshold {threshold}"
        )
    errors = int(test.get("errors") or 0)
    if errors:
        reason += f"; {errors} error trial{'s' if errors != 1 else ''}"
    regression = regression_text(test) if with_regression else None
    if regression:
        reason += f"; {regression}"
    return reason


def _regression_reason(test: Mapping[str, Any], regression: Mapping[str, Any]) -> str:
    """With a baseline the verdict answers "did it get worse?": say why, in one sentence."""
    verdict = str(test["verdict"])
    p, alpha = regression.get("p_value"), regression.get("alpha")
    power, delta = regression.get("power"), regression.get("delta")
    required = regression.get("required_power")
    p_adjusted = regression.get("p_adjusted")
    p_text = f"p = {num(p, 2)}" + (
        f" (adjusted {num(p_adjusted, 2)})" if _is_number(p_adjusted) else ""
    )
    base_n, base_passed = regression.get("baseline_n"), regression.get("baseline_passed")
    change = ""
    if _is_number(base_n) and _is_number(base_passed) and base_n:
        change = f"{pct(base_passed / base_n)} ({base_passed}/{base_n}) → {rate_text(test)}"
    test_name = regression.get("test") or "exact test"
    if str(regression.get("verdict")) == "FAIL":
        reason = (
            f"FAIL: pass rate dropped, {change}; one-sided {test_name} {p_text} < {num(alpha, 2)}"
        )
    elif str(regression.get("verdict")) == "PASS":
        reason = (
            f"PASS: no drop, {change} ({test_name} {p_text}), and the check had "
            f"{pct(power, 0)} power to detect a {pct(delta, 0)} drop"
        )
    else:
        needed = f" (needs {pct(required, 0)})" if _is_number(required) else ""
        reason = (
            f"INCONCLUSIVE: no significant drop, {change} ({test_name} {p_text}), but only "
            f"{pct(power, 0)} power to detect a {pct(delta, 0)} drop{needed}; more trials "
            "per version would settle it (assay plan)"
        )
    if verdict != str(regression.get("verdict")):
        reason = f"{verdict} (scores dropped) — " + reason.split(": ", 1)[1]
    errors = int(test.get("errors") or 0)
    if errors:
        reason += f"; {errors} error trial{'s' if errors != 1 else ''}"
    if (test.get("ci") or {}).get("low") is not None:
        against = test.get("threshold_verdict")
        reason += f"; now {ci_text(test)} against the threshold {pct(test.get('threshold'))}" + (
            f" ({against})" if against else ""
        )
    return reason


def passk_points(values: Any) -> list[tuple[int, float | None]]:
    """``{k: value}`` (k a string; value a number, null or ``{value: ...}``) as sorted pairs."""
    if not isinstance(values, Mapping):
        return []
    points: list[tuple[int, float | None]] = []
    for key, value in values.items():
        if isinstance(value, Mapping):
            value = value.get("value")
        if str(key).isdigit():
            points.append((int(key), float(value) if _is_number(value) else None))
    return sorted(points)


def passk_text(values: Any, symbol: str) -> str | None:
    """``pass@1 73% · pass@5 99%`` from a ``{k: value}`` object; None when absent."""
    points = passk_points(values)
    if not points:
        return None
    return " · ".join(f"{symbol}{k} {pct(value, 0)}" for k, value in points)


def score_summaries(test: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The score summaries by score name (``scores: {name: {...}}``, else ``score``).

    A ``score`` object without a ``name`` is keyed by the empty string.
    """
    per_name = test.get("scores")
    if isinstance(per_name, Mapping) and per_name:
        return {str(k): v for k, v in per_name.items() if isinstance(v, Mapping)}
    score = test.get("score")
    if isinstance(score, Mapping):
        return {str(score.get("name") or ""): score}
    return {}


def score_text(summary: Mapping[str, Any]) -> str:
    """``mean 71.2 (95% CI 68.1–74.3), p50 70, p90 88, range 45–95``."""
    text = f"mean {num(summary.get('mean'))}"
    if summary.get("ci_low") is not None and summary.get("ci_high") is not None:
        text += f" (CI {num(summary['ci_low'])}–{num(summary['ci_high'])})"
    elif summary.get("std") is not None:
        text += f" ± {num(summary['std'])} sd"
    extras = [f"{key} {num(summary[key])}" for key in ("p50", "p90") if key in summary]
    if summary.get("min") is not None and summary.get("max") is not None:
        extras.append(f"range {num(summary['min'])}–{num(summary['max'])}")
    return ", ".join([text, *extras])


def _top_sequences(value: Mapping[str, Any]) -> list[tuple[list[str], int]]:
    raw = value.get("top", value.get("most_common")) or []
    out: list[tuple[list[str], int]] = []
    for item in raw:
        if isinstance(item, Mapping):
            out.append((list(item.get("sequence") or []), int(item.get("count") or 0)))
        elif isinstance(item, Sequence) and len(item) == 2:
            out.append((list(item[0]), int(item[1])))
    return out


def tool_consistency_text(value: Any) -> str | None:
    """Tool-choice consistency in words, from a number or an object; None when absent."""
    if _is_number(value):
        return f"consistency {pct(value, 0)}"
    if not isinstance(value, Mapping):
        return None
    parts = []
    if _is_number(value.get("agreement")):
        parts.append(f"{pct(value['agreement'], 0)} of trial pairs took the same path")
    if value.get("distinct") is not None:
        distinct = int(value["distinct"])
        parts.append(f"{distinct} distinct sequence{'s' if distinct != 1 else ''}")
    similarity = value.get("similarity", value.get("mean_similarity"))
    if _is_number(similarity):
        parts.append(f"mean similarity {num(similarity, 2)}")
    top = _top_sequences(value)
    if top:
        sequence, count = top[0]
        parts.append(f"most common: {sequence_text(sequence)} ({count}×)")
    return "; ".join(parts) or None


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


def flakiness_headline(value: Any) -> str | None:
    """``0.41 (moderate variance)``; None when absent."""
    if not isinstance(value, Mapping) or value.get("score") is None:
        return None
    category = str(value.get("category") or "").replace("_", " ")
    return f"{num(value['score'], 2)}" + (f" ({category})" if category else "")


def flakiness_reasons(value: Any, limit: int = 5) -> list[str]:
    """The factors behind a flakiness score, as sentences, largest contribution first.

    Factors whose value is 0 (nothing varies) are left out unless every factor is 0.
    """
    if not isinstance(value, Mapping):
        return []
    factors = [f for f in value.get("factors") or () if isinstance(f, Mapping)]
    varying = [f for f in factors if not _is_number(f.get("value")) or f["value"] > 0]
    lines = []
    for factor in varying or factors[:1]:
        name = str(factor.get("name", "")).replace("_", " ")
        detail = factor.get("detail") or name
        suffix = f" [{name} {num(factor.get('value'), 2)}]" if name else ""
        lines.append(f"{detail}{suffix}")
    return lines[:limit]


def failure_explanations(test: Mapping[str, Any], limit: int = 3) -> list[str]:
    """What failing trials do differently, as sentences, most significant first.

    Read from ``flakiness.explanations``, else a test-level ``explanations`` or
    ``failure_explanations`` list; each item has a ``detail`` sentence and a p-value.
    """
    flakiness = test.get("flakiness")
    found = flakiness.get("explanations") if isinstance(flakiness, Mapping) else None
    found = found or test.get("explanations") or test.get("failure_explanations") or []
    lines = []
    for item in found if isinstance(found, list) else ():
        if not isinstance(item, Mapping):
            continue
        detail = str(item.get("detail") or item.get("feature", ""))
        p_value = item.get("p_adjusted", item.get("p_value"))
        if _is_number(p_value) and not any(m in detail for m in ("p <", "p =", "p=", "p<")):
            detail += f" (p = {num(p_value, 2)})"
        lines.append(detail)
    return lines[:limit]


def regression_text(test: Mapping[str, Any]) -> str | None:
    """The comparison with the baseline in one phrase; None without a baseline."""
    regression = test.get("regression")
    if not isinstance(regression, Mapping):
        return None
    parts = []
    base_n, base_passed = regression.get("baseline_n"), regression.get("baseline_passed")
    if _is_number(base_n) and _is_number(base_passed) and base_n:
        parts.append(
            f"baseline {pct(base_passed / base_n)} ({base_passed}/{base_n}) → "
            f"now {pct(test.get('pass_rate'))}"
        )
    if _is_number(regression.get("p_value")):
        test_name = regression.get("test")
        parts.append(
            f"p = {num(regression['p_value'], 2)}" + (f" ({test_name})" if test_name else "")
        )
    if _is_number(regression.get("power")):
        delta = regression.get("delta")
        drop = f" to detect a {pct(delta, 0)} drop" if _is_number(delta) else ""
        parts.append(f"power {pct(regression['power'], 0)}{drop}")
    verdict = regression.get("verdict")
    head = f"regression {verdict}" if verdict else "regression"
    return f"{head}: " + ", ".join(parts) if parts else head


def score_label(name: str) -> str:
    """``score quality`` for a named score, ``score`` for the unnamed summary."""
    return f"score {name}" if name else "score"


def figure_lines(
    test: Mapping[str, Any], *, label: Callable[[str], str] = score_label
) -> list[str]:
    """pass@k, pass^k, each score and the tool consistency, one line each (those present)."""
    lines = []
    for key, symbol in (("pass_at_k", "pass@"), ("pass_hat_k", "pass^")):
        text = passk_text(test.get(key), symbol)
        if text:
            lines.append(text)
    for name, summary in score_summaries(test).items():
        lines.append(f"{label(name)}: {score_text(summary)}")
    tools = tool_consistency_text(test.get("tool_consistency"))
    if tools:
        lines.append(f"tools: {tools}")
    cost = cost_text(test)
    if cost:
        lines.append(cost)
    return lines


def explanation_lines(
    test: Mapping[str, Any], *, label: Callable[[str], str] = score_label
) -> list[str]:
    """Everything a text report says of one test, one line each.

    The reason for the verdict, the figures, why it is flaky, what failing trials do
    differently, and the notes.
    """
    lines = [verdict_reason(test), *figure_lines(test, label=label)]
    headline = flakiness_headline(test.get("flakiness"))
    if headline:
        lines.append(f"flakiness {headline}")
        lines += [f"  - {reason}" for reason in flakiness_reasons(test["flakiness"])]
    explanations = failure_explanations(test)
    if explanations:
        lines.append("failing trials differ:")
        lines += [f"  - {line}" for line in explanations]
    lines += behaviour_lines(test)
    lines += list(test.get("notes") or ())
    return lines
