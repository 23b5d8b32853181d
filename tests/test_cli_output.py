"""What a new user reads: the help, the widths of piped output, and what a command wrote."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import assay.instrument as ai
from assay.cli import run

COMMANDS = (
    "analyze",
    "compare",
    "plan",
    "report",
    "collect",
    "import",
    "run",
    "describe",
    "watch",
    "compact",
)


def _record(test_id: str, passes: int, trials: int) -> None:
    for i in range(trials):
        with ai.trial(test_id, index=i) as t:
            t.check("ok", i < passes)


def test_the_command_list_says_each_command_in_a_whole_phrase(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(["-h"]) == 0
    listed = capsys.readouterr().out.split("Commands:")[1].strip().splitlines()
    assert [line.split()[0] for line in listed] == list(COMMANDS)
    for line in listed:  # a full stop or a question mark, never click's "..." or "(e.g."
        assert line.rstrip().endswith((".", "?")) and not line.rstrip().endswith("..."), line


@pytest.mark.parametrize("command", COMMANDS)
def test_usage_and_placeholders_read_as_words(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run([command, "-h"]) == 0
    text = capsys.readouterr().out
    assert "{" not in text.splitlines()[0] and "list[" not in text, text
    if command in ("analyze", "report", "describe", "watch"):
        assert text.splitlines()[0].endswith(f" {command} [OPTIONS] PATHS...")


def test_one_test_is_one_test_and_the_summary_wraps_within_120_columns_in_a_log(
    parquet_sink, capsys: pytest.CaptureFixture[str]
) -> None:
    long_id = "flight-rebooking-when-the-first-leg-is-cancelled-and-the-second-is-late"
    _record(long_id, 27, 30)
    path = str(parquet_sink.flush())
    assert run(["analyze", path]) == 3
    out = capsys.readouterr().out
    assert "│ 1 test: 0 PASS · 0 FAIL · 1 INCONCLUSIVE" in out
    box = out[out.index("╭─ assay summary") :].splitlines()
    # The box is as wide as the log's 120 columns, never wider: the reason wraps inside it,
    # beside its verdict (a hanging indent), and reads whole.
    assert {len(line) for line in box} == {120}
    at = next(i for i, line in enumerate(box) if long_id in line)
    assert box[at].startswith("│   INCONCLUSIVE " + long_id)
    rest = box[at + 1 : -1]
    assert rest and all(re.match("│ {16}[^ ]", line) for line in rest)
    joined = " ".join(line.strip("│ ") for line in box[at:-1])
    assert joined.endswith("straddles the threshold 80.0%")


def test_every_file_written_is_said_on_stderr(
    parquet_sink, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _record("greeting", 30, 30)
    path = str(parquet_sink.flush())
    html, data = tmp_path / "out.html", tmp_path / "out.json"
    assert run(["analyze", path, "--format", f"html:{html}", "--format", f"json:{data}"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert f"wrote {html} (1 test: 1 PASS, 0 FAIL, 0 INCONCLUSIVE)" in err
    assert f"wrote {data} (1 test: 1 PASS, 0 FAIL, 0 INCONCLUSIVE)" in err
    report = tmp_path / "report.html"
    assert run(["report", path, "-o", str(report)]) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("wrote")]
    assert said == [f"wrote {report} (1 test: 1 PASS, 0 FAIL, 0 INCONCLUSIVE)"]  # once


def test_a_dry_run_plan_in_a_log_is_as_wide_as_analyze(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1]))  # examples.agent
    long_id = "flight-rebooking-when-the-first-leg-is-cancelled"
    suite = tmp_path / "suite.yaml"
    suite.write_text(f"tests:\n  - {{name: {long_id}, input: {{}}}}\n")
    assert run(["run", str(suite), "--agent", "examples.agent:run", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert long_id in out and "confidence-sequence" in out  # not cut at 80 columns
    assert max(len(line) for line in out.splitlines()) > 80
    assert not re.search(r"\w…", out)
