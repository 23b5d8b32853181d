"""What decides the exit code: the one rule every command and report reads (docs/cli.md).

With a baseline and a suite of two cases or more, the question asked is "is the current
version worse over the suite?", and the suite's paired comparison answers it: PASS 0, FAIL 1,
INCONCLUSIVE 3. A case's own verdicts add to that answer only where they are valid at suite
scale or asked for:

- a case's regression (its pass rate dropped) counts as a FAIL once its p-value, adjusted across
  the suite's cases (Holm by default, ``--adjust`` chooses), lies below alpha — among 300 cases
  at alpha 0.05, about 15 unadjusted "drops" are expected by chance alone;
- a case's threshold verdict counts only when asked for: ``--threshold`` given, or
  ``--gate-cases`` (every case's verdict counts, as before suites were compared);
- a suite's threshold verdict counts when ``--suite-threshold`` is given;
- a ``--fail-on`` rule the suite's behaviour diff breaks counts as a FAIL of the suite (kind
  ``suite fail-on``);
- a ``--fail-on`` rule a case breaks counts (the user wrote the rule); in a compared suite the
  case's behaviour diff is adjusted across every feature of the suite's cases
  (:mod:`._behaviour_scope`), so a rule does not fire on the noise of many cases.

Without a baseline (or for a case in no compared suite) every case's verdict counts, and each
suite's threshold verdict when ``--suite-threshold`` is given. :func:`decide` is that rule,
once; :class:`Decision` is what every report leads with.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from assay.choices import Adjustment, RegressionTest
from assay.judge._gate import FailOn, gate_failures, parse_fail_on
from assay.judge._suite_result import SuiteResult
from assay.judge._threshold import Verdict
from assay.stats import adjust_p_values, regression_p_value

if TYPE_CHECKING:
    from assay.judge._behaviour_result import BehaviourResult
    from assay.judge._regression import RegressionResult


class CaseResult(Protocol):
    """What the rule reads of a case's result (:class:`assay.judge.TestResult` has it)."""

    @property
    def test_id(self) -> str: ...  # noqa: D102
    @property
    def verdict(self) -> Verdict: ...  # noqa: D102
    @property
    def threshold_verdict(self) -> Verdict | None: ...  # noqa: D102
    @property
    def regression(self) -> RegressionResult | None: ...  # noqa: D102
    @property
    def behaviour(self) -> BehaviourResult | None: ...  # noqa: D102


_SEVERITY = {Verdict.PASS: 0, Verdict.INCONCLUSIVE: 1, Verdict.FAIL: 2}

_METHOD: dict[str, str] = {Adjustment.HOLM: "Holm", Adjustment.BH: "Benjamini–Hochberg"}
"""An adjustment's name in a sentence."""

SUITE_RULE = "suite comparison"
"""The rule with a baseline and a suite: the suite comparison decides."""
CASE_RULE = "every case"
"""The rule without one: every case's verdict counts."""


SUITE_FAIL_ON = "suite fail-on"
"""The kind of a :class:`Counted` FAIL for a ``--fail-on`` rule a suite's behaviour diff breaks
(``what`` names the suite; :data:`CASE_KINDS` are a case's, their ``what`` a test id)."""

CASE_KINDS = frozenset({"case", "case threshold", "case regression", "fail-on"})
"""The kinds of :class:`Counted` verdict that are a case's (``what`` is its test id)."""


@dataclass(frozen=True, slots=True)
class Counted:
    """One verdict the exit code counts."""

    what: str
    """What was judged: ``suite support against the baseline``, ``case-0074``, ..."""
    verdict: Verdict
    """Its verdict."""
    kind: str
    """``comparison``, ``suite threshold``, ``suite fail-on``, ``case regression``, ``case
    threshold``, ``case`` (every verdict of the case) or ``fail-on``."""


@dataclass(frozen=True, slots=True)
class Decision:
    """The answer to the question asked, and what decided the exit code."""

    verdict: Verdict
    """The worst verdict counted (FAIL over INCONCLUSIVE over PASS); PASS when none is."""
    rule: str
    """:data:`SUITE_RULE` or :data:`CASE_RULE`."""
    decided_by: str
    """One phrase: what the exit code counted."""
    counted: tuple[Counted, ...]
    """Every verdict counted."""
    not_counted: str | None
    """What is reported but not counted, and the flag that counts it; None when nothing."""
    case_tests: str | None = None
    """Once, at suite scale: what a per-case regression test at these trials can and cannot
    detect (instead of each case's advice to run more trials); None otherwise."""

    def exit_code(self, inconclusive_ok: bool = False) -> int:
        """0 PASS, 1 FAIL, 3 INCONCLUSIVE (0 with ``inconclusive_ok``)."""
        return exit_code((self.verdict,), inconclusive_ok=inconclusive_ok)


