"""Markdown step summary and GitHub workflow annotations."""

from __future__ import annotations

from sample_result import check_golden

from assay.judge import AnalysisResult
from assay.report import render_annotations, render_markdown


def test_golden(result: AnalysisResult) -> None:
    check_golden("summary.md", render_markdown(result))


def test_golden_without_statistics(empty_result: AnalysisResult) -> None:
    check_golden("summary_bare.md", render_markdown(empty_result))


def test_annotations_golden(result: AnalysisResult) -> None:
    check_golden("annotations.txt", render_annotations(result))


def test_table_is_well_formed(result: AnalysisResult) -> None:
    lines = render_markdown(result).splitlines()
    table = [line for line in lines if line.startswith("|")]
    assert len(table) == 2 + len(result.tests)
    # Every row has the header's number of cells: an escaped pipe does not split a cell.
    widths = {len(line.replace("\\|", "").split("|")) for line in table}
    assert len(widths) == 1
    verdicts = [row.replace("\\|", "").split("|")[3].strip() for row in table[2:]]
    assert verdicts == ["**FAIL**", "**INCONCLUSIVE**", "**INCONCLUSIVE**", "**PASS**"]
    assert lines[0] == "## assay: 1 FAIL, 2 INCONCLUSIVE, 1 PASS (4 tests)"


def test_annotation_levels_and_escaping(result: AnalysisResult) -> None:
    lines = render_annotations(result).splitlines()
    levels = ["::error", "::warning", "::warning", "::warning"]
    assert [line.split(" ", 1)[0] for line in lines] == levels
    # The last is the data-quality warning (a run whose verdicts all pass still shows it).
    assert lines[-1].startswith("::warning title=assay data quality%3A incomplete_traces::")
    for line in lines:
        title, message = line.split("::", 2)[1:]
        # Properties escape ':' and ','; messages escape '%' and line breaks.
        assert ":" not in title.removeprefix("error title=").removeprefix("warning title=")
        assert "\n" not in message and "%" not in message.replace("%25", "").replace("%0A", "")
    assert "%0A- tool path varies" in lines[0]
    relaxed = render_annotations(result, inconclusive_ok=True).splitlines()
    assert [line.split(" ", 1)[0] for line in relaxed] == [*levels[:1], "::notice", "::notice"] + [
        "::warning"
    ]


def test_all_pass_has_no_annotations(result: AnalysisResult) -> None:
    passing = type(result)(tests=(result.tests[2],), options=result.options)
    assert render_annotations(passing) == ""
    assert "## assay: 1 PASS (1 test)" in render_markdown(passing)


HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "<b>bold</b>",
    "a` [click](javascript:alert(1)) `b",
    "*emph* _u_ ~~gone~~ | pipe \\ back",
]


def _inert(markdown: str) -> None:
    """No HTML tag but assay's own, no code span, link or emphasis opened by a name."""
    import re

    tags = set(re.findall(r"</?([a-zA-Z][a-zA-Z0-9]*)", markdown))
    assert tags <= {"code", "details", "summary"}, tags
    assert "](javascript:" not in markdown.replace("\\](", "")
    for opener in ("`", "*", "_", "~", "["):
        unescaped = re.findall(rf"(?<!\\){re.escape(opener)}", markdown)
        assert not unescaped or opener in "*", (opener, markdown)


def test_names_from_the_traces_are_inert_markdown(result: AnalysisResult) -> None:
    import dataclasses

    checkout = result.tests[0]
    tests = tuple(
        dataclasses.replace(
            checkout,
            test_id=name,
            scores=dict.fromkeys([name], next(iter(checkout.scores.values()))),
            primary_score=name,
        )
        for name in HOSTILE
    )
    hostile = dataclasses.replace(
        result,
        tests=tests,
        skipped_files=((HOSTILE[3], HOSTILE[0]),),
        data_quality=result.data_quality,
    )
    markdown = render_markdown(hostile)
    _inert(markdown.replace("**FAIL**", "").replace("**Data quality:**", ""))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in markdown
    assert "<code>a\\` \\[click\\](javascript:alert(1)) \\`b</code>" in markdown
    table = [line for line in markdown.splitlines() if line.startswith("|")]
    widths = {len(line.replace("\\|", "").split("|")) for line in table}
    assert len(widths) == 1  # an escaped pipe does not split a cell
