"""The HTML report: self-contained, escaped, charts present; opened in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from sample_result import ESCAPED_ID, build_result, build_trials, build_variants, check_golden

from assay.judge import AnalysisResult
from assay.report import render_html


def _charts(document: str) -> list[str]:
    return re.findall(r'<svg class="chart" data-chart="([a-z-]+)"', document)


def _full(result: AnalysisResult, **kwargs: object) -> str:
    return render_html(result, trials=build_trials(), variants=build_variants(), **kwargs)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def document() -> str:
    """The report of the hand-built result, rendered once for the module (~0.7 s)."""
    return _full(build_result())


def _words(document: str) -> str:
    """The document with each inline chart reduced to its name, a block element a line.

    The golden file holds what the report says and how it is laid out, not matplotlib's
    drawing, whose bytes change with its version (the charts are checked by the tests below);
    the line breaks keep its diff readable.
    """
    words = re.sub(
        r'<svg class="chart" data-chart="([a-z-]+)".*?</svg>',
        r'<svg data-chart="\1"/>',
        document,
        flags=re.DOTALL,
    )
    return re.sub(r"(?=<(?:section|details|h[1-3]|p|ul|li|table|tr|div)\b)", "\n", words)


def test_golden(document: str) -> None:
    check_golden("report.html", _words(document))


def test_self_contained(document: str) -> None:
    assert document.startswith("<!DOCTYPE html>")
    lowered = document.lower()
    for forbidden in ("<script", "<link", "@import", " src=", "url(http", "<iframe"):
        assert forbidden not in lowered, forbidden
    # The only absolute URLs are XML namespaces inside the inline SVGs.
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", document))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls


def test_charts_and_sections(document: str) -> None:
    charts = _charts(document)
    assert charts[0] == "pass-rates"
    for expected in ("flakiness", "score", "passk", "regression", "variants"):
        assert expected in charts, expected
    # Failing tests come first; each has an anchor that the summary table links to.
    order = [document.index(f'id="test-{name}"') for name in ("checkout-flow", "greeting")]
    assert order == sorted(order)
    assert 'href="#test-checkout-flow"' in document
    assert "tool path varies: 2 distinct sequences in 30 trials" in document
    assert "anytime-valid interval [80.1%, 100.0%]" in document  # the adaptive PASS
    assert "3 traces have spans whose parent is absent" in document  # data quality
    assert "Trials to open" in document
    # The failing and error trials are listed with their trace ids, errors first.
    to_open = document[document.index("Trials to open") :]
    assert to_open.index(f"{7:032x}") < to_open.index(f"{1:032x}")
    assert "payment API timed out" in to_open
    # each trial names its variant, as "path 1": "V1" read as an agent version ("trial 7 (v2)")
    assert "search ×2 → pay</code> (path 1)" in to_open and "(V1)" not in document


def test_escaping(document: str) -> None:
    assert ESCAPED_ID not in document
    assert "search|answers &lt;v2&gt; &amp; &quot;co&quot; [red]" in document


def test_trace_links(result: AnalysisResult) -> None:
    document = _full(result, trace_url="http://localhost:16686/trace/{trace_id}")
    assert f'href="http://localhost:16686/trace/{7:032x}"' in document


def test_without_statistics_or_trials(empty_result: AnalysisResult) -> None:
    document = render_html(empty_result)
    assert _charts(document) == ["pass-rates"]
    assert "Trials to open" not in document and "checkout-flow" in document


def test_deterministic(document: str) -> None:
    assert _full(build_result()) == document
    ids = re.findall(r'\bid="([^"]+)"', document)
    assert len(ids) == len(set(ids)), "element ids clash between inline charts"


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip(
        "Chromium is not installed here and could not be: `make test` installs the Debian "
        "package `chromium` with apt-get (needs root and network)"
    )


def _headless(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
    ]
    return subprocess.run(
        [binary, *flags, *args], capture_output=True, text=True, timeout=120, check=True
    )


@pytest.mark.slow
def test_opens_in_headless_chromium(document: str, tmp_path: Path) -> None:
    from matplotlib.image import imread

    binary = _chromium()
    page = tmp_path / "report.html"
    page.write_text(document, encoding="utf-8")
    shot = tmp_path / "shot.png"
    # One browser start for both: the screenshot, and the DOM as parsed (on stdout).
    dom = _headless(
        binary,
        tmp_path / "profile",
        f"--screenshot={shot}",
        "--dump-dom",
        "--window-size=1280,2000",
        page.as_uri(),
    ).stdout
    pixels = imread(str(shot))[..., :3]
    assert pixels.shape[:2] == (2000, 1280)
    background = np.median(pixels.reshape(-1, 3), axis=0)
    painted = np.abs(pixels - background).sum(axis=2) > 0.1
    assert painted.mean() > 0.05, "the screenshot is (almost) blank"
    # The FAIL colour (#cf222e) is on screen: the failing test is visible, not just text.
    red = (pixels[..., 0] > 0.7) & (pixels[..., 1] < 0.3) & (pixels[..., 2] < 0.35)
    assert red.sum() > 200

    charts = _charts(dom)
    assert charts[0] == "pass-rates" and {"score", "variants", "flakiness"} <= set(charts)
    # The SVGs were parsed as SVG (their drawing survived into the DOM), not dropped.
    assert dom.count("<path") > 50
    assert "checkout-flow" in dom and f"{7:032x}" in dom


def test_anchors_stay_distinct(result: AnalysisResult) -> None:
    import dataclasses

    twins = tuple(dataclasses.replace(result.tests[2], test_id=name) for name in ("a b", "a-b"))
    document = render_html(dataclasses.replace(result, tests=twins))
    anchors = re.findall(r'<section class="test [A-Z]+" id="([^"]+)"', document)
    assert len(anchors) == 2 and len(set(anchors)) == 2 and "test-a-b" in anchors


def _many(result: AnalysisResult, copies: int) -> tuple[AnalysisResult, list[dict[str, object]]]:
    """``copies`` × the sample's tests, each copy with its own ids, trials and variants."""
    import dataclasses

    tests, trials, variants = [], [], []
    for c in range(copies):
        tests += [dataclasses.replace(t, test_id=f"{t.test_id}-{c:04d}") for t in result.tests]
        trials += [{**r, "test_id": f"{r['test_id']}-{c:04d}"} for r in build_trials()]
        variants += [{**v, "test_id": f"{v['test_id']}-{c:04d}"} for v in build_variants()]
    many = dataclasses.replace(result, tests=tuple(tests))
    return many, [{"trials": trials, "variants": variants}]


