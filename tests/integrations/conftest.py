"""Fixtures of the framework tests: ``record(name, runs)`` records one framework once."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from recording import record_framework, start_recording


@pytest.fixture(scope="session")
def record(provider: TracerProvider, tmp_path_factory: pytest.TempPathFactory):
    """``record(name, runs)``: ``runs(recorder, api)`` plays every run of one mode."""
    start_recording(provider)
    return lambda name, runs: record_framework(name, runs, tmp_path_factory.mktemp(name))
