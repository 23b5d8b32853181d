"""``assay plan`` for labels: the fewest human labels for the right corrected verdict."""

from __future__ import annotations

import json

import pytest

from assay.cli import run
from assay.errors import ConfigError
from assay.stats.judges import plan_labels, right_verdict_probability

CASE = {"threshold": 0.6, "expected": 0.85, "sensitivity": 0.95, "specificity": 0.9}


def test_the_plan_is_the_fewest_labels_reaching_the_probability() -> None:
    plan = plan_labels(**CASE, trials=500, power=0.8, repetitions=300)
    assert plan.labels is not None and plan.verdict == "PASS"
    assert plan.probability is not None and plan.probability >= 0.8
    fewer = right_verdict_probability(plan.labels - 1, **CASE, trials=500, repetitions=300)
    assert fewer < 0.8
    # An independent simulation (another seed) agrees within Monte Carlo error.
    again = right_verdict_probability(plan.labels, **CASE, trials=500, repetitions=2000, seed=9)
    assert again >= 0.8 - 3 * (0.8 * 0.2 / 300) ** 0.5


def test_a_judge_no_better_than_chance_cannot_be_planned_for() -> None:
    with pytest.raises(ConfigError, match="beat chance"):
        plan_labels(0.7, 0.8, 0.5, 0.5, 1000)


def test_too_few_trials_say_so(capsys) -> None:
    code = run(
        [
            "plan",
            "--threshold",
            "0.8",
            "--expected",
            "0.81",
            "--judge-sensitivity",
            "0.9",
            "--judge-specificity",
            "0.8",
            "--trials",
            "50",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "more trials are needed too" in out


def test_the_plan_as_json(capsys) -> None:
    code = run(
        [
            "plan",
            "--threshold",
            "0.6",
            "--expected",
            "0.85",
            "--judge-sensitivity",
            "0.95",
            "--judge-specificity",
            "0.9",
            "--trials",
            "500",
            "--format",
            "json",
        ]
    )
    document = json.loads(capsys.readouterr().out)
    assert code == 0 and document["kind"] == "labels" and document["labels"] >= 2
