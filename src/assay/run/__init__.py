"""Running an agent's test suite many times: adaptively, within budgets, recording traces.

::

    from assay.run import RunOptions, load_agent, load_suite, run_suite

    suite = load_suite("examples/suite.yaml")
    result = run_suite(suite, load_agent(agent="examples.agent:run"), RunOptions(out="traces"))
    raise SystemExit(result.exit_code())
"""

from assay.run._agents import (
    Agent,
    AgentError,
    CallableAgent,
    CommandAgent,
    HttpAgent,
    load_agent,
)
from assay.run._budget import Budget, Price, PriceTable, load_prices
from assay.run._checks import evaluate_checks, output_text
from assay.run._options import RunOptions
from assay.run._plan import PlanRow, plan
from assay.run._results import RunResult, TrialRecord
from assay.run._runner import run_suite
from assay.run._spans import TrialSpanCollector, TrialSpans
from assay.run._state import Progress, TestStatus
from assay.run._suite import (
    Expected,
    OutputExpectation,
    Suite,
    TestCase,
    Thresholds,
    Variance,
)
from assay.run._suite_load import load_suite

__all__ = [
    "Agent",
    "AgentError",
    "Budget",
    "CallableAgent",
    "CommandAgent",
    "Expected",
    "HttpAgent",
    "OutputExpectation",
    "PlanRow",
    "Price",
    "PriceTable",
    "Progress",
    "RunOptions",
    "RunResult",
    "Suite",
    "TestCase",
    "TestStatus",
    "Thresholds",
    "TrialRecord",
    "TrialSpanCollector",
    "TrialSpans",
    "Variance",
    "evaluate_checks",
    "load_agent",
    "load_prices",
    "load_suite",
    "output_text",
    "plan",
    "run_suite",
]
