"""The range checks every statistic applies to its arguments, each with one message.

A level, a rate or a drop outside its range is a usage error (:class:`ConfigError`): the
message names the argument, the range in interval notation and the value given, e.g.
``alpha must lie in (0, 1) (got 1.5)``.
"""

from __future__ import annotations

from assay.errors import ConfigError


def check_range(
    name: str, value: float, *, closed_low: bool = False, closed_high: bool = False
) -> None:
    """Raise ConfigError unless ``value`` lies in the unit interval with the ends asked for.

    Args:
        name: The argument's name, as the message shows it.
        value: The value given.
        closed_low: Whether 0 is allowed.
        closed_high: Whether 1 is allowed.
    """
    above = 0 <= value if closed_low else 0 < value
    below = value <= 1 if closed_high else value < 1
    if not (above and below):
        interval = f"{'[' if closed_low else '('}0, 1{']' if closed_high else ')'}"
        raise ConfigError(f"{name} must lie in {interval} (got {value})")


def check_open_unit(name: str, value: float) -> None:
    """Raise ConfigError unless 0 < value < 1 (a level such as alpha, confidence or power)."""
    check_range(name, value)


def check_probability(name: str, value: float) -> None:
    """Raise ConfigError unless 0 ≤ value ≤ 1 (a rate or a threshold)."""
    check_range(name, value, closed_low=True, closed_high=True)


def check_drop(name: str, value: float) -> None:
    """Raise ConfigError unless 0 < value ≤ 1 (a drop in pass rate worth seeing)."""
    check_range(name, value, closed_high=True)


def check_successes(successes: int, n: int) -> None:
    """Raise ConfigError unless 0 ≤ successes ≤ n (a count of passes among ``n`` trials)."""
    if n < 0 or not 0 <= successes <= n:
        raise ConfigError(f"successes must lie in [0, n] (got {successes} of {n})")
