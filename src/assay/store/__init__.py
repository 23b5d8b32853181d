"""The spans table: its schema, and Parquet writing and reading.

Every writer (exporter, collector, importer) produces this table; every reader reads only it.
:mod:`assay.store.schema` names its columns and types.
"""

from assay.store import _schema as schema
from assay.store._arrow import int64_array
from assay.store._buckets import Bucket, existing_buckets, made_buckets, row_group_buckets
from assay.store._coercion import coerce, coerce_expr
from assay.store._compact import (
    DEFAULT_FANOUT,
    REPLACES_KEY,
    Compaction,
    compact_folder,
    compact_tree,
    merged_inputs,
    replaced_inputs,
)
from assay.store._contents import SpanContents, span_contents
from assay.store._copies import (
    CONFLICTING_SPANS,
    conflicting_copies,
    one_copy_each,
    rule_rank,
)
from assay.store._events_column import EventsColumn, events_column
from assay.store._paths import TEMP_SUFFIX, FileListing, is_remote, list_files
from assay.store._reader import (
    DUPLICATE_SPANS,
    READ_ERRORS,
    SkippedFile,
    TraceSet,
    bucket_events,
    duplicate_spans,
    open_trace_set,
    polars_schema,
    promoted_from_attributes,
    read_failure,
    read_spans,
    scan_bucket,
    scan_spans,
)
from assay.store._rows import (
    EncodedAttribute,
    SpanRows,
    decode_attributes,
    decode_value,
    encode_attributes,
    encode_value,
)
from assay.store._schema import (
    ATTRIBUTE_LIST_TYPE,
    ATTRIBUTE_TYPE,
    EVENT_TYPE,
    LINK_TYPE,
    PROMOTED_ATTRIBUTES,
    REQUIRED_COLUMNS,
    SCHEMA_VERSION,
    SCHEMA_VERSION_KEY,
    SPANS_SCHEMA,
    promoted_column,
)
from assay.store._validate import FileCheck, check_spans_file, span_ids_may_repeat
from assay.store._writer import SpanWriter, fsync_dir, sanitize_partition_value, write_spans

__all__ = [
    "ATTRIBUTE_LIST_TYPE",
    "CONFLICTING_SPANS",
    "DEFAULT_FANOUT",
    "REPLACES_KEY",
    "Compaction",
    "compact_folder",
    "compact_tree",
    "merged_inputs",
    "replaced_inputs",
    "DUPLICATE_SPANS",
    "TEMP_SUFFIX",
    "Bucket",
    "EventsColumn",
    "bucket_events",
    "events_column",
    "duplicate_spans",
    "existing_buckets",
    "int64_array",
    "is_remote",
    "list_files",
    "made_buckets",
    "one_copy_each",
    "conflicting_copies",
    "rule_rank",
    "coerce",
    "coerce_expr",
    "row_group_buckets",
    "scan_bucket",
    "span_ids_may_repeat",
    "ATTRIBUTE_TYPE",
    "EVENT_TYPE",
    "LINK_TYPE",
    "PROMOTED_ATTRIBUTES",
    "READ_ERRORS",
    "REQUIRED_COLUMNS",
    "SCHEMA_VERSION",
    "SCHEMA_VERSION_KEY",
    "SPANS_SCHEMA",
    "EncodedAttribute",
    "FileCheck",
    "FileListing",
    "SkippedFile",
    "SpanContents",
    "SpanRows",
    "SpanWriter",
    "TraceSet",
    "check_spans_file",
    "decode_attributes",
    "decode_value",
    "encode_attributes",
    "encode_value",
    "fsync_dir",
    "open_trace_set",
    "polars_schema",
    "promoted_from_attributes",
    "span_contents",
    "promoted_column",
    "read_failure",
    "read_spans",
    "sanitize_partition_value",
    "scan_spans",
    "schema",
    "write_spans",
]
