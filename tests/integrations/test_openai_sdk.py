"""The OpenAI SDK under traceloop-sdk (mapped by ``traceloop.workflow.name`` or
``gen_ai.agent.name``) and under opentelemetry-instrumentation-openai-v2 (LLM spans only: the
agent and tool spans are the user's own GenAI spans), against a fake OpenAI server.

Both instrumentations patch ``openai`` for the whole process, so each recording runs in a
subprocess (``openai_sdk_runs.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from installed import installed
from recording import Recording, Truth, assert_trials_match

from assay import conventions as c

pytestmark = pytest.mark.slow  # each recording is a process importing the framework

RUNS = Path(__file__).with_name("openai_sdk_runs.py")
NEEDS = {"traceloop": "traceloop.sdk", "openai_v2": "opentelemetry.instrumentation.openai_v2"}


def _record(kind: str, root: Path) -> Recording:
    # find_spec, not an import: a broken install must fail the test, not skip it.
    if not installed(NEEDS[kind]):
        pytest.skip(f"{NEEDS[kind]} is not installed (the frameworks extra)")
    done = subprocess.run(
        [sys.executable, str(RUNS), kind, str(root)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=RUNS.parent,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    document = json.loads(done.stdout.strip().splitlines()[-1])
    paths = [Path(document[k]) for k in ("parquet_api", "parquet_raw", "collected")]
    truths = [[Truth(**t) for t in document[k]] for k in ("api", "raw")]
    return Recording(*paths, *truths)


@pytest.fixture(scope="module")
def traceloop(tmp_path_factory) -> Recording:
    return _record("traceloop", tmp_path_factory.mktemp("traceloop"))


@pytest.fixture(scope="module")
def openai_v2(tmp_path_factory) -> Recording:
    return _record("openai_v2", tmp_path_factory.mktemp("openai_v2"))


@pytest.mark.parametrize("source", ["parquet", "collector"])
@pytest.mark.parametrize("attribute", [c.TRACELOOP_WORKFLOW_NAME, c.GENAI_AGENT_NAME])
def test_traceloop_bare_runs_equal_ground_truth(traceloop, attribute, source) -> None:
    trials = traceloop.trials(source, api=False, test_attribute=attribute)
    raw = traceloop.raw
    if attribute == c.GENAI_AGENT_NAME:  # one agent, "assistant", runs both test cases
        raw = [Truth(**{**vars(t), "test_id": "assistant"}) for t in raw]
    assert_trials_match(trials, raw)


@pytest.mark.parametrize("source", ["parquet", "collector"])
def test_traceloop_runs_framed_by_the_assay_api_equal_ground_truth(traceloop, source) -> None:
    assert_trials_match(traceloop.trials(source, api=True), traceloop.api)


@pytest.mark.parametrize("source", ["parquet", "collector"])
def test_openai_v2_runs_equal_ground_truth(openai_v2, source) -> None:
    assert_trials_match(
        openai_v2.trials(source, api=False, test_attribute=c.GENAI_AGENT_NAME), openai_v2.raw
    )
    assert_trials_match(openai_v2.trials(source, api=True), openai_v2.api)
