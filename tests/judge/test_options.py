"""Options name their field when a value is bad; the command line maps fields to flags."""

from __future__ import annotations

import pytest

from assay.errors import OptionError
from assay.judge import AnalyzeOptions, parse_ks


def test_parse_ks_sorts_and_deduplicates() -> None:
    assert parse_ks("10, 1,5,1") == (1, 5, 10)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("1,five", "must be whole numbers separated by commas (got '1,five')"),
        ("0,3", "needs whole numbers ≥ 1 (got '0,3')"),
        (" , ", "needs whole numbers ≥ 1 (got ' , ')"),
    ],
)
def test_bad_ks_name_the_field_not_a_flag(text: str, problem: str) -> None:
    with pytest.raises(OptionError) as caught:
        parse_ks(text)
    assert (caught.value.field, caught.value.problem) == ("ks", problem)
    assert str(caught.value) == f"ks {problem}"


def test_an_invalid_options_object_cannot_be_made() -> None:
    with pytest.raises(OptionError) as caught:
        AnalyzeOptions(ks=(0, 5))
    assert caught.value.field == "ks"
