"""Calibration of ``assay watch``: false alarms on steady streams, delays on planted drops.

Seeded, vectorised over streams (numpy), in minutes. Every stream is watched by the very code
``assay watch`` runs (:class:`assay.watch.DriftDetector`, :func:`assay.watch.sequence_verdict`'s
confidence sequence), looked at every ``LOOK`` trials, and side by side by what monitors do
today, on the same outcomes:

* **peeking**: a fixed-n test repeated after every batch of ``BATCH`` trials — for the drift,
  a one-sided two-proportion z-test of the latest batch against every trial before it
  (H0: the batch's rate is at least the reference's minus delta); for the verdict, the Wilson
  interval of every trial so far (FAIL when wholly below the threshold);
* **EvalView's rule**: a cycle of ``CYCLE`` trials fails when its pass rate is below the
  reference's point estimate minus delta (below the threshold, for the verdict); two failing
  cycles in a row alarm;
* **CUSUM**: Page's Bernoulli CUSUM of the log-likelihood ratio of ``p0 - delta`` against
  ``p0`` (``p0`` estimated from the first ``BURN_IN`` trials), alarming at ``log(1000)`` (an
  average run length of at least 1,000 trials without change).

Then throughput: trials judged per second by ``assay watch`` against the spans per second
``assay collect`` acknowledges (benchmarks/bench_collector.py's load, run here) divided by the
spans per trial.

    python benchmarks/bench_watch.py [--streams 2000] [--trials 10000] [--quick]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats

from assay.watch import DriftDetector, DriftRule, pass_rate_sequence

ALPHA = DriftRule().alpha
DELTA = DriftRule().delta
THRESHOLD = 0.80
CONFIDENCE = 0.95
LOOK = 10
BATCH = 50
CYCLE = 20
BURN_IN = 200
CUSUM_BAR = math.log(1000)
SEED = 20240601


@dataclass
class Rules:
    """Every rule's state over ``streams`` streams, fed ``LOOK`` trials at a time."""

    streams: int
    drift: DriftDetector = field(init=False)
    seen: int = 0
    passes: np.ndarray = field(init=False)
    batch_passes: np.ndarray = field(init=False)
    cycle_passes: np.ndarray = field(init=False)
    failing_cycles: np.ndarray = field(init=False)
    cusum: np.ndarray = field(init=False)
    p0: np.ndarray = field(init=False)
    first: dict[str, np.ndarray] = field(init=False)

    def __post_init__(self) -> None:
        s = self.streams
        self.drift = DriftDetector(DriftRule(DELTA, ALPHA, THRESHOLD), streams=s)
        self.passes = np.zeros(s)
        self.batch_passes = np.zeros(s)
        self.cycle_passes = np.zeros(s)
        self.failing_cycles = np.zeros(s, dtype=np.int64)
        self.cusum = np.zeros(s)
        self.p0 = np.full(s, np.nan)
        names = ("watch", "peeking", "evalview", "cusum", "watch FAIL", "peeking FAIL")
        self.first = {name: np.full(s, -1, dtype=np.int64) for name in names}
        self.sequence = pass_rate_sequence(THRESHOLD, CONFIDENCE)

    def _mark(self, name: str, hit: np.ndarray, at: int) -> None:
        first = self.first[name]
        self.first[name] = np.where(hit & (first < 0), at, first)

    def feed(self, outcomes: np.ndarray) -> None:
        for column in outcomes.T:  # trial by trial: the batch, cycle and CUSUM rules
            self._trial(column)
        self.drift.add(outcomes)
        self._mark("watch", self.drift.alarm, self.seen)
        side = self.sequence.side(self.passes, self.seen, THRESHOLD)
        self._mark("watch FAIL", side == -1, self.seen)

    def _trial(self, x: np.ndarray) -> None:
        before_n, before_s = self.seen, self.passes.copy()
        self.seen += 1
        self.passes += x
        self.batch_passes += x
        self.cycle_passes += x
        if self.seen == BURN_IN:
            self.p0 = np.clip(self.passes / BURN_IN, 0.01, 0.99)
        if self.seen > BURN_IN:
            p1 = np.clip(self.p0 - DELTA, 0.005, 0.99)
            llr = np.where(x, np.log(p1 / self.p0), np.log((1 - p1) / (1 - self.p0)))
            self.cusum = np.maximum(0.0, self.cusum + llr)
            self._mark("cusum", self.cusum >= CUSUM_BAR, self.seen)
        if self.seen % CYCLE == 0 and self.seen > CYCLE:
            reference = (before_s + 1 - self.cycle_passes) / (before_n + 1 - CYCLE)
            failing = self.cycle_passes / CYCLE < reference - DELTA
            self.failing_cycles = np.where(failing, self.failing_cycles + 1, 0)
            self._mark("evalview", self.failing_cycles >= 2, self.seen)
        if self.seen % CYCLE == 0:
            self.cycle_passes[:] = 0
        if self.seen % BATCH == 0:
            self._peek()

    def _peek(self) -> None:
        n_ref = self.seen - BATCH
        if n_ref > 0:
            ref = (self.passes - self.batch_passes) / n_ref
            recent = self.batch_passes / BATCH
            pooled = np.clip((self.passes) / self.seen, 1e-6, 1 - 1e-6)
            se = np.sqrt(pooled * (1 - pooled) * (1 / n_ref + 1 / BATCH))
            z = (ref - DELTA - recent) / se
            self._mark("peeking", z >= stats.norm.ppf(1 - ALPHA), self.seen)
        # the verdict: a Wilson interval of every trial so far, recomputed after each batch
        z2 = stats.norm.ppf(1 - (1 - CONFIDENCE) / 2) ** 2
        n, p = self.seen, self.passes / self.seen
        centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        half = math.sqrt(z2) * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
        self._mark("peeking FAIL", centre + half < THRESHOLD, self.seen)
        self.batch_passes[:] = 0


