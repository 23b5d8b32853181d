"""``assay watch --once``: verdicts from the confidence sequence, the usual exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from streams import write_trials

from assay.cli import run
from assay.judge import AnalyzeOptions, Verdict
from assay.stats import BernoulliConfidenceSequence
from assay.watch import Watcher, WatchOptions, pass_rate_sequence


def _outcomes(passes: int, n: int) -> list[bool]:
    return [True] * passes + [False] * (n - passes)


def test_each_test_gets_the_confidence_sequence_interval_and_its_verdict(tmp_path: Path) -> None:
    write_trials(tmp_path, _outcomes(58, 60), test="good")
    write_trials(tmp_path, _outcomes(30, 60), test="bad")
    write_trials(tmp_path, _outcomes(49, 60), test="unsure")
    status = Watcher((str(tmp_path),)).look(final=True)
    by_test = {t.test_id: t for t in status.tests}
    expected = BernoulliConfidenceSequence(0.95, prior_mean=0.80, prior_strength=2.0)
    for test, verdict in (
        ("good", Verdict.PASS),
        ("bad", Verdict.FAIL),
        ("unsure", Verdict.INCONCLUSIVE),
    ):
        shown = by_test[test]
        assert shown.verdict is verdict
        assert (shown.low, shown.high) == pytest.approx(expected.interval(shown.passed, 60))
        # the verdict's meaning: PASS iff the interval lies at or above the threshold
        assert (shown.low >= 0.8) == (verdict is Verdict.PASS)
        assert (shown.high < 0.8) == (verdict is Verdict.FAIL)
    assert status.exit_code() == 1


@pytest.mark.slow
def test_the_trials_are_the_ones_analyze_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the demo agent's traces: several tests, tools, errors; watch must map them as analyze does
    agent = Path(__file__).resolve().parents[2] / "examples" / "agent.py"
    args = ["--out", str(tmp_path), "--trials", "25", "--seed", "3"]
    subprocess.run([sys.executable, str(agent), *args], check=True, capture_output=True)
    run(["analyze", str(tmp_path), "--format", "json", "--errors", "exclude"])
    analyzed = {t["test_id"]: t for t in json.loads(capsys.readouterr().out)["tests"]}
    options = WatchOptions(AnalyzeOptions(errors="exclude"))  # type: ignore[arg-type]
    watched = {t.test_id: t for t in Watcher((str(tmp_path),), options).look(final=True).tests}
    assert set(watched) == set(analyzed)
    for test_id, shown in watched.items():
        assert (shown.n, shown.passed, shown.errors) == (
            analyzed[test_id]["n"],
            analyzed[test_id]["passed"],
            analyzed[test_id]["errors"],
        )


@pytest.mark.parametrize(
    ("passes", "extra", "code", "verdict"),
    [
        (60, [], 0, "PASS"),
        (30, [], 1, "FAIL"),
        (49, [], 3, "INCONCLUSIVE"),
        (49, ["--inconclusive-ok"], 0, "INCONCLUSIVE"),
    ],
)
def test_once_exits_with_the_usual_codes(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    passes: int,
    extra: list[str],
    code: int,
    verdict: str,
) -> None:
    write_trials(tmp_path, _outcomes(passes, 60))
    assert run(["watch", str(tmp_path), "--once", *extra]) == code
    row = next(line for line in capsys.readouterr().out.splitlines() if "support" in line)
    assert verdict in row


def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["watch", str(tmp_path / "missing"), "--once"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "missing: no such file or folder" in err
    (tmp_path / "empty").mkdir()
    assert run(["watch", str(tmp_path / "empty"), "--once"]) == 2
    assert "no trial in the trace set yet" in capsys.readouterr().err
    (tmp_path / "junk.parquet").write_bytes(b"not parquet")
    assert run(["watch", str(tmp_path / "junk.parquet"), "--once"]) == 2
    assert "junk.parquet" in capsys.readouterr().err
    write_trials(tmp_path / "ok", _outcomes(5, 5))
    assert run(["watch", str(tmp_path / "ok"), "--once", "--threshold", "1.5"]) == 2
    assert "--threshold" in capsys.readouterr().err


def test_the_sequence_is_centred_on_the_threshold() -> None:
    sequence = pass_rate_sequence(0.9, 0.95)
    assert sequence.prior_mean == 0.9 and sequence.confidence == 0.95
    # a threshold of 0 or 1 still gives a prior inside (0, 1)
    assert 0 < pass_rate_sequence(1.0, 0.95).prior_mean < 1
    assert 0 < pass_rate_sequence(0.0, 0.95).prior_mean < 1


def test_each_file_is_read_once_and_trials_are_counted_not_kept(tmp_path: Path) -> None:
    watcher = Watcher((str(tmp_path),), WatchOptions(grace=0.0))
    write_trials(tmp_path, _outcomes(10, 10))
    first = watcher.look(now=0.0)
    again = watcher.look(now=1.0)
    assert first.tests[0].trials == again.tests[0].trials == 10
    write_trials(tmp_path, _outcomes(0, 5))
    later = watcher.look(now=2.0)
    assert (later.tests[0].trials, later.tests[0].passed, later.files_read) == (15, 10, 2)
    assert later.pending_traces == 0
    assert np.isclose(later.tests[0].pass_rate or 0, 10 / 15)


def test_a_judgement_recorded_by_assay_run_is_not_read_and_that_is_said(tmp_path: Path) -> None:
    from assay.judge import Judgement

    recorded = Judgement(0.9, 0.99).to_attributes()
    write_trials(tmp_path, _outcomes(40, 40), extra=recorded)
    status = Watcher((str(tmp_path),)).look(final=True)
    notes = {n.kind: n for n in status.notes}
    note = notes["recorded_judgement_not_read"]
    assert note.count == 40 and "threshold 0.9" in note.message and "--threshold" in note.message
    # judged as asked: the defaults, not the recording
    assert status.tests[0].threshold == 0.8
    matching = Watcher(
        (str(tmp_path),), WatchOptions(AnalyzeOptions(threshold=0.9, confidence=0.99))
    )
    assert all(n.kind != "recorded_judgement_not_read" for n in matching.look(final=True).notes)


def test_the_family_wide_statement_is_shown_over_several_tests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from assay.watch._metrics import _family

    write_trials(tmp_path, _outcomes(58, 60), test="good")
    alone = Watcher((str(tmp_path),)).look(final=True)
    assert alone.family is None  # one test: its guarantee is the whole statement
    for i in range(49):
        write_trials(tmp_path, _outcomes(50, 60), test=f"t{i:02d}")
    status = Watcher((str(tmp_path),)).look(final=True)
    family = status.family
    assert family is not None and family.n_tests == 50
    # Per test 95% and alpha 0.05: over 50 tests, 50 x 0.05 = 2.5 of each expected at most.
    assert family.expected_wrong_verdicts == pytest.approx(2.5)
    assert family.expected_false_alarms == pytest.approx(2.5)
    assert family.family_confidence == pytest.approx(1 - 0.05 / 50)
    run(["watch", str(tmp_path), "--once"])
    out = capsys.readouterr().out
    assert "family: 50 tests watched" in out and "--confidence 0.999 --drift-alpha 0.001" in out
    metrics = {m.name: m for m in _family(status)}
    assert metrics["assay_watch_expected_wrong_verdicts"].samples[0].value == pytest.approx(2.5)
    assert "per test only" in metrics["assay_watch_expected_false_alarms"].documentation
