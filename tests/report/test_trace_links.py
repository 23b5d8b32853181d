"""``--trace-url`` / ``ASSAY_TRACE_URL``: trials named in reports open in the user's viewer."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from assay.cli import run
from assay.report._links import trace_link

FIXTURES = Path(__file__).parents[1] / "ingest" / "formats"
TRUTH = json.loads((FIXTURES / "truth.json").read_text())
JAEGER = "http://localhost:16686/trace/{trace_id}"


def _cli(*args: str) -> tuple[int, str]:
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
        code = run(list(args))
    return code, stdout.getvalue()


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("links") / "traces"
    code, _ = _cli("import", str(FIXTURES / "zipkin.json"), "--out", str(out))
    assert code == 0
    return out


def _first_tool_errors() -> set[str]:
    """Each test's first run whose tool failed (the fixtures hold runs in start order)."""
    first: dict[str, str] = {}
    for trace_id, truth in TRUTH.items():
        if truth["tool_errors"]:
            first.setdefault(truth["test_id"], trace_id)
    return set(first.values())


def test_the_template_takes_the_trace_id() -> None:
    assert trace_link(JAEGER, "ab" * 16) == "http://localhost:16686/trace/" + "ab" * 16
    assert trace_link(None, "ab" * 16) is None and trace_link(JAEGER, None) is None


@pytest.mark.parametrize("by_env", [False, True])
def test_the_console_names_a_failing_tools_trial_by_its_url(
    traces: Path, by_env: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["analyze", str(traces), "--test-attribute", "gen_ai.agent.name"]
    if by_env:
        monkeypatch.setenv("ASSAY_TRACE_URL", JAEGER)
    else:
        args += ["--trace-url", JAEGER]
    _, stdout = _cli(*args)
    text = " ".join(stdout.split())  # the console wraps long lines
    firsts = _first_tool_errors()
    assert text.count("http://localhost:16686/trace/") == len(firsts)
    for trace_id in firsts:
        assert f"first in trace http://localhost:16686/trace/{trace_id}: timeout" in text


def test_without_a_template_the_console_names_the_trace_id(
    traces: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASSAY_TRACE_URL", raising=False)
    _, stdout = _cli("analyze", str(traces), "--test-attribute", "gen_ai.agent.name")
    text = " ".join(stdout.split())
    assert all(f"first in trace {t}: timeout" in text for t in _first_tool_errors())
    assert "http" not in text


def test_the_html_report_links_every_trial(traces: Path, tmp_path: Path) -> None:
    report = tmp_path / "r.html"
    _cli(
        "report",
        str(traces),
        "-o",
        str(report),
        "--test-attribute",
        "gen_ai.agent.name",
        "--trace-url",
        JAEGER,
    )
    page = report.read_text()
    for trace_id in TRUTH:
        assert f'href="http://localhost:16686/trace/{trace_id}"' in page


def test_the_markdown_links_the_trace_of_each_failing_tool(traces: Path) -> None:
    args = ["analyze", str(traces), "--test-attribute", "gen_ai.agent.name"]
    _, summary = _cli(*args, "--format", "markdown", "--all-cases", "--trace-url", JAEGER)
    for trace_id in _first_tool_errors():
        assert (
            f"trace [<code>{trace_id}</code>](http://localhost:16686/trace/{trace_id})" in summary
        )
    # without a template the id is still named, as code, and nothing links
    _, plain = _cli(*args, "--format", "markdown", "--all-cases")
    assert "](http" not in plain
    assert all(f"trace <code>{t}</code>" in plain for t in _first_tool_errors())


def _versions() -> None:
    """Two versions of one case; v2 calls its tool twice in half its trials (a behaviour change)."""
    import assay.instrument as ai

    for version in ("v1", "v2"):
        for index in range(40):
            with ai.trial("case", agent_version=version, index=index):
                for _ in range(2 if version == "v2" and index % 2 else 1):
                    with ai.tool("search"):
                        pass


def test_every_trace_id_the_markdown_names_is_a_link(parquet_sink: Any) -> None:
    import re

    _versions()
    args = [
        "analyze",
        str(parquet_sink.flush()),
        "--baseline-version",
        "v1",
        "--format",
        "markdown",
    ]
    # a template holding what would end a Markdown link: it cannot break out of the link
    template = "http://viewer/x)[pwned](javascript:alert(1)) <b>/{trace_id}"
    _, summary = _cli(*args, "--trace-url", template)
    assert "typical trials" in summary
    links = re.findall(r"\[<code>([0-9a-f]{12})</code>\]\(([^)\s]*)\)", summary)
    assert len(links) >= 4
    for short, url in links:
        assert re.fullmatch(
            rf"http://viewer/x%29%5Bpwned%5D%28javascript:alert%281%29%29%20%3Cb%3E/{short}[0-9a-f]{{20}}",
            url,
        )
    shown = re.findall(r"<code>([0-9a-f]{12})</code>", summary)
    assert len(shown) == len(links)  # every id named is a link
    assert "[pwned](javascript" not in summary
