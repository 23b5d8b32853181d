"""The pytest plugin: ``@pytest.mark.assay(runs=30, threshold=0.8)`` runs a test as trials.

::

    import pytest

    @pytest.mark.assay(runs=30, threshold=0.8)
    def test_refund_answer():
        answer = my_agent("Can I get a refund?")
        assert "30 days" in answer            # an assertion failure is a failed trial

Each call of the function is one trial (an ``assay.instrument.trial`` span; ``--assay-out DIR``
writes them to a trace set). An assertion failure is a failed trial, any other exception an
``error`` trial. Adaptive stopping (the runner's loop, :class:`assay.judge.SequentialTracker`)
ends the repetition once the anytime-valid interval lies on one side of the threshold (or the
SPRT decides, with ``method='sprt'``); the verdict is that interval either way. The
trials record their judgement (``assay.judgement.*``) and are judged by the same pipeline as
``assay analyze`` (:func:`assay.api.judge_spans`), so ``assay analyze`` on
``--assay-out`` gives the same verdict. The verdict is the test's outcome: PASS passes, FAIL
fails, INCONCLUSIVE fails (with the interval in the message) unless ``inconclusive_ok=True`` on
the marker, ``--assay-inconclusive-ok`` or the ini option ``assay_inconclusive_ok = true``: then
it is SKIPPED with the verdict as the reason (as the JUnit report does), never a plain PASSED.

Fixtures are set up once per test, not per trial. Registered through the ``pytest11`` entry
point, so installing assay enables it.
"""

from __future__ import annotations

import inspect
import uuid
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Generator

    from _pytest.terminal import TerminalReporter
    from opentelemetry.sdk.trace import ReadableSpan

    from assay.instrument import Configured  # noqa: F401 - named in a string annotation
    from assay.judge import Judgement, TestResult

# assay's own modules (OpenTelemetry, scipy) are imported inside the hooks, so that a pytest
# session with assay installed but no `assay` marker pays nothing for the plugin.

_MARKER_HELP = (
    "assay(runs=30, threshold=0.8, adaptive=True, method='confidence-sequence', "
    "inconclusive_ok=False; with method='sprt' also delta=0.1, alpha=0.05, beta=0.2): run the "
    "test as repeated trials and judge its pass rate"
)
_KEYS = {"runs", "threshold", "adaptive", "method", "delta", "alpha", "beta", "inconclusive_ok"}
_CONFIDENCE = 0.95
"""The confidence of every verdict's interval (and of the confidence sequence)."""
_configured = pytest.StashKey["Configured | None"]()
_run_id = pytest.StashKey[str]()
_recorder = pytest.StashKey["_Recorder"]()
_verdicts = pytest.StashKey[list[tuple[str, str]]]()
"""Each judged test's node id and verdict line, for the ``assay verdicts`` summary section."""
_allowed = pytest.StashKey[bool]()
"""On an item whose INCONCLUSIVE verdict was allowed (skipped): report it at the test's place."""


class _Recorder:
    """The finished spans of the traces of the trials being run.

    Fed by an SDK span processor installed on first use (with a provider, if none is
    installed), so that the trials are judged from their spans, as ``assay analyze`` judges
    them.
    """

    def __init__(self) -> None:
        self.watched: set[int] = set()
        self.spans: list[ReadableSpan] = []

    def keep(self, span: ReadableSpan) -> None:
        """Keep a span of a watched trace."""
        if span.context is not None and span.context.trace_id in self.watched:
            self.spans.append(span)

    def take(self) -> list[ReadableSpan]:
        """The spans kept so far; stop watching."""
        spans, self.spans, self.watched = self.spans, [], set()
        return spans


def _recording(config: pytest.Config) -> _Recorder:
    recorder = config.stash.get(_recorder, None)
    if recorder is None:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider

        provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            provider = TracerProvider(resource=Resource.create({"service.name": "assay-pytest"}))
            trace.set_tracer_provider(provider)
        from opentelemetry.sdk.trace import SpanProcessor

        kept = recorder = _Recorder()

        class _Keep(SpanProcessor):
            def on_end(self, span: ReadableSpan) -> None:
                kept.keep(span)

        provider.add_span_processor(_Keep())
        config.stash[_recorder] = kept
    return recorder


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--assay-out``, ``--assay-fixed``, ``--assay-inconclusive-ok`` and ini options."""
    group = parser.getgroup("assay", "assay: repeated trials with statistical verdicts")
    group.addoption("--assay-out", default=None, metavar="DIR", help="write trial traces to DIR")
    group.addoption(
        "--assay-fixed", action="store_true", help="run every trial (no adaptive stopping)"
    )
    group.addoption(
        "--assay-inconclusive-ok",
        action="store_true",
        help="an INCONCLUSIVE verdict passes the test",
    )
    parser.addini("assay_out", "write trial traces to this folder", default=None)
    parser.addini("assay_inconclusive_ok", "an INCONCLUSIVE verdict passes the test", type="bool")


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker; route trial spans to ``--assay-out`` if given."""
    config.addinivalue_line("markers", _MARKER_HELP)
    config.stash[_run_id] = uuid.uuid4().hex[:16]
    config.stash[_verdicts] = []
    out = config.getoption("assay_out", None) or config.getini("assay_out")
    if out:
        from assay.instrument import configure

        config.stash[_configured] = configure(str(out))
    else:
        config.stash[_configured] = None


