"""One attribute's value as a string, from its promoted column or the attribute list."""

from __future__ import annotations

import polars as pl

from assay.store import PROMOTED_ATTRIBUTES, coerce_expr, promoted_column

__all__ = ["attribute_as_string"]


def attribute_as_string(attribute: str) -> pl.Expr:
    """An attribute's value as a string: its promoted column, else read from ``attributes``.

    Either way by the one type rule of promoted string columns (``assay.store._coercion``).
    """
    if attribute in PROMOTED_ATTRIBUTES:
        return pl.col(promoted_column(attribute)).cast(pl.String)
    match = (
        pl.col("attributes")
        .list.eval(pl.element().filter(pl.element().struct.field("key") == attribute))
        .list.first()
    )
    return coerce_expr(match, integer=False)
