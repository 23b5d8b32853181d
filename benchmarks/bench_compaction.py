"""Benchmark: ``assay analyze`` over one-trial files as the exporter writes them (issue 49).

A sporadic agent run with ``force_flush()`` after each trial leaves one small file per trial.
Four layouts of the same trials (a trial span, three tool calls and an LLM call each), in one
run, interleaved round by round, each a fresh ``assay analyze --format json`` process on a set
just read into the page cache:

* ``files``: one file per trial, nothing compacted (``compact_fanout=None``: the code before);
* ``exporter``: the same trials written by the exporter at its defaults (it compacts as it goes);
* ``compacted``: ``files`` after ``assay compact``;
* ``one``: every span in one file (the baseline).

It prints the file counts, the seconds the exporter took to write the trials with and without
compaction, and per layout the median wall and CPU time (user + system) and the median over
rounds of its ratio to ``one`` in the same round, with the CPU model. A report, never a test.

    python benchmarks/bench_compaction.py                 # 2,000 trials, 5 rounds
    python benchmarks/bench_compaction.py --trials 500 --rounds 3
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

sys.path.insert(0, str(Path(__file__).parent))
from against import cpu_model  # noqa: E402
from bench_analyze import ANALYZE  # noqa: E402
from bench_shapes import Run, _run, warm  # noqa: E402

from assay import conventions as c  # noqa: E402
from assay.instrument import ParquetSpanExporter  # noqa: E402
from assay.store import read_spans, write_spans  # noqa: E402

ASSAY = str(Path(sys.executable).parent / "assay")
LAYOUTS = ("files", "exporter", "compacted", "one")


def write_trials(out: Path, trials: int, fanout: int | None) -> tuple[float, list[float]]:
    """``trials`` one-trial files by the exporter, ``force_flush()`` after each.

    Returns the seconds in all (compactions still running at the end included) and each
    ``force_flush()``'s seconds (what a test that flushes after each trial waits).
    """
    exporter = ParquetSpanExporter(out, compact_fanout=fanout)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bench")
    started = time.perf_counter()
    flushes: list[float] = []
    for i in range(trials):
        attributes = {
            c.TEST_ID: f"test-{i % 20}",
            c.TRIAL_INDEX: i // 20,
            c.TRIAL_OUTCOME: c.OUTCOME_PASS if i % 9 else c.OUTCOME_FAIL,
        }
        with tracer.start_as_current_span("trial", attributes=attributes):
            for tool in ("search", "read", "write"):
                tool_attributes = {c.GENAI_OPERATION: c.GENAI_EXECUTE_TOOL, c.GENAI_TOOL_NAME: tool}
                with tracer.start_as_current_span(
                    f"execute_tool {tool}", attributes=tool_attributes
                ):
                    pass
            llm = {c.GENAI_OPERATION: "chat", c.GENAI_INPUT_TOKENS: 120, c.GENAI_OUTPUT_TOKENS: 40}
            with tracer.start_as_current_span("chat", attributes=llm):
                pass
        flushed = time.perf_counter()
        exporter.force_flush()
        flushes.append(time.perf_counter() - flushed)
    provider.shutdown()
    return time.perf_counter() - started, flushes


def latency(flushes: list[float]) -> str:
    ms = sorted(f * 1000 for f in flushes)
    return (
        f"force_flush() median {statistics.median(ms):.1f} ms, p99 {ms[int(0.99 * len(ms))]:.1f} ms"
    )


def count(folder: Path) -> int:
    return sum(1 for p in folder.rglob("*.parquet") if not p.name.startswith("."))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="assay-compaction-") as tmp:
        data = Path(tmp)
        sets = {name: data / name for name in LAYOUTS}
        plain, plain_flushes = write_trials(sets["files"], args.trials, None)
        compacting, compacting_flushes = write_trials(sets["exporter"], args.trials, 10)
        shutil.copytree(sets["files"], sets["compacted"])
        subprocess.run([ASSAY, "compact", str(sets["compacted"])], check=True)
        write_spans(read_spans(sets["files"]).to_arrow(), sets["one"], partition_by=())
        print(f"CPU: {cpu_model()}")
        print(
            f"{args.trials} trials written in {plain:.1f} s without compaction, "
            f"{compacting:.1f} s with the exporter's (fanout 10)"
        )
        print(f"without compaction: {latency(plain_flushes)}")
        print(f"with compaction: {latency(compacting_flushes)}")
        print("files: " + ", ".join(f"{n} {count(p)}" for n, p in sets.items()))
        runs: dict[str, list[Run]] = {n: [] for n in LAYOUTS}
        for _ in range(args.rounds):
            for name in LAYOUTS:
                warm(sets[name])
                runs[name].append(_run(ANALYZE, str(sets[name]), str(data / f"{name}.json")))
        if not args.rounds:
            return
        print("| layout | files | wall s | CPU s | wall / one | CPU / one |")
        print("|---|---|---|---|---|---|")
        for name in LAYOUTS:
            wall = statistics.median(r.seconds for r in runs[name])
            cpu = statistics.median(r.cpu_s for r in runs[name])
            ratio = statistics.median(
                r.seconds / o.seconds for r, o in zip(runs[name], runs["one"], strict=True)
            )
            cpu_ratio = statistics.median(
                r.cpu_s / o.cpu_s for r, o in zip(runs[name], runs["one"], strict=True)
            )
            print(
                f"| {name} | {count(sets[name])} | {wall:.2f} | {cpu:.2f} | {ratio:.2f}x "
                f"| {cpu_ratio:.2f}x |"
            )


if __name__ == "__main__":
    main()
