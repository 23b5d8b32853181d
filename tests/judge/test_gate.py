import pytest

from assay.errors import ConfigError
from assay.judge import (
    BehaviourChange,
    BehaviourResult,
    BehaviourVerdict,
    gate_failures,
    parse_fail_on,
)


def _change(feature: str, effect: float | None, *, changed: bool = True) -> BehaviourChange:
    ratio = feature in {"cost", "input_tokens", "latency", "steps"} or feature.startswith(
        "tool_calls:"
    )
    return BehaviourChange(
        feature=feature,
        label=feature,
        kind="continuous" if ratio else "binary",
        baseline=1.0 if ratio else 0.8,
        current=(effect or 0) if ratio else 0.8 + (effect or 0),
        effect=effect,
        measure="ratio" if ratio else "difference",
        ci_low=None,
        ci_high=None,
        p_value=0.001,
        adjusted_p=0.01 if changed else 0.4,
        method="test",
        changed=changed,
        power=0.9,
        minimal_effect=1.25 if ratio else 0.2,
        path=None,
        note=None,
        baseline_traces=(),
        current_traces=(),
    )


def _result(*changes: BehaviourChange) -> BehaviourResult:
    verdict = BehaviourVerdict.CHANGED if any(c.changed for c in changes) else "UNCHANGED"
    return BehaviourResult(
        BehaviourVerdict(verdict), "", changes, 30, 30, 0.05, "holm", len(changes), 0.8, None
    )


def test_cost_limit_fires_only_past_the_limit_and_only_when_changed() -> None:
    rule = parse_fail_on("cost:+20%")
    assert (rule.target, rule.limit, rule.direction) == ("cost", 0.2, "up")
    assert gate_failures(_result(_change("cost", 1.25)), [rule])
    assert not gate_failures(_result(_change("cost", 1.15)), [rule])
    assert not gate_failures(_result(_change("cost", 0.5)), [rule])
    assert not gate_failures(_result(_change("cost", 1.5, changed=False)), [rule])
    assert gate_failures(_result(_change("cost", 0.7)), [parse_fail_on("cost:30%")])


def test_tools_behaviour_and_families() -> None:
    result = _result(_change("uses:verify", -0.8), _change("latency", 1.1))
    assert gate_failures(result, [parse_fail_on("tools")])[0].startswith("--fail-on tools:")
    assert not gate_failures(_result(_change("latency", 1.5)), [parse_fail_on("tools")])
    assert gate_failures(_result(_change("latency", 1.5)), [parse_fail_on("behaviour")])
    assert gate_failures(_result(_change("tool_calls:search", 1.4)), [parse_fail_on("tool_calls")])
    assert gate_failures(result, [parse_fail_on("uses:verify:-20%")])
    assert not gate_failures(result, [parse_fail_on("uses:verify:+20%")])
    assert gate_failures(_result(_change("input_tokens", 1.4)), [parse_fail_on("tokens:+10%")])


@pytest.mark.parametrize("bad", ["", "cost:+x%", "tools:+20%", "cost:+0%"])
def test_bad_rules_name_the_flag(bad: str) -> None:
    with pytest.raises(ConfigError, match="--fail-on"):
        parse_fail_on(bad)
