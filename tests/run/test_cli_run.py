"""`assay run` end to end: exit codes, one-line errors, --dry-run, budgets, Ctrl-C."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import assay
from assay.cli import run as cli

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SUITE = """
tests:
  - name: good
    input: {answer: "fine", tools: [search]}
    expected: {tools: [search], output: {contains: [fine]}}
    variance: {runs: 40}
  - name: bad
    input: {answer: "fine"}
    expected: {tools: [search]}
    variance: {runs: 40}
"""


@pytest.fixture()
def suite(tmp_path: Path) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE)
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli(["run", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _stops(max_trials: int) -> tuple[int, int]:
    """Straight passes and straight failures after which the 95% anytime interval settles."""
    from assay.stats import pass_rate_sequence

    sequence = pass_rate_sequence(0.8, 0.95, max_trials)
    passes = next(n for n in range(1, 1000) if sequence.interval(n, n)[0] >= 0.8)
    fails = next(n for n in range(1, 1000) if sequence.interval(0, n)[1] < 0.8)
    return passes, fails


def test_run_prints_the_verdict_table_and_exits_1_on_a_fail(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(
        capsys, str(suite), "--agent", "assay_test_agents:echo", "--out", str(tmp_path / "t")
    )
    assert code == 1
    assert "assay verdicts" in out and "PASS" in out and "FAIL" in out
    # the progress of a run in a log (stderr is no terminal here): a line per settled test
    good = re.search(r"^good: PASS after (\d+) of 40 trials \((\d+) pass, 0 fail\)$", err, re.M)
    assert good is not None and good[1] == good[2], err
    # It stops once the anytime-valid interval lies on one side of 80%; trials in flight then
    # (at most --concurrency 4) still finish.
    passes, fails = _stops(40)
    assert passes <= int(good[1]) <= passes + 3
    bad = re.search(r"^bad: FAIL after (\d+) of 40 trials \(0 pass, (\d+) fail\)$", err, re.M)
    assert bad is not None and bad[1] == bad[2] and fails <= int(bad[2]) <= fails + 3, err
    assert "adaptive stopping saved" in out
    assert f"confidence sequence stopped after {passes} of 40 trials" in out
    assert "good — pass rate 100.0% (" in out and "lies at or above the threshold 80.0%" in out


def test_run_inconclusive_exit_3_and_inconclusive_ok(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [str(suite), "--agent", "assay_test_agents:echo", "--tag", "none"]
    code, _, err = _run(capsys, *args)
    assert code == 2 and err.strip() == "assay: error: no test matches tags 'none'"
    base = [str(suite), "--agent", "assay_test_agents:echo", "--out", str(tmp_path / "t")]
    _, fails = _stops(10)
    budget = str(2 * fails)  # the two tests take turns
    code, out, _ = _run(capsys, *base, "--runs", "10", "--max-trials", budget, "--concurrency", "1")
    assert code == 1  # `bad` fails after `fails` trials; `good` is cut off by the budget
    assert f"stopped early: budget: --max-trials {budget} reached" in out
    code, out, _ = _run(capsys, *base, "--runs", "5", "--fixed")
    assert code == 1
    code, out, _ = _run(capsys, *base, "--runs", "5", "--pass-rate", "0", "--fixed")
    assert code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "no_such_module_xyz:run"], "cannot import agent module 'no_such_module_xyz'"),
        (["--agent", "assay_test_agents:missing"], "has no attribute 'missing'"),
        (["--agent", "assay_test_agents:not_callable"], "is not callable"),
        (["--agent", "nocolon"], "must look like module:function"),
        (["--command", "no-such-program-xyz --flag"], "program 'no-such-program-xyz' not found"),
        (["--url", "ftp://example"], "must be an http:// or https:// URL"),
        ([], "names no agent: give --agent module:function"),
        (["--agent", "assay_test_agents:echo", "--url", "http://x"], "give exactly one"),
        (["--agent", "assay_test_agents:echo", "--max-cost", "1"], "--max-cost needs a price"),
        (
            ["--agent", "assay_test_agents:echo", "--sequential", "magic"],
            "Invalid value for '--sequential'",
        ),
        (["--agent", "assay_test_agents:echo", "--concurrency", "0"], "--concurrency must be"),
        (
            ["--agent", "assay_test_agents:echo", "--sequential", "sprt", "--sprt-delta", "2"],
            "delta must lie in (0, 1)",
        ),
        (
            ["--agent", "assay_test_agents:echo", "--sprt-delta", "0.2", "--beta", "0.1"],
            "--sprt-delta, --beta shape only the SPRT (--sequential sprt)",
        ),
        (["--agent", "assay_test_agents:echo", "--prices", "/nonexistent.yaml"], "price table"),
    ],
)
def test_load_time_errors_are_one_line_and_exit_2(
    suite: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = _run(capsys, str(suite), *args)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("assay: error: "), err
    assert message in err
    assert "Traceback" not in err + out


def test_bad_suite_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("tests:\n  - name: a\n    input: 1\n    variance: {runs: many}\n")
    code, _, err = _run(capsys, str(bad), "--agent", "assay_test_agents:echo")
    assert code == 2
    expected = "variance.runs: must be a whole number >= 1 (got 'many')"
    assert err == f"assay: error: {bad}:4: test 'a': {expected}\n"
    code, _, err = _run(capsys, str(tmp_path / "missing.yaml"), "--agent", "x:y")
    assert code == 2 and "no such suite file or folder" in err


def test_dry_run_prints_the_plan_and_runs_nothing(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "models:\n  gpt-x: {input: 2.0, output: 8.0}\n"
        "trial_tokens: {input: 1000, output: 250, model: gpt-x}\n"
    )
    import assay_test_agents

    before = assay_test_agents.calls
    code, out, _ = _run(
        capsys,
        str(suite),
        "--agent",
        "assay_test_agents:echo",
        "--dry-run",
        "--prices",
        str(prices),
        "--out",
        str(tmp_path / "t"),
    )
    assert code == 0 and assay_test_agents.calls == before
    assert not (tmp_path / "t").exists()
    assert "maximum trials: 80" in out
    assert "expected trials under adaptive stopping" in out
    assert "cost estimate: $" in out and "$0.0040 per trial" in out
    assert "confidence-sequence" in out  # the default stopping rule


def test_run_with_a_price_table_and_cost_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("tests:\n  - {name: t, input: {tokens: 1000}, variance: {runs: 100}}\n")
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  '*': {input: 1.0, output: 1.0}\n")  # $0.002 a trial
    code, out, _ = _run(
        capsys,
        str(path),
        "--agent",
        "assay_test_agents:spends",
        "--prices",
        str(prices),
        "--max-cost",
        "0.01",
        "--concurrency",
        "1",
        "--out",
        str(tmp_path / "t"),
    )
    assert code == 3
    assert "--max-cost 0.01 reached" in out and "5 trials of at most 100" in out
    # The verdicts cost the trials with the run's own price table.
    assert "cost       $0.0100 ($0.0020 per trial; prices:" in out


def test_example_suite_with_the_example_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    code, out, _ = _run(
        capsys,
        "examples/suite.yaml",
        "--agent",
        "examples.agent:run",
        "--out",
        str(tmp_path / "t"),
        "--seed",
        "7",
    )
    # Seed 7 fixes every trial's outcome, so where each test stops; only the trials still in
    # flight then (at most --concurrency 4) vary.
    assert code == 1, out  # multi-step-research (a 45% agent) FAILs
    assert "adaptive stopping saved" in out
    analysis = assay.analyze(tmp_path / "t")
    document = json.loads(analysis.to_json())
    verdicts = {t["test_id"]: t["verdict"] for t in document["tests"]}
    assert verdicts["greeting"] == verdicts["refund-policy"] == "PASS"
    assert verdicts["multi-step-research"] == "FAIL"
    for test in document["tests"]:
        # The verdict is the interval shown: anytime-valid, read against the threshold.
        ci, stopped = test["ci"], test["sequential"]["decided_at"]
        assert ci["method"] == "confidence-sequence"
        side = "PASS" if ci["low"] >= 0.8 else "FAIL" if ci["high"] < 0.8 else "INCONCLUSIVE"
        assert test["verdict"] == side, test
        if stopped is not None:
            assert test["verdict"] != "INCONCLUSIVE"
            assert 0 <= test["n"] - stopped <= 4, test
        else:
            assert test["verdict"] == "INCONCLUSIVE" and test["n"] == 60, test


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_keeps_finished_trials(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    started = tmp_path / "started"
    path.write_text(
        f"tests:\n  - {{name: t, input: {{seconds: 0.1, touch: '{started}'}}, "
        "variance: {runs: 1000}}\n"
    )
    out = tmp_path / "t"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "assay",
            "run",
            str(path),
            "--agent",
            "assay_test_agents:sleeps",
            "--fixed",
            "--concurrency",
            "2",
            "--out",
            str(out),
            "--quiet",
        ],
        cwd=HERE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(HERE)},
    )
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:  # wait out the start-up
        time.sleep(0.05)
    time.sleep(1.0)  # some trials of 0.1 s finish, two at a time
    assert process.poll() is None
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "stopped early: interrupted (Ctrl-C)" in stdout
    analysis = assay.analyze(out)
    (row,) = analysis.tests.iter_rows(named=True)
    assert row["n"] >= 2 and row["errors"] == 0


def test_format_json_is_the_analysis_document(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(
        capsys,
        str(suite),
        "--agent",
        "assay_test_agents:echo",
        "--out",
        str(tmp_path / "t"),
        "--format",
        "json",
        "--quiet",
        "--assign-run-id",
        "ci-42",
    )
    assert code == 1
    document = json.loads(out)
    assert document["schema"] == "assay.analysis/v1"
    tests = {t["test_id"]: t for t in document["tests"]}
    passes, fails = _stops(40)
    good, bad = tests["good"], tests["bad"]
    assert good["verdict"] == "PASS" and good["sequential"]["decided_at"] == passes
    assert bad["verdict"] == "FAIL" and bad["sequential"]["method"] == "confidence-sequence"
    assert bad["verdict_reason"].startswith(f"pass rate 0.0% (0/{bad['n']}), 95% anytime CI [")
    assert f"confidence sequence stopped after {fails} of 40 trials" in bad["verdict_reason"]
    assert document["options"]["run_id"] == "ci-42"
    # the figures of `assay analyze`, from this run's trials
    assert tests["good"]["pass_at_k"]["1"] == 1.0 and tests["bad"]["pass_hat_k"]["1"] == 0.0
    assert tests["good"]["tool_consistency"]["agreement"] == 1.0
    assert tests["bad"]["flakiness"]["score"] is not None
    # The interval beside the verdict is the anytime-valid one, at or above the threshold.
    anytime, ci = good["sequential"]["anytime_ci"], good["ci"]
    assert ci["method"] == "confidence-sequence" and ci["confidence"] == 0.95
    assert anytime == {"low": ci["low"], "high": ci["high"]}
    assert 0.8 <= ci["low"] < 1.0 and ci["high"] == 1.0
    assert "adaptive stopping saved" in err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("models: 3\n", "a price table needs `models:`"),
        ("models:\n  m: {input: -1}\n", "models.m.input: must not be negative"),
        ("models:\n  m: {inptu: 1}\n", "models.m: must be {input: USD, output: USD}"),
        ("models: {}\nextra: 1\n", "unknown field 'extra'"),
        ("models: [\n", "not valid YAML/JSON"),
    ],
)
def test_bad_price_tables_are_one_line_exit_2(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(text)
    code, _, err = _run(
        capsys, str(suite), "--agent", "assay_test_agents:echo", "--prices", str(prices)
    )
    assert code == 2 and err.count("\n") == 1 and message in err, err


def test_refused_endpoint_gives_error_trials_and_the_first_error(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out, _ = _run(
        capsys, str(suite), "--url", f"http://127.0.0.1:{port}/", "--out", str(tmp_path / "t")
    )
    assert code == 1
    assert "first error  trial 0: AgentError: cannot reach endpoint" in out
    assert "Connection refused" in out


def test_out_that_is_a_file_is_one_line_exit_2(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(
        capsys, str(suite), "--agent", "assay_test_agents:echo", "--out", str(suite)
    )
    assert code == 2 and err.count("\n") == 1
    assert "cannot write a trace set there" in err


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--fixed"], ["fixed", "maximum trials: 80"]),
        (["--sequential", "sprt"], ["sprt", "expected trials"]),
        (["--pass-rate", "1.0"], ["fixed"]),
        (["--max-trials", "10"], ["capped at 10 by --max-trials"]),
    ],
)
def test_dry_run_variants(
    suite: Path, capsys: pytest.CaptureFixture[str], args: list[str], expected: list[str]
) -> None:
    code, out, _ = _run(capsys, str(suite), "--agent", "assay_test_agents:echo", "--dry-run", *args)
    assert code == 0
    for fragment in expected:
        assert fragment in out, out


def test_run_warnings_go_to_stderr_and_stdout_holds_only_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("tests:\n  - {name: t, input: {tokens: 10}, variance: {runs: 3}}\n")
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  model-b: {input: 1.0, output: 1.0}\n")  # no price for model-a
    argv = [str(path), "--agent", "assay_test_agents:spends", "--prices", str(prices), "--fixed"]
    # The run's own warning (a note of the result) and the analysis's (a data-quality finding).
    ran = "no price for model(s) model-a: their cost counts as 0"
    found = f"no price for model(s) model-a in {prices}: 3 trial(s) have no cost"
    code, out, err = _run(capsys, *argv, "--out", str(tmp_path / "t1"), "--format", "json")
    assert code == 3
    document = json.loads(out)  # stdout is the document alone
    assert ran in document["notes"]
    assert [f["message"] for f in document["data_quality"]["findings"]] == [
        f"{found} (give prices with --prices)"
    ]
    code, out, err = _run(capsys, *argv, "--out", str(tmp_path / "t2"))
    assert code == 3
    assert ran not in out and found not in out and "warning:" not in out
    assert out.startswith("assay verdicts") and "3 trials of at most 3" in out
    lines = err.splitlines()
    assert f"assay: warning: {found} (give prices with --prices)" in lines
    assert f"assay: warning: {ran}" in lines


@pytest.mark.parametrize(("old", "new"), [("--delta", "--sprt-delta"), ("--alpha", "--sprt-alpha")])
def test_the_sprt_flags_old_spelling_still_works_and_says_its_new_name(
    suite: Path, capsys: pytest.CaptureFixture[str], old: str, new: str
) -> None:
    """Without a baseline, --delta and --alpha were the SPRT's; they now mean a comparison's."""
    agent = ["--agent", "assay_test_agents:echo", "--dry-run", "--sequential", "sprt"]
    code, out, err = _run(capsys, str(suite), *agent, new, "0.2")
    assert (code, err) == (0, "")
    assert _run(capsys, str(suite), *agent, old, "0.2") == (
        0,
        out,
        f"assay run: {old} is deprecated for the SPRT, use {new} ({old} is a comparison's, "
        "as in compare)\n",
    )
    assert _run(capsys, str(suite), *agent, old, "0.2", new, "0.2")[0] == 2


def test_the_assigned_run_id_has_its_own_name_and_run_id_is_its_deprecated_alias(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--run-id selects a run's trials in analyze, compare and report; run's gives them one."""
    argv = [str(suite), "--agent", "assay_test_agents:echo", "--fixed", "--runs", "2", "--quiet"]
    code, out, err = _run(capsys, *argv, "--assign-run-id", "new", "--out", str(tmp_path / "t"))
    assert "deprecated" not in err and "(run id new)" in out
    code, out, err = _run(capsys, *argv, "--run-id=old", "--out", str(tmp_path / "t"))
    assert "(run id old)" in out
    (line,) = [line for line in err.splitlines() if "deprecated" in line]
    assert line == (
        "assay run: --run-id is deprecated, use --assign-run-id (--run-id selects the trials "
        "of a run in analyze, compare and report)"
    )
    assert sorted(assay.analyze(tmp_path / "t").trials["run_id"].unique()) == ["new", "old"]
    code, out, err = _run(capsys, *argv, "--run-id", "a", "--assign-run-id", "b", "--dry-run")
    assert code == 2 and err == (
        "assay: error: --run-id is the deprecated name of --assign-run-id: give "
        "--assign-run-id alone\n"
    )
