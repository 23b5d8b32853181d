"""Mean score and cost per trial: a betting confidence sequence where a range is known."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streams import write_trials

from assay.cli import run
from assay.errors import InputError
from assay.stats import BoundedMeanSequence
from assay.watch import Watcher, WatchOptions


def test_the_betting_sequence_covers_the_mean_at_every_step() -> None:
    # 200 streams of 200 values from Beta(2, 5) (mean 2/7), checked after every value
    rng = np.random.default_rng(11)
    missed = 0
    widths = []
    for _ in range(200):
        sequence = BoundedMeanSequence(0.95)
        ever = False
        for value in rng.beta(2, 5, 200):
            sequence.add([value])
            low, high = sequence.interval()
            ever |= not low <= 2 / 7 <= high
        missed += ever
        widths.append(high - low)
    assert missed / 200 <= 0.05
    # and it is informative: far narrower than [0, 1] after 200 values
    assert np.median(widths) < 0.12


def test_the_sequence_narrows_and_stays_in_range() -> None:
    sequence = BoundedMeanSequence(0.9)
    assert sequence.interval() == (0.0, 1.0)
    rng = np.random.default_rng(3)
    widths = []
    for _ in range(5):
        sequence.add(rng.uniform(0.2, 0.6, 100))
        low, high = sequence.interval()
        assert 0 <= low <= high <= 1
        widths.append(high - low)
    assert widths == sorted(widths, reverse=True)
    with pytest.raises(InputError, match=r"outside \[0, 1\]"):
        sequence.add([1.5])


def test_scores_and_cost_are_shown_as_analyze_computes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(5)
    scores = list(rng.uniform(0.5, 1.0, 150))
    write_trials(tmp_path, [s > 0.6 for s in scores], scores=scores, tokens=2000)
    options = WatchOptions(max_cost=0.01)
    (test,) = Watcher((str(tmp_path),), options).look(final=True).tests
    (quality,) = test.scores
    assert quality.name == "quality" and quality.n == 150
    assert quality.mean == pytest.approx(np.mean(scores))
    assert quality.low is not None and quality.high is not None
    assert quality.low < np.mean(scores) < quality.high
    run(["analyze", str(tmp_path), "--format", "json"])
    cost = json.loads(capsys.readouterr().out)["tests"][0]["cost"]
    assert test.cost is not None and test.cost.n == cost["priced_trials"] == 150
    assert test.cost.mean == pytest.approx(cost["mean_usd"])
    assert test.cost.low is not None and test.cost.low < cost["mean_usd"] < (test.cost.high or 0)


def test_without_a_bound_the_mean_cost_is_shown_alone_and_says_why(tmp_path: Path) -> None:
    write_trials(tmp_path, [True] * 20, scores=[5.0] * 20, tokens=1000)
    status = Watcher((str(tmp_path),)).look(final=True)
    (test,) = status.tests
    assert test.cost is not None and test.cost.low is None
    assert test.cost.note is not None and "--trial-cost-bound" in test.cost.note
    (score,) = test.scores
    assert score.mean == 5.0 and score.low is None and "outside [0, 1]" in (score.note or "")
    assert any(n.kind == "score_out_of_range" for n in status.notes)


def test_a_trial_above_max_cost_voids_the_interval_and_says_so(tmp_path: Path) -> None:
    write_trials(tmp_path, [True] * 10, tokens=100_000)
    status = Watcher((str(tmp_path),), WatchOptions(max_cost=0.001)).look(final=True)
    cost = status.tests[0].cost
    assert cost is not None and cost.low is None and "outside [0, 0.001]" in (cost.note or "")
    assert any(n.kind == "cost_above_bound" for n in status.notes)


def test_metrics_carry_the_means_and_their_intervals(tmp_path: Path) -> None:
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    from assay.watch import MetricsServer

    write_trials(tmp_path, [True] * 30, scores=[0.75] * 30, tokens=1000)
    status = Watcher((str(tmp_path),)).look(final=True)
    server = MetricsServer(0).start()
    try:
        server.publish(status)
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics") as response:
            text = response.read().decode()
    finally:
        server.stop()
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    labels = (("score", "quality"), ("test", "support"))
    assert samples[("assay_test_score_mean", labels)] == pytest.approx(0.75)
    low = samples[("assay_test_score_mean_lower", labels)]
    assert low < 0.75 < samples[("assay_test_score_mean_upper", labels)]
    cost = status.tests[0].cost
    assert cost is not None and cost.mean is not None
    key = ("assay_test_cost_per_trial_usd", (("test", "support"),))
    assert samples[key] == pytest.approx(cost.mean)
    # no bound given: no interval series for the cost, rather than a made-up one
    assert not any(name.startswith("assay_test_cost_per_trial_usd_") for name, _ in samples)


def test_the_table_shows_no_cost_nobody_spent_and_says_why_once(tmp_path: Path) -> None:
    from assay.watch import status_table

    write_trials(tmp_path / "free", [True] * 10, test="no-llm")  # a tool, no LLM call
    write_trials(tmp_path / "paid", [True] * 10, test="a", tokens=1000)
    write_trials(tmp_path / "paid2", [True] * 10, test="b", tokens=1000)
    free = Watcher((str(tmp_path / "free"),)).look(final=True)
    (test,) = free.tests
    assert test.cost is not None and test.cost.mean == 0  # JSON and /metrics still say 0
    assert "cost" not in status_table(free)
    paid = Watcher((str(tmp_path / "paid"), str(tmp_path / "paid2"))).look(final=True)
    table = status_table(paid)
    assert table.count("cost per trial (USD): mean") == 2
    assert table.count("--trial-cost-bound") == 1  # why there is no interval: once, not per test
