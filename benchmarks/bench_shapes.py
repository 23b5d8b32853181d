"""Benchmark: ``assay analyze`` against a same-result floor on the shapes real sets have (issue 22).

One base shape — 1M flat trials of 20 spans (8 tool calls, 11 LLM calls), one score event each,
20 tests, 20 files: 20M spans — and one dimension varied at a time from it (not the full cross
product): tool calls per trial (2, 20), events per trial (0, 5), trials (200k, 4M), nesting
(agent → LLM → tool), tests (5,000), files (2,000 small files; a set laid out in 8 buckets).
``shapes.py`` says what each shape holds. The 4M-trial shape has 5 spans a trial, so its
trials make 2 tool calls, not 8.

For each shape, the floor and ``assay analyze --format json`` run as whole processes, one after
the other (so a slow stretch of this shared machine weighs on both), each on a set just read
into the page cache (:func:`warm`); a round runs every shape once, then the next round starts.
The table gives the medians over the rounds — wall time and CPU time (user + system, every
thread: the steadier figure when other jobs share the machine) with the ratios of the medians —
the smallest and largest ratio of one round's pair (how far the machine moves the figure), and
the largest peak RSS of each (``wait4`` of the child). The floor is the same-result floor of
``bench_analyze.py`` — a skilled engineer's one Polars query per trace (test, outcome, tool
sequence in start order, LLM calls, token sums, span count, duration) and per test (counts),
materialised, with the duplicate-span screen and Wilson verdicts a same result needs — plus, on
a set with events, the score values per trace from ``assay.score`` and
``gen_ai.evaluation.result`` events (what analyze reads them for).

The sets are generated once and cached in ``--data`` (default ``$ASSAY_BENCH_DATA``, else
``assay-bench-shapes`` in the system's temporary folder): about 0.5 GiB each.

    python benchmarks/bench_shapes.py                          # every shape (make bench)
    python benchmarks/bench_shapes.py --shapes base,nested --rounds 5
    python benchmarks/bench_shapes.py --generate-only
    python benchmarks/bench_shapes.py --scale 0.1 --save-json out/   # 2M-span sets, keep JSON
    python benchmarks/bench_shapes.py --shapes tests-5000 --against main  # this tree and main

With ``--against REV`` the same ``assay analyze`` also runs from the code at ``REV`` (a
temporary git worktree, ``against.py``), in the same round right after this tree's, each on a
set just read: the table gains its medians, the median over rounds of one round's CPU ratio
(this tree / ``REV``) and whether both wrote the same JSON. A change to the spans → trials step
is so measured against its parent before it lands.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from against import HERE, compiled, cpu_model, environment, same_document, tree_at  # noqa: E402
from bench_analyze import ANALYZE, FLOOR, SAME_RESULT_SCREEN, SAME_RESULT_VERDICTS  # noqa: E402
from shapes import Shape, generate  # noqa: E402

SHAPES = (
    Shape("base"),
    Shape("tools-2", tools=2),
    Shape("tools-20", tools=20),
    Shape("events-0", events=0),
    Shape("events-5", events=5),
    Shape("trials-200k", trials=200_000),
    Shape("trials-4M", trials=4_000_000, tools=2),
    Shape("nested", nested=True),
    Shape("tests-5000", tests=5000),
    Shape("files-2000", files=2000),
    Shape("bucketed", buckets=8),
)

# Score values per trace, from the events that carry them: what a hand-written script reads
# for the same scores as analyze's (only on a set whose shape has events).
EVENT_SCORES = """
value = pl.col("attributes").list.eval(
    pl.element().filter(pl.element().struct.field("key").is_in(
        ["assay.score.value", "gen_ai.evaluation.score.value"]
    )).struct.field("double_value")
).list.first()
scores = (
    spans.filter(pl.col("events").list.len() > 0)
    .select("trace_id", "events").explode("events").unnest("events")
    .filter(pl.col("name").is_in(["assay.score", "gen_ai.evaluation.result"]))
    .group_by("trace_id").agg(value.alias("scores"))
    .collect()
)
per_trace = per_trace.join(scores, on="trace_id", how="left")
"""
NO_EVENTS = ""


def floor_code(events: bool) -> str:
    """The same-result floor for a set with (or without) events."""
    code = FLOOR.format(screen=SAME_RESULT_SCREEN, verdicts=SAME_RESULT_VERDICTS)
    marker = "per_test = per_trace.group_by"
    return code.replace(marker, (EVENT_SCORES if events else NO_EVENTS) + marker)


@dataclass(frozen=True)
class Run:
    seconds: float
    cpu_s: float
    """User and system time of the process, every thread: steadier on a busy machine."""
    peak_gib: float


def _run(code: str, *args: str, env: dict[str, str] | None = None) -> Run:
    """One fresh Python process: its wall time and its own peak RSS (``wait4``).

    ``env``: the process's environment (another ``PYTHONPATH`` runs another tree's code).
    """
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    assert process.stderr is not None
    err = process.stderr.read().decode()
    process.stderr.close()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"benchmark command failed:\n{err[-3000:]}")
    return Run(elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 2**20)


def prepared(shape: Shape, data: Path) -> Path:
    """The set of ``shape`` in ``data``, generated on first use."""
    folder = data / shape.key()
    done = folder / ".complete"
    if not done.exists():
        shutil.rmtree(folder, ignore_errors=True)
        start = time.perf_counter()
        spans = generate(shape, folder)
        done.write_text(str(spans))
        print(f"  generated {shape.name}: {spans:,} spans in {time.perf_counter() - start:.0f} s")
    return folder


def warm(folder: Path) -> None:
    """Read every file of the set once, untimed, so that each command finds it in the page cache.

    The system may give the cache back between runs (this project's machine reclaims it in the
    background): a command that finds the set evicted reads it from disk, its wall time grows
    while its CPU time does not (a floor of 30.9 s for 23.3 CPU-s, its neighbours 14 s). Both
    commands are measured on a set already read.
    """
    for path in sorted(folder.rglob("*.parquet")):
        with path.open("rb") as f:
            while f.read(1 << 23):
                pass


def one_round(
    shape: Shape, folder: Path, out: Path, env: dict[str, str], against: dict[str, str] | None
) -> tuple[Run, Run, Run | None]:
    """The floor, then analyze (then analyze of ``against``), each on a set already read.

    ``env`` and ``against``: the environments that run this tree's code and the other rev's;
    the other rev writes its JSON beside ``out`` (``*.against.json``).
    """
    warm(folder)
    floor = _run(floor_code(shape.events > 0), str(folder), env=env)
    warm(folder)
    analyze = _run(ANALYZE, str(folder), str(out), env=env)
    if against is None:
        return floor, analyze, None
    warm(folder)
    return floor, analyze, _run(ANALYZE, str(folder), str(_against_json(out)), env=against)


def _against_json(out: Path) -> Path:
    return out.with_suffix(".against.json")


def summary(
    shape: Shape, folder: Path, floor: list[Run], analyze: list[Run], against: list[Run]
) -> dict[str, object]:
    """One shape's medians and peaks over its rounds.

    ``ratio`` is the medians' ratio; ``low`` and ``high`` bound the ratios of each round's
    pair (floor and analyze run back to back), which show how far the machine moves a figure.
    With ``against`` (the other rev's runs), ``vs`` is the median over rounds of one round's
    CPU ratio, this tree's to the other rev's.
    """
    f = statistics.median(r.seconds for r in floor)
    a = statistics.median(r.seconds for r in analyze)
    f_cpu = statistics.median(r.cpu_s for r in floor)
    a_cpu = statistics.median(r.cpu_s for r in analyze)
    pairs = [mine.seconds / theirs.seconds for theirs, mine in zip(floor, analyze, strict=True)]
    row: dict[str, object] = {
        "shape": shape.name,
        "spans": int((folder / ".complete").read_text()),
        "floor": f,
        "assay": a,
        "ratio": a / f,
        "low": min(pairs),
        "high": max(pairs),
        "floor_cpu": f_cpu,
        "assay_cpu": a_cpu,
        "cpu_ratio": a_cpu / f_cpu,
        "floor_gib": max(r.peak_gib for r in floor),
        "assay_gib": max(r.peak_gib for r in analyze),
    }
    if against:
        cpus = [mine.cpu_s / theirs.cpu_s for mine, theirs in zip(analyze, against, strict=True)]
        row["against"] = statistics.median(r.seconds for r in against)
        row["against_cpu"] = statistics.median(r.cpu_s for r in against)
        row["vs"] = statistics.median(cpus)
    return row


def table(rows: list[dict[str, object]], against: str | None = None) -> str:
    """The figures as a Markdown table (with the other rev's columns when ``against``)."""
    extra = f" | at {against} | CPU at {against} | CPU / {against}" if against else ""
    lines = [
        "| shape | spans | floor | assay | ratio | each round | floor CPU | assay CPU | CPU ratio "
        f"| peak RSS floor | peak RSS assay{extra} |",
        "|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|---|" if against else ""),
    ]
    for r in rows:
        more = (
            f" {r['against']:.2f} s | {r['against_cpu']:.1f} s | {r['vs']:.2f}× |"
            if against
            else ""
        )
        lines.append(
            f"| {r['shape']} | {r['spans']:,} | {r['floor']:.2f} s | {r['assay']:.2f} s | "
            f"{r['ratio']:.2f}× | {r['low']:.2f}–{r['high']:.2f}× | "
            f"{r['floor_cpu']:.1f} s | {r['assay_cpu']:.1f} s | "
            f"{r['cpu_ratio']:.2f}× | {r['floor_gib']:.2f} GiB | {r['assay_gib']:.2f} GiB |" + more
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default=",".join(s.name for s in SHAPES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0, help="spans and trials × this")
    default_data = os.environ.get("ASSAY_BENCH_DATA") or str(
        Path(tempfile.gettempdir()) / "assay-bench-shapes"
    )
    parser.add_argument("--data", default=default_data, help="where the sets are cached")
    parser.add_argument("--generate-only", action="store_true")
    parser.add_argument("--save-json", default=None, help="keep each shape's JSON in here")
    parser.add_argument("--against", metavar="REV", help="also run analyze of this git rev")
    args = parser.parse_args()
    by_name = {s.name: s for s in SHAPES}
    unknown = [n for n in args.shapes.split(",") if n not in by_name]
    if unknown:
        raise SystemExit(f"--shapes: unknown {unknown} (use {', '.join(by_name)})")
    chosen = [by_name[n] for n in args.shapes.split(",")]
    if args.scale != 1.0:
        chosen = [
            replace(s, spans=int(s.spans * args.scale), trials=int(s.trials * args.scale))
            for s in chosen
        ]
    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    save = Path(args.save_json) if args.save_json else None
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
    folders = {shape.name: prepared(shape, data) for shape in chosen}
    if args.generate_only:
        return
    # Round by round over the shapes, not each shape's rounds together: the machine's slow
    # spells (minutes long here) then fall on several shapes' rounds, not on one shape's all.
    runs: dict[str, tuple[list[Run], list[Run], list[Run]]] = {s.name: ([], [], []) for s in chosen}
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        env = environment(compiled(HERE / "src"))
        other = (
            environment(stack.enter_context(tree_at(args.against, Path(tmp) / "against")))
            if args.against
            else None
        )
        same: dict[str, str] = {}
        for number in range(1, args.rounds + 1):
            for shape in chosen:
                out = (save or Path(tmp)) / f"{shape.name}.json"
                floor, analyze, theirs = one_round(shape, folders[shape.name], out, env, other)
                runs[shape.name][0].append(floor)
                runs[shape.name][1].append(analyze)
                line = (
                    f"  round {number}, {shape.name}: floor {floor.seconds:.2f} s, "
                    f"assay {analyze.seconds:.2f} s, {analyze.seconds / floor.seconds:.2f}x "
                    f"(cpu {floor.cpu_s:.1f} s, {analyze.cpu_s:.1f} s), "
                    f"{analyze.peak_gib:.2f} GiB"
                )
                if theirs is not None:
                    runs[shape.name][2].append(theirs)
                    same[shape.name] = same_document(out, _against_json(out))
                    line += f"; at {args.against} {theirs.seconds:.2f} s, cpu {theirs.cpu_s:.1f} s"
                print(line, flush=True)
    rows = [summary(s, folders[s.name], *runs[s.name]) for s in chosen]
    print(
        f"\nmedians of {args.rounds} interleaved rounds (target: assay ≤ 1.3× the floor); "
        f"{cpu_model()}\n"
    )
    print(table(rows, args.against))
    if same:
        differ = [name for name, said in same.items() if said == "DIFFER"]
        kinds = sorted(set(same.values()) - {"DIFFER"})
        print(
            f"\nJSON of this tree and {args.against}: "
            + (
                f"DIFFER on {', '.join(differ)}"
                if differ
                else f"{' or '.join(kinds)} on every shape"
            )
        )


if __name__ == "__main__":
    main()
