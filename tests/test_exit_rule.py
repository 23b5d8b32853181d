"""The one exit-code rule (docs/cli.md, "Exit codes"), on real suites through the real CLI.

The trace sets are those of ``benchmarks/suite_sets.py``: 300 cases × 3 trials, Beta(2, 1) case
rates, recorded with the OpenTelemetry SDK into Parquet. With a baseline the suite comparison
decides: two draws of one agent and two near-perfect versions exit 0 although many cases FAIL
or are INCONCLUSIVE against the threshold; an 8-point drop exits 1. Every report leads with
that answer.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from assay.cli import run
from docs_examples import check_console_sample, check_json_sample, docs_block, json_sample

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from suite_sets import write_pair, write_version  # noqa: E402

pytestmark = pytest.mark.slow  # each set is 1,800 spans through the SDK; each run reads them


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """The three suites of issue 47, written once for the module."""
    root = tmp_path_factory.mktemp("suites")
    return {
        "same": write_pair(root / "same", 300, 3, drop=0.0, seed=0),
        "perfect": write_pair(root / "perfect", 300, 3, drop=0.0, seed=3, rate=0.97),
        "drop": write_pair(root / "drop", 300, 3, drop=0.08, seed=5),
    }


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``assay ARGS`` in its own process, as a user runs it (stdout piped: a CI log)."""
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, check=False
    )


