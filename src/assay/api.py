"""``assay.analyze`` and ``assay.compare``: what the CLI does, each as one Python call."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import polars as pl

from assay.analysis import (
    Engine,
    LabelledTrials,
    NoTrialSpans,
    Repeats,
    bucket_size,
    engine_trials,
    judge_repeats,
    labelled_trials,
    parse_pass_when,
    read_labels,
    read_trials,
    recorded_labels,
    tools_as_strings,
    with_cost,
)
from assay.analysis import columns as tc
from assay.errors import ConfigError, InputError
from assay.judge import (
    AnalysisResult,
    AnalyzeOptions,
    Judgement,
    OptionValue,
    agreement_findings,
    agreement_text,
    corrected_suites,
    judge_all,
    judge_report,
    mixed_findings,
    price_table,
    read_judgements,
    with_judge_error,
)
from assay.quality import DataQuality, Finding
from assay.stats import preload
from assay.store import READ_ERRORS, TraceSet, open_trace_set, read_failure

Paths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]

RECORDED_LABELS = "traces"
"""``labels="traces"``: only the human labels the trace sets record, no file."""


@dataclass(frozen=True, slots=True)
class Analysis:
    """The outcome of :func:`analyze` or :func:`compare`: tables, and results for reports."""

    held_trials: pl.DataFrame = field(repr=False)
    """The trials as the analysis held them: tool sequences may be a dictionary
    (``List(Categorical)``). Read :attr:`trials`."""
    result: AnalysisResult
    """Per-test results with every figure, as the reports render them."""
    trace_set: TraceSet
    """The files that were read (and any skipped)."""
    held_baseline: pl.DataFrame | None = field(default=None, repr=False)
    """The baseline's trials as the analysis held them, when comparing."""
    _made: dict[str, pl.DataFrame] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def tests(self) -> pl.DataFrame:
        """The per-test table: n, passed, errors, pass rate, interval, verdict."""
        # Made on first reading only: the reports read the results, and a table of 5,000
        # tests' rows costs 0.2 s.
        if "tests" not in self._made:
            self._made["tests"] = _tests_table(self.result)
        return self._made["tests"]

    @property
    def trials(self) -> pl.DataFrame:
        """The trials table: one row per trial (of the current version, when comparing)."""
        return self._public("trials", self.held_trials)

    @property
    def baseline_trials(self) -> pl.DataFrame | None:
        """The baseline's trials, when comparing."""
        return None if self.held_baseline is None else self._public("base", self.held_baseline)

    def _public(self, name: str, held: pl.DataFrame) -> pl.DataFrame:
        # Made on first reading only: a run that only reports figures never pays for the
        # tool names as strings (10M trials of 8 calls: 1.7–5.3 s and 0.7–0.8 GiB).
        if name not in self._made:
            self._made[name] = tools_as_strings(held)
        return self._made[name]

    def to_dict(self) -> dict[str, Any]:
        """The ``assay.analysis/v1`` document as a dict."""
        from assay.report import analysis_to_dict

        return analysis_to_dict(self.result)

    def to_json(self) -> str:
        """Exactly what ``assay analyze --format json`` prints."""
        from assay.report import render_json

        return render_json(self.result)

    def exit_code(self, inconclusive_ok: bool = False) -> int:
        """The exit code the CLI would end with."""
        return self.result.exit_code(inconclusive_ok)


def _options(options: AnalyzeOptions | None) -> AnalyzeOptions:
    """The options given (defaults throughout if None; each checked itself when made)."""
    return options or AnalyzeOptions()


@dataclass(frozen=True, slots=True)
class _Read:
    trace_set: TraceSet
    trials: pl.DataFrame
    recorded: dict[str, Judgement]
    findings: tuple[Finding, ...]
    """What reading the trials noticed (a nesting mapping, incomplete traces, ...) and what
    pricing them noticed (unpriced models, ...)."""
    spans: pl.LazyFrame | None = None
    """The spans the trials were read from (each span once)."""


def _side(paths: Paths, role: str, options: AnalyzeOptions, skip_bad_files: bool) -> _Read:
    """One side of a comparison; a side with no trial says which it is."""
    try:
        return _read_trials(paths, options, skip_bad_files)
    except NoTrialSpans as exc:
        names = [os.fspath(p) for p in ([paths] if isinstance(paths, str | os.PathLike) else paths)]
        raise NoTrialSpans(f"the {role} set ({', '.join(names)}): {exc}") from None


