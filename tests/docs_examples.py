"""The sample outputs in docs/, checked against what assay prints today.

A sample is a fenced block of a docs page. Console samples are the first lines of the real
output (each line without its trailing spaces; a last ``  …`` stands for the rest). JSON samples
are the real document abridged: ``"...": "..."`` stands for the fields left out of an object, a
last ``"..."`` in a list for its further items, and numbers are rounded to four significant
digits.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[1] / "docs"
MORE = "..."


def docs_block(page: str, after: str, fence: str = "```") -> list[str]:
    """The lines of the first fenced block of ``docs/page`` after the text ``after``."""
    text = (DOCS / page).read_text()
    start = text.index(f"{fence}", text.index(after)) + len(fence)
    start = text.index("\n", start) + 1
    return text[start : text.index("```\n", start)].splitlines()


def check_console_sample(sample: list[str], printed: str) -> None:
    """``sample`` is the first lines of ``printed``, less a last ``…`` line (the rest)."""
    lines = [line.rstrip() for line in printed.splitlines()]
    shown = sample[:-1] if sample and sample[-1].strip() == "…" else sample
    padded = lines + [""] * len(shown)
    for number, said in enumerate(shown, 1):
        real = padded[number - 1]
        assert said == real, f"line {number}: the docs say {said!r}, assay prints {real!r}"


def check_json_sample(sample: Any, real: Any, where: str = "$") -> None:
    """Every field and value of ``sample`` is in ``real``; an object shown whole is all of it."""
    if isinstance(sample, dict):
        assert isinstance(real, dict), where
        shown = {k: v for k, v in sample.items() if k != MORE}
        if MORE not in sample:
            assert set(shown) == set(real), f"{where}: fields {sorted(set(real) ^ set(shown))}"
        for key, value in shown.items():
            assert key in real, f"{where}.{key}: not a field assay writes"
            check_json_sample(value, real[key], f"{where}.{key}")
    elif isinstance(sample, list):
        assert isinstance(real, list), where
        more = bool(sample) and sample[-1] == MORE
        items = sample[:-1] if more else sample
        assert len(real) >= len(items) if more else len(real) == len(items), where
        for i, value in enumerate(items):
            check_json_sample(value, real[i], f"{where}[{i}]")
    elif isinstance(sample, float) and not isinstance(real, bool):
        assert isinstance(real, int | float), where
        assert math.isclose(sample, real, rel_tol=5e-4, abs_tol=1e-12), f"{where}: {real}"
    else:
        assert sample == real, f"{where}: the docs say {sample!r}, assay writes {real!r}"


def json_sample(page: str, after: str) -> Any:
    """The JSON sample of ``docs/page`` after ``after``, parsed."""
    return json.loads("\n".join(docs_block(page, after, "```json")))
