"""Benchmark: ``assay analyze`` against a fair floor, one hand-written Polars query (issue 12).

The floor computes, per trace, what a skilled engineer would write by hand for the same
question — the trial's test and outcome, its tool sequence in start order, LLM calls, token
sums, span count and duration — then per-test counts, and materialises both tables so Polars
cannot prune a column. Both run as whole commands in fresh Python processes (interpreter
start and imports included), on the same synthetic trace set, in the same run; each prints its
own peak RSS. Sizes are chosen by flag; every trace set is generated into a temporary folder
(streamed to disk, a chunk at a time) and deleted after its size is measured.

    python benchmarks/bench_analyze.py                      # 2M spans (make bench)
    python benchmarks/bench_analyze.py --spans 2M,20M       # the issue's sizes
    python benchmarks/bench_analyze.py --spans 200M --repeat 1 --no-floor   # bounded memory
    python benchmarks/bench_analyze.py --spans 20M --buckets 8   # a set laid out by bucket
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from synthetic import generate  # noqa: E402

FLOOR = """
import polars as pl, resource, sys
files = sys.argv[1] + "/**/*.parquet"
spans = pl.scan_parquet(files, hive_partitioning=False)
{screen}
tool = pl.col("gen_ai_operation_name") == "execute_tool"
llm = pl.col("gen_ai_operation_name") == "chat"
per_trace = (
    spans
    .group_by("trace_id")
    .agg(
        pl.col("assay_test_id").drop_nulls().first().alias("test"),
        pl.col("assay_trial_outcome").drop_nulls().first().alias("outcome"),
        pl.col("gen_ai_tool_name").filter(tool).sort_by(
            pl.col("start_time_unix_nano").filter(tool)
        ).alias("tools"),
        llm.sum().alias("llm_calls"),
        pl.col("gen_ai_usage_input_tokens").filter(llm).sum().alias("input_tokens"),
        pl.col("gen_ai_usage_output_tokens").filter(llm).sum().alias("output_tokens"),
        pl.len().alias("spans"),
        ((pl.col("end_time_unix_nano").max() - pl.col("start_time_unix_nano").min()) / 1e9)
        .alias("duration_s"),
    )
    .collect()
)
per_test = per_trace.group_by("test").agg(
    pl.len().alias("n"),
    (pl.col("outcome") == "pass").sum().alias("passed"),
    pl.col("tools").list.len().mean().alias("tool_calls"),
    pl.col("llm_calls").sum(),
    pl.col("input_tokens").sum(),
    pl.col("output_tokens").sum(),
    pl.col("duration_s").mean(),
)
{verdicts}
print(per_trace.height, per_test.height, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
      file=sys.stderr)
"""

# The same result as analyze's on any set: a span stored twice (a file imported twice, a
# retried export) is counted once, and every test gets a verdict from an interval. The screen
# is the cheapest exact one known (distinct hashes of span ids; collapse only when one repeats);
# the interval is Wilson's, from scipy, which is what importing scipy.stats costs.
SAME_RESULT_SCREEN = """
hashes = spans.select(pl.col("span_id").hash(seed=0)).collect(engine="streaming").to_series()
if hashes.n_unique() != hashes.len():
    spans = spans.unique(subset=["trace_id", "span_id"], keep="first", maintain_order=True)
"""
SAME_RESULT_VERDICTS = """
import numpy as np
from scipy import stats
n, k = per_test["n"].to_numpy(), per_test["passed"].to_numpy()
z = stats.norm.ppf(0.975)
centre = (k + z * z / 2) / (n + z * z)
half = z / (n + z * z) * np.sqrt(k * (n - k) / n + z * z / 4)
verdicts = np.where(centre - half >= 0.8, "PASS", np.where(centre + half < 0.8, "FAIL", "INC"))
assert verdicts.size == per_test.height
"""
ISSUE_FLOOR = FLOOR.format(screen="", verdicts="")
"""Issue 12's floor: the per-trace and per-test figures, nothing checked, no verdict."""
SAME_RESULT_FLOOR = FLOOR.format(screen=SAME_RESULT_SCREEN, verdicts=SAME_RESULT_VERDICTS)
"""The same query, giving analyze's result on any set (see docs/scale.md)."""

ANALYZE = """
import resource, sys
from assay.cli import main
sys.argv = ["assay", "analyze", sys.argv[1], "--format", "json", "--output", sys.argv[2],
            *sys.argv[3:]]
try:
    main()  # the console script's entry point: the command to its end, as a user runs it
except SystemExit as exc:
    code = exc.code
print(code, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
if code == 2:  # an error; 0, 1 and 3 are verdicts
    sys.exit(2)
"""
"""``assay analyze`` as the console script runs it, to the end of its process (what Python does
at exit is part of a command's time); prints its exit code and peak RSS."""


@dataclass(frozen=True)
class Run:
    seconds: float
    cpu_s: float
    """CPU time (user + system, every thread): steadier on a busy machine."""
    peak_gib: float


@dataclass(frozen=True)
class Timing:
    runs: tuple[Run, ...]

    @property
    def best(self) -> Run:
        """The run of the best wall time."""
        return min(self.runs, key=lambda r: r.seconds)

    @property
    def seconds(self) -> float:
        return self.best.seconds

    @property
    def cpu_s(self) -> float:
        return self.best.cpu_s

    @property
    def peak_gib(self) -> float:
        """Largest peak RSS over the runs."""
        return max(r.peak_gib for r in self.runs)


