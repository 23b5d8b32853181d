from pathlib import Path

import pyarrow.parquet as pq

from assay.store import SCHEMA_VERSION_KEY, SpanRows, encode_attributes, read_spans, write_spans


def test_written_file_carries_schema_version_and_reads_back(tmp_path: Path) -> None:
    rows = SpanRows()
    rows.append(
        trace_id="a" * 32,
        span_id="b" * 16,
        name="trial",
        start_time=1,
        end_time=2,
        attributes=encode_attributes({"assay.test.id": "t1", "assay.trial.index": 4}),
    )
    (path,) = write_spans(rows.to_table(), tmp_path)
    assert pq.read_schema(path).metadata[SCHEMA_VERSION_KEY] == b"1"
    frame = read_spans(tmp_path)
    assert frame["assay_test_id"].to_list() == ["t1"]
    assert frame["assay_trial_index"].to_list() == [4]
