"""The runner on real agents: callables, a command, an HTTP endpoint; adaptive stops, budgets."""

from __future__ import annotations

import random
import socket
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import assay
from assay.judge import Verdict, threshold_verdict
from assay.run import (
    Budget,
    Price,
    PriceTable,
    RunOptions,
    RunResult,
    Suite,
    load_agent,
    load_suite,
    run_suite,
)
from assay.stats import pass_rate_sequence, wilson_interval


def _suite(tmp_path: Path, body: str) -> Suite:
    path = tmp_path / "suite.yaml"
    path.write_text(body)
    return load_suite(path)


def _failed_checks(traces: Path) -> list[set[str]]:
    """The names of each recorded trial's failed checks."""
    rows = assay.analyze(traces).trials["checks"].to_list()
    return [{c["name"] for c in checks if not c["passed"]} for checks in rows]


def _run(suite: Suite, tmp_path: Path, agent: str, **kwargs: Any) -> RunResult:
    opts = RunOptions(out=str(tmp_path / "traces"), **kwargs)
    return run_suite(suite, load_agent(agent=agent), opts)


ONE = """
tests:
  - name: t
    input: {answer: "yes", tools: [search, book], p: 1.0}
    expected:
      tools: [search]
      tool_sequence: [search, book]
      forbidden_tools: [delete]
      output: {contains: ["yes"], regex: ["^y"]}
    variance: {runs: 40}
"""


def test_adaptive_stops_a_clear_pass_early_and_records_traces(tmp_path: Path) -> None:
    result = _run(_suite(tmp_path, ONE), tmp_path, "assay_test_agents:echo", concurrency=1)
    (test,) = result.tests
    assert test.verdict is Verdict.PASS
    # The confidence sequence stops once its interval lies at or above 80%: after this many
    # straight passes, read off its interval (root finding, not the stopping rule's test).
    first = next(
        n for n in range(1, 41) if pass_rate_sequence(0.8, 0.95, 40).interval(n, n)[0] >= 0.8
    )
    assert test.sequential is not None and test.sequential.decided_at == first < 40
    assert test.n == first and len(result.trials) == first
    # The verdict is the interval shown: anytime-valid, at or above the threshold.
    assert test.interval is not None and test.interval.method == "confidence-sequence"
    assert test.interval.low >= 0.8
    assert test.interval.low == pytest.approx(
        pass_rate_sequence(0.8, 0.95, 40).interval(first, first)[0]
    )
    assert result.exit_code() == 0
    analysis = assay.analyze(tmp_path / "traces")
    row = analysis.tests.row(0, named=True)
    assert row["n"] == first and row["passed"] == first
    # the agent's own tool spans landed inside each trial, and the checks on the trial span
    assert set(map(tuple, analysis.trials["tool_sequence"].to_list())) == {("search", "book")}
    assert analysis.trials["suite"].unique().to_list() == ["suite"]
    assert {len(checks) for checks in analysis.trials["checks"].to_list()} == {5}
    assert f"confidence sequence stopped after {first} of 40 trials" in test.verdict_reason


def test_fixed_runs_every_trial_and_uses_the_wilson_verdict(tmp_path: Path) -> None:
    result = _run(
        _suite(tmp_path, ONE), tmp_path, "assay_test_agents:async_echo", adaptive=False, runs=12
    )
    (test,) = result.tests
    assert test.n == 12 and test.passed == 12 and test.sequential is None
    expected = threshold_verdict(wilson_interval(12, 12), 0.8).verdict
    assert test.verdict is expected is Verdict.INCONCLUSIVE  # Wilson low of 12/12 is 0.757
    assert test.interval == wilson_interval(12, 12)


def test_failed_checks_fail_trials_and_fail_the_test_quickly(tmp_path: Path) -> None:
    body = ONE.replace('contains: ["yes"]', 'contains: ["no"]')
    result = _run(_suite(tmp_path, body), tmp_path, "assay_test_agents:echo", concurrency=1)
    (test,) = result.tests
    assert test.verdict is Verdict.FAIL and test.passed == 0
    # It stops once the interval lies wholly below 80%: after this many straight failures.
    first = next(
        n for n in range(1, 41) if pass_rate_sequence(0.8, 0.95, 40).interval(0, n)[1] < 0.8
    )
    assert test.sequential is not None and test.sequential.decided_at == first
    assert test.interval is not None and test.interval.high < 0.8
    failed = _failed_checks(tmp_path / "traces")
    assert len(failed) == first and all("output contains: no" in names for names in failed)
    assert result.exit_code() == 1