def exit_code(verdicts: Iterable[Verdict], *, inconclusive_ok: bool = False) -> int:
    """The process exit code for a set of verdicts (docs/cli.md): 0, 1, or 3."""
    seen = set(verdicts)
    if Verdict.FAIL in seen:
        return 1
    if Verdict.INCONCLUSIVE in seen and not inconclusive_ok:
        return 3
    return 0


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    """The worst of the verdicts (FAIL over INCONCLUSIVE over PASS); PASS for none."""
    return max(verdicts, key=_SEVERITY.__getitem__, default=Verdict.PASS)


def compared_suites(suites: Sequence[SuiteResult]) -> list[SuiteResult]:
    """The suites whose comparison with a baseline decides: two cases or more in either version.

    A suite the current version ran no case of is compared too: its cases are missing, and its
    comparison says so (INCONCLUSIVE at best).
    """
    return [
        s
        for s in suites
        if s.comparison is not None and (s.cases >= 2 or s.comparison.baseline_cases >= 2)
    ]


def threshold_verdict(test: CaseResult) -> Verdict:
    """A case's verdict against its threshold (with a baseline, kept beside the regression's)."""
    return test.threshold_verdict if test.threshold_verdict is not None else test.verdict


def decide(
    tests: Sequence[CaseResult],
    suites: Sequence[SuiteResult],
    options: Mapping[str, object],
) -> Decision:
    """The rule of the module docstring, applied to an analysis's results."""
    compared = compared_suites(suites)
    counted: list[Counted] = [
        Counted(f"suite {_name(s)} against the threshold", s.verdict, "suite threshold")
        for s in suites
        if s.counts
    ]
    if not compared:
        counted += [Counted(t.test_id, t.verdict, "case") for t in tests]
        return Decision(
            worst(c.verdict for c in counted),
            CASE_RULE,
            "every case's verdict"
            + (" and the suite threshold" if len(counted) > len(tests) else ""),
            tuple(counted),
            None,
        )
    by_id = {t.test_id: t for t in tests}
    in_suite = {case for s in compared for case in s.case_ids}
    gate_cases = bool(options.get("gate_cases"))
    threshold_asked = options.get("threshold") is not None
    method = exit_adjustment(options.get("adjust"))
    fail_on = options.get("fail_on") or ()
    rules = [parse_fail_on(str(rule)) for rule in (fail_on if isinstance(fail_on, tuple) else ())]
    drops: list[str] = []
    judged_cases: list[CaseResult] = []
    for suite in compared:
        comparison = suite.comparison
        assert comparison is not None  # compared_suites keeps compared suites only
        counted.append(
            Counted(f"suite {_name(suite)} against the baseline", comparison.verdict, "comparison")
        )
        if comparison.behaviour is not None and comparison.behaviour.fail_on:
            # A --fail-on rule the suite's behaviour diff breaks: the user wrote the rule.
            counted.append(
                Counted(f"suite {_name(suite)}'s behaviour", Verdict.FAIL, SUITE_FAIL_ON)
            )
        cases = [by_id[c] for c in suite.case_ids if c in by_id]
        judged_cases += cases
        if gate_cases:
            counted += [Counted(t.test_id, t.verdict, "case") for t in cases]
            continue
        for test in _dropped(cases, method):
            drops.append(test.test_id)
            counted.append(Counted(test.test_id, Verdict.FAIL, "case regression"))
        for test in cases:
            if threshold_asked:
                counted.append(Counted(test.test_id, threshold_verdict(test), "case threshold"))
            if _broke_rule(test, rules):
                counted.append(Counted(test.test_id, Verdict.FAIL, "fail-on"))
    # A case in no compared suite (its suite holds one case, or has no baseline) is judged alone.
    counted += [Counted(t.test_id, t.verdict, "case") for t in tests if t.test_id not in in_suite]
    return Decision(
        worst(c.verdict for c in counted),
        SUITE_RULE,
        _decided_by(compared, counted, drops, method, gate_cases, threshold_asked),
        tuple(counted),
        None if gate_cases or threshold_asked else _not_counted(tests, in_suite),
        None if gate_cases else _case_tests(judged_cases, method),
    )


def _name(suite: SuiteResult) -> str:
    return "all cases" if suite.suite is None else suite.suite


