"""The adaptive comparison of two versions over a suite, on real agents (Python functions)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import assay
from assay.cli import run as cli
from assay.errors import InputError
from assay.judge import Verdict
from assay.run import (
    PairedRunOptions,
    RunOptions,
    Suite,
    load_agent,
    load_baseline_rates,
    load_suite,
    run_paired,
    run_suite,
)
from assay.stats import PairedDecision, PairedDifferenceSequence, case_order


def _suite_yaml(cases: int, runs: int = 2, p: float = 0.9) -> str:
    lines = ["tests:"]
    for i in range(cases):
        lines += [
            f"  - name: case-{i:03d}",
            f"    input: {{p: {p}}}",
            '    expected: {output: {contains: ["yes"]}}',
            f"    variance: {{runs: {runs}}}",
        ]
    return "\n".join(lines) + "\n"


def _suite(tmp_path: Path, cases: int, runs: int = 2) -> Suite:
    path = tmp_path / "suite.yaml"
    path.write_text(_suite_yaml(cases, runs))
    return load_suite(path)


def _options(tmp_path: Path, **kwargs: object) -> RunOptions:
    return RunOptions(out=str(tmp_path / "traces"), seed=7, concurrency=1, **kwargs)  # type: ignore[arg-type]


def _replayed(differences: list[float], paired: PairedRunOptions) -> PairedDifferenceSequence:
    sequence = PairedDifferenceSequence(1 - paired.alpha, paired.delta, paired.margin)
    sequence.add(differences)
    return sequence


def test_a_planted_drop_fails_early_and_both_versions_are_recorded(tmp_path: Path) -> None:
    suite = _suite(tmp_path, 60)
    paired = PairedRunOptions()
    result = run_paired(
        suite,
        load_agent(agent="assay_test_agents:bernoulli_worse"),
        _options(tmp_path, agent_version="v2"),
        paired,
        baseline_agent=load_agent(agent="assay_test_agents:bernoulli"),
    )
    s = result.status
    assert s.decision is PairedDecision.DROP and result.verdict is Verdict.FAIL
    assert s.high < 0 and result.exit_code() == 1
    assert 0 < s.cases < 60 and result.suite_cases == 60 and result.stop_reason is None
    # Cases were fed in the seeded order, and the status is the sequence over what was fed.
    order = [suite.tests[i].id for i in case_order(60, 7)]
    assert [c.case for c in result.cases] == order[: s.cases]
    replay = _replayed([c.difference for c in result.cases], paired)
    assert replay.status() == s
    # It stopped at the first case whose interval settled: one case fewer was undecided.
    assert _replayed([c.difference for c in result.cases[:-1]], paired).decide() is (
        PairedDecision.UNDECIDED
    )
    # concurrency 1: each case ran its 2 trials on both versions, nothing beyond the stop
    assert len(result.trials) == 2 * 2 * s.cases
    both = assay.analyze(tmp_path / "traces", baseline_version="baseline", current_version="v2")
    assert both.trials.height == 2 * s.cases
    assert both.baseline_trials is not None and both.baseline_trials.height == 2 * s.cases
    document = result.to_json()
    assert document["design"] == "adaptive paired sequence"
    assert document["cases_used"] == s.cases and document["verdict"] == "FAIL"
    assert document["interval"] == {"low": s.low, "high": s.high, "confidence": 0.95}


def test_no_change_passes_once_the_interval_lies_above_minus_delta(tmp_path: Path) -> None:
    # One agent on both sides with the same trial seeds: every difference is 0, and the run
    # stops at the first count where the sequence of zeros lies above -delta.
    suite = _suite(tmp_path, 200, runs=1)
    paired = PairedRunOptions(delta=0.3)
    agent = load_agent(agent="assay_test_agents:bernoulli")
    result = run_paired(suite, agent, _options(tmp_path), paired, baseline_agent=agent)
    first = next(
        n for n in range(1, 201) if _replayed([0.0] * n, paired).decide().value != "undecided"
    )
    assert result.status.decision is PairedDecision.NO_DROP and result.verdict is Verdict.PASS
    assert result.status.cases == first and result.status.low > -0.3


def test_within_the_margin_passes(tmp_path: Path) -> None:
    suite = _suite(tmp_path, 200, runs=1)
    agent = load_agent(agent="assay_test_agents:bernoulli")
    paired = PairedRunOptions(margin=0.3)
    result = run_paired(suite, agent, _options(tmp_path), paired, baseline_agent=agent)
    assert result.status.decision is PairedDecision.WITHIN_MARGIN
    assert result.verdict is Verdict.PASS and "within the margin" in result.reason


def test_a_case_budget_leaves_it_inconclusive(tmp_path: Path) -> None:
    suite = _suite(tmp_path, 60)
    agent = load_agent(agent="assay_test_agents:bernoulli")
    result = run_paired(
        suite,
        agent,
        _options(tmp_path),
        PairedRunOptions(max_cases=3),
        baseline_agent=agent,
    )
    assert result.status.cases == 3 and result.verdict is Verdict.INCONCLUSIVE
    assert result.status.low <= -0.1 and result.exit_code() == 3
    assert result.exit_code(inconclusive_ok=True) == 0
    assert result.stop_reason == "all 3 cases ran" and "undecided" in result.reason


def test_a_trial_budget_stops_it_inconclusive(tmp_path: Path) -> None:
    suite = _suite(tmp_path, 60)
    agent = load_agent(agent="assay_test_agents:bernoulli")
    result = run_paired(
        suite,
        agent,
        _options(tmp_path, budget=assay.run.Budget(max_trials=9)),
        baseline_agent=agent,
    )
    assert len(result.trials) == 9 and result.status.cases == 2  # the 3rd case is half run
    assert result.verdict is Verdict.INCONCLUSIVE
    assert result.stop_reason is not None and "--max-trials 9" in result.stop_reason
    # The half-run case ended with the current version's trial only: named.
    third = suite.tests[int(case_order(60, 7)[2])].id
    assert result.one_version_only == (third,)
    assert any("ended with one version's trials only" in w and third in w for w in result.warnings)
    assert result.to_json()["one_version_only"] == [third]


def test_against_a_recorded_baseline_set(tmp_path: Path) -> None:
    suite = _suite(tmp_path, 60)
    recorded = tmp_path / "baseline"
    # The baseline set lacks the first case of the order: it is named, never paired with nothing.
    first = suite.tests[int(case_order(60, 7)[0])]
    run_suite(
        suite,
        load_agent(agent="assay_test_agents:bernoulli"),
        RunOptions(out=str(recorded), seed=3, adaptive=False, agent_version="v1"),
        tests=[t for t in suite.tests if t is not first],
    )
    rates, version = load_baseline_rates(recorded)
    assert version == "v1" and len(rates) == 59
    result = run_paired(
        suite,
        load_agent(agent="assay_test_agents:bernoulli_worse"),
        _options(tmp_path),
        PairedRunOptions(baseline_version=version),
        baseline_rates=rates,
        baseline_source=str(recorded),
    )
    assert result.verdict is Verdict.FAIL and result.status.high < 0
    assert all(c.baseline == rates[c.case] for c in result.cases)
    assert result.unpaired == (first.id,) and first.id not in {c.case for c in result.cases}
    assert any("1 case(s) not compared" in w and first.id in w for w in result.warnings)
    assert result.to_json()["baseline_source"] == str(recorded)
    # Only the current version ran, and not on the case the set lacks.
    assert len(result.trials) == 2 * result.status.cases
    assert first.id not in {t.test_id for t in result.trials}


def test_a_recorded_set_of_several_versions_needs_one_named(tmp_path: Path) -> None:
    suite = _suite(tmp_path, 2)
    recorded = tmp_path / "baseline"
    for version in ("v1", "v2"):
        run_suite(
            suite,
            load_agent(agent="assay_test_agents:bernoulli"),
            RunOptions(out=str(recorded), seed=3, adaptive=False, agent_version=version),
        )
    with pytest.raises(InputError, match="several assay.agent.version values"):
        load_baseline_rates(recorded)
    rates, version = load_baseline_rates(recorded, "v2")
    assert version == "v2" and set(rates) == {t.id for t in suite.tests}


def _cli_run(tmp_path: Path, cases: int, baseline: str, *flags: str) -> int:
    """``assay run`` of a suite of ``cases`` against ``assay_test_agents:<baseline>``."""
    path = tmp_path / "suite.yaml"
    path.write_text(_suite_yaml(cases))
    agents = ["--agent", "assay_test_agents:bernoulli"]
    return cli(
        ["run", str(path), *agents, "--baseline-agent", f"assay_test_agents:{baseline}", *flags]
    )


def test_cli_dry_run_says_what_it_would_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _cli_run(tmp_path, 5, "bernoulli", "--dry-run")
    out, _ = capsys.readouterr()
    assert code == 0 and "at most 5 cases, 20 trials" in out
    assert not (tmp_path / "traces").exists()


def test_cli_comparison_json_and_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(_suite_yaml(60))
    code = cli(
        [
            "run",
            str(path),
            "--agent",
            "assay_test_agents:bernoulli_worse",
            "--baseline-agent",
            "assay_test_agents:bernoulli",
            "--agent-version",
            "v2",
            "--baseline-version",
            "v1",
            "--seed",
            "7",
            "--out",
            str(tmp_path / "t"),
            "--format",
            "json",
            "--quiet",
        ]
    )
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert code == 1 and document["verdict"] == "FAIL" and document["decision"] == "drop shown"
    assert document["current_version"] == "v2" and document["baseline_version"] == "v1"
    assert document["suite_cases"] == 60 and 0 < document["cases_used"] < 60
    assert document["interval"]["high"] < 0 and document["delta"] == 0.1
    assert "FAIL  v2 against v1: drop shown" in err and "cases used:" in err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--fixed"], "--fixed: a comparison stops adaptively"),
        (["--sequential", "sprt"], "--sequential/--beta"),
        (["--baseline", "x"], "give one baseline"),
    ],
)
def test_cli_refuses_what_a_comparison_cannot_honour(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(_suite_yaml(3))
    code = cli(
        [
            "run",
            str(path),
            "--agent",
            "assay_test_agents:bernoulli",
            "--baseline-agent",
            "assay_test_agents:bernoulli",
            "--out",
            str(tmp_path / "t"),
            *flags,
        ]
    )
    _, err = capsys.readouterr()
    assert code == 2 and message in err and "Traceback" not in err


def test_cli_margin_without_a_baseline_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(_suite_yaml(3))
    code = cli(["run", str(path), "--agent", "assay_test_agents:bernoulli", "--margin", "0.02"])
    _, err = capsys.readouterr()
    assert code == 2 and "--margin applies to a comparison" in err


def test_a_recorded_set_without_the_suites_cases_is_refused(tmp_path: Path) -> None:
    suite = _suite(tmp_path, 3)
    with pytest.raises(InputError, match="none of the suite's 3 case"):
        run_paired(
            suite,
            load_agent(agent="assay_test_agents:bernoulli"),
            _options(tmp_path),
            baseline_rates={"another": 0.5},
            baseline_source="old",
        )


@pytest.mark.parametrize("baseline", ["raises", "sleeps"])
def test_a_baseline_that_never_answers_is_no_evidence(tmp_path: Path, baseline: str) -> None:
    # Raising on every call, or timing out on every call: every baseline trial is an error.
    path = tmp_path / "suite.yaml"
    path.write_text(_suite_yaml(6).replace("{p: 0.9}", "{p: 0.9, seconds: 1}"))
    result = run_paired(
        load_suite(path),
        load_agent(agent="assay_test_agents:bernoulli"),
        _options(tmp_path, timeout=0.05),
        PairedRunOptions(delta=0.5),
        baseline_agent=load_agent(agent=f"assay_test_agents:{baseline}"),
    )
    assert result.verdict is Verdict.INCONCLUSIVE and result.status.cases == 0
    assert result.reason.startswith("no evidence: the baseline answered none of its 10 trials")
    assert result.exit_code() == 3 and result.exit_code(inconclusive_ok=True) == 3
    # Concurrency 1, 2 trials a case, current then baseline: after 5 cases the baseline's
    # first 10 trials were all errors, and no further case started.
    assert result.silent_stop and result.stop_reason == (
        "the baseline answered none of its first 10 trials"
    )
    current, base = result.versions
    assert (current.role, current.trials, current.errors) == ("current", 10, 0)
    assert (base.role, base.trials, base.errors) == ("baseline", 10, 10)
    assert base.first_error is not None
    assert len(result.never_answered) == 5 and result.one_version_only == ()
    document = result.to_json()
    assert document["versions"][1]["errors"] == 10 and document["verdict"] == "INCONCLUSIVE"


def test_a_version_with_a_few_errors_is_still_compared(tmp_path: Path) -> None:
    # Errors on some trials are not silence: the run goes on, and the errors are counted.
    suite = _suite(tmp_path, 60)
    result = run_paired(
        suite,
        load_agent(agent="assay_test_agents:bernoulli"),
        _options(tmp_path),
        baseline_agent=load_agent(agent="assay_test_agents:sometimes_raises"),
    )
    assert not result.silent_stop and result.status.cases > 0
    base = result.versions[1]
    assert 0 < base.errors < base.trials
    assert any("they favour the current version" in w for w in result.warnings)


def test_cli_a_crashing_baseline_exits_3_and_counts_the_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = str(tmp_path / "t")
    code = _cli_run(tmp_path, 12, "raises", "--out", out_dir, "--inconclusive-ok", "--quiet")
    out, _ = capsys.readouterr()
    assert code == 3 and out.startswith("INCONCLUSIVE")
    assert "no evidence: the baseline answered none of its" in out
    assert re.search(
        r"trials by version: current \d+ \(0 errors\) · baseline (\d+) \(\1 errors\)", out
    )


def test_a_recorded_baseline_of_errors_only_is_refused(tmp_path: Path) -> None:
    suite = _suite(tmp_path, 3)
    recorded = tmp_path / "baseline"
    agent = load_agent(agent="assay_test_agents:raises")
    run_suite(suite, agent, RunOptions(out=str(recorded), adaptive=False, agent_version="v1"))
    with pytest.raises(InputError, match="every trial of the recorded set is an error"):
        load_baseline_rates(recorded)
