"""The suite's behaviour diff: each behaviour feature's mean paired change over the cases.

A case of a few trials a version cannot show that its behaviour changed; a suite of many can.
Per case and version the mean of each feature over the case's counted trials (one Polars
aggregation a version, :func:`behaviour_table`); per feature, the mean over the paired cases
of the per-case differences (current − baseline), tested across cases as the suite comparison
tests its score, cost and duration (:mod:`assay.stats.suites._paired`): a two-sided sign-flip
test and the paired t interval (:mod:`assay.stats.suites._sign_flip`), Holm across the suite's
features (Benjamini–Hochberg under ``--adjust bh``).

The verdict keeps the per-case diff's meaning (:mod:`._behaviour`): CHANGED when some feature's
adjusted p-value lies below alpha; UNCHANGED only when every feature had the required power to
see its kind's minimal effect (:data:`assay.stats.MINIMAL_EFFECTS`) at alpha / features (Holm's
first step); else INCONCLUSIVE, with the smallest changes it could see. docs/statistics.md,
"The suite's behaviour diff".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from assay.analysis import columns as tc
from assay.analysis import is_work_feature
from assay.choices import Adjustment
from assay.judge._behaviour_result import BehaviourVerdict
from assay.judge._gate import FailOn, parse_fail_on
from assay.judge._options import AnalyzeOptions
from assay.judge._suite_result import SuiteBehaviour, SuiteFeatureShift
from assay.stats import (
    DEFAULT_PERMUTATIONS,
    EXACT_SIGN_FLIP_CASES,
    MINIMAL_EFFECTS,
    BehaviourKind,
    Interval,
    adjust_p_values,
    detectable_difference,
    mean_difference_power,
    paired_t_interval,
    sign_flip_two_sided,
)

FEATURE = "feature"
VALUE = "value"
WORK_UNKNOWN = "_work_unknown"
"""The feature row of :func:`behaviour_table` counting a case's trials of unknown work."""

_NUMERIC: tuple[tuple[str, pl.Expr], ...] = (
    ("steps", pl.col(tc.TOOL_CALLS).fill_null(0).cast(pl.Float64)),
    ("llm_calls", pl.col(tc.LLM_CALLS).fill_null(0).cast(pl.Float64)),
    ("input_tokens", pl.col(tc.INPUT_TOKENS).fill_null(0).cast(pl.Float64)),
    ("output_tokens", pl.col(tc.OUTPUT_TOKENS).fill_null(0).cast(pl.Float64)),
    ("latency", pl.col(tc.DURATION_S).fill_null(0).cast(pl.Float64)),
    ("error_spans", (pl.col(tc.ERROR_SPANS).fill_null(0) > 0).cast(pl.Float64)),
)
"""The per-trial numbers of the per-case diff (``analysis._behaviour_features``), null as 0."""

_KINDS: dict[str, BehaviourKind] = {
    "steps": "count",
    "llm_calls": "count",
    "input_tokens": "continuous",
    "output_tokens": "continuous",
    "latency": "continuous",
    "error_spans": "binary",
    "uses": "binary",
    "tool_calls": "count",
    "model": "binary",
}

_LABELS = {
    "steps": "tool calls/trial",
    "llm_calls": "LLM calls/trial",
    "input_tokens": "input tokens/trial",
    "output_tokens": "output tokens/trial",
    "latency": "latency/trial (s)",
    "error_spans": "trials with error spans",
}


def _kind(feature: str) -> BehaviourKind:
    return _KINDS[feature.split(":", 1)[0]]


def _label(feature: str) -> str:
    head, _, name = feature.partition(":")
    if head == "tool_calls":
        return f"calls to {name}/trial"
    return _LABELS.get(feature, feature)


