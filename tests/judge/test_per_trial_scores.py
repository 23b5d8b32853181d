"""Per-trial scores: a few trials read in Python, many grouped by Polars, one answer."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.analysis import columns as tc
from assay.judge._figures import _IN_PYTHON, per_trial_scores

_SCORE = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "name": st.one_of(st.none(), st.sampled_from(["accuracy", "tone", "cost"])),
            "value": st.one_of(st.none(), st.floats(-10, 10, allow_nan=False)),
        }
    ),
)
_DTYPE = pl.List(pl.Struct({"name": pl.String, "value": pl.Float64}))


@settings(deadline=None, max_examples=80)
@given(st.lists(st.one_of(st.none(), st.lists(_SCORE, max_size=4)), min_size=1, max_size=12))
def test_few_trials_score_as_many_do(rows: list[list[dict] | None]) -> None:
    few = pl.DataFrame({tc.SCORES: pl.Series(rows, dtype=_DTYPE)})
    many = pl.concat([few] * (_IN_PYTHON // few.height + 1))
    assert many.height > _IN_PYTHON
    small, large = per_trial_scores(few), per_trial_scores(many)
    assert list(small) == list(large)
    for name, values in small.items():
        np.testing.assert_array_equal(values, large[name][: few.height])
        # The mean of each trial's values of that name; NaN where it has none.
        for row, recorded in enumerate(rows):
            named = [s["value"] for s in recorded or () if s is not None and s["name"] == name]
            known = [v for v in named if v is not None]
            if known:
                assert np.isclose(values[row], np.mean(known))
            else:
                assert np.isnan(values[row])
