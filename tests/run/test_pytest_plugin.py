"""The pytest plugin, in a real pytest subprocess (the plugin loads through its entry point).

``pytester`` would need ``pytest_plugins`` in the top-level conftest, which is not this
package's to edit; a subprocess runs the same real pytest. It loads no other plugin:
``-p assay`` names the ``pytest11`` entry point (pytest looks the name up among the entry
points), and auto-loading the frameworks' plugins (langsmith's, anyio's) would cost each run
seconds.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import assay

TESTS = """
import itertools
import pytest

_counter = itertools.count()


@pytest.mark.assay(runs=40, threshold=0.8)
def test_always_passes():
    assert True


@pytest.mark.assay(runs=40, threshold=0.8)
def test_always_fails():
    assert 1 + 1 == 3, "arithmetic"


@pytest.mark.assay(runs=10, threshold=0.8)
def test_flaky_is_inconclusive():
    assert next(_counter) % 5 != 0


@pytest.mark.assay(runs=10, threshold=0.8, inconclusive_ok=True)
def test_flaky_but_inconclusive_ok():
    assert True


@pytest.mark.assay(runs=10)
def test_pytest_fail_is_a_failed_trial():
    pytest.fail("not good enough")


@pytest.mark.assay(runs=10)
def test_errors(tmp_path):
    raise RuntimeError("dependency down")


def test_plain():
    assert True


@pytest.mark.assay(runs=5, treshold=0.9)
def test_misspelt_marker():
    assert True


_two_of_five = itertools.count()


@pytest.mark.assay(runs=5, threshold=0.8)
def test_two_of_five():
    assert next(_two_of_five) in (1, 3)


@pytest.mark.assay(runs=5, delta=0.2)
def test_delta_without_sprt():
    assert True
"""


def _stops(max_trials: int) -> tuple[int, int]:
    """Straight passes and straight failures after which the 95% anytime interval settles."""
    from assay.stats import pass_rate_sequence

    sequence = pass_rate_sequence(0.8, 0.95, max_trials)
    passes = next(n for n in range(1, 1000) if sequence.interval(n, n)[0] >= 0.8)
    fails = next(n for n in range(1, 1000) if sequence.interval(0, n)[1] < 0.8)
    return passes, fails


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_agentic.py").write_text(TESTS)
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\naddopts = --strict-markers\nfilterwarnings = error\n"
    )
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--disable-plugin-autoload", "-p", "assay"]
        + ["-p", "no:cacheprovider", "-rA", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _failures(text: str) -> dict[str, str]:
    """pytest's FAILURES section, test by test: name -> its report (``-rA`` output)."""
    section = text.split(" FAILURES ", 1)[1].split("\n=", 1)[0]
    parts = re.split(r"^_{3,} (\w+) _{3,}$", section, flags=re.MULTILINE)[1:]
    return dict(zip(parts[::2], (p.strip() for p in parts[1::2]), strict=True))


