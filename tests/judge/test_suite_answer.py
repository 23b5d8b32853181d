"""The suite's answer: per-suite figures over cases, the paired comparison, and its reports."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import assay
from assay.api import compare
from assay.cli import run as assay_cli
from assay.instrument import ParquetSpanExporter
from assay.judge import AnalyzeOptions, Verdict, case_table
from assay.report import render_markdown
from assay.stats import clustered_mean, paired_comparison


def record(
    folder: Path,
    passed: np.ndarray,
    version: str,
    *,
    suite: str | None = "support",
    names: list[str] | None = None,
    errors: np.ndarray | None = None,
) -> None:
    """One trial span per cell of ``passed`` (cases × trials), with the real OTel SDK."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(str(folder))))
    tracer = provider.get_tracer("test-suite")
    for case in range(passed.shape[0]):
        for index in range(passed.shape[1]):
            outcome = "pass" if passed[case, index] else "fail"
            if errors is not None and errors[case, index]:
                outcome = "error"
            attributes: dict[str, str | int] = {
                "assay.test.id": names[case] if names else f"case-{case:03d}",
                "assay.agent.version": version,
                "assay.trial.index": index,
                "assay.trial.outcome": outcome,
            }
            if suite is not None:
                attributes["assay.suite"] = suite
            with tracer.start_as_current_span("trial", attributes=attributes):
                pass
    provider.shutdown()


def pair(root: Path, cases: int, trials: int, drop: float, seed: int) -> tuple[Path, Path]:
    """v1 and v2 trace sets: case difficulties from Beta(2, 1), v2 ``drop`` worse on each."""
    rng = np.random.default_rng(seed)
    rates = rng.beta(2.0, 1.0, cases)
    v1, v2 = root / "v1", root / "v2"
    record(v1, rng.random((cases, trials)) < rates[:, None], "v1")
    record(v2, rng.random((cases, trials)) < np.clip(rates - drop, 0, 1)[:, None], "v2")
    return v1, v2


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """300 cases × 3 trials, v2 ten points worse on every case (the issue's shape).

    The paired (betting) test has power of about 0.99 at this drop and size
    (benchmarks/bench_audit_paired.py measures it).
    """
    return pair(tmp_path_factory.mktemp("planted"), 300, 3, 0.10, seed=0)


