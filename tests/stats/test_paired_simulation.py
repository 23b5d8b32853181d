"""The simulation of many adaptive paired comparisons is the one-at-a-time rule, row by row."""

from __future__ import annotations

import numpy as np
import pytest

from assay.errors import InputError
from assay.stats import PairedDecision, PairedDifferenceSequence, simulate_paired_sequence


def _one_at_a_time(
    row: np.ndarray, confidence: float, delta: float, margin: float | None
) -> tuple[int, str, float, float]:
    sequence = PairedDifferenceSequence(confidence, delta, margin)
    for value in row:
        sequence.add([value])
        if sequence.decide() is not PairedDecision.UNDECIDED:
            break
    s = sequence.status()
    return s.cases, s.decision.value, s.low, s.high


@pytest.mark.parametrize(
    ("drop", "k", "confidence", "delta", "margin"),
    [(0.1, 3, 0.9, 0.1, None), (0.0, 1, 0.95, 0.2, None), (0.02, 3, 0.95, 0.1, 0.1)],
)
def test_each_row_stops_and_decides_as_the_sequence_does(
    drop: float, k: int, confidence: float, delta: float, margin: float | None
) -> None:
    rng = np.random.default_rng(11)
    p = rng.beta(2, 1, size=(24, 150))
    d = (rng.binomial(k, np.clip(p - drop, 0, 1)) - rng.binomial(k, p)) / k
    stops = simulate_paired_sequence(d, confidence=confidence, delta=delta, margin=margin)
    for r in range(d.shape[0]):
        cases, decision, low, high = _one_at_a_time(d[r], confidence, delta, margin)
        assert (int(stops.cases[r]), str(stops.decisions[r])) == (cases, decision)
        assert stops.low[r] == pytest.approx(low, abs=1e-12)
        assert stops.high[r] == pytest.approx(high, abs=1e-12)
    # the draws were chosen so that some rows decide and the test exercises both branches
    assert 0 < np.mean(stops.cases < d.shape[1]) <= 1
    shares = sum(stops.share(decision) for decision in PairedDecision)
    assert shares == pytest.approx(1.0)


def test_out_of_bounds_differences_are_refused() -> None:
    with pytest.raises(InputError, match=r"outside \[-1, 1\]"):
        simulate_paired_sequence([[0.5, 1.5]])
    with pytest.raises(InputError, match="2-D"):
        simulate_paired_sequence([0.5, 0.1])
