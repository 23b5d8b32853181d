"""Fixtures that run ``assay collect`` on 127.0.0.1, in the test process or as a subprocess."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from collector_process import AnyCollector, CollectorFactory, CollectorProcess, InProcessCollector


@pytest.fixture
def collector_factory() -> Iterator[CollectorFactory]:
    """``collector_factory(out, args, process=False)``: a collector, stopped after the test.

    In the test process unless ``process`` (what only a process shows: signals, kill -9, the
    decode worker processes, staying alive).
    """
    made: list[AnyCollector] = []

    def make(out: Path, args: list[str], *, process: bool = False) -> AnyCollector:
        collector = (CollectorProcess if process else InProcessCollector)(out, args)
        made.append(collector)
        return collector

    yield make
    for collector in made:
        collector.kill()


@pytest.fixture
def collector(tmp_path: Path, collector_factory: CollectorFactory) -> AnyCollector:
    return collector_factory(tmp_path / "traces", ["--roll-age", "0.5"]).start()