def suite_adjusted_p(cases: Sequence[CaseResult], method: str) -> dict[str, float]:
    """Each case's regression p-value adjusted across these cases (a suite's), by test id.

    Args:
        cases: The suite's cases; those without a regression result are left out.
        method: ``holm`` or ``bh`` (``none``: unadjusted).
    """
    rated = [(t.test_id, t.regression.p_value) for t in cases if t.regression is not None]
    if not rated:
        return {}
    adjusted = adjust_p_values([p for _, p in rated], method)
    return {name: float(p) for (name, _), p in zip(rated, adjusted, strict=True)}


def exit_adjustment(adjust: object) -> str:
    """The adjustment a case's drop is counted with: ``--adjust``'s, Holm when it is none."""
    method = str(adjust or Adjustment.NONE)
    return Adjustment.HOLM.value if method == Adjustment.NONE else method


def _dropped(cases: Sequence[CaseResult], method: str) -> list[CaseResult]:
    """The cases whose drop is significant with p-values adjusted across these cases."""
    adjusted = suite_adjusted_p(cases, method)
    return [
        t for t in cases if t.regression is not None and adjusted[t.test_id] < t.regression.alpha
    ]


def _case_tests(cases: Sequence[CaseResult], method: str) -> str | None:
    """What a case's regression test at the suite's usual trial counts can detect, in words."""
    rated = [t.regression for t in cases if t.regression is not None]
    if not rated:
        return None
    sizes = Counter((r.baseline_n, r.current_n) for r in rated)
    (base_n, current_n), _ = sizes.most_common(1)[0]
    usual = [r for r in rated if (r.baseline_n, r.current_n) == (base_n, current_n)]
    first = usual[0]
    trials = (
        f"{base_n} trials a version"
        if base_n == current_n
        else f"{base_n} baseline and {current_n} current trials"
    )
    power = max(r.power for r in usual)
    text = (
        f"per case, {trials}: at most {power:.0%} power to detect a "
        f"{first.delta * 100:g}-point drop"
    )
    if first.anytime_reason is not None or first.test == RegressionTest.ANYTIME:
        return text + "; the suite comparison answers for the suite"
    floor = regression_p_value(base_n, base_n, 0, current_n, first.test)
    extreme = f"{base_n}/{base_n} → 0/{current_n}"
    if method == Adjustment.HOLM:
        needed = first.alpha / len(rated)
        if floor >= needed:
            return (
                f"{text}; the smallest p-value a case can reach, {floor:.2g} ({extreme}), is "
                f"above the {needed:.2g} Holm needs over {len(rated)} cases, so no single case "
                "can show a drop: the suite comparison answers, and more trials per case are "
                "needed only to judge a case alone"
            )
        return (
            f"{text}; a case shows a drop once its p-value is below {needed:.2g} (Holm over "
            f"{len(rated)} cases; the smallest it can reach is {floor:.2g}, {extreme})"
        )
    return f"{text}; the smallest p-value a case can reach is {floor:.2g} ({extreme})"


def _broke_rule(test: CaseResult, rules: Sequence[FailOn]) -> bool:
    """A ``--fail-on`` rule failed the case."""
    return bool(rules) and test.behaviour is not None and bool(gate_failures(test.behaviour, rules))


def _decided_by(
    compared: Sequence[SuiteResult],
    counted: Sequence[Counted],
    drops: Sequence[str],
    method: str,
    gate_cases: bool,
    threshold_asked: bool,
) -> str:
    names = ", ".join(_name(s) for s in compared)
    parts = [f"the suite comparison against the baseline ({names})"]
    if gate_cases:
        parts.append("every case's verdict (--gate-cases)")
    else:
        cases = sum(s.cases for s in compared)
        named = ", ".join(drops[:5]) + (", …" if len(drops) > 5 else "")
        found = f"{len(drops)} significant ({named})" if drops else "none significant"
        parts.append(f"per-case drops {_METHOD[method]}-adjusted over {cases} cases: {found}")
        if threshold_asked:
            parts.append("every case's threshold verdict (--threshold)")
    if any(c.kind == "suite threshold" for c in counted):
        parts.append("the suite threshold (--suite-threshold)")
    if any(c.kind == SUITE_FAIL_ON for c in counted):
        parts.append("--fail-on rules broken by the suite's behaviour diff")
    if any(c.kind == "case" for c in counted):
        parts.append("the cases in no compared suite")
    return "; ".join(parts)


def _not_counted(tests: Sequence[CaseResult], in_suite: set[str]) -> str | None:
    verdicts = [threshold_verdict(t) for t in tests if t.test_id in in_suite]
    shown = ", ".join(
        f"{n} {v.value}" for v in Verdict if (n := sum(1 for x in verdicts if x is v))
    )
    if not shown:
        return None
    return (
        f"per-case threshold verdicts ({shown}) are reported, not counted: --threshold or "
        "--gate-cases counts them"
    )
