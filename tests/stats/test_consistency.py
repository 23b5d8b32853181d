import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.stats import levenshtein, sequence_similarity, tool_consistency

TOOLS = st.lists(st.sampled_from(["search", "read", "write"]), max_size=9).map(tuple)


def test_known_values() -> None:
    seqs = [("a", "b")] * 3 + [("a", "c")]
    result = tool_consistency(seqs)
    assert result.agreement == pytest.approx(3 * 2 / (4 * 3))
    assert result.distinct == 2
    assert result.most_common[0] == (("a", "b"), 3)
    assert levenshtein(["a", "b", "c"], ["a", "c"]) == 1
    assert sequence_similarity((), ()) == 1.0


def test_fewer_than_two_trials() -> None:
    result = tool_consistency([("a",)])
    assert result.agreement is None and result.mean_similarity is None and result.distinct == 1


@settings(deadline=None)  # CI machines are shared; no timing flakes
@given(st.lists(TOOLS, min_size=2, max_size=12))
def test_agreement_and_similarity_equal_pairwise_definitions(seqs: list[tuple[str, ...]]) -> None:
    result = tool_consistency(seqs)
    pairs = list(itertools.combinations(seqs, 2))
    same = sum(a == b for a, b in pairs) / len(pairs)
    sim = sum(sequence_similarity(a, b) for a, b in pairs) / len(pairs)
    assert result.agreement == pytest.approx(same)
    assert result.mean_similarity == pytest.approx(sim)
    assert 0 <= result.agreement <= result.mean_similarity + 1e-12 <= 1 + 1e-12


def test_mean_similarity_is_sampled_for_many_distinct_paths_and_stays_close() -> None:
    import random

    rng = random.Random(3)
    sequences = [tuple(rng.choice("abcdef") for _ in range(rng.randint(1, 12))) for _ in range(150)]
    exact = tool_consistency(sequences, max_pairs=10**9)
    sampled = tool_consistency(sequences, max_pairs=3000)
    assert exact.similarity_pairs is None and sampled.similarity_pairs == 3000
    assert sampled.mean_similarity == pytest.approx(exact.mean_similarity, abs=0.02)
    assert sampled.agreement == exact.agreement
    again = tool_consistency(sequences, max_pairs=3000)
    assert again.mean_similarity == sampled.mean_similarity  # seeded: repeatable
