"""A score on a declared range (EvalView's 0–100) gets watch's anytime-valid interval."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from streams import write_trials

from assay.cli import run
from assay.watch import Watcher, WatchOptions


def _scores(n: int, seed: int = 1) -> list[float]:
    return [float(v) for v in np.random.default_rng(seed).uniform(60, 95, n)]


def _quality(status_tests: tuple, name: str = "quality"):  # type: ignore[no-untyped-def]
    (test,) = status_tests
    (score,) = [s for s in test.scores if s.name == name]
    return score


def _watched(folder: Path, values: list[float], ranges: tuple = ()):  # type: ignore[no-untyped-def]
    write_trials(folder, [True] * len(values), scores=values)
    return _quality(
        Watcher((str(folder),), WatchOptions(score_ranges=ranges)).look(final=True).tests
    )


@pytest.mark.parametrize(("name", "low", "high"), [("quality", 0.0, 100.0), ("*", 50.0, 100.0)])
def test_a_declared_range_is_the_unit_sequence_rescaled(
    tmp_path: Path, name: str, low: float, high: float
) -> None:
    values = _scores(60)
    declared = _watched(tmp_path / "declared", values, ((name, low, high),))
    # the same scores rescaled to [0, 1], watch's default range: the interval scaled back
    unit = _watched(tmp_path / "unit", [(v - low) / (high - low) for v in values])
    assert declared.note is None and declared.mean == pytest.approx(np.mean(values))
    width = high - low
    assert (declared.low, declared.high) == pytest.approx(
        (low + width * unit.low, low + width * unit.high)
    )
    assert low <= declared.low <= declared.mean <= declared.high <= high


def test_undeclared_it_says_how_to_declare_it(tmp_path: Path) -> None:
    write_trials(tmp_path, [True] * 20, scores=_scores(20))
    status = Watcher((str(tmp_path),)).look(final=True)
    score = _quality(status.tests)
    assert score.low is None and score.note == (
        "a value outside [0, 1] (--score-range quality=LOW:HIGH declares its range): "
        "no anytime-valid interval"
    )
    write_trials(tmp_path / "b", [True] * 20, scores=[*_scores(19), 101.0])
    options = WatchOptions(score_ranges=(("quality", 0.0, 100.0),))
    above = _quality(Watcher((str(tmp_path / "b"),), options).look(final=True).tests)
    assert above.low is None and above.note is not None and "[0, 100]" in above.note


def test_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_trials(tmp_path, [True] * 60, scores=_scores(60))
    assert run(["watch", str(tmp_path), "--once", "--score-range", "quality=0:100"]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "score quality" in x]
    assert re.fullmatch(r"  score quality: mean [\d.]+ \[[\d.]+, [\d.]+\] over 60 trials", line)
    for bad in ("0-100", "quality=100:0", "quality=a:b", "=:"):
        assert run(["watch", str(tmp_path), "--once", "--score-range", bad]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith(f"assay: error: --score-range {bad!r}: give NAME=LOW:HIGH")


def test_the_evalview_score_assay_run_records_is_known_to_lie_in_0_to_100(tmp_path: Path) -> None:
    from assay import conventions as c

    values = _scores(60)
    write_trials(tmp_path, [True] * 60, scores=values, score_name=c.EVALVIEW_SCORE)
    (test,) = Watcher((str(tmp_path),)).look(final=True).tests
    (score,) = test.scores
    assert score.name == c.EVALVIEW_SCORE and score.note is None
    assert 0 <= score.low <= score.mean <= score.high <= 100


def _recorded(folder: Path, values: list[float], event: str, range_value: object) -> Path:
    """Trials whose score event records its own range, through the real SDK and exporter."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from assay.instrument import ParquetSpanExporter

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(folder)))
    tracer = provider.get_tracer("t")
    name_key = "assay.score.name" if event == "assay.score" else "gen_ai.evaluation.name"
    value_key = "assay.score.value" if event == "assay.score" else "gen_ai.evaluation.score.value"
    range_key = "assay.score.range" if event == "assay.score" else "gen_ai.evaluation.score.range"
    for value in values:
        with tracer.start_as_current_span("trial", attributes={"assay.test.id": "t"}) as span:
            span.add_event(event, {name_key: "quality", value_key: value, range_key: range_value})
    provider.shutdown()
    return folder


@pytest.mark.parametrize(
    ("event", "range_value"),
    [
        ("assay.score", [0.0, 100.0]),
        ("gen_ai.evaluation.result", [0, 100]),
        ("gen_ai.evaluation.result", "[0, 100]"),
        ("gen_ai.evaluation.result", "0-100"),
    ],
)
def test_a_range_the_traces_record_bounds_the_score_unasked(
    tmp_path: Path, event: str, range_value: object
) -> None:
    values = _scores(60)
    folder = _recorded(tmp_path / "recorded", values, event, range_value)
    recorded = _quality(Watcher((str(folder),)).look(final=True).tests)
    declared = _watched(tmp_path / "declared", values, (("quality", 0.0, 100.0),))
    assert recorded.note is None
    assert (recorded.low, recorded.high) == pytest.approx((declared.low, declared.high))
    # a flag for the name still wins over what the traces say
    narrow = WatchOptions(score_ranges=(("quality", 50.0, 100.0),))
    flagged = _quality(Watcher((str(folder),), narrow).look(final=True).tests)
    assert flagged.low is not None and flagged.low > recorded.low


def test_a_range_that_is_no_range_is_not_read(tmp_path: Path) -> None:
    folder = _recorded(tmp_path, _scores(20), "gen_ai.evaluation.result", "high is good")
    score = _quality(Watcher((str(folder),)).look(final=True).tests)
    assert score.low is None and score.note is not None and "outside [0, 1]" in score.note