@pytest.fixture(scope="module")
def same(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two sets of 300 × 3 trials drawn from one agent."""
    return pair(tmp_path_factory.mktemp("same"), 300, 3, 0.0, seed=4)


def test_the_suite_figure_is_the_mean_over_cases_of_each_cases_rate(
    planted: tuple[Path, Path],
) -> None:
    analysis = assay.analyze(planted[1])
    (suite,) = analysis.result.suites
    rates = np.array([t.passed / t.n for t in analysis.result.tests])
    sizes = np.array([t.n for t in analysis.result.tests])
    assert suite.suite == "support"
    assert suite.cases == 300 and suite.trials == int(sizes.sum())
    assert suite.pass_rate == pytest.approx(rates.mean(), abs=1e-12)
    expected = clustered_mean(rates, sizes, 0.95)  # the public default is what the verdict reads
    assert suite.interval is not None
    assert (suite.interval.low, suite.interval.high) == pytest.approx(
        (expected.interval.low, expected.interval.high), abs=1e-12
    )
    # One meaning: the verdict is read from the interval shown.
    if suite.interval.low >= suite.threshold:
        assert suite.verdict is Verdict.PASS
    elif suite.interval.high < suite.threshold:
        assert suite.verdict is Verdict.FAIL
    else:
        assert suite.verdict is Verdict.INCONCLUSIVE
    assert suite.pass_at_k is not None and suite.pass_at_k["1"].value == pytest.approx(rates.mean())
    assert suite.pass_at_k["5"].value is None  # three trials per case: no pass@5


def test_a_planted_drop_fails_the_suite_comparison_and_one_agent_does_not(
    planted: tuple[Path, Path], same: tuple[Path, Path]
) -> None:
    worse = compare(*planted).result.suites[0].comparison
    assert worse is not None and worse.paired_cases == 300 and worse.unpaired_cases == 0
    assert worse.verdict is Verdict.FAIL
    assert worse.difference is not None and worse.difference < 0
    alike = compare(*same).result.suites[0].comparison
    assert alike is not None and alike.verdict is not Verdict.FAIL


def test_compare_answers_the_suite_question_first_and_briefly(planted: tuple[Path, Path]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assay", "compare", str(planted[0]), str(planted[1])],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    # Line 1 is the answer and what decided the exit code; the comparison, then the threshold
    # verdict labelled as such.
    assert lines[0].startswith("assay: FAIL — decided by the suite comparison against the")
    assert any(
        line.startswith("suite support against the baseline — FAIL: pass rate dropped")
        for line in lines[:12]
    )
    assert any(
        line.startswith("suite support against the threshold 80.0% (reported, not counted) — ")
        for line in lines[:16]
    )
    assert len(lines) <= 70 and max(map(len, lines)) <= 120
    assert any("more case(s) not listed" in line for line in lines)
    every = subprocess.run(
        [sys.executable, "-m", "assay", "compare", "--all-cases", *map(str, planted)],
        capture_output=True,
        text=True,
        check=False,
    )
    listed = [line for line in every.stdout.splitlines() if line.startswith("│ case-")]
    assert len(listed) == 300


def test_the_json_document_carries_the_suites(planted: tuple[Path, Path]) -> None:
    document = json.loads(compare(*planted).to_json())
    (suite,) = document["suites"]
    assert suite["suite"] == "support" and suite["cases"] == 300
    assert set(suite["interval"]) == {"low", "high", "method", "confidence"}
    comparison = suite["comparison"]
    for key in (
        "baseline_cases",
        "current_cases",
        "paired_cases",
        "unpaired_cases",
        "difference",
        "interval",
        "test",
        "p_value",
        "power",
        "delta",
        "min_detectable_drop",
        "margin",
        "verdict",
        "reason",
    ):
        assert key in comparison
    assert comparison["verdict"] == "FAIL" and comparison["margin"] is None


def test_cases_one_version_ran_are_counted_and_named(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    record(tmp_path / "a", rng.random((4, 3)) < 0.7, "v1", names=["a", "b", "c", "gone"])
    record(tmp_path / "b", rng.random((4, 3)) < 0.7, "v2", names=["a", "b", "c", "new"])
    comparison = compare(tmp_path / "a", tmp_path / "b").result.suites[0].comparison
    assert comparison is not None
    assert (comparison.paired_cases, comparison.unpaired_cases) == (3, 2)
    assert comparison.only_baseline == ("gone",) and comparison.only_current == ("new",)
    assert "gone" in comparison.reason and "new" in comparison.reason


def test_a_margin_asks_can_we_switch(planted: tuple[Path, Path]) -> None:
    wide = compare(*planted, AnalyzeOptions(margin=0.2)).result.suites[0].comparison
    assert wide is not None and wide.paired is not None
    assert wide.paired.drop_upper < 0.2 and wide.verdict is Verdict.PASS
    assert wide.margin == 0.2 and "margin 20.0 points" in wide.reason
    narrow = compare(*planted, AnalyzeOptions(margin=0.001)).result.suites[0].comparison
    assert narrow is not None and narrow.paired is not None
    expected = (
        Verdict.FAIL
        if narrow.paired.drop_lower > 0.001
        else (Verdict.PASS if narrow.paired.drop_upper < 0.001 else Verdict.INCONCLUSIVE)
    )
    assert narrow.verdict is expected


def test_case_counts_are_the_cases_own(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    record(
        tmp_path,
        rng.random((5, 4)) < 0.6,
        "v1",
        errors=rng.random((5, 4)) < 0.2,
    )
    for errors in ("count", "exclude"):
        analysis = assay.analyze(tmp_path, AnalyzeOptions(errors=errors))  # type: ignore[arg-type]
        table = case_table(
            analysis.trials,
            {t.test_id: errors == "exclude" for t in analysis.result.tests},
            None,
        )
        by_case = {r["test_id"]: (r["n"], r["passed"]) for r in table.iter_rows(named=True)}
        for test in analysis.result.tests:
            assert by_case[test.test_id] == (test.n, test.passed)


def test_trials_without_a_suite_form_the_sets_suite(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    record(tmp_path, rng.random((3, 4)) < 0.8, "v1", suite=None)
    (suite,) = assay.analyze(tmp_path).result.suites
    assert suite.suite is None and suite.cases == 3


def test_suite_attribute_groups_by_another_attribute(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    record(tmp_path, rng.random((4, 3)) < 0.8, "v1", suite="ignored")
    options = AnalyzeOptions(suite_attribute="assay.agent.version")
    (suite,) = assay.analyze(tmp_path, options).result.suites
    assert suite.suite == "v1" and suite.cases == 4


def test_a_suite_threshold_makes_the_suite_verdict_count(planted: tuple[Path, Path]) -> None:
    analysis = assay.analyze(planted[0], AnalyzeOptions(suite_threshold=0.99))
    (suite,) = analysis.result.suites
    assert suite.verdict is Verdict.FAIL
    passing = replace(
        analysis.result,
        tests=tuple(replace(t, verdict=Verdict.PASS) for t in analysis.result.tests),
    )
    assert passing.exit_code() == 1
    assert all(s.counts for s in passing.suites)
    unasked = replace(passing, suites=tuple(replace(s, counts=False) for s in passing.suites))
    assert unasked.exit_code() == 0


def test_the_set_with_one_case_has_no_suite_interval(tmp_path: Path) -> None:
    record(tmp_path, np.ones((1, 5), dtype=bool), "v1")
    (suite,) = assay.analyze(tmp_path).result.suites
    assert suite.cases == 1 and suite.interval is None
    assert suite.verdict is Verdict.INCONCLUSIVE


def test_case_table_reads_the_main_score(tmp_path: Path) -> None:
    trials = pl.DataFrame(
        {
            "test_id": ["a", "a", "b"],
            "suite": ["s", "s", None],
            "passed": [True, False, True],
            "error": [False, False, False],
            "scores": [
                [{"name": "q", "value": 1.0}, {"name": "r", "value": 9.0}],
                [{"name": "q", "value": 3.0}],
                [],
            ],
            "duration_s": [1.0, 2.0, 3.0],
        }
    )
    table = case_table(trials, {}, "q")
    assert table["_score"].to_list()[0] == pytest.approx(2.0)
    assert table["_score"].to_list()[1] is None
    assert table["suite"].to_list() == ["s", None]


def test_a_trials_main_score_is_the_same_read_from_one_score_or_several() -> None:
    # One score a trial (read as the list's one value) and the same trials with a second
    # score beside it (every list read by name): the same case figures, bit for bit.
    rng = np.random.default_rng(3)
    values = rng.random(200)
    names = rng.choice(["q", "r"], 200)
    one = [
        [] if i % 7 == 0 else [{"name": str(n), "value": float(v)}]
        for i, (n, v) in enumerate(zip(names, values, strict=True))
    ]
    several = [[*s, {"name": "other", "value": 5.0}] for s in one]
    values[5] = float("nan")

    def table(scores: list[list[dict[str, object]]]) -> pl.DataFrame:
        trials = pl.DataFrame(
            {
                "test_id": [f"t{i % 9}" for i in range(200)],
                "suite": ["s"] * 200,
                "passed": [True] * 200,
                "error": [False] * 200,
                "scores": scores,
                "duration_s": values,
            }
        )
        return case_table(trials, {}, "q")

    first, second = table(one), table(several)
    assert first.equals(second)
    assert first["_score"].null_count() < first.height


def test_a_suite_pass_reads_the_betting_interval_and_states_no_other_error(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(9)
    passed = rng.random((40, 5)) < 0.97
    record(tmp_path, passed, "v1")
    (suite,) = assay.analyze(tmp_path).result.suites
    assert suite.verdict is Verdict.PASS
    assert suite.interval is not None and suite.interval.method == "cluster-betting"
    # the interval the verdict reads is the public one, on the same per-case rates
    rates = passed.sum(axis=1) / passed.shape[1]
    public = clustered_mean(rates, np.full(rates.size, passed.shape[1]), 0.95).interval
    assert suite.interval.low == pytest.approx(public.low, abs=1e-12)
    assert not any("can be wrong" in note for note in suite.notes)


def test_a_suite_attribute_no_trial_carries_is_said(tmp_path: Path) -> None:
    rng = np.random.default_rng(10)
    record(tmp_path, rng.random((3, 3)) < 0.8, "v1")
    options = AnalyzeOptions(suite_attribute="nothing.here")
    (suite,) = assay.analyze(tmp_path, options).result.suites
    assert suite.suite is None
    assert "no trial carries nothing.here" in suite.notes[0]


def test_the_comparison_reads_the_public_paired_comparison(planted: tuple[Path, Path]) -> None:
    # An outside audit calls assay.stats.paired_comparison on per-case counts and gets the
    # p-value the regression verdict reads and the drop bound the --margin verdict reads.
    from assay.stats import paired_comparison

    result = compare(*planted, AnalyzeOptions(margin=0.2)).result
    comparison = result.suites[0].comparison
    assert comparison is not None and comparison.paired is not None
    base = sorted(assay.analyze(planted[0]).result.tests, key=lambda t: t.test_id)
    current = {t.test_id: t for t in result.tests}
    # cases in id order, as the suite's case table holds them (the betting order follows it)
    pairs = [(b.passed, b.n, current[b.test_id].passed, current[b.test_id].n) for b in base]
    counts = np.array(pairs).T
    public = paired_comparison(counts[0], counts[1], counts[2], counts[3])
    assert comparison.p_value == pytest.approx(public.p_value, rel=1e-12)
    assert comparison.paired.drop_upper == pytest.approx(public.drop_upper, abs=1e-12)
    assert comparison.test == "betting"


def test_the_suite_score_interval_lies_within_the_score_range() -> None:
    from assay.choices import SuiteInterval
    from assay.judge._suite import _estimate

    rng = np.random.default_rng(11)
    sizes = pl.Series(np.full(40, 3))
    known = _estimate(pl.Series(rng.random(40)), sizes, 0.95, SuiteInterval.BETTING, 0, "q")
    assert known is not None and known.interval is not None
    assert known.interval.method == "cluster-betting"
    assert 0.0 <= known.interval.low <= known.interval.high <= 1.0
    # no known range (values beyond [0, 1], a score assay knows no scale of): the t interval
    wide = _estimate(pl.Series(rng.random(40) * 50), sizes, 0.95, SuiteInterval.BETTING, 0, "q")
    assert wide is not None and wide.interval is not None
    assert wide.interval.method == "cluster-t"


def _same_outcomes(root: Path, cases: int, missing: list[int], errors: list[int]) -> None:
    """v1 and v2 with identical outcomes; v2 lacks ``missing`` and errs on ``errors``."""
    rng = np.random.default_rng(11)
    passed = rng.random((cases, 3)) < rng.beta(2.0, 1.0, cases)[:, None]
    names = [f"case-{i:03d}" for i in range(cases)]
    record(root / "v1", passed, "v1", names=names)
    kept = [i for i in range(cases) if i not in missing]
    erring = np.zeros((len(kept), 3), dtype=bool)
    erring[[kept.index(i) for i in errors]] = True
    record(root / "v2", passed[kept], "v2", names=[names[i] for i in kept], errors=erring)


def test_no_pass_while_a_case_has_no_answer_from_the_current_version(tmp_path: Path) -> None:
    # Three cases never run by v2 and one it answered with errors only: four missing.
    _same_outcomes(tmp_path, 40, missing=[3, 17, 29], errors=[8])
    options = AnalyzeOptions(delta=0.5)
    held = compare(tmp_path / "v1", tmp_path / "v2", options).result.suites[0].comparison
    assert held is not None and held.paired is not None
    assert held.missing_current == ("case-003", "case-008", "case-017", "case-029")
    assert held.paired_cases == 36 and held.paired.p_value >= 0.05
    assert held.paired.power >= 0.8  # the paired cases alone would PASS ...
    assert held.verdict is Verdict.INCONCLUSIVE  # ... but not while cases are missing
    assert "no PASS while cases are missing" in held.reason and "case-008" in held.reason
    # The worst case: each missing case failing all 3 current trials beside its baseline rate.
    baseline = assay.analyze(tmp_path / "v1").result.tests
    counts = {t.test_id: (t.passed, t.n) for t in baseline}
    ids = sorted(counts)
    current = {t.test_id: (t.passed, t.n) for t in assay.analyze(tmp_path / "v2").result.tests}
    filled = [current[i] if i in current and i != "case-008" else (0, 3) for i in ids]
    expected = paired_comparison(
        np.array([counts[i][0] for i in ids]),
        np.array([counts[i][1] for i in ids]),
        np.array([f[0] for f in filled]),
        np.array([f[1] for f in filled]),
        delta=0.5,
    )
    worst = held.worst_case
    assert worst is not None and worst.cases == 40
    assert worst.difference == pytest.approx(expected.difference)
    assert worst.p_value == pytest.approx(expected.p_value)
    assert held.worst_case_verdict is not None
    allowed = compare(
        tmp_path / "v1", tmp_path / "v2", replace(options, allow_missing_cases=True)
    ).result.suites[0]
    assert allowed.comparison is not None and allowed.comparison.verdict is Verdict.PASS
    assert "--allow-missing-cases" in allowed.comparison.reason
    document = json.loads(compare(tmp_path / "v1", tmp_path / "v2", options).to_json())
    shown = document["suites"][0]["comparison"]
    assert shown["missing_current"] == list(held.missing_current)
    assert shown["worst_case"]["cases"] == 40 and shown["worst_case"]["verdict"] in (
        "PASS",
        "FAIL",
        "INCONCLUSIVE",
    )


def test_a_baseline_that_never_answered_is_no_evidence(tmp_path: Path) -> None:
    rng = np.random.default_rng(12)
    shape = (20, 3)
    record(tmp_path / "v1", np.zeros(shape, dtype=bool), "v1", errors=np.ones(shape, dtype=bool))
    record(tmp_path / "v2", rng.random(shape) < 0.95, "v2")
    options = AnalyzeOptions(delta=0.5, allow_missing_cases=True)
    analysis = compare(tmp_path / "v1", tmp_path / "v2", options)
    comparison = analysis.result.suites[0].comparison
    assert comparison is not None and comparison.verdict is Verdict.INCONCLUSIVE
    assert comparison.reason.startswith("no evidence: the baseline answered none of its 60")
    assert analysis.exit_code() != 0
    # The current version answering nothing is no evidence either (not a FAIL, not a PASS).
    record(tmp_path / "v3", np.zeros(shape, dtype=bool), "v3", errors=np.ones(shape, dtype=bool))
    dead = compare(tmp_path / "v2", tmp_path / "v3").result.suites[0].comparison
    assert dead is not None and dead.verdict is Verdict.INCONCLUSIVE
    assert dead.reason.startswith("no evidence: the current version answered none")


def test_one_test_id_in_two_suites_is_kept_apart_and_named(tmp_path: Path) -> None:
    rng = np.random.default_rng(13)
    for version in ("v1", "v2"):
        folder = tmp_path / version
        record(folder, rng.random((3, 4)) < 0.9, version, suite="alpha", names=["a", "b", "both"])
        record(folder, np.zeros((2, 4), dtype=bool), version, suite="beta", names=["c", "both"])
    analysis = compare(tmp_path / "v1", tmp_path / "v2")
    suites = {s.suite: s for s in analysis.result.suites}
    assert set(suites) == {"alpha", "beta"}
    assert suites["beta"].case_ids == ("both", "c") and suites["beta"].trials == 8
    assert suites["beta"].pass_rate == 0.0  # beta's own trials of "both" only
    assert suites["alpha"].case_ids == ("a", "b", "both") and suites["alpha"].trials == 12
    assert all("recorded under other suites" in " ".join(s.notes) for s in suites.values())
    (both,) = [t for t in analysis.result.tests if t.test_id == "both"]
    assert both.trials == 8 and any("alpha, beta" in note for note in both.notes)
    assert any("both (alpha, beta)" in note for note in analysis.result.notes)
    for fmt in ("console", "markdown", "html", "json", "junit"):
        out = tmp_path / f"report.{fmt}"
        code = assay_cli(
            ["compare", str(tmp_path / "v1"), str(tmp_path / "v2"), "--format", f"{fmt}:{out}"]
        )
        assert code in (0, 1, 3) and "alpha, beta" in out.read_text(), fmt


def test_a_suite_only_the_baseline_ran_is_answered_not_dropped(tmp_path: Path) -> None:
    rng = np.random.default_rng(14)
    record(tmp_path / "v1", rng.random((4, 3)) < 0.9, "v1", suite="alpha")
    record(tmp_path / "v1", np.ones((5, 3), dtype=bool), "v1", suite="beta", names=list("pqrst"))
    record(tmp_path / "v2", rng.random((4, 3)) < 0.9, "v2", suite="alpha")
    analysis = compare(tmp_path / "v1", tmp_path / "v2")
    beta = {s.suite: s for s in analysis.result.suites}["beta"]
    assert beta.cases == 0 and beta.verdict is Verdict.INCONCLUSIVE
    comparison = beta.comparison
    assert comparison is not None and comparison.verdict is Verdict.INCONCLUSIVE
    assert comparison.missing_current == tuple("pqrst") and comparison.baseline_cases == 5
    assert comparison.worst_case is not None and comparison.worst_case.difference == -1.0
    assert analysis.exit_code() != 0
    # Its comparison counts in the exit code (docs/cli.md) and leads the reports.
    assert "suite beta against the baseline" in {c.what for c in analysis.result.decision.counted}
    assert "against the baseline (alpha, beta)" in analysis.result.decision.decided_by
    assert "suite <code>beta</code> against the baseline: INCONCLUSIVE" in render_markdown(
        analysis.result
    )
