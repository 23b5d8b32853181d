"""Where ``assay analyze`` spends time its same-result floor does not, shape by shape (issue 22).

``bench_shapes.py`` gives each shape's ratio to the floor; this script says where the rest of
the time goes, in two tables per set:

1. **One bucket** — the first bucket the local engine makes of the set (the spans two reading
   threads share: :data:`~assay.analysis.SPANS_PER_BUCKET` / ``BUCKETS_AT_ONCE``). On its spans,
   in this process, one thread, best of ``--rounds``: the floor's query (``bench_shapes``'s,
   the same code) and assay's spans → trials, each step of it timed. Every step is marked
   ``floor`` (the floor's query does the same work: read, group, scores from events) or
   ``analysis`` (work the floor does not do).
2. **The whole run** — ``assay analyze --format json`` in this process, its phases timed: the
   steps before and after the buckets run on one thread and are what a floor's one query does
   not have.

    python benchmarks/profile_shapes.py SET [SET ...] [--rounds 3]

Make sets with ``bench_shapes.py --generate-only``. Times are wall seconds; run nothing else
meanwhile.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import assay._cli  # noqa: F401  (the command's allocator settings, made before Polars loads)

sys.path.insert(0, str(Path(__file__).parent))
from bench_shapes import floor_code  # noqa: E402

# The steps of ``read_trials`` (names in ``assay.analysis._trials``), in the order it calls
# them, and whether the floor's query does that work too.
STEPS: tuple[tuple[str, str, str], ...] = (
    ("work_columns_read", "floor", "read the span columns"),
    ("span_ids_may_repeat", "floor", "spans stored twice? (span ids hashed)"),
    ("read_outcomes", "floor", "trial spans' outcomes"),
    ("classify_traces", "analysis", "which traces hold nested trials"),
    ("work_per_trace", "floor", "per-trace group-by, models listed, calls settled"),
    ("aggregate_work", "floor", "nested trials' group-by (planned)"),
    ("list_models", "floor", "nested trials' models listed"),
    ("count_orphans", "analysis", "spans whose parent is missing"),
    ("resolve_nested", "analysis", "nested trials' own spans"),
    ("derive_work_columns", "analysis", "tool errors, retries, agents"),
    ("name_handoff_targets", "analysis", "handoffs"),
    ("explode_events", "floor", "events decoded"),
    ("scores_and_checks", "floor", "scores and checks per trial"),
    ("_assemble", "analysis", "outcome rules, the trial's row"),
    ("with_exception_messages", "analysis", "exception messages"),
    ("unclaimed_trials", "analysis", "traces without a trial"),
    ("_finish", "analysis", "the table's columns"),
)
# Work written inline between two steps (a collect, a join), named by the step it precedes.
GAPS: dict[str, tuple[str, str]] = {
    "read_outcomes": ("floor", "trial spans read"),
    "list_models": ("floor", "nested trials' group-by (run)"),
    "explode_events": ("floor", "events read"),
    "scores_and_checks": ("analysis", "events placed in their trials"),
}


class Clock:
    """Wall time per wrapped function, summed over calls (one thread)."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        """Function name → its time; ``gap:`` + name → the time before it since the last."""
        self.last = 0.0

    def wrap(self, module: Any, name: str) -> None:
        original: Callable[..., Any] = getattr(module, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            gap = f"gap:{name}"
            self.spent[gap] = self.spent.get(gap, 0.0) + start - self.last
            try:
                return original(*args, **kwargs)
            finally:
                self.last = time.perf_counter()
                self.spent[name] = self.spent.get(name, 0.0) + self.last - start

        setattr(module, name, timed)


def _cpu() -> float:
    """CPU seconds of this process so far, every thread (Polars works on its own threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _best(run: Callable[[], object], rounds: int) -> tuple[float, float]:
    """Wall and CPU seconds of the round of the best wall time."""
    best = (float("inf"), 0.0)
    for _ in range(rounds):
        start, cpu = time.perf_counter(), _cpu()
        run()
        best = min(best, (time.perf_counter() - start, _cpu() - cpu))
    return best


def one_bucket(folder: Path, rounds: int) -> None:
    """Table 1: the floor's query and assay's steps on the set's first bucket."""
    import polars as pl

    import assay.analysis._trials as trials_module
    from assay.analysis import SPANS_PER_BUCKET, read_trials
    from assay.analysis._engines import BUCKETS_AT_ONCE
    from assay.store import (
        bucket_events,
        existing_buckets,
        open_trace_set,
        row_group_buckets,
        scan_bucket,
    )

    # As the command opens a large set: screened for repeated spans bucket by bucket.
    trace_set = open_trace_set(str(folder), screen_limit=2 * SPANS_PER_BUCKET)
    contents = trace_set.contents()
    share = SPANS_PER_BUCKET // BUCKETS_AT_ONCE
    buckets = existing_buckets(trace_set.files) or row_group_buckets(
        trace_set.files, share, largest=2 * SPANS_PER_BUCKET
    )
    if not buckets:
        print(f"{folder.name}: traces spread over the whole set (a hashed copy), skipped\n")
        return
    scan = scan_bucket(buckets[0], trace_set)
    spans = scan.select(pl.len()).collect().item()
    events = bool(contents.events)
    # The floor's code on this bucket's scan, without its file scan and its closing print.
    code = floor_code(events).replace("spans = pl.scan_parquet(files, hive_partitioning=False)", "")
    code = code[: code.rindex("print(per_trace.height")]

    def floor() -> None:
        exec(code, {"spans": scan, "sys": sys, "pl": pl})  # noqa: S102 (the floor's own code)

    floor_s, floor_cpu = _best(floor, rounds)
    clock = Clock()
    for name, _, _ in STEPS:
        clock.wrap(trials_module, name)
    best: dict[str, float] | None = None
    for _ in range(rounds):
        clock.spent = {}
        cpu = _cpu()
        clock.last = start = time.perf_counter()
        # As the engine reads a bucket: screened for repeated spans unless the set was whole,
        # its events read by pyarrow.
        read_trials(
            scan,
            contents=contents,
            ordered=False,
            screen_repeats=not trace_set.screened,
            events=bucket_events(buckets[0], trace_set),
        )
        clock.spent["gap:end"] = time.perf_counter() - clock.last
        clock.spent["total"] = time.perf_counter() - start
        clock.spent["cpu"] = _cpu() - cpu
        if best is None or clock.spent["total"] < best["total"]:
            best = dict(clock.spent)
    assert best is not None
    print(f"## {folder.name}: one bucket, {spans:,} spans\n")
    print("| step | does the floor do it? | s |")
    print("|---|---|---|")
    by_kind = {"floor": 0.0, "analysis": 0.0}
    other = sum(v for k, v in best.items() if k.startswith("gap:") and k[4:] not in GAPS)
    for name, kind, what in STEPS:
        if name in GAPS and f"gap:{name}" in best:  # a step not called has no gap
            gap_kind, gap_what = GAPS[name]
            by_kind[gap_kind] += best[f"gap:{name}"]
            print(f"| {gap_what} (inline) | {gap_kind} | {best[f'gap:{name}']:.3f} |")
        if name in best:
            by_kind[kind] += best[name]
            print(f"| {what} (`{name}`) | {kind} | {best[name]:.3f} |")
    by_kind["analysis"] += other
    print(f"| other inline work (joins, findings) | analysis | {other:.3f} |")
    total, cpu = best["total"], best["cpu"]
    print(f"| **assay's spans → trials** (CPU {cpu:.3f} s) | | **{total:.3f}** |")
    print(f"| **the floor's query** (CPU {floor_cpu:.3f} s) | | **{floor_s:.3f}** |")
    print(
        f"\nSteps the floor also does: {by_kind['floor']:.3f} s; "
        f"analysis only: {by_kind['analysis']:.3f} s.\n"
    )


def whole_run(folder: Path) -> None:
    """Table 2: ``assay analyze --format json`` in this process, phase by phase."""
    import assay._cli.analyze as cli_analyze
    import assay.analysis._engines as engines
    import assay.api as api
    from assay.cli import run

    clock = Clock()
    phases = (
        (engines, "row_group_buckets", "trace ids read, buckets made"),
        (engines, "concat_trials", "the set's table put in order"),
        (api, "engine_trials", "spans → trials, with both above"),
        (api, "with_cost", "cost"),
        (api, "_analysis", "per-test figures and verdicts"),
        (cli_analyze, "emit", "the JSON document written"),
    )
    for module, name, _ in phases:
        clock.wrap(module, name)
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        run(["analyze", str(folder), "--format", "json", "--output", f"{out}/a.json"])
        total = time.perf_counter() - start
    print(f"## {folder.name}: the whole run in process ({total:.2f} s)\n")
    print("| phase | s |")
    print("|---|---|")
    for _, name, what in phases:
        print(f"| {what} (`{name}`) | {clock.spent.get(name, 0.0):.2f} |")
    buckets = (
        clock.spent.get("engine_trials", 0.0)
        - clock.spent.get("row_group_buckets", 0.0)
        - clock.spent.get("concat_trials", 0.0)
    )
    print(f"| of spans → trials, the buckets themselves | {buckets:.2f} |\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for folder in args.sets:
        one_bucket(folder, args.rounds)
        whole_run(folder)


if __name__ == "__main__":
    main()
