"""Make the Phoenix fixture: the agent's runs stored by a real Phoenix and exported by it.

    python -m venv /tmp/phoenix-venv   # Phoenix's pins differ from assay's: its own venv
    /tmp/phoenix-venv/bin/pip install arize-phoenix==20.26.1 opentelemetry-sdk \\
        opentelemetry-exporter-otlp-proto-http
    /tmp/phoenix-venv/bin/python tests/ingest/formats/make_phoenix_fixture.py

Plays the same runs as ``make_fixtures.py`` (same seed and clock, same trace ids) with the
OpenTelemetry SDK, sends them over OTLP/HTTP to a Phoenix server started here on 127.0.0.1
(SQLite in a scratch folder), logs the judge's verdicts as span annotations of each run's root
span, reads spans and annotations back with ``phoenix.client.Client`` and saves them as a
``TraceDataset`` with its ``SpanEvaluations`` — ``TraceDataset.save()`` writes
``phoenix/trace_dataset-<id>.parquet`` and ``phoenix/evaluations-<id>.parquet`` (Phoenix 20 has
no ``px.Client().get_trace_dataset()`` any more; this is its way to a dataset on disk).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from make_fixtures import plan, record  # noqa: E402


def main() -> None:
    scratch = Path(tempfile.mkdtemp())
    os.environ["PHOENIX_WORKING_DIR"] = str(scratch)
    os.environ["PHOENIX_PORT"] = "6016"
    os.environ["PHOENIX_GRPC_PORT"] = "4327"
    os.environ["PHOENIX_TELEMETRY_ENABLED"] = "false"
    import pandas as pd
    import phoenix as px
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from phoenix.client import Client
    from phoenix.trace import SpanEvaluations, TraceDataset

    session = px.launch_app(host="127.0.0.1", port=6016, run_in_thread=True)
    try:
        spans, truth = record(plan(), judge=False)
        exporter = OTLPSpanExporter(endpoint="http://127.0.0.1:6016/v1/traces")
        assert exporter.export(spans).name == "SUCCESS"
        client = Client(base_url="http://127.0.0.1:6016")
        for _ in range(100):
            stored = client.spans.get_spans_dataframe(project_identifier="default", limit=10_000)
            if len(stored) == len(spans):
                break
            time.sleep(0.2)
        roots = {
            format(s.context.trace_id, "032x"): format(s.context.span_id, "016x")
            for s in spans
            if s.parent is None
        }
        verdicts = pd.DataFrame(
            [
                {"span_id": roots[t], "label": v["outcome"], "explanation": "judged"}
                for t, v in truth.items()
                if v["outcome"] != "error"
            ]
        )
        client.spans.log_span_annotations_dataframe(
            dataframe=verdicts, annotation_name="correctness", annotator_kind="LLM", sync=True
        )
        annotations = client.spans.get_span_annotations_dataframe(
            spans_dataframe=stored, project_identifier="default"
        )
        print(annotations.columns.tolist(), annotations.index.name, len(annotations))
        evaluations = annotations[annotations["annotation_name"] == "correctness"].rename(
            columns={
                "result.label": "label",
                "result.score": "score",
                "result.explanation": "explanation",
            }
        )[["label", "score", "explanation"]]
        evaluations.index.name = "context.span_id"
        dataset = TraceDataset(
            stored, evaluations=[SpanEvaluations(eval_name="correctness", dataframe=evaluations)]
        )
        out = HERE / "phoenix"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        dataset.save(out)
    finally:
        session.end()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
