import json
import sys
from pathlib import Path

import numpy as np

from assay.judge import CostSummary, behaviour_diff
from assay.report._behaviour import (
    behaviour_html,
    behaviour_lines,
    behaviour_to_dict,
    cost_text,
    cost_to_dict,
)

sys.path.insert(0, str(Path(__file__).parents[1] / "judge"))
from test_behaviour_verdict import _pair  # noqa: E402


def test_behaviour_object_has_the_contract_fields_and_renders() -> None:
    result = behaviour_diff(_pair(np.random.default_rng(1), 30, verify=0.0))
    document = json.loads(json.dumps(behaviour_to_dict(result)))
    assert document["verdict"] == "CHANGED"
    first = document["changes"][0]
    assert {"feature", "baseline", "current", "effect", "ci", "p_value", "adjusted_p"} <= set(first)
    assert set(first["ci"]) == {"low", "high"}
    assert len(document["features"]) >= len(document["changes"])
    lines = behaviour_lines(result)
    assert lines[0].startswith("behaviour CHANGED:")
    assert any("typical trials: baseline b" in line for line in lines[1:])
    page = behaviour_html(result, "https://ui/trace/{trace_id}")
    assert "What changed: CHANGED" in page and 'href="https://ui/trace/b' in page
    # The names the sentences quote in backticks are code on the page, not backticks.
    assert "use <code>verify</code>" in page and "`" not in page
    assert behaviour_lines(None) == [] and behaviour_html(None) == ""


def test_cost_text() -> None:
    summary = CostSummary.of([0.01, 0.02, float("nan")], "prices.yaml")
    cost = cost_to_dict(summary)
    assert cost["priced_trials"] == 2 and cost["unpriced_trials"] == 1
    text = cost_text(summary)
    assert text is not None and "$0.0300" in text and "$0.0150 per trial" in text
    assert "1 trials unpriced" in text and "prices.yaml" in text
    none = CostSummary.of([float("nan")], "default")
    assert cost_text(none) == "cost unknown: no price for the models of 1 trials"
    assert cost_text(None) is None
