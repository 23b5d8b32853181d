"""The console report: readable without colour, --quiet, and both null and filled figures."""

from __future__ import annotations

import io
import re

from rich.console import Console
from sample_result import ESCAPED_ID, build_trials, check_golden

from assay.judge import AnalysisResult
from assay.report import pass_rate_bar, render_console, sparkline


def _render(result: AnalysisResult, **kwargs: object) -> str:
    buffer = io.StringIO()
    render_console(result, Console(file=buffer, width=120, no_color=True), **kwargs)  # type: ignore[arg-type]
    return buffer.getvalue()


def test_golden(result: AnalysisResult) -> None:
    check_golden("console.txt", _render(result, trials=build_trials()))


def test_plain_text_has_no_escape_codes(result: AnalysisResult) -> None:
    text = _render(result, trials=build_trials())
    assert "\x1b[" not in text
    for expected in (
        "checkout-flow",
        "FAIL",
        "INCONCLUSIVE",
        "pass@1 40%",
        "tool path varies: 2 distinct sequences in 30 trials",
        "failing trials have higher `tool_count:search`",
        "0.57 (flaky)",
        "regression FAIL",
        "4 tests: 1 PASS · 1 FAIL · 2 INCONCLUSIVE",
        "[outcome instability 0.96]",  # brackets in the words are text, not rich markup
        "confidence sequence stopped after 24 of 60 trials",
        "anytime [80.1%, 100.0%]",  # an adaptive verdict shows its anytime-valid interval
        "warning: 3 traces have spans whose parent is absent",  # data quality, warnings only
        ESCAPED_ID,
    ):
        assert expected in text, expected
    assert "duplicated spans collapsed" not in text  # an info finding is no warning


# An SGR sequence that sets a foreground colour: 30-37, 90-97 or 38;5;N / 38;2;R;G;B, alone
# or among other attributes (rich writes bold red as ESC[1;31m).
_COLOUR = re.compile(r"\x1b\[(?:[0-9]+;)*(?:3[0-7]|9[0-7]|38)(?:;[0-9]+)*m")


def test_no_color_env_is_honoured(result: AnalysisResult, monkeypatch) -> None:
    def render() -> str:
        buffer = io.StringIO()
        render_console(result, Console(file=buffer, width=120, force_terminal=True))
        return buffer.getvalue()

    coloured = render()
    assert _COLOUR.search(coloured), "without NO_COLOR the verdicts are coloured"
    monkeypatch.setenv("NO_COLOR", "1")
    plain = render()
    # Bold and the like may stay, but no colour codes.
    assert "\x1b[1m" in plain and not _COLOUR.search(plain)


def test_without_statistics(empty_result: AnalysisResult) -> None:
    text = _render(empty_result)
    assert "checkout-flow" in text and "flakiness" not in text and "pass@" not in text


def test_quiet_prints_the_summary_only(result: AnalysisResult) -> None:
    text = _render(result, quiet=True)
    assert "assay summary" in text
    assert "4 tests: 1 PASS · 1 FAIL · 2 INCONCLUSIVE" in text
    assert "FAIL         checkout-flow" in text
    assert "assay verdicts" not in text and "tool path varies" not in text


def test_pass_rate_bar_marks() -> None:
    bar = pass_rate_bar(0.5, 0.4, 0.6, 0.8, width=10).plain
    assert bar == "0 ····━●━·┃· 100%"
    # A threshold of 100% sits on the last cell; no interval without n.
    assert pass_rate_bar(None, None, None, 1.0, width=4).plain == "0 ···┃ 100%"


def test_sparkline() -> None:
    assert sparkline([]) == ""
    assert sparkline([3.0, 3.0]) == "█"
    line = sparkline([1, 1, 1, 1, 10], bins=3)
    assert len(line) == 3 and line[1] == " " and line[0] > line[2]


def test_narrow_terminal_moves_the_bar_into_the_details(result: AnalysisResult) -> None:
    buffer = io.StringIO()
    # a terminal (in a log the summary box is as wide as its longest line: test_cli_output.py)
    render_console(result, Console(file=buffer, width=80, force_terminal=True, color_system=None))
    text = buffer.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    table = text[: text.index("FAIL         checkout-flow")]
    assert "checkout-flow" in table and "┃ threshold" not in table  # ids kept, bar moved
    assert "pass rate  0 " in text and "(━ interval ● rate ┃ threshold)" in text
