import numpy as np

from assay.judge import DurationSummary


def test_duration_summary_is_numpy_mean_and_linear_p90() -> None:
    values = [0.5, 1.25, 3.0, 10.0, float("nan")]
    summary = DurationSummary.of(values)
    clean = np.array(values[:-1])
    assert summary.mean == np.mean(clean)
    assert summary.p90 == np.percentile(clean, 90)
    assert DurationSummary.of([]) == DurationSummary(None, None)
