"""A large set is screened for repeated spans bucket by bucket: same verdicts, same finding."""

import json
from pathlib import Path

import polars as pl
import pytest

import assay
from assay.store import open_trace_set, read_spans, write_spans


def _without_quality(text: str) -> dict[str, object]:
    document = json.loads(text)
    document.pop("data_quality", None)
    return document


@pytest.mark.parametrize("per_bucket", ["60", "1000000000"])
def test_repeated_spans_found_per_bucket_as_over_the_set(
    traces: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, per_bucket: str
) -> None:
    spans = read_spans(traces)
    out = tmp_path / "set"
    write_spans(spans.to_arrow(), out, partition_by=())
    again = spans.filter(pl.col("trace_id").is_in(spans["trace_id"].unique().sort().head(5)))
    write_spans(again.to_arrow(), out, partition_by=())  # an import run twice, in part
    whole = open_trace_set(out)
    assert whole.screened and whole.deduplicate
    expected = assay.analyze(out)
    monkeypatch.setenv("ASSAY_SPANS_PER_BUCKET", per_bucket)
    if per_bucket == "60":  # buckets of 60 spans: too large to screen as a whole
        assert not open_trace_set(out, screen_limit=120).screened
    bucketed = assay.analyze(out)
    assert _without_quality(bucketed.to_json()) == _without_quality(expected.to_json())
    found = {f.kind: f for f in bucketed.result.data_quality.findings}
    assert found["duplicate_spans"].count == again.height
    assert bucketed.trials.height == expected.trials.height == assay.analyze(traces).trials.height


def test_the_screen_of_ids_read_says_what_the_screen_of_the_files_says(
    traces: Path, tmp_path: Path
) -> None:
    # A bucket is screened on the span ids its build has read into memory; a set screened
    # whole, on its files. One function answers both: they must agree.
    from assay.store import span_ids_may_repeat

    spans = read_spans(traces)
    out = tmp_path / "set"
    write_spans(spans.to_arrow(), out, partition_by=())
    for repeats in (False, True):
        if repeats:
            write_spans(spans.head(1).to_arrow(), out, partition_by=())  # one span twice
        scan = pl.scan_parquet(str(out / "**" / "*.parquet"))
        assert span_ids_may_repeat(scan) is repeats
        assert span_ids_may_repeat(scan.collect().lazy(), streaming=False) is repeats
