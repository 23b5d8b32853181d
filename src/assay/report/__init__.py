"""Rendering analysis results: console, JSON, JUnit, Markdown/GitHub, HTML, OTLP.

Computes nothing new.
"""

from assay.report._console import (
    VERDICT_STYLE,
    data_text,
    diagnostics,
    pass_rate_bar,
    render_console,
    sparkline,
    verdict_table,
)
from assay.report._html import render_html
from assay.report._json import (
    SCHEMA,
    analysis_to_dict,
    render_json,
    render_json_bytes,
    test_to_dict,
)
from assay.report._junit import render_junit, test_properties
from assay.report._links import checked_template
from assay.report._markdown import render_annotations, render_markdown
from assay.report._otlp import export_otlp, otlp_url, record_verdicts
from assay.report._safe import visible
from assay.report._text import counted, interval_label

__all__ = [
    "checked_template",
    "SCHEMA",
    "VERDICT_STYLE",
    "analysis_to_dict",
    "counted",
    "data_text",
    "diagnostics",
    "export_otlp",
    "interval_label",
    "otlp_url",
    "pass_rate_bar",
    "record_verdicts",
    "render_annotations",
    "render_console",
    "render_html",
    "render_json",
    "render_json_bytes",
    "render_junit",
    "render_markdown",
    "sparkline",
    "test_properties",
    "test_to_dict",
    "verdict_table",
    "visible",
]
