"""Trace sets of the shape most agent evaluations have: many cases, a few trials, two versions.

Each case has its own difficulty (its pass rate under version v1, drawn from Beta(2, 1) — easy
cases common, hard ones present — as in every benchmark); version v2 passes each case ``drop``
less often. Trials are recorded with the real OpenTelemetry SDK through ``assay.instrument``,
each version in its own folder (or both in one folder, told apart by ``assay.agent.version``).

    python benchmarks/suite_sets.py OUT --cases 300 --trials 3 --drop 0.05
    python benchmarks/suite_sets.py OUT --drop 0              # two draws of one agent
    python benchmarks/suite_sets.py OUT --drop 0 --rate 0.97  # both versions near perfect
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from assay.instrument import ParquetSpanExporter

_START = 1_780_000_000 * 10**9  # 2026-05-28, in nanoseconds since the epoch


def case_rates(cases: int, seed: int) -> np.ndarray:
    """Each case's pass rate under v1: Beta(2, 1), seeded."""
    return np.random.default_rng(seed).beta(2.0, 1.0, cases)


def write_version(
    folder: Path,
    rates: np.ndarray,
    trials: int,
    version: str,
    seed: int,
    suite: str = "support",
) -> None:
    """Record ``trials`` trials of every case at these pass rates, as ``version``."""
    rng = np.random.default_rng(seed)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(str(folder))))
    tracer = provider.get_tracer("suite-sets")
    passed = rng.random((len(rates), trials)) < rates[:, None]
    for case, rate in enumerate(rates):
        del rate
        for index in range(trials):
            attributes = {
                "assay.test.id": f"case-{case:04d}",
                "assay.suite": suite,
                "assay.agent.version": version,
                "assay.trial.index": index,
                "assay.trial.outcome": "pass" if passed[case, index] else "fail",
            }
            # Set times, not the clock's: every trial lasts a second, so a comparison's
            # latency (the suite's behaviour diff) does not depend on the machine's load while
            # each version was recorded, and the reports of a set are the same on every run.
            start = _START + (case * trials + index) * 2 * 10**9
            span = tracer.start_span("trial", attributes=attributes, start_time=start)
            span.end(end_time=start + 10**9)
    provider.shutdown()


def write_pair(
    out: Path,
    cases: int,
    trials: int,
    drop: float,
    seed: int = 0,
    *,
    rate: float | None = None,
    one_folder: bool = False,
) -> tuple[Path, Path]:
    """v1 and v2 trace sets in ``out/v1`` and ``out/v2``: v2 is ``drop`` worse on every case.

    Args:
        out: Where the two sets go.
        cases: Cases of the suite.
        trials: Trials per case and version.
        drop: How much less often v2 passes each case (0: two draws of one agent).
        seed: Seeds the case rates and both versions' draws.
        rate: Every case's rate under v1 (e.g. 0.97, "both versions near perfect"); None:
            Beta(2, 1) case rates.
        one_folder: Both versions in ``out`` itself, told apart by ``assay.agent.version``
            (what ``assay analyze --baseline-version`` reads); the paths returned are both
            ``out``.
    """
    rates = case_rates(cases, seed) if rate is None else np.full(cases, rate)
    v1, v2 = (out, out) if one_folder else (out / "v1", out / "v2")
    write_version(v1, rates, trials, "v1", seed + 1)
    write_version(v2, np.clip(rates - drop, 0.0, 1.0), trials, "v2", seed + 2)
    return v1, v2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--drop", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rate", type=float, help="every case's v1 rate (default: Beta(2, 1))")
    parser.add_argument(
        "--one-folder", action="store_true", help="both versions in OUT (--baseline-version)"
    )
    args = parser.parse_args()
    v1, v2 = write_pair(
        args.out,
        args.cases,
        args.trials,
        args.drop,
        args.seed,
        rate=args.rate,
        one_folder=args.one_folder,
    )
    print(f"wrote {v1} and {v2}")


if __name__ == "__main__":
    main()
