"""A case's behaviour diff in a compared suite: adjusted across it, skipped where mute."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from statsmodels.stats.multitest import multipletests

from assay.api import analyze
from assay.cli import run
from assay.judge import AnalyzeOptions
from assay.judge._behaviour_scope import case_behaviours
from assay.judge._pipeline import by_test

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synthetic import generate  # noqa: E402

CASES, TRIALS = 300, 5


@pytest.fixture(scope="module")
def draws(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Eight draws of one agent (tool and LLM calls), 300 cases × 5 trials each."""
    root = tmp_path_factory.mktemp("draws")
    for seed in range(1, 9):
        generate(
            root / f"s{seed}",
            trials=CASES * TRIALS,
            spans_per_trial=8,
            tests=CASES,
            seed=seed,
        )
    return [root / f"s{seed}" for seed in range(1, 9)]


def _changed(results: dict) -> list[str]:
    return [name for name, r in results.items() if r.verdict.value == "CHANGED"]


@pytest.mark.slow
def test_a_suite_of_draws_of_one_agent_shows_no_change_adjusted_across_it(
    draws: list[Path],
) -> None:
    """Case by case, four pairs of draws show a false CHANGED; across the suite none."""
    options = AnalyzeOptions(case_behaviour=True)
    alone, across = [], []
    for baseline, current in zip(draws[::2], draws[1::2], strict=True):
        b, c = by_test(analyze(baseline).trials), by_test(analyze(current).trials)
        alone += _changed(case_behaviours(c, b, options, set())[0])
        across += _changed(case_behaviours(c, b, options, set(), {"all cases": list(c)})[0])
    assert alone  # the failure mode: one case in 1,200, tested alone at 5 trials
    assert across == []


def _compare(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = run(["compare", *args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_fail_on_behaviour_keeps_its_error_rate_over_the_suite(
    draws: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, document = _compare(capsys, str(draws[6]), str(draws[7]), "--fail-on", "behaviour")
    assert code == 0 and not [c for c in document["decision"]["counted"] if c["kind"] == "fail-on"]
    features = [f for t in document["tests"] if t["behaviour"] for f in t["behaviour"]["features"]]
    # One family: every feature of every case, Holm-adjusted together (statsmodels agrees).
    assert {t["behaviour"]["family_size"] for t in document["tests"]} == {len(features)}
    assert {t["behaviour"]["adjust"] for t in document["tests"]} == {"holm"}
    expected = multipletests([f["p_value"] for f in features], method="holm")[1]
    assert [f["adjusted_p"] for f in features] == pytest.approx(list(expected), rel=1e-12)


def test_cases_too_small_to_show_a_change_are_not_diffed_and_the_notes_say_why(
    draws: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, document = _compare(capsys, str(draws[0]), str(draws[1]))
    assert all(t["behaviour"] is None for t in document["tests"])
    (note,) = [n for n in document["notes"] if "behaviour not diffed" in n]
    # Fisher's 5/5 → 0/5 is 2 / C(10, 5); Holm's first step over 300 cases is 0.05 / 300.
    assert f"p = {2 / 252:.2g} at best" in note and f"{0.05 / CASES:.2g} Holm" in note
    assert note.startswith("suite all cases: behaviour not diffed for 300 of its 300 cases")
    _, asked = _compare(capsys, str(draws[0]), str(draws[1]), "--case-behaviour")
    assert all(t["behaviour"] is not None for t in asked["tests"])
    assert not [n for n in asked["notes"] if "behaviour not diffed" in n]
    # The verdicts the suite decides on are the same either way.
    assert asked["decision"] == document["decision"]
