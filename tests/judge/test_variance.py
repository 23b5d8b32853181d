from assay.judge import variance_checks


def test_each_configured_limit_is_a_reason() -> None:
    checks = variance_checks(0.7, 80.0, 12.0, pass_rate_min=0.8, min_mean_score=75, max_std_dev=10)
    assert [c.name for c in checks] == ["pass_rate", "min_mean_score", "max_std_dev"]
    assert [c.passed for c in checks] == [False, True, False]
    assert "70.0%" in checks[0].reason and "exceeds" in checks[2].reason


def test_unconfigured_limits_are_not_reported_and_missing_scores_fail() -> None:
    assert variance_checks(1.0, None, None) == []
    checks = variance_checks(1.0, None, None, min_mean_score=1, max_std_dev=1)
    assert [c.passed for c in checks] == [False, False]
    assert all(c.value is None for c in checks)
