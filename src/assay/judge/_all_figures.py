"""Every figure of every test, from one read of the trials table (:func:`figures_by_test`).

The one place a test's figures are computed: scores, pass@k and pass^k, tool consistency,
flakiness, failure explanations, usage, durations, the first error and the tool errors. A test
is a range of rows of the trials table; one test alone is one range (``tests=[TestRows(0, n,
...)]``). The columns are read once for the whole table — numpy arrays, the scores split by
name, the tool paths and model lists coded once — and each test is a range of rows of them.
What numpy or scipy would be called for once a test is asked of every test at once: the
means, spreads and percentiles of samples of one size in one matrix
(:func:`assay.stats.sample_moments`), the failure explanations' tests together
(:func:`assay.stats.explain_many`), each as the lone sample would give it, bit for bit (checked
in ``tests/stats``). A set of thousands of tests would otherwise pay a dozen Polars queries and
numpy and scipy calls a test (5,000 tests of 200 trials: about 20 CPU-s).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal, TypeVar, overload

import numpy as np
import numpy.typing as npt
import polars as pl

from assay import conventions as c
from assay.analysis import (
    column_features,
    is_work_feature,
    model_features,
    path_features,
    taken_in_order,
)
from assay.analysis import columns as tc
from assay.judge._figures import (
    DurationSummary,
    Figures,
    Usage,
    _first_error,
    _k_values,
    primary_score,
    score_columns,
)
from assay.judge._path_table import PathTable
from assay.judge._tool_errors import ToolErrors, tool_errors
from assay.stats import (
    FailureRequest,
    FailureTests,
    Flakiness,
    Moments,
    ScoreSummary,
    ToolConsistency,
    ToolPaths,
    explain_tested,
    failure_tests,
    flakiness_of,
    pass_at_ks,
    pass_hat_ks,
    preloaded,
    sample_moments,
    score_summaries,
    tool_consistency,
)

__all__ = ["TestRows", "figures_by_test"]

IntArray = npt.NDArray[np.intp]
_T = TypeVar("_T", bound=np.generic)
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
CountArray = npt.NDArray[np.float64] | npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class TestRows:
    """One test: its rows of the trials table and how they are judged."""

    __test__ = False  # not a pytest test class

    start: int
    """Its first row."""
    stop: int
    """One past its last row."""
    exclude_errors: bool
    """Error trials are left out of the counted trials (``errors="exclude"``)."""
    confidence: float
    """Confidence of its score intervals."""


def figures_by_test(
    table: pl.DataFrame,
    tests: Sequence[TestRows],
    *,
    ks: tuple[int, ...],
    score_ci: str,
    seed: int,
    alpha: float,
) -> list[Figures]:
    """Every figure of every test, in the order of ``tests``.

    A test's figures depend on its own rows only (one test alone is ``tests`` of one range),
    but for the failure explanations: their p-values are adjusted over every comparison of
    every test in ``tests`` (:func:`assay.stats.explain_many` with ``across_tests``). A null
    ``passed`` or ``error`` flag reads as False (the trials table holds none).

    Args:
        table: The trials table; each test is a range of its rows.
        tests: The tests' rows, error policies and score confidences.
        ks: The k of pass@k and pass^k.
        score_ci: ``t`` or ``bootstrap``.
        seed: Seed of bootstrap resampling.
        alpha: Significance level of the failure explanations.
    """
    figures: list[Figures] = []
    asking: list[int] = []
    tested: list[FailureTests] = []

    def run(box: list[list[TestRows]]) -> tuple[list[Figures], list[int], FailureTests]:
        part = box.pop()
        first = min(t.start for t in part)
        last = max(t.stop for t in part)
        rows = table.slice(first, last - first)
        moved = [replace(t, start=t.start - first, stop=t.stop - first) for t in part]
        found, requests = _figures(rows, moved, ks=ks, score_ci=score_ci, seed=seed)
        # The explanations' tests run here, beside the other runs; only their adjustment
        # over every test waits for all of them.
        return found, [i for i, _ in requests], failure_tests([r for _, r in requests])

    held = sum(t.stop - t.start for t in tests)
    large = held >= PARTS_FROM_ROWS and held >= PARTS_FROM_TEST_ROWS * len(tests)
    at_once = PARTS_AT_ONCE if large else 1
    # Runs read at once hold 1/at_once of ROWS_AT_ONCE each: the arrays held stay as many.
    size = min(ROWS_AT_ONCE // at_once, -(-held // at_once))
    parts = _parts(tests, size)
    if at_once > 1:
        # scipy's modules, imported where a function needs them, are imported here first (or
        # their background import awaited), so that no run's thread imports a module.
        preloaded()
    made = (
        taken_in_order(parts, run, "assay-figures", at_once)
        if at_once > 1
        else (run([part]) for part in parts)
    )
    for found, asked, part_tested in made:
        asking += [len(figures) + i for i in asked]
        tested.append(part_tested)
        figures += found
    if asking:
        # Adjusted over every comparison of every test: the chance of any explanation when
        # nothing differs stays at most alpha over the set (docs/statistics.md, "Why did it
        # fail?").
        explained = explain_tested(tested, alpha=alpha, across_tests=True)
        for i, factors in zip(asking, explained, strict=True):
            figures[i] = replace(figures[i], failure_explanations=tuple(factors))
    return figures


LATENCY_RESOLUTION_S: Final = 0.001
"""Latency differences between failing and passing trials below a millisecond are not
reported as explanations (:data:`assay.stats.RELATIVE_RESOLUTION` applies as well)."""


ROWS_AT_ONCE: Final = 1_000_000
"""Rows whose columns the figures read at once: tests go in runs of about this many rows.

