"""Hostile trace sets: every span counted once, a broken file named, never a wrong number.

Each case starts from one honest set — test ``t`` with 10 trials, 9 passing (INCONCLUSIVE at
the default 0.8 threshold) — and damages it the way a copy, a repeated command line, a symlink
or a foreign writer would; the figures must stay n = 10, passed = 9.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import assay
from assay.cli import run
from assay.errors import InputError, SchemaError
from assay.store import SpanRows, encode_attributes, open_trace_set, write_spans
from assay.store._paths import list_files

N, PASSED = 10, 9


def _trials(first: int = 0, count: int = N, passed: int = PASSED) -> pa.Table:
    """Trials ``first`` onwards, each a trial span and a tool span; those below ``passed`` pass."""
    rows = SpanRows()
    for i in range(first, first + count):
        outcome = "pass" if i < passed else "fail"
        attrs = {"assay.test.id": "t", "assay.trial.index": i, "assay.trial.outcome": outcome}
        rows.append(
            trace_id=f"{i + 1:032x}",
            span_id=f"{i + 1:016x}",
            name="trial",
            start_time=10**18 + i,
            end_time=10**18 + i + 5,
            attributes=encode_attributes(attrs),
        )
        rows.append(
            trace_id=f"{i + 1:032x}",
            span_id=f"{i + 1:08x}{'ab' * 4}",
            parent_span_id=f"{i + 1:016x}",
            name="tool",
            start_time=10**18 + i + 1,
            end_time=10**18 + i + 2,
            attributes=encode_attributes({"gen_ai.tool.name": "search"}),
        )
    return rows.to_table()


@pytest.fixture
def honest(tmp_path: Path) -> Path:
    folder = tmp_path / "traces"
    write_spans(_trials(), folder, partition_by=())
    return folder


def _figures(*paths: str | Path) -> tuple[int, int, list[str]]:
    analysis = assay.analyze([str(p) for p in paths])
    (test,) = analysis.result.tests
    return test.n, test.passed, [f.kind for f in analysis.trace_set.quality.findings]


def test_honest_set_has_no_findings(honest: Path) -> None:
    assert _figures(honest) == (N, PASSED, [])


def test_a_copied_file_is_read_once(honest: Path) -> None:
    (original,) = honest.glob("*.parquet")
    shutil.copy(original, honest / "copy.parquet")
    sub = honest / "date=2026-01-01"
    sub.mkdir()
    shutil.copy(original, sub / "again.parquet")
    n, passed, kinds = _figures(honest)
    assert (n, passed) == (N, PASSED)
    assert kinds == ["duplicate_files"]
    finding = open_trace_set(honest).quality.findings[0]
    assert finding.count == 2 * 2 * N  # two copies of 20 spans


def test_the_same_folder_named_twice_is_read_once(
    honest: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(honest.parent)
    n, passed, kinds = _figures("traces", honest, f"{honest}/")
    assert (n, passed) == (N, PASSED)
    assert kinds == ["duplicate_paths"]


def test_a_symlinked_file_and_a_hard_link_are_read_once(honest: Path) -> None:
    (original,) = honest.glob("*.parquet")
    os.symlink(original, honest / "link.parquet")
    os.link(original, honest / "hard.parquet")
    assert _figures(honest)[:2] == (N, PASSED)


def test_a_symlink_loop_is_not_followed(honest: Path) -> None:
    os.symlink(honest, honest / "loop")  # traces/loop -> traces
    os.symlink("..", honest / "up")
    for paths in ([honest], [f"{honest}/**/*.parquet"]):
        n, passed, kinds = _figures(*paths)
        assert (n, passed) == (N, PASSED), paths
        assert "symlink_loops" in kinds


def test_spans_stored_twice_in_different_files_are_counted_once(honest: Path) -> None:
    # Half of the trials again (an import run twice over part of the data, a retried export),
    # written together with two new spans so that no file is a copy of another.
    overlap = _trials(first=0, count=5)
    extra = _trials(first=N, count=1)  # trial 10: a failing one, not a duplicate
    write_spans(pa.concat_tables([overlap, extra]), honest / "more", partition_by=())
    analysis = assay.analyze(str(honest))
    (test,) = analysis.result.tests
    assert (test.n, test.passed) == (N + 1, PASSED)
    (finding,) = analysis.trace_set.quality.findings
    assert finding.kind == "duplicate_spans" and finding.count == 10
    assert len(analysis.trace_set.scan().collect()) == 2 * (N + 1)


def test_a_file_without_promoted_columns_is_read_from_its_attributes(honest: Path) -> None:
    (original,) = honest.glob("*.parquet")
    table = pq.read_table(original)
    stripped = table.drop_columns(["assay_trial_outcome", "assay_test_id", "gen_ai_tool_name"])
    pq.write_table(stripped, original)
    n, passed, kinds = _figures(honest)
    assert (n, passed) == (N, PASSED)  # not 10/10 from a null outcome
    assert kinds == ["missing_promoted_columns"]
    frame = open_trace_set(honest).scan().collect()
    assert frame["gen_ai_tool_name"].drop_nulls().to_list() == ["search"] * N


def _one_span_each(attributes: list[dict[str, object]]) -> pa.Table:
    rows = SpanRows()
    for i, attrs in enumerate(attributes):
        rows.append(
            trace_id=f"{i + 1:032x}",
            span_id=f"{i + 1:016x}",
            name="s",
            start_time=1,
            end_time=2,
            attributes=encode_attributes(attrs),
        )
    return rows.to_table()


def test_promoted_columns_rebuilt_from_attributes_match_the_writer(tmp_path: Path) -> None:
    values: list[object] = [7, "8", 9.0, 9.5, True, " 10 ", "x"]
    table = _one_span_each(
        [
            {"assay.test.id": 3 if i == 0 else "t", "assay.trial.index": v}
            for i, v in enumerate(values)
        ]
    )
    write_spans(table, tmp_path / "full", partition_by=())
    stripped = table.drop_columns(["assay_trial_index", "assay_test_id"])
    pq.write_table(stripped, tmp_path / "s.parquet")
    for column in ("assay_trial_index", "assay_test_id"):
        expected = open_trace_set(tmp_path / "full").scan().collect()[column].to_list()
        rebuilt = open_trace_set(tmp_path / "s.parquet").scan().collect()[column].to_list()
        assert rebuilt == expected, column


def test_a_rebuilt_string_column_holds_the_text_of_every_value_as_the_writer(
    tmp_path: Path,
) -> None:
    values: list[object] = ["x", 3, 2.5, True, False, ["a", "b"], [1, "a"], {"k": 1}, b"\0\1", None]
    table = _one_span_each([{"assay.test.id": "t", "gen_ai.tool.name": v} for v in values])
    written = table["gen_ai_tool_name"].to_pylist()
    assert written[:5] == ["x", "3", "2.5", "true", "false"] and written[-1] is None
    assert None not in written[:-1]
    pq.write_table(table.drop_columns(["gen_ai_tool_name"]), tmp_path / "s.parquet")
    rebuilt = open_trace_set(tmp_path / "s.parquet").scan().collect()["gen_ai_tool_name"]
    assert rebuilt.to_list() == written


def test_a_file_without_events_is_refused_by_name(honest: Path) -> None:
    (original,) = honest.glob("*.parquet")
    pq.write_table(pq.read_table(original).drop_columns(["events"]), original)
    with pytest.raises(SchemaError, match=r"\.parquet: missing column\(s\) events"):
        open_trace_set(honest)


def _null_ids(path: Path, column: str, value: str | None = None, rows: int = 1) -> None:
    table = pq.read_table(path)
    index = table.schema.get_field_index(column)
    values = table[column].to_pylist()
    values[3 : 3 + rows] = [value] * rows
    field = table.schema.field(index).with_nullable(True)
    pq.write_table(table.set_column(index, field, pa.array(values, pa.string())), path)


@pytest.mark.parametrize("column", ["trace_id", "span_id"])
def test_a_null_id_is_one_line_and_exit_2(
    honest: Path, column: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (original,) = honest.glob("*.parquet")
    _null_ids(original, column)
    assert run(["analyze", str(honest)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert str(original) in err and f"1 span(s) without a {column}" in err


@pytest.mark.parametrize("column", ["trace_id", "span_id"])
def test_empty_ids_are_invalid_never_merged_as_duplicates(
    honest: Path, column: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two distinct spans, both with an empty id: read as one span stored twice, they once
    # lost a trial; an empty id is an invalid id (as in OTLP), so the file is refused by name.
    (original,) = honest.glob("*.parquet")
    _null_ids(original, column, "", rows=2)
    assert run(["analyze", str(honest)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert str(original) in err and f"2 span(s) with an empty {column}" in err


def test_a_fifo_named_like_a_spans_file_is_named_or_skipped_never_opened(honest: Path) -> None:
    # Opening a FIFO blocks until something writes to it: `analyze` once hung, also with
    # --skip-bad-files. Run in a child with a deadline, so a regression fails instead of hanging.
    fifo = honest / "x.parquet"
    os.mkfifo(fifo)
    code = "import sys\nfrom assay.cli import run\nsys.exit(run(sys.argv[1:]))\n"
    for extra, expected in (([], 2), (["--skip-bad-files"], 3)):
        result = subprocess.run(
            [sys.executable, "-c", code, "analyze", str(honest), *extra],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == expected, result.stderr
        if expected == 2:
            assert f"{fifo}: not a regular file" in result.stderr
    assert [s.path for s in open_trace_set(honest, skip_bad_files=True).skipped] == [str(fifo)]
    with pytest.raises(InputError, match="not a regular file"):
        open_trace_set(fifo)


def test_a_broken_entry_is_named_or_skipped(honest: Path) -> None:
    os.symlink(honest / "gone.parquet", honest / "dangling.parquet")
    with pytest.raises(InputError, match=r"dangling\.parquet: cannot examine"):
        open_trace_set(honest)
    trace_set = open_trace_set(honest, skip_bad_files=True)
    assert [s.path for s in trace_set.skipped] == [str(honest / "dangling.parquet")]


def _as_nobody(job: Callable[[], str]) -> str:
    """Run ``job`` as an unprivileged user: root reads every folder, whatever its mode.

    As root, ``job`` runs in a forked child that drops to uid 65534 (no exec, so no other
    Python is needed); it must not start threads (Polars, Arrow) before it answers.
    """
    if os.geteuid() != 0:
        return job()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.setgid(65534)
            os.setuid(65534)
            answer = job()
        except BaseException as exc:
            answer = f"child failed: {exc!r}"
        os.write(write, answer.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        answer = pipe.read().decode()
    os.waitpid(pid, 0)
    return answer


def _open_error(root: Path) -> str:
    try:
        open_trace_set(root)
    except InputError as exc:
        return str(exc)
    return "no error"


def test_an_unreadable_subfolder_is_named_or_skipped(tmp_path: Path) -> None:
    root = tmp_path / "set"
    write_spans(_trials(), root / "ok", partition_by=())
    write_spans(_trials(N, 2), root / "secret", partition_by=())
    # Traversable by the unprivileged user, except the secret folder.
    for path in [p for p in (tmp_path, *tmp_path.parents) if str(p).startswith("/tmp/")]:
        path.chmod(path.stat().st_mode | 0o755)
    for path in root.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    root.chmod(0o755)
    (root / "secret").chmod(0)
    try:
        secret = root / "secret"
        assert _as_nobody(lambda: _open_error(root)) == (
            f"{secret}: cannot list folder (Permission denied)"
        )
        unreadable = _as_nobody(lambda: repr(list_files([str(root)]).unreadable))
        assert unreadable == repr([(str(secret), "cannot list folder (Permission denied)")])
    finally:
        (root / "secret").chmod(0o755)


def test_what_was_collapsed_is_in_the_json_data_quality(
    honest: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (original,) = honest.glob("*.parquet")
    shutil.copy(original, honest / "copy.parquet")
    assert run(["analyze", str(honest), "--format", "json"]) == 3  # 9/10: INCONCLUSIVE
    document = json.loads(capsys.readouterr().out)
    (test,) = document["tests"]
    assert (test["n"], test["passed"]) == (N, PASSED)
    # (the fixture's "tool" spans lack gen_ai.operation.name: also an unclaimed_work warning)
    findings = document["data_quality"]["findings"]
    (finding,) = [f for f in findings if f["kind"] == "duplicate_files"]
    assert finding["count"] == 2 * N
    # the later of the two in walk order is the one left out
    assert finding["examples"] == [str(original)]
