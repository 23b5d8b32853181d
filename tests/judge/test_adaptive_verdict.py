"""After adaptive stopping the verdict is the anytime-valid interval against the threshold.

Trace sets recorded by earlier versions (an SPRT design, the earlier confidence-sequence rule)
replay when they stopped, and their verdict is the interval too.
"""

from __future__ import annotations

from typing import Any

import pytest

import assay
import assay.instrument as ai
from assay import conventions as c
from assay.stats import BernoulliConfidenceSequence, pass_rate_sequence

EARLIER_SPRT = {
    c.JUDGEMENT_THRESHOLD: 0.8,
    c.JUDGEMENT_CONFIDENCE: 0.95,
    c.JUDGEMENT_ERRORS: "count",
    c.SEQUENTIAL_METHOD: "sprt",
    c.SEQUENTIAL_P0: 0.8,
    c.SEQUENTIAL_P1: 0.9,
    c.SEQUENTIAL_DELTA: 0.1,
    c.SEQUENTIAL_ALPHA: 0.05,
    c.SEQUENTIAL_BETA: 0.2,
    c.SEQUENTIAL_MAX_TRIALS: 40,
}
EARLIER_CONFIDENCE_SEQUENCE = {**EARLIER_SPRT, c.SEQUENTIAL_METHOD: "confidence-sequence"}


def _record(outcomes: list[bool], attributes: dict[str, Any], test_id: str = "t") -> None:
    for index, passed in enumerate(outcomes):
        with ai.trial(test_id, index=index, run_id="r1", attributes=attributes) as t:
            t.check("ok", passed)


def _judged(path: Any) -> Any:
    (test,) = assay.analyze(path).result.tests
    return test


def test_an_earlier_sprt_fail_the_interval_does_not_show_is_inconclusive(parquet_sink) -> None:
    # What the issue saw: the SPRT stopped a test after 5 trials (2 passed) with FAIL beside
    # an anytime interval that holds the threshold.
    _record([True, False, True, False, False], EARLIER_SPRT)
    test = _judged(parquet_sink.flush())
    assert test.interval.method == "confidence-sequence"
    assert test.interval.low < 0.8 <= test.interval.high
    assert test.verdict == "INCONCLUSIVE"
    assert test.sequential.decided_at == 5 and test.sequential.decision == "FAIL"
    assert test.verdict_reason.startswith("pass rate 40.0% (2/5), 95% anytime CI [")
    assert "straddles the threshold 80.0%" in test.verdict_reason
    assert "the SPRT stopped after 5 of 40 trials, deciding FAIL" in test.verdict_reason
    assert test.verdict_reason.endswith("which the interval does not show")


def test_an_earlier_sprt_pass_stands_where_its_interval_shows_it(parquet_sink) -> None:
    _record([True] * 30, EARLIER_SPRT)
    test = _judged(parquet_sink.flush())
    # The SPRT stopped at 26; the interval after the trials in index order is the verdict.
    assert test.sequential.decided_at == 26 and test.n == 30
    sequence = pass_rate_sequence(0.8, 0.95, 40)
    lows = [sequence.interval(k, k)[0] for k in range(1, 31)]
    assert test.interval.low == pytest.approx(max(lows), abs=1e-9) and test.interval.low >= 0.8
    assert test.verdict == "PASS"
    assert "the SPRT stopped after 26 of 40 trials (4 more, in flight then, count too)" in (
        test.verdict_reason
    )


def test_an_earlier_confidence_sequence_design_replays_its_own_rule(parquet_sink) -> None:
    _record([True] * 40, EARLIER_CONFIDENCE_SEQUENCE)
    test = _judged(parquet_sink.flush())
    # The earlier rule: lower end of a Beta(8, 2) mixture sequence at level 0.05 above 0.8.
    earlier = BernoulliConfidenceSequence(0.95, 0.8, 10.0)
    stop = next(n for n in range(1, 41) if earlier.interval(n, n)[0] >= 0.8)
    assert test.sequential.decided_at == stop
    assert test.verdict == "PASS" and test.interval.low >= 0.8
    assert test.sequential.design.legacy


def test_trials_in_flight_after_the_stop_do_not_unsettle_the_verdict(parquet_sink) -> None:
    # The interval falls below 80% after 1 pass in 7 trials; two more trials, in flight then,
    # pass. Over all nine alone the interval would hold 80%; the intersection stays below.
    design = {
        **EARLIER_SPRT,
        c.SEQUENTIAL_METHOD: "confidence-sequence",
        c.SEQUENTIAL_MAX_TRIALS: 60,
        c.SEQUENTIAL_PRIOR_STRENGTH: pass_rate_sequence(0.8, 0.95, 60).prior_strength,
    }
    for key in (c.SEQUENTIAL_P1, c.SEQUENTIAL_DELTA, c.SEQUENTIAL_BETA):
        del design[key]
    outcomes = [False, True, False, False, False, False, False, True, True]
    _record(outcomes, design)
    test = _judged(parquet_sink.flush())
    sequence = pass_rate_sequence(0.8, 0.95, 60)
    assert sequence.interval(3, 9)[1] >= 0.8 > sequence.interval(1, 7)[1]
    assert all(sequence.interval(s, k)[1] >= 0.8 for s, k in ((1, 2), (1, 6)))
    assert test.sequential.decided_at == 7 and test.n == 9 and test.passed == 3
    assert test.verdict == "FAIL"
    assert test.interval.high == pytest.approx(sequence.interval(1, 7)[1], abs=1e-9)
    assert "(2 more, in flight then, count too)" in test.verdict_reason
    assert test.interval.low <= 1 / 3 <= test.interval.high  # the rate shown lies inside it


def _design(max_trials: int) -> dict[str, Any]:
    design = {
        **EARLIER_SPRT,
        c.SEQUENTIAL_METHOD: "confidence-sequence",
        c.SEQUENTIAL_MAX_TRIALS: max_trials,
        c.SEQUENTIAL_PRIOR_STRENGTH: pass_rate_sequence(0.8, 0.95, max_trials).prior_strength,
    }
    for key in (c.SEQUENTIAL_P1, c.SEQUENTIAL_DELTA, c.SEQUENTIAL_BETA):
        del design[key]
    return design


def test_a_rate_outside_the_intersection_is_said_and_an_empty_one_falls_back(
    parquet_sink, switch_sink
) -> None:
    # 30 passes, then 8 failures: the intersection still lies above 80%, the rate (79%) not.
    _record([True] * 30 + [False] * 8, _design(60))
    test = _judged(parquet_sink.flush())
    assert test.verdict == "PASS" and test.interval.low >= 0.8 > test.pass_rate
    assert any("lies outside the interval" in note for note in test.notes)
    # 30 passes, then 40 failures: no rate is in every interval; the interval over all trials.
    sink = switch_sink("drifted")
    _record([True] * 30 + [False] * 40, _design(60))
    test = _judged(sink.flush())
    assert any("have no rate in common" in note for note in test.notes)
    low, high = pass_rate_sequence(0.8, 0.95, 60).interval(30, 70)
    assert (test.interval.low, test.interval.high) == pytest.approx((low, high), abs=1e-9)
    assert test.verdict == "FAIL" and high < 0.8
