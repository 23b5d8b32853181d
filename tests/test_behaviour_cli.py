"""The behaviour diff and cost, end to end: example agent → traces → assay compare."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import assay
from assay.analysis import columns as tc
from assay.cli import run

# Recording three trace sets with the example agent takes seconds (subprocesses).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PRICES = str(ROOT / "examples" / "prices.yaml")
EXAMPLE_TESTS = ("flight-rebooking", "greeting", "multi-step-research", "refund-policy")
#: v3 against v1 (seed 1 in both): the worse of each test's threshold and regression verdicts.
EXPECTED_COMPARE = {
    "flight-rebooking": "INCONCLUSIVE",
    "greeting": "INCONCLUSIVE",
    "multi-step-research": "FAIL",
    "refund-policy": "INCONCLUSIVE",
}


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    """v1 (seed 1), v3 (seed 1: the same successes) with a planted retry, v1 again (seed 3).

    Recorded by the example script itself, in parallel subprocesses (its own span pipeline is
    much faster than routing every span of the test process to a Parquet sink).
    """
    root = tmp_path_factory.mktemp("behaviour")
    runs = {
        "v1": ["--version", "v1", "--seed", "1"],
        "v3": ["--version", "v3", "--seed", "1", "--variant", "retry"],
        "v1b": ["--version", "v1", "--seed", "3"],
    }
    agent = str(ROOT / "examples" / "agent.py")
    procs = [
        subprocess.Popen(
            [sys.executable, agent, "--out", str(root / name), "--trials", "30", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for name, args in runs.items()
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    return root / "v1", root / "v3", root / "v1b"


def _compare(capsys, *args: str) -> tuple[int, dict]:
    code = run(["compare", *args, "--format", "json", "--prices", PRICES])
    return code, json.loads(capsys.readouterr().out)


def test_a_planted_path_change_at_the_same_pass_rate_is_changed(versions, capsys) -> None:
    baseline, retry, _ = versions
    code, document = _compare(capsys, str(baseline), str(retry))
    tests = {t["test_id"]: t for t in document["tests"]}
    refund = tests["refund-policy"]["behaviour"]
    assert refund["verdict"] == "CHANGED"
    path = next(c for c in refund["changes"] if c["feature"] == "path")
    # Seed 1 in both: the usual path (29 of 30 trials) lost 9 trials to the retried one (0 → 9
    # of 30); the report names the usual path.
    assert path["path"] == ["search_kb", "draft_answer"]
    assert (path["baseline"], path["current"]) == (29 / 30, 20 / 30)
    assert path["effect"] == pytest.approx(-9 / 30) and path["adjusted_p"] < 0.05
    assert path["ci"]["low"] > 0 or path["ci"]["high"] < 0
    tokens = next(c for c in refund["features"] if c["feature"] == "input_tokens")
    assert tokens["measure"] == "ratio" and tokens["effect"] > 1  # the retried tool's result
    assert path["baseline_traces"] and path["current_traces"]
    # Same pass rates with 30 trials a version: no drop, but too little power to vouch for
    # "no drop" (needs 80%): every test is INCONCLUSIVE, and the exit code is 3.
    assert {t["test_id"]: t["regression"]["verdict"] for t in tests.values()} == dict.fromkeys(
        EXAMPLE_TESTS, "INCONCLUSIVE"
    )
    # Each test's verdict is the worse of its threshold and regression verdicts: the threshold
    # verdicts of the current version decide where they are worse than INCONCLUSIVE.
    severity = {"PASS": 0, "INCONCLUSIVE": 1, "FAIL": 2}
    for test in tests.values():
        worse = max(test["threshold_verdict"], test["regression"]["verdict"], key=severity.get)
        assert test["verdict"] == worse, test["test_id"]
    assert {t["test_id"]: t["verdict"] for t in tests.values()} == EXPECTED_COMPARE
    # The suite comparison of the four cases decides the exit code (docs/cli.md):
    # multi-step-research's threshold FAIL is reported, not counted, unless asked for.
    decision = document["decision"]
    assert decision["rule"] == "suite comparison"
    assert decision["verdict"] == document["suites"][0]["comparison"]["verdict"] != "FAIL"
    assert code == decision["exit_code"] == {"PASS": 0, "INCONCLUSIVE": 3}[decision["verdict"]]
    assert "multi-step-research" not in {c["what"] for c in decision["counted"]}
    assert "not counted" in decision["not_counted"]
    code, document = _compare(capsys, str(baseline), str(retry), "--gate-cases")
    assert code == 1 and document["decision"]["verdict"] == "FAIL"  # its threshold FAIL counts
    for test in tests.values():
        cost = test["cost"]
        assert cost["priced_trials"] == 30 and cost["total_usd"] > 0
        assert cost["mean_usd"] == pytest.approx(cost["total_usd"] / 30)


def test_two_samples_of_the_same_agent_report_no_change(versions, capsys) -> None:
    baseline, _, same = versions
    # Holm over every feature of every test: a false CHANGED anywhere has chance ≤ 5%.
    _, document = _compare(capsys, str(baseline), str(same), "--adjust", "holm")
    changed = {
        (t["test_id"], c["feature"]) for t in document["tests"] for c in t["behaviour"]["changes"]
    }
    # Latency is wall-clock time: here it includes this process's span exporting and the
    # machine's load, which differ between the two recordings (the agent does not).
    assert {feature for _, feature in changed} <= {"latency"}, changed
    behaviour = {t["test_id"]: t["behaviour"] for t in document["tests"]}
    assert set(behaviour) == set(EXAMPLE_TESTS)
    for test_id, diff in behaviour.items():
        # 30 trials a version lack the power to vouch for some of the agent's own (seeded)
        # features, latency aside: without a change the verdict is INCONCLUSIVE, never UNCHANGED.
        weak = {f["feature"] for f in diff["features"] if f["power"] < diff["required_power"]}
        assert weak - {"latency"}, (test_id, weak)
        if diff["changes"]:  # latency only (above)
            assert diff["verdict"] == "CHANGED", test_id
        else:
            assert diff["verdict"] == "INCONCLUSIVE", test_id
            assert diff["reason"].startswith("no feature changed, but too few trials to vouch")


def test_fail_on_gates_behaviour_tools_and_cost(versions, capsys) -> None:
    baseline, retry, same = versions
    code, document = _compare(capsys, str(baseline), str(retry), "--fail-on", "tools")
    assert code == 1
    refund = next(t for t in document["tests"] if t["test_id"] == "refund-policy")
    assert refund["verdict"] == "FAIL"
    assert refund["verdict_reason"].startswith("--fail-on tools: tool path")
    assert "pass rate:" in refund["verdict_reason"]
    code, _ = _compare(capsys, str(baseline), str(retry), "--fail-on", "cost:+5%")
    assert code == 1
    # A rule that holds fails nothing: refund-policy keeps its pass-rate verdict.
    _, document = _compare(capsys, str(baseline), str(retry), "--fail-on", "cost:+500%")
    refund = next(t for t in document["tests"] if t["test_id"] == "refund-policy")
    assert refund["verdict"] == "INCONCLUSIVE" and "--fail-on" not in refund["verdict_reason"]
    _, document = _compare(capsys, str(baseline), str(same), "--fail-on", "tools")
    refund = next(t for t in document["tests"] if t["test_id"] == "refund-policy")
    assert refund["verdict"] == "INCONCLUSIVE" and "--fail-on" not in refund["verdict_reason"]


def test_cost_per_trial_in_the_trials_table_and_bad_flags(versions, capsys) -> None:
    baseline, retry, _ = versions
    analysis = assay.compare(baseline, retry, assay.AnalyzeOptions(prices=PRICES))
    assert analysis.trials[tc.COST_USD].null_count() == 0
    assert analysis.trials[tc.COST_USD].min() > 0
    assert run(["compare", str(baseline), str(retry), "--fail-on", "cost:+x%"]) == 2
    assert "--fail-on" in capsys.readouterr().err
    assert run(["compare", str(baseline), str(retry), "--prices", "/nonexistent.yaml"]) == 2