def _timed(result: AnalysisResult, extra: dict[str, object]) -> tuple[str, float]:
    import time

    started = time.process_time()
    document = render_html(result, **extra)  # type: ignore[arg-type]
    return document, time.process_time() - started


@pytest.mark.slow
def test_many_tests_render_in_seconds(result: AnalysisResult) -> None:
    from assay.report._html import MAX_CHARTED_TESTS, MAX_OVERVIEW_ROWS, MAX_SCORE_CHARTS

    many, (rows,) = _many(result, 500 // len(result.tests) + 1)
    assert len(many.tests) >= 500
    document, seconds = _timed(many, rows)
    # Charts are the costly part (~0.1 s of CPU each): a bounded number, whatever the number
    # of tests. Without the bound these 500 tests drew ~1,500 charts and took minutes.
    most = MAX_CHARTED_TESTS * (4 + MAX_SCORE_CHARTS) + 1
    assert len(_charts(document)) <= most
    assert seconds < 10.0, f"{seconds:.1f} s of CPU for {len(many.tests)} tests"
    # Every test is in the summary table and has its section; the uncharted ones collapsed.
    sections = re.findall(r'<section class="test [A-Z]+" id="[^"]+"><details( open)?>', document)
    assert len(sections) == len(many.tests)
    assert sections.count(" open") == MAX_CHARTED_TESTS
    assert document.count('<td><a href="#test-') == len(many.tests)
    assert f"The chart shows the {MAX_OVERVIEW_ROWS} most severe of {len(many.tests)}" in document
    assert f"the other {len(many.tests) - MAX_CHARTED_TESTS} sections" in document


def test_quoted_names_are_code_and_escaped(result: AnalysisResult) -> None:
    import dataclasses

    noted = dataclasses.replace(
        result.tests[2], notes=("calls to `<b>search</b>` rose; a lone ` stays",)
    )
    document = render_html(dataclasses.replace(result, tests=(noted,)))
    assert "calls to <code>&lt;b&gt;search&lt;/b&gt;</code> rose; a lone ` stays" in document


def test_a_stable_test_is_not_headed_flaky(result: AnalysisResult) -> None:
    import dataclasses

    from assay.stats import flakiness

    greeting = result.tests[2]
    steady = flakiness(np.ones(greeting.n, dtype=bool))
    assert greeting.verdict.value == "PASS" and steady.category == "stable"
    document = render_html(
        dataclasses.replace(result, tests=(dataclasses.replace(greeting, flakiness=steady),))
    )
    assert "<h3>Flakiness: 0 (stable)</h3>" in document and "flaky" not in document


def test_settings_leave_out_what_is_unset(result: AnalysisResult) -> None:
    import dataclasses

    def header(fail_on: tuple[str, ...]) -> tuple[str, str]:
        """The settings in words, and as the JSON names them (folded below)."""
        options = {**result.options, "fail_on": fail_on, "seed": None}
        document = render_html(dataclasses.replace(result, options=options, tests=()))
        words = document[document.index("</h1><p class=muted>") :].split("</p>")[0]
        named = document[document.index("as the JSON names them</summary>") :]
        return words, named.split("</details>")[0]

    words, named = header(())
    assert named.endswith("errors count") and "fail_on" not in named + words
    assert "random seed" not in words and "seed" not in named
    assert "Wilson intervals for pass rates" in words and "ci_method" not in words
    assert "error trials: count" in words
    words, named = header(("pass_rate<0.5",))
    assert named.endswith("errors count, fail_on (&#x27;pass_rate&lt;0.5&#x27;,)")
    assert words.endswith("a test also fails on pass_rate&lt;0.5")


def test_production_trials_are_named_by_their_trace(parquet_sink, tracer) -> None:
    """Traces with no trial index: the trials list and table name each by its trace id."""
    from opentelemetry import context
    from opentelemetry.trace import Status, StatusCode

    import assay
    from assay.analysis import columns as tc
    from assay.analysis import tool_variants
    from assay.conventions import GENAI_AGENT_NAME

    for i in range(6):
        with tracer.start_as_current_span(
            "invoke_agent", context=context.Context(), attributes={GENAI_AGENT_NAME: "triage"}
        ) as span:
            if i == 0:
                span.set_status(Status(StatusCode.ERROR, "upstream timeout"))
    analysis = assay.analyze(
        parquet_sink.flush(), assay.AnalyzeOptions(test_attribute=GENAI_AGENT_NAME)
    )
    trials = analysis.trials
    assert trials[tc.TRIAL_INDEX].null_count() == len(trials) == 6
    (errored,) = trials.filter(trials[tc.ERROR])[tc.TRACE_ID].to_list()
    document = render_html(
        analysis.result,
        trials=trials.to_dicts(),
        variants=tool_variants(trials).to_dicts(),
    )
    to_open = document[document.index("Trials to open") :].split("</ul>")[0]
    assert f"<li><code>{errored}</code> () <b>error</b>; upstream timeout" in to_open
    table = document[document.index("<summary>All 6 trials") :]
    assert table.count("<td class=num>—</td>") == 6
    assert "?" not in to_open + table and "trial ?" not in document
