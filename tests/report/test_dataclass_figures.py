"""Nested figures given as dataclasses (as the statistics engine returns them) render too.

``test_to_dict`` turns dataclasses into dicts, so every format reads the same JSON-ready form;
this pins the shapes the engine is expected to produce: pass@k keyed by int with
``{k, value, reason}`` values, tool consistency with ``mean_similarity`` and ``most_common``
pairs, explanations as a test-level extra.
"""

from __future__ import annotations

import dataclasses
import io

from rich.console import Console
from sample_result import build_result

from assay.report import (
    render_annotations,
    render_console,
    render_html,
    render_junit,
    render_markdown,
)


@dataclasses.dataclass(frozen=True)
class PassAtK:
    k: int
    value: float | None
    reason: str | None = None


@dataclasses.dataclass(frozen=True)
class ToolConsistency:
    n: int
    agreement: float | None
    mean_similarity: float | None
    distinct: int
    most_common: tuple[tuple[tuple[str, ...], int], ...]


@dataclasses.dataclass(frozen=True)
class Factor:
    name: str
    value: float
    detail: str


@dataclasses.dataclass(frozen=True)
class Flakiness:
    score: float
    category: str
    factors: tuple[Factor, ...]


@dataclasses.dataclass(frozen=True)
class FailureFactor:
    feature: str
    p_value: float
    p_adjusted: float
    detail: str


def test_engine_shapes_render_in_every_format() -> None:
    result = build_result()
    first = dataclasses.replace(
        result.tests[0],
        pass_at_k={1: PassAtK(1, 0.4), 50: PassAtK(50, None, "k > n")},
        pass_hat_k=None,
        tool_consistency=ToolConsistency(
            30, 0.41, 0.77, 4, ((("cart", "pay"), 14), (("cart", "search", "pay"), 9))
        ),
        flakiness=Flakiness(
            0.5, "high_variance", (Factor("tool_path_inconsistency", 0.6, "paths vary"),)
        ),
        extra={"explanations": [FailureFactor("calls:search", 0.001, 0.002, "more searches")]},
    )
    result = dataclasses.replace(result, tests=(first, *result.tests[1:]))
    buffer = io.StringIO()
    render_console(result, Console(file=buffer, width=240, no_color=True))
    outputs = {
        "console": buffer.getvalue(),
        "markdown": render_markdown(result),
        "junit": render_junit(result),
        "html": render_html(result),
    }
    for name, text in outputs.items():
        assert "pass@1 40%" in text or "@1 40%" in text, name
        assert "0.5 (high variance)" in text, name
        assert "more searches (p = 0.002)" in text, name
    for name in ("console", "markdown", "junit", "html"):
        text = outputs[name]
        assert "most common: cart → pay (14×)" in text.replace("&gt;", ">"), name
    assert "pass@50 —" in outputs["console"]
    assert "more searches (p = 0.002)" in render_annotations(result)