def behaviour_table(trials: pl.DataFrame, excluded: Mapping[str, bool]) -> pl.DataFrame:
    """Every case's mean of every behaviour feature over its counted trials, in long form.

    Args:
        trials: A version's trials table.
        excluded: Case id → whether its error trials are left out of n (as ``case_table``).

    Returns:
        Columns ``test_id``, ``suite``, ``feature``, ``value``: the numbers of
        :data:`_NUMERIC`; ``uses:<tool>`` (share of the case's trials calling it) and
        ``tool_calls:<tool>`` (calls per trial) of each tool it called; ``model:<model>`` (share
        of trials using it); and :data:`WORK_UNKNOWN` (its trials of unknown work, a count).
        A tool or model a case never used has no row (it counts 0).
    """
    keys = [tc.TEST_ID, tc.SUITE]
    exclude = pl.col(tc.TEST_ID).replace_strict(
        dict(excluded), default=False, return_dtype=pl.Boolean
    )
    counted = trials.filter(~(pl.col(tc.ERROR).fill_null(False) & exclude)).with_row_index("_t")
    unknown = (
        pl.col(tc.WORK_UNKNOWN).fill_null(False).sum()
        if tc.WORK_UNKNOWN in counted.columns
        else pl.lit(0)
    )
    # Latency sorted before the mean, as case_table: the sum's last bits then do not depend on
    # the order the trials came in. The others are whole numbers, summed exactly in any order.
    numbers = counted.group_by(keys).agg(
        pl.len().alias("_n"),
        *(
            (expr.sort() if name == "latency" else expr).mean().alias(name)
            for name, expr in _NUMERIC
        ),
        unknown.cast(pl.Float64).alias(WORK_UNKNOWN),
    )
    sizes = numbers.select(*keys, "_n")
    long = [
        numbers.drop("_n").unpivot(index=keys, variable_name=FEATURE, value_name=VALUE),
        *_per_name(counted, tc.TOOL_SEQUENCE, sizes, ("uses", "tool_calls")),
        *_per_name(counted, tc.MODELS, sizes, ("model",)),
    ]
    return pl.concat([frame.select(*keys, FEATURE, VALUE) for frame in long])


def _per_name(
    counted: pl.DataFrame, column: str, sizes: pl.DataFrame, features: Sequence[str]
) -> list[pl.DataFrame]:
    """Per case and name in a list column: the share of trials with it, and its calls a trial."""
    keys = [tc.TEST_ID, tc.SUITE]
    if int(counted[column].list.len().sum()) == 0:  # no trial used any (no model named)
        return []
    named = (
        counted.select(*keys, "_t", pl.col(column).alias("_name"))
        .explode("_name")
        .drop_nulls("_name")
        .group_by(*keys, pl.col("_name").cast(pl.String))
        .agg(pl.col("_t").n_unique().alias("_trials"), pl.len().alias("_calls"))
        .join(sizes, on=keys, nulls_equal=True)
    )
    out = []
    for feature, count in zip(features, ("_trials", "_calls"), strict=False):
        out.append(
            named.select(
                *keys,
                (pl.lit(f"{feature}:") + pl.col("_name")).alias(FEATURE),
                (pl.col(count) / pl.col("_n")).alias(VALUE),
            )
        )
    return out


