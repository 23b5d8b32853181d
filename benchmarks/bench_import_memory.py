"""``assay import``: peak RSS against input size, for each format's reader.

Each import is measured by ``import_peak.py`` (the tests' measurement): a fresh process
imports a small file of the same format (every module loaded), resets its peak RSS
(``/proc/self/clear_refs``) and imports the measured file; the figure is how far the peak grew.
Bounded readers grow by about the same at every size (``--max-message-mb`` and the row-group
bound, not the file); a reader holding the whole input grows with it. The inputs are the shapes
that once broke the bound (issue 48): one-span OTLP/JSON lines, a Langfuse CSV of large fields,
gzip, and a Phoenix dataset whose large value is dictionary-encoded (stored once, decoded at
each use).

    python benchmarks/bench_import_memory.py [--scale 1]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from import_peak import CAN_MEASURE, import_peak, phoenix_dictionary_set  # noqa: E402

MB = 1 << 20
STARTED = 1_750_000_000_000_000  # µs


def _otlp_lines(folder: Path, n: int) -> Path:
    path = folder / f"otlp-{n}.jsonl"
    with path.open("w") as out:
        for i in range(n):
            span = {
                "traceId": f"{i + 1:032x}",
                "spanId": f"{i + 1:016x}",
                "name": "s",
                "startTimeUnixNano": str(STARTED * 1000),
                "endTimeUnixNano": str(STARTED * 1000 + 1000),
                "attributes": [{"key": "assay.test.id", "value": {"stringValue": "t"}}],
            }
            out.write(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n")
    return path


def _jaeger(folder: Path, n: int) -> Path:
    spans = [
        {
            "traceID": f"{i + 1:032x}",
            "spanID": f"{i + 1:016x}",
            "operationName": "s",
            "startTime": STARTED,
            "duration": 5,
            "tags": [{"key": "assay.test.id", "type": "string", "value": "t"}],
            "processID": "p1",
        }
        for i in range(n)
    ]
    path = folder / f"jaeger-{n}.json"
    trace = {"traceID": "1", "spans": spans, "processes": {"p1": {"serviceName": "a"}}}
    path.write_text(json.dumps({"data": [trace]}))
    return path


def _zipkin(folder: Path, n: int) -> Path:
    spans = [
        {
            "traceId": f"{i + 1:032x}",
            "id": f"{i + 1:016x}",
            "name": "s",
            "timestamp": STARTED,
            "duration": 5,
            "tags": {"assay.test.id": "t"},
        }
        for i in range(n)
    ]
    path = folder / f"zipkin-{n}.json"
    path.write_text(json.dumps(spans))
    return path


def _langfuse_csv(folder: Path, n: int) -> Path:
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(["id", "trace_id", "type", "start_time", "name", "input", "output"])
    big = "a" * 300_000
    for i in range(n):
        writer.writerow([f"o{i}", f"t{i}", "SPAN", "2025-06-15 10:00:00", "n", big, big])
    path = folder / f"langfuse-{n}.csv.gz"
    path.write_bytes(gzip.compress(text.getvalue().encode(), 6))
    return path


def _phoenix(folder: Path, n: int) -> Path:
    return phoenix_dictionary_set(folder / f"phoenix-{n}", n, MB).parent


def _decoded(path: Path) -> int:
    """The bytes the reader must decode: the file inflated, or the Parquet values used."""
    if path.is_dir():
        import pyarrow.parquet as pq

        from assay.ingest._phoenix import decoded_bytes

        table = pq.read_table(next(path.glob("*.parquet")))
        return sum(decoded_bytes(c) for c in table.columns)
    data = path.read_bytes()
    return len(gzip.decompress(data)) if data[:2] == b"\x1f\x8b" else len(data)


FORMATS: list[tuple[str, Callable[[Path, int], Path], tuple[int, ...], int]] = [
    ("OTLP/JSON, one span a line", _otlp_lines, (1000, 4000, 8000), 64),
    ("Jaeger JSON, one document", _jaeger, (2000, 8000, 20000), 64),
    ("Zipkin v2 JSON", _zipkin, (2000, 8000, 20000), 64),
    ("Langfuse CSV, gzip, 600 KB rows", _langfuse_csv, (50, 200, 400), 64),
    ("Phoenix, 1 MB dictionary value", _phoenix, (100, 400, 1100), 64),
]
"""Format, generator, sizes (spans or rows), --max-message-mb."""


def main() -> int:
    """Print peak RSS growth against input size for each format."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="Multiply every size.")
    args = parser.parse_args()
    if not CAN_MEASURE:
        print("needs Linux /proc/self/clear_refs to reset the peak RSS")
        return 0
    print(f"{'format':34} {'spans':>7} {'decoded MB':>11} {'peak grew MB':>13} (limit MB)")
    for name, make, sizes, limit in FORMATS:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            small = make(folder / "warm", 3) if (folder / "warm").mkdir() is None else None
            assert small is not None
            for n in sizes:
                source = make(folder, max(3, int(n * args.scale)))
                peak = import_peak(source, small, limit * MB, folder / f"out-{n}")
                spans, grown = peak.spans, peak.grown
                print(
                    f"{name:34} {spans:>7} {_decoded(source) / MB:>11.1f} "
                    f"{grown / MB:>13.1f} ({limit})",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
