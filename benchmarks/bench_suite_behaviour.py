"""What the suite's behaviour diff costs inside ``assay compare``, in CPU seconds.

Run: ``.venv/bin/python benchmarks/bench_suite_behaviour.py [V1 V2] [--rounds 7]``. Without
sets it writes the issue-49 shape (``synthetic.py``: 2,000 cases × 5 trials, 8 spans a trial
with tool and LLM calls, v1 seed 1 and v2 seed 2) to a temporary folder. It reads both trials
tables once, then times, in this process, the two parts of the diff a suite comparison runs:
the per-case means of each version (``behaviour_table``, one Polars aggregation a version) and
the diff itself (``suite_behaviour``: the matrices, the sign-flip tests of every feature, the
intervals, power and verdict), and prints the median CPU seconds of each and of their sum. The
target (issue 49's compare budget) is about 0.05 CPU-s for the whole diff.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from synthetic import generate

from assay.api import read_set_trials
from assay.judge._options import AnalyzeOptions
from assay.judge._suite_behaviour import behaviour_table, suite_behaviour


def _sets(folder: Path) -> tuple[Path, Path]:
    v1, v2 = folder / "v1", folder / "v2"
    for out, seed in ((v1, 1), (v2, 2)):
        generate(out, trials=10000, spans_per_trial=8, tests=2000, seed=seed)
    return v1, v2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="*", type=Path, help="V1 and V2 (default: written)")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        v1, v2 = args.sets if len(args.sets) == 2 else _sets(Path(tmp))
        baseline, current = read_set_trials(v1).trials, read_set_trials(v2).trials
    cases = sorted(set(baseline["test_id"].to_list()) & set(current["test_id"].to_list()))
    options = AnalyzeOptions()
    tables, diffs = [], []
    for _ in range(args.rounds + 1):  # the first round warms up (imports, caches)
        start = time.process_time()
        now, before = behaviour_table(current, {}), behaviour_table(baseline, {})
        middle = time.process_time()
        result = suite_behaviour(now, before, cases, options, 0.95)
        tables.append(middle - start)
        diffs.append(time.process_time() - middle)
    table, diff = statistics.median(tables[1:]), statistics.median(diffs[1:])
    assert result is not None
    print(f"{len(cases)} paired cases, {len(result.features)} features: {result.verdict.value}")
    print(f"per-case means (both versions) {table:.4f} CPU-s")
    print(f"the diff (tests, intervals, power) {diff:.4f} CPU-s")
    print(f"whole suite behaviour diff     {table + diff:.4f} CPU-s (target about 0.05)")


if __name__ == "__main__":
    main()
