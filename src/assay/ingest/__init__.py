"""OTLP decoding: protobuf and OTLP/JSON → spans-table batches; import of recorded files.

Shared by the collector (``assay collect``) and ``assay import``. Which module answers what:

- ``_otlp``, ``_logs``, ``_columns``, ``_validate``: OTLP requests → spans-table batches;
- ``_files``: ``assay import`` — files streamed and bounded, all or nothing;
- ``_formats``: which format a JSON document is, by its content, and what it cannot tell;
- ``_jaeger``, ``_zipkin``, ``_tempo``, ``_mlflow``, ``_phoenix``, ``_langfuse``: another tool's
  export → an OTLP request
  (``_build`` holds their checked ids, times and values).
"""

from assay.ingest._build import FORMAT_ATTRIBUTE, moment
from assay.ingest._columns import SpanColumns, any_value_to_python
from assay.ingest._files import (
    ImportLimits,
    ImportResult,
    import_files,
    read_otlp_file,
    read_trace_file,
)
from assay.ingest._formats import FORMATS, SourceFormat, format_named
from assay.ingest._interrupt import ImportInterrupted
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
    "FORMATS",
    "FORMAT_ATTRIBUTE",
    "DecodedLogs",
    "DecodedSpans",
    "ImportInterrupted",
    "ImportLimits",
    "ImportResult",
    "SourceFormat",
    "SpanColumns",
    "any_value_to_python",
    "count_log_records",
    "count_spans",
    "format_named",
    "import_files",
    "logs_to_table",
    "moment",
    "parse_logs_json",
    "parse_logs_protobuf",
    "parse_traces_json",
    "parse_traces_protobuf",
    "read_otlp_file",
    "read_trace_file",
    "traces_to_table",
]
