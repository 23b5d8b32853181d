"""The worked example in docs/statistics.md, recomputed from the library and from scipy.

Regenerate the block after a deliberate change with ``ASSAY_UPDATE_DOCS=1 pytest <this file>``.
"""

import os
import re
import warnings
from pathlib import Path

import pytest
from scipy import stats as sps

from assay.judge import regression_test, threshold_test
from assay.stats import (
    min_trials_for_pass,
    pass_at_k,
    pass_hat_k,
    plan_adaptive_threshold,
    plan_regression,
    plan_threshold,
    regression_p_value,
    regression_power,
    verdict_min_trials_for_pass,
    verdict_sides,
)

DOC = Path(__file__).parents[2] / "docs" / "statistics.md"
BLOCK = re.compile(
    r"(<!-- worked-example:start -->\n```text\n)(.*?)(```\n<!-- worked-example:end -->)", re.S
)


def worked_example() -> str:
    lines: list[str] = []
    out = lines.append

    # 1. Threshold verdict, cross-checked against scipy's Wilson and Clopper–Pearson bounds.
    t = threshold_test(28, 30, threshold=0.80)
    ci = sps.binomtest(28, 30).proportion_ci(0.95, "wilson")
    exact = sps.binomtest(28, 30).proportion_ci(0.95, "exact")
    lower_kept, upper_kept = (bool(side) for side in verdict_sides(30, 0.80))
    expected = (ci.low if lower_kept else exact.low, ci.high if upper_kept else exact.high)
    assert (t.interval.low, t.interval.high) == pytest.approx(expected, abs=1e-12)
    out("threshold check: 28 of 30 passed, threshold 0.80, Wilson 95% (verdict rule)")
    bounds = f"[{t.interval.low:.4f}, {t.interval.high:.4f}]"
    out(f"  interval               {bounds} ({t.interval.method})")
    out(f"  verdict                {t.verdict}")
    out(f"  more trials needed     {t.more_trials_needed} (judged again with the anytime interval)")
    needed = min_trials_for_pass(0.9)
    assert needed is not None
    low_needed = sps.binomtest(needed, needed).proportion_ci(0.95, "wilson").low
    low_before = sps.binomtest(needed - 1, needed - 1).proportion_ci(0.95, "wilson").low
    assert low_before < 0.9 <= low_needed
    out(f"  fewest trials for PASS at 0.90: {needed} with Wilson's interval (all passing)")
    rule = verdict_min_trials_for_pass(0.9)
    assert rule is not None and sps.binom.pmf(needed, needed, 0.9) > 0.025
    out(f"  fewest for the verdict rule:    {rule} (0.9^{needed} > 2.5%)")

    # 2. pass@k and pass^k.
    out("")
    out("pass@k / pass^k for 28 of 30:")
    for k in (1, 5, 10):
        at, hat = pass_at_k(30, 28, k).value, pass_hat_k(30, 28, k).value
        assert at is not None and hat is not None
        out(f"  k = {k:<2}  pass@k {at:.4f}   pass^k {hat:.4f}")

    # 3. Regression verdicts, p-values cross-checked against scipy.
    out("")
    out("regression (one-sided Boschloo, alpha 0.05, delta 0.10, power 0.80):")
    for b, nb, c, nc in [(27, 30, 20, 30), (27, 30, 26, 30), (180, 200, 178, 200)]:
        r = regression_test(b, nb, c, nc)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = sps.boschloo_exact([[b, c], [nb - b, nc - c]], alternative="greater").pvalue
        assert r.p_value == pytest.approx(ref, rel=1e-7)
        assert r.power == regression_power(nb, nc, b / nb, 0.10, 0.05, "boschloo")
        out(f"  {b}/{nb} -> {c}/{nc}: p = {r.p_value:.4f}, power = {r.power:.3f}, {r.verdict}")

    # 4. Planning.
    out("")
    tp = plan_threshold(0.80, 0.90, power=0.80)
    assert tp.power is not None
    out("plan: threshold 0.80, true rate 0.90, P(PASS) >= 0.80, Wilson 95% (verdict rule)")
    out(f"  n = {tp.n} (P(PASS) = {tp.power:.3f}); stays >= 0.80 from n = {tp.stable_n}")
    ap = plan_adaptive_threshold(0.80, 0.90, power=0.80)
    assert ap.power is not None and ap.expected_trials is not None
    out("plan: the same, adaptive (assay run's default: the 95% confidence sequence)")
    out(
        f"  maximum {ap.max_trials} (P(PASS) = {ap.power:.3f}), "
        f"{ap.expected_trials:.1f} trials on average at 0.90"
    )
    rp = plan_regression(0.90, 0.10, 0.05, 0.80)
    assert rp.power is not None and rp.test == "boschloo"
    out("plan: baseline 0.90, drop 0.10, alpha 0.05, power 0.80, Boschloo (the default)")
    out(f"  n = {rp.n_per_arm} per version (power {rp.power:.3f})")
    return "\n".join(lines) + "\n"


def test_worked_example_in_docs_matches_the_library() -> None:
    text = DOC.read_text(encoding="utf-8")
    match = BLOCK.search(text)
    assert match, "docs/statistics.md lost its worked-example block"
    expected = worked_example()
    if os.environ.get("ASSAY_UPDATE_DOCS") == "1":
        DOC.write_text(BLOCK.sub(lambda m: m.group(1) + expected + m.group(3), text), "utf-8")
        return
    assert match.group(2) == expected


def test_figures_quoted_in_the_prose_match_the_library() -> None:
    text = DOC.read_text(encoding="utf-8")
    reading = text.split("<!-- worked-example:end -->", 1)[1]
    t = threshold_test(28, 30, threshold=0.80)
    small = regression_test(27, 30, 20, 30)
    large = regression_test(180, 200, 178, 200)
    for figure in (
        f"{28 / 30:.0%}",
        f"{t.interval.low:.1%}",
        f"{small.power:.0%} power",
        f"the power is {large.power:.0%}",
    ):
        assert figure in reading, figure
    assert f"`min_trials_for_pass(0.9)` = {min_trials_for_pass(0.9)} trials" in text
    barnard = regression_p_value(142, 169, 114, 138, "barnard")
    assert f"instead of {barnard:.3f} for 142/169 → 114/138" in " ".join(text.split())


def test_flakiness_table_in_docs_matches_the_code() -> None:
    from assay.stats import CATEGORIES, WEIGHTS

    text = DOC.read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+)` \| ([0-9.]+) \|", text, re.M))
    assert {name: float(w) for name, w in rows.items()} == WEIGHTS
    limits = [f"below {limit:.2f} `{name}`" for limit, name in CATEGORIES[:-1]]
    flat = " ".join(text.split())
    for limit in limits:
        assert limit in flat, limit
    assert f"else `{CATEGORIES[-1][1]}`" in flat
