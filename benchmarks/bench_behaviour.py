"""Calibration of the behaviour diff: false alarms on identical versions, power on planted ones.

Run: ``.venv/bin/python benchmarks/bench_behaviour.py`` (fixed seed; ``--reps`` per cell).

A simulated agent (search, a retry of search in 10 % of trials, verify in 80 %, answer; one
LLM call per step; log-normal tokens; gamma latency; error spans in 5 %; priced with the
default table) is compared with itself and with three planted changes:

* ``retry``: a further retry of ``search`` added in 30 % of trials (tokens follow the calls);
* ``tokens``: input and output tokens × 1.4;
* ``drop``: ``verify`` never called.

For each, at 30 and 100 trials per version (``--sizes``), the share of comparisons whose verdict is
CHANGED, and the share in which the planted feature itself is flagged. Every comparison goes
through the trials-table features (``assay.analysis.behaviour_sample``) and the verdict.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import polars as pl

from assay.analysis import behaviour_sample, with_cost
from assay.analysis import columns as tc
from assay.judge import BehaviourVerdict, behaviour_diff

PLANTED = {"retry": "tool_calls:search", "tokens": "input_tokens", "drop": "uses:verify"}


def trials(rng: np.random.Generator, n: int, change: str | None, side: str) -> pl.DataFrame:
    retries = (rng.random(n) < 0.1).astype(int)
    if change == "retry":
        retries += rng.random(n) < 0.3
    verify = rng.random(n) < (0.0 if change == "drop" else 0.8)
    paths = [
        ["search"] * (1 + int(r)) + (["verify"] if v else []) + ["answer"]
        for r, v in zip(retries, verify, strict=True)
    ]
    steps = np.array([len(p) for p in paths])
    scale = 1.4 if change == "tokens" else 1.0
    frame = pl.DataFrame(
        {
            tc.TRACE_ID: [f"{side}{i:031x}" for i in range(n)],
            tc.TOOL_SEQUENCE: paths,
            tc.TOOL_CALLS: steps,
            tc.LLM_CALLS: steps + 1,
            tc.INPUT_TOKENS: np.round(rng.lognormal(np.log(400 * (steps + 1)), 0.3) * scale),
            tc.OUTPUT_TOKENS: np.round(rng.lognormal(np.log(60 * (steps + 1)), 0.4) * scale),
            tc.DURATION_S: rng.gamma(4.0, 0.5 * (steps + 1) / 4),
            tc.ERROR_SPANS: (rng.random(n) < 0.05).astype(int),
            tc.MODELS: [["gpt-4o-mini"]] * n,
        },
        schema_overrides={tc.INPUT_TOKENS: pl.Int64, tc.OUTPUT_TOKENS: pl.Int64},
    )
    return with_cost(frame)[0]


def margin(rate: float, reps: int) -> float:
    """Half-width of a 95 % Monte Carlo interval for a simulated rate."""
    return 1.96 * math.sqrt(max(rate * (1 - rate), 1e-9) / reps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--sizes", default="30,100", help="trials per version, comma-separated")
    parser.add_argument(
        "--changes", default="none," + ",".join(PLANTED), help="which comparisons to run"
    )
    args = parser.parse_args()
    sizes = [int(v) for v in args.sizes.split(",")]
    changes = [None if v == "none" else v for v in args.changes.split(",")]
    rng = np.random.default_rng(args.seed)
    print(f"{args.reps} comparisons per cell, seed {args.seed}, alpha 0.05 (Holm within a test)")
    print(f"{'change':8} {'n':>4} {'CHANGED':>16} {'feature flagged':>22} {'UNCHANGED':>10}  s")
    for change in changes:
        for n in sizes:
            start = time.perf_counter()
            verdicts, flagged, needed = [], 0, []
            for _ in range(args.reps):
                sample = behaviour_sample(trials(rng, n, None, "b"), trials(rng, n, change, "c"))
                result = behaviour_diff(sample, seed=int(rng.integers(1 << 31)))
                verdicts.append(result.verdict)
                if result.trials_needed is not None:
                    needed.append(result.trials_needed)
                if change is not None:
                    flagged += any(c.feature == PLANTED[change] for c in result.changes)
            changed = sum(v is BehaviourVerdict.CHANGED for v in verdicts) / args.reps
            unchanged = sum(v is BehaviourVerdict.UNCHANGED for v in verdicts) / args.reps
            hit = flagged / args.reps
            feature = (
                f"{PLANTED[change]:>17} {hit:4.0%}" if change is not None else f"{'':>17}    -"
            )
            print(
                f"{change or 'none':8} {n:4d} {changed:7.1%} ± {margin(changed, args.reps):5.1%}"
                f" {feature} {unchanged:10.0%}  {time.perf_counter() - start:.0f}"
                + (f"  (UNCHANGED needs ~{int(np.median(needed))} per version)" if needed else ""),
                flush=True,
            )


if __name__ == "__main__":
    main()