def _matrix(
    table: pl.DataFrame, cases: pl.DataFrame, features: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """(cases × features) values of one version (0 where a case has no row), and unknown work."""
    index = {name: j for j, name in enumerate(features)}
    rows = table.join(cases, on=tc.TEST_ID)
    out = np.zeros((cases.height, len(features)))
    kept = rows.filter(pl.col(FEATURE).is_in(features))
    column = kept[FEATURE].replace_strict(index, return_dtype=pl.Int64).to_numpy()
    out[kept["_case"].to_numpy(), column] = kept[VALUE].to_numpy()
    unknown = rows.filter(pl.col(FEATURE) == WORK_UNKNOWN)[VALUE].to_numpy()
    return out, unknown


def suite_behaviour(
    current: pl.DataFrame,
    baseline: pl.DataFrame,
    paired: Sequence[str],
    options: AnalyzeOptions,
    confidence: float,
) -> SuiteBehaviour | None:
    """The suite's behaviour diff over the ``paired`` cases (None without a paired case).

    Args:
        current: The current version's :func:`behaviour_table` rows of this suite.
        baseline: The baseline's rows of this suite.
        paired: The cases both versions answered.
        options: alpha, power, ``--adjust`` and the seed.
        confidence: Level of the intervals.
    """
    if not paired:
        return None
    cases = pl.DataFrame(
        {tc.TEST_ID: list(paired), "_case": np.arange(len(paired))},
        schema={tc.TEST_ID: current.schema[tc.TEST_ID], "_case": pl.Int64},
    )
    names = pl.concat([current[FEATURE], baseline[FEATURE]]).unique().sort().to_list()
    features = [f for f in names if f != WORK_UNKNOWN]
    now, unknown_now = _matrix(current, cases, features)
    before, unknown_before = _matrix(baseline, cases, features)
    left_out = []
    unknown = (int(unknown_before.sum()), int(unknown_now.sum()))
    if any(unknown):
        keep = [j for j, f in enumerate(features) if not is_work_feature(f)]
        features = [features[j] for j in keep]
        now, before = now[:, keep], before[:, keep]
        left_out.append(
            f"the tool and LLM work of {unknown[0]} baseline and {unknown[1]} current trial(s) "
            "is unknown (spans no convention claims): only latency and error spans are compared"
        )
    return _diff(before, now, features, options, confidence, tuple(left_out))


def _diff(
    before: np.ndarray,
    now: np.ndarray,
    features: list[str],
    options: AnalyzeOptions,
    confidence: float,
    left_out: tuple[str, ...],
) -> SuiteBehaviour:
    adjustment = Adjustment.BH if options.adjust == Adjustment.BH else Adjustment.HOLM
    cases = now.shape[0]
    differences = now - before
    tests = sign_flip_two_sided(differences, seed=options.seed)
    adjusted = adjust_p_values(tests.p_values, adjustment) if features else np.empty(0)
    level = options.alpha / max(1, len(features))
    base_means, now_means = before.mean(axis=0), now.mean(axis=0)
    shifts = []
    for j, feature in enumerate(features):
        kind = _kind(feature)
        d = differences[:, j]
        spread = float(d.std(ddof=1)) if cases > 1 else 0.0
        base = float(base_means[j])
        reference = base if base > 0 else float(now_means[j])
        minimal = (
            MINIMAL_EFFECTS[kind]
            if kind == "binary"
            else (1 - 1 / MINIMAL_EFFECTS[kind]) * reference
        )
        mean = float(d.mean())
        interval = (
            paired_t_interval(d, confidence)
            if cases > 1
            else Interval(mean, mean, confidence, "paired-t")
        )
        shifts.append(
            SuiteFeatureShift(
                feature=feature,
                label=_label(feature),
                kind=kind,
                baseline=base,
                current=float(now_means[j]),
                difference=mean,
                relative=mean / base if kind != "binary" and base > 0 else None,
                interval=interval,
                test=tests.tests[j],
                p_value=float(tests.p_values[j]),
                p_value_error=None if np.isnan(tests.errors[j]) else float(tests.errors[j]),
                adjusted_p=float(adjusted[j]),
                changed=bool(adjusted[j] < options.alpha),
                minimal_effect=minimal,
                # A feature 0 in every trial of both versions has minimal 0 and spread 0: any
                # change would show (power 1, as the per-case diff's for values that never vary).
                power=mean_difference_power(cases, minimal, spread, level),
                detectable=detectable_difference(cases, spread, level, options.power),
            )
        )
    shifts.sort(key=lambda s: (not s.changed, s.adjusted_p if s.changed else 0.0, s.feature))
    verdict, reason = _verdict(shifts, cases, options, adjustment)
    rules = [parse_fail_on(rule) for rule in options.fail_on]
    return SuiteBehaviour(
        verdict,
        reason,
        cases,
        tuple(shifts),
        options.alpha,
        adjustment,
        options.power,
        left_out,
        broken_rules(shifts, rules),
    )


def broken_rules(shifts: Sequence[SuiteFeatureShift], rules: Sequence[FailOn]) -> tuple[str, ...]:
    """The ``--fail-on`` rules the suite's changed features break, one line each.

    A rule reads a suite's feature as it reads a case's (``judge/_gate.py``): only a feature that
    changed after adjustment, and with a limit only when the estimate reaches it — for a mean
    the ratio of the suite's means (current / baseline), for a share the difference in points.
    """
    out = []
    for rule in rules:
        broken = [
            s
            for s in shifts
            if s.changed
            and rule.watches(s.feature)
            and rule.past_limit(
                s.difference if s.kind == "binary" else _ratio(s), ratio=s.kind != "binary"
            )
        ]
        if broken:
            more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
            out.append(f"--fail-on {rule.text or rule.target}: {describe_shift(broken[0])}{more}")
    return tuple(out)


def _ratio(shift: SuiteFeatureShift) -> float | None:
    """The ratio of the means; None when the mean rose from 0 (infinitely many percent)."""
    return shift.current / shift.baseline if shift.baseline > 0 else None


def _verdict(
    shifts: Sequence[SuiteFeatureShift],
    cases: int,
    options: AnalyzeOptions,
    adjustment: str,
    resamples: int = DEFAULT_PERMUTATIONS,
) -> tuple[BehaviourVerdict, str]:
    how = "Holm" if adjustment == Adjustment.HOLM else "Benjamini–Hochberg"
    if not shifts:
        return BehaviourVerdict.INCONCLUSIVE, "no behaviour feature to compare"
    changed = [s for s in shifts if s.changed]
    if changed:
        return BehaviourVerdict.CHANGED, (
            f"{len(changed)} of {len(shifts)} features changed over {cases} paired cases "
            f"(two-sided sign-flip tests, {how} across the features, adjusted p < "
            f"{options.alpha:g})"
        )
    weak = [s for s in shifts if s.power < options.power]
    if not weak:
        return BehaviourVerdict.UNCHANGED, (
            f"no change in {len(shifts)} features over {cases} paired cases, each with power "
            f"≥ {options.power:.0%} to see its minimal effect"
        )
    level = options.alpha / len(shifts)
    smallest = 2.0 ** (1 - cases) if cases <= EXACT_SIGN_FLIP_CASES else 1 / (1 + resamples)
    if smallest >= level:
        return BehaviourVerdict.INCONCLUSIVE, (
            f"{cases} paired case(s) cannot show a behaviour change: the smallest p-value they "
            f"can reach, {smallest:.2g}, is above alpha / features = {level:.2g} "
            f"({len(shifts)} features)"
        )
    seen = [f"{s.label} {describe_size(s, s.detectable)}" for s in weak[:4]]
    more = f", … {len(weak) - 4} more" if len(weak) > 4 else ""
    return BehaviourVerdict.INCONCLUSIVE, (
        f"no feature changed over {cases} paired cases, but {len(weak)} of {len(shifts)} lack "
        f"power ≥ {options.power:.0%} for their minimal effect: it could see changes of "
        + ", ".join(seen)
        + more
    )


def describe_size(shift: SuiteFeatureShift, size: float | None) -> str:
    """A change's size in the feature's units: ``±6.1 points``, ``±112 (9%)``, ``—``."""
    if size is None:
        return "— (none)"
    if shift.kind == "binary":
        return f"±{100 * size:.1f} points"
    text = f"±{size:.3g}"
    if shift.baseline > 0:
        text += f" ({100 * size / shift.baseline:.0f}%)"
    return text


def describe_shift(shift: SuiteFeatureShift) -> str:
    """``uses:search +6.0 points [+4.0, +8.0] (p 0.0004 adj.)``; counts add the relative change."""
    low, high = shift.interval.low, shift.interval.high
    if shift.kind == "binary":
        text = f"{shift.label} {_signed(100 * shift.difference, '+.1f')} points"
        bounds = f"[{_signed(100 * low, '+.1f')}, {_signed(100 * high, '+.1f')}]"
    else:
        text = f"{shift.label} {_signed(shift.difference, '+.3g')}"
        if shift.relative is not None:
            text += f" ({_signed(100 * shift.relative, '+.0f')}%)"
        bounds = f"[{_signed(low, '+.3g')}, {_signed(high, '+.3g')}]"
    return f"{text} {bounds} (p {shift.adjusted_p:.2g} adj.)"


def _signed(value: float, spec: str) -> str:
    """A number with a true minus sign (``−4.0``)."""
    return format(value, spec).replace("-", "−")
