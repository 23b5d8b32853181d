"""The analysis options are declared once: every command that judges offers the same flags,
with the library's defaults, and ``report`` gives the verdicts ``analyze`` gives."""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import fields
from pathlib import Path

import pytest

import assay.instrument as ai
from assay._cli._analysis import ANALYSIS_FLAGS, NOT_FLAGS
from assay.cli import run
from assay.judge import AnalyzeOptions

_BADGE = re.compile(r'<a href="#[^"]*">([^<]+)</a></td><td><span class="badge \w+">(\w+)</span>')


@pytest.fixture()
def versions(parquet_sink) -> Path:
    """One set, two versions: a test that holds, one that dropped, one that barely moved."""
    counts = {"v1": {"held": 40, "dropped": 39, "moved": 34}, "v2": {"held": 40, "dropped": 28}}
    counts["v2"]["moved"] = 31
    for version, tests in counts.items():
        for test_id, passes in tests.items():
            for i in range(40):
                with ai.trial(test_id, index=i, agent_version=version) as t:
                    t.check("ok", i < passes)
    return parquet_sink.flush()


@pytest.mark.parametrize(
    "flags",
    [
        ["--current-version", "v2"],
        ["--baseline-version", "v1", "--current-version", "v2"],
        ["--baseline-version", "v1", "--current-version", "v2", "--adjust", "holm"],
        [
            "--baseline-version",
            "v1",
            "--current-version",
            "v2",
            "--test",
            "fisher",
            "--delta",
            "0.2",
        ],
        ["--current-version", "v2", "--threshold", "0.6", "--ci-method", "jeffreys"],
        ["--current-version", "v2", "--confidence", "0.8", "--errors", "exclude"],
    ],
)
def test_report_gives_the_verdicts_and_exit_code_of_analyze(
    versions: Path, flags: list[str], tmp_path: Path, capsys
) -> None:
    code = run(["analyze", str(versions), "--format", "json", "-q", *flags])
    analysed = {t["test_id"]: t["verdict"] for t in json.loads(capsys.readouterr().out)["tests"]}
    html = tmp_path / "report.html"
    assert run(["report", str(versions), "-o", str(html), "-q", *flags]) == code
    assert dict(_BADGE.findall(html.read_text(encoding="utf-8"))) == analysed


def test_the_flag_sets_differ_in_verdicts(versions: Path, capsys) -> None:
    """The cases above are not one case: the flags change what is decided."""
    codes = {
        run(["analyze", str(versions), "-q", "--current-version", "v2", *flags])
        for flags in ([], ["--baseline-version", "v1"], ["--threshold", "0.6"])
    }
    capsys.readouterr()
    assert len(codes) > 1


def test_report_takes_every_flag_analyze_takes() -> None:
    from assay._cli.analyze import analyze, report

    def options(command: object) -> dict[str, inspect.Parameter]:
        return dict(inspect.signature(command).parameters)  # type: ignore[arg-type]

    rendering = {"format", "output", "all_cases"}  # report writes one HTML file
    analyzed, reported = options(analyze), options(report)
    assert set(analyzed) - rendering <= set(reported)
    for name in set(analyzed) - rendering - {"paths"}:
        assert reported[name].annotation is analyzed[name].annotation, name


def test_every_options_field_is_one_flag_with_the_library_default() -> None:
    offered = [flag.field for flag in ANALYSIS_FLAGS]
    assert len(offered) == len(set(offered))
    assert set(offered) | NOT_FLAGS == {f.name for f in fields(AnalyzeOptions)}
    defaults = AnalyzeOptions()
    for flag in ANALYSIS_FLAGS:
        assert flag.parameter().default is None  # not given: AnalyzeOptions decides
        assert getattr(defaults, flag.field) is not True, "a flag can only turn a field on"


def test_help_shows_the_library_defaults(capsys) -> None:
    assert run(["report", "-h"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    defaults = AnalyzeOptions()
    assert "--ci-method <wilson" in shown
    for value in (defaults.ci_method, defaults.regression_test, defaults.alpha, defaults.power):
        assert f"[default: {value}]" in shown


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--k", "0"], "assay: error: --k needs whole numbers ≥ 1 (got '0')"),
        (["--threshold", "1.5"], "assay: error: --threshold must lie in [0, 1] (got 1.5)"),
        (["--test", "anytime", "--alpha", "2"], "assay: error: --alpha must lie strictly"),
        (["--format", "yaml"], "assay: error: --format 'yaml' is not one of console"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_flag(
    versions: Path, argv: list[str], line: str, capsys
) -> None:
    assert run(["analyze", str(versions), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(line) and err.count("\n") == 1


def test_building_the_command_line_does_not_import_the_analysis() -> None:
    """The options' defaults are read when help is drawn, not when `assay` starts."""
    import subprocess
    import sys

    code = "import sys, typer.main, assay.cli; typer.main.get_command(assay.cli.app); "
    code += "print('polars' in sys.modules, 'assay.judge' in sys.modules)"
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.split() == ["False", "False"]