def _read_trials(
    paths: Paths,
    options: AnalyzeOptions,
    skip_bad_files: bool,
    engine: Engine | str = Engine.LOCAL,
    spark_master: str | None = None,
) -> _Read:
    preload()  # scipy's import overlaps the reading of spans, which does not need it
    # A large local set is screened for repeated spans bucket by bucket, in bounded memory.
    local = str(engine) == Engine.LOCAL.value
    limit = 2 * bucket_size() if local else None
    trace_set = open_trace_set(paths, skip_bad_files=skip_bad_files, screen_limit=limit)
    try:
        # Only read what the files may hold: most sets record no judgement and no call cost.
        contents = trace_set.contents()
        read = engine_trials(
            trace_set,
            engine=engine,
            min_score=options.min_score,
            test_attribute=options.test_attribute,
            suite_attribute=options.suite_attribute,
            pass_when=options.pass_when,
            spark_master=spark_master,
            contents=contents,
            compact_tools=True,
        )
        spans = replace(trace_set, deduplicate=trace_set.deduplicate or read.repeated_spans).scan()
        recorded = read_judgements(spans, read.table) if contents.judgements else {}
        trials, priced = with_cost(
            read.table,
            price_table(options.prices),
            spans,
            recorded_costs=contents.recorded_costs,
            unnamed_calls=read.unnamed_calls,
        )
        findings = (*read.data_quality.findings, *priced)
    except READ_ERRORS as exc:
        raise read_failure(exc, trace_set.names) from exc
    return _Read(trace_set, trials, recorded, findings, spans)


def _labelled(
    reads: Sequence[_Read], labels: str | os.PathLike[str], options: AnalyzeOptions
) -> LabelledTrials:
    """People's labels matched to the trials of ``reads``, each with both outcomes.

    ``labels`` is a file, whose labels join those the traces record, or ``traces``: only those.
    """
    from_file = os.fspath(labels) != RECORDED_LABELS
    table = read_labels(labels) if from_file else None
    rule = parse_pass_when(options.pass_when) if options.pass_when else None

    def again(spans: pl.LazyFrame) -> pl.DataFrame:
        return read_trials(
            spans,
            min_score=options.min_score,
            test_attribute=options.test_attribute,
            suite_attribute=options.suite_attribute,
            pass_when=rule,
        ).table

    parts = []
    tables = []
    for read in reads:
        assert read.spans is not None
        try:
            recorded = recorded_labels(read.spans)
            both = pl.concat([table, recorded]) if table is not None else recorded
            tables.append(both)
            parts.append(labelled_trials(read.spans, read.trials, both, rule=rule, read=again))
        except READ_ERRORS as exc:
            raise read_failure(exc, read.trace_set.names) from exc
    if not any(t.height for t in tables):
        raise InputError(
            f"--labels {RECORDED_LABELS}: the trace set records no human label (an evaluation "
            "with assay.evaluation.source = human)"
        )
    names = sorted(
        {n for p in parts for e in p.table["evaluation"].to_list() for n in e.split(",")}
    )
    counted: dict[str, list[int]] = {}
    for read in reads:
        assert read.spans is not None
        try:
            for repeat in judge_repeats(read.spans, names):
                seen = counted.setdefault(repeat.evaluation, [0, 0])
                seen[0] += repeat.trials
                seen[1] += repeat.flipped
        except READ_ERRORS as exc:
            raise read_failure(exc, read.trace_set.names) from exc
    repeats = tuple(Repeats(name, t, f) for name, (t, f) in counted.items())
    if len(parts) == 1:
        return replace(parts[0], repeats=repeats)
    who = tuple(g for p in parts for g in p.graders)
    scored = [p.scores for p in parts if p.scores is not None]
    # Labels on the other set's trials are not unmatched: only those no set holds are named.
    # A trial in both sets (the same traces read twice) is one labelled trial.
    matched = pl.concat([p.table for p in parts]).unique(
        ["trace_id", "span_id"], maintain_order=True
    )
    unmatched = [f for f in parts[-1].findings if f.kind != "labels_without_trial"] + [
        f for p in parts[:-1] for f in p.findings if f.kind != "labels_without_trial"
    ]
    held = set(matched["trace_id"].to_list())
    every = pl.concat(tables).unique(maintain_order=True)  # the file's labels are in each
    nowhere = [t for t in every["trace_id"].unique(maintain_order=True).to_list() if t not in held]
    if nowhere:
        unmatched.append(
            Finding(
                "labels_without_trial",
                f"{len(nowhere)} labelled trace(s) hold no trial of either set: not used",
                len(nowhere),
                tuple(nowhere[:3]),
            )
        )
    notes = tuple(dict.fromkeys(n for p in parts for n in p.notes))
    return LabelledTrials(
        matched,
        tuple(unmatched),
        notes,
        every.height,
        repeats,
        who,
        pl.concat(scored) if scored else None,
    )


