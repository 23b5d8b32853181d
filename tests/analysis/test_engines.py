"""Engines: bucket by bucket (local, made or laid-out buckets) and Spark give the same results."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

import assay
from assay.analysis import _engines, engine_trials
from assay.analysis import columns as tc
from assay.cli import run
from assay.errors import ConfigError, SchemaError
from assay.store import (
    SPANS_SCHEMA,
    SpanRows,
    encode_attributes,
    open_trace_set,
    read_spans,
    write_spans,
)
from assay.store._buckets import row_group_buckets

ORDER = [tc.TEST_ID, tc.START_TIME, tc.TRIAL_INDEX, tc.TRACE_ID, tc.SPAN_ID]


@pytest.fixture(scope="module")
def example(traces: Path) -> Path:
    """The example agent's traces: 30 trials of 4 cases, with tools, LLM calls and scores."""
    return traces


@pytest.fixture(scope="module")
def bucketed(traces: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same spans, laid out in 8 buckets by a bucketing writer."""
    out = tmp_path_factory.mktemp("bucketed") / "traces"
    write_spans(read_spans(traces).to_arrow(), out, buckets=8)
    return out


def _trials(path: Path, **kwargs: object) -> pl.DataFrame:
    return engine_trials(open_trace_set(path), **kwargs).table  # type: ignore[arg-type]


def test_laid_out_buckets_give_the_same_json(example: Path, bucketed: Path) -> None:
    assert len({Path(f).parent.name for f in open_trace_set(bucketed).files}) > 1
    assert assay.analyze(bucketed).to_json() == assay.analyze(example).to_json()
    assert _trials(bucketed).equals(_trials(example).sort(ORDER, nulls_last=True))


def test_figures_made_in_threads_give_the_json_of_one_thread(
    bucketed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A large trials table has its tests' figures made two runs of tests at once, in
    # threads: here every table is, on a set read in several buckets.
    from assay.judge import _all_figures

    monkeypatch.setattr(_all_figures, "PARTS_AT_ONCE", 1)
    alone = assay.analyze(bucketed).to_json()
    monkeypatch.setattr(_all_figures, "PARTS_AT_ONCE", 2)
    monkeypatch.setattr(_all_figures, "PARTS_FROM_ROWS", 0)
    monkeypatch.setattr(_all_figures, "PARTS_FROM_TEST_ROWS", 0)
    assert assay.analyze(bucketed).to_json() == alone
    monkeypatch.setattr(_all_figures, "ROWS_AT_ONCE", 2)  # a run a test
    assert assay.analyze(bucketed).to_json() == alone


def test_made_buckets_give_the_same_trials(example: Path) -> None:
    whole = _trials(example)
    spans = read_spans(example).height
    # 60 spans a bucket: the one row group of the set must be copied into many buckets,
    # some of them without trials.
    assert row_group_buckets(open_trace_set(example).files, 60) is None
    made = _trials(example, spans_per_bucket=60)
    assert spans > 2 * 60
    assert made.equals(whole.sort(ORDER, nulls_last=True))


@pytest.mark.parametrize("compact", [True, False], ids=["compact-tools", "string-tools"])
def test_row_group_buckets_give_the_same_trials(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compact: bool
) -> None:
    # Many buckets hold their tool sequences as a dictionary while they wait, a few do not:
    # the set's table is the same either way.
    monkeypatch.setattr(_engines, "COMPACT_FROM_BUCKETS", 0 if compact else 10**6)
    # A row group of whole traces for every 3 traces: buckets without a copy.
    spans = read_spans(example).with_columns((pl.col("trace_id").rank("dense") // 3).alias("group"))
    (tmp_path / "traces").mkdir()
    path = tmp_path / "traces" / "spans.parquet"
    with pq.ParquetWriter(path, SPANS_SCHEMA) as writer:
        for _, group in spans.sort("group").group_by("group", maintain_order=True):
            writer.write_table(group.drop("group").to_arrow().cast(SPANS_SCHEMA))
    files = (str(path),)
    assert pq.ParquetFile(path).num_row_groups > 10
    assert row_group_buckets(files, 60) is not None
    trials = _trials(tmp_path / "traces", spans_per_bucket=60)
    whole = _trials(example).sort(ORDER, nulls_last=True)
    assert trials.schema == whole.schema  # equals() alone would accept categorical tools
    assert trials.equals(whole)
    # An analysis holds the dictionary, and makes the strings only when its trials are read.
    held = _trials(tmp_path / "traces", spans_per_bucket=60, compact_tools=True)
    want = pl.List(pl.Categorical) if compact else pl.List(pl.String)
    assert held.schema[tc.TOOL_SEQUENCE] == want
    one_pass = assay.analyze(example)  # priced: a column more than engine_trials'
    assert one_pass.trials.schema[tc.TOOL_SEQUENCE] == pl.List(pl.String)
    monkeypatch.setenv("ASSAY_SPANS_PER_BUCKET", "60")
    analysis = assay.analyze(tmp_path / "traces")
    assert analysis.held_trials.schema[tc.TOOL_SEQUENCE] == want
    assert analysis.trials.schema == one_pass.trials.schema
    assert analysis.trials.equals(one_pass.trials.sort(ORDER, nulls_last=True))
    assert analysis.trials is analysis.trials  # made once
    assert analysis.to_json() == one_pass.to_json()


def _one_span(rows: SpanRows, trace: int, attributes: dict[str, object]) -> None:
    rows.append(
        trace_id=f"{trace:032x}",
        span_id=f"{trace:016x}",
        name="trial",
        start_time=trace,
        end_time=trace + 10**9,
        service_name="svc",
        attributes=encode_attributes(attributes),
    )


def test_buckets_without_trials_are_fine_but_a_set_without_any_is_not(tmp_path: Path) -> None:
    rows = SpanRows()
    _one_span(rows, 1, {"assay.test.id": "only", "assay.trial.outcome": "pass"})
    for trace in range(2, 40):
        _one_span(rows, trace, {"other": 1})
    write_spans(rows.to_table(), tmp_path / "some", buckets=16)
    trials = _trials(tmp_path / "some")
    assert trials[tc.TEST_ID].to_list() == ["only"]
    rows = SpanRows()
    for trace in range(2, 40):
        _one_span(rows, trace, {"other": 1})
    write_spans(rows.to_table(), tmp_path / "none", buckets=16)
    with pytest.raises(SchemaError, match="none of the 38 spans read carries assay.test.id"):
        _trials(tmp_path / "none")


def test_a_bad_bucket_still_fails(tmp_path: Path) -> None:
    rows = SpanRows()
    for trace in range(1, 30):
        outcome = "maybe" if trace == 17 else "pass"
        _one_span(rows, trace, {"assay.test.id": "t", "assay.trial.outcome": outcome})
    write_spans(rows.to_table(), tmp_path / "traces", buckets=8)
    with pytest.raises(SchemaError, match="found 'maybe'"):
        _trials(tmp_path / "traces")


def test_unknown_engine(example: Path, capsys) -> None:
    with pytest.raises(ConfigError, match="--engine flink: unknown engine"):
        assay.analyze(example, engine="flink")
    assert run(["analyze", str(example), "--engine", "flink"]) == 2
    assert "Invalid value for '--engine'" in (err := capsys.readouterr().err)
    assert "'flink' is not one of 'local', 'spark'" in err


@pytest.mark.slow
def test_spark_gives_the_json_of_the_local_engine(
    example: Path, bucketed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sql = pytest.importorskip("pyspark.sql", reason="the spark extra is not installed")
    if shutil.which("java") is None:
        pytest.skip("no Java runtime: local Spark needs one (apt install openjdk-17-jre-headless)")
    # The JVM's optimising compiler pays off only in long jobs: this short one takes half the
    # time with the quick compiler alone and the serial collector (the same results, the same code).
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
    local = assay.analyze(example)
    out = tmp_path / "spark.json"
    # The bucketed copy: Spark reads files under bucket=NN folders and re-groups them itself.
    args = ["analyze", str(bucketed), "--format", "json", "--output", str(out)]
    # The same set with some spans stored twice (an import run twice, in part).
    repeated = tmp_path / "repeated"
    shutil.copytree(bucketed, repeated)
    spans = read_spans(example)
    again = spans.filter(pl.col("trace_id").is_in(spans["trace_id"].unique().sort().head(5)))
    write_spans(again.to_arrow(), repeated, buckets=8)
    local_repeated = assay.analyze(repeated)
    out_repeated = tmp_path / "spark-repeated.json"
    repeated_args = ["analyze", str(repeated), "--format", "json", "--output", str(out_repeated)]
    try:
        code = run([*args, "--engine", "spark", "--spark-master", "local[2]"])
        code_repeated = run([*repeated_args, "--engine", "spark", "--spark-master", "local[2]"])
    finally:
        session = sql.SparkSession.getActiveSession()
        if session is not None:
            session.stop()  # the JVM would otherwise live on through the rest of the suite
    assert code == local.exit_code()
    assert out.read_text().rstrip("\n") == local.to_json().rstrip("\n")
    # Repeated spans are counted once by both engines, and said so.
    assert local_repeated.trials.height == local.trials.height
    assert code_repeated == local_repeated.exit_code()
    assert out_repeated.read_text().rstrip("\n") == local_repeated.to_json().rstrip("\n")
    assert "duplicate_spans" in out_repeated.read_text()


def test_buckets_read_at_once_come_back_in_order_and_fail_as_one_at_a_time() -> None:
    """Two buckets at a time: results in the buckets' order; the first failure in that order
    is raised, even when a later bucket fails sooner, and buckets not started are not read."""
    import threading
    import time

    from assay.store import Bucket

    started: list[int] = []
    lock = threading.Lock()

    def one(bucket: Bucket) -> None:
        with lock:
            started.append(bucket.number)
        time.sleep(0.01 * (5 - bucket.number % 5))  # earlier buckets finish later
        if bucket.number in failing:
            raise SchemaError(f"bucket {bucket.number}")

    buckets = [Bucket(number=n, files=()) for n in range(40)]
    failing: set[int] = set()
    assert _engines._at_once(one, buckets, 2) == [None] * 40
    assert sorted(started) == list(range(40))
    failing, started = {2, 3}, []
    with pytest.raises(SchemaError, match="bucket 2"):
        _engines._at_once(one, buckets, 2)
    assert len(started) < 40