def _run(code: str, *args: str) -> Run:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if result.returncode != 0:
        raise SystemExit(f"benchmark command failed:\n{result.stderr[-3000:]}")
    return Run(elapsed, used, int(result.stderr.split()[-1]) / 2**20)


def _timed(commands: dict[str, tuple[str, ...]], repeat: int) -> dict[str, Timing]:
    """Each command ``repeat`` times, interleaved (one of each per round), so that a slower
    stretch of a shared machine weighs on every command alike."""
    runs: dict[str, list[Run]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, (code, *args) in commands.items():
            runs[name].append(_run(code, *args))
    return {name: Timing(tuple(r)) for name, r in runs.items()}


def _median_ratio(top: Timing, bottom: Timing, cpu: bool = False) -> float:
    """The median over rounds of ``top / bottom`` measured in the same round."""
    ratios = sorted(
        (t.cpu_s / b.cpu_s) if cpu else (t.seconds / b.seconds)
        for t, b in zip(top.runs, bottom.runs, strict=True)
    )
    return statistics.median(ratios)


def _size(text: str) -> int:
    units = {"K": 10**3, "M": 10**6, "G": 10**9}
    text = text.strip().upper()
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def run_size(args: argparse.Namespace, spans: int) -> dict[str, float]:
    """Generate one trace set, time the floor and analyze on it, print and return figures."""
    with tempfile.TemporaryDirectory(dir=args.scratch) as tmp:
        traces = Path(tmp) / "traces"
        if args.keep is not None:
            traces = Path(args.keep) / f"spans-{spans}-b{args.buckets or 0}"
        start = time.perf_counter()
        made = spans
        if not traces.exists():
            made = generate(
                traces,
                trials=spans // args.spans_per_trial,
                spans_per_trial=args.spans_per_trial,
                path_variants=args.path_variants,
                buckets=args.buckets,
            )
        generated = time.perf_counter() - start
        size = sum(f.stat().st_size for f in traces.rglob("*.parquet")) / 2**20
        layout = f", {args.buckets} buckets" if args.buckets else ""
        print(
            f"\n{made:,} spans ({args.path_variants} path variants{layout}), {size:.0f} MiB, "
            f"generated in {generated:.1f} s",
            flush=True,
        )
        figures: dict[str, float] = {"spans": made}
        out = Path(tmp) / "verdicts.json"
        extra = ["--engine", args.engine] if args.engine != "local" else []
        commands = {"analyze": (ANALYZE, str(traces), str(out), *extra)}
        if args.floor:
            commands = {
                "floor": (ISSUE_FLOOR, str(traces)),
                "same": (SAME_RESULT_FLOOR, str(traces)),
                **commands,
            }
        timings = _timed(commands, args.repeat)
        analyze = timings["analyze"]
        tests = len(json.loads(out.read_text())["tests"])
        labels = {
            "floor": "floor (hand-written Polars):",
            "same": "same-result floor:          ",
            "analyze": f"assay analyze ({tests} tests):  ",
        }
        for name, timing in timings.items():
            figures |= {f"{name}_s": timing.seconds, f"{name}_cpu_s": timing.cpu_s}
            figures[f"{name}_gib"] = timing.peak_gib
            print(
                f"  {labels[name]} {timing.seconds:7.2f} s   cpu {timing.cpu_s:7.2f} s   "
                f"peak RSS {timing.peak_gib:.2f} GiB   (best of {len(timing.runs)})",
                flush=True,
            )
        if args.floor:
            for name, words in (("floor", "floor"), ("same", "same-result floor")):
                base = timings[name]
                print(
                    f"  ratio analyze / {words}: best {analyze.seconds / base.seconds:.2f}x "
                    f"wall, {analyze.cpu_s / base.cpu_s:.2f}x cpu; median of the rounds "
                    f"{_median_ratio(analyze, base):.2f}x wall, "
                    f"{_median_ratio(analyze, base, cpu=True):.2f}x cpu"
                )
            print("  (issue 12's target: 1.5x the floor at 20M spans, peak RSS 2 GiB)")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--spans", default="2M", help="comma-separated sizes, e.g. 2M,20M,200M")
    parser.add_argument("--spans-per-trial", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--path-variants",
        type=int,
        default=6,
        help="tool-path variants per trial (0: every trial a different random path)",
    )
    parser.add_argument("--buckets", type=int, default=None, help="write the set by bucket")
    parser.add_argument("--engine", default="local")
    parser.add_argument("--no-floor", dest="floor", action="store_false")
    parser.add_argument("--scratch", default=None, help="folder for the generated trace sets")
    parser.add_argument("--keep", default=None, help="keep (and reuse) the trace sets in here")
    args = parser.parse_args()
    results = [run_size(args, _size(s)) for s in args.spans.split(",")]
    if len(results) > 1:
        first = results[0]
        print("\ntime growth against the smallest size:")
        for r in results[1:]:
            growth = r["analyze_s"] / first["analyze_s"]
            cpu = r["analyze_cpu_s"] / first["analyze_cpu_s"]
            print(
                f"  {r['spans']:,.0f} spans: {growth:.1f}x the time ({cpu:.1f}x the cpu) for "
                f"{r['spans'] / first['spans']:.0f}x the spans"
            )


if __name__ == "__main__":
    main()