@dataclass(frozen=True, slots=True)
class TraceSetTrials:
    """A trace set's trials, read as :func:`analyze` reads them (see :func:`read_set_trials`)."""

    trace_set: TraceSet
    """The files read (and any skipped)."""
    trials: pl.DataFrame
    """The trials table (``assay.analysis.columns``, with ``cost_usd``); tool sequences may be
    held as a dictionary (:func:`assay.analysis.tools_as_strings` makes them strings)."""
    recorded: dict[str, Judgement]
    """The judgement each test's trials record (``assay run``), by test id."""
    findings: tuple[Finding, ...]
    """What reading and pricing them noticed, and what the reader found (repeated spans)."""


def read_set_trials(
    paths: Paths, options: AnalyzeOptions | None = None, *, skip_bad_files: bool = False
) -> TraceSetTrials:
    """The trials of a trace set, by ``analyze``'s one reading path.

    Bucket by bucket, spans stored twice counted once, priced by ``options.prices``.

    ``assay watch`` reads the set it finds at start (and on a restart) by this call, so its
    first look costs what ``analyze`` costs on the same set.

    Raises:
        InputError: A path cannot be read.
        SchemaError: No trial in the set, or a trial breaks the trial contract.
    """
    settings = _options(options)
    read = _read_trials(paths, settings, skip_bad_files)
    found = _quality(read.trace_set).findings
    return TraceSetTrials(read.trace_set, read.trials, read.recorded, (*found, *read.findings))


def _as_dict(options: AnalyzeOptions) -> dict[str, OptionValue]:
    return {f.name: getattr(options, f.name) for f in fields(AnalyzeOptions)}


def _analysis(
    trace_set: TraceSet,
    trials: pl.DataFrame,
    options: AnalyzeOptions,
    recorded: dict[str, Judgement],
    baseline_trials: pl.DataFrame | None = None,
    extra_options: dict[str, OptionValue] | None = None,
    also_read: Sequence[TraceSet] = (),
    findings: Sequence[Finding] = (),
    labelled: LabelledTrials | None = None,
    min_agreement: float | None = None,
) -> Analysis:
    judged = judge_all(trials, options, recorded=recorded, baseline=baseline_trials)
    tests, notes, suites = judged.tests, list(judged.notes), judged.suites
    report = None
    if labelled is not None:
        confidence = next((t.interval.confidence for t in tests if t.interval), 0.95)
        repeats = [(r.evaluation, r.trials, r.flipped) for r in labelled.repeats]
        report = judge_report(
            labelled.table, labelled.labels, confidence, repeats, min_agreement, labelled.graders
        )
        tests = with_judge_error(
            tests, labelled.table, report.overall.agreement, trials, labelled.scores
        )
        findings = (*findings, *labelled.findings, *agreement_findings(report))
        said = [agreement_text(report)] if report.overall.agreement.labelled else []
        notes += [*said, *labelled.notes]
        if report.overall.agreement.labelled:
            suites = corrected_suites(suites, tests, report.overall.agreement)
    skipped = [(f.path, f.reason) for t in (*also_read, trace_set) for f in t.skipped]
    result = AnalysisResult(
        tests=tests,
        suites=suites,
        options={**_as_dict(options), **(extra_options or {})},
        skipped_files=tuple(skipped),
        notes=tuple(notes),
        data_quality=_quality(trace_set, *also_read).merged(
            findings,
            mixed_findings(tests, baseline_trials),
        ),
        judge=report,
    )
    return Analysis(trials, result, trace_set, baseline_trials)


def _quality(*trace_sets: TraceSet) -> DataQuality:
    """The findings the trace sets carry (a reader may attach them as ``quality``)."""
    found = [getattr(t, "quality", None) for t in trace_sets]
    return DataQuality().merged(*(q for q in found if isinstance(q, DataQuality)))


