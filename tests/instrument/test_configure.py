"""configure() touches the process-global tracer provider, so each case runs in a subprocess."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def _run(code: str, cwd: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_configure_writes_a_trace_set_by_default(tmp_path: Path) -> None:
    out = _run(
        """
        import assay.instrument as ai
        from assay.store import read_spans
        handle = ai.configure("traces", service_name="svc")
        with ai.trial("t"):
            with ai.tool("search"):
                pass
        handle.flush()
        frame = read_spans("traces")
        print(frame.height, frame["service_name"].unique().to_list(), handle.installed_provider)
        """,
        tmp_path,
    )
    assert out.split() == ["2", "['svc']", "True"]


def test_configure_keeps_a_provider_the_user_set_up(tmp_path: Path) -> None:
    out = _run(
        """
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        import assay.instrument as ai
        from assay.store import read_spans

        mine = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(mine))
        trace.set_tracer_provider(provider)
        handle = ai.configure("traces")
        with ai.trial("t"):
            pass
        handle.flush()
        print(trace.get_tracer_provider() is provider, len(mine.get_finished_spans()),
              read_spans("traces").height, handle.installed_provider)
        """,
        tmp_path,
    )
    assert out.split() == ["True", "1", "1", "False"]


def test_spans_are_written_at_exit_without_an_explicit_flush(tmp_path: Path) -> None:
    _run(
        """
        import assay.instrument as ai
        ai.configure("traces")
        with ai.trial("t"):
            pass
        """,
        tmp_path,
    )
    assert len(list((tmp_path / "traces").rglob("*.parquet"))) == 1
