"""The one type rule for reading an attribute's value into its promoted column.

A promoted column (``_schema.PROMOTED_ATTRIBUTES``) is a typed cache of one attribute, kept
losslessly in ``attributes``. Every writer (``SpanRows``, the OTLP column builder) and the
reader that rebuilds a column a file lacks apply this rule — :func:`coerce` in Python,
:func:`coerce_expr` in Polars, compared by a test:

* a **string** column holds the text of any value: a string as is, an int in decimal, a double
  as its shortest text, a bool as ``true`` / ``false``, bytes as base64, an array or a kvlist
  as its JSON text. Only an empty value (or no attribute) is null, so a null string column
  means "not recorded" — never "recorded in a type assay did not expect". An
  ``assay.trial.outcome`` of ``false`` or ``["fail"]`` thus reads as ``"false"`` /
  ``'["fail"]'`` and is refused by name (it is not pass, fail or error), where a null would
  have let the trial pass.
* an **integer** column holds an int, a double that is a whole number, or a string that is an
  integer (surrounding spaces allowed), within int64; anything else (a bool, ``9.5``,
  ``"x"``, ``"1e30"``, an array) is null, and the attribute list keeps the original.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import pyarrow as pa

if TYPE_CHECKING:  # the exporter writes through this module: no Polars import for it
    import polars as pl

__all__ = ["PROMOTION_KEY", "PROMOTION_RULE", "coerce", "coerce_expr"]

PROMOTION_KEY: Final = b"assay.promotion"
"""Parquet file metadata: the version of this rule its writer applied."""
PROMOTION_RULE: Final = b"2"
"""This rule's version. Files without it (older writers, other tools) may hold a promoted
attribute whose column is null (rule 1 left a bool or an array in a string column null)."""


def _text(attribute: Mapping[str, Any]) -> str | None:
    type_ = attribute["type"]
    if type_ == "string":
        return str(attribute["string_value"])
    if type_ == "int":
        return str(attribute["int_value"])
    if type_ == "double":
        return str(attribute["double_value"])
    if type_ == "bool":
        return "true" if attribute["bool_value"] else "false"
    if type_ == "bytes":
        return base64.b64encode(attribute["bytes_value"]).decode()
    if type_ == "empty":
        return None
    return str(attribute["json_value"])  # arrays and kvlists: their JSON text


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _integer(attribute: Mapping[str, Any]) -> int | None:
    type_ = attribute["type"]
    value: int | None = None
    if type_ == "int":
        value = int(attribute["int_value"])
    elif type_ == "double":
        real = float(attribute["double_value"])
        value = int(real) if real.is_integer() else None
    elif type_ == "string":
        try:
            value = int(attribute["string_value"])
        except ValueError:
            value = None
    if value is None or not _INT64_MIN <= value <= _INT64_MAX:
        return None  # as Polars' cast: beyond int64 is null
    return value


def coerce(attribute: Mapping[str, Any], target: pa.DataType) -> Any:
    """The value of an encoded attribute for a promoted column of type ``target`` (or None)."""
    if pa.types.is_string(target):
        return _text(attribute)
    if pa.types.is_integer(target):
        return _integer(attribute)
    return None


def coerce_expr(found: pl.Expr, integer: bool) -> pl.Expr:
    """:func:`coerce` over a column of encoded attribute structs (null where none was found)."""
    import polars as pl

    kind = found.struct.field("type")
    text, whole, real = (
        found.struct.field(f) for f in ("string_value", "int_value", "double_value")
    )
    if integer:
        return (
            pl.when(kind == "int")
            .then(whole)
            .when((kind == "double") & (real == real.floor()))
            .then(real.cast(pl.Int64, strict=False))
            .when(kind == "string")
            .then(text.str.strip_chars().cast(pl.Int64, strict=False))
        )
    flag = found.struct.field("bool_value")
    return (
        pl.when(kind == "string")
        .then(text)
        .when(kind == "int")
        .then(whole.cast(pl.String))
        .when(kind == "double")
        .then(real.cast(pl.String))
        .when(kind == "bool")
        .then(pl.when(flag).then(pl.lit("true")).otherwise(pl.lit("false")))
        .when(kind == "bytes")
        .then(found.struct.field("bytes_value").bin.encode("base64"))
        .when(kind != "empty")
        .then(found.struct.field("json_value"))
    )
