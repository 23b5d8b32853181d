"""The OTLP collector: HTTP and gRPC receivers → write-ahead log → Parquet spans table.

Nothing acknowledged is lost: a request is answered 200 only once it is fsynced in the
write-ahead log; a background converter writes Parquet files and checkpoints the log exactly
once (see ``_converter``); a restart after a crash recovers the log first.
"""

from assay.collect._collector import Collector, run_collector
from assay.collect._config import CollectorConfig, DecompressionError, TooLargeError, gunzip_bounded
from assay.collect._converter import recover
from assay.collect._counters import Counters
from assay.collect._wal import WriteAheadLog, read_segment

__all__ = [
    "Collector",
    "CollectorConfig",
    "Counters",
    "DecompressionError",
    "TooLargeError",
    "WriteAheadLog",
    "gunzip_bounded",
    "read_segment",
    "recover",
    "run_collector",
]
