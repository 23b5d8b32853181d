"""Where ``assay analyze`` spends its time and memory, phase by phase (issue 12).

Runs the analysis of one trace set in this process under cProfile, one phase at a time, as
``assay analyze`` does — imports, opening the set and reading its footers, spans → trials (the
local engine, bucket by bucket where the set is large), recorded judgements, cost, the
per-test phase, the JSON — printing each phase's wall time and the peak RSS reached by its end,
then the calls that cost most inside the two big phases. Make a set with
``bench_analyze.py --keep`` or ``bench_shapes.py --generate-only``.

    python benchmarks/profile_analyze.py /tmp/bench/spans-20000000-b0 [--top 25]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import resource
import time


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("traces")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    phases: list[tuple[str, float, float]] = []
    profiles: dict[str, cProfile.Profile] = {}

    def phase(name: str, run):  # type: ignore[no-untyped-def]
        profile = cProfile.Profile()
        start = time.perf_counter()
        result = profile.runcall(run)
        phases.append((name, time.perf_counter() - start, _peak_gib()))
        profiles[name] = profile
        return result

    def imports():  # type: ignore[no-untyped-def]
        import scipy.stats  # noqa: F401  (loaded lazily by analyses; counted here, not per test)

        import assay.api as api
        from assay.analysis import engine_trials
        from assay.report import render_json

        return api, engine_trials, render_json

    api, engine_trials, render_json = phase("imports", imports)
    options = api._options(None)
    limit = 2 * api.bucket_size()

    def opened():  # type: ignore[no-untyped-def]
        trace_set = api.open_trace_set(args.traces, screen_limit=limit)
        return trace_set, trace_set.contents()

    trace_set, contents = phase("open, footers", opened)
    read = phase("spans -> trials", lambda: engine_trials(trace_set, contents=contents))
    spans = trace_set.scan()
    recorded = phase(
        "recorded judgements",
        lambda: api.read_judgements(spans, read.table) if contents.judgements else {},
    )
    trials, _ = phase(
        "cost",
        lambda: api.with_cost(
            read.table,
            api.price_table(options.prices),
            spans,
            recorded_costs=contents.recorded_costs,
        ),
    )
    analysis = phase(
        "per-test figures", lambda: api._analysis(trace_set, trials, options, recorded)
    )
    phase("json", lambda: render_json(analysis.result))
    print(f"{trials.height:,} trials, {len(analysis.result.tests)} tests\n")
    print(f"{'phase':20s} {'wall s':>8s} {'peak RSS GiB':>13s}")
    for name, seconds, peak in phases:
        print(f"{name:20s} {seconds:8.2f} {peak:13.2f}")
    for name in ("spans -> trials", "per-test figures"):
        out = io.StringIO()
        stats = pstats.Stats(profiles[name], stream=out)
        stats.sort_stats("cumulative").print_stats(args.top)
        print(f"\n--- {name}: top {args.top} by cumulative time ---")
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip()))


if __name__ == "__main__":
    main()