def test_exceptions_become_error_trials_recorded_on_the_span(tmp_path: Path) -> None:
    result = _run(_suite(tmp_path, ONE), tmp_path, "assay_test_agents:raises")
    (test,) = result.tests
    assert test.errors == test.n >= 3 and test.verdict is Verdict.FAIL
    assert all(r.outcome == "error" and "the agent broke" in (r.error or "") for r in result.trials)
    trials = assay.analyze(tmp_path / "traces").trials
    assert set(trials["outcome"].to_list()) == {"error"}


def test_a_hung_agent_times_out_as_an_error_and_the_run_goes_on(tmp_path: Path) -> None:
    body = """
tests:
  - {name: hangs, input: {seconds: 30}, variance: {runs: 2}}
  - {name: quick, input: {seconds: 0}, variance: {runs: 2}}
"""
    result = _run(
        _suite(tmp_path, body), tmp_path, "assay_test_agents:sleeps", timeout=0.5, concurrency=4
    )
    hangs, quick = result.tests
    assert hangs.errors == 2 and quick.passed == 2
    assert all("did not finish within 0.5 s" in (r.error or "") for r in result.trials if r.error)


def test_max_trials_is_never_exceeded(tmp_path: Path) -> None:
    body = "tests:\n" + "".join(
        f"  - {{name: t{i}, input: {{p: 1.0}}, variance: {{runs: 30}}}}\n" for i in range(3)
    )
    result = _run(
        _suite(tmp_path, body),
        tmp_path,
        "assay_test_agents:bernoulli",
        budget=Budget(max_trials=10),
        concurrency=4,
    )
    assert len(result.trials) == 10
    assert result.stop_reason and "--max-trials 10" in result.stop_reason
    assert {t.verdict for t in result.tests} == {Verdict.INCONCLUSIVE}
    assert all("max-trials" in " ".join((t.verdict_reason, *t.notes)) for t in result.tests)
    assert result.exit_code() == 3 and result.exit_code(inconclusive_ok=True) == 0


@pytest.mark.parametrize("concurrency", [1, 3])
def test_token_and_cost_budgets_overshoot_by_at_most_the_trials_in_flight(
    tmp_path: Path, concurrency: int
) -> None:
    body = "tests:\n  - {name: t, input: {tokens: 100, seconds: 0.01}, variance: {runs: 200}}\n"
    suite = _suite(tmp_path, body)
    agent = load_agent(agent="assay_test_agents:spends")
    tokens = run_suite(
        suite,
        agent,
        RunOptions(
            out=str(tmp_path / "a"), concurrency=concurrency, budget=Budget(max_tokens=1000)
        ),
    )
    per_trial = 200
    assert 1000 <= tokens.tokens <= 1000 + concurrency * per_trial
    assert tokens.tests[0].verdict is Verdict.INCONCLUSIVE
    prices = PriceTable({"model-a": Price(1.0, 1.0)})  # $ per 1M tokens: $0.0002 a trial
    cost = run_suite(
        suite,
        agent,
        RunOptions(
            out=str(tmp_path / "b"),
            concurrency=concurrency,
            budget=Budget(max_cost=0.001),
            prices=prices,
        ),
    )
    assert 0.001 <= cost.cost <= 0.001 + concurrency * 0.0002 + 1e-12
    assert cost.stop_reason and "--max-cost" in cost.stop_reason