A test's figures depend on its own rows only, so runs of tests give each test the figures of
the whole table read at once, while the arrays read stay those of a million rows, whatever
the table's size (10M trials would otherwise hold 0.7 GiB more at once).
"""


PARTS_AT_ONCE: Final = 2
"""Runs of tests whose figures are made at once, each in a thread, from
:data:`PARTS_FROM_ROWS` rows on: most of a run's time is numpy's, Polars' and scipy's, which
let go of Python's lock, so two runs keep both cores busy where one run left one idle
(docs/scale.md, "Eighteenth phase")."""
PARTS_FROM_ROWS: Final = 100_000
"""Rows from which the tests are read in :data:`PARTS_AT_ONCE` runs at once: below, a thread
costs more than it saves."""
PARTS_FROM_TEST_ROWS: Final = 10_000
"""Rows a test holds on average from which its runs are read at once. The figures of many
small tests are mostly Python's own work a test, which holds Python's lock, so two runs take
turns at it and pay for the turns: 5,000 tests of 200 trials took 2.5 s and 3.1 CPU-s in two
runs at once, 2.2 s and 2.5 CPU-s in one (docs/scale.md, "Eighteenth phase")."""


def _parts(tests: Sequence[TestRows], rows: int) -> list[list[TestRows]]:
    """``tests`` in order, in runs of at most ``rows`` rows (a larger test is a run alone)."""
    parts: list[list[TestRows]] = []
    size = 0
    for test in tests:
        count = test.stop - test.start
        if not parts or size + count > rows:
            parts.append([])
            size = 0
        parts[-1].append(test)
        size += count
    return parts


def _figures(
    table: pl.DataFrame,
    tests: Sequence[TestRows],
    *,
    ks: tuple[int, ...],
    score_ci: str,
    seed: int,
) -> tuple[list[Figures], list[tuple[int, FailureRequest]]]:
    """:func:`figures_by_test` of tests read at once, and their explanations' questions.

    The failure explanations are left out: their questions, by position, are asked of the
    whole set at once.
    """
    ranges = [(t.start, t.stop) for t in tests]
    read = _Read.of(table, ranges)
    samples = _Samples()
    drafts: list[_Draft | Figures] = []
    lists = zip(read.paths.paths_by_range(ranges), read.models.by_range(ranges), strict=True)
    for at, (test, (paths, models)) in enumerate(zip(tests, lists, strict=True)):
        drafts.append(read.draft(at, test, tuple(ks), samples, paths, models))
    spreads = sample_moments(samples.spreads, percentiles=False)
    durations = sample_moments(samples.durations, spread=False)
    summaries = score_summaries(
        samples.scores, samples.confidences, ci=score_ci, seed=seed, bounds=samples.ranges
    )
    figures = [
        d if isinstance(d, Figures) else d.figures(spreads, durations, summaries) for d in drafts
    ]
    asking = [(i, d.request) for i, d in enumerate(drafts) if isinstance(d, _Draft) and d.request]
    return figures, asking


class _Samples:
    """The samples every test's figures ask numpy about, to be answered all at once."""

    def __init__(self) -> None:
        self.spreads: list[FloatArray] = []
        self.durations: list[FloatArray] = []
        self.scores: list[FloatArray] = []
        self.confidences: list[float] = []
        self.ranges: list[tuple[tuple[float, float], str] | None] = []

    def add_spread(self, values: FloatArray) -> int:
        """Ask for the mean and spread of ``values``; the answer's position."""
        self.spreads.append(values)
        return len(self.spreads) - 1

    def add_durations(self, values: FloatArray) -> int:
        """Ask for the mean and p90 of ``values``; the answer's position."""
        self.durations.append(values)
        return len(self.durations) - 1

    def add_score(self, name: str, values: FloatArray, confidence: float) -> int:
        """Ask for the score summary of ``values``; its position among the summaries."""
        self.scores.append(values)
        self.confidences.append(confidence)
        self.ranges.append(score_range(name, values))
        return len(self.scores) - 1