def _document(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = run([*args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def _decision(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code, document = _document(capsys, *args)
    return code, document["decision"]


@pytest.mark.parametrize(
    ("name", "code", "verdict"),
    [
        ("same", 0, "PASS"),
        ("perfect", 0, "PASS"),
        ("drop", 1, "FAIL"),
    ],
)
def test_the_suite_comparison_decides_compare(
    sets: dict[str, tuple[Path, Path]], name: str, code: int, verdict: str
) -> None:
    baseline, current = sets[name]
    done = _cli("compare", str(baseline), str(current))
    assert done.returncode == code, done.stdout[-3000:] + done.stderr
    lines = done.stdout.splitlines()
    # Line 1: the answer and what decided it; never wider than a log's 120 columns.
    assert lines[0].startswith(f"assay: {verdict} — decided by the suite comparison against the")
    assert max(map(len, lines)) <= 120
    counts = next(line for line in lines if re.search(r"│ 300 tests per case", line))
    assert "not counted" in counts
    if name != "drop":  # per-case verdicts that did not count: cases FAIL or INCONCLUSIVE
        assert re.search(r"· [1-9]\d* (FAIL|INCONCLUSIVE)", counts), counts


def test_per_case_verdicts_count_when_asked(
    sets: dict[str, tuple[Path, Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    baseline, current = map(str, sets["same"])
    code, document = _document(capsys, "compare", baseline, current)
    decision = document["decision"]
    assert code == 0 and decision["verdict"] == "PASS" and decision["exit_code"] == 0
    # Cases 3/3 → 0/3 (p = 0.016 alone) say their drop does not hold across the suite.
    dropped = [t for t in document["tests"] if t["regression"]["verdict"] == "FAIL"]
    assert dropped and all(
        t["verdict_reason"].startswith("drop not counted (Holm-adjusted over the suite's 300")
        for t in dropped
    )
    assert decision["rule"] == "suite comparison"
    assert [c["kind"] for c in decision["counted"]] == ["comparison"]
    assert (
        "per-case drops Holm-adjusted over 300 cases: none significant" in (decision["decided_by"])
    )
    # At 3 trials a case's smallest p-value (3/3 → 0/3) is 0.016, above Holm's 0.05 / 300.
    assert "no single case can show a drop" in decision["case_tests"]
    assert "0.016" in decision["case_tests"] and "0.00017" in decision["case_tests"]
    assert decision["not_counted"].startswith("per-case threshold verdicts (")
    # --gate-cases: every case's verdict counts (cases at 0/3 FAIL the threshold 0.8).
    code, decision = _decision(capsys, "compare", baseline, current, "--gate-cases")
    assert code == 1 and decision["verdict"] == "FAIL" and decision["not_counted"] is None
    # An explicit --threshold makes the per-case threshold verdicts count: at 0.5 no case of
    # 3 trials can PASS or FAIL (0/3 has the interval [0%, 70.8%]), so INCONCLUSIVE: 3.
    code, decision = _decision(capsys, "compare", baseline, current, "--threshold", "0.5")
    assert code == 3 and decision["verdict"] == "INCONCLUSIVE"
    assert {c["kind"] for c in decision["counted"]} == {"comparison", "case threshold"}
    assert run(["compare", baseline, current, "--threshold", "0.5", "--inconclusive-ok"]) == 0
    capsys.readouterr()
    # --suite-threshold makes the suite's threshold verdict count (its mean is about 63%).
    for asked, expected in (("0.5", 0), ("0.9", 1)):
        code, decision = _decision(capsys, "compare", baseline, current, "--suite-threshold", asked)
        assert code == expected, decision
        assert "suite threshold" in {c["kind"] for c in decision["counted"]}


def test_analyze_with_a_baseline_version_and_report_follow_the_same_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    both, _ = write_pair(tmp_path / "set", 300, 3, drop=0.0, seed=0, one_folder=True)
    path = str(both)
    code, decision = _decision(capsys, "analyze", path, "--baseline-version", "v1")
    assert code == 0 and decision["rule"] == "suite comparison"
    html = tmp_path / "report.html"
    assert run(["report", path, "--baseline-version", "v1", "-o", str(html)]) == 0
    page = html.read_text()
    # The page's first badge is the answer, before the suites' threshold verdicts.
    first = re.search(r'<span class="badge (\w+)">', page)
    assert first is not None and first.group(1) == "PASS"
    assert page.index("decided by the suite comparison") < page.index("against the threshold")
    # Without a baseline every case's verdict counts: cases at 0/3 FAIL the threshold.
    code, decision = _decision(capsys, "analyze", path, "--current-version", "v2")
    assert code == 1 and decision["rule"] == "every case"


def test_a_case_that_surely_dropped_counts_after_holm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 20 cases of 30 trials alike in both versions, but one that v2 breaks completely:
    # p ≈ 1e-17 per case survives Holm over 20 cases whatever the suite's mean says.
    rates = np.full(20, 0.9)
    write_version(tmp_path / "v1", rates, 30, "v1", seed=1)
    broken = rates.copy()
    broken[7] = 0.0
    write_version(tmp_path / "v2", broken, 30, "v2", seed=2)
    code, decision = _decision(capsys, "compare", str(tmp_path / "v1"), str(tmp_path / "v2"))
    assert code == 1 and decision["verdict"] == "FAIL"
    assert {"what": "case-0007", "kind": "case regression", "verdict": "FAIL"} in (
        decision["counted"]
    )
    assert "1 significant (case-0007)" in decision["decided_by"]


def test_every_format_leads_with_the_answer(
    sets: dict[str, tuple[Path, Path]], tmp_path: Path
) -> None:
    baseline, current = map(str, sets["same"])
    md, gh, xml = tmp_path / "s.md", tmp_path / "s.gh", tmp_path / "s.xml"
    formats = ["--format", f"markdown:{md}", "--format", f"github:{gh}", "--format", f"junit:{xml}"]
    done = _cli("compare", baseline, current, "-q", *formats, "--format", "console")
    assert done.returncode == 0, done.stderr
    # Each file written is said on stderr with the answer before the per-case counts.
    assert f"wrote {md} (PASS by the suite comparison; 300 tests: 0 PASS, " in done.stderr
    title = md.read_text().splitlines()[0]
    assert title.startswith("## assay: ✅ PASS — decided by the suite comparison")
    annotations = gh.read_text().splitlines()
    assert annotations[0].startswith("::notice title=assay PASS%3A the suite comparison decides::")
    # Per-case verdicts that do not count are in the step summary, not 300 warnings.
    assert not any(line.startswith(("::error", "::warning title=assay")) for line in annotations)
    junit = xml.read_text()
    assert 'failures="0"' in junit.splitlines()[1]
    assert "reported, not counted: the suite comparison decides" in junit
    # -q prints the box alone: no case is "above", and every line fits 120 columns.
    box = done.stdout.splitlines()
    assert box[0].startswith("╭─ assay summary") and max(map(len, box)) <= 120
    assert box[1].startswith("│ assay: PASS — decided by the suite comparison")
    assert "listed above" not in done.stdout
    assert "… 290 more not PASS, not listed (--all-cases lists every one)" in done.stdout
    # Without -q the table above lists 20 cases; the box's "above" counts only those.
    full = _cli("compare", baseline, current).stdout
    more = re.search(r"… (\d+) more not PASS: (\d+) listed above, (\d+) not listed", full)
    assert more is not None
    rest, above, unlisted = map(int, more.groups())
    assert above + unlisted == rest and 0 < above <= 20 - 10
    # No per-case advice to run more trials where the suite answers; said once instead.
    assert "more trials per version would settle it" not in full
    assert full.count("no single case can show a drop") == 1


def test_the_docs_show_what_compare_prints(
    sets: dict[str, tuple[Path, Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/reports.md's suite sample and docs/json.md's document are this set's, today."""
    baseline, current = sets["drop"]  # suite_sets.py --cases 300 --trials 3 --drop 0.08 --seed 5
    printed = _cli("compare", str(baseline), str(current)).stdout
    sample = docs_block("reports.md", "it is not shown apart (the JSON lists it)")
    assert sample[1] == "$ assay compare sets/v1 sets/v2"
    check_console_sample(sample[2:], printed)
    code, document = _document(capsys, "compare", str(baseline), str(current))
    assert code == 1
    check_json_sample(json_sample("json.md", "What `assay compare sets/v1 sets/v2"), document)