def test_max_time_stops_starting_trials(tmp_path: Path) -> None:
    body = "tests:\n  - {name: t, input: {tokens: 1, seconds: 0.05}, variance: {runs: 500}}\n"
    result = _run(
        _suite(tmp_path, body),
        tmp_path,
        "assay_test_agents:spends",
        concurrency=2,
        budget=Budget(max_time=0.5),
    )
    assert 2 <= len(result.trials) < 40
    assert result.stop_reason and "--max-time" in result.stop_reason
    # Read from the trials' own spans, not the run's elapsed time (which includes judging the
    # traces, seconds on a loaded machine): no trial started after the 0.5 s, and the trials
    # running then were not waited on beyond their 0.05 s.
    trials = assay.analyze(tmp_path / "traces").trials
    first = trials["start_time_unix_nano"].min() / 1e9
    starts = trials["start_time_unix_nano"] / 1e9 - first
    ends = starts + trials["duration_s"]
    assert trials.height == len(result.trials)
    assert starts.max() < 0.5, starts.max()
    assert ends.max() < 0.5 + 0.05 + 0.5, ends.max()


def test_tool_calls_and_tokens_in_every_convention_are_seen(tmp_path: Path) -> None:
    body = """
tests:
  - name: t
    input: {}
    expected: {tool_sequence: [oi_search, tl_lookup]}
    variance: {runs: 1}
"""
    result = _run(_suite(tmp_path, body), tmp_path, "assay_test_agents:conventions", adaptive=False)
    (record,) = result.trials
    assert record.outcome == "pass", _failed_checks(tmp_path / "traces")
    live = (record.input_tokens, record.output_tokens, record.llm_calls)
    # The runner reads spans through analysis's convention rules, so the budgets see what
    # `assay analyze` sees: the OpenInference LLM span; the span with token counts but no LLM
    # marker (no operation, kind or llm.request.type) is not an LLM call in either.
    (row,) = assay.analyze(tmp_path / "traces").trials.iter_rows(named=True)
    assert live == (row["input_tokens"], row["output_tokens"], row["llm_calls"]) == (7, 3, 1)


def test_command_agent_json_in_and_out_with_reported_tool_calls(
    tmp_path: Path, command_agent: str
) -> None:
    body = """
tests:
  - name: t
    input: {answer: "fine"}
    expected: {tool_sequence: [search, book], output: {contains: [fine]}}
    variance: {runs: 2}
"""
    suite = _suite(tmp_path, body)
    opts = RunOptions(out=str(tmp_path / "t"), adaptive=False)
    result = run_suite(suite, load_agent(command=f"{command_agent} tools"), opts)
    assert [r.outcome for r in result.trials] == ["pass", "pass"]
    assert [(r.input_tokens, r.output_tokens) for r in result.trials] == [(10, 5)] * 2
    score = result.tests[0].score
    assert score is not None and score.mean == 90.0 and score.n == 2


@pytest.mark.parametrize(
    ("mode", "message"),
    [("nonjson", "command printed non-JSON output"), ("exit1", "exited with status 1")],
)
def test_command_agent_failures_are_error_trials(
    tmp_path: Path, command_agent: str, mode: str, message: str
) -> None:
    suite = _suite(tmp_path, "tests:\n  - {name: t, input: {}, variance: {runs: 2}}\n")
    opts = RunOptions(out=str(tmp_path / "t"), adaptive=False)
    result = run_suite(suite, load_agent(command=f"{command_agent} {mode}"), opts)
    assert all(r.outcome == "error" and message in (r.error or "") for r in result.trials)


def test_http_agent_gets_json_and_the_trace_context(tmp_path: Path, http_agent: str) -> None:
    body = """
tests:
  - {name: ok, input: {answer: hello}, expected: {output: {contains: [hello]}}, variance: {runs: 2}}
  - {name: broken, input: {mode: "500"}, variance: {runs: 2}}
"""
    opts = RunOptions(out=str(tmp_path / "t"), adaptive=False)
    result = run_suite(_suite(tmp_path, body), load_agent(url=http_agent), opts)
    ok, broken = result.tests
    assert ok.passed == 2
    assert broken.errors == 2
    assert any("HTTP 500" in (r.error or "") for r in result.trials)