def score_range(name: str, values: FloatArray) -> tuple[tuple[float, float], str] | None:
    """The range score ``name`` is known to lie in, and how it is known; None: unknown.

    ``"declared"``: the scale assay records the score on (``evalview_score``: 0-100, as
    ``assay watch`` knows it). ``"assumed"``: any other score whose values all lie in [0, 1],
    the default scale of a score (``assay watch`` assumes it too). A value outside the range
    voids it: the interval is then not cut (docs/statistics.md, "Scores").
    """
    known = c.KNOWN_SCORE_RANGES.get(name)
    bounds, source = (known, "declared") if known is not None else ((0.0, 1.0), "assumed")
    low, high = bounds
    if values.size and (float(values.min()) < low or float(values.max()) > high):
        return None
    return bounds, source


@dataclass(slots=True)  # not frozen: made once a test, its __init__ plain assignments
class _Draft:
    """One test's figures with the numbers still to come from the samples' answers."""

    n: int
    n_passed: int
    n_errors: int
    unknown: int
    scores: dict[str, int]
    """Score name → its summary's position."""
    primary: str | None
    consistency: ToolConsistency | None
    spreads: dict[str, int]
    """Flakiness component → the position of its finite values' moments."""
    durations: int
    usage: Usage
    pass_k: tuple[dict[str, float | None] | None, dict[str, float | None] | None, tuple[str, ...]]
    first_error: str | None
    tool_errors: ToolErrors | None
    request: FailureRequest | None
    trials: int
    """Every trial of the test, error trials included."""
    passed_all: int
    """Passing trials among them."""

    def figures(
        self, spread: Moments, durations: Moments, summaries: Sequence[ScoreSummary]
    ) -> Figures:
        """The figures, given the answers (failure explanations still to come)."""
        scores = {name: summaries[at] for name, at in self.scores.items()}
        flaky: Flakiness | None = None
        if self.trials:
            spreads = {
                name: (float(spread.mean[at]), float(spread.std[at]))
                for name, at in self.spreads.items()
                if spread.n[at] >= 2
            }
            flaky = flakiness_of(
                self.trials,
                self.passed_all,
                consistency=self.consistency,
                errors=self.n_errors,
                spreads=spreads,
            )
        pass_at_k, pass_hat_k, notes = self.pass_k
        return Figures(
            usage=None if self.unknown else self.usage,
            duration_s=DurationSummary.of_moments(durations, self.durations),
            pass_at_k=pass_at_k,
            pass_hat_k=pass_hat_k,
            scores=scores,
            primary_score=self.primary if scores else None,
            tool_consistency=(
                self.consistency if self.trials >= 2 and self.consistency is not None else None
            ),
            flakiness=flaky,
            failure_explanations=(),
            first_error=self.first_error,
            tool_errors=self.tool_errors,
            work_unknown=self.unknown,
            # A tied score has no interval: the test's notes say so where a reader looks.
            notes=(*notes, *(f"score {k}: {v.note}" for k, v in scores.items() if v.note)),
        )


@functools.lru_cache(maxsize=4096)
def _pass_k(
    n: int, passed: int, ks: tuple[int, ...]
) -> tuple[
    tuple[tuple[str, float | None], ...], tuple[tuple[str, float | None], ...], tuple[str, ...]
]:
    """pass@k, pass^k and their notes for these counts (thousands of tests repeat few)."""
    notes: list[str] = []
    at = _k_values(pass_at_ks(n, passed, ks), "pass@", notes)
    hat = _k_values(pass_hat_ks(n, passed, ks), "pass^", notes)
    return tuple(at.items()), tuple(hat.items()), tuple(notes)


