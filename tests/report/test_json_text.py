"""The JSON document's text is ``json.dumps(..., indent=2)``'s, and ``_plain`` walks a result as
``dataclasses`` would."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from typing import Any

import numpy as np
import pytest
from sample_result import build_result as sample_result

from assay.report import analysis_to_dict, render_json
from assay.report._json import _plain


class _Colour(enum.StrEnum):
    RED = "red"


def test_render_json_is_json_dumps_and_raises_its_errors() -> None:
    result = sample_result()
    text = render_json(result)
    assert text == json.dumps(analysis_to_dict(result), indent=2, allow_nan=False) + "\n"
    # A NaN that no figure turned into null: json.dumps's own error, as before.
    broken = dataclasses.replace(
        result, tests=(dataclasses.replace(result.tests[0], pass_rate=math.nan),)
    )
    with pytest.raises(ValueError, match="Out of range float values"):
        render_json(broken)


def test_plain_is_the_dataclass_walk_it_replaces() -> None:
    # The cached field names give what dataclasses.fields gives, in order, for every type.
    def reference(value: Any) -> Any:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {f.name: reference(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, enum.Enum):
            return value.value
        if isinstance(value, dict):
            return {str(k): reference(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [reference(v) for v in value]
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if hasattr(value, "item") and callable(value.item):
            return reference(value.item())
        return value

    result = sample_result()
    for test in result.tests:
        for value in (test, test.flakiness, test.scores, test.tool_consistency, test.usage):
            assert repr(_plain(value)) == repr(reference(value))
    odd = [math.nan, np.float64(2.5), np.int64(4), _Colour.RED, (1, math.inf), {3: None}, type]
    assert repr(_plain(odd)) == repr(reference(odd))
