"""The pytest plugin: ``@pytest.mark.assay(runs=30, threshold=0.8)`` runs a test as trials.

::

    import pytest

    @pytest.mark.assay(runs=30, threshold=0.8)
    def test_refund_answer():
        answer = my_agent("Can I get a refund?")
        assert "30 days" in answer            # an assertion failure is a failed trial

Each call of the function is one trial (an ``assay.instrument.trial`` span; ``--assay-out DIR``
writes them to a trace set). An assertion failure is a failed trial, any other exception an
``error`` trial. Adaptive stopping (the runner's sequential test) ends the repetition once the
verdict is settled. The verdict is the test's outcome: PASS passes, FAIL fails, INCONCLUSIVE
fails (with the interval in the message) unless ``inconclusive_ok=True`` on the marker,
``--assay-inconclusive-ok`` or the ini option ``assay_inconclusive_ok = true``.

Fixtures are set up once per test, not per trial. Registered through the ``pytest11`` entry
point, so installing assay enables it.
"""

from __future__ import annotations

import inspect
import uuid
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from assay.instrument import Configured  # noqa: F401 - named in a string annotation

# assay's own modules (OpenTelemetry, scipy) are imported inside the hooks, so that a pytest
# session with assay installed but no `assay` marker pays nothing for the plugin.

_MARKER_HELP = (
    "assay(runs=30, threshold=0.8, adaptive=True, method='sprt', delta=0.1, alpha=0.05, "
    "beta=0.2, inconclusive_ok=False): run the test as repeated trials and judge its pass rate"
)
_KEYS = {"runs", "threshold", "adaptive", "method", "delta", "alpha", "beta", "inconclusive_ok"}
_configured = pytest.StashKey["Configured | None"]()
_run_id = pytest.StashKey[str]()


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
        "method": "sprt",
        "delta": 0.1,
        "alpha": 0.05,
        "beta": 0.2,
        "inconclusive_ok": False,
    }
    settings.update(marker.kwargs)
    runs = settings["runs"]
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        pytest.fail("@pytest.mark.assay: runs must be an int >= 1", pytrace=False)
    if item.config.getoption("assay_fixed", False):
        settings["adaptive"] = False
    return settings


def _one_trial(item: pytest.Function, index: int, run_id: str) -> tuple[str, str | None]:
    """Call the test function once as a trial; ``(outcome, failure message)``."""
    from assay.instrument import trial

    function = item.obj
    arguments = {name: item.funcargs[name] for name in item._fixtureinfo.argnames}
    outcome, message = "pass", None
    try:
        with trial(
            item.nodeid,
            suite=item.module.__name__ if item.module else None,
            run_id=run_id,
            index=index,
        ) as t:
            try:
                function(**arguments)
            except (AssertionError, pytest.fail.Exception) as exc:
                # An assertion (or pytest.fail) inside the test is a failed trial, not an error.
                t.span.record_exception(exc)
                t.failed()
                outcome, message = "fail", f"{type(exc).__name__}: {exc}".rstrip(": ")
            else:
                # Checks recorded with assay.instrument.check() can fail a trial too.
                if getattr(t, "_failed_checks", None) or getattr(t, "_low_scores", None):
                    outcome, message = "fail", "a recorded check or score failed"
    except Exception as exc:  # any other exception: an error trial, recorded on the span
        outcome, message = "error", f"{type(exc).__name__}: {exc}"
    return outcome, message


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run an ``assay``-marked test as trials and turn the verdict into its outcome."""
    marker = pyfuncitem.get_closest_marker("assay")
    if marker is None:
        return None
    from assay.stats import SequentialDecision, sequential_test, wilson_interval
    from assay.verdict import Verdict, threshold_verdict

    if inspect.iscoroutinefunction(pyfuncitem.obj):
        pytest.fail("@pytest.mark.assay needs a synchronous test function", pytrace=False)
    s = _settings(pyfuncitem, marker)
    threshold, runs = float(s["threshold"]), int(s["runs"])
    seq = None
    if s["adaptive"] and 0 < threshold < 1:
        from assay.errors import AssayError

        try:
            seq = sequential_test(
                s["method"],
                threshold,
                delta=s["delta"],
                alpha=s["alpha"],
                beta=s["beta"],
                max_trials=runs,
            )
        except AssayError as exc:
            pytest.fail(f"@pytest.mark.assay: {exc}", pytrace=False)
    run_id = pyfuncitem.config.stash.get(_run_id, "pytest")
    n = passed = errors = 0
    first_failure: str | None = None
    decision: SequentialDecision | None = None
    for index in range(runs):
        outcome, message = _one_trial(pyfuncitem, index, run_id)
        n += 1
        passed += outcome == "pass"
        errors += outcome == "error"
        if message and first_failure is None:
            first_failure = f"trial {index}: {message}"
        if seq is not None:
            state = seq.state(passed, n)
            if state.decision is not SequentialDecision.CONTINUE:
                decision = state.decision
                break
    interval = wilson_interval(passed, n, 0.95)
    if seq is not None:
        assert decision is not None
        verdict = Verdict(decision.value)
        how = f"{seq.name} after {n} of {runs} trials"
    else:
        verdict = threshold_verdict(interval, threshold).verdict
        how = f"fixed run of {n} trials"
    summary = (
        f"assay {verdict.value}: {passed}/{n} trials passed ({errors} errors), "
        f"{interval.confidence:.0%} CI [{interval.low:.1%}, {interval.high:.1%}], "
        f"threshold {threshold:.0%}; {how}"
    )
    if first_failure:
        summary += f"; first failure, {first_failure}"
    pyfuncitem.user_properties.append(("assay", summary))
    inconclusive_ok = (
        s["inconclusive_ok"]
        or pyfuncitem.config.getoption("assay_inconclusive_ok", False)
        or bool(pyfuncitem.config.getini("assay_inconclusive_ok"))
    )
    if verdict is Verdict.FAIL or (verdict is Verdict.INCONCLUSIVE and not inconclusive_ok):
        pytest.fail(summary, pytrace=False)
    return True
