"""Benchmark: ``assay analyze`` on 2,000,000 spans against a bare Polars scan + group-by.

Both are timed as whole commands in fresh Python processes (interpreter start and imports
included), on the same synthetic trace set, in the same run. Target (issue 2): analyze within
3× of the floor, under 10 s, peak memory under 2 GiB.

    python benchmarks/bench_analyze.py [--spans 2000000] [--spans-per-trial 100]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from synthetic import generate  # noqa: E402

FLOOR = """
import polars as pl, resource, sys
from assay.analysis._conventions import SPAN_COLUMNS
files = sys.argv[1]
out = (
    pl.scan_parquet(files + "/**/*.parquet")
    .select(SPAN_COLUMNS)
    .group_by("trace_id")
    .agg(
        pl.col("assay_test_id").drop_nulls().first(),
        pl.col("gen_ai_tool_name").sort_by("start_time_unix_nano").drop_nulls(),
        pl.col("gen_ai_usage_input_tokens").sum(),
        pl.col("gen_ai_usage_output_tokens").sum(),
        pl.len(),
    )
    .group_by("assay_test_id")
    .agg(pl.len())
    .collect()
)
print(out.height, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""

ANALYZE = """
import resource, sys
from assay.cli import run
code = run(["analyze", sys.argv[1], "--format", "json", "--output", sys.argv[2]])
print(code, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def _timed(code: str, *args: str, repeat: int) -> tuple[float, int]:
    """Best wall time of ``repeat`` runs, and the peak RSS (KiB) seen."""
    best, peak = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), *args],
            capture_output=True,
            text=True,
            check=False,
        )
        elapsed = time.perf_counter() - start
        if result.returncode != 0:
            raise SystemExit(f"benchmark command failed:\n{result.stderr}")
        peak = max(peak, int(result.stderr.split()[-1]))
        best = min(best, elapsed)
    return best, peak


def main() -> None:
    """Generate the trace set, time both commands, print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--spans", type=int, default=2_000_000)
    parser.add_argument("--spans-per-trial", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--path-variants",
        type=int,
        default=6,
        help="tool-path variants per trial (0: every trial a different random path)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        traces = Path(tmp) / "traces"
        start = time.perf_counter()
        spans = generate(
            traces,
            trials=args.spans // args.spans_per_trial,
            spans_per_trial=args.spans_per_trial,
            path_variants=args.path_variants,
        )
        made = time.perf_counter() - start
        size = sum(f.stat().st_size for f in traces.rglob("*.parquet")) / 2**20
        paths = f"{args.path_variants} path variants" if args.path_variants else "random paths"
        print(f"trace set: {spans:,} spans ({paths}), {size:.0f} MiB, generated in {made:.1f} s")
        floor_s, floor_kib = _timed(FLOOR, str(traces), repeat=args.repeat)
        out = Path(tmp) / "verdicts.json"
        analyze_s, analyze_kib = _timed(ANALYZE, str(traces), str(out), repeat=args.repeat)
        tests = len(json.loads(out.read_text())["tests"])
    ratio = analyze_s / floor_s
    print(
        f"floor   (polars scan + group-by): {floor_s:6.2f} s   peak RSS {floor_kib / 2**20:.2f} GiB"
    )
    print(
        f"assay analyze ({tests} tests):     {analyze_s:6.2f} s   "
        f"peak RSS {analyze_kib / 2**20:.2f} GiB"
    )
    print(f"ratio analyze / floor: {ratio:.2f}x  (target ≤ 3x, ≤ 10 s, < 2 GiB)")
    ok = ratio <= 3 and analyze_s <= 10 and analyze_kib < 2 * 2**20
    print("PASS" if ok else "MISSED TARGET")


if __name__ == "__main__":
    main()
