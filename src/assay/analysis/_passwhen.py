"""``--pass-when``: a trial's pass/fail from the evaluations attached to it.

Grammar (docs/analysis.md)::

    rule   := clause ("and" clause)*
    clause := NAME[.FIELD] OP VALUE
    FIELD  := label | score | passed
    OP     := == | != | >= | > | <= | <
    VALUE  := a number, true / false, or a word ("quoted" if it holds spaces)

``NAME`` is the name of a ``gen_ai.evaluation.result`` (``gen_ai.evaluation.name``), an
``assay.score`` or an ``assay.check`` on any span of the trial. Without ``.FIELD`` the value
decides: a number compares the score, ``true``/``false`` the check, a word the label. When a
trial records the same name more than once, the last record (by time) counts. A trial without
a record of ``NAME`` does not meet the clause; a NaN score meets no comparison.
"""

from __future__ import annotations

import operator
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import polars as pl

from assay.analysis import _columns as tc
from assay.errors import ConfigError

Field = Literal["label", "score", "passed"]

_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}
_CLAUSE = re.compile(r"^\s*(?P<name>[^\s=!<>]+)\s*(?P<op>==|!=|>=|<=|>|<)\s*(?P<value>.+?)\s*$")
_FIELDS: dict[str, Field] = {
    "label": "label",
    "score": "score",
    "value": "score",
    "passed": "passed",
}
_KIND: dict[Field, tuple[str, str]] = {
    "label": ("score", "label"),
    "score": ("score", "value"),
    "passed": ("check", "passed"),
}


@dataclass(frozen=True, slots=True)
class Clause:
    """One comparison of a rule."""

    name: str
    """The evaluation, score or check name."""
    field: Field
    """What is compared: the label, the score or the check's result."""
    op: str
    """One of ``==``, ``!=``, ``>=``, ``>``, ``<=``, ``<``."""
    value: str | float | bool
    """The right-hand side."""


@dataclass(frozen=True, slots=True)
class PassRule:
    """A parsed ``--pass-when`` rule: every clause must hold."""

    text: str
    """The rule as the user wrote it."""
    clauses: tuple[Clause, ...]
    """Its clauses, joined by ``and``."""


def _value(raw: str, field: Field | None, clause: str) -> tuple[Field, str | float | bool]:
    try:
        parts = shlex.split(raw)
    except ValueError:
        parts = []
    if len(parts) != 1:
        raise ConfigError(f"--pass-when: cannot read the value of {clause.strip()!r}")
    text = parts[0]
    quoted = raw.strip()[:1] in "\"'"
    if field in (None, "passed") and not quoted and text.lower() in ("true", "false"):
        return "passed", text.lower() == "true"
    if field in (None, "score") and not quoted:
        try:
            return "score", float(text)
        except ValueError:
            if field == "score":
                raise ConfigError(
                    f"--pass-when: {clause.strip()!r} compares a score with a non-number"
                ) from None
    if field == "passed":
        raise ConfigError(f"--pass-when: {clause.strip()!r}: a check is true or false")
    return "label", text


def parse_pass_when(text: str) -> PassRule:
    """Parse a ``--pass-when`` rule, e.g. ``"correctness.label == pass and quality >= 0.7"``.

    Raises:
        ConfigError: A rule that does not follow the grammar, naming the bad clause.
    """
    clauses: list[Clause] = []
    for part in re.split(r"\s+and\s+", text.strip()):
        match = _CLAUSE.match(part)
        if not match:
            raise ConfigError(
                f"--pass-when: cannot read {part.strip()!r} (expected NAME[.label|.score|.passed]"
                " OP VALUE, OP one of == != >= > <= <, clauses joined by 'and')"
            )
        name, op = match["name"], match["op"]
        head, _, last = name.rpartition(".")
        field = _FIELDS.get(last) if head else None
        if field is not None:
            name = head
        kind, value = _value(match["value"], field, part)
        if kind != "score" and op not in ("==", "!="):
            raise ConfigError(f"--pass-when: {part.strip()!r}: a {kind} takes only == or !=")
        clauses.append(Clause(name, kind, op, value))
    return PassRule(text, tuple(clauses))


def rule_outcomes(located: pl.DataFrame, rule: PassRule) -> pl.DataFrame:
    """Per trial that recorded anything the rule reads: whether it meets the rule.

    Args:
        located: Score and check events with the ``_trial_span_id`` that owns them.
        rule: The parsed rule.

    Returns:
        ``trace_id``, ``_trial_span_id``, ``_rule_pass`` (every clause holds) and
        ``_rule_missing`` (some clause's name was never recorded by the trial). Trials absent
        from the frame recorded none of the names: they do not meet the rule.
    """
    keys = ["trace_id", tc.TRIAL_SPAN_ID]
    per_clause: list[pl.DataFrame] = []
    for i, clause in enumerate(rule.clauses):
        kind, column = _KIND[clause.field]
        last = (
            located.filter(
                (pl.col("kind") == kind)
                & (pl.col("name") == clause.name)
                & pl.col(column).is_not_null()
            )
            .sort("time")
            .group_by(keys)
            .agg(pl.col(column).last().alias("_v"))
        )
        holds = _OPS[clause.op](pl.col("_v"), pl.lit(clause.value))
        if clause.field == "score":
            holds = holds & ~pl.col("_v").is_nan()
        per_clause.append(last.select(*keys, holds.alias(f"_c{i}")))
    merged = per_clause[0]
    for frame in per_clause[1:]:
        merged = merged.join(frame, on=keys, how="full", coalesce=True)
    flags = [pl.col(f"_c{i}") for i in range(len(rule.clauses))]
    return merged.select(
        *keys,
        pl.all_horizontal(f.fill_null(False) for f in flags).alias("_rule_pass"),
        pl.any_horizontal(f.is_null() for f in flags).alias("_rule_missing"),
    )
