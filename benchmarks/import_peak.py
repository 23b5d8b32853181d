"""How far an ``assay import``'s peak RSS grows, measured in a process of its own (Linux).

The one measurement behind ``bench_import_memory.py`` and the memory tests of
``tests/ingest/test_import_hostile.py``: a fresh process first imports a small file of the same
format (every module loaded), then resets its peak RSS (``/proc/self/clear_refs``, writing 5)
and imports the measured file; the figure is how far the peak (``VmHWM``) grew past that reset.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

CAN_MEASURE = Path("/proc/self/clear_refs").exists()
"""Whether this system can reset a process's peak RSS (Linux)."""

_CHILD = """
import sys
from pathlib import Path
from assay.ingest import ImportLimits, import_files

def hwm() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise SystemExit("no VmHWM")

limits = ImportLimits(max_message_bytes=int(sys.argv[3]))
import_files([sys.argv[2]], sys.argv[4] + "-warm", limits=limits)  # every module loaded
Path("/proc/self/clear_refs").write_text("5")  # the peak from here on
base = hwm()
result = import_files([sys.argv[1]], sys.argv[4], limits=limits)
print(result.spans, base, hwm() - base)
"""


@dataclass(frozen=True, slots=True)
class ImportPeak:
    """One measured import."""

    spans: int
    """Spans imported."""
    base: int
    """The process's RSS (bytes) when the peak was reset, every module loaded."""
    grown: int
    """How far the peak RSS (bytes) grew past ``base`` while importing."""


def import_peak(source: Path, warm: Path, max_message_bytes: int, out: Path) -> ImportPeak:
    """Import ``source`` into ``out`` in a child process and measure its peak RSS growth.

    Args:
        source: The file (or folder) measured.
        warm: A small input of the same format, imported first so that every module the
            reader needs is loaded before the peak is reset.
        max_message_bytes: The import's ``ImportLimits.max_message_bytes``.
        out: The output folder (``out-warm`` beside it takes the warm-up import).

    Raises:
        RuntimeError: The system cannot reset a peak (:data:`CAN_MEASURE` is false).
        subprocess.CalledProcessError: The import failed.
    """
    if not CAN_MEASURE:
        raise RuntimeError("needs Linux /proc/self/clear_refs to reset the peak RSS")
    argv = [str(source), str(warm), str(max_message_bytes), str(out)]
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, *argv],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    spans, base, grown = map(int, result.stdout.split())
    return ImportPeak(spans, base, grown)


def phoenix_dictionary_set(folder: Path, rows: int, value_bytes: int = 1 << 20) -> Path:
    """A Phoenix dataset file whose ``rows`` rows share one dictionary value of ``value_bytes``.

    Stored once, decoded ``rows`` times: the shape that showed ``nbytes`` undercounting what an
    import decodes. Returns the Parquet file, written in ``folder`` (made here).
    """
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir()
    start = pa.array([dt.datetime(2025, 6, 15, tzinfo=dt.UTC)] * rows, pa.timestamp("ns", "UTC"))
    table = pa.table(
        {
            "context.trace_id": [f"{i + 1:032x}" for i in range(rows)],
            "context.span_id": [f"{i + 1:016x}" for i in range(rows)],
            "name": ["agent"] * rows,
            "start_time": start,
            "end_time": start,
            "attributes.input.value": pa.DictionaryArray.from_arrays(
                pa.array([0] * rows, pa.int32()), pa.array(["x" * value_bytes])
            ),
        }
    )
    path = folder / "trace_dataset-00000000-0000-0000-0000-000000000000.parquet"
    pq.write_table(table, path)
    return path
