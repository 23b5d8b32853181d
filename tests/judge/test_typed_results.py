"""The result model is typed end to end, and the reports read its named fields."""

from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path

from assay.judge import AnalysisResult, SequentialOutcome, TestResult

REPORT = Path(__file__).resolve().parents[2] / "src" / "assay" / "report"


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


def test_reports_read_named_fields_not_string_keys() -> None:
    pattern = re.compile(r"\.get\(\s*[\"']")
    found = [
        f"{path.name}:{number}"
        for path in sorted(REPORT.glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, found
