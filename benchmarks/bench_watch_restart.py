"""``assay watch``'s first look (what a restart does) against ``assay analyze``, and keep-up.

Part 1, **restart**: on the same trace set, ``assay watch --once`` (its first look reads the
set by ``analyze``'s bucketed path) and ``assay analyze``, each a process of its own, measured
by ``/usr/bin/time`` (wall seconds, peak RSS); the ratio watch / analyze is printed per shape.
The target is at most 1.5x in both (docs/reliability.md).

Part 2, **keep-up**: a stream of files of ``--stream-trials`` one-span trials, one every
``--stream-every`` seconds (written under a temporary name and renamed, as the collector
writes), watched live with ``/metrics``; printed: the trials counted when the last file
lands and how long after it every trial is counted, the watch's peak RSS, and how long a
SIGTERM takes to end it.

    python benchmarks/bench_watch_restart.py [--quick] [--large] [--stream-files 40]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import generate  # noqa: E402

ASSAY = [sys.executable, "-m", "assay"]


def _split(source: Path, out: Path, files: int) -> int:
    """Rewrite the set in ``source`` as ``files`` files in ``out`` (a collector's many)."""
    table = pq.read_table(next(source.rglob("*.parquet")))
    out.mkdir(parents=True)
    step = -(-table.num_rows // files)
    for i in range(files):
        pq.write_table(table.slice(i * step, step), out / f"spans-{i:05d}.parquet")
    return int(table.num_rows)


def _timed(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one command, by /usr/bin/time."""
    with tempfile.NamedTemporaryFile("r") as report:
        subprocess.run(
            ["/usr/bin/time", "-f", "%e %M", "-o", report.name, *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        wall, kib = report.read().split()[-2:]
    return float(wall), int(kib) / 1024


def restart(work: Path, shapes: list[tuple[str, int, int, int]]) -> None:
    print(
        f"{'shape':<28} {'spans':>9} {'analyze s':>9} {'watch s':>8} {'x':>5} "
        f"{'analyze MiB':>11} {'watch MiB':>9} {'x':>5}"
    )
    for name, trials, per_trial, files in shapes:
        made = work / f"{name}-made"
        generate(made, trials=trials, spans_per_trial=per_trial, tests=50)
        data = made
        if files > 1:
            data = work / name
            _split(made, data, files)
        a_s, a_m = _timed([*ASSAY, "analyze", str(data), "--format", "json"])
        w_s, w_m = _timed([*ASSAY, "watch", str(data), "--once"])
        print(
            f"{name:<28} {trials * per_trial:>9,} {a_s:>9.1f} {w_s:>8.1f} {w_s / a_s:>5.2f} "
            f"{a_m:>11.0f} {w_m:>9.0f} {w_m / a_m:>5.2f}",
            flush=True,
        )


def _counted(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
            text = answer.read().decode()
    except OSError:
        return -1
    return int(
        sum(float(v) for v in re.findall(r"^assay_test_trials_total\{[^}]*\} (\S+)", text, re.M))
    )


def _peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def keep_up(work: Path, files: int, per_file: int, every: float) -> None:
    made = work / "stream-made"
    generate(made, trials=files * per_file, spans_per_trial=1, tests=50)
    table = pq.read_table(next(made.rglob("*.parquet")))
    out = work / "stream"
    out.mkdir()
    watch = subprocess.Popen(
        [
            *ASSAY,
            "watch",
            str(out),
            "--poll-interval",
            "0.5",
            "--grace",
            "0.5",
            "--metrics-port",
            "0",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert watch.stderr is not None
    port = int(watch.stderr.readline().rsplit(":", 1)[1].split("/")[0])
    start = time.monotonic()
    for i in range(files):
        temp = out / f".spans-{i:05d}.parquet.tmp"
        pq.write_table(table.slice(i * per_file, per_file), temp)
        os.rename(temp, out / f"spans-{i:05d}.parquet")
        time.sleep(max(0.0, start + (i + 1) * every - time.monotonic()))
    landed = time.monotonic()
    at_last = _counted(port)
    total = files * per_file
    while _counted(port) < total and time.monotonic() - landed < 120:
        time.sleep(0.1)
    caught_up = time.monotonic() - landed
    peak = _peak_mib(watch.pid)
    stopping = time.monotonic()
    watch.send_signal(signal.SIGTERM)
    watch.wait(60)
    stopped = time.monotonic() - stopping
    rate = per_file / every
    print(
        f"keep-up: {files} files of {per_file:,} trials every {every} s ({rate:,.0f} trials/s, "
        f"{total:,} in all): {at_last:,} counted when the last file landed, all "
        f"{_counted_or(total, caught_up)} after it; watch peak RSS {peak:.0f} MiB; "
        f"SIGTERM ended it in {stopped:.2f} s",
        flush=True,
    )


def _counted_or(total: int, seconds: float) -> str:
    return f"counted {seconds:.1f} s" if seconds < 120 else "NOT counted within 120 s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Small shapes only.")
    parser.add_argument("--large", action="store_true", help="Add 2M one-span trials.")
    parser.add_argument("--stream-files", type=int, default=40)
    parser.add_argument("--stream-trials", type=int, default=5_000)
    parser.add_argument("--stream-every", type=float, default=0.5)
    parser.add_argument("--no-stream", action="store_true")
    args = parser.parse_args()
    shapes = [("one-span-300k-60-files", 300_000, 1, 60), ("5-spans-100k-1-file", 100_000, 5, 1)]
    if args.quick:
        shapes = [("one-span-100k-20-files", 100_000, 1, 20)]
    if args.large:
        shapes.append(("one-span-2M-1-file", 2_000_000, 1, 1))
    with tempfile.TemporaryDirectory() as folder:
        restart(Path(folder), shapes)
        if not args.no_stream:
            keep_up(Path(folder), args.stream_files, args.stream_trials, args.stream_every)


if __name__ == "__main__":
    main()
