"""``--fail-on``: which behaviour changes turn a test into a FAIL (for CI).

Behaviour changes inform by default. Each ``--fail-on`` rule names what may not change:

* ``behaviour`` — any feature that changed (the test's behaviour verdict is CHANGED);
* ``tools`` — a change in the tools used: the tool path, a tool's use (appeared, vanished, more
  or fewer trials) or its calls per trial;
* a feature, optionally with a limit: ``cost``, ``cost:+20%`` (mean cost per trial up by at
  least 20 %), ``latency:+50%``, ``tokens:+10%`` (input or output tokens), ``steps:-30%``,
  ``uses:verify`` (any change in the share of trials calling ``verify``), ``uses:verify:-20%``
  (a drop of at least 20 percentage points). A bare family name (``tool_calls``, ``uses``,
  ``model``) covers every tool or model.

A rule only fires on a feature that changed after adjustment (never on noise), and with a
limit only when the estimated effect reaches it: ``+N%`` is a ratio ≥ 1 + N/100 for means and a
difference ≥ +N percentage points for shares; ``-N%`` the same downwards; ``N%`` either way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from assay.errors import ConfigError
from assay.judge._behaviour_result import BehaviourChange, BehaviourResult, describe_change

Direction = Literal["up", "down", "either"]

TOOL_FEATURES = ("path", "uses", "tool_calls")
"""Feature families that ``--fail-on tools`` covers."""

ALIASES = {"tokens": ("input_tokens", "output_tokens")}
"""Names that stand for several features."""

_DIRECTIONS: dict[str, Direction] = {"+": "up", "-": "down", "": "either"}
_LIMIT = re.compile(r"^(?P<target>.+?):(?P<sign>[+-]?)(?P<number>\d+(?:\.\d+)?)%$")


@dataclass(frozen=True, slots=True)
class FailOn:
    """One ``--fail-on`` rule."""

    target: str
    """``behaviour``, ``tools``, a feature name or family (``cost``, ``uses:verify``, ...)."""
    limit: float | None = None
    """The relative change (0.2 for 20 %) the effect must reach; None: any change."""
    direction: Direction = "either"
    """Which way the change must go."""
    text: str = ""
    """The rule as the user wrote it."""

    def matches(self, change: BehaviourChange) -> bool:
        """Whether ``change`` is a feature this rule watches."""
        return self.watches(change.feature)

    def watches(self, feature: str) -> bool:
        """Whether the feature named ``feature`` is one this rule watches."""
        if self.target == "behaviour":
            return True
        family = feature.split(":", 1)[0]
        if self.target == "tools":
            return family in TOOL_FEATURES
        names = ALIASES.get(self.target, (self.target,))
        return feature in names or family in names

    def fires(self, change: BehaviourChange) -> bool:
        """Whether ``change`` breaks this rule: a watched feature changed past the limit."""
        if not change.changed or not self.matches(change):
            return False
        return self.past_limit(change.effect, change.measure == "ratio")

    def past_limit(self, effect: float | None, ratio: bool) -> bool:
        """Whether an effect (a ratio of means, or a difference of shares) reaches the limit."""
        if self.limit is None:
            return True
        if effect is None:
            # A mean that rose from zero: infinitely many percent up.
            return self.direction != "down"
        if ratio:
            up, down = effect >= 1 + self.limit, effect <= 1 - self.limit
        else:
            up, down = effect >= self.limit, effect <= -self.limit
        return {"up": up, "down": down, "either": up or down}[self.direction]


def parse_fail_on(text: str) -> FailOn:
    """Read one ``--fail-on`` value (see the module docstring).

    Raises:
        ConfigError: A malformed rule, naming it.
    """
    rule = text.strip()
    if not rule:
        raise ConfigError("--fail-on: empty rule (try behaviour, tools or cost:+20%)")
    match = _LIMIT.match(rule)
    if match is None:
        if "%" in rule:
            raise ConfigError(f"--fail-on {text}: write a limit as NAME:+N%, NAME:-N% or NAME:N%")
        return FailOn(rule, text=text)
    target = match["target"]
    if target in ("behaviour", "tools"):
        raise ConfigError(f"--fail-on {text}: {target} takes no limit; name a feature instead")
    direction = _DIRECTIONS[match["sign"]]
    limit = float(match["number"]) / 100
    if limit <= 0:
        raise ConfigError(f"--fail-on {text}: the limit must be above 0%")
    return FailOn(target, limit, direction, text)


def gate_failures(result: BehaviourResult, rules: Sequence[FailOn]) -> tuple[str, ...]:
    """Why ``result`` fails the ``--fail-on`` rules: one line per rule broken (empty: none).

    Args:
        result: A test's behaviour verdict.
        rules: The parsed ``--fail-on`` rules.

    Returns:
        Lines like "--fail-on cost:+20%: cost per trial 0.010 → 0.014, ratio 1.40× [...]".
    """
    out = []
    for rule in rules:
        broken = [c for c in result.changes if rule.fires(c)]
        if broken:
            more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
            out.append(f"--fail-on {rule.text or rule.target}: {describe_change(broken[0])}{more}")
    return tuple(out)