def analyze(
    paths: Paths,
    options: AnalyzeOptions | None = None,
    *,
    skip_bad_files: bool = False,
    baseline_version: str | None = None,
    current_version: str | None = None,
    run_id: str | None = None,
    engine: Engine | str = Engine.LOCAL,
    spark_master: str | None = None,
    labels: str | os.PathLike[str] | None = None,
    min_agreement: float | None = None,
) -> Analysis:
    """Read a trace set and give every test its verdict.

    Args:
        paths: Folders, globs or spans files (see :func:`assay.store.open_trace_set`).
        options: The options of the analysis (defaults throughout if None). The verdict options
            left None (threshold, confidence, errors, variance limits) take what the trials
            record, else the defaults.
        skip_bad_files: Skip unreadable files (listed in the result) instead of failing.
        baseline_version: Compare against the trials of this ``assay.agent.version``; each
            test's verdict then answers "did it get worse?" (see :func:`compare`).
        current_version: The version under test when the set holds more than two.
        run_id: Only the trials of this ``assay.run.id`` (how ``assay run`` judges its own).
        engine: Where spans become trials: ``local`` (here, bucket by bucket) or ``spark``
            (see ``docs/scale.md``); the statistics are the same either way.
        spark_master: The Spark master URL for ``engine="spark"``.
        labels: People's labels of some trials (CSV or JSON Lines, see
            :func:`assay.analysis.read_labels`): each verdict then reads the pass rate
            corrected for the judge's measured error (docs/statistics.md, "When the judge is
            wrong"); ``"traces"``: the labels the trace set records.
        min_agreement: With labels, the Cohen's kappa the judge must reach: below it, the
            ``judge_below_agreement`` finding.

    Returns:
        An :class:`Analysis` with the trials and per-test tables and the results.

    Raises:
        InputError: Unreadable input (a missing path, a corrupt file, no trial spans, no
            trial of ``run_id``).
        ConfigError: A bad option.
    """
    settings = _options(options)
    read = _read_trials(paths, settings, skip_bad_files, engine, spark_master)
    trace_set, trials, recorded = read.trace_set, read.trials, read.recorded
    labelled = _labelled([read], labels, settings) if labels is not None else None
    extra: dict[str, OptionValue] = {"labels": os.fspath(labels)} if labels is not None else {}
    if run_id is not None:
        trials = _run(trials, run_id)
    if baseline_version is None:
        if current_version is not None:
            trials = _version(trials, current_version)
        return _analysis(
            trace_set,
            trials,
            settings,
            recorded,
            extra_options=extra,
            findings=read.findings,
            labelled=labelled,
            min_agreement=min_agreement,
        )
    baseline = _version(trials, baseline_version)
    if current_version is None:
        # Trials without a version belong to neither side: they are named, never compared.
        others = sorted(
            v
            for v in trials[tc.AGENT_VERSION].unique().to_list()
            if v is not None and v != baseline_version
        )
        if len(others) != 1:
            shown = ", ".join(str(v) for v in others) or "none"
            raise ConfigError(
                f"--baseline-version {baseline_version}: need exactly one other "
                f"assay.agent.version to compare (found {shown}); name it with --current-version"
            )
        current_version = others[0]
    current = _version(trials, current_version)
    versionless = int(trials[tc.AGENT_VERSION].null_count())
    findings: tuple[Finding, ...] = read.findings
    if versionless:
        findings = (
            *findings,
            Finding(
                "versionless_trials",
                f"{versionless} trial(s) carry no assay.agent.version: left out of the "
                f"comparison of {current_version} against {baseline_version}",
                versionless,
                severity="warning",
            ),
        )
    return _analysis(
        trace_set,
        current,
        settings,
        recorded,
        baseline,
        {"baseline_version": baseline_version, "current_version": current_version, **extra},
        findings=findings,
        labelled=labelled,
        min_agreement=min_agreement,
    )


