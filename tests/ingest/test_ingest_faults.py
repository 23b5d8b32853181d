"""``assay import`` under hostile input: bombs and endless lines stop at a documented limit,
memory stays bounded, a failed import leaves nothing, and importing twice never counts twice."""

from __future__ import annotations

import gzip
import json
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
from test_ingest_import import _json_line, _request

import assay
from assay.cli import run
from assay.ingest import ImportLimits, import_files, read_otlp_file

MB = 1024 * 1024


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_gzip_bomb_stops_at_the_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bomb = tmp_path / "bomb.json.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as handle:
        handle.write(_json_line(_request(1, 2)).encode() + b"\n")
        for _ in range(8):
            handle.write(b" " * MB)  # 8 MB of blanks on one line, a few KB compressed
    assert bomb.stat().st_size < 100_000
    out = tmp_path / "traces"
    assert run(["import", str(bomb), "--out", str(out), "--max-decompressed-mb", "4"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert f"{bomb}: more than 4 MB once decompressed" in line
    assert not out.exists() or not list(out.rglob("*.parquet"))


def test_a_newline_free_stream_stops_at_the_line_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    endless = tmp_path / "endless.json"
    with endless.open("wb") as handle:
        handle.write(_json_line(_request(1, 2)).encode() + b"\n")
        handle.write(b'{"resourceSpans": [' + b" " * (3 * MB))
    out = tmp_path / "traces"
    assert run(["import", str(endless), "--out", str(out), "--max-message-mb", "1"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert f"{endless}:2: line longer than 1 MB" in line
    assert not out.exists() or not list(out.rglob("*.parquet"))  # all or nothing


def _gzip_of_zeros(mb: int) -> bytes:
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = b"\0" * MB
    return b"".join([*(deflate.compress(zeros) for _ in range(mb)), deflate.flush()])


@pytest.mark.parametrize(
    ("name", "make", "shown"),
    [
        ("zeros-20k.gz", lambda: _gzip_of_zeros(20), "neither OTLP JSON lines nor OTLP protobuf"),
        ("zeros-51k.gz", lambda: _gzip_of_zeros(50), "neither OTLP JSON lines nor OTLP protobuf"),
        ("zeros-1m.gz", lambda: _gzip_of_zeros(1000), "message 1 is empty"),
        ("nul.bin", lambda: b"\0" * 64 * 1024, "neither OTLP JSON lines nor OTLP protobuf"),
        ("newlines.json", lambda: b"\n" * 4 * MB, "holds no OTLP data"),
        ("blanks.json", lambda: b" \r\n\t" * MB, "holds no OTLP data"),
    ],
)
def test_a_file_with_no_otlp_in_it_is_exit_2_in_bounded_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, make: Any, shown: str
) -> None:
    """Zeros once parsed as millions of empty length-prefixed messages (a 20 KB gzip: 3.2 GB
    and still running at 120 s; 51 KB: SIGSEGV), and 4 MB of newlines took 350 s, to import
    0 spans with exit 0."""
    source = tmp_path / name
    source.write_bytes(make())
    started = time.process_time()
    assert run(["import", str(source), "--out", str(tmp_path / "traces")]) == 2
    assert time.process_time() - started < 10
    line = _one_line(capsys.readouterr().err)
    assert str(source) in line and shown in line


def test_blank_lines_keep_line_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "gaps.json"
    good = _json_line(_request(1, 2))
    source.write_text(f"\n\n{good}\n  \n\n{{not json\n")
    assert run(["import", str(source), "--out", str(tmp_path / "traces")]) == 2
    assert f"{source}:6: not valid JSON" in _one_line(capsys.readouterr().err)


_PEAK = """
import sys
import time
import zlib
from pathlib import Path
from assay.ingest import ImportLimits, read_otlp_file

def hwm() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise SystemExit("no VmHWM")

limits = ImportLimits(max_message_bytes=256 * 1024)
sum(b.table.num_rows for b in read_otlp_file(sys.argv[2], limits))  # warm up
Path("/proc/self/clear_refs").write_text("5")  # reset the peak to the current RSS
base = hwm()
spans = sum(b.table.num_rows for b in read_otlp_file(sys.argv[1], limits))
print(spans, hwm() - base)
"""


@pytest.mark.slow
def test_large_files_stream_in_bounded_memory(tmp_path: Path) -> None:
    """A 6 MB JSON-lines file and its framed protobuf twin, the message limit at 256 KB: the
    reading process's peak RSS grows by far less than the file (reading it whole would not)."""
    if not Path("/proc/self/clear_refs").exists():
        pytest.skip("needs Linux /proc/self/clear_refs to reset the peak RSS")
    request = _request(1, 200)
    line = (_json_line(request) + "\n").encode()
    body = request.SerializeToString()
    frame = struct.pack(">I", len(body)) + body
    units = {"big.json": line, "big.pb": frame}
    for name, unit in units.items():
        (tmp_path / name).write_bytes(unit * (6 * MB // len(unit)))
        (tmp_path / f"small-{name}").write_bytes(unit * 2)
    for name, unit in units.items():
        result = subprocess.run(
            [sys.executable, "-c", _PEAK, str(tmp_path / name), str(tmp_path / f"small-{name}")],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        spans, grown = map(int, result.stdout.split())
        assert spans == 200 * (6 * MB // len(unit))
        # Reading whole, as before, holds the file and its lines: at least 12 MB.
        assert grown < 5 * MB, (name, grown)


def test_a_full_disk_leaves_nothing(
    tmp_path: Path, small_disk: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    out = small_disk.path
    source = tmp_path / "big.json"
    with source.open("w") as handle:
        for first in range(1, 10_001, 2000):
            handle.write(_json_line(_request(first, 2000)) + "\n")
    small_disk.fill()
    before = sorted(out.rglob("*"))
    assert run(["import", str(source), "--out", str(out)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith(f"assay: error: {out}: cannot write (")
    assert "No space left on device" in line and line.endswith("; nothing was imported")
    assert sorted(out.rglob("*")) == before  # no partial file, no staging folder left


def test_importing_the_same_file_twice_counts_each_span_once(tmp_path: Path) -> None:
    source = tmp_path / "run.json"
    source.write_text(_json_line(_request(1, 10)) + "\n")
    out = tmp_path / "traces"
    for _ in range(2):
        import_files([source], out)
    assert len(list(out.rglob("*.parquet"))) == 2
    analysis = assay.analyze(str(out))
    (test,) = analysis.result.tests
    assert test.n == 10
    kinds = [f.kind for f in analysis.trace_set.quality.findings]
    assert kinds in (["duplicate_files"], ["duplicate_spans"])


def test_limits_must_be_positive() -> None:
    with pytest.raises(assay.errors.ConfigError):
        ImportLimits(max_message_bytes=0)


def test_a_small_file_over_no_limit_reads_as_before(tmp_path: Path) -> None:
    source = tmp_path / "pretty.json"
    source.write_text(json.dumps(json.loads(_json_line(_request(1, 3))), indent=2))
    assert sum(b.table.num_rows for b in read_otlp_file(source)) == 3
