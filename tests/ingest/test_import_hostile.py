"""Hostile input to ``assay import`` of other tools' exports: one line, exit 2, nothing written.

The shapes are the sweep's (issue 48), written as the real files would be: JSON documents and
JSON lines, CSV, Parquet. Each once ended in a traceback (exit 1), or worse, in a silent guess.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from assay.cli import run

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from import_peak import CAN_MEASURE, import_peak, phoenix_dictionary_set  # noqa: E402

FIXTURES = Path(__file__).parent / "formats"
MLFLOW: dict[str, Any] = json.loads((FIXTURES / "mlflow-trace.json").read_text())
STARTED = 1_750_000_000_000_000  # microseconds: 2025-06-15


def _cli(*args: str) -> tuple[int, str]:
    stderr = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(stderr):
        code = run(list(args))
    return code, stderr.getvalue()


def _refused(tmp_path: Path, source: Path) -> str:
    """The one line ``assay import`` refuses ``source`` with; asserts exit 2 and nothing written."""
    out = tmp_path / "out"
    code, stderr = _cli("import", str(source), "--out", str(out))
    assert code == 2, stderr
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert not out.exists() or not any(out.rglob("*")), list(out.rglob("*"))
    assert str(source) in stderr
    return stderr


def _zipkin(**fields: Any) -> list[dict[str, Any]]:
    span = {"traceId": "1", "id": "2", "name": "x", "timestamp": STARTED, "duration": 5}
    return [{**span, **fields}]


def _jaeger(start: Any) -> dict[str, Any]:
    span = {"traceID": "1", "spanID": "2", "operationName": "x", "startTime": start, "duration": 5}
    return {"data": [{"traceID": "1", "spans": [span], "processes": {}}]}


def _langfuse(**fields: Any) -> dict[str, Any]:
    row = {"id": "o1", "trace_id": "t1", "type": "SPAN", "name": "n"}
    return {**row, "start_time": "2025-06-15 10:00:00", **fields}


def _mlflow(change: Any) -> dict[str, Any]:
    trace = copy.deepcopy(MLFLOW)
    change(trace)
    return trace


def _nested(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# -- times -----------------------------------------------------------------------------------


def test_jaeger_milliseconds_are_refused_naming_the_unit_assumed(tmp_path: Path) -> None:
    """``startTime`` in milliseconds once imported as 1970-01-21 without a word."""
    source = _write(tmp_path, "ms.json", json.dumps(_jaeger(STARTED // 1000)))
    line = _refused(tmp_path, source)
    assert "data[0].spans[0].startTime" in line
    assert "read as microseconds" in line and "1970-01-21" in line and "before 2000" in line


@pytest.mark.parametrize(
    ("name", "document", "field"),
    [
        ("zipkin seconds", _zipkin(timestamp=STARTED // 1_000_000), "[0].timestamp"),
        (
            "zipkin annotation ms",
            _zipkin(annotations=[{"timestamp": STARTED // 1000, "value": "e"}]),
            "[0].annotations[0].timestamp",
        ),
        ("langfuse before 1970", _langfuse(start_time="1969-12-31 23:59:59"), "start_time"),
        ("langfuse after 2554", _langfuse(start_time="2600-01-01 00:00:00"), "start_time"),
        (
            "mlflow assessment before 1970",
            _mlflow(lambda t: t["info"]["assessments"][0].update(create_time="1960-01-01")),
            "create_time",
        ),
        (
            "mlflow assessment after 2554",
            _mlflow(lambda t: t["info"]["assessments"][0].update(create_time="2600-01-01")),
            "create_time",
        ),
        (
            "mlflow span in microseconds",
            _mlflow(lambda t: t["data"]["spans"][0].update(start_time_unix_nano=STARTED)),
            "data.spans[0].start_time_unix_nano",
        ),
    ],
)
def test_a_time_no_span_can_have_is_one_line(
    tmp_path: Path, name: str, document: Any, field: str
) -> None:
    line = _refused(tmp_path, _write(tmp_path, "in.json", json.dumps(document)))
    assert field in line and ("before 2000" in line or "2262-04-11" in line), line


def test_an_mlflow_time_of_1e400_is_one_line(tmp_path: Path) -> None:
    for i, change in enumerate(
        [
            lambda t: t["info"]["assessments"][0].update(create_time="@@"),
            lambda t: t["data"]["spans"][0].update(start_time_unix_nano="@@"),
        ]
    ):
        text = json.dumps(_mlflow(change)).replace('"@@"', "1e400")
        _refused(tmp_path, _write(tmp_path, f"inf{i}.json", text))


_EVENT_TIMES = """
import sys
import polars as pl
from assay.ingest import import_files
import_files([sys.argv[1]], sys.argv[2])
events = pl.read_parquet(sys.argv[2], hive_partitioning=False)["events"].explode()
print(min(e["time_unix_nano"] for e in events.to_list() if e and e["name"].startswith("gen_ai")))
"""


def test_an_mlflow_time_without_a_zone_is_utc_in_any_zone(tmp_path: Path) -> None:
    """Read in the machine's zone, ``create_time`` once moved 5 h between UTC and New York."""
    trace = _mlflow(
        lambda t: t["info"]["assessments"][0].update(create_time="2025-06-15T10:00:00.250")
    )
    source = _write(tmp_path, "mlflow.json", json.dumps(trace))
    read = []
    for zone in ("UTC", "America/New_York", "Asia/Kolkata"):
        out = tmp_path / zone.replace("/", "-")
        result = subprocess.run(
            [sys.executable, "-c", _EVENT_TIMES, str(source), str(out)],
            env={**os.environ, "TZ": zone},
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        read.append(int(result.stdout))
    utc = 1_749_981_600_250_000_000  # 2025-06-15T10:00:00.250Z
    assert read == [utc, utc, utc]


def test_a_phoenix_timestamp_without_a_zone_is_utc(tmp_path: Path) -> None:
    """A dataset whose (microsecond) timestamps carry no zone reads as with ``tz=UTC``."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    zoneless = tmp_path / "phoenix"
    shutil.copytree(FIXTURES / "phoenix", zoneless)
    (dataset,) = zoneless.glob("trace_dataset-*.parquet")
    table = pq.read_table(dataset)
    for column in ("start_time", "end_time"):
        index = table.schema.get_field_index(column)
        table = table.set_column(index, column, table[column].cast(pa.timestamp("us")))
    assert table.schema.field("start_time").type.tz is None
    pq.write_table(table, dataset)
    script = (
        "import sys, polars as pl\n"
        "from assay.ingest import import_files\n"
        "import_files([sys.argv[1]], sys.argv[2])\n"
        "print(pl.read_parquet(sys.argv[2], hive_partitioning=False)"
        "['start_time_unix_nano'].min())\n"
    )
    read = []
    for zone, source in (("UTC", FIXTURES / "phoenix"), ("America/New_York", zoneless)):
        result = subprocess.run(
            [sys.executable, "-c", script, str(source), str(tmp_path / zone.replace("/", "-"))],
            env={**os.environ, "TZ": zone},
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        read.append(int(result.stdout))
    assert read[0] == read[1]


# -- shapes that once were tracebacks ----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        (
            "zipkin tag nested 90 levels",
            json.dumps(_zipkin(tags={"k": "@@"})).replace('"@@"', _nested(90)),
            "attribute 'k': its value is nested deeper than 32 levels",
        ),
        (
            "zipkin tag nested 600 levels",
            json.dumps(_zipkin(tags={"k": "@@"})).replace('"@@"', _nested(600)),
            "nested deeper than 32 levels",
        ),
        (
            "langfuse metadata nested 90 levels (JSON text)",
            json.dumps(_langfuse(metadata='{"a": ' + _nested(90) + "}")),
            "langfuse.observation.metadata.a': its value is nested deeper than 32 levels",
        ),
        ("100,000 nested [ after data", '{"data":' + "[" * 100_000, "nested deeper than the JSON"),
        (
            "a lone surrogate in a Zipkin name",
            json.dumps(_zipkin()).replace('"name": "x"', '"name": "\\ud800"'),
            "[0].name holds a lone UTF-16 surrogate",
        ),
        (
            "a lone surrogate in a Jaeger operation name",
            json.dumps(_jaeger(STARTED)).replace(
                '"operationName": "x"', '"operationName": "a\\udfff"'
            ),
            "data[0].spans[0].operationName holds a lone UTF-16 surrogate",
        ),
        ("zipkin annotations: 5", json.dumps(_zipkin(annotations=5)), "[0].annotations is not"),
        (
            "mlflow event attributes as a list",
            json.dumps(
                _mlflow(
                    lambda t: t["data"]["spans"][0].update(
                        events=[{"name": "e", "time_unix_nano": STARTED * 1000, "attributes": []}]
                    )
                )
            ).replace('"attributes": []}]', '"attributes": ["a"]}]'),
            "data.spans[0].events[0].attributes is not a JSON object",
        ),
    ],
)
def test_a_hostile_shape_is_one_line(tmp_path: Path, name: str, text: str, said: str) -> None:
    line = _refused(tmp_path, _write(tmp_path, "in.json", text))
    assert said in line, line


def test_a_surrogate_pair_is_text_and_imports(tmp_path: Path) -> None:
    """Only a *lone* surrogate is refused: an escaped pair is one character (an emoji)."""
    text = json.dumps(_zipkin(tags={"assay.test.id": "t"})).replace(
        '"name": "x"', '"name": "\\ud83d\\ude00"'
    )
    source = _write(tmp_path, "pair.json", text)
    code, stderr = _cli("import", str(source), "--out", str(tmp_path / "out"))
    assert code == 0, stderr
    names = pl.read_parquet(tmp_path / "out", hive_partitioning=False)["name"].to_list()
    assert names == ["\U0001f600"]


# -- memory: each reader bounded by the limits, whatever the encoding ------------------------

MB = 1 << 20


def _peak(tmp_path: Path, source: Path, small: Path, limit: int) -> tuple[int, int]:
    """Spans imported from ``source`` and how far the importing process's peak RSS grew."""
    if not CAN_MEASURE:
        pytest.skip("needs Linux /proc/self/clear_refs to reset the peak RSS")
    peak = import_peak(source, small, limit, tmp_path / "o")
    return peak.spans, peak.grown


def _otlp_line(i: int) -> str:
    span = {
        "traceId": f"{i + 1:032x}",
        "spanId": f"{i + 1:016x}",
        "name": "s",
        "startTimeUnixNano": str(STARTED * 1000),
        "endTimeUnixNano": str(STARTED * 1000 + 1000),
        "attributes": [{"key": "assay.test.id", "value": {"stringValue": "t"}}],
    }
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n"


@pytest.mark.slow
def test_one_span_json_lines_cost_their_bytes_not_a_table_each(tmp_path: Path) -> None:
    """4,000 one-span lines (1.2 MB) once grew the peak by about 350 MB (80 KB a line)."""
    source = _write(tmp_path, "lines.jsonl", "".join(_otlp_line(i) for i in range(4000)))
    small = _write(tmp_path, "small.jsonl", "".join(_otlp_line(i) for i in range(300)))
    spans, grown = _peak(tmp_path, source, small, 64 * MB)
    assert spans == 4000
    assert grown < 60 * MB, grown


@pytest.mark.slow
def test_a_gzip_langfuse_csv_is_decoded_within_the_message_limit(tmp_path: Path) -> None:
    """Rows of fields each under the limit: 1,000 at a time, 0.9 MB of gzip once took 3.7 GB."""
    import csv
    import gzip

    def rows(count: int) -> bytes:
        text = io.StringIO()
        writer = csv.writer(text)
        writer.writerow(["id", "trace_id", "type", "start_time", "name", "input", "output"])
        big = "a" * 300_000
        for i in range(count):
            writer.writerow([f"o{i}", f"t{i}", "SPAN", "2025-06-15 10:00:00", "n", big, big])
        return gzip.compress(text.getvalue().encode(), 9)

    source, small = tmp_path / "lf.csv.gz", tmp_path / "small.csv.gz"
    source.write_bytes(rows(300))  # 180 MB decoded
    small.write_bytes(rows(3))
    spans, grown = _peak(tmp_path, source, small, 1 * MB)
    assert spans == 300
    assert grown < 100 * MB, grown


@pytest.mark.slow
def test_a_phoenix_dictionary_counts_each_use_of_its_value(tmp_path: Path) -> None:
    """A 1 MB dictionary value on 300 rows is 300 MB decoded, not the 1 MB ``nbytes`` says."""
    source = phoenix_dictionary_set(tmp_path / "big", 300, MB)
    small = phoenix_dictionary_set(tmp_path / "small", 3, MB)
    assert source.stat().st_size < MB  # the value is stored once
    spans, grown = _peak(tmp_path, source, small, 4 * MB)
    assert spans == 300
    assert grown < 100 * MB, grown


# -- SIGTERM -------------------------------------------------------------------------------


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGINT"])
def test_a_signal_during_an_import_leaves_nothing_and_says_so(
    tmp_path: Path, signal_name: str
) -> None:
    """A real ``assay import`` process, signalled once its staging folder exists."""
    import signal
    import time

    source = _write(tmp_path, "lines.jsonl", "".join(_otlp_line(i) for i in range(20_000)))
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "import", str(source), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not list(out.glob("_import-*")) and process.poll() is None:
        assert time.monotonic() < deadline, "no staging folder appeared"
        time.sleep(0.01)
    assert process.poll() is None, "the import ended before it could be signalled"
    process.send_signal(getattr(signal, signal_name))
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == (
        f"assay: import interrupted ({signal_name}): nothing was imported, {out} is as it was"
    )
    assert "Traceback" not in stderr
    assert list(out.rglob("*")) == []  # no staging folder, no file


# -- which format, which encoding ------------------------------------------------------------


def test_a_document_matching_two_formats_is_refused_naming_both(tmp_path: Path) -> None:
    """``resourceSpans`` and Jaeger's ``data`` in one document was read as OTLP: 0 spans."""
    jaeger = _jaeger(STARTED)
    document = {"resourceSpans": [], **jaeger}
    line = _refused(tmp_path, _write(tmp_path, "both.json", json.dumps(document)))
    assert "matches 2 formats (OTLP/JSON traces, Jaeger JSON)" in line


@pytest.mark.parametrize("name", ["jaeger.json", "zipkin.json", "otlp.jsonl"])
def test_utf8_with_a_byte_order_mark_is_read(tmp_path: Path, name: str) -> None:
    source = tmp_path / name
    source.write_bytes(b"\xef\xbb\xbf" + (FIXTURES / name).read_bytes())
    code, stderr = _cli("import", str(source), "--out", str(tmp_path / "bom"))
    assert code == 0, stderr
    code, stderr = _cli("import", str(FIXTURES / name), "--out", str(tmp_path / "plain"))
    assert code == 0, stderr
    bom = pl.read_parquet(tmp_path / "bom", hive_partitioning=False).sort("span_id")
    plain = pl.read_parquet(tmp_path / "plain", hive_partitioning=False).sort("span_id")
    assert bom.drop("resource_attributes").equals(plain.drop("resource_attributes"))


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_is_refused_by_name(tmp_path: Path, encoding: str) -> None:
    """With or without its byte-order mark: once "not an OTLP protobuf" (corrupt)."""
    source = tmp_path / "trace.json"
    source.write_bytes((FIXTURES / "jaeger.json").read_text().encode(encoding))
    line = _refused(tmp_path, source)
    assert "UTF-16 text; assay reads UTF-8" in line


def test_a_failed_import_leaves_no_output_folder_it_made(tmp_path: Path, capsys) -> None:
    source = tmp_path / "u16.json"
    source.write_bytes('{"resourceSpans": []}'.encode("utf-16"))
    fresh, kept = tmp_path / "fresh", tmp_path / "kept"
    kept.mkdir()
    (kept / "mine.txt").write_text("the user's")
    for out in (fresh, kept):
        assert run(["import", str(source), "--out", str(out)]) == 2
        assert "UTF-16" in capsys.readouterr().err
    assert not fresh.exists()  # made by the import, removed again
    assert sorted(p.name for p in kept.iterdir()) == ["mine.txt"]  # the user's folder stays