@dataclass(frozen=True, slots=True)
class _Lists:
    """A ``list[str]`` column coded once: each distinct list, and per row the code of its own."""

    distinct: Sequence[tuple[str, ...]]
    """Each distinct list once (a :class:`PathTable` where made from dictionary codes)."""
    codes: IntArray
    calls: tuple[tuple[str, ...], npt.NDArray[np.int32]] | None = None
    """Names (sorted) and each distinct list's count of each, where made from codes."""

    @classmethod
    def of(cls, values: pl.Series) -> _Lists:
        """Distinct lists in no particular order (each test numbers its own, in row order).

        Lists of strings are grouped as lists of their dictionary codes (equal strings, equal
        codes): the group-by then hashes 4 bytes an element, not the string (at most 890 →
        393 MiB more for 1M trials of 20 tool calls).
        """
        lists = values.fill_null([]) if values.null_count() else values
        # Strings, or strings held as a dictionary (a set read in many buckets: COMPACT_TOOLS).
        strings = lists.dtype in (pl.List(pl.String), pl.List(pl.Categorical))
        keys = lists.cast(pl.List(pl.Categorical)) if lists.dtype == pl.List(pl.String) else lists
        frame = pl.DataFrame({"_list": keys}).with_row_index("_row")
        del lists, keys
        groups = frame.group_by("_list").agg(pl.col("_row"))
        codes = np.empty(frame.height, dtype=np.intp)
        members = groups.with_row_index("_k").select("_k", "_row").explode("_row")
        codes[members["_row"].to_numpy()] = members["_k"].to_numpy()
        if strings:
            distinct, calls = _coded_lists(groups["_list"])
            return cls(distinct, codes, calls)
        return cls([tuple(v) for v in groups["_list"].to_list()], codes)

    @classmethod
    def none(cls, rows: int) -> _Lists:
        """Every row the empty list (where no list could tell trials apart)."""
        return cls([()], np.zeros(rows, dtype=np.intp))

    def _chosen(self, codes: IntArray) -> Sequence[tuple[str, ...]]:
        """The distinct lists ``codes``, in that order.

        Of a :class:`PathTable`, a view where they are many (:data:`_VIEW_FROM`): a test's
        figures read a sample of its paths then. A few are made tuples at once: consistency
        compares every pair of up to 45 paths, each read many times.
        """
        if isinstance(self.distinct, PathTable):
            if codes.size >= _VIEW_FROM:
                return self.distinct.view(codes)
            return tuple(map(self.distinct.item, codes.tolist()))
        return tuple(map(self.distinct.__getitem__, codes.tolist()))

    def local(self, codes: IntArray) -> tuple[Sequence[tuple[str, ...]], IntArray]:
        """Some rows' distinct lists in the order the rows first hold them, and their index.

        What :func:`assay.analysis._features.distinct_lists` gives for those rows alone.
        """
        used, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        order = np.argsort(first)
        rank = np.empty(used.size, dtype=np.intp)
        rank[order] = np.arange(used.size)
        return self._chosen(used[order]), rank[inverse.ravel()]

    def paths_by_range(self, ranges: Sequence[tuple[int, int]]) -> list[ToolPaths]:
        """:meth:`by_range` as tool paths, with their call counts where this knows them."""
        if self.calls is None:
            return [ToolPaths(d, i) for d, i in self.by_range(ranges)]
        names, calls = self.calls
        return [
            ToolPaths(d, i, (names, calls[codes]))
            for d, i, codes in self.by_range(ranges, with_codes=True)
        ]

    @overload
    def by_range(
        self, ranges: Sequence[tuple[int, int]], *, with_codes: Literal[False] = False
    ) -> list[tuple[Sequence[tuple[str, ...]], IntArray]]: ...

    @overload
    def by_range(
        self, ranges: Sequence[tuple[int, int]], *, with_codes: Literal[True]
    ) -> list[tuple[Sequence[tuple[str, ...]], IntArray, IntArray]]: ...

    def by_range(self, ranges: Sequence[tuple[int, int]], *, with_codes: bool = False) -> list[Any]:
        """:meth:`local` of each range of rows, all ranges numbered in one pass.

        With ``with_codes``, each range's distinct lists' own codes (positions in
        :attr:`distinct`) come third.
        """
        if not ranges:
            return []
        if len(self.distinct) == 1:  # one list for every row (one model, say)
            return [
                (tuple(self.distinct) if b > a else (), np.zeros(b - a, dtype=np.intp))
                + ((np.zeros(1 if b > a else 0, dtype=np.intp),) if with_codes else ())
                for a, b in ranges
            ]
        starts = np.array([a for a, _ in ranges], dtype=np.int64)
        sizes = np.array([b for _, b in ranges], dtype=np.int64) - starts
        offsets = np.zeros(sizes.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        rows = np.arange(offsets[-1]) - np.repeat(offsets[:-1] - starts, sizes)
        which = np.repeat(np.arange(sizes.size), sizes)
        width = max(len(self.distinct), 1)
        used, first, inverse = np.unique(
            which * width + self.codes[rows], return_index=True, return_inverse=True
        )
        # First holdings come range by range (the rows are laid out so), then in row order.
        order = np.argsort(first)
        rank = np.empty(used.size, dtype=np.int64)
        rank[order] = np.arange(used.size)
        held = np.zeros(sizes.size + 1, dtype=np.int64)
        np.cumsum(np.bincount(used // width, minlength=sizes.size), out=held[1:])
        index = (rank[inverse.ravel()] - held[which]).astype(np.intp)
        global_codes = used[order] % width
        bounds, heads = offsets.tolist(), held.tolist()
        return [
            (
                self._chosen(global_codes[heads[t] : heads[t + 1]]),
                index[bounds[t] : bounds[t + 1]],
            )
            + ((global_codes[heads[t] : heads[t + 1]],) if with_codes else ())
            for t in range(sizes.size)
        ]


def _coded_lists(
    lists: pl.Series,
) -> tuple[Sequence[tuple[str, ...]], tuple[tuple[str, ...], npt.NDArray[np.int32]] | None]:
    """Each ``list[categorical]`` as its strings' codes, and each list's count of each name.

    The lists are a :class:`PathTable` of the names' ranks among the names sorted: a list
    becomes a tuple of strings only when read (300k lists of 16 tool names made 300k tuples,
    0.25–0.45 CPU-s, of which the figures read a few thousand). The counts (names sorted, one
    row a list) are one ``np.bincount`` of the codes: the tool path features read them
    instead of counting names in Python; they are left out (None) where they would take more
    than :data:`_MOST_CALL_CELLS` cells (the lists are then tuples, as the features' cache of
    paths asks), or a list holds a null (read as its Python list, None there).
    """
    flat = lists.explode(empty_as_null=False, keep_nulls=False)
    if flat.null_count():  # a list holding a null: its Python list says None there
        return [tuple(v) for v in lists.cast(pl.List(pl.String)).to_list()], None
    sizes = lists.list.len().fill_null(0).to_numpy().astype(np.int64)
    names = flat.unique()
    ids = names.to_physical().to_numpy()
    strings = names.cast(pl.String).to_list()
    by_id = np.argsort(ids)
    # Each element's name as its rank among the names sorted as strings.
    rank = np.empty(len(strings), dtype=np.int64)
    rank[sorted(range(len(strings)), key=strings.__getitem__)] = np.arange(len(strings))
    physical = flat.to_physical().to_numpy()
    if ids.size and int(ids.max()) < max(physical.size, 256):
        # Dictionary codes as positions: one lookup an element, no search.
        lookup = np.zeros(int(ids.max()) + 1, dtype=np.int32)
        lookup[ids] = rank
        element = lookup[physical]
    else:
        element = rank[by_id][np.searchsorted(ids[by_id], physical)].astype(np.int32)
    del physical
    ordered = sorted(strings)
    bounds = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=bounds[1:])
    table = PathTable(ordered, element, bounds)
    cells = sizes.size * len(ordered)
    if cells > _MOST_CALL_CELLS:
        return list(table), None
    # Cells fit 32 bits (at most _MOST_CALL_CELLS): half the memory of int64 positions.
    owner = np.repeat(np.arange(sizes.size, dtype=np.int32), sizes)
    owner *= len(ordered)
    owner += element
    calls = np.bincount(owner, minlength=cells).astype(np.int32)
    return table, (tuple(ordered), calls.reshape(sizes.size, len(ordered)))


_VIEW_FROM: Final = 1024
"""Distinct lists from which a test's are a :class:`PathView`, not tuples (see ``_chosen``)."""
_MOST_CALL_CELLS: Final = 1 << 24
"""Lists × names up to which :func:`_coded_lists` counts each list's names (64 MiB as int32)."""


@dataclass(frozen=True, slots=True)
class _Scores:
    """Every score name's value per row of the table (NaN where a row has none)."""

    values: dict[str, FloatArray]
    """Name → value per row, names sorted."""
    present: dict[str, BoolArray]
    """Name → whether the row records that name (its value may still be null)."""
    held: dict[str, list[int]]
    """Name → per range of rows asked about, the rows recording it."""
    clean: dict[str, bool]
    """Name → every row of the table has a finite value of it (no NaN to leave out)."""

    @classmethod
    def of(cls, table: pl.DataFrame, ranges: Sequence[tuple[int, int]]) -> _Scores:
        values, present = score_columns(table)
        return cls(
            values,
            present,
            {k: range_sums(present[k], ranges) for k in values},
            {k: bool(np.isfinite(values[k]).all()) for k in values},
        )

    def of_rows(
        self, at: int, start: int, stop: int, keep: BoolArray | None
    ) -> dict[str, FloatArray]:
        """Score name → its values in rows ``start:stop`` (``keep``): the names they record.

        ``at`` is the position of the range among those the names were counted over.
        """
        out = {}
        for name, held in self.held.items():
            if not held[at]:
                continue
            values = self.values[name][start:stop]
            if keep is None:
                out[name] = values
            elif self.present[name][start:stop][keep].any():
                out[name] = values[keep]
        return out


def _models(table: pl.DataFrame) -> int:
    """Distinct model names in the table: with one or none, no model tells trials apart."""
    return table[tc.MODELS].explode().drop_nulls().n_unique()


def range_sums(values: npt.NDArray[np.generic], ranges: Sequence[tuple[int, int]]) -> list[int]:
    """The sum of ``values`` over each range of rows (integers or flags), exact.

    Ranges that cover the rows one after the other (each test's trials, in order) are summed
    by one ``np.add.reduceat``, without an array of the rows' running sums; others through
    the running sums.
    """
    if not ranges:
        return []
    bounds = np.array(ranges, dtype=np.int64).reshape(-1, 2)
    starts, stops = bounds[:, 0], bounds[:, 1]
    if (
        starts[0] == 0
        and stops[-1] == values.size
        and bool((starts[1:] == stops[:-1]).all())
        and bool((stops > starts).all())
    ):
        return np.add.reduceat(values, starts, dtype=np.int64).tolist()  # type: ignore[no-any-return]
    running = np.zeros(values.size + 1, dtype=np.int64)
    np.cumsum(values, out=running[1:])
    return (running[stops] - running[starts]).tolist()  # type: ignore[no-any-return]


def _floats(table: pl.DataFrame, column: str) -> FloatArray:
    """A numeric column as float64 (null: NaN), as each test's ``to_numpy().astype(float)``."""
    return np.asarray(table[column].to_numpy(), dtype=np.float64)


def _count_column(table: pl.DataFrame, column: str) -> CountArray:
    """A count column as Polars holds it where it can (integers without nulls: no copy).

    Each test's rows are made float64 by :func:`_float` when read, what :func:`_floats` of the
    whole column would give them, without a float copy of every row held at once.
    """
    values = table[column]
    if values.dtype.is_integer() and not values.null_count():
        return np.asarray(values.to_numpy(), dtype=np.int64)
    return _floats(table, column)


def _float(values: npt.NDArray[np.number[Any]]) -> FloatArray:
    return values.astype(np.float64, copy=False)


def _flags(values: pl.Series) -> BoolArray:
    """A flag per row (null: False), for counting rows."""
    return np.asarray(values.fill_null(False).to_numpy(), dtype=bool)


_UNKNOWN = "unknown:"
"""Prefix of the sums counting the trials whose value of a column is unknown."""


def _ints(table: pl.DataFrame, column: str) -> npt.NDArray[np.int64]:
    """An integer or flag column for sums (nulls add nothing, as in Polars' sum)."""
    return np.asarray(table[column].fill_null(0).to_numpy(), dtype=np.int64)


@dataclass(frozen=True, slots=True)
class _Read:
    """The columns the figures read, once for the whole table."""

    table: pl.DataFrame
    passed: BoolArray
    error: BoolArray
    tool_calls: CountArray
    llm_calls: CountArray
    error_spans: CountArray
    durations: FloatArray
    durations_finite: bool
    """No duration is infinite: the finite durations are the known ones."""
    clean: frozenset[str]
    """The float columns whose every value is finite: nothing to leave out of a sample."""
    sums: dict[str, list[int]]
    """Per range of rows asked about, the sums of the counted columns."""
    scores: _Scores
    paths: _Lists
    models: _Lists

    @classmethod
    def of(cls, table: pl.DataFrame, ranges: Sequence[tuple[int, int]]) -> _Read:
        unknown = (
            _flags(table[tc.WORK_UNKNOWN])
            if tc.WORK_UNKNOWN in table.columns
            else np.zeros(table.height, dtype=bool)
        )
        passed, error = _flags(table[tc.PASSED]), _flags(table[tc.ERROR])
        durations = _floats(table, tc.DURATION_S)
        sums = {
            tc.PASSED: range_sums(passed, ranges),
            tc.ERROR: range_sums(error, ranges),
            tc.WORK_UNKNOWN: range_sums(unknown, ranges),
            tc.TOOL_ERRORS: range_sums(_flags(table[tc.TOOL_ERRORS] > 0), ranges),
            **{
                c: range_sums(_ints(table, c), ranges)
                for c in (tc.LLM_CALLS, tc.INPUT_TOKENS, tc.OUTPUT_TOKENS)
            },
            # Trials whose tokens are unknown: a test holding one has no token total.
            **{
                _UNKNOWN + c: range_sums(_flags(table[c].is_null()), ranges)
                for c in (tc.INPUT_TOKENS, tc.OUTPUT_TOKENS)
            },
        }
        tool_calls = _count_column(table, tc.TOOL_CALLS)
        return cls(
            table,
            passed,
            error,
            tool_calls,
            _count_column(table, tc.LLM_CALLS),
            _count_column(table, tc.ERROR_SPANS),
            durations,
            not bool(np.isinf(durations).any()),
            frozenset(
                name
                for name, column in ((tc.DURATION_S, durations), (tc.TOOL_CALLS, tool_calls))
                if np.isfinite(column).all()
            ),
            sums,
            _Scores.of(table, ranges),
            _Lists.of(table[tc.TOOL_SEQUENCE]),
            _Lists.of(table[tc.MODELS]) if _models(table) > 1 else _Lists.none(table.height),
        )

    def draft(
        self,
        at: int,
        test: TestRows,
        ks: tuple[int, ...],
        samples: _Samples,
        paths: ToolPaths,
        models: tuple[Sequence[tuple[str, ...]], IntArray],
    ) -> _Draft:
        """One test's figures, its samples handed to ``samples``.

        Args:
            at: Its position among the ranges the columns were summed over.
            test: Its rows.
            ks: The k of pass@k.
            samples: Where to ask for means, spreads and score summaries.
            paths: Its tool paths.
            models: Its distinct model lists and each row's position in them.
        """
        start, stop = test.start, test.stop
        size = stop - start
        sums = self.sums
        passed_all, n_errors = sums[tc.PASSED][at], sums[tc.ERROR][at]
        keep = ~self.error[start:stop] if test.exclude_errors else None
        if keep is None:
            n, n_passed = size, passed_all
        else:
            ok = self.passed[start:stop][keep]
            n, n_passed = int(ok.size), int(ok.sum())
        scores = self.scores.of_rows(at, start, stop, None)
        counted_scores = scores if keep is None else self.scores.of_rows(at, start, stop, keep)
        primary = primary_score(counted_scores)
        summaries = {}
        for name, values in counted_scores.items():
            known = values if self.scores.clean[name] else values[~np.isnan(values)]
            if known.size:
                summaries[name] = samples.add_score(name, known, test.confidence)
        unknown = sums[tc.WORK_UNKNOWN][at]
        consistency = tool_consistency(paths) if not unknown and size else None
        durations = self.durations[start:stop]
        clean = tc.DURATION_S in self.clean
        known = durations if clean else durations[~np.isnan(durations)]
        known_durations = samples.add_durations(known)
        spreads: dict[str, int] = {}
        if primary is not None:
            values = scores[primary]
            clean_scores = self.scores.clean[primary]
            spreads["score_dispersion"] = samples.add_spread(
                values if clean_scores else _finite(values)
            )
        if not unknown:
            calls = _float(self.tool_calls[start:stop])
            clean_calls = tc.TOOL_CALLS in self.clean
            spreads["path_length_dispersion"] = samples.add_spread(
                calls if clean_calls else _finite(calls)
            )
        spreads["latency_dispersion"] = samples.add_spread(
            known if clean or self.durations_finite else _finite(durations)
        )
        request = None
        if 0 < n_passed < n:
            request = self._request(start, stop, keep, paths, models, unknown)
        pass_at, pass_hat, notes = _pass_k(n, n_passed, ks) if n else ((), (), ())
        usage = Usage(
            sums[tc.LLM_CALLS][at],
            *(
                None if sums[_UNKNOWN + c][at] else sums[c][at]
                for c in (tc.INPUT_TOKENS, tc.OUTPUT_TOKENS)
            ),
        )
        return _Draft(
            n=n,
            n_passed=n_passed,
            n_errors=n_errors,
            unknown=unknown,
            scores=summaries,
            primary=primary,
            consistency=consistency,
            spreads=spreads,
            durations=known_durations,
            usage=usage,
            pass_k=(dict(pass_at) if n else None, dict(pass_hat) if n else None, notes),
            first_error=_first_error(self._rows(start, stop)) if n_errors else None,
            tool_errors=None if unknown else self._tool_errors(at, start, stop),
            request=request,
            trials=size,
            passed_all=passed_all,
        )

    def _rows(self, start: int, stop: int) -> pl.DataFrame:
        return self.table.slice(start, stop - start)

    def _tool_errors(self, at: int, start: int, stop: int) -> ToolErrors:
        if not self.sums[tc.TOOL_ERRORS][at]:
            return ToolErrors(0, 0)
        return tool_errors(self._rows(start, stop))

    def _request(
        self,
        start: int,
        stop: int,
        keep: BoolArray | None,
        paths: ToolPaths,
        models: tuple[Sequence[tuple[str, ...]], IntArray],
        unknown: int,
    ) -> FailureRequest:
        """The failure explanations' question: the counted trials' features."""

        def rows(column: npt.NDArray[_T]) -> npt.NDArray[_T]:
            values = column[start:stop]
            return values[keep] if keep is not None else values

        ok = rows(self.passed)
        if keep is not None and not keep.all():
            paths = ToolPaths(*self.paths.local(rows(self.paths.codes)))
            models = self.models.local(rows(self.models.codes))
        # The features of the tool path and of the models are counted per distinct path and
        # model list (a table is the sum of its paths' trials, a sample their values through
        # the index): what features_of gives per trial, without a row per trial and feature.
        failed = ~ok
        tables: list[tuple[str, str | None, str, str | None, tuple[int, int, int, int]]] = []
        samples: list[tuple[str, str, str | None, FloatArray, FloatArray]] = []
        n_failed = int(failed.sum())
        n_passed = ok.size - n_failed
        model_sets, model_index = models
        for features, index in (
            (path_features(paths, ok), paths.index),
            (model_features(model_sets), model_index),
        ):
            if not features:
                continue
            fails = np.bincount(index[failed], minlength=features[0].values.size)
            passes = np.bincount(index[ok], minlength=features[0].values.size)
            for f in features:
                if unknown and is_work_feature(f.name):
                    continue
                if f.kind == "binary":
                    has = f.values.astype(bool)
                    a, c = int(fails[has].sum()), int(passes[has].sum())
                    tables.append(
                        (f.name, None, f.kind, f.label, (a, n_failed - a, c, n_passed - c))
                    )
                else:
                    samples.append(
                        (f.name, f.kind, f.label, f.values[index[failed]], f.values[index[ok]])
                    )
        columns = column_features(
            error_spans=_float(rows(self.error_spans)),
            tool_calls=_float(rows(self.tool_calls)),
            llm_calls=_float(rows(self.llm_calls)),
            durations=rows(self.durations),
        )
        if unknown:
            columns = [f for f in columns if not is_work_feature(f.name)]
        return FailureRequest(
            ok,
            {f.name: f.values for f in columns},
            {f.name: f.kind for f in columns},
            {f.name: f.label for f in columns},
            resolutions={"latency": LATENCY_RESOLUTION_S},
            tables=tables,
            samples=samples,
        )


def _finite(values: FloatArray) -> FloatArray:
    return values[np.isfinite(values)]
