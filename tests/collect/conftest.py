"""Fixtures that run ``assay collect`` as a real subprocess on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from collector_process import CollectorProcess


@pytest.fixture
def collector_factory(tmp_path: Path) -> Iterator[type[CollectorProcess]]:
    started: list[CollectorProcess] = []

    class Factory(CollectorProcess):
        def start(self) -> CollectorProcess:
            started.append(self)
            return super().start()

    yield Factory
    for process in started:
        process.kill()


@pytest.fixture
def collector(tmp_path: Path, collector_factory: type[CollectorProcess]) -> CollectorProcess:
    return collector_factory(tmp_path / "traces", ["--roll-age", "0.5"]).start()
