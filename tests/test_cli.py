from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import assay
import assay.instrument as ai
from assay._cli._emit import RENDERERS
from assay.choices import OutputFormat
from assay.cli import run
from console_table import table_rows


def _record(counts: dict[str, tuple[int, int]]) -> None:
    """counts: test id -> (passes, trials)."""
    for test_id, (passes, trials) in counts.items():
        for i in range(trials):
            with ai.trial(test_id, index=i) as t:
                t.check("ok", i < passes)


@pytest.fixture()
def mixed(parquet_sink) -> Path:
    _record({"good": (30, 30), "bad": (15, 30), "border": (28, 30)})
    return parquet_sink.flush()


def test_exit_codes(parquet_sink, switch_sink, capsys) -> None:
    _record({"good": (30, 30)})
    assert run(["analyze", str(parquet_sink.flush())]) == 0
    sink = switch_sink("inconclusive")
    _record({"border": (28, 30)})
    assert run(["analyze", str(sink.flush())]) == 3
    assert run(["analyze", str(sink.flush()), "--inconclusive-ok"]) == 0
    sink = switch_sink("failing")
    _record({"bad": (15, 30), "border": (28, 30)})
    assert run(["analyze", str(sink.flush()), "--inconclusive-ok"]) == 1
    assert "1 FAIL" in capsys.readouterr().out


def test_threshold_and_confidence_flags(parquet_sink) -> None:
    _record({"t": (29, 30)})
    path = str(parquet_sink.flush())
    assert run(["analyze", path, "--threshold", "0.7"]) == 0
    assert run(["analyze", path, "--threshold", "0.9"]) == 3


def test_one_flag_one_meaning_across_commands(parquet_sink, capsys) -> None:
    """A flag spelt alike in two commands is one declaration: the same help and the same type."""
    import typer.main

    from assay.cli import app

    _record({"t": (29, 30)})
    path = str(parquet_sink.flush())
    assert run(["analyze", path, "--pass-rate", "0.9"]) == 3  # --pass-rate is --threshold
    capsys.readouterr()
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    uses: dict[str, list[tuple[str, object]]] = {}
    for name, command in commands.items():
        for param in command.params:
            if param.param_type_name != "option":
                continue
            meaning = (param.help, param.type_descriptor.annotation, param.multiple)
            for flag in param.opts:
                uses.setdefault(flag, []).append((name, meaning))
    shared = {flag: found for flag, found in uses.items() if len(found) > 1}
    assert {"--alpha", "--delta", "--errors", "--quiet", "--prices", "--threshold"} <= set(shared)
    # what had a meaning of its own per command before: one declaration each now
    once = {"--confidence", "--power", "--test", "--fixed", "--format", "--out", "--run-id"}
    assert once <= set(shared)
    assert {name for name, _ in shared["--format"]} >= {"plan", "describe", "analyze", "run"}
    assert {name for name, _ in shared["--out"]} == {"collect", "import", "run"}
    # run gives its trials an id (--assign-run-id); --run-id selects them
    assert {name for name, _ in shared["--run-id"]} == {"analyze", "compare", "report"}
    differ = {flag for flag, found in shared.items() if len({m for _, m in found}) > 1}
    assert not differ, {flag: shared[flag] for flag in differ}
    for flag in ("--delta", "--alpha"):  # the regression's, wherever they are spelt so
        assert {name for name, _ in shared[flag]} == {"analyze", "compare", "report", "plan", "run"}
    for command in ("analyze", "compare", "report", "run", "import"):  # each draws progress
        assert ["--quiet", "-q"] in [p.opts for p in commands[command].params], command


def test_every_output_format_has_one_renderer() -> None:
    assert set(RENDERERS) == set(OutputFormat)


