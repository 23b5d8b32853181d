"""A TypeScript agent: the Vercel AI SDK (``ai`` 6) traced by the OpenTelemetry JS SDK, sent to
``assay collect`` through both official JS OTLP/HTTP exporters (JSON and protobuf).

The agent (``typescript/agent.mjs``, its packages pinned by ``typescript/package-lock.json`` and
installed by the Makefile's set-up with ``npm ci``) runs ``generateText`` (and ``streamText`` for
one test) with two tools over the SDK's own mock model: seeded random tool choices, a tool that
throws, runs that crash. It writes its ground truth per trial — tools in order, tool errors,
model calls and their tokens, outcome, the moments its root span must cover — and the number of
spans it ended. Mapped by ``ai.telemetry.functionId``, every trial must equal that truth field
by field, and every span ended must be on disk.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest
from recording import InProcessCollector, Truth, assert_trials_match, in_run_order

import assay
from assay import conventions as c
from assay.analysis import columns as tc
from assay.analysis import describe_spans
from assay.store import open_trace_set, read_spans

pytestmark = pytest.mark.slow  # two Node processes importing the SDK

FOLDER = Path(__file__).with_name("typescript")
#: run → (exporter, compression, seed of the agent's choices); gzip is streamed chunked too
RUNS = {
    "http": ("http", "none", 11),
    "proto": ("proto", "none", 12),
    "proto-gzip": ("proto", "gzip", 13),
}
TRIALS = 12


@dataclass(frozen=True)
class Recorded:
    out: Path
    truths: dict[str, list[dict[str, object]]]
    spans_ended: dict[str, int]


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the TypeScript agent cannot run (apt install nodejs)")
    # node present but no packages is a broken set-up, not a reason to skip
    assert (FOLDER / "node_modules" / "ai").is_dir(), (
        f"run the set-up (make test installs {FOLDER}/node_modules with npm ci)"
    )
    return node


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    node = _node()
    root = tmp_path_factory.mktemp("typescript")
    collector = InProcessCollector(root / "collected", ["--roll-age", "0.2"]).start()
    truths: dict[str, list[dict[str, object]]] = {}
    ended: dict[str, int] = {}
    try:
        for name, (exporter, compression, seed) in RUNS.items():
            truth = root / f"truth-{name}.json"
            command = [node, "agent.mjs", "--exporter", exporter, "--compression", compression]
            command += ["--url", collector.url, "--trials", str(TRIALS), "--seed", str(seed)]
            command += ["--truth", str(truth)]
            done = subprocess.run(
                command, cwd=FOLDER, capture_output=True, text=True, timeout=120, check=False
            )
            assert done.returncode == 0, done.stderr[-3000:]
            document = json.loads(truth.read_text())
            truths[name], ended[name] = document["trials"], document["spans"]
        assert collector.terminate() == 0, collector.output()
    finally:
        collector.kill()
    assert "refused POST" not in collector.output(), collector.output()
    return Recorded(root / "collected", truths, ended)


def _service(run: str) -> str:
    exporter, compression, _ = RUNS[run]
    return f"weather-agent-{exporter}-{compression}"


def test_both_js_exporters_deliver_every_span(recorded: Recorded) -> None:
    spans = read_spans(recorded.out)
    for run in RUNS:
        mine = spans.filter(pl.col("service_name") == _service(run))
        assert mine.height == recorded.spans_ended[run] > 3 * TRIALS
        assert mine["span_id"].n_unique() == mine.height
        names = set(mine["name"].unique())
        assert {"ai.generateText", "ai.generateText.doGenerate", "ai.toolCall"} <= names
        assert {"ai.streamText", "ai.streamText.doStream"} <= names


@pytest.mark.parametrize("run", list(RUNS))
def test_every_trial_equals_the_agents_own_truth(recorded: Recorded, run: str) -> None:
    truths = recorded.truths[run]
    # what the test covers must be in the truth: tools, a tool that threw, a crashed run
    assert any(t["tools"] for t in truths)
    assert sum(int(t["tool_errors"]) for t in truths) > 0  # type: ignore[call-overload]
    assert any(t["outcome"] == "error" for t in truths)
    traces = (
        read_spans(recorded.out)
        .filter(pl.col("service_name") == _service(run))["trace_id"]
        .unique()
    )
    analysis = assay.analyze(
        recorded.out, assay.AnalyzeOptions(test_attribute=c.AI_SDK_FUNCTION_ID)
    )
    trials = in_run_order(
        analysis.trials.filter(pl.col(tc.TRACE_ID).is_in(traces.implode())),
        [str(t["test_id"]) for t in truths],
    )
    fields = ("test_id", "tools", "llm_calls", "input_tokens", "output_tokens", "outcome")
    assert_trials_match(
        trials,
        [
            Truth(**{k: t[k] for k in (*fields, "wall_s", "first", "last", "error") if k in t})
            for t in truths
        ],
    )
    assert trials[tc.TOOL_ERRORS].to_list() == [t["tool_errors"] for t in truths]
    assert trials[tc.MODELS].to_list() == [["mock-model-1"]] * TRIALS
    assert not [f for f in analysis.result.data_quality.findings if f.kind == "unclaimed_work"]


def test_describe_proposes_the_function_id(recorded: Recorded) -> None:
    description = describe_spans(open_trace_set(recorded.out).scan())
    assert dict(description.conventions)["Vercel AI SDK (ai.*)"] > 0
    best = description.candidates[0]
    assert best.attribute == c.AI_SDK_FUNCTION_ID
    assert best.values == 3 and best.on_roots == len(RUNS) * TRIALS
    proposed = [k.attribute for k in description.candidates]
    assert "ai.model.id" not in proposed[:3]  # one value: all runs would be one test
