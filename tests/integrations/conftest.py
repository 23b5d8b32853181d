"""Fixtures of the framework tests: ``record(name, runs)`` records one framework once."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from recording import record_framework, start_recording


@pytest.fixture(scope="session")
def record(provider: TracerProvider, tmp_path_factory: pytest.TempPathFactory):
    """``record(name, runs, process=False)``: ``runs(recorder, api)`` plays every run of one
    mode; with ``process``, into a real ``assay collect`` process."""
    start_recording(provider)
    return lambda name, runs, process=False: record_framework(
        name, runs, tmp_path_factory.mktemp(name), process=process
    )