def test_http_agent_refused_connection_is_an_error_trial(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again below: nothing listens there
    suite = _suite(tmp_path, "tests:\n  - {name: t, input: {}, variance: {runs: 5}}\n")
    result = run_suite(
        suite,
        load_agent(url=f"http://127.0.0.1:{port}/"),
        RunOptions(out=str(tmp_path / "t"), timeout=5),
    )
    (test,) = result.tests
    assert test.errors == test.n and test.verdict is Verdict.FAIL
    assert "cannot reach endpoint" in (result.trials[0].error or "")


def test_seeded_runs_are_reproducible(tmp_path: Path) -> None:
    body = (
        "tests:\n  - {name: t, input: {p: 0.5}, "
        "expected: {output: {contains: ['yes']}}, variance: {runs: 20}}\n"
    )
    suite = _suite(tmp_path, body)
    agent = load_agent(agent="assay_test_agents:bernoulli")

    def outcomes(name: str) -> list[str]:
        opts = RunOptions(out=str(tmp_path / name), adaptive=False, seed=3, concurrency=3)
        records = run_suite(suite, agent, opts).trials
        return [r.outcome for r in sorted(records, key=lambda r: r.index)]

    first = outcomes("a")
    assert first == outcomes("b")
    assert "pass" in first and "fail" in first


def test_min_mean_score_and_latency_thresholds(tmp_path: Path) -> None:
    body = """
tests:
  - name: slow
    input: {seconds: 0.05}
    thresholds: {max_latency: 1}
    variance: {runs: 3}
"""
    _run(_suite(tmp_path, body), tmp_path, "assay_test_agents:sleeps", adaptive=False)
    failed = _failed_checks(tmp_path / "traces")
    assert len(failed) == 3 and all("latency <= 1 ms" in names for names in failed)


def test_results_feed_the_sequential_test_in_index_order() -> None:
    from assay.run._options import test_judgement
    from assay.run._results import TrialRecord
    from assay.run._state import TestState
    from assay.stats import SequentialDecision

    suite_test = load_suite_text("tests:\n  - {name: t, input: 1, variance: {runs: 40}}\n")
    state = TestState(suite_test, 40, test_judgement(suite_test, RunOptions()))

    def record(index: int, outcome: str) -> TrialRecord:
        return TrialRecord("t", index, outcome, 0.0, 0, 0, 0, 0.0)

    sequence = pass_rate_sequence(0.8, 0.95, 40)
    # Five failures alone would settle it (their interval lies below 80%), one pass and five
    # failures would not, one pass and six failures would.
    assert sequence.interval(0, 5)[1] < 0.8 <= sequence.interval(1, 6)[1]
    assert sequence.interval(1, 7)[1] < 0.8
    # Trials 1-5 fail fast and finish first; trial 0 (a pass) is still running.
    for i in range(1, 6):
        state.feed(record(i, "fail"))
    assert state.records == [] and state.decision is None
    state.feed(record(0, "pass"))
    assert len(state.records) == 6 and state.passed == 1 and state.decision is None
    state.feed(record(6, "fail"))
    assert state.decision is SequentialDecision.FAIL and state.decided_at == 7


def load_suite_text(text: str) -> Any:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.yaml"
        path.write_text(text)
        return load_suite(path).tests[0]


def test_an_agent_calling_sys_exit_is_an_error_trial_not_a_hang(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "tests:\n  - {name: t, input: {}, variance: {runs: 3}}\n")
    result = _run(suite, tmp_path, "assay_test_agents:exits", adaptive=False, timeout=10)
    assert [r.outcome for r in result.trials] == ["error"] * 3
    assert "agent raised SystemExit: 3" in (result.trials[0].error or "")


def test_errors_exclude_leaves_error_trials_out_of_the_pass_rate(tmp_path: Path) -> None:
    body = """
tests:
  - {name: flaky-infra, input: {}, variance: {runs: 6}}
"""
    suite = _suite(tmp_path, body)
    counted = _run(suite, tmp_path, "assay_test_agents:raises", errors="count")
    assert counted.tests[0].verdict is Verdict.FAIL
    excluded = _run(suite, tmp_path, "assay_test_agents:raises", errors="exclude")
    (test,) = excluded.tests
    assert test.n == 0 and test.errors == 6 and test.verdict is Verdict.INCONCLUSIVE
    assert excluded.result.options["run_id"] == excluded.run_id
    assert "no trials left to judge" in test.verdict_reason
    with pytest.raises(assay.errors.OptionError, match="^errors must be one of count, exclude"):
        RunOptions(errors="ignore")


@pytest.mark.slow
def test_scores_reported_by_a_remote_agent_meet_min_score_and_min_mean_score(
    tmp_path: Path, command_agent: str
) -> None:
    body = """
tests:
  - name: low-trial-score
    input: {answer: a, quality: 50}
    thresholds: {min_score: 70}
    variance: {runs: 2}
  - name: low-mean
    input: {answer: a, quality: 60}
    variance: {runs: 2, pass_rate: 0.0, min_mean_score: 70}
  - name: fine
    input: {answer: a, quality: 95}
    thresholds: {min_score: 70}
    variance: {runs: 2, pass_rate: 0.0, min_mean_score: 70, max_std_dev: 5}
"""
    opts = RunOptions(out=str(tmp_path / "t"), adaptive=False)
    result = run_suite(_suite(tmp_path, body), load_agent(command=f"{command_agent} tools"), opts)
    low, mean, fine = result.tests
    assert low.passed == 0  # every trial scored below min_score
    assert mean.verdict is Verdict.FAIL and "mean score 60 is below the minimum 70" in (
        mean.verdict_reason
    )
    assert fine.verdict is Verdict.PASS and fine.score is not None and fine.score.mean == 95.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=40), st.randoms(use_true_random=False))