def pytest_unconfigure(config: pytest.Config) -> None:
    """Flush the trace set."""
    handle = config.stash.get(_configured, None)
    if handle is not None:
        handle.flush()
        handle.shutdown()


def _settings(item: pytest.Function, marker: pytest.Mark) -> dict[str, Any]:
    from assay.choices import SequentialMethod

    if marker.args:
        pytest.fail("@pytest.mark.assay takes keyword arguments only", pytrace=False)
    unknown = set(marker.kwargs) - _KEYS
    if unknown:
        pytest.fail(
            f"@pytest.mark.assay: unknown argument {sorted(unknown)[0]!r} "
            f"(allowed: {', '.join(sorted(_KEYS))})",
            pytrace=False,
        )
    settings: dict[str, Any] = {
        "runs": 30,
        "threshold": 0.8,
        "adaptive": True,
        "method": SequentialMethod.CONFIDENCE_SEQUENCE,
        "delta": 0.1,
        "alpha": 0.05,
        "beta": 0.2,
        "inconclusive_ok": False,
    }
    settings.update(marker.kwargs)
    shaping = sorted({"delta", "alpha", "beta"} & set(marker.kwargs))
    if shaping and settings["method"] != SequentialMethod.SPRT:
        pytest.fail(
            f"@pytest.mark.assay: {', '.join(shaping)} "
            f"{'shapes' if len(shaping) == 1 else 'shape'} only method='sprt'; the "
            "confidence sequence stops at 95% confidence",
            pytrace=False,
        )
    runs = settings["runs"]
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        pytest.fail("@pytest.mark.assay: runs must be an int >= 1", pytrace=False)
    if item.config.getoption("assay_fixed", False):
        settings["adaptive"] = False
    return settings


def _judgement(s: dict[str, Any]) -> Judgement:
    """The judgement of the marker's settings (recorded on every trial span)."""
    from assay.errors import AssayError
    from assay.judge import Judgement, SequentialDesign

    threshold, runs = float(s["threshold"]), int(s["runs"])
    design = None
    if s["adaptive"] and 0 < threshold < 1:
        try:
            design = SequentialDesign.of(
                s["method"],
                threshold,
                runs,
                confidence=_CONFIDENCE,
                delta=s["delta"],
                alpha=s["alpha"],
                beta=s["beta"],
            )
        except AssayError as exc:
            pytest.fail(f"@pytest.mark.assay: {exc}", pytrace=False)
    return Judgement(threshold=threshold, confidence=_CONFIDENCE, sequential=design)


def _one_trial(
    item: pytest.Function, index: int, run_id: str, judgement: Judgement, recorder: _Recorder
) -> tuple[str, str | None]:
    """Call the test function once as a trial; ``(outcome, failure message)``."""
    from opentelemetry.sdk.trace import ReadableSpan

    from assay import conventions as c
    from assay.instrument import trial

    function = item.obj
    arguments = {name: item.funcargs[name] for name in item._fixtureinfo.argnames}
    outcome, message = c.OUTCOME_PASS, None
    with trial(
        item.nodeid,
        suite=item.module.__name__ if item.module else None,
        run_id=run_id,
        index=index,
        suppress_errors=True,
        attributes=dict(judgement.to_attributes()),
    ) as t:
        recorder.watched.add(t.span.get_span_context().trace_id)
        try:
            function(**arguments)
        except (AssertionError, pytest.fail.Exception) as exc:
            # An assertion (or pytest.fail) inside the test is a failed trial, not an error.
            t.span.record_exception(exc)
            t.failed()
            message = _first_line(exc)
        except Exception as exc:  # any other exception: an error trial, recorded on the span
            message = _first_line(exc)
            raise
    # The outcome the span records (checks and scores recorded in the trial count too).
    span = t.span
    if isinstance(span, ReadableSpan) and span.attributes is not None:
        outcome = str(span.attributes.get(c.TRIAL_OUTCOME, c.OUTCOME_ERROR))
    if outcome == c.OUTCOME_FAIL and message is None:
        message = "a recorded check or score failed"
    return outcome, message


