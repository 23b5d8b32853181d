"""Benchmark: ``assay analyze`` on tool-heavy trials against the literal floor (issue 49).

The shape (``tool_heavy.py``): 1M trials of 12–20 tool calls and one LLM call each, about 18M
spans at ``--scale 1``; ``--scale 0.1`` is 100k trials. In the same run, interleaved round by
round, each a fresh process on a set just read into the page cache:

* ``floor``: the literal floor, a hand-written Polars query computing the same trial rows (test,
  outcome, tool sequence in start order, LLM calls, tokens, span count, duration) and per-test
  counts (``bench_analyze.ISSUE_FLOOR``);
* ``same``: the same-result floor (the duplicate-span screen and Wilson verdicts added);
* ``analyze``: ``assay analyze --format json`` of this tree;
* with ``--against REV``, ``analyze@REV``: the same command run from the code at ``REV``
  (checked out in a temporary git worktree, deleted afterwards), so a slowdown is seen before a
  change lands. Whether both wrote the same JSON is said too.

Both trees are compiled to bytecode first, as an installed copy is (:func:`compiled`).

It prints the medians (wall, CPU = user + system of every thread, peak RSS) and, per pair, the
median over rounds of one round's ratio, with the CPU model (``lscpu``). It never fails on a
figure: it is a report, by hand or in CI, not a test (it exits non-zero only when a command
crashes).

    python benchmarks/bench_tool_heavy.py                       # 100k trials (make bench)
    python benchmarks/bench_tool_heavy.py --scale 1 --rounds 5  # the issue's 18M spans
    python benchmarks/bench_tool_heavy.py --against main        # this tree against main
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from against import HERE, compiled, cpu_model, environment, same_document, tree_at  # noqa: E402
from bench_analyze import ANALYZE, ISSUE_FLOOR, SAME_RESULT_FLOOR  # noqa: E402
from bench_shapes import Run, _run, warm  # noqa: E402
from tool_heavy import generate  # noqa: E402


def prepared(data: Path, trials: int) -> Path:
    """The set of ``trials`` tool-heavy trials in ``data``, generated on first use."""
    folder = data / f"tool-heavy-{trials}"
    done = folder / ".complete"
    if not done.exists():
        shutil.rmtree(folder, ignore_errors=True)
        start = time.perf_counter()
        spans = generate(folder, trials)
        done.write_text(str(spans))
        print(
            f"generated {trials:,} trials, {spans:,} spans in {time.perf_counter() - start:.0f} s"
        )
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.1, help="1M trials × this")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", metavar="REV", help="also run the code at this git rev")
    default_data = os.environ.get("ASSAY_BENCH_DATA") or str(
        Path(tempfile.gettempdir()) / "assay-bench-shapes"
    )
    parser.add_argument("--data", default=default_data, help="where the set is cached")
    parser.add_argument("--no-floor", dest="floor", action="store_false")
    args = parser.parse_args()
    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    folder = prepared(data, max(1, round(1_000_000 * args.scale)))
    spans = int((folder / ".complete").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        commands: dict[str, tuple[str, list[str], dict[str, str]]] = {}
        here = compiled(HERE / "src")
        if args.floor:
            commands["floor"] = (ISSUE_FLOOR, [str(folder)], environment(here))
            commands["same"] = (SAME_RESULT_FLOOR, [str(folder)], environment(here))
        commands["analyze"] = (ANALYZE, [str(folder), str(out / "analyze.json")], environment(here))
        with contextlib.ExitStack() as stack:
            if args.against:
                src = stack.enter_context(tree_at(args.against, out / "against"))
                commands[f"analyze@{args.against}"] = (
                    ANALYZE,
                    [str(folder), str(out / "against.json")],
                    environment(src),
                )
            runs = _rounds(commands, folder, args.rounds)
        print(f"\n{spans:,} spans, {folder.name}; {cpu_model()}; medians of {args.rounds} rounds")
        _report(runs)
        if args.against:
            same = same_document(out / "analyze.json", out / "against.json")
            print(f"\nJSON of analyze and analyze@{args.against}: {same}")


def _rounds(
    commands: dict[str, tuple[str, list[str], dict[str, str]]], folder: Path, rounds: int
) -> dict[str, list[Run]]:
    """Every command once a round, in turn, each on a set just read (see ``bench_shapes``)."""
    runs: dict[str, list[Run]] = {name: [] for name in commands}
    for number in range(1, rounds + 1):
        for name, (code, arguments, env) in commands.items():
            warm(folder)
            run = _run(code, *arguments, env=env)
            runs[name].append(run)
            print(
                f"  round {number}, {name}: {run.seconds:.2f} s, cpu {run.cpu_s:.2f} s, "
                f"{run.peak_gib:.2f} GiB",
                flush=True,
            )
    return runs


def _report(runs: dict[str, list[Run]]) -> None:
    print("\n| command | wall | CPU | peak RSS |\n|---|---|---|---|")
    for name, mine in runs.items():
        wall = statistics.median(r.seconds for r in mine)
        cpu = statistics.median(r.cpu_s for r in mine)
        peak = max(r.peak_gib for r in mine)
        print(f"| {name} | {wall:.2f} s | {cpu:.2f} s | {peak:.2f} GiB |")
    print("\nratios, median over rounds of one round's pair (wall; CPU):")
    for name in runs:
        if name == "analyze":
            continue
        walls = [a.seconds / b.seconds for a, b in zip(runs["analyze"], runs[name], strict=True)]
        cpus = [a.cpu_s / b.cpu_s for a, b in zip(runs["analyze"], runs[name], strict=True)]
        print(
            f"  analyze / {name}: {statistics.median(walls):.2f}x "
            f"({min(walls):.2f}–{max(walls):.2f}); CPU {statistics.median(cpus):.2f}x"
        )


if __name__ == "__main__":
    main()
