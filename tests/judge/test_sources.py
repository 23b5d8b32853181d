"""Mixed sets are said out loud: trials per run and per agent version; --run-id selects one."""

from __future__ import annotations

import json

import polars as pl

from assay import conventions as c
from assay.analysis import columns as tc
from assay.cli import run
from assay.judge._pipeline import by_test
from assay.judge._sources import mixed_findings, shares, shares_by_test


def _trials(tracer, run_id: str, n: int, *, passed: int, version: str | None = None) -> None:
    for i in range(n):
        attributes: dict[str, object] = {
            c.TEST_ID: "refund-policy",
            c.RUN_ID: run_id,
            c.TRIAL_INDEX: i,
            c.TRIAL_OUTCOME: "pass" if i < passed else "fail",
        }
        if version is not None:
            attributes[c.AGENT_VERSION] = version
        with tracer.start_as_current_span("trial", attributes=attributes):
            pass


def _json(capsys, *args: str) -> dict:
    run([*args, "--format", "json", "--inconclusive-ok"])
    return json.loads(capsys.readouterr().out)


def _kinds(document: dict) -> dict[str, dict]:
    return {f["kind"]: f for f in document["data_quality"]["findings"]}


def test_two_runs_in_one_folder_are_named_and_one_can_be_chosen(
    parquet_sink, tracer, capsys
) -> None:
    _trials(tracer, "run-a", 30, passed=30)
    _trials(tracer, "run-b", 20, passed=5)
    path = str(parquet_sink.flush())
    document = _json(capsys, "analyze", path)
    (test,) = document["tests"]
    assert test["runs"] == [{"id": "run-a", "trials": 30}, {"id": "run-b", "trials": 20}]
    mixed = _kinds(document)["mixed_runs"]
    assert mixed["severity"] == "warning" and mixed["tests"] == ["refund-policy"]
    assert "refund-policy: run-a 30, run-b 20" in mixed["message"]
    assert "--run-id" in mixed["message"]
    chosen = _json(capsys, "analyze", path, "--run-id", "run-b")
    assert (chosen["tests"][0]["passed"], chosen["tests"][0]["n"]) == (5, 20)
    assert "mixed_runs" not in _kinds(chosen)
    run(["analyze", path])
    shown = capsys.readouterr()  # the report on stdout, its warnings on stderr
    console = " ".join((shown.out + shown.err).split())
    assert "trials from 2 runs: run-a 30, run-b 20" in console
    assert "1 test pools trials of several runs" in console


def test_an_unknown_run_is_one_line_and_exit_2(parquet_sink, tracer, capsys) -> None:
    _trials(tracer, "run-a", 3, passed=3)
    path = str(parquet_sink.flush())
    assert run(["analyze", path, "--run-id", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "--run-id nope" in err and "run-a" in err


def test_mixed_agent_versions_are_named(parquet_sink, tracer, capsys) -> None:
    _trials(tracer, "run-a", 10, passed=10, version="v1")
    _trials(tracer, "run-a", 4, passed=4, version="v2")
    document = _json(capsys, "analyze", str(parquet_sink.flush()))
    assert document["tests"][0]["agent_versions"] == [
        {"id": "v1", "trials": 10},
        {"id": "v2", "trials": 4},
    ]
    assert "refund-policy: v1 10, v2 4" in _kinds(document)["mixed_versions"]["message"]


def _sets(switch_sink, tracer, **sides: dict[str, tuple[int, int]]) -> list[str]:
    """One folder per side (``base``, ``current``), each holding runs of (trials, passed)."""
    paths = []
    for side, runs in sides.items():
        sink = switch_sink(side)
        for run_id, (n, passed) in runs.items():
            _trials(tracer, run_id, n, passed=passed)
        paths.append(str(sink.flush()))
    return paths


def test_compare_selects_a_run_on_each_side(switch_sink, tracer, capsys) -> None:
    base_path, current_path = _sets(
        switch_sink,
        tracer,
        base={"old": (30, 30), "older": (30, 0)},
        current={"new": (30, 29), "newer": (30, 0)},
    )
    document = _json(
        capsys,
        "compare",
        base_path,
        current_path,
        "--run-id",
        "new",
        "--baseline-run-id",
        "old",
    )
    (test,) = document["tests"]
    regression = test["regression"]
    assert (regression["baseline_passed"], regression["baseline_n"]) == (30, 30)
    assert (regression["current_passed"], regression["current_n"]) == (29, 30)
    assert "mixed_runs" not in _kinds(document)
    assert run(["compare", base_path, current_path, "--baseline-run-id", "x"]) == 2
    assert "--baseline-run-id x" in capsys.readouterr().err


def test_every_report_gives_the_trials_of_each_run(parquet_sink, tracer, capsys, tmp_path) -> None:
    _trials(tracer, "run-a", 30, passed=30)
    _trials(tracer, "run-b", 20, passed=5)
    path = str(parquet_sink.flush())
    junit, markdown, html = tmp_path / "r.xml", tmp_path / "r.md", tmp_path / "r.html"
    formats = (f"junit:{junit}", f"markdown:{markdown}", f"html:{html}")
    run(["analyze", path, "-q", *(a for f in formats for a in ("--format", f))])
    for report in (junit, markdown, html):
        assert "trials from 2 runs: run-a 30, run-b 20" in report.read_text(), report
    single = tmp_path / "one.html"
    assert run(["report", path, "--run-id", "run-a", "-o", str(single)]) == 0
    assert "30/30" in single.read_text() and "trials from 2 runs" not in single.read_text()


def test_a_mixed_baseline_is_named_too(switch_sink, tracer, capsys) -> None:
    paths = _sets(
        switch_sink, tracer, base={"old": (10, 10), "older": (10, 10)}, current={"new": (10, 10)}
    )
    document = _json(capsys, "compare", *paths)
    message = _kinds(document)["mixed_runs"]["message"]
    assert message.startswith("in the baseline, 1 test pools trials")
    assert "refund-policy: old 10, older 10" in message and "--baseline-run-id" in message


def test_shares_of_every_test_at_once_are_each_tests_shares() -> None:
    trials = pl.DataFrame(
        {
            tc.TEST_ID: ["b", "a", "b", "a", "b", "c", "a"],
            tc.RUN_ID: ["r2", "r1", None, "r1", "r1", None, "r3"],
        }
    )
    per_test = shares_by_test(trials, tc.RUN_ID)
    assert per_test == {name: shares(frame, tc.RUN_ID) for name, frame in by_test(trials).items()}
    assert [s.id for s in per_test["b"]] == ["r1", "r2", None]  # ties: by id, none last


def test_the_baselines_mixed_tests_are_named_in_test_order() -> None:
    baseline = pl.DataFrame(
        {
            tc.TEST_ID: ["d", "b", "d", "a", "b", "c", "a"],
            tc.RUN_ID: ["r2", "r1", "r1", "r1", "r3", "r1", "r1"],
            tc.AGENT_VERSION: ["v1"] * 6 + [None],
        }
    )
    runs, versions = mixed_findings([], baseline)
    assert runs.kind == "mixed_runs" and runs.tests == ("b", "d")
    assert runs.message.startswith("in the baseline, 2 tests pool")
    assert "b: r1 1, r3 1; d: r1 1, r2 1" in runs.message
    assert versions.kind == "mixed_versions" and versions.tests == ("a",)
    assert mixed_findings([], None) == [] == mixed_findings([], baseline.head(1))
