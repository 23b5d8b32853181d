"""Every format from one `assay analyze` run on the example agent's trace set; `assay report`."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from junitparser import JUnitXml
from test_junit import assert_junit_schema

from assay.cli import run


def test_every_format_in_one_run(traces: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    code = run(
        [
            "analyze",
            str(traces),
            "--format",
            "console",
            "--format",
            f"junit:{out}/junit.xml",
            "--format",
            f"html:{out}/report.html",
            "--format",
            f"markdown:{out}/summary.md",
            "--format",
            f"json:{out}/verdicts.json",
            "--format",
            f"github:{out}/annotations.txt",
        ]
    )
    assert code == 1  # multi-step-research fails
    console = capsys.readouterr().out
    for expected in ("assay verdicts", "multi-step-research", "FAIL", "assay summary"):
        assert expected in console

    document = json.loads((out / "verdicts.json").read_text())
    verdicts = {t["test_id"]: t["verdict"] for t in document["tests"]}
    assert verdicts["multi-step-research"] == "FAIL" and verdicts["greeting"] == "PASS"

    xml = JUnitXml.fromfile(str(out / "junit.xml"))
    assert xml.tests == len(verdicts)
    assert_junit_schema(ET.parse(out / "junit.xml").getroot())

    summary = (out / "summary.md").read_text()
    assert (
        summary.startswith("## assay:")
        and "| ❌ | <code>multi-step-research</code> | **FAIL**" in summary
    )

    annotations = (out / "annotations.txt").read_text().splitlines()
    assert annotations[0].startswith("::error title=assay FAIL%3A multi-step-research::")

    report = (out / "report.html").read_text()
    assert 'data-chart="pass-rates"' in report and 'data-chart="variants"' in report
    assert 'data-chart="score"' in report and "Trials to open" in report
    assert "search_kb ×" in report  # the failing variant of multi-step-research


def test_step_summary_and_annotations_on_github(
    traces: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    step_summary = tmp_path / "step_summary.md"
    step_summary.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert run(["analyze", str(traces), "--format", "markdown", "--quiet"]) == 1
    text = step_summary.read_text()
    assert text.startswith("# earlier step\n## assay:")  # appended, not replaced
    out = capsys.readouterr().out
    assert "::error title=assay FAIL%3A multi-step-research::" in out
    assert "::warning title=" in out

    # `markdown:-` insists on stdout; then no annotations join it.
    assert run(["analyze", str(traces), "--format", "markdown:-"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("## assay:") and "::error" not in out
    assert step_summary.read_text() == text

    # JSON on stdout stays a clean document: no annotations mixed in.
    assert run(["analyze", str(traces), "--format", "json", "--format", "markdown"]) == 1
    json.loads(capsys.readouterr().out)


def test_quiet_console(traces: Path, capsys) -> None:
    assert run(["analyze", str(traces), "--quiet", "--inconclusive-ok"]) == 1
    out = capsys.readouterr().out
    assert "assay summary" in out and "assay verdicts" not in out


def test_console_to_a_file_is_plain(traces: Path, tmp_path: Path) -> None:
    target = tmp_path / "console.txt"
    assert run(["analyze", str(traces), "--format", f"console:{target}"]) == 1
    text = target.read_text()
    assert "\x1b[" not in text and "multi-step-research" in text


@pytest.mark.parametrize(
    ("formats", "message"),
    [
        (["--format", "json", "--format", "console"], "would all write to stdout"),
        (["--format", "json", "--format", "html", "-o", "x"], "--output names the file of one"),
        (["--format", "junit:"], "give a file after the colon"),
        (["--format", "pdf:r.pdf"], "--format 'pdf' is not one of console, json"),
    ],
)
def test_bad_format_specs(traces: Path, formats: list[str], message: str, capsys) -> None:
    assert run(["analyze", str(traces), *formats]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_report_command(traces: Path, tmp_path: Path, capsys) -> None:
    target = tmp_path / "site" / "report.html"
    code = run(
        [
            "report",
            str(traces),
            "-o",
            str(target),
            "--trace-url",
            "http://localhost:16686/trace/{trace_id}",
        ]
    )
    assert code == 1  # exit codes as for analyze
    assert f"wrote {target}" in capsys.readouterr().err
    report = target.read_text()
    assert report.startswith("<!DOCTYPE html>")
    assert 'href="http://localhost:16686/trace/' in report