def compare(
    baseline: Paths,
    current: Paths,
    options: AnalyzeOptions | None = None,
    *,
    skip_bad_files: bool = False,
    run_id: str | None = None,
    baseline_run_id: str | None = None,
    labels: str | os.PathLike[str] | None = None,
    min_agreement: float | None = None,
) -> Analysis:
    """Regression verdicts between two trace sets: did the current one get worse?

    Per test, a one-sided exact test (Boschloo by default) asks whether the current pass rate
    is below the baseline's: FAIL if it rejects at ``alpha``; PASS if it does not and the test
    had at least ``power`` to detect a drop of ``delta``; INCONCLUSIVE otherwise. The threshold
    verdict of the current set is kept beside it.

    Args:
        baseline: The baseline trace set.
        current: The trace set under test.
        options: The options of the analysis, as for :func:`analyze`.
        skip_bad_files: Skip unreadable files instead of failing.
        run_id: Only the current set's trials of this ``assay.run.id``.
        baseline_run_id: Only the baseline's trials of this ``assay.run.id``.
        labels: People's labels of trials of either set: one judge graded both, so one
            agreement, pooled over both, corrects the current set's pass rates.
        min_agreement: As for :func:`analyze`.
    """
    settings = _options(options)
    base = _side(baseline, "baseline", settings, skip_bad_files)
    read = _side(current, "current", settings, skip_bad_files)
    base_trials, trials = base.trials, read.trials
    if baseline_run_id is not None:
        base_trials = _run(base_trials, baseline_run_id, "--baseline-run-id")
    if run_id is not None:
        trials = _run(trials, run_id)
    labelled = _labelled([base, read], labels, settings) if labels is not None else None
    return _analysis(
        read.trace_set,
        trials,
        settings,
        # The baseline's recorded designs tell the regression test how its trials stopped.
        {**base.recorded, **read.recorded},
        base_trials,
        {"labels": os.fspath(labels)} if labels is not None else None,
        also_read=(base.trace_set,),
        findings=(*base.findings, *read.findings),
        labelled=labelled,
        min_agreement=min_agreement,
    )


def judge_spans(spans: pl.LazyFrame, options: AnalyzeOptions | None = None) -> AnalysisResult:
    """Judge the trials in a spans table held in memory, exactly as :func:`analyze` would.

    The pytest plugin judges the trials it has just recorded this way (whether or not they
    are also written to a trace set).

    Args:
        spans: A spans table (e.g. ``pl.from_arrow(assay.instrument.spans_table(spans))``).
        options: The options of the analysis; defaults throughout if None.
    """
    settings = _options(options)
    read = read_trials(
        spans,
        min_score=settings.min_score,
        test_attribute=settings.test_attribute,
        suite_attribute=settings.suite_attribute,
        pass_when=settings.pass_when,
    )
    judged = judge_all(read.table, settings, recorded=read_judgements(spans, read.table))
    tests, notes = judged.tests, judged.notes
    return AnalysisResult(
        tests=tests,
        suites=judged.suites,
        options=_as_dict(settings),
        notes=tuple(notes),
        data_quality=read.data_quality.merged(mixed_findings(tests)),
    )


def _run(trials: pl.DataFrame, run_id: str, flag: str = "--run-id") -> pl.DataFrame:
    """The trials of one ``assay.run.id``.

    Raises:
        InputError: The set holds no trial of that run (the runs it holds are named); an
            input error, as when no trial span was written at all.
    """
    chosen = trials.filter(pl.col(tc.RUN_ID) == run_id)
    if chosen.height == 0:
        known = sorted(str(v) for v in trials[tc.RUN_ID].drop_nulls().unique().to_list())
        raise InputError(
            f"{flag} {run_id}: no trials of that assay.run.id (runs in the set: "
            f"{', '.join(known) or 'none'})"
        )
    return chosen


def _version(trials: pl.DataFrame, version: str) -> pl.DataFrame:
    chosen = trials.filter(pl.col(tc.AGENT_VERSION) == version)
    if chosen.height == 0:
        known = sorted(str(v) for v in trials[tc.AGENT_VERSION].unique().to_list())
        raise ConfigError(
            f"no trials of assay.agent.version {version!r} (versions in the set: "
            f"{', '.join(known) or 'none'})"
        )
    return chosen


def _tests_table(result: AnalysisResult) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                "test_id": t.test_id,
                "n": t.n,
                "passed": t.passed,
                "errors": t.errors,
                "pass_rate": t.pass_rate,
                "ci_low": t.interval.low if t.interval else None,
                "ci_high": t.interval.high if t.interval else None,
                "threshold": t.threshold,
                "verdict": t.verdict.value,
                "regression_p_value": t.regression.p_value if t.regression else None,
                "regression_power": t.regression.power if t.regression else None,
            }
            for t in result.tests
        ],
        schema={
            "test_id": pl.String,
            "n": pl.Int64,
            "passed": pl.Int64,
            "errors": pl.Int64,
            "pass_rate": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
            "threshold": pl.Float64,
            "verdict": pl.String,
            "regression_p_value": pl.Float64,
            "regression_power": pl.Float64,
        },
    )