def _first_line(exc: BaseException) -> str:
    """``AssertionError: assert '30 days' in '14 days'``: the exception's first line only.

    pytest's rewritten assertions explain themselves over several lines (``+  where ...``);
    the verdict line is one line, and the span keeps the whole exception.
    """
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _summary(result: TestResult, first_failure: str | None) -> str:
    from assay.judge import pct
    from assay.report import interval_label

    summary = (
        f"assay {result.verdict.value}: {result.passed}/{result.n} trials passed "
        f"({result.errors} errors), {interval_label(result)}, threshold "
        f"{pct(result.threshold, 0)}; {result.verdict_reason}"
    )
    return summary + (f"; first failure, {first_failure}" if first_failure else "")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run an ``assay``-marked test as trials and turn the verdict into its outcome."""
    marker = pyfuncitem.get_closest_marker("assay")
    if marker is None:
        return None
    import polars as pl

    from assay.api import judge_spans
    from assay.instrument import spans_table
    from assay.judge import SequentialTracker, Verdict

    if inspect.iscoroutinefunction(pyfuncitem.obj):
        pytest.fail("@pytest.mark.assay needs a synchronous test function", pytrace=False)
    s = _settings(pyfuncitem, marker)
    judgement = _judgement(s)
    recorder = _recording(pyfuncitem.config)
    recorder.take()
    design = judgement.sequential
    tracker = SequentialTracker(design.build(_CONFIDENCE)) if design is not None else None
    run_id = pyfuncitem.config.stash.get(_run_id, "pytest")
    first_failure: str | None = None
    for index in range(int(s["runs"])):
        outcome, message = _one_trial(pyfuncitem, index, run_id, judgement, recorder)
        if message and first_failure is None:
            first_failure = f"trial {index}: {message}"
        if tracker is not None:
            tracker.feed(outcome == "pass", outcome == "error")
            if tracker.decision is not None:
                break
    # The one pipeline: the trials just recorded, judged as `assay analyze` judges them.
    spans = pl.from_arrow(spans_table(recorder.take()))
    assert isinstance(spans, pl.DataFrame)
    analysis = judge_spans(spans.lazy())
    (result,) = analysis.tests
    summary = _summary(result, first_failure)
    pyfuncitem.user_properties.append(("assay", summary))
    pyfuncitem.config.stash[_verdicts].append((pyfuncitem.nodeid, summary))
    inconclusive_ok = (
        s["inconclusive_ok"]
        or pyfuncitem.config.getoption("assay_inconclusive_ok", False)
        or bool(pyfuncitem.config.getini("assay_inconclusive_ok"))
    )
    # The exit-code rule of every command (docs/cli.md): one test, no baseline, so its verdict.
    if analysis.exit_code(inconclusive_ok) != 0:
        pytest.fail(summary, pytrace=False)
    if result.verdict is Verdict.INCONCLUSIVE:
        # Allowed, not settled: shown as SKIPPED with the verdict (as the JUnit report does),
        # never as a plain PASSED; at the test's place, not this line (pytest_runtest_makereport).
        pyfuncitem.stash[_allowed] = True
        pytest.skip(f"{pyfuncitem.name}: {summary} (allowed by inconclusive_ok)")
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """An allowed INCONCLUSIVE is reported at the test's file and line, as a skip marker is.

    ``pytest.skip`` called here would name this plugin's file as where the test was skipped.
    """
    report = yield
    if item.stash.get(_allowed, False) and report.skipped and isinstance(report.longrepr, tuple):
        path, line, _ = item.location
        report.longrepr = (path, (line or 0) + 1, report.longrepr[2])
    return report


def pytest_terminal_summary(terminalreporter: TerminalReporter) -> None:
    """An ``assay verdicts`` section: every judged test, its verdict and the trials it used.

    A passing test says nothing in pytest's own lines; this section says on how many trials it
    passed (pytest-benchmark adds its table the same way).
    """
    verdicts = terminalreporter.config.stash.get(_verdicts, [])
    if not verdicts:
        return
    terminalreporter.write_sep("=", "assay verdicts")
    for nodeid, summary in verdicts:
        terminalreporter.write_line(f"{nodeid}: {summary}")
