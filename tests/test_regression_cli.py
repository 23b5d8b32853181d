"""assay compare, analyze --baseline-version and assay plan, end to end."""

from __future__ import annotations

import inspect
import json
from typing import Any

import numpy as np
import pytest
from scipy.stats import boschloo_exact

import assay
import assay.instrument as ai
from assay.choices import DEFAULT_REGRESSION_TEST
from assay.cli import run
from assay.stats import (
    plan_adaptive_threshold,
    plan_regression,
    plan_threshold,
    regression_p_value,
    regression_power,
    verdict_interval,
)


def _record(version: str, counts: dict[str, tuple[int, int]]) -> None:
    for test_id, (passes, trials) in counts.items():
        for i in range(trials):
            with ai.trial(test_id, index=i, agent_version=version) as t:
                with ai.tool("search"):
                    pass
                t.score("quality", 50.0 + (30 if i < passes else 0) + i % 7)
                t.check("ok", i < passes)


@pytest.fixture()
def two_versions(parquet_sink, switch_sink):
    _record("v1", {"stable": (150, 150), "broken": (148, 150), "noisy": (20, 30)})
    baseline = parquet_sink.flush()
    sink = switch_sink("current")
    _record("v2", {"stable": (150, 150), "broken": (105, 150), "noisy": (18, 30)})
    return baseline, sink.flush()


