"""The drift alarm: its reference bound, its memory, its calibration, and the done-when streams."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streams import write_trials

from assay.judge import AnalyzeOptions, Verdict
from assay.watch import (
    DriftDetector,
    DriftRule,
    Watcher,
    WatchOptions,
    lower_bounds,
    sequence_intervals,
)
from assay.watch import pass_rate_sequence as sequence


def test_lower_bounds_agree_with_the_sequences_own_interval() -> None:
    cs = sequence(0.8, 0.975)
    successes = np.array([0, 1, 7, 19, 20, 150, 299, 300])
    for n in (20, 300):
        chosen = successes[successes <= n]
        got = lower_bounds(cs, chosen.astype(float), n)
        want = [cs.interval(int(s), n)[0] for s in chosen]
        assert got == pytest.approx(want, abs=1e-9)
        # never above the exact end: every rate below it is excluded by the sequence
        positive = chosen > 0
        evidence = cs.log_evidence(chosen[positive], n, got[positive])
        assert (evidence >= -np.log(cs.alpha)).all()


def test_window_levels_spend_exactly_alpha_over_two() -> None:
    rule = DriftRule(alpha=0.05)
    m = np.arange(1, 2_000_001)
    spent = np.exp(-rule.window_level(m)).sum()
    assert spent == pytest.approx(0.025, rel=1e-5) and spent < 0.025


def test_memory_is_bounded_by_the_windows_kept_not_the_trials() -> None:
    detector = DriftDetector(DriftRule())
    rng = np.random.default_rng(0)
    most = 0
    for _ in range(50):
        detector.add((rng.random(1000) < 0.9)[None, :])
        most = max(most, detector.windows)
    assert detector.trials == 50_000
    rule = detector.rule
    assert most <= rule.keep * (rule.doublings + 2)


def test_no_false_alarm_beyond_alpha_on_streams_that_do_not_change() -> None:
    # 400 streams of 3,000 trials, looked at every 10 trials; a fixed seed
    rng = np.random.default_rng(2024)
    for rate in (0.92, 0.6):
        detector = DriftDetector(DriftRule(alpha=0.05, delta=0.02, centre=0.8), streams=400)
        for _ in range(300):
            detector.add(rng.random((400, 10)) < rate)
        assert (detector.first_alarm >= 0).mean() <= 0.05


def test_an_alarm_on_a_drop_larger_than_delta_and_not_before_it() -> None:
    rng = np.random.default_rng(7)
    detector = DriftDetector(DriftRule(alpha=0.05, delta=0.10), streams=200)
    for _ in range(30):
        detector.add(rng.random((200, 10)) < 0.95)
    assert not (detector.first_alarm >= 0).any()
    for _ in range(40):
        detector.add(rng.random((200, 10)) < 0.55)
    delay = detector.first_alarm - 300
    assert (delay > 0).all() and np.median(delay) <= 150


@pytest.mark.slow
def test_done_when_a_steady_92_percent_stream_settles_pass_without_alarm(tmp_path: Path) -> None:
    rng = np.random.default_rng(92)
    watcher = Watcher((str(tmp_path),), WatchOptions(AnalyzeOptions(threshold=0.8), grace=0.0))
    verdicts = []
    for look in range(12):
        write_trials(tmp_path, list(rng.random(100) < 0.92), first_index=100 * look)
        (test,) = watcher.look(now=float(look)).tests
        assert not test.drift_alarm
        verdicts.append(test.verdict)
    assert test.trials == 1200 and test.alarm_since is None
    assert verdicts[-1] is Verdict.PASS and Verdict.FAIL not in verdicts


@pytest.mark.slow
def test_done_when_a_drop_from_95_to_55_percent_raises_the_alarm_within_150_trials(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(55)
    watcher = Watcher((str(tmp_path),), WatchOptions(AnalyzeOptions(threshold=0.8), grace=0.0))
    write_trials(tmp_path, list(rng.random(300) < 0.95))
    (test,) = watcher.look(now=0.0).tests
    assert not test.drift_alarm
    for look in range(15):
        write_trials(tmp_path, list(rng.random(10) < 0.55), first_index=300 + 10 * look)
        (test,) = watcher.look(now=1.0 + look).tests
        if test.drift_alarm:
            break
    assert test.drift_alarm and test.alarm_since is not None
    assert 300 < test.alarm_since <= 450


def test_a_baseline_version_is_the_reference_and_the_other_versions_are_watched(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(1)
    write_trials(tmp_path, list(rng.random(400) < 0.95), version="v1")
    write_trials(tmp_path, list(rng.random(150) < 0.55), version="v2")
    write_trials(tmp_path, [True] * 7)  # no version: left out, and said
    options = WatchOptions(AnalyzeOptions(threshold=0.8), baseline_version="v1")
    status = Watcher((str(tmp_path),), options).look(final=True)
    (test,) = status.tests
    assert (test.trials, test.reference_trials) == (150, 400)
    assert test.drift_alarm
    notes = {n.kind: n.count for n in status.notes}
    assert notes["versionless_trials"] == 7
    # the same v2 trials with their own past as reference raise nothing: there is no drop
    alone = tmp_path / "alone"
    write_trials(alone, list(np.random.default_rng(1).random(150) < 0.55))
    (own,) = Watcher((str(alone),)).look(final=True).tests
    assert not own.drift_alarm


@pytest.mark.parametrize("own_reference", [True, False])
def test_a_batch_opens_the_windows_its_trials_would_open_one_at_a_time(
    own_reference: bool,
) -> None:
    # A restart feeds a test's whole backlog in one batch: it must hold the windows, their
    # passes and boundaries that the same trials fed one by one hold (only the looks differ).
    rng = np.random.default_rng(7)
    outcomes = rng.random((2, 1_337)) < np.where(np.arange(1_337) < 700, 0.9, 0.6)
    reference = rng.random((2, 211)) < 0.9
    whole = DriftDetector(DriftRule(), streams=2, own_reference=own_reference)
    pieces = DriftDetector(DriftRule(), streams=2, own_reference=own_reference)
    if not own_reference:
        whole.add_reference(reference)
        pieces.add_reference(reference)
    whole.add(outcomes)
    at = 0
    for size in rng.integers(0, 40, size=200):
        pieces.add(outcomes[:, at : at + size])
        at += size
    pieces.add(outcomes[:, at:])
    assert whole.trials == pieces.trials == 1_337
    assert whole.reference_trials == pieces.reference_trials
    for name in ("_index", "_opened", "_passes", "_boundary", "reference_passes"):
        np.testing.assert_allclose(getattr(whole, name), getattr(pieces, name))
    np.testing.assert_array_equal(whole.alarm, pieces.alarm)


@pytest.mark.parametrize("threshold", [0.0, 0.05, 0.8, 0.97, 1.0])
def test_intervals_at_once_are_the_sequences_own_and_never_narrower(threshold: float) -> None:
    seq = sequence(threshold, 0.95)
    rng = np.random.default_rng(5)
    n = np.concatenate([[0, 1, 1, 2, 5000], rng.integers(1, 3000, size=60)])
    passes = np.concatenate([[0, 0, 1, 2, 4999], rng.integers(0, n[5:] + 1)])
    lows, highs = sequence_intervals(seq, passes, n)
    for s, trials, low, high in zip(passes, n, lows, highs, strict=True):
        exact_low, exact_high = seq.interval(int(s), int(trials))
        # brentq's own roots are to 1e-12 (xtol): never narrower, to that
        assert low == pytest.approx(exact_low, abs=1e-9) and low <= exact_low + 2e-12
        assert high == pytest.approx(exact_high, abs=1e-9) and high >= exact_high - 2e-12