def simulate(streams: int, trials: int, before: float, after: float, change: int, seed: int):
    rng = np.random.default_rng(seed)
    rules = Rules(streams)
    for start in range(0, trials, LOOK):
        index = np.arange(start, start + LOOK)
        rate = np.where(index < change, before, after)
        rules.feed(rng.random((streams, LOOK)) < rate)
    return rules.first


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def calibration(streams: int, trials: int) -> None:
    print(f"\n## Steady streams: {streams} streams × {trials:,} trials, no change (seed {SEED})")
    print(f"alpha {ALPHA}, delta {DELTA}, threshold {THRESHOLD}, confidence {CONFIDENCE}; ")
    print(f"watch looks every {LOOK} trials; peeking every {BATCH}; cycles of {CYCLE}\n")
    print(
        "| pass rate | watch drift alarm | peeking z-test | EvalView 2 cycles | CUSUM "
        "| watch false FAIL | peeking Wilson false FAIL |"
    )
    print("|---|---|---|---|---|---|---|")
    for rate in (0.92, THRESHOLD):
        started = time.monotonic()
        first = simulate(streams, trials, rate, rate, trials + 1, SEED)
        ever = {k: (v >= 0).mean() for k, v in first.items()}
        fails = (
            (_pct(ever["watch FAIL"]), _pct(ever["peeking FAIL"]))
            if rate <= THRESHOLD
            else ("— (rate above threshold)", "—")
        )
        print(
            f"| {rate:.2f} | {_pct(ever['watch'])} | {_pct(ever['peeking'])} | "
            f"{_pct(ever['evalview'])} | {_pct(ever['cusum'])} | {fails[0]} | {fails[1]} |",
            flush=True,
        )
        print(f"<!-- {time.monotonic() - started:.0f} s -->", file=sys.stderr)
    print(
        f"\nstated: watch drift alarm ≤ {_pct(ALPHA)} ever; watch false FAIL ≤ "
        f"{_pct(1 - CONFIDENCE)} ever (the sequence's two-sided miss)"
    )


def _delays(first: np.ndarray, change: int, horizon: int) -> str:
    early = (first >= 0) & (first <= change)
    delay = np.where(first > change, first - change, np.inf)[~early]
    if delay.size == 0:
        return "—"
    with np.errstate(invalid="ignore"):  # inf (never detected) is a valid percentile here
        median, p90 = np.percentile(delay, [50, 90])

    def shown(x: float) -> str:
        return f">{horizon}" if not np.isfinite(x) else f"{x:.0f}"

    return f"{shown(median)} / {shown(p90)} (early {_pct(early.mean())})"


