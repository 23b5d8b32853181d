"""A trial's spans split across files: held until the root span is in and the grace has passed."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from streams import SplitExporter, send_trials, write_trials

from assay.instrument import ParquetSpanExporter
from assay.store import read_spans
from assay.watch import PendingTraces, Watcher, WatchOptions


def _split(out: Path, outcomes: list[bool]) -> tuple[ParquetSpanExporter, ParquetSpanExporter]:
    roots = ParquetSpanExporter(out, max_file_age_s=None, idle_flush_s=None)
    children = ParquetSpanExporter(out, max_file_age_s=None, idle_flush_s=None)
    send_trials(SplitExporter(roots, children), outcomes)
    return roots, children


def test_a_trace_split_across_files_is_judged_once_whole(tmp_path: Path) -> None:
    roots, children = _split(tmp_path, [True, False, True])
    children.shutdown()  # the tool spans land in a file first, the trial spans later
    watcher = Watcher((str(tmp_path),), WatchOptions(grace=2.0))
    early = watcher.look(now=0.0)
    assert early.tests == () and early.pending_traces == 3
    assert watcher.due() == 60.0  # no root yet: judged at the timeout, unless it comes
    roots.shutdown()
    assert watcher.look(now=1.0).tests == ()  # the roots are in; the grace has not passed
    assert watcher.due() == 3.0  # the next look is due when the grace ends
    judged = watcher.look(now=3.5)
    assert judged.pending_traces == 0 and judged.files_read == 2
    assert watcher.due() is None
    (test,) = judged.tests
    assert (test.trials, test.passed) == (3, 2)
    assert not judged.notes or all(n.kind != "judged_without_root" for n in judged.notes)


def test_a_trace_whose_root_never_comes_is_judged_after_the_timeout_and_said(
    tmp_path: Path,
) -> None:
    _, children = _split(tmp_path, [True, True])
    children.shutdown()
    write_trials(tmp_path, [True])
    watcher = Watcher((str(tmp_path),), WatchOptions(grace=0.0, trace_timeout=60.0))
    status = watcher.look(now=0.0)
    assert status.tests[0].trials == 1 and status.pending_traces == 2
    status = watcher.look(now=61.0)
    notes = {n.kind: n for n in status.notes}
    assert notes["judged_without_root"].count == 2
    assert notes["spans_without_trial"].count == 2  # the tool spans hold no trial span
    assert status.pending_traces == 0 and status.tests[0].trials == 1


def test_pending_memory_is_bounded_oldest_first(tmp_path: Path) -> None:
    write_trials(tmp_path, [True] * 5)
    spans = read_spans(tmp_path)
    children = spans.filter(pl.col("parent_span_id").is_not_null())
    pending = PendingTraces(grace=1.0, timeout=100.0, max_traces=2)
    ordered = children["trace_id"].to_list()
    for i, trace in enumerate(ordered):
        pending.add(children.filter(pl.col("trace_id") == trace), now=float(i))
    released = pending.release(now=5.0)
    assert released.traces == 3 and released.without_root == 3
    assert set(released.spans["trace_id"].to_list()) == set(ordered[:3])
    assert pending.traces == 2


def test_once_judges_what_is_held_and_names_the_rootless(tmp_path: Path) -> None:
    _, children = _split(tmp_path, [True])
    children.shutdown()
    write_trials(tmp_path, [True, True])
    status = Watcher((str(tmp_path),)).look(final=True)
    assert status.tests[0].trials == 2
    # judged with the complete traces: read_trials names the spans no trial claims
    assert {n.kind for n in status.notes} >= {"judged_without_root", "unclaimed_work"}
