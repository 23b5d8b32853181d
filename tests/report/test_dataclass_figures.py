"""Figures computed by a real analysis render in every format, each from its named field.

The trials are recorded with the real OpenTelemetry SDK into a Parquet trace set and judged by
``assay.analyze``; every figure the engine produced (pass@k, score summary, tool consistency,
flakiness, what failing trials do differently, the verdict's reason) must then appear in the
console, Markdown, JUnit, HTML and annotation reports, spelled as ``report._text`` spells it.
"""

from __future__ import annotations

import io
import re

from rich.console import Console

import assay
import assay.instrument as ai
from assay.report import _text as tx
from assay.report import (
    render_annotations,
    render_console,
    render_html,
    render_junit,
    render_markdown,
)


def test_engine_figures_render_in_every_format(parquet_sink) -> None:
    for i in range(30):
        ok = i % 3 != 0
        with ai.trial("checkout", index=i) as t:
            with ai.tool("cart"):
                pass
            for _ in range(1 if ok else 3):
                with ai.tool("search"):
                    pass
            t.score("quality", 80.0 + i % 5 if ok else 40.0 + i % 7)
            t.check("order placed", ok)
    result = assay.analyze(parquet_sink.flush()).result
    (test,) = result.tests
    assert test.flakiness is not None and test.tool_consistency is not None
    assert test.failure_explanations and test.score is not None and test.pass_at_k
    expected = [
        tx.passk_text(test.pass_at_k, "pass@"),
        tx.flakiness_headline(test.flakiness),
        tx.failure_explanations(test)[0],
        tx.score_text(test.score),
        test.verdict_reason,
    ]
    buffer = io.StringIO()
    render_console(result, Console(file=buffer, width=240, no_color=True))
    outputs = {
        "console": buffer.getvalue(),
        "markdown": render_markdown(result),
        "junit": render_junit(result),
        "html": render_html(result),
    }
    for name, text in outputs.items():
        plain = text.replace("&gt;", ">").replace("&lt;", "<").replace("&quot;", '"')
        plain = plain.replace("&#x27;", "'").replace("&amp;", "&")
        plain = re.sub(r"\\([\\`*_\[\]|~])", r"\1", plain)  # Markdown's backslash escapes
        for figure in expected:
            assert figure and figure in plain, (name, figure)
    most_common = tx.tool_consistency_text(test.tool_consistency)
    assert most_common is not None and most_common in outputs["console"]
    assert tx.failure_explanations(test)[0] in render_annotations(result).replace("%25", "%")
