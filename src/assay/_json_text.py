"""The text of every JSON document assay writes for its users: orjson, indented by two spaces.

One writer for ``analyze``/``compare``/``run --format json``, ``assay describe`` and the plain
answers (docs/architecture.md, "Parsers and encoders we do not write"). Its text parses to the
values ``json.dumps(document, indent=2)`` would write; it is not the same text: non-ASCII
characters unescaped, floats in orjson's shortest spelling (``8.3e-8``), and a NaN or infinity
written as null (the standard library raised on them: ``tests/report/test_json_text.py`` checks
that no figure of a real document reaches the writer as one).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import orjson

_OPTIONS = (
    orjson.OPT_INDENT_2
    | orjson.OPT_NON_STR_KEYS
    | orjson.OPT_APPEND_NEWLINE
    # numpy's scalars as the numbers they hold: json.dumps took a float64 (a float subclass),
    # and the plans' figures (assay plan --format json) are some.
    | orjson.OPT_SERIALIZE_NUMPY
)


def json_text(document: Any) -> str:
    """``document`` as JSON text indented by two spaces, with a trailing newline.

    :func:`json_bytes`'s text, decoded.
    """
    return json_bytes(document).decode()


def json_bytes(document: Any) -> bytes:
    """``document`` as UTF-8 JSON indented by two spaces, with a trailing newline.

    ``document`` holds dicts, lists, str, int, float, bool, None and numpy scalars.
    An integer past 64 bits, which orjson refuses, sends the document to the standard
    library's encoder instead: the same values (a non-finite float as null there too), exactly.
    Any other value orjson cannot write raises its ``TypeError``, as ``json.dumps`` would.
    """
    try:
        return orjson.dumps(document, option=_OPTIONS)
    except orjson.JSONEncodeError as exc:
        if "64-bit" not in str(exc):  # JSONEncodeError is a TypeError, as json.dumps raises
            raise
    text = json.dumps(_finite(document), indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode()


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinity as None, as orjson writes them."""
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer | np.bool_):
        return value.item()
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
