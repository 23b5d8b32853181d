"""Hostile names: control characters and rich markup from the data never reach a terminal raw."""

from __future__ import annotations

import io
import re
from pathlib import Path
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

import assay.instrument as ai
from assay.cli import run
from assay.report import render_console
from assay.report._safe import is_visible, visible
from assay.run import RichProgress
from assay.run._state import TestStatus

# Clear the screen, return to the line start, set the window title (OSC ... BEL), reorder the
# line (bidi override), and rich markup.
TEST_ID = "evil\x1b[2J\rid [red]x[/red]\u202e"
TOOL = "se\x1b]0;owned\x07arch"
SCORE = "qual\x1b[31mity"
CHECK = "placed\r[bold]ok"
RAW = ("\x1b[2J", "\x1b]0;", "\x07", "\x1b[31mity", "\r", "\u202e")


def test_visible_shows_each_control_character() -> None:
    assert visible("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert visible("a\r\n\tb") == "a\\r\\n\\tb"
    assert visible("a\nb", newlines=True) == "a\nb"
    assert visible("x\u202ey\x9b") == "x\\u202ey\\x9b"
    assert visible("plain [red] ünïcode → ✓") == "plain [red] ünïcode → ✓"


@given(st.text())
def test_visible_leaves_nothing_unsafe(text: str) -> None:
    shown = visible(text)
    assert is_visible(shown)
    assert all(c.isprintable() for c in shown if ord(c) < 0xA0)
    if is_visible(text):
        assert shown == text  # safe text is shown as it is


def _hostile(parquet_sink: object) -> Path:
    for i in range(12):
        ok = i % 3 != 0
        with ai.trial(TEST_ID, index=i) as t:
            with ai.tool(TOOL):
                pass
            if not ok:
                with ai.tool(TOOL):
                    pass
            t.score(SCORE, 90.0 if ok else 10.0)
            t.check(CHECK, ok)
    return parquet_sink.flush()  # type: ignore[attr-defined,no-any-return]


def _assert_safe(name: str, text: str) -> None:
    for raw in RAW:
        assert raw not in text, (name, raw)


def test_hostile_trace_set_in_every_format(parquet_sink, tmp_path: Path, capsys) -> None:
    traces = _hostile(parquet_sink)
    out = tmp_path / "out"
    formats = [f"{kind}:{out}/{kind}.txt" for kind in ("github", "markdown", "html")]
    argv = ["analyze", str(traces), "--format", "console"]
    for spec in formats:
        argv += ["--format", spec]
    run(argv)
    console = capsys.readouterr().out
    _assert_safe("console", console)
    # Shown, not acted on: the escapes are visible and the markup is literal text.
    assert "evil\\x1b[2J\\rid [red]x[/red]\\u202e" in console
    for kind in ("github", "markdown", "html"):
        _assert_safe(kind, (out / f"{kind}.txt").read_text(encoding="utf-8"))
    page = (out / "html.txt").read_text(encoding="utf-8")
    assert "se\\x1b]0;owned\\x07arch" in page and "placed\\r[bold]ok" in page


def test_hostile_names_on_a_colour_terminal(parquet_sink) -> None:
    import assay

    analysis = assay.analyze(_hostile(parquet_sink))
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, force_terminal=True, color_system="truecolor")
    render_console(analysis.result, console, trials=analysis.trials.to_dicts())
    text = buffer.getvalue()
    _assert_safe("console", text)
    # rich's own styling escapes are there (it is a colour terminal); markup from the data
    # was not read: the literal "[red]" is printed and no escape sits inside the test id.
    assert "\x1b[" in text and "[red]x[/red]" in text


def test_run_progress_shows_ids_as_text() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=160, force_terminal=True, color_system="truecolor")
    progress = RichProgress(console)
    progress.start([SimpleNamespace(id=TEST_ID)], [10])  # type: ignore[list-item]
    progress.update(TestStatus(TEST_ID, 3, 2, 0, 10, 0.2, 0.9))
    progress.stop()
    text = buffer.getvalue()
    # The live display redraws with \r and cursor moves of its own; the data's are escaped.
    for raw in ("\x1b[2J", "\u202e"):
        assert raw not in text
    assert "evil\\x1b[2J\\rid [red]x[/red]" in re.sub(r"\x1b\[[0-9;]*m", "", text)
