"""Whose behaviour is diffed, and over which family its features are adjusted.

A case judged alone (no suite comparison decides it) is diffed alone: its features are
Holm-adjusted within the case, and pooled across tests only under ``--adjust``
(:mod:`._behaviour`). A case in a compared suite (docs/cli.md, "What decides the exit code")
is one of many, and its features are adjusted across every feature of its suite's cases —
Holm, or Benjamini–Hochberg under ``--adjust bh`` — as a case's drop is: over 2,000 cases
adjusted one case at a time, two draws of one agent showed 2 cases CHANGED, and a
``--fail-on behaviour`` rule would have failed the suite on noise.

At that level a case of a few trials can show no change in a tool's use: Fisher's test of
5/5 → 0/5 reaches p = 0.0079 at best, above the 0.05 / 2,000 Holm's first step needs over a
suite of 2,000 cases. Such a case is not diffed (the diff cannot speak, and over thousands
of cases it is most of a comparison's cost); a note says so, and ``--case-behaviour`` or a
``--fail-on`` rule has every case diffed anyway.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import replace

import polars as pl

from assay.choices import Adjustment, ErrorPolicy
from assay.judge._behaviour import test_behaviours
from assay.judge._behaviour_result import BehaviourResult
from assay.judge._options import AnalyzeOptions
from assay.judge._regression import tally
from assay.stats import binary_shift


def case_behaviours(
    current: Mapping[str, pl.DataFrame],
    baseline: Mapping[str, pl.DataFrame],
    options: AnalyzeOptions,
    without_errors: Set[str],
    suites: Mapping[str, Sequence[str]] | None = None,
    sizes: Mapping[str, tuple[int, int]] | None = None,
) -> tuple[dict[str, BehaviourResult], list[str]]:
    """The behaviour verdict of every case both versions ran that can show a change.

    Args:
        current: The current version's trials per test id.
        baseline: The baseline's trials per test id.
        options: The analysis options (alpha, power, adjust, confidence, fail_on,
            case_behaviour).
        without_errors: Tests whose error trials are left out of n (and of the diff).
        suites: Each compared suite's case ids, by the suite's name as reports say it; a case
            in none of them is diffed alone.
        sizes: Each test's counted trials in the baseline and the current version (their
            tallies, :func:`assay.judge._regression.tallies`); None: tallied here.

    Returns:
        The results by test id, and notes naming the cases left undiffed and why.
    """
    both = [name for name in current if name in baseline]
    method = Adjustment.BH if options.adjust == Adjustment.BH else Adjustment.HOLM
    pooled = replace(options, adjust=method)
    every = options.case_behaviour or bool(options.fail_on)
    results: dict[str, BehaviourResult] = {}
    notes: list[str] = []
    placed: set[str] = set()
    present = set(both)
    for suite, cases in (suites or {}).items():
        members = [c for c in cases if c in present and c not in placed]
        placed.update(members)
        if not members:
            continue
        diffed = members
        if not every:
            counts = sizes or _sizes(members, current, baseline, without_errors)
            diffed, note = _can_show(members, counts, pooled)
            notes += [f"suite {suite}: {note}"] if note else []
        results.update(_diffs(diffed, current, baseline, pooled, without_errors))
    alone = [name for name in both if name not in placed]
    results.update(_diffs(alone, current, baseline, options, without_errors))
    return results, notes


def _diffs(
    names: Sequence[str],
    current: Mapping[str, pl.DataFrame],
    baseline: Mapping[str, pl.DataFrame],
    options: AnalyzeOptions,
    without_errors: Set[str],
) -> dict[str, BehaviourResult]:
    if not names:
        return {}
    return test_behaviours(
        {name: current[name] for name in names},
        {name: baseline[name] for name in names},
        options,
        without_errors,
    )


def _sizes(
    names: Sequence[str],
    current: Mapping[str, pl.DataFrame],
    baseline: Mapping[str, pl.DataFrame],
    without_errors: Set[str],
) -> dict[str, tuple[int, int]]:
    """Each case's counted trials in both versions, by the regression's one count (its tally)."""

    def counted(frame: pl.DataFrame, name: str) -> int:
        policy = ErrorPolicy.EXCLUDE if name in without_errors else ErrorPolicy.COUNT
        return tally(frame, policy).n

    return {name: (counted(baseline[name], name), counted(current[name], name)) for name in names}


def _can_show(
    members: Sequence[str], sizes: Mapping[str, tuple[int, int]], options: AnalyzeOptions
) -> tuple[list[str], str | None]:
    """The suite's cases whose trial counts let a tool's use change at the suite's level.

    The level is Holm's first step over the suite's cases, alpha / C (the family holds at
    least one feature a case, so no feature can pass below it); under Benjamini–Hochberg it
    is alpha (the most a step-up rejects at). A case passes when Fisher's p-value of the most
    extreme table its counts allow (every baseline trial uses the tool, no current trial
    does) lies below that level.
    """
    level = options.alpha / len(members) if options.adjust == Adjustment.HOLM else options.alpha
    floors = {size: _smallest_p(*size) for size in set(sizes.values())}
    kept = [name for name in members if floors[sizes[name]] < level]
    if len(kept) == len(members):
        return kept, None
    left = [name for name in members if floors[sizes[name]] >= level]
    usual, _ = max(
        ((size, sum(1 for n in left if sizes[n] == size)) for size in {sizes[n] for n in left}),
        key=lambda pair: (pair[1], pair[0]),
    )
    base_n, current_n = usual
    trials = (
        f"{base_n} trials a version"
        if base_n == current_n
        else f"{base_n} baseline and {current_n} current trials"
    )
    name = "Holm" if options.adjust == Adjustment.HOLM else "Benjamini–Hochberg"
    return kept, (
        f"behaviour not diffed for {len(left)} of its {len(members)} cases: at "
        f"{trials} a change in a tool's use reaches p = {floors[usual]:.2g} at best "
        f"({base_n}/{base_n} → 0/{current_n}), above the {level:.2g} {name} needs over "
        f"{len(members)} cases: the suite's behaviour diff answers across them; "
        "--case-behaviour diffs every case"
    )


def _smallest_p(n_baseline: int, n_current: int) -> float:
    """Fisher's two-sided p-value of every baseline trial against no current trial (1: none)."""
    if min(n_baseline, n_current) == 0:
        return 1.0
    return binary_shift(n_baseline, n_baseline, 0, n_current).p_value
