"""Rendering analysis results: console, JSON (and more formats). Computes nothing new."""

from assay.report._console import render_console
from assay.report._json import SCHEMA, analysis_to_dict, render_json, test_to_dict

__all__ = ["SCHEMA", "analysis_to_dict", "render_console", "render_json", "test_to_dict"]
