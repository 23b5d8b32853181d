"""The HTML report's typed rows, read from a real trials table and a real variants table."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import polars as pl
import pytest

import assay
from assay.analysis import columns as tc
from assay.analysis import tool_variants
from assay.report._rows import TrialRow, trials_by_test, variants_by_test


@pytest.fixture(scope="module")
def trials(traces: Path) -> pl.DataFrame:
    """The example agent's trials table, as the analysis builds it (its columns, its types)."""
    return assay.analyze(traces).trials


def test_trials_read_every_field_from_its_column(trials: pl.DataFrame) -> None:
    by_test = trials_by_test(trials.to_dicts())
    assert sorted(by_test) == sorted(set(trials[tc.TEST_ID].to_list()))
    for test_id, typed in by_test.items():
        table = trials.filter(pl.col(tc.TEST_ID) == test_id)
        assert [t.trial_index for t in typed] == table[tc.TRIAL_INDEX].to_list()
        assert [t.trace_id for t in typed] == table[tc.TRACE_ID].to_list()
        assert [t.agent_version for t in typed] == table[tc.AGENT_VERSION].to_list()
        assert [t.passed for t in typed] == table[tc.PASSED].to_list()
        assert [t.error for t in typed] == table[tc.ERROR].to_list()
        assert [t.status_message for t in typed] == table[tc.STATUS_MESSAGE].to_list()
        assert [list(t.tool_sequence) for t in typed] == table[tc.TOOL_SEQUENCE].to_list()
        assert [t.duration_s for t in typed] == table[tc.DURATION_S].to_list()
        assert [[(s.name, s.value) for s in t.scores] for t in typed] == [
            [(s["name"], s["value"]) for s in scores] for scores in table[tc.SCORES].to_list()
        ]
        assert [[(c.name, c.passed) for c in t.checks] for t in typed] == [
            [(c["name"], c["passed"]) for c in checks] for checks in table[tc.CHECKS].to_list()
        ]
    # The example set has scores, failing trials and several paths: the fields are exercised.
    typed_all = [t for typed in by_test.values() for t in typed]
    assert any(t.scores for t in typed_all) and {t.status for t in typed_all} >= {"pass", "fail"}


def test_variants_count_the_trials_of_each_path(trials: pl.DataFrame) -> None:
    by_test = variants_by_test(tool_variants(trials).to_dicts())
    for test_id, variants in by_test.items():
        typed = trials_by_test(trials.to_dicts())[test_id]
        taken = Counter(t.tool_sequence for t in typed)
        passing = Counter(t.tool_sequence for t in typed if t.passed)
        assert {v.sequence: v.count for v in variants} == dict(taken)
        assert {v.sequence: v.passes for v in variants} == {s: passing[s] for s in taken}
        assert all(v.pass_rate == v.passes / v.count for v in variants)
    assert any(len(variants) > 1 for variants in by_test.values())


def test_status_and_failed_checks() -> None:
    row = {
        tc.TEST_ID: "t",
        tc.TRIAL_INDEX: None,
        tc.TRACE_ID: "ab",
        tc.AGENT_VERSION: None,
        tc.PASSED: None,
        tc.ERROR: False,
        tc.STATUS_MESSAGE: None,
        tc.SCORES: [None, {"name": "q", "value": None}],
        tc.CHECKS: [{"name": "a", "passed": True}, {"name": "b", "passed": None}, None],
        tc.TOOL_SEQUENCE: None,
        tc.DURATION_S: None,
        tc.WORK_UNKNOWN: False,
    }
    trial = TrialRow.read(row)
    # A trial with no pass/fail recorded is not passing; a check with no outcome did not pass.
    assert trial.status == "fail" and trial.failed_checks == ("b",)
    assert [s.name for s in trial.scores] == ["q"] and trial.tool_sequence == ()
    assert TrialRow.read({**row, tc.ERROR: True, tc.PASSED: True}).status == "error"
    with pytest.raises(KeyError, match=tc.DURATION_S):
        TrialRow.read({k: v for k, v in row.items() if k != tc.DURATION_S})
