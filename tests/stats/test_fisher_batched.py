"""Fisher exact tests of many tables at once: each p-value is ``scipy.stats.fisher_exact``'s."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from assay.stats.two_sample._fisher import _KNOWN, fisher_two_sided

_CELL = st.integers(0, 60)
_TABLE = st.tuples(_CELL, _CELL, _CELL, _CELL)


def _scipy(tables: list[tuple[int, int, int, int]]) -> list[float]:
    return [float(sps.fisher_exact([[a, b], [c, d]]).pvalue) for a, b, c, d in tables]


@settings(deadline=None, max_examples=150)
@given(st.lists(_TABLE, min_size=1, max_size=12))
def test_small_tables_bit_for_bit(tables: list[tuple[int, int, int, int]]) -> None:
    assert fisher_two_sided(np.array(tables)).tolist() == _scipy(tables)


@settings(deadline=None, max_examples=40)
@given(st.integers(0, 2**32 - 1), st.sampled_from([50, 400, 4000, 40000]))
def test_large_tables_as_explanations_make_them(seed: int, trials: int) -> None:
    # A test's trials split by outcome and by a feature, as the explanations count them.
    rng = np.random.default_rng(seed)
    tables = [
        tuple(int(v) for v in rng.multinomial(trials, rng.dirichlet([1, 1, 1, 1])))
        for _ in range(8)
    ]
    assert fisher_two_sided(np.array(tables)).tolist() == _scipy(tables)


def test_ties_empty_margins_and_extremes() -> None:
    tables = [
        (0, 0, 0, 0),  # nothing
        (0, 5, 0, 3),  # an empty column
        (3, 0, 2, 0),  # the other
        (4, 4, 0, 0),  # an empty row
        (5, 5, 5, 5),  # the mode: p = 1
        (0, 10, 10, 0),  # as far as it goes
        (1, 0, 0, 1),
        (2000, 0, 0, 2000),  # probabilities that underflow
    ]
    assert fisher_two_sided(np.array(tables)).tolist() == _scipy(tables)


def test_a_table_tested_before_is_scipys_in_any_batch() -> None:
    # Tables seen before are looked up; each p-value stays that table's, whatever its batch.
    _KNOWN.clear()
    tables = [(3, 1, 0, 4), (2, 2, 2, 2), (0, 3, 4, 1), (3, 1, 0, 4)]
    first = fisher_two_sided(np.array(tables)).tolist()
    again = fisher_two_sided(np.array(tables[::-1] + [(5, 0, 1, 6)])).tolist()
    alone = [fisher_two_sided(np.array([t])).tolist()[0] for t in tables]
    assert first == alone == _scipy(tables)
    assert again == _scipy(tables[::-1] + [(5, 0, 1, 6)])
    assert set(_KNOWN) == set(tables) | {(5, 0, 1, 6)}
