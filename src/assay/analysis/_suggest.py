"""The ``assay analyze`` command ``assay describe`` proposes, and the ``--pass-when`` it needs.

A suggestion must never lead to a false PASS: trials whose evaluations say "fail" pass when no
rule reads those evaluations. So the command is built from the same trials and the same unread
evaluations as ``assay analyze``'s ``unused_evaluations`` warning (``_evaluations.py``), and
carries the ``--pass-when`` that warning names.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from assay import conventions as c
from assay.analysis._describe import Candidate
from assay.analysis._evaluations import pass_when_text
from assay.analysis._trials import read_trials
from assay.errors import AssayError


@dataclass(frozen=True, slots=True)
class Suggestion:
    """The ``assay analyze`` command ``describe`` proposes.

    The best candidate, and the ``--pass-when`` that reads the evaluations the trials carry
    (without it they would pass).
    """

    test_attribute: str
    """The candidate attribute that names the test."""
    pass_when: str | None
    """A rule reading every evaluation no other rule reads (``assay analyze`` warns with the
    same rule when it is left out); None when there is none to read."""
    unspelt: tuple[str, ...] = ()
    """Evaluation names no ``--pass-when`` can spell: the command still leaves them out."""

    @property
    def command(self) -> str:
        """The command line, ``PATH`` standing for the trace set."""
        line = "assay analyze PATH"
        if self.test_attribute != c.TEST_ID:
            line += f" --test-attribute {shlex.quote(self.test_attribute)}"
        if self.pass_when is not None:
            line += f" --pass-when {shlex.quote(self.pass_when)}"
        return line


def suggest(spans: pl.LazyFrame, candidates: Sequence[Candidate]) -> Suggestion | None:
    """The ``assay analyze`` command for the best candidate on root spans.

    With the ``--pass-when`` its trials need: built from the same trials and the same unread
    evaluations as ``assay analyze``'s ``unused_evaluations`` warning, so that following it
    never passes a trial its evaluations fail unread.
    """
    best = next((k for k in candidates if k.on_roots), None)
    if best is None:
        return None
    try:
        unused = read_trials(spans, test_attribute=best.attribute).unused_evaluations
    except AssayError:  # no trial analyze could judge: the attribute alone is the hint
        return Suggestion(best.attribute, None)
    return Suggestion(
        best.attribute,
        pass_when_text(unused, None),
        tuple(u.name for u in unused if u.clause is None),
    )
