"""The Spark engine: the spans → trials function per trace bucket, inside Spark.

Spark reads the trace set (local paths or object-store URLs such as ``s3a://…``), groups the
spans by a hash of the trace id — so a group holds whole traces — and hands each group to
:func:`assay.analysis.trials_from_spans` as an Arrow table turned straight into Polars
(``groupBy(...).applyInArrow``). Only the trials tables travel back to the driver, as Arrow IPC
bytes, so their types are exactly the local engine's; statistics are computed there.

The executors need assay installed in their Python, as the driver has it (``docs/scale.md``).
"""

from __future__ import annotations

import io
import json
import math
import os
import sys
import warnings
from typing import TYPE_CHECKING, Any, Final

import polars as pl

from assay.analysis._per_bucket import TrialsFunction, bucket_trials
from assay.analysis._trials import Trials
from assay.errors import AssayError, ConfigError, SchemaError
from assay.quality import DataQuality, Finding
from assay.store import TraceSet, one_copy_each, polars_schema

if TYPE_CHECKING:
    import pyarrow as pa

_BUCKET: Final = "_assay_bucket"
_RESULT_SCHEMA: Final = "bucket long, trials binary, findings string, error string"


_PANDAS_WARNING: Final = "PySpark does not yet fully support pandas"


def spark_session(master: str | None = None) -> Any:
    """The active Spark session, or a new one on ``master`` (``local[2]``, ``spark://…``).

    Raises:
        ConfigError: pyspark is not installed.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise ConfigError("--engine spark needs pyspark: pip install 'assay-otel[spark]'") from exc
    # Local workers run this interpreter, so they import the same assay.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("assay analyze").config(
        "spark.ui.showConsoleProgress", "false"
    )
    if master is not None:
        builder = builder.master(master)
        if master.startswith("local"):
            # A web UI for a single command on this machine only costs start-up time.
            builder = builder.config("spark.ui.enabled", "false")
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def spark_trials(
    trace_set: TraceSet,
    build: TrialsFunction,
    *,
    spans_per_bucket: int,
    master: str | None = None,
    test_attribute: str,
) -> tuple[list[Trials | None], int]:
    """The trials table of each trace bucket, computed by Spark, and the spans read.

    Spark counts the spans (from the Parquet footers), so the driver reads no data itself.

    Args:
        trace_set: The files to read (paths or URLs Spark understands).
        build: The spans → trials function, run on each bucket in the executors.
        spans_per_bucket: Bucket size to aim at; never fewer buckets than Spark has cores.
        master: The Spark master URL; None keeps Spark's own (``spark-submit --master``).
        test_attribute: The attribute naming the test (to tell an empty bucket from a bad one).

    Raises:
        SchemaError: A bucket breaks the trial contract (the executor's message).
    """
    with warnings.catch_warnings():
        # pyspark 4 checks pandas for grouped functions, Arrow ones too, and warns that
        # pandas 3 is new; this path uses no pandas, so the warning is only noise on stderr.
        warnings.filterwarnings("ignore", _PANDAS_WARNING, FutureWarning)
        rows, count = _run_buckets(trace_set, build, spans_per_bucket, master, test_attribute)
    tables: list[Trials | None] = []
    for row in sorted(rows, key=lambda r: int(r["bucket"])):
        if row["error"] is not None:
            raise SchemaError(row["error"])
        payload = row["trials"]
        if payload is None:
            tables.append(None)
            continue
        quality = _findings_from_json(row["findings"])
        tables.append(Trials(pl.read_ipc(io.BytesIO(payload)), quality))
    return tables, count


def _run_buckets(
    trace_set: TraceSet,
    build: TrialsFunction,
    spans_per_bucket: int,
    master: str | None,
    test_attribute: str,
) -> tuple[list[Any], int]:
    """Spark's rows, one per bucket (trials as Arrow IPC, findings, error), and the spans read."""
    from pyspark.sql import functions as F

    spark = spark_session(master)
    spans = spark.read.parquet(*trace_set.files)
    # Spans stored more than once are counted once, as the local engine counts them: a span's
    # copies share its trace's bucket, where the store's rule keeps one (not Spark's
    # dropDuplicates, which keeps whichever copy a partition met first).
    ids = spans.select("trace_id", "span_id")
    count = int((ids.distinct() if trace_set.deduplicate else ids).count())
    buckets = max(spark.sparkContext.defaultParallelism, math.ceil(count / spans_per_bucket))
    # One shuffle partition per bucket: Spark's default of 200 is mostly empty tasks here.
    spark.conf.set("spark.sql.shuffle.partitions", str(buckets))
    keyed = spans.withColumn(_BUCKET, F.pmod(F.xxhash64("trace_id"), F.lit(buckets)))
    run = _bucket_runner(build, test_attribute, trace_set.deduplicate)
    return keyed.groupBy(_BUCKET).applyInArrow(run, _RESULT_SCHEMA).collect(), count


def _findings_to_json(quality: DataQuality) -> str:
    """A bucket's findings as JSON, to travel back to the driver beside its trials."""
    return json.dumps(
        [
            {
                "kind": f.kind,
                "message": f.message,
                "count": f.count,
                "examples": list(f.examples),
                "severity": f.severity,
                "tests": list(f.tests),
            }
            for f in quality.findings
        ]
    )


def _findings_from_json(text: str | None) -> DataQuality:
    found = json.loads(text) if text else []
    return DataQuality(
        tuple(
            Finding(
                str(f["kind"]),
                str(f["message"]),
                int(f["count"]),
                tuple(str(e) for e in f["examples"]),
                "warning" if f["severity"] == "warning" else "info",
                tuple(str(t) for t in f.get("tests", ())),
            )
            for f in found
        )
    )


def _bucket_runner(build: TrialsFunction, test_attribute: str, deduplicate: bool) -> Any:
    """The function each executor runs on one bucket's Arrow table."""

    def run(key: tuple[Any, ...], table: pa.Table) -> pa.Table:
        import pyarrow as pa

        bucket = int(key[0].as_py())
        spans = _as_spans(pl.from_arrow(table.drop_columns([_BUCKET])))
        error: str | None = None
        payload: bytes | None = None
        findings: str | None = None
        try:
            lazy = one_copy_each(spans.lazy()) if deduplicate else spans.lazy()
            trials = bucket_trials(lazy, build, test_attribute)
        except AssayError as exc:
            error = str(exc)
        else:
            if trials is not None:
                sink = io.BytesIO()
                trials.table.write_ipc(sink)
                payload = sink.getvalue()
                findings = _findings_to_json(trials.data_quality)
        return pa.table(
            {
                "bucket": pa.array([bucket], pa.int64()),
                "trials": pa.array([payload], pa.binary()),
                "findings": pa.array([findings], pa.string()),
                "error": pa.array([error], pa.string()),
            }
        )

    return run


def _as_spans(frame: pl.DataFrame | pl.Series) -> pl.DataFrame:
    """Spark's Arrow columns in the spans-table schema (types as the local reader has them)."""
    assert isinstance(frame, pl.DataFrame)
    return frame.select(
        pl.col(name).cast(dtype) if name in frame.columns else pl.lit(None, dtype).alias(name)
        for name, dtype in polars_schema().items()
    )
