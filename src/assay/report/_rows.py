"""The HTML report's typed rows: trials and tool-sequence variants, read once by column name.

The report is given rows as plain mappings (``Analysis.trials.to_dicts()``,
``tool_variants(...).to_dicts()``). Each is read here, once, through the column-name constants
of :mod:`assay.analysis.columns`, into a frozen dataclass; the renderers use attributes only.
A renamed column then fails where the rows are read (mypy for a renamed constant, a
``KeyError`` in the tests for a renamed column) instead of leaving a cell silently empty.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, TypeVar

from assay.analysis import columns as tc

Row = Mapping[str, Any]
"""One row of a table as given to the report (a ``to_dicts()`` element)."""

Status = Literal["error", "fail", "pass"]

# The fields of the scores and checks structs (analysis builds them with these names), and the
# columns of :func:`assay.analysis.tool_variants`. The analysis package publishes no constants
# for them; the report tests read a real trials table and a real variants table through these.
_NAME: Final = "name"
_VALUE: Final = "value"
_CHECK_PASSED: Final = "passed"
_SEQUENCE: Final = "sequence"
_COUNT: Final = "count"
_PASSES: Final = "passes"
_PASS_RATE: Final = "pass_rate"


@dataclass(frozen=True, slots=True)
class Score:
    """One score recorded in a trial."""

    name: str
    value: float | None
    """None: the score was recorded without a numeric value."""


@dataclass(frozen=True, slots=True)
class Check:
    """One check recorded on a trial span."""

    name: str
    passed: bool
    """False also when the check recorded no outcome."""


@dataclass(frozen=True, slots=True)
class TrialRow:
    """The fields of one trial that the HTML report shows."""

    test_id: str
    trial_index: int | None
    """None for traces that carry no trial index (production traces)."""
    trace_id: str
    agent_version: str | None
    passed: bool
    error: bool
    status_message: str | None
    scores: tuple[Score, ...]
    checks: tuple[Check, ...]
    tool_sequence: tuple[str, ...]
    duration_s: float | None
    work_unknown: bool
    """Its trace holds work no convention claims: ``tool_sequence`` is unknown, not empty."""

    @property
    def status(self) -> Status:
        """``error``, ``fail`` or ``pass``: an error trial is neither passing nor failing."""
        if self.error:
            return "error"
        return "pass" if self.passed else "fail"

    @property
    def failed_checks(self) -> tuple[str, ...]:
        """The names of the checks that did not pass, in recorded order."""
        return tuple(c.name for c in self.checks if not c.passed)

    @classmethod
    def read(cls, row: Row) -> TrialRow:
        """The typed trial of one row of the trials table."""
        return cls(
            test_id=str(row[tc.TEST_ID]),
            trial_index=row[tc.TRIAL_INDEX],
            trace_id=row[tc.TRACE_ID] or "",
            agent_version=row[tc.AGENT_VERSION],
            passed=bool(row[tc.PASSED]),
            error=bool(row[tc.ERROR]),
            status_message=row[tc.STATUS_MESSAGE],
            # A null struct in the list (no field recorded) has nothing to show: left out.
            scores=tuple(Score(str(s[_NAME]), s[_VALUE]) for s in row[tc.SCORES] or () if s),
            checks=tuple(
                Check(str(c[_NAME]), bool(c[_CHECK_PASSED])) for c in row[tc.CHECKS] or () if c
            ),
            tool_sequence=tuple(row[tc.TOOL_SEQUENCE] or ()),
            duration_s=row[tc.DURATION_S],
            work_unknown=bool(row[tc.WORK_UNKNOWN]),
        )


@dataclass(frozen=True, slots=True)
class VariantRow:
    """One distinct tool sequence of a test (a row of :func:`assay.analysis.tool_variants`)."""

    test_id: str
    sequence: tuple[str, ...]
    count: int
    """Trials that took this sequence."""
    passes: int
    """Of those, the passing trials."""
    pass_rate: float
    """``passes / count``."""

    @classmethod
    def read(cls, row: Row) -> VariantRow:
        """The typed variant of one row of the variants table."""
        return cls(
            test_id=str(row[tc.TEST_ID]),
            sequence=tuple(row[_SEQUENCE] or ()),
            count=int(row[_COUNT]),
            passes=int(row[_PASSES]),
            pass_rate=float(row[_PASS_RATE]),
        )


class _OfTest(Protocol):
    @property
    def test_id(self) -> str: ...


_T = TypeVar("_T", bound=_OfTest)


def _by_test(items: Iterable[_T]) -> dict[str, list[_T]]:
    grouped: dict[str, list[_T]] = {}
    for item in items:
        grouped.setdefault(item.test_id, []).append(item)
    return grouped


def trials_by_test(rows: Iterable[Row]) -> dict[str, list[TrialRow]]:
    """The typed trials of each test, in the order given."""
    return _by_test(TrialRow.read(row) for row in rows)


def variants_by_test(rows: Iterable[Row]) -> dict[str, list[VariantRow]]:
    """The typed variants of each test, in the order given (most frequent first)."""
    return _by_test(VariantRow.read(row) for row in rows)
