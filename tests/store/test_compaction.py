"""Compaction: few files, every span read once — also beside a compaction killed with -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from assay import conventions as c
from assay.instrument import ParquetSpanExporter
from assay.store import (
    DUPLICATE_SPANS,
    REPLACES_KEY,
    compact_folder,
    compact_tree,
    open_trace_set,
)
from assay.watch import FileFollower, Watcher, WatchOptions

ASSAY = str(Path(sys.executable).parent / "assay")
IDS = ["trace_id", "span_id"]


def _trials(out: Path, n: int, *, fanout: int | None = None, first: int = 0) -> None:
    """``n`` one-trial files as the exporter writes them (``force_flush()`` after each)."""
    exporter = ParquetSpanExporter(out, compact_fanout=fanout, idle_flush_s=None)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("t")
    for i in range(first, first + n):
        attributes = {c.TEST_ID: "t", c.TRIAL_INDEX: i, c.TRIAL_OUTCOME: c.OUTCOME_PASS}
        with tracer.start_as_current_span("trial", attributes=attributes):
            with tracer.start_as_current_span("tool", attributes={"gen_ai.tool.name": "s"}):
                pass
        exporter.force_flush()
    provider.shutdown()


def _files(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob("*.parquet") if not p.name.startswith("."))


def _ids(out: Path) -> pl.DataFrame:
    trace_set = open_trace_set(out)
    assert DUPLICATE_SPANS not in {f.kind for f in trace_set.quality.findings}
    return trace_set.scan().select(IDS).collect().sort(IDS)


def test_the_exporter_keeps_a_partition_under_fanout_files_per_tier(tmp_path: Path) -> None:
    _trials(tmp_path / "a", 35, fanout=4)
    _trials(tmp_path / "b", 35)
    assert len(_files(tmp_path / "b")) == 35
    assert len(_files(tmp_path / "a")) < 4
    assert _ids(tmp_path / "a").height == _ids(tmp_path / "b").height == 70


def test_compact_tree_keeps_every_span_once_and_names_its_inputs(tmp_path: Path) -> None:
    _trials(tmp_path, 23)
    before = _ids(tmp_path)
    inputs = {p.name for p in _files(tmp_path)}
    done = compact_tree(tmp_path, fanout=10)
    assert done.replaced == 23 and len(done.merged) == 1
    assert _files(tmp_path) == list(done.merged)
    assert _ids(tmp_path).equals(before)
    import pyarrow.parquet as pq

    named = json.loads(pq.read_metadata(done.merged[0]).metadata[REPLACES_KEY])
    assert {n for n, _ in named} == inputs
    assert sum(rows for _, rows in named) == before.height
    assert compact_tree(tmp_path, fanout=10).replaced == 0  # one file: nothing to merge


_KILLER = """
import os, signal, sys
from pathlib import Path
from assay.store import _compact as k
point = sys.argv[2]
real_replace, real_delete = os.replace, k._delete
def die(*args):
    os.kill(os.getpid(), signal.SIGKILL)
if point == "writing":
    k.ROW_GROUP_ROWS = 1  # a row group written per input: killed with the temporary file open
    real_merge_write = k.pq.ParquetWriter.write_table
    calls = []
    def write(self, *a, **kw):
        calls.append(1)
        if len(calls) == 3:
            die()
        return real_merge_write(self, *a, **kw)
    k.pq.ParquetWriter.write_table = write
elif point == "renamed":
    k._delete = die
elif point == "half-deleted":
    def some(paths):
        paths = list(paths)
        real_delete(paths[: len(paths) // 2])
        die()
    k._delete = some
k.compact_folder(Path(sys.argv[1]), 10)
"""


@pytest.mark.parametrize("point", ["writing", "renamed", "half-deleted"])
def test_a_compaction_killed_with_9_loses_and_doubles_no_span(tmp_path: Path, point: str) -> None:
    out = tmp_path / "traces"
    _trials(out, 12)
    follower = FileFollower((str(out),))
    first = follower.read_new().spans.height  # watch read every input already
    [folder] = {p.parent for p in _files(out)}
    before = _ids(out)
    killed = subprocess.run(
        [sys.executable, "-c", _KILLER, str(folder), point],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL
    temporaries = [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    assert bool(temporaries) == (point == "writing")
    assert _ids(out).equals(before)  # analyze reads each span once, whatever was left
    assert follower.read_new().spans.height == 0  # watch: nothing new, nothing twice
    assert first == before.height
    fresh = FileFollower((str(out),))  # a watch started now reads each span once too
    assert fresh.read_new().spans.sort(IDS).select(IDS).equals(before)
    compact_folder(folder, 10)  # the next compaction finishes the job
    assert len(_files(out)) == 1
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    assert _ids(out).equals(before)
    assert follower.read_new().spans.height == 0


def test_watch_reads_only_the_inputs_it_had_not_read(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    _trials(out, 6)
    follower = FileFollower((str(out),))
    read = follower.read_new().spans["span_id"]
    assert read.len() == 12
    _trials(out, 5, first=6)  # not read before the compaction merges them
    compact_tree(out, fanout=10)
    assert len(_files(out)) == 1
    new = follower.read_new().spans["span_id"]
    assert new.len() == 10 and not set(new) & set(read)
    assert set(new) | set(read) == set(_ids(out)["span_id"])


def test_assay_compact_merges_a_set_and_refuses_bad_paths(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    _trials(out, 12)
    before = _ids(out)
    done = subprocess.run([ASSAY, "compact", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "merged 12 file(s) into 1" in done.stdout
    assert len(_files(out)) == 1 and _ids(out).equals(before)
    for bad in [str(tmp_path / "nothing"), str(_files(out)[0])]:
        refused = subprocess.run([ASSAY, "compact", bad], capture_output=True, text=True)
        assert refused.returncode == 2
        assert len(refused.stderr.strip().splitlines()) == 1 and bad in refused.stderr


def test_a_file_merged_away_before_watch_read_it_is_read_from_the_merged_file(
    tmp_path: Path,
) -> None:
    out = tmp_path / "traces"
    _trials(out, 11)
    follower = FileFollower((str(out),))
    claimed, _ = follower.claim_new()
    compact_tree(out, fanout=10)  # between watch's listing and its reading
    assert follower.read_new(claimed).spans.height == 0
    assert follower.read_new().spans.sort(IDS).select(IDS).equals(_ids(out))


@pytest.mark.parametrize("compact_first", [False, True])
def test_watch_counts_each_trial_once_across_compactions_with_a_tiny_span_memory(
    tmp_path: Path, compact_first: bool
) -> None:
    """Two spans remembered: only the replaced-files rule keeps a merged file from recounting."""
    out = tmp_path / "traces"
    _trials(out, 6)
    if compact_first:
        compact_tree(out, fanout=3)
    watcher = Watcher((str(out),), WatchOptions(grace=0, max_seen_spans=2))
    assert [t.trials for t in watcher.look(final=True).tests] == [6]
    _trials(out, 7, first=6)
    compact_tree(out, fanout=3)
    assert [t.trials for t in watcher.look(final=True).tests] == [13]
    compact_tree(out, fanout=2)
    status = watcher.look(final=True)
    assert [t.trials for t in status.tests] == [13]
    assert DUPLICATE_SPANS not in {n.kind for n in status.notes}
