"""What ``assay plan`` plans, and how long it takes: the table in docs/adaptive.md.

For each threshold and expected rate, the adaptive run's planned maximum (``assay plan``'s
default) beside the fixed run's n (``--fixed``), the trials the adaptive run uses on average at
the expected rate, its exact wrong-verdict rates at the threshold, and the seconds each plan
took; then the regression plan's time with each exact test.

    python benchmarks/bench_plan.py
"""

from __future__ import annotations

import time

from assay.stats import plan_adaptive_threshold, plan_regression, plan_threshold

CASES = ((0.5, 0.6), (0.5, 0.7), (0.8, 0.9), (0.8, 0.85), (0.9, 0.95), (0.95, 0.99))
"""(threshold, expected rate) pairs."""
REGRESSIONS = ((0.9, 0.1), (0.5, 0.1), (0.8, 0.05))
"""(baseline rate, drop) pairs."""


def main() -> None:
    """Print both tables."""
    print("power 0.80, confidence 0.95")
    print(
        "threshold expected  adaptive max  P(PASS)  mean trials  P(FAIL|T)  P(PASS|T)  s"
        "     fixed n  s"
    )
    for threshold, expected in CASES:
        start = time.perf_counter()
        plan = plan_adaptive_threshold(threshold, expected)
        adaptive_s = time.perf_counter() - start
        start = time.perf_counter()
        fixed = plan_threshold(threshold, expected)
        fixed_s = time.perf_counter() - start
        assert plan.power is not None and plan.expected_trials is not None
        assert plan.fail_at_threshold is not None and plan.pass_at_threshold is not None
        print(
            f"{threshold:9.2f} {expected:8.2f}  {plan.max_trials:12d}  {plan.power:7.3f}  "
            f"{plan.expected_trials:11.1f}  {plan.fail_at_threshold:9.4f}  "
            f"{plan.pass_at_threshold:9.4f}  {adaptive_s:4.1f}  {fixed.n:7d}  {fixed_s:4.1f}"
        )
    print("\nregression plan (alpha 0.05, power 0.80): n per version and seconds")
    for baseline, delta in REGRESSIONS:
        row = [f"baseline {baseline:.2f} drop {delta:.2f}:"]
        for test in ("fisher", "boschloo"):
            start = time.perf_counter()
            reg = plan_regression(baseline, delta, test=test)
            row.append(f"{test} {reg.n_per_arm} ({time.perf_counter() - start:.1f} s)")
        print("  ".join(row))


if __name__ == "__main__":
    main()