def test_console_table(mixed: Path, capsys) -> None:
    from statsmodels.stats.proportion import proportion_confint

    from assay.stats import verdict_sides

    assert run(["analyze", str(mixed)]) == 1
    out = capsys.readouterr().out
    rows = table_rows(out)
    assert list(rows[0]) == [
        "test",
        "verdict",
        "rate (passed/n)",
        "95% CI",
        "against the threshold",
        "errors",
    ]

    def row(test: str, verdict: str, passed: int, n: int) -> list[str]:
        # The verdict interval: statsmodels' Wilson bounds, or its Clopper–Pearson ("beta")
        # bound on a side where Wilson's exact error at the threshold exceeds 2.5% at this n.
        low, high = proportion_confint(passed, n, alpha=0.05, method="wilson")
        exact_low, exact_high = proportion_confint(passed, n, alpha=0.05, method="beta")
        lower_kept, upper_kept = (bool(side) for side in verdict_sides(n, 0.8))
        low, high = (low if lower_kept else exact_low), (high if upper_kept else exact_high)
        return [test, verdict, f"{passed / n:.1%} ({passed}/{n})", f"[{low:.1%}, {high:.1%}]"]

    # FAIL first, then INCONCLUSIVE, then PASS; errors are 0.
    assert [[r["test"], r["verdict"], r["rate (passed/n)"], r["95% CI"]] for r in rows] == [
        row("bad", "FAIL", 15, 30),
        row("border", "INCONCLUSIVE", 28, 30),
        row("good", "PASS", 30, 30),
    ]
    assert [r["errors"] for r in rows] == ["0", "0", "0"]
    assert "│ 3 tests: 1 PASS · 1 FAIL · 1 INCONCLUSIVE" in out


def test_json_output_is_the_python_api_document(mixed: Path, capsys, tmp_path: Path) -> None:
    assert run(["analyze", str(mixed), "--format", "json"]) == 1
    printed = capsys.readouterr().out
    assert printed == assay.analyze(mixed).to_json()
    document = json.loads(printed)
    assert document["schema"] == "assay.analysis/v1"
    assert document["summary"] == {"tests": 3, "PASS": 1, "FAIL": 1, "INCONCLUSIVE": 1}
    required = {
        "test_id",
        "n",
        "passed",
        "errors",
        "pass_rate",
        "ci",
        "threshold",
        "verdict",
        "pass_at_k",
        "pass_hat_k",
        "score",
        "tool_consistency",
        "flakiness",
        "usage",
        "duration_s",
        "regression",
    }
    for test in document["tests"]:
        assert required <= set(test)
        assert set(test["ci"]) == {"method", "confidence", "low", "high"}
        assert set(test["usage"]) == {"llm_calls", "input_tokens", "output_tokens"}
        assert set(test["duration_s"]) == {"mean", "p90"}
    out_file = tmp_path / "verdicts.json"
    assert run(["analyze", str(mixed), "--format", "json", "--output", str(out_file)]) == 1
    assert out_file.read_text() == printed


