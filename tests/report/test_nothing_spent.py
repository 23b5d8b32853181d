"""Costs nobody recorded are not shown as a measured $0 or a measured "no change"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import assay.instrument as ai
from assay.cli import run
from assay.errors import ConfigError


def _record(switch_sink: Any, version: str, *, cost: float | None) -> None:
    sink = switch_sink(version)  # the version's trials go to tmp_path / version
    for case in ("a", "b", "c"):
        for index in range(8):
            with ai.trial(case, suite="s", agent_version=version, index=index) as trial:
                with ai.tool("lookup"):
                    pass
                if cost is not None:
                    with ai.llm("in-house-model") as call:
                        call.usage(100, 10)
                        call.cost(cost)
                trial.check("ok", index % 4 != 0)
    sink.flush()


def test_an_agent_without_llm_calls_shows_no_cost(
    tmp_path: Path, switch_sink: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    _record(switch_sink, "v1", cost=None)
    _record(switch_sink, "v2", cost=None)
    html = tmp_path / "report.html"
    run(["compare", str(tmp_path / "v1"), str(tmp_path / "v2"), "--format", "json"])
    comparison = json.loads(capsys.readouterr().out)["suites"][0]["comparison"]
    assert comparison["cost_usd"] is None
    assert comparison["cost_usd_reason"].startswith("nothing spent in either version")
    arguments = ["compare", str(tmp_path / "v1"), str(tmp_path / "v2"), "--format", "markdown"]
    run([*arguments, "--format", f"html:{html}"])
    run(["compare", str(tmp_path / "v1"), str(tmp_path / "v2")])
    shown = capsys.readouterr().out + html.read_text()
    assert "$0.0000" not in shown and "cost/trial" not in shown


def test_a_recorded_cost_is_read_and_compared(
    tmp_path: Path, switch_sink: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # a model no price table knows, with the cost its SDK reported: no "unpriced" warning
    _record(switch_sink, "v1", cost=0.002)
    _record(switch_sink, "v2", cost=0.003)
    run(["compare", str(tmp_path / "v1"), str(tmp_path / "v2"), "--format", "json"])
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert "no price" not in captured.err
    comparison = document["suites"][0]["comparison"]
    assert comparison["cost_usd_reason"] is None
    assert comparison["cost_usd"]["difference"] == pytest.approx(0.001)
    cost = document["tests"][0]["cost"]
    assert cost["mean_usd"] == pytest.approx(0.003)
    # no price table priced it, and the report does not say one did
    assert cost["prices"] == "as recorded by the instrumentation"


def test_a_cost_must_be_a_finite_amount() -> None:
    with ai.trial("t"), ai.llm("m") as call:
        for bad in (float("nan"), -1.0, True):
            with pytest.raises(ConfigError, match="cost"):
                call.cost(bad)
