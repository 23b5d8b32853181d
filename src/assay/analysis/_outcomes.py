"""A trial's recorded outcome (``assay.trial.outcome``): read by the one type rule, or refused.

The promoted column is a cache; the attribute list is the truth. A trial span whose column is
null while its attribute holds a value — a file written before promotion rule 2 (which left a
bool or an array null), another tool's writer, a column nulled by hand — is read from its
attributes instead (``assay.store._coercion``), so the value is checked, never taken for "no
outcome recorded" (which would let the trial pass by default). Any value other than pass, fail
or error is refused by name.
"""

from __future__ import annotations

import polars as pl

from assay import conventions as c
from assay.errors import SchemaError
from assay.store import SpanContents, promoted_column, promoted_from_attributes

__all__ = ["read_outcomes"]

_COLUMN = promoted_column(c.TRIAL_OUTCOME)
_KEYS = ["trace_id", "span_id"]
_FOUND = "_outcome_from_attributes"


def read_outcomes(
    spans: pl.LazyFrame, carriers: pl.DataFrame, contents: SpanContents | None
) -> pl.DataFrame:
    """``carriers`` (the trial spans) with every recorded outcome in their outcome column.

    Reads ``attributes`` only for trial spans whose column is null, and only when some file
    may hold the attribute there (its footer does not rule it out).

    Raises:
        SchemaError: An outcome that is not pass, fail or error (named, with the value).
    """
    unread = carriers[_COLUMN].null_count()
    if unread and (contents is None or contents.outcomes):
        found = (
            spans.filter(
                pl.col(promoted_column(c.TEST_ID)).is_not_null() & pl.col(_COLUMN).is_null()
            )
            .select(*_KEYS, promoted_from_attributes(_COLUMN).alias(_FOUND))
            .filter(pl.col(_FOUND).is_not_null())
            .collect()
        )
        if found.height:
            carriers = (
                carriers.join(found, on=_KEYS, how="left")
                .with_columns(pl.coalesce(_COLUMN, _FOUND).alias(_COLUMN))
                .drop(_FOUND)
            )
    _check(carriers)
    return carriers


def _check(trial_spans: pl.DataFrame) -> None:
    outcomes = trial_spans[_COLUMN].drop_nulls().str.to_lowercase()
    bad = outcomes.filter(~outcomes.is_in(list(c.OUTCOMES)))
    if bad.len():
        raise SchemaError(
            f"{c.TRIAL_OUTCOME} must be one of {', '.join(c.OUTCOMES)} "
            f"(found {bad[0]!r} in {bad.len()} trial(s))"
        )