def drops(streams: int, change: int, horizon: int) -> None:
    print(
        f"\n## Planted drops at trial {change:,}: {streams} streams, delay in trials "
        f"(median / 90th percentile; 'early': alarmed before the drop)\n"
    )
    print("| drop | watch | peeking z-test | EvalView 2 cycles | CUSUM |")
    print("|---|---|---|---|---|")
    for before, after in ((0.95, 0.85), (0.90, 0.70), (0.95, 0.55)):
        first = simulate(streams, change + horizon, before, after, change, SEED + 1)
        cells = [
            _delays(first[k], change, horizon) for k in ("watch", "peeking", "evalview", "cusum")
        ]
        print(f"| {before:.2f} → {after:.2f} | " + " | ".join(cells) + " |", flush=True)


def throughput(seconds: float) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    import bench_collector as bc
    from synthetic import generate

    from assay.watch import Watcher, WatchOptions

    spans_per_trial = 10
    print(f"\n## Keeping up: watch vs the collector ({spans_per_trial} spans per trial)\n")
    files, per_file = 10, 5_000
    with tempfile.TemporaryDirectory(prefix="assay-bench-watch-") as tmp:
        staged, live = Path(tmp) / "staged", Path(tmp) / "live"
        for i in range(files):
            generate(
                staged / f"part-{i:02d}",
                trials=per_file,
                spans_per_trial=spans_per_trial,
                tests=50,
                seed=i,
            )
        live.mkdir()
        # a running watch has its modules loaded: load them before the clock starts
        warm = Path(tmp) / "warm"
        generate(warm, trials=200, spans_per_trial=spans_per_trial, tests=5, seed=99)
        Watcher((str(warm),)).look(final=True)
        watcher = Watcher((str(live),), WatchOptions(grace=0.0))
        started = time.monotonic()
        for i in range(files):  # one look per file as it lands, as a live watch sees them
            (staged / f"part-{i:02d}").rename(live / f"part-{i:02d}")
            watcher.look(now=float(i))
        status = watcher.look(final=True)
        elapsed = time.monotonic() - started
        judged = sum(t.trials for t in status.tests)
    rate = judged / elapsed
    print(
        f"assay watch: {judged:,} trials of {len(status.tests)} tests in {elapsed:.1f} s: "
        f"{rate:,.0f} trials/s ({rate * spans_per_trial:,.0f} spans/s)"
    )

    import subprocess

    port = bc.free_port()
    assay = str(Path(sys.executable).parent / "assay")
    with tempfile.TemporaryDirectory(prefix="assay-bench-watch-") as tmp:
        with (Path(tmp) / "collector.log").open("wb") as log:
            proc = subprocess.Popen(
                [
                    assay,
                    "collect",
                    "--out",
                    str(Path(tmp) / "traces"),
                    "--http-port",
                    str(port),
                    "--grpc-port",
                    "-1",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            bc.wait_ready(port)
            load = bc.load(port, bc.make_bodies(40), seconds, 4)
        finally:
            proc.terminate()
            proc.wait(timeout=600)
    needed = load["spans_per_s"] / spans_per_trial
    print(
        f"assay collect: {load['spans_per_s']:,.0f} spans/s acknowledged "
        f"→ {needed:,.0f} trials/s at {spans_per_trial} spans per trial"
    )
    verdict = "keeps up" if rate >= needed else "falls behind"
    print(f"watch {verdict}: {rate:,.0f} ≥ {needed:,.0f} trials/s is {rate >= needed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="200 streams, for a smoke run")
    parser.add_argument("--seconds", type=float, default=5.0, help="collector load, seconds")
    args = parser.parse_args()
    streams = 200 if args.quick else args.streams
    started = time.monotonic()
    calibration(streams, args.trials)
    drops(max(streams // 2, 100), 1000, 3000)
    throughput(args.seconds)
    print(f"\n(bench_watch ran in {time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
