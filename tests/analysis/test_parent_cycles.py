"""A trace whose parent links go round in a cycle is malformed: named, never made into trials.

The input is the sweep's: Jaeger JSON, imported by ``assay import``, analysed under
``--test-attribute`` (where a trial is the top-most span carrying the attribute, and a cycle has
no top). Five traces of two spans that are each other's parent once counted as 10 trials; five
traces of a 50-span cycle as 250, PASS.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.analysis import read_trials
from assay.cli import run
from assay.ingest import import_files
from assay.store import open_trace_set

AGENT = "gen_ai.agent.name"


def _trace(number: int, spans: int, *, cycle: bool) -> dict[str, Any]:
    """A trace of ``spans`` spans each carrying the agent's name, as a chain or as a cycle."""
    trace_id = f"{number:032x}"
    out = []
    for i in range(spans):
        parent = (i + 1) % spans if cycle else i - 1
        references = (
            [{"refType": "CHILD_OF", "traceID": trace_id, "spanID": f"{number:08x}{parent:08x}"}]
            if parent >= 0
            else []
        )
        out.append(
            {
                "traceID": trace_id,
                "spanID": f"{number:08x}{i:08x}",
                "operationName": "agent",
                "references": references,
                "startTime": 1_750_000_000_000_000 + number * 1000 + i,
                "duration": 10,
                "tags": [{"key": AGENT, "type": "string", "value": "X"}],
                "processID": "p1",
            }
        )
    return {"traceID": trace_id, "spans": out, "processes": {"p1": {"serviceName": "agent"}}}


def _imported(tmp_path: Path, traces: list[dict[str, Any]]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    source = tmp_path / "jaeger.json"
    source.write_text(json.dumps({"data": traces}))
    out = tmp_path / "spans"
    import_files([source], out)
    return out


@pytest.mark.parametrize("length", [2, 3, 50])
def test_a_parent_cycle_is_named_and_its_spans_are_no_trials(tmp_path: Path, length: int) -> None:
    cycles = [_trace(n, length, cycle=True) for n in range(1, 6)]
    chains = [_trace(n, 4, cycle=False) for n in range(10, 15)]
    spans = _imported(tmp_path, cycles + chains)
    result = read_trials(open_trace_set(spans).scan(), test_attribute=AGENT)
    assert result.table.height == 5  # the five well-formed traces, one trial each
    assert set(result.table["trace_id"]) == {t["traceID"] for t in chains}
    (finding,) = [f for f in result.data_quality.findings if f.kind == "parent_cycles"]
    assert finding.count == 5
    assert set(finding.examples) == {t["traceID"] for t in cycles}
    assert finding.severity == "warning"
    report = json.loads(assay.analyze(spans, assay.AnalyzeOptions(test_attribute=AGENT)).to_json())
    assert [t["n"] for t in report["tests"]] == [5]
    kinds = {f["kind"] for f in report["data_quality"]["findings"]}
    assert "parent_cycles" in kinds


def test_a_cycle_beside_a_recorded_root_keeps_the_roots_one_trial(tmp_path: Path) -> None:
    """A root carrying the attribute is its trace's one trial whatever lies below it."""
    trace = _trace(1, 3, cycle=False)
    trace_id = trace["traceID"]
    for i, parent in ((7, 8), (8, 7)):
        span = dict(trace["spans"][1], spanID=f"{1:08x}{i:08x}")
        span["references"] = [
            {"refType": "CHILD_OF", "traceID": trace_id, "spanID": f"{1:08x}{parent:08x}"}
        ]
        trace["spans"].append(span)
    other = _trace(2, 3, cycle=False)
    spans = _imported(tmp_path, [trace, other])
    result = read_trials(open_trace_set(spans).scan(), test_attribute=AGENT)
    assert sorted(result.table["trace_id"]) == [trace_id, other["traceID"]]
    assert result.table.filter(trace_id=trace_id)["span_count"].to_list() == [5]


def test_a_set_of_parent_cycles_alone_is_refused_by_every_command_naming_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No trial left is no result: exit 2 and one line, as for a set without trial spans.

    Once ``analyze`` printed "0 tests" and exited 0 (its JSON decision a PASS of nothing).
    """
    cycles = _imported(tmp_path / "cycles", [_trace(n, 3, cycle=True) for n in range(1, 6)])
    good = _imported(tmp_path / "good", [_trace(n, 3, cycle=False) for n in range(10, 13)])
    mapped = ["--test-attribute", AGENT]
    commands = [
        ["analyze", str(cycles)],
        ["analyze", str(cycles), "--format", "json"],
        ["compare", str(good), str(cycles)],
        ["compare", str(cycles), str(good)],
        ["report", str(cycles), "--output", str(tmp_path / "r.html")],
        ["watch", str(cycles), "--once"],
    ]
    for command in commands:
        assert run([*command, *mapped]) == 2, command
        captured = capsys.readouterr()
        assert captured.out == "", command
        err = captured.err.strip()
        assert err.count("\n") == 0, (command, err)
        assert "no trial spans" in err and "5 trace(s) dropped as parent cycles" in err, err
        assert f"{1:032x}" in err
        if command[0] == "compare":  # which side has no trial
            side = "current" if command[2] == str(cycles) else "baseline"
            assert f"the {side} set ({cycles}): no trial spans" in err
    assert not (tmp_path / "r.html").exists()
    # a set with one well-formed trace beside its cycles is judged, the cycles named
    both = _imported(tmp_path / "both", [_trace(1, 3, cycle=True), _trace(10, 3, cycle=False)])
    assert run(["analyze", str(both), *mapped, "--format", "json"]) == 3  # INCONCLUSIVE: one trial
    report = json.loads(capsys.readouterr().out)
    assert [t["n"] for t in report["tests"]] == [1]
