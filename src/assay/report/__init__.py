"""Rendering analysis results: console, JSON, JUnit, Markdown/GitHub, HTML. Computes nothing new."""

from assay.report._console import pass_rate_bar, render_console, sparkline, verdict_table
from assay.report._html import render_html
from assay.report._json import SCHEMA, analysis_to_dict, render_json, test_to_dict
from assay.report._junit import render_junit, test_properties
from assay.report._markdown import render_annotations, render_markdown
from assay.report._run import RichProgress, render_plan, render_run_summary

__all__ = [
    "SCHEMA",
    "RichProgress",
    "analysis_to_dict",
    "pass_rate_bar",
    "render_annotations",
    "render_console",
    "render_html",
    "render_json",
    "render_junit",
    "render_markdown",
    "render_plan",
    "render_run_summary",
    "sparkline",
    "test_properties",
    "test_to_dict",
    "verdict_table",
]