def _with_a_stray_tool_span(traces: Path, tmp_path: Path) -> Path:
    """A copy of ``traces`` plus one span that looks like a tool call no convention claims."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    from assay.instrument import ParquetSpanExporter

    copy = tmp_path / "with-stray"
    shutil.copytree(traces, copy)
    provider = TracerProvider()  # not the global one: its spans go to this file alone
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(str(copy))))
    parent = SpanContext(0x1234, 0x99, is_remote=True, trace_flags=TraceFlags(1))
    context = trace.set_span_in_context(NonRecordingSpan(parent))
    with provider.get_tracer("tests").start_as_current_span("tool lookup", context=context):
        pass
    provider.shutdown()
    return copy


def test_diagnostics_go_to_stderr_and_stdout_holds_only_the_report(
    traces: Path, tmp_path: Path, capsys
) -> None:
    # The example's trace set warns of nothing: one stray span gives it a warning to route.
    traces = _with_a_stray_tool_span(traces, tmp_path)
    analysis = assay.analyze(traces)
    messages = [finding.message for finding in analysis.result.data_quality.warnings]
    assert any("look like tool or LLM calls" in m for m in messages)
    warnings = [f"assay: warning: {m}" for m in messages]
    # A JSON document on stdout is the document alone; the warnings are on stderr.
    assert run(["analyze", str(traces), "--format", "json"]) == 1
    out, err = capsys.readouterr()
    assert out == analysis.to_json() and err.splitlines() == warnings
    # The console report on stdout: the report alone, from its title to its summary box.
    assert run(["analyze", str(traces)]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("suite example — ") and "\nassay verdicts" in out
    assert out.rstrip().endswith("╯")
    assert not any(m in out for m in messages) and "warning:" not in out
    assert err.splitlines() == warnings
    # A console report written to a file is a complete record: the warnings stay in it.
    assert run(["analyze", str(traces), "--format", f"console:{tmp_path / 'c.txt'}"]) == 1
    assert all(
        f"warning: {m}" in " ".join((tmp_path / "c.txt").read_text().split()) for m in messages
    )
    wrote = f"wrote {tmp_path / 'c.txt'} (4 tests: 2 PASS, 1 FAIL, 1 INCONCLUSIVE)"
    assert capsys.readouterr() == ("", "\n".join([wrote, *warnings]) + "\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["analyze", "{tmp}/missing"], "missing: no such file or folder"),
        (["analyze", "{tmp}/empty"], "empty: folder holds no .parquet files"),
        (["analyze", "{tmp}/junk.parquet"], "junk.parquet: not a readable Parquet file"),
        (["analyze", "{traces}", "--format", "xml"], "error: --format 'xml' is not one of console"),
        (["analyze", "{traces}", "--threshold", "1.5"], "--threshold must lie in [0, 1]"),
        (
            ["analyze", "{traces}", "--k", "1,x"],
            "error: --k must be whole numbers separated by commas (got '1,x')",
        ),
        (["compare", "{traces}", "{traces}", "--k", "0"], "error: --k needs whole numbers ≥ 1"),
        (["analyze", "{traces}", "--confidence", "abc"], "Invalid value for '--confidence'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], message: str, parquet_sink, tmp_path: Path, capsys
) -> None:
    _record({"t": (1, 1)})
    traces = parquet_sink.flush()
    (tmp_path / "empty").mkdir()
    (tmp_path / "junk.parquet").write_text("hello")
    args = [a.format(tmp=tmp_path, traces=traces) for a in argv]
    assert run(args) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_corrupt_file_among_good_ones(mixed: Path, capsys) -> None:
    good = next(mixed.rglob("*.parquet"))
    broken = good.parent / "broken.parquet"
    broken.write_bytes(good.read_bytes()[:100])
    assert run(["analyze", str(mixed)]) == 2
    assert "broken.parquet" in capsys.readouterr().err
    assert run(["analyze", str(mixed), "--skip-bad-files", "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert [Path(s["path"]).name for s in document["skipped_files"]] == ["broken.parquet"]
    assert document["summary"]["tests"] == 3


def test_console_script_prints_no_traceback(tmp_path: Path) -> None:
    exe = shutil.which("assay", path=str(Path(sys.executable).parent))
    assert exe is not None
    result = subprocess.run(
        [exe, "analyze", str(tmp_path / "nowhere")], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"assay: error: {tmp_path / 'nowhere'}: no such file or folder"
    ]


def test_the_console_script_ends_with_its_exit_code_and_runs_atexit_handlers(
    mixed: Path,
) -> None:
    # main() freezes what is left before the process ends (no garbage collection of it at
    # exit); the exit code is the command's, and atexit handlers — an exporter's flush — run.
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('flushed at exit'))\n"
        "from assay.cli import main\n"
        f"sys.argv = ['assay', 'analyze', {str(mixed)!r}]\n"
        "main()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1  # "bad" fails
    assert result.stdout.rstrip().endswith("flushed at exit")
    assert run(["analyze", str(mixed)]) == 1
