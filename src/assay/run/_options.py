"""How a run is configured: options, and each test's maximum, threshold and sequential test."""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.analysis import PriceTable
from assay.choices import ErrorPolicy, SequentialMethod
from assay.errors import ConfigError, OptionError
from assay.judge import Judgement, SequentialDesign, check_choice, check_range
from assay.run._budget import Budget
from assay.run._suite import TestCase

RUNS_FOLDER = "runs"
"""Where ``assay run`` writes when no ``--out`` is given: ``runs/RUN_ID``, one folder per run."""


def run_folder(run_id: str) -> str:
    """The trace set folder of a run given no ``--out``: ``runs/RUN_ID``."""
    return f"{RUNS_FOLDER}/{run_id}"


def planned_out(options: RunOptions) -> str:
    """Where a run with ``options`` will write, as a plan says it before the run has an id."""
    if options.out is not None:
        return options.out
    if options.run_id is not None:
        return run_folder(options.run_id)
    return f"{run_folder('RUN_ID')} (a folder per run)"


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How to run a suite (every field has a CLI flag of the same name)."""

    runs: int | None = None
    """Maximum trials per test, overriding the suite's ``variance.runs``."""
    pass_rate: float | None = None
    """Required pass rate, overriding the suite's ``variance.pass_rate``."""
    adaptive: bool = True
    """Stop each test once its sequential test settles (``--fixed`` turns it off)."""
    method: SequentialMethod = SequentialMethod.CONFIDENCE_SEQUENCE
    """The stopping rule: ``confidence-sequence`` (stop once the anytime-valid interval lies on
    one side of the threshold) or ``sprt``. Either way the verdict is that interval."""
    delta: float | None = None
    """SPRT only: width of the indifference zone above the threshold (default 0.1)."""
    alpha: float | None = None
    """SPRT only: bound on its PASS decision at the threshold; default
    ``1 - variance.confidence_level``."""
    beta: float | None = None
    """SPRT only: bound on its FAIL decision at ``threshold + delta`` (default 0.2)."""
    errors: ErrorPolicy = ErrorPolicy.COUNT
    """``count`` error trials as failures, or ``exclude`` them from the pass rate."""
    concurrency: int = 4
    """Trials running at once."""
    timeout: float | None = 300.0
    """Seconds before a trial is abandoned as ``error``."""
    out: str | None = None
    """Trace set folder; None: ``runs/RUN_ID``, a folder of its own for every run (docs/suites.md,
    "Where the traces go"), so that a later run never adds its trials to an earlier set."""
    seed: int | None = None
    """Base seed: each trial gets a seed derived from it, its test and its index."""
    budget: Budget = field(default_factory=Budget)
    """Run-wide limits."""
    prices: PriceTable | None = None
    """Model prices, for ``max_cost`` and ``thresholds.max_cost``."""
    run_id: str | None = None
    """``assay.run.id``; default ``ASSAY_RUN_ID``, else random."""
    agent_version: str | None = None
    """``assay.agent.version``; default ``ASSAY_AGENT_VERSION``."""

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise OptionError("concurrency", f"must be at least 1 (got {self.concurrency})")
        if self.timeout is not None and self.timeout <= 0:
            raise OptionError("timeout", f"must be positive (got {self.timeout})")
        if self.runs is not None and self.runs < 1:
            raise OptionError("runs", f"must be at least 1 (got {self.runs})")
        check_range("pass_rate", self.pass_rate, closed=True)
        check_choice("method", self.method, SequentialMethod)
        check_choice("errors", self.errors, ErrorPolicy)
        if self.method != SequentialMethod.SPRT:
            flags = {"delta": "--sprt-delta", "alpha": "--sprt-alpha", "beta": "--beta"}
            given = [flag for n, flag in flags.items() if getattr(self, n) is not None]
            if given:
                verb = "shapes" if len(given) == 1 else "shape"
                raise ConfigError(
                    f"{', '.join(given)} {verb} only the SPRT (--sequential sprt); the "
                    "confidence sequence stops at the suite's confidence level"
                )
        if self.budget.max_cost is not None and self.prices is None:
            raise ConfigError("--max-cost needs a price table (--prices FILE)")


DEFAULT_DELTA = 0.1
"""SPRT: the indifference zone's width when ``--delta`` is not given."""
DEFAULT_BETA = 0.2
"""SPRT: the bound on a FAIL decision at ``threshold + delta`` when ``--beta`` is not given."""


def test_plan(test: TestCase, options: RunOptions) -> tuple[int, float, float]:
    """``(max runs, threshold, alpha)`` of a test under these options."""
    runs = options.runs if options.runs is not None else test.variance.runs
    threshold = options.pass_rate if options.pass_rate is not None else test.variance.pass_rate
    alpha = options.alpha if options.alpha is not None else 1 - test.variance.confidence_level
    return runs, threshold, alpha


def build_sequential(test: TestCase, options: RunOptions) -> SequentialDesign | None:
    """The test's sequential design, or None for a fixed run (or a threshold of 0 or 1).

    A test from an EvalView file runs all its trials, as EvalView's statistical mode does.
    """
    runs, threshold, alpha = test_plan(test, options)
    if not options.adaptive or test.fixed_runs or not 0 < threshold < 1:
        return None
    try:
        return SequentialDesign.of(
            options.method,
            threshold,
            runs,
            confidence=test.variance.confidence_level,
            delta=DEFAULT_DELTA if options.delta is None else options.delta,
            alpha=alpha,
            beta=DEFAULT_BETA if options.beta is None else options.beta,
        )
    except ConfigError as exc:
        raise ConfigError(f"test {test.id!r}: {exc}") from None


def test_judgement(test: TestCase, options: RunOptions) -> Judgement:
    """What decides the test's verdict: recorded on each of its trial spans."""
    _, threshold, _ = test_plan(test, options)
    return Judgement(
        threshold=threshold,
        confidence=test.variance.confidence_level,
        errors=options.errors,
        min_mean_score=test.variance.min_mean_score,
        max_std_dev=test.variance.max_std_dev,
        sequential=build_sequential(test, options),
    )


test_judgement.__test__ = False  # type: ignore[attr-defined]
