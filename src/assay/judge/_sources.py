"""Where a test's trials come from: runs (``assay.run.id``) and agent versions, said out loud.

Two runs written into one folder, or two versions of the agent, pooled into one pass rate
would otherwise read as one experiment ("100% (60/60)"). Every test carries how many trials
each run and each version holds; when a test holds several, the analysis warns
(``mixed_runs``, ``mixed_versions``) and names ``--run-id`` / ``--current-version``, which
select one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

import polars as pl

from assay.analysis import columns as tc
from assay.quality import Finding

__all__ = ["Share", "mixed_finding", "mixed_findings", "share_text", "shares", "shares_by_test"]

_SHOWN = 4


@dataclass(frozen=True, slots=True)
class Share:
    """The trials of a test that one run (or one agent version) holds."""

    id: str | None
    """The run id or agent version; None for trials that record none."""
    trials: int
    """Its trials."""


def shares(trials: pl.DataFrame, column: str) -> tuple[Share, ...]:
    """Trials per value of ``column`` (``run_id`` or ``agent_version``), most first."""
    return _ordered(trials.group_by(column).len().rows())


def shares_by_test(trials: pl.DataFrame, column: str) -> dict[str, tuple[Share, ...]]:
    """:func:`shares` of every test of a trials table at once (one group-by, not one a test)."""
    counts = trials.group_by(tc.TEST_ID, column).len().rows()
    per_test: dict[str, list[tuple[str | None, int]]] = {}
    for test, value, n in counts:
        per_test.setdefault(str(test), []).append((value, n))
    return {test: _ordered(rows) for test, rows in per_test.items()}


def _ordered(counts: Iterable[tuple[str | None, int]]) -> tuple[Share, ...]:
    ordered = sorted(counts, key=lambda row: (-row[1], row[0] is None, str(row[0])))
    return tuple(Share(value, int(n)) for value, n in ordered)


def share_text(held: Iterable[Share]) -> str:
    """``run-a 30, run-b 30, (none) 4``."""
    return ", ".join(f"{s.id if s.id is not None else '(none)'} {s.trials}" for s in held)


_HINTS = {
    "mixed_runs": ("runs (assay.run.id)", "select one with --run-id ID"),
    "mixed_versions": (
        "agent versions (assay.agent.version)",
        "select one with --current-version V, or compare two with --baseline-version",
    ),
}


def mixed_finding(
    kind: str, per_test: Mapping[str, tuple[Share, ...]], *, baseline: bool = False
) -> list[Finding]:
    """The ``mixed_runs`` or ``mixed_versions`` warning for the tests that hold several.

    Args:
        kind: ``mixed_runs`` or ``mixed_versions``.
        per_test: Test id → its shares (runs, or agent versions).
        baseline: The shares are the baseline's (the message says so; ``--baseline-run-id``).
    """
    what, hint = _HINTS[kind]
    if baseline:
        hint = "select one with --baseline-run-id ID" if kind == "mixed_runs" else hint
    mixed = [(name, held) for name, held in per_test.items() if len(held) > 1]
    if not mixed:
        return []
    listed = "; ".join(f"{name}: {share_text(held)}" for name, held in mixed[:_SHOWN])
    if len(mixed) > _SHOWN:
        listed += f"; and {len(mixed) - _SHOWN} more"
    ids = sorted({str(s.id) for _, held in mixed for s in held if s.id is not None})
    return [
        Finding(
            kind,
            f"{'in the baseline, ' if baseline else ''}{len(mixed)} "
            f"{'test pools' if len(mixed) == 1 else 'tests pool'} trials of several {what} "
            f"into one pass rate ({listed}): {hint}",
            count=len(mixed),
            examples=tuple(ids[:3]),
            tests=tuple(name for name, _ in mixed),
        )
    ]


class _Sourced(Protocol):
    @property
    def test_id(self) -> str: ...
    @property
    def runs(self) -> tuple[Share, ...]: ...
    @property
    def agent_versions(self) -> tuple[Share, ...]: ...


def mixed_findings(
    tests: Iterable[_Sourced], baseline: pl.DataFrame | None = None
) -> list[Finding]:
    """Both warnings (runs, then agent versions) for a set of results, and for the baseline.

    Args:
        tests: The test results (their ``runs`` and ``agent_versions``).
        baseline: The baseline's trials table, when comparing (its tests named in test-id
            order).
    """
    held = list(tests)
    found = [
        *mixed_finding("mixed_runs", {t.test_id: t.runs for t in held}),
        *mixed_finding("mixed_versions", {t.test_id: t.agent_versions for t in held}),
    ]
    for kind, column in (("mixed_runs", tc.RUN_ID), ("mixed_versions", tc.AGENT_VERSION)):
        per_test = _mixed_shares(baseline, column) if baseline is not None else {}
        found += mixed_finding(kind, dict(sorted(per_test.items())), baseline=True)
    return found


def _mixed_shares(trials: pl.DataFrame, column: str) -> dict[str, tuple[Share, ...]]:
    """:func:`shares_by_test` of the tests holding several values of ``column`` only.

    The baseline's shares are read for this warning alone, and most tests hold one run: one
    count of distinct values a test (a null is one) finds the few to share out.
    """
    several = (
        trials.group_by(tc.TEST_ID)
        .agg(pl.col(column).n_unique())
        .filter(pl.col(column) > 1)[tc.TEST_ID]
    )
    if several.is_empty():
        return {}
    return shares_by_test(trials.filter(pl.col(tc.TEST_ID).is_in(several.implode())), column)