def test_compare_verdicts_and_p_values(two_versions, capsys) -> None:
    baseline, current = two_versions
    assert run(["compare", str(baseline), str(current), "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    tests = {t["test_id"]: t for t in document["tests"]}
    assert {k: t["verdict"] for k, t in tests.items()} == {
        "broken": "FAIL",
        "noisy": "FAIL",  # no shown drop, but 18/30 fails its threshold: the worse of the two
        "stable": "PASS",
    }
    noisy = tests["noisy"]
    assert (noisy["regression"]["verdict"], noisy["threshold_verdict"]) == ("INCONCLUSIVE", "FAIL")
    assert noisy["verdict_reason"].startswith("FAIL against the threshold — ")
    broken = tests["broken"]["regression"]
    # scipy's layout: the two samples are the table's columns (passes, failures per version)
    expected = boschloo_exact([[105, 148], [45, 2]], alternative="less").pvalue
    assert broken["p_value"] == pytest.approx(expected, rel=1e-6)
    assert set(broken) >= {
        "test",
        "baseline_n",
        "baseline_passed",
        "p_value",
        "power",
        "delta",
        "alpha",
        "verdict",
    }
    assert (broken["baseline_n"], broken["baseline_passed"], broken["test"]) == (
        150,
        148,
        "boschloo",
    )
    assert tests["broken"]["threshold_verdict"] == "FAIL"
    assert tests["noisy"]["regression"]["power"] < 0.8


def test_baseline_version_in_one_set_equals_compare(two_versions) -> None:
    baseline, current = two_versions
    one_set = assay.analyze([baseline, current], baseline_version="v1")
    two_sets = assay.compare(baseline, current)
    assert one_set.tests.equals(two_sets.tests)
    with pytest.raises(assay.errors.ConfigError, match="versions in the set: v1, v2"):
        assay.analyze([baseline, current], baseline_version="v3")


def test_every_figure_is_filled(two_versions) -> None:
    _, current = two_versions
    document = assay.analyze(current, assay.AnalyzeOptions(ks=(1, 5, 200))).to_dict()
    noisy = next(t for t in document["tests"] if t["test_id"] == "noisy")
    assert set(noisy["pass_at_k"]) == {"1", "5", "200"}
    assert noisy["pass_at_k"]["1"] == pytest.approx(18 / 30)
    assert noisy["pass_at_k"]["200"] is None and any(
        "k > n" in n or "200" in n for n in noisy["notes"]
    )
    assert set(noisy["score"]) >= {"mean", "std", "min", "max", "p50", "p90", "ci_low", "ci_high"}
    assert noisy["tool_consistency"]["agreement"] == 1.0
    assert noisy["flakiness"]["category"] in {
        "stable",
        "low_variance",
        "moderate_variance",
        "high_variance",
        "flaky",
    }
    assert all({"name", "value", "detail"} <= set(f) for f in noisy["flakiness"]["factors"])


def test_plan_matches_the_library(capsys) -> None:
    # By default the threshold plan is for the adaptive run `assay run` does by default.
    assert run(["plan", "--threshold", "0.8", "--expected", "0.9", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    adaptive = plan_adaptive_threshold(0.8, 0.9, 0.8)
    assert document["design"] == "adaptive" and document["docs"] == "docs/adaptive.md"
    assert document["max_trials"] == adaptive.max_trials
    assert document["power"] == adaptive.power
    assert document["fail_at_threshold"] == adaptive.fail_at_threshold
    assert run(["plan", "--threshold", "0.8", "--expected", "0.9"]) == 0
    out = capsys.readouterr().out
    assert "design: adaptive" in out and "docs/adaptive.md" in out
    assert f"{adaptive.max_trials} trials at most" in out
    assert run(["plan", "--threshold", "0.8", "--expected", "0.9", "--ci-method", "jeffreys"]) == 0
    assert "--ci-method jeffreys shapes a fixed run only" in capsys.readouterr().out
    # --fixed plans the fixed run, as before.
    args = ["plan", "--threshold", "0.8", "--expected", "0.9", "--fixed", "--format", "json"]
    assert run(args) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["design"] == "fixed"  # the plan says which design its figures hold for
    assert document["n"] == plan_threshold(0.8, 0.9, 0.8).n
    assert run(["plan", "--threshold", "0.8", "--expected", "0.9", "--fixed"]) == 0
    assert "design: fixed (--fixed)" in capsys.readouterr().out
    # A threshold of 1 is run fixed by `assay run`, so it is planned fixed, and says why.
    assert run(["plan", "--threshold", "1", "--expected", "1"]) == 0
    assert "design: fixed (a threshold of 0 or 1" in capsys.readouterr().out
    args = [
        "plan",
        "--baseline-rate",
        "0.9",
        "--delta",
        "0.1",
        "--test",
        "fisher",
        "--format",
        "json",
    ]
    assert run(args) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["n_per_arm"] == plan_regression(0.9, 0.1, 0.05, 0.8, "fisher").n_per_arm
    assert run(["plan", "--threshold", "0.8"]) == 2
    assert "needs both --threshold and --expected" in capsys.readouterr().err
    assert run(["plan", "--baseline-rate", "0.9", "--fixed"]) == 2
    assert "--fixed applies to a threshold plan" in capsys.readouterr().err


def test_one_default_regression_test_in_every_command() -> None:
    from assay._cli.analyze import analyze, compare, report
    from assay._cli.plan import plan
    from assay.judge import AnalyzeOptions

    for command in (analyze, compare, report, plan):  # not given: the options' own default
        assert inspect.signature(command).parameters["regression_test"].default is None
    assert AnalyzeOptions().regression_test is DEFAULT_REGRESSION_TEST
    for function in (plan_regression, regression_power, regression_p_value):
        assert inspect.signature(function).parameters["test"].default is DEFAULT_REGRESSION_TEST


def _exit_code(document: dict[str, Any]) -> int:
    """The exit code docs/cli.md gives a document's verdicts: 1 any FAIL, 3 any INCONCLUSIVE."""
    verdicts = {t["verdict"] for t in document["tests"]}
    assert verdicts, "no test was judged"
    return 1 if "FAIL" in verdicts else 3 if "INCONCLUSIVE" in verdicts else 0


def test_adjust_and_ci_method_flags(two_versions, capsys) -> None:
    _, current = two_versions
    code = run(["analyze", str(current), "--format", "json", "--ci-method", "jeffreys"])
    document = json.loads(capsys.readouterr().out)
    assert code == _exit_code(document)
    # Jeffreys' bounds, or Clopper–Pearson's where Jeffreys' exact error at 0.8 exceeds 2.5%.
    assert {t["ci"]["method"] for t in document["tests"]} == {
        verdict_interval(t["passed"], t["n"], 0.8, 0.95, "jeffreys").method
        for t in document["tests"]
    }
    assert all(t["ci"]["method"].startswith(("jeffreys", "clopper")) for t in document["tests"])
    code = run(["analyze", str(current), "--format", "json", "--adjust", "holm"])
    document = json.loads(capsys.readouterr().out)
    assert code == _exit_code(document)
    assert document["tests"][0]["ci"]["confidence"] == pytest.approx(1 - 0.05 / 3)
    assert run(["analyze", str(current), "--k", "0"]) == 2


def test_a_significant_score_drop_fails_the_regression(parquet_sink, switch_sink) -> None:
    def record(version: str, base: float) -> None:
        for i in range(60):
            with ai.trial("scored", index=i, agent_version=version) as t:
                t.score("quality", base + i % 10)
                t.check("ok", True)

    record("v1", 80.0)
    baseline = parquet_sink.flush()
    sink = switch_sink("current")
    record("v2", 60.0)
    (test,) = assay.compare(baseline, sink.flush()).result.tests
    assert test.regression.verdict.value == "PASS"  # the pass rate did not drop
    assert test.score_regression.verdict.value == "FAIL"
    assert test.verdict.value == "FAIL"
    assert any("scores dropped" in note for note in test.notes)


def test_variance_checks_fail_a_test_and_say_why(two_versions) -> None:
    _, current = two_versions
    plain = {t.test_id: t for t in assay.analyze(current).result.tests}
    assert plain["stable"].verdict.value == "PASS"
    checked = {
        t.test_id: t
        for t in assay.analyze(current, assay.AnalyzeOptions(min_mean_score=99.0)).result.tests
    }
    stable = checked["stable"]
    assert stable.verdict.value == "FAIL"
    (check,) = stable.variance_checks
    assert (check.name, check.passed, check.limit) == ("min_mean_score", False, 99.0)
    assert check.reason in stable.verdict_reason


def test_versionless_trials_are_named_and_left_out_of_the_comparison(
    parquet_sink, capsys, monkeypatch
) -> None:
    monkeypatch.delenv("ASSAY_AGENT_VERSION", raising=False)
    _record("v1", {"stable": (30, 30)})
    _record("v2", {"stable": (30, 30)})
    for i in range(4):  # no version at all
        with ai.trial("stable", index=100 + i) as t:
            t.check("ok", False)
    path = parquet_sink.flush()
    # A comparison with None would warn, and warnings are errors in this suite.
    code = run(["analyze", str(path), "--baseline-version", "v1", "--format", "json"])
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert document["options"]["current_version"] == "v2"
    (test,) = document["tests"]
    assert (test["n"], test["passed"]) == (30, 30)  # the 4 failing versionless trials left out
    findings = document["data_quality"]["findings"]
    (finding,) = [f for f in findings if f["kind"] == "versionless_trials"]
    assert finding["count"] == 4 and "no assay.agent.version" in finding["message"]
    assert code == 3 and test["verdict"] == "INCONCLUSIVE"  # 30 trials a side: underpowered
    assert "Comparisons with None" not in err


@pytest.mark.slow
def test_a_case_too_large_to_enumerate_is_judged_and_the_rest_reported(
    parquet_sink, switch_sink, capsys
) -> None:
    # 2,500 trials per version: (n + 1)^2 > 5,000,000 tables, beyond Boschloo's enumeration.
    # The failures spread over the run in a seeded order (the anytime test pairs trials in run
    # order: every failure at the end of one version's run would be a drift, not a rate).
    rng = np.random.default_rng(251)

    def record(version: str, counts: dict[str, tuple[int, int]]) -> None:
        for test_id, (passes, trials) in counts.items():
            outcomes = rng.permutation(np.arange(trials) < passes)
            for i in range(trials):
                with ai.trial(test_id, index=i, agent_version=version) as t:
                    t.check("ok", bool(outcomes[i]))

    record("v1", {"large": (2_400, 2_500), "broken": (148, 150)})
    baseline = parquet_sink.flush()
    sink = switch_sink("current")
    record("v2", {"large": (2_390, 2_500), "broken": (105, 150)})
    current = sink.flush()
    for test in ("boschloo", "barnard", "fisher", "anytime"):
        code = run(["compare", str(baseline), str(current), "--test", test, "--format", "json"])
        document = json.loads(capsys.readouterr().out)
        tests = {t["test_id"]: t for t in document["tests"]}
        assert code == 1 and tests["broken"]["regression"]["verdict"] == "FAIL"
        large = tests["large"]["regression"]
        assert large["verdict"] == "PASS" and large["power"] > 0.99
        assert large["test"] == ("anytime" if test == "anytime" else "fisher")
        if test in ("boschloo", "barnard"):
            assert test in large["test_reason"] and "6,255,001" in large["test_reason"]
            assert large["test_reason"] in tests["large"]["notes"]
        else:
            assert large["test_reason"] is None
