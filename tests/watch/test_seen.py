"""The index of spans counted: exact against a Python set within its bound, bounded beyond."""

from __future__ import annotations

import numpy as np

from assay.watch import SeenSpans


def test_each_key_is_fresh_once_as_a_set_says_across_batches_and_growth() -> None:
    rng = np.random.default_rng(11)
    seen = SeenSpans(max_spans=1_000_000)
    held: set[int] = set()
    for _ in range(30):
        keys = rng.integers(1, 40_000, size=int(rng.integers(0, 9_000))).astype(np.uint64)
        fresh = seen.fresh(keys)
        expected = np.zeros(keys.size, dtype=bool)
        for i, key in enumerate(keys.tolist()):
            if key not in held:
                held.add(key)
                expected[i] = True
        np.testing.assert_array_equal(fresh, expected)
    assert seen.held == len(held)


def test_past_its_bound_it_keeps_the_latest_half_and_forgets_the_oldest() -> None:
    seen = SeenSpans(max_spans=1_000)
    first = np.arange(1, 501, dtype=np.uint64)
    assert seen.fresh(first).all()
    later = np.arange(501, 1_601, dtype=np.uint64)  # 1,100 more: two generations turn over
    assert seen.fresh(later).all()
    assert seen.held <= 1_000
    # the latest 500 are always recognised; the first ones are forgotten, counted again
    assert not seen.fresh(later[-500:]).any()
    assert seen.fresh(first[:10]).all()


def test_each_key_keeps_its_rank_in_either_generation_until_updated() -> None:
    seen = SeenSpans(max_spans=1_000)
    keys = np.arange(1, 801, dtype=np.uint64)  # the first 500 move to the older generation
    ranks = keys * np.uint64(7)
    assert seen.fresh(keys, ranks).all()
    np.testing.assert_array_equal(seen.ranks(keys), ranks)
    seen.update(keys[::2], ranks[::2] + np.uint64(1))  # both generations: 400 updated
    expected = ranks.copy()
    expected[::2] += np.uint64(1)
    np.testing.assert_array_equal(seen.ranks(keys), expected)
    # a key not held, and one remembered without a rank, hold 0 (unknown)
    assert not seen.ranks(np.arange(5_000, 5_010, dtype=np.uint64)).any()
    bare = np.arange(9_000, 9_010, dtype=np.uint64)
    assert seen.fresh(bare).all()
    assert not seen.ranks(bare).any()
    # a repeat keeps the rank first remembered
    assert not seen.fresh(keys[-5:], np.full(5, 3, dtype=np.uint64)).any()
    np.testing.assert_array_equal(seen.ranks(keys[-5:]), expected[-5:])
