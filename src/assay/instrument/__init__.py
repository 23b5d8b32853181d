"""Recording trials: a small tracing API over the OpenTelemetry SDK, and the Parquet exporter.

::

    import assay.instrument as ai

    ai.configure("traces")                       # Parquet trace set (or otlp_endpoint=...)
    with ai.trial("refund-policy") as t:
        with ai.tool("search"):
            ...
        ai.score("helpfulness", 87)
        ai.check("cites policy", True)
"""

from assay.instrument._configure import Configured, configure
from assay.instrument._exporter import ParquetSpanExporter, spans_table
from assay.instrument._processor import LosslessBatchSpanProcessor
from assay.instrument._tool import LLMCall, llm, tool
from assay.instrument._trial import Trial, check, current_trial, score, trial

__all__ = [
    "Configured",
    "LLMCall",
    "LosslessBatchSpanProcessor",
    "ParquetSpanExporter",
    "Trial",
    "check",
    "configure",
    "current_trial",
    "llm",
    "score",
    "spans_table",
    "tool",
    "trial",
]
