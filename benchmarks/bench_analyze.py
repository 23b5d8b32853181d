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
from assay.cli import run
code = run(["analyze", sys.argv[1], "--format", "json", "--output", sys.argv[2], *sys.argv[3:]])
print(code, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


@dataclass(frozen=True)
class Timing:
    seconds: float
    """Best wall time of the repeats."""
    peak_gib: float
    """Largest peak RSS of the process over the repeats."""
    cpu_s: float
    """CPU time (user + system, every thread) of the best run: steadier on a busy machine."""


def _timed(code: str, *args: str, repeat: int) -> Timing:
    best, peak, cpu = float("inf"), 0, 0.0
    for _ in range(repeat):
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
        peak = max(peak, int(result.stderr.split()[-1]))
        if elapsed < best:
            best, cpu = elapsed, used
    return Timing(best, peak / 2**20, cpu)


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
        if args.floor:
            floor = _timed(ISSUE_FLOOR, str(traces), repeat=args.repeat)
            same = _timed(SAME_RESULT_FLOOR, str(traces), repeat=args.repeat)
            figures |= {"floor_s": floor.seconds, "floor_gib": floor.peak_gib}
            figures |= {
                "floor_cpu_s": floor.cpu_s,
                "same_s": same.seconds,
                "same_cpu_s": same.cpu_s,
            }
            print(
                f"  floor (hand-written Polars): {floor.seconds:7.2f} s   "
                f"cpu {floor.cpu_s:7.2f} s   peak RSS {floor.peak_gib:.2f} GiB",
                flush=True,
            )
            print(
                f"  same-result floor:           {same.seconds:7.2f} s   "
                f"cpu {same.cpu_s:7.2f} s   peak RSS {same.peak_gib:.2f} GiB",
                flush=True,
            )
        out = Path(tmp) / "verdicts.json"
        extra = ["--engine", args.engine] if args.engine != "local" else []
        analyze = _timed(ANALYZE, str(traces), str(out), *extra, repeat=args.repeat)
        tests = len(json.loads(out.read_text())["tests"])
        figures |= {"analyze_s": analyze.seconds, "analyze_gib": analyze.peak_gib}
        figures["analyze_cpu_s"] = analyze.cpu_s
        print(
            f"  assay analyze ({tests} tests):   {analyze.seconds:7.2f} s   "
            f"cpu {analyze.cpu_s:7.2f} s   peak RSS {analyze.peak_gib:.2f} GiB",
            flush=True,
        )
        if args.floor:
            print(
                f"  ratio analyze / floor: {analyze.seconds / floor.seconds:.2f}x wall, "
                f"{analyze.cpu_s / floor.cpu_s:.2f}x cpu "
                "(issue 12's target: 1.5x at 20M spans, peak RSS 2 GiB)"
            )
            print(
                f"  ratio analyze / same-result floor: {analyze.seconds / same.seconds:.2f}x "
                f"wall, {analyze.cpu_s / same.cpu_s:.2f}x cpu"
            )
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