def test_completion_order_never_changes_the_decision(
    outcomes: list[bool], rng: random.Random
) -> None:
    from assay.run._options import test_judgement
    from assay.run._results import TrialRecord
    from assay.run._state import TestState

    test = load_suite_text("tests:\n  - {name: t, input: 1, variance: {runs: 40}}\n")

    def decide(order: list[int]) -> tuple[object, object, int]:
        state = TestState(test, 40, test_judgement(test, RunOptions()))
        for i in order:
            outcome = "pass" if outcomes[i] else "fail"
            state.feed(TrialRecord("t", i, outcome, 0.0, 0, 0, 0, 0.0))
        return state.decision, state.decided_at, state.passed

    in_order = list(range(len(outcomes)))
    shuffled = in_order[:]
    rng.shuffle(shuffled)
    assert decide(shuffled) == decide(in_order)


def test_llm_calls_without_usage_are_said_to_escape_the_budgets_and_the_cost_threshold(
    tmp_path: Path,
) -> None:
    body = (
        "tests:\n  - {name: t, input: {tokens: 100, unmetered: true}, variance: {runs: 6},"
        " thresholds: {max_cost: 1.0}}\n"
    )
    prices = PriceTable({"model-a": Price(1.0, 1.0)})
    result = run_suite(
        _suite(tmp_path, body),
        load_agent(agent="assay_test_agents:spends"),
        RunOptions(
            out=str(tmp_path / "t"),
            adaptive=False,
            budget=Budget(max_tokens=10**6, max_cost=10.0),
            prices=prices,
        ),
    )
    metered = [r for r in result.trials if r.input_tokens]
    assert len(metered) == 3 and result.tokens == 600
    (said,) = [w for w in result.warnings if "recorded no token usage" in w]
    assert said.startswith("3 LLM call(s) recorded no token usage (tests t)")
    assert "counted as 0 by --max-tokens and --max-cost" in said
    assert "thresholds.max_cost not checked on their trials (t)" in said
    # The cost check ran on the metered trials only: a check is evidence, an unknown is not.
    checks = _failed_checks(tmp_path / "t")
    assert checks == [set()] * 6
    names = assay.analyze(tmp_path / "t").trials["checks"].to_list()
    checked = [any(c["name"].startswith("cost <=") for c in row) for row in names]
    assert sum(checked) == 3


def test_the_budgets_say_nothing_of_usage_when_every_call_records_it(tmp_path: Path) -> None:
    body = "tests:\n  - {name: t, input: {tokens: 10}, variance: {runs: 2}}\n"
    result = _run(
        _suite(tmp_path, body),
        tmp_path,
        "assay_test_agents:spends",
        adaptive=False,
        budget=Budget(max_tokens=10**6),
    )
    assert not [w for w in result.warnings if "token usage" in w]