@pytest.mark.slow
def test_marked_tests_become_verdicts(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    done = _pytest(tmp_path, "--assay-out", str(out))
    text = done.stdout
    assert done.returncode == 1, text + done.stderr
    summary = re.findall(r"^(PASSED|FAILED) test_agentic\.py::(\w+)", text, re.MULTILINE)
    skipped = re.findall(r"^SKIPPED \[1\] .*?: (\w+): assay (\w+):", text, re.MULTILINE)
    summary += [("SKIPPED", name) for name, verdict in skipped if verdict == "INCONCLUSIVE"]
    assert {name: outcome for outcome, name in summary} == {
        "test_always_passes": "PASSED",
        "test_plain": "PASSED",
        # 10 trials cannot PASS: INCONCLUSIVE, allowed, and shown so, not as PASSED
        "test_flaky_but_inconclusive_ok": "SKIPPED",
        "test_always_fails": "FAILED",
        "test_flaky_is_inconclusive": "FAILED",
        "test_pytest_fail_is_a_failed_trial": "FAILED",
        "test_errors": "FAILED",
        "test_misspelt_marker": "FAILED",
        "test_two_of_five": "FAILED",
        "test_delta_without_sprt": "FAILED",
    }
    # Each failure's own report: its verdict line first, then the first failing trial's error.
    failures = _failures(text)
    assert set(failures) == {name for outcome, name in summary if outcome == "FAILED"}
    # It stops once the anytime-valid interval lies on one side of the threshold.
    passes_40, fails_40 = _stops(40)
    _, fails_10 = _stops(10)
    heads = {
        "test_always_fails": f"assay FAIL: 0/{fails_40} trials passed (0 errors)",
        "test_flaky_is_inconclusive": "assay INCONCLUSIVE: 8/10 trials passed (0 errors)",
        "test_pytest_fail_is_a_failed_trial": f"assay FAIL: 0/{fails_10} trials passed (0 errors)",
        "test_errors": f"assay FAIL: 0/{fails_10} trials passed ({fails_10} errors)",
        "test_misspelt_marker": "@pytest.mark.assay: unknown argument 'treshold'",
        # 2 of 5: the interval holds 80%, so no FAIL (the issue's `FAIL 2/5` beside it)
        "test_two_of_five": "assay INCONCLUSIVE: 2/5 trials passed (0 errors), anytime [",
        "test_delta_without_sprt": "@pytest.mark.assay: delta shapes only method='sprt'",
    }
    for name, head in heads.items():
        assert failures[name].startswith(head), (name, failures[name])
    assert "first failure, trial 0: AssertionError: arithmetic" in failures["test_always_fails"]
    flaky = failures["test_flaky_is_inconclusive"]
    assert "anytime [" in flaky
    assert "confidence sequence did not stop before the maximum of 10 trials" in flaky
    two = re.search(r"anytime \[([\d.]+)%, ([\d.]+)%\]", failures["test_two_of_five"])
    assert two is not None and float(two[1]) < 80 < float(two[2])
    assert (
        "first failure, trial 0: Failed: not good enough"
        in failures["test_pytest_fail_is_a_failed_trial"]
    )
    assert "first failure, trial 0: RuntimeError: dependency down" in failures["test_errors"]
    analysis = assay.analyze(out)
    rows = {r["test_id"]: r for r in analysis.tests.iter_rows(named=True)}
    assert rows["test_agentic.py::test_always_passes"]["n"] == passes_40
    assert rows["test_agentic.py::test_always_fails"]["n"] == fails_40
    # The trials record their judgement: analyze gives the plugin's verdicts.
    verdicts = {name.split("::")[1]: row["verdict"] for name, row in rows.items()}
    assert verdicts == {
        "test_always_passes": "PASS",
        "test_always_fails": "FAIL",
        "test_flaky_is_inconclusive": "INCONCLUSIVE",
        "test_flaky_but_inconclusive_ok": "INCONCLUSIVE",
        "test_pytest_fail_is_a_failed_trial": "FAIL",
        "test_errors": "FAIL",
        "test_two_of_five": "INCONCLUSIVE",
    }
    assert (
        rows["test_agentic.py::test_errors"]["errors"] == rows["test_agentic.py::test_errors"]["n"]
    )


@pytest.mark.slow
def test_inconclusive_ok_flag_and_fixed_runs(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "--assay-inconclusive-ok", "--assay-fixed", "-k", "flaky or passes")
    assert done.returncode == 0, done.stdout + done.stderr
    skipped = re.findall(r"^SKIPPED \[1\] .*?: (\w+): assay (\w+):", done.stdout, re.MULTILINE)
    assert ("test_flaky_is_inconclusive", "INCONCLUSIVE") in skipped
    assert "PASSED test_agentic.py::test_flaky_is_inconclusive" not in done.stdout
    assert "1 passed, 2 skipped" in done.stdout
    assert "no tests ran" not in done.stdout
    # skipped at the test's own place, not at a line of the plugin, with a one-line reason
    assert re.search(
        r"^SKIPPED \[1\] test_agentic\.py:\d+: test_flaky_is_inconclusive: assay INCONCLUSIVE",
        done.stdout,
        re.MULTILINE,
    ), done.stdout
    assert "pytest_plugin.py" not in done.stdout
    assert "first failure, trial 0: AssertionError: assert (0 % 5) != 0 (allowed" in done.stdout
    # a passing test says on how many trials it passed
    section = done.stdout.split(" assay verdicts ", 1)[1].split("\n=", 1)[0]
    assert "test_agentic.py::test_always_passes: assay PASS: 40/40 trials passed" in section
