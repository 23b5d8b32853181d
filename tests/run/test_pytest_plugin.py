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
"""


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
        # 10 < 26 trials: INCONCLUSIVE, allowed, and shown so, not as PASSED
        "test_flaky_but_inconclusive_ok": "SKIPPED",
        "test_always_fails": "FAILED",
        "test_flaky_is_inconclusive": "FAILED",
        "test_pytest_fail_is_a_failed_trial": "FAILED",
        "test_errors": "FAILED",
        "test_misspelt_marker": "FAILED",
    }
    # Each failure's own report: its verdict line first, then the first failing trial's error.
    failures = _failures(text)
    assert set(failures) == {name for outcome, name in summary if outcome == "FAILED"}
    heads = {
        "test_always_fails": "assay FAIL: 0/3 trials passed (0 errors)",
        "test_flaky_is_inconclusive": "assay INCONCLUSIVE: 8/10 trials passed (0 errors)",
        "test_pytest_fail_is_a_failed_trial": "assay FAIL: 0/3 trials passed (0 errors)",
        "test_errors": "assay FAIL: 0/3 trials passed (3 errors)",
        "test_misspelt_marker": "@pytest.mark.assay: unknown argument 'treshold'",
    }
    for name, head in heads.items():
        assert failures[name].startswith(head), (name, failures[name])
    assert "first failure, trial 0: AssertionError: arithmetic" in failures["test_always_fails"]
    flaky = failures["test_flaky_is_inconclusive"]
    assert "anytime [" in flaky and "SPRT not settled within the maximum of 10 trials" in flaky
    assert (
        "first failure, trial 0: Failed: not good enough"
        in failures["test_pytest_fail_is_a_failed_trial"]
    )
    assert "first failure, trial 0: RuntimeError: dependency down" in failures["test_errors"]
    analysis = assay.analyze(out)
    rows = {r["test_id"]: r for r in analysis.tests.iter_rows(named=True)}
    assert rows["test_agentic.py::test_always_passes"]["n"] == 26
    assert rows["test_agentic.py::test_always_fails"]["n"] == 3
    # The trials record their judgement: analyze gives the plugin's verdicts.
    verdicts = {name.split("::")[1]: row["verdict"] for name, row in rows.items()}
    assert verdicts == {
        "test_always_passes": "PASS",
        "test_always_fails": "FAIL",
        "test_flaky_is_inconclusive": "INCONCLUSIVE",
        "test_flaky_but_inconclusive_ok": "INCONCLUSIVE",
        "test_pytest_fail_is_a_failed_trial": "FAIL",
        "test_errors": "FAIL",
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
