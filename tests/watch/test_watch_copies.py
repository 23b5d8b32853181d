"""Copies of a span that differ, arriving in two looks: ``watch`` keeps the copy ``analyze`` keeps.

The copies are real Parquet files (``assay import`` of OTLP/JSON, as
``tests/store/test_conflicting_copies.py`` makes them): five trial spans stored once as
``pass`` and, in a later file, three of them again as ``fail``. ``analyze`` counts the three
disputed trials as ``fail`` in either order (``assay.store``'s rule); ``watch`` must count what
``analyze`` counts whichever copy arrives first while the trace is held, and name a copy
``analyze`` would count instead arriving after its trace was judged (a trial counted is never
un-counted): the one case where the two differ, and the note says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.ingest import import_files
from assay.watch import Watcher, WatchOptions

OPTIONS = assay.AnalyzeOptions(threshold=0.5)


def _span(trial: int, outcome: str) -> dict[str, Any]:
    return {
        "traceId": f"{trial + 1:032x}",
        "spanId": f"{trial + 1:016x}",
        "name": "trial",
        "startTimeUnixNano": str(1_750_000_000_000_000_000 + trial),
        "endTimeUnixNano": str(1_750_000_000_000_000_000 + trial + 2_000),
        "attributes": [
            {"key": "assay.test.id", "value": {"stringValue": "t"}},
            {"key": "assay.trial.outcome", "value": {"stringValue": outcome}},
        ],
    }


def _arrive(folder: Path, name: str, outcome: str, trials: int, first: int = 0) -> None:
    """One new Parquet file in ``folder`` holding ``trials`` trial spans of ``outcome``."""
    source = folder.parent / f"{name}.jsonl"
    spans = [_span(i, outcome) for i in range(first, first + trials)]
    source.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    import_files([source], folder)  # staged, then moved into place: it arrives whole


def _analyzed(folder: Path) -> tuple[int, int]:
    (test,) = json.loads(assay.analyze(folder, OPTIONS).to_json())["tests"]
    return test["n"], test["passed"]


def _watcher(folder: Path) -> Watcher:
    watcher = Watcher((str(folder),), WatchOptions(analysis=OPTIONS, grace=5.0))
    assert watcher.look(now=0.0).tests == ()  # started on an empty folder: no backlog
    return watcher


@pytest.mark.parametrize("first", ["pass", "fail"])
def test_a_conflicting_copy_in_a_later_look_is_counted_as_analyze_counts_it(
    tmp_path: Path, first: str
) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    watcher = _watcher(folder)
    later = "fail" if first == "pass" else "pass"
    _arrive(folder, "first", first, 5 if first == "pass" else 3)
    assert watcher.look(now=1.0).tests == ()  # the traces wait out their grace
    _arrive(folder, "later", later, 3 if first == "pass" else 5)
    assert watcher.look(now=2.0).tests == ()
    status = watcher.look(now=10.0)
    (test,) = status.tests
    assert (test.trials, test.passed) == _analyzed(folder) == (5, 2)
    notes = {n.kind: n for n in status.notes}
    assert notes["conflicting_spans"].count == 3
    assert notes["duplicate_spans"].count == 3
    assert "late_conflicting_spans" not in notes


def test_a_copy_analyze_would_count_after_its_trace_was_judged_is_named(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    watcher = _watcher(folder)
    _arrive(folder, "first", "pass", 5)
    assert [t.trials for t in watcher.look(final=True, now=10.0).tests] == [5]
    _arrive(folder, "same", "pass", 5)  # identical copies: no conflict
    _arrive(folder, "later", "fail", 3)  # analyze counts these instead
    status = watcher.look(final=True, now=20.0)
    (test,) = status.tests
    assert (test.trials, test.passed) == (5, 5)  # counted as judged: never twice
    assert _analyzed(folder) == (5, 2)  # the disagreement the note names
    notes = {n.kind: n for n in status.notes}
    assert notes["duplicate_spans"].count == 8
    late = notes["late_conflicting_spans"]
    assert late.count == 3 and "watch and analyze differ" in late.message
    assert "conflicting_spans" not in notes


def test_a_late_copy_the_rule_does_not_keep_is_a_conflict_watch_and_analyze_agree_on(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    watcher = _watcher(folder)
    _arrive(folder, "first", "fail", 3)
    _arrive(folder, "other", "pass", 2, first=3)
    assert [t.passed for t in watcher.look(final=True, now=10.0).tests] == [2]
    _arrive(folder, "later", "pass", 3)  # the counted fail copies are the rule's
    status = watcher.look(final=True, now=20.0)
    (test,) = status.tests
    assert (test.trials, test.passed) == _analyzed(folder) == (5, 2)
    notes = {n.kind: n.count for n in status.notes}
    assert notes["conflicting_spans"] == 3 and "late_conflicting_spans" not in notes


def test_the_copy_kept_in_a_look_is_the_one_later_copies_are_compared_with(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    watcher = _watcher(folder)
    _arrive(folder, "first", "pass", 5)
    _arrive(folder, "later", "fail", 3)
    (test,) = watcher.look(final=True, now=10.0).tests
    assert (test.trials, test.passed) == (5, 2)  # the rule, within one look
    _arrive(folder, "again", "fail", 3)  # the copies counted: nothing new
    _arrive(folder, "old", "pass", 3)  # the copies the rule left: a conflict, no disagreement
    status = watcher.look(final=True, now=20.0)
    notes = {n.kind: n.count for n in status.notes}
    assert notes["conflicting_spans"] == 3 + 3 and "late_conflicting_spans" not in notes
    (test,) = status.tests
    assert (test.trials, test.passed) == _analyzed(folder)
