"""``--labels FILE``: people's labels of some trials, read from CSV or JSON Lines.

One row per label: ``trace_id`` (the trial's trace), ``evaluation`` (the evaluation's name, as
the judge records it in ``gen_ai.evaluation.name``) and ``label`` (the person's label, in the
judge's vocabulary: ``pass``/``fail``, ``true``/``false``, or a number for a score); optionally
``span_id`` (the trial's span, where a trace holds several trials) and ``labeller``. A file
ending ``.csv`` is CSV with a header row; any other is JSON Lines, one object a line. A bad row
is refused with its file and line (docs/analysis.md, "Human labels").
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Final

import polars as pl

from assay.errors import InputError

REQUIRED: Final = ("trace_id", "evaluation", "label")
"""The columns every label has."""
OPTIONAL: Final = ("span_id", "labeller")
"""The columns a label may have."""
SCHEMA: Final = pl.Schema(
    {
        "trace_id": pl.String,
        "span_id": pl.String,
        "evaluation": pl.String,
        "label": pl.String,
        "labeller": pl.String,
        "line": pl.Int64,
    }
)
"""The labels table: one row per label, ``line`` its line in the file."""


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value).strip()
    return text or None


def _row(raw: dict[str, object], where: str, line: int) -> dict[str, object]:
    row: dict[str, object] = {name: _text(raw.get(name)) for name in (*REQUIRED, *OPTIONAL)}
    for name in REQUIRED:
        if row[name] is None:
            raise InputError(f"{where}:{line}: no {name} (each label needs {', '.join(REQUIRED)})")
    # Trace and span ids are lowercase hex in the spans table; an export may shout them.
    for name in ("trace_id", "span_id"):
        if row[name] is not None:
            row[name] = str(row[name]).lower()
    row["line"] = line
    return row


def _csv_rows(path: Path) -> list[dict[str, object]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        header = [h.strip() for h in reader.fieldnames or []]
        missing = [name for name in REQUIRED if name not in header]
        if missing:
            raise InputError(
                f"{path}:1: the header lacks {', '.join(missing)} (a labels file needs columns "
                f"{', '.join(REQUIRED)}; optional {', '.join(OPTIONAL)})"
            )
        rows = []
        for line, raw in enumerate(reader, start=2):
            cleaned = {str(k).strip(): v for k, v in raw.items() if k is not None}
            if not any(_text(v) for v in cleaned.values()):
                continue  # a blank line
            rows.append(_row(cleaned, str(path), line))
        return rows


def _jsonl_rows(path: Path) -> list[dict[str, object]]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for line, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                raw = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{line}: not JSON ({exc.msg})") from None
            if not isinstance(raw, dict):
                raise InputError(
                    f"{path}:{line}: a label is a JSON object, not {type(raw).__name__}"
                )
            rows.append(_row(raw, str(path), line))
    return rows


def read_labels(path: str | os.PathLike[str]) -> pl.DataFrame:
    """People's labels from a CSV or JSON Lines file.

    Args:
        path: The file (``.csv``: CSV with a header; anything else: JSON Lines).

    Returns:
        One row per label (:data:`SCHEMA`), in the file's order.

    Raises:
        InputError: The file cannot be read, lacks a required column, or a row lacks a value;
            the message names the file and line.
    """
    where = Path(path)
    try:
        rows = _csv_rows(where) if where.suffix.lower() == ".csv" else _jsonl_rows(where)
    except OSError as exc:
        raise InputError(f"{where}: cannot read the labels ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(f"{where}: not UTF-8 text (a labels file is CSV or JSON Lines)") from None
    if not rows:
        raise InputError(f"{where}: no labels in the file")
    return pl.DataFrame(rows, schema=SCHEMA, orient="row")
