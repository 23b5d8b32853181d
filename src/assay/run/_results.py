"""What a run produces: one record per trial while it runs, then the judgement of its traces.

The verdicts of a run are not computed here: once the trials are written, the run's own traces
go through the one judgement pipeline (:func:`assay.analyze` with the run's id), so ``assay
run`` and a later ``assay analyze`` of the same traces report the same figures and verdicts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from assay.judge import AnalysisResult, TestResult

if TYPE_CHECKING:
    from assay.api import Analysis


@dataclass(frozen=True, slots=True)
class TrialRecord:
    """One finished trial, as the runner saw it (for the live display and the budgets)."""

    test_id: str
    """The test case."""
    index: int
    """0-based trial number within the test."""
    outcome: str
    """``pass``, ``fail`` or ``error``."""
    duration_s: float
    """Wall time of the trial."""
    input_tokens: int
    """Prompt tokens recorded in the trial."""
    output_tokens: int
    """Completion tokens recorded in the trial."""
    llm_calls: int
    """LLM calls recorded in the trial."""
    cost: float
    """USD, from the price table (0 without one)."""
    error: str | None = None
    """What went wrong, for an ``error`` trial."""
    tools: tuple[str, ...] = ()
    """The trial's tool calls in start-time order."""

    @property
    def passed(self) -> bool:
        """True for a passing trial."""
        return self.outcome == "pass"


@dataclass(frozen=True, slots=True)
class RunResult:
    """Everything a run did, and the judgement of the traces it wrote."""

    suite: str
    """Suite name."""
    run_id: str
    """``assay.run.id`` of every trial."""
    out: str
    """The trace set the trials were written to."""
    result: AnalysisResult
    """The verdicts: the run's traces judged as ``assay analyze`` judges them."""
    max_runs: Mapping[str, int]
    """Test id → the most trials it could have used, in suite order."""
    trials: tuple[TrialRecord, ...]
    """Every finished trial, in completion order."""
    max_trials: int
    """The most trials the run could have used (sum of the tests' maxima)."""
    elapsed_s: float
    """Wall time."""
    tokens: int
    """Tokens used."""
    cost: float
    """USD spent."""
    stop_reason: str | None
    """Why the run stopped early (a budget, an interrupt), or None."""
    interrupted: bool
    """True if stopped by Ctrl-C."""
    warnings: tuple[str, ...] = ()
    """Things the user should know (e.g. models without a price)."""
    analysis: Analysis | None = field(default=None, compare=False)
    """The analysis behind ``result`` (trials table included); None if no trial was written."""

    @property
    def tests(self) -> tuple[TestResult, ...]:
        """One result per test, in suite order."""
        order = {test_id: i for i, test_id in enumerate(self.max_runs)}
        return tuple(sorted(self.result.tests, key=lambda t: order.get(t.test_id, len(order))))

    def exit_code(self, inconclusive_ok: bool = False) -> int:
        """0 PASS, 1 FAIL, 3 INCONCLUSIVE (0 if ``inconclusive_ok``): the rule of docs/cli.md."""
        return self.result.exit_code(inconclusive_ok)
