"""Running an agent's test suite many times: adaptively, within budgets, recording traces.

::

    from assay.run import RunOptions, load_agent, load_suite, run_suite

    suite = load_suite("examples/suite.yaml")
    result = run_suite(suite, load_agent(agent="examples.agent:run"), RunOptions(out="traces"))
    raise SystemExit(result.exit_code())

Comparing two versions over the suite, stopping once the paired difference settles::

    from assay.run import PairedRunOptions, run_paired

    result = run_paired(suite, load_agent(agent="new:run"), RunOptions(out="traces"),
                        PairedRunOptions(delta=0.05), baseline_agent=load_agent(agent="old:run"))
"""

from assay.analysis import Price, PriceTable, load_prices
from assay.errors import AgentError
from assay.run._agents import (
    Agent,
    CallableAgent,
    CommandAgent,
    HttpAgent,
    agents_for,
    load_agent,
)
from assay.run._budget import Budget
from assay.run._checks import evaluate_checks, output_text
from assay.run._display import LogProgress, RichProgress, render_plan, render_run_summary
from assay.run._mocks import MockError, mocked_result
from assay.run._options import RunOptions
from assay.run._paired import CONSTRUCTION as PAIRED_CONSTRUCTION
from assay.run._paired import DESIGN as PAIRED_DESIGN
from assay.run._paired import (
    PairedCase,
    PairedRunOptions,
    PairedRunResult,
    VersionTally,
    load_baseline_rates,
    run_paired,
)
from assay.run._plan import PlanRow, plan
from assay.run._results import RunResult, TrialRecord
from assay.run._runner import run_suite
from assay.run._state import Progress, TestStatus
from assay.run._suite import (
    AgentSpec,
    Expected,
    OutputExpectation,
    ScoreWeights,
    Suite,
    TestCase,
    Thresholds,
    Turn,
    Variance,
)
from assay.run._suite_load import filter_error, load_suite

__all__ = [
    "PAIRED_CONSTRUCTION",
    "PAIRED_DESIGN",
    "Agent",
    "AgentError",
    "AgentSpec",
    "Budget",
    "CallableAgent",
    "CommandAgent",
    "Expected",
    "HttpAgent",
    "MockError",
    "OutputExpectation",
    "PairedCase",
    "PairedRunOptions",
    "PairedRunResult",
    "VersionTally",
    "PlanRow",
    "Price",
    "PriceTable",
    "Progress",
    "LogProgress",
    "RichProgress",
    "RunOptions",
    "RunResult",
    "Suite",
    "TestCase",
    "TestStatus",
    "Thresholds",
    "TrialRecord",
    "Turn",
    "ScoreWeights",
    "Variance",
    "agents_for",
    "evaluate_checks",
    "filter_error",
    "load_agent",
    "load_baseline_rates",
    "load_prices",
    "load_suite",
    "mocked_result",
    "output_text",
    "plan",
    "render_plan",
    "render_run_summary",
    "run_paired",
    "run_suite",
]
