"""The result model is typed end to end, and the reports read its named fields."""

from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path

import polars as pl

import assay
from assay.analysis import tool_variants
from assay.judge import AnalysisResult, SequentialOutcome, TestResult

REPORT = Path(__file__).resolve().parents[2] / "src" / "assay" / "report"
FOREIGN_REGISTRIES = {"colormaps"}
"""Receivers that are no table of assay's: matplotlib's colormaps, read by name."""


def _contains_any(hint: object) -> bool:
    if hint is typing.Any:
        return True
    return any(_contains_any(arg) for arg in typing.get_args(hint))


def test_no_result_field_is_any() -> None:
    for cls in (TestResult, AnalysisResult, SequentialOutcome):
        hints = typing.get_type_hints(cls)
        fields = {f.name for f in dataclasses.fields(cls)}
        assert fields <= set(hints)
        assert "extra" not in fields, cls
        bad = sorted(name for name in fields if _contains_any(hints[name]))
        assert not bad, f"{cls.__name__}: {bad} typed Any"


def _model_fields(cls: type, seen: set[type]) -> set[str]:
    """The field names of ``cls`` and of every dataclass its fields hold, at any depth."""
    if cls in seen:
        return set()
    seen.add(cls)
    names = set()
    for name, hint in typing.get_type_hints(cls).items():
        names.add(name)
        pending = [hint]
        while pending:
            inner = pending.pop()
            pending += typing.get_args(inner)
            if dataclasses.is_dataclass(inner) and isinstance(inner, type):
                names |= _model_fields(inner, seen)
    return names


def _columns(schema: pl.Schema) -> set[str]:
    """Column names and the field names of struct columns, lists of structs included."""
    names = set(schema)
    pending = list(schema.values())
    while pending:
        dtype = pending.pop()
        if isinstance(dtype, pl.List):
            pending.append(dtype.inner)
        elif isinstance(dtype, pl.Struct):
            names |= {f.name for f in dtype.fields}
            pending += [f.dtype for f in dtype.fields]
    return names


def _reads_by_name(source: str) -> list[tuple[int, str, str]]:
    """(line, how, name) of every read by a string literal: ``x["k"]``, ``x.get("k")``,
    ``getattr(x, "k")``, ``hasattr(x, "k")``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        key: ast.expr | None = None
        how = ""
        if isinstance(node, ast.Subscript):
            if ast.unparse(node.value).split(".")[-1] in FOREIGN_REGISTRIES:
                continue
            if isinstance(node.ctx, ast.Store):  # a key written (an export's attributes), not read
                continue
            key, how = node.slice, "key"
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in ("get", "pop", "setdefault"):
                key, how = node.args[0], "key"
            elif isinstance(func, ast.Name) and func.id in ("getattr", "hasattr"):
                key, how = (node.args[1] if len(node.args) > 1 else None), "attribute"
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            found.append((node.lineno, how, key.value))
    return found


def test_reports_read_named_fields_not_string_keys(traces: Path) -> None:
    # Reports get the typed result, plus two tables as rows (the trials and the tool-sequence
    # variants): a key read by a string literal must be a column of one of those tables, and
    # no result field is read through getattr/hasattr by name.
    trials = assay.analyze(traces).trials
    columns = _columns(trials.schema) | _columns(tool_variants(trials).schema)
    fields = _model_fields(AnalysisResult, set())
    assert {"verdict", "interval", "pass_at_k", "sequential", "data_quality"} <= fields
    bad = [
        f"{path.name}:{line}: {how} {name!r}"
        for path in sorted(REPORT.glob("*.py"))
        for line, how, name in _reads_by_name(path.read_text())
        if (how == "key" and name not in columns) or (how == "attribute" and name in fields)
    ]
    assert not bad, bad


def test_the_scan_sees_every_way_of_reading_by_name() -> None:
    source = (
        'a = row["passed"]\nb = test.pass_at_k.get("1")\nc = getattr(test, "verdict")\n'
        'd = hasattr(value, "item")\ne = matplotlib.colormaps["RdYlGn"]\nf = row[COLUMN]\n'
        'g["written"] = 1\n'
    )
    assert _reads_by_name(source) == [
        (1, "key", "passed"),
        (2, "key", "1"),
        (3, "attribute", "verdict"),
        (4, "attribute", "item"),
    ]
