"""Make the Langfuse fixtures: the agent's runs as Langfuse's blob-storage export writes them.

    PYTHONPATH=src python tests/ingest/formats/make_langfuse_fixture.py

Langfuse's export is written by the Langfuse server (Postgres, ClickHouse, Redis, an object
store), which does not run here; the rows follow its "Blob Storage Export Field Reference"
(langfuse-docs, ``blob-storage-export-fields.mdx``): every field of each file, timestamps as
``YYYY-MM-DD HH:MM:SS.ffffff`` in UTC, empty strings and nulls where the reference says so. The
runs are ``make_fixtures.py``'s, with the ids Langfuse keeps from OpenTelemetry (its SDK is
OpenTelemetry-based): an ``AGENT`` observation per run named by its test, ``GENERATION``s with
``usage_details``, ``TOOL``s (a failed tool at level ``ERROR``), and the judge's verdict as a
trace-level ``CATEGORICAL`` score.

- ``langfuse/`` — the enriched export: ``observations_v2/<window>.jsonl.gz`` and
  ``scores/<window>.jsonl``;
- ``langfuse-legacy/`` — the legacy export as CSV: ``traces/``, ``observations/``, ``scores/``.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from make_fixtures import plan, record  # noqa: E402

WINDOW = "2025-11-24T16-00-00"


def _time(ns: int) -> str:
    moment = datetime.fromtimestamp(ns // 1_000_000_000, UTC).replace(
        microsecond=(ns // 1000) % 1_000_000
    )
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def _rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Observations (enriched), legacy traces and scores of the agent's runs."""
    spans, truth = record(plan(), judge=False)
    roots = {format(s.context.trace_id, "032x"): s for s in spans if s.parent is None}
    observations, traces, scores = [], [], []
    for span in spans:
        attributes = dict(span.attributes or {})
        trace_id = format(span.context.trace_id, "032x")
        test = truth[trace_id]["test_id"]
        operation = attributes["gen_ai.operation.name"]
        kind = {"invoke_agent": "AGENT", "chat": "GENERATION", "execute_tool": "TOOL"}[operation]
        name = {
            "AGENT": test,
            "GENERATION": span.name,
            "TOOL": attributes.get("gen_ai.tool.name", span.name),
        }[kind]
        failed = span.status.status_code.name == "ERROR"
        generation = kind == "GENERATION"
        usage = (
            {
                "input": attributes["gen_ai.usage.input_tokens"],
                "output": attributes["gen_ai.usage.output_tokens"],
                "total": attributes["gen_ai.usage.input_tokens"]
                + attributes["gen_ai.usage.output_tokens"],
            }
            if generation
            else {}
        )
        assert span.start_time is not None and span.end_time is not None
        observations.append(
            {
                "id": format(span.context.span_id, "016x"),
                "trace_id": trace_id,
                "project_id": "cm-shop",
                "environment": "ci",
                "type": kind,
                "parent_observation_id": format(span.parent.span_id, "016x") if span.parent else "",
                "start_time": _time(span.start_time),
                "end_time": _time(span.end_time),
                "name": name,
                "metadata": {"resourceAttributes": {"service.name": "shop-agent"}},
                "level": "ERROR" if failed else "DEFAULT",
                "status_message": span.status.description or "" if failed else "",
                "version": "",
                "input": json.dumps({"q": "help"}) if kind == "AGENT" else "",
                "output": "",
                "provided_model_name": "gpt-test" if generation else "",
                "model_parameters": "{}" if generation else "",
                "usage_details": usage,
                "cost_details": {},
                "completion_start_time": None,
                "prompt_name": "",
                "prompt_version": None,
                "total_cost": 0,
                "latency": (span.end_time - span.start_time) / 1e9,
                "time_to_first_token": None,
                "model_id": "",  # gpt-test matches no Langfuse model definition: no price
                "created_at": _time(span.end_time),
                "updated_at": _time(span.end_time),
                "prompt_id": "",
                "tool_calls": [],
                "tool_call_names": [],
                "tool_definitions": {},
                "usage_pricing_tier_name": None,
                "input_price": None,
                "output_price": None,
                "total_price": None,
                "user_id": "",
                "session_id": "",
                "trace_name": test,
                "tags": ["nightly"],
                "release": "1.2.0",
                "bookmarked": False,
                "public": False,
            }
        )
    for trace_id, root in roots.items():
        assert root.start_time is not None and root.end_time is not None
        traces.append(
            {
                "id": trace_id,
                "timestamp": _time(root.start_time),
                "name": truth[trace_id]["test_id"],
                "environment": "ci",
                "project_id": "cm-shop",
                "metadata": {},
                "user_id": None,
                "session_id": None,
                "release": "1.2.0",
                "version": None,
                "public": False,
                "bookmarked": False,
                "tags": ["nightly"],
                "input": json.dumps({"q": "help"}),
                "output": None,
                "created_at": _time(root.end_time),
                "updated_at": _time(root.end_time),
            }
        )
        outcome = truth[trace_id]["outcome"]
        if outcome == "error":
            continue
        scores.append(
            {
                "id": f"score-{trace_id[:8]}",
                "timestamp": _time(root.end_time + 5_000_000_000),
                "project_id": "cm-shop",
                "environment": "ci",
                "trace_id": trace_id,
                "observation_id": None,
                "session_id": None,
                "dataset_run_id": None,
                "name": "correctness",
                "value": 1 if outcome == "pass" else 0,  # the category's index
                "source": "EVAL",
                "comment": "judged by the rubric",
                "data_type": "CATEGORICAL",
                "string_value": outcome,
                "created_at": _time(root.end_time + 5_000_000_000),
                "updated_at": _time(root.end_time + 5_000_000_000),
            }
        )
    return observations, traces, scores


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _csv(rows: list[dict[str, Any]]) -> str:
    """As the reference's CSV notes say: objects and arrays as JSON, null as empty."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {
                k: (
                    json.dumps(v)
                    if isinstance(v, dict | list)
                    else ""
                    if v is None
                    else str(v).lower()
                    if isinstance(v, bool)
                    else v
                )
                for k, v in row.items()
            }
        )
    return out.getvalue()


def main() -> None:
    observations, traces, scores = _rows()
    enriched = HERE / "langfuse"
    shutil.rmtree(enriched, ignore_errors=True)
    (enriched / "observations_v2").mkdir(parents=True)
    (enriched / "scores").mkdir()
    (enriched / "observations_v2" / f"{WINDOW}.jsonl.gz").write_bytes(
        gzip.compress(_jsonl(observations).encode(), mtime=0)
    )
    (enriched / "scores" / f"{WINDOW}.jsonl").write_text(_jsonl(scores))
    legacy = HERE / "langfuse-legacy"
    shutil.rmtree(legacy, ignore_errors=True)
    trace_fields = (
        "user_id",
        "session_id",
        "trace_name",
        "tags",
        "release",
        "bookmarked",
        "public",
    )
    for folder, rows in (
        ("traces", traces),
        (
            "observations",
            [{k: v for k, v in o.items() if k not in trace_fields} for o in observations],
        ),
        ("scores", scores),
    ):
        (legacy / folder).mkdir(parents=True)
        (legacy / folder / f"{WINDOW}.csv").write_text(_csv(rows))


if __name__ == "__main__":
    main()
