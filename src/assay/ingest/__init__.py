"""OTLP decoding: protobuf and OTLP/JSON → spans-table batches; import of recorded files.

Shared by the collector (``assay collect``) and ``assay import``.
"""

from assay.ingest._columns import SpanColumns, any_value_to_python
from assay.ingest._files import ImportLimits, ImportResult, import_files, read_otlp_file
from assay.ingest._logs import (
    EVALUATION_EVENT,
    DecodedLogs,
    count_log_records,
    logs_to_table,
    parse_logs_json,
    parse_logs_protobuf,
)
from assay.ingest._otlp import (
    DecodedSpans,
    count_spans,
    parse_traces_json,
    parse_traces_protobuf,
    traces_to_table,
)

__all__ = [
    "EVALUATION_EVENT",
    "DecodedLogs",
    "DecodedSpans",
    "ImportLimits",
    "ImportResult",
    "SpanColumns",
    "any_value_to_python",
    "count_log_records",
    "count_spans",
    "import_files",
    "logs_to_table",
    "parse_logs_json",
    "parse_logs_protobuf",
    "parse_traces_json",
    "parse_traces_protobuf",
    "read_otlp_file",
    "traces_to_table",
]
