"""The one error tree of assay.

Every error a user can cause derives from :class:`AssayError`; the CLI turns any of them into a
single line and exit code 2. Anything else escaping is a bug.

::

    AssayError
     ├── ConfigError             a bad option, flag or configuration value
     │    └── OptionError        a bad value of a named options field
     ├── InputError              data that cannot be read (a missing path, a corrupt file)
     │    └── SchemaError        data that reads but breaks the spans-table or trial contract
     ├── InsufficientDataError   too little data for the statistic that was asked for
     ├── AgentError              one call of the agent under test failed (an error trial)
     └── CollectorError          a request the collector refuses, answered with an OTLP status
          ├── TooLargeError      a body over a size limit (413 / RESOURCE_EXHAUSTED)
          ├── DecompressionError a body that is not the compression it claims (400)
          ├── OverloadedError    the queue is full: retry later (429 / RESOURCE_EXHAUSTED)
          ├── UnavailableError   shutting down or cannot write (503 / UNAVAILABLE)
          └── WalClosedError     the write-ahead log is closed or broken; nothing was stored
"""

from __future__ import annotations

__all__ = [
    "AgentError",
    "AssayError",
    "CollectorError",
    "ConfigError",
    "OptionError",
    "DecompressionError",
    "InputError",
    "InsufficientDataError",
    "OverloadedError",
    "SchemaError",
    "TooLargeError",
    "UnavailableError",
    "WalClosedError",
]


class AssayError(Exception):
    """Base class of every error a user of assay can cause."""


class ConfigError(AssayError):
    """A bad option, flag or configuration value."""


class OptionError(ConfigError):
    """A bad value of one field of an options object, named by the field.

    The library names the field (``threshold must lie in [0, 1]``); the command line names the
    flag that set it (``--threshold must lie in [0, 1]``), from its own table of fields.

    Args:
        field: The options field, e.g. ``threshold``.
        problem: What is wrong with its value, e.g. ``must lie in [0, 1] (got 1.5)``.
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field} {problem}")
        self.field = field
        self.problem = problem


class InputError(AssayError):
    """Input data that cannot be read: a missing path, a file that is not Parquet, a truncation."""


class SchemaError(InputError):
    """Input data that reads, but does not follow the spans table or the trial contract."""


class InsufficientDataError(AssayError):
    """Too little data for the statistic that was asked for."""


class AgentError(AssayError):
    """One call of the agent failed (the trial becomes an ``error`` trial)."""


class CollectorError(AssayError):
    """A request the collector refuses; each kind maps to one OTLP/HTTP and gRPC status."""


class TooLargeError(CollectorError):
    """A body that exceeds a size limit (answered 413 / RESOURCE_EXHAUSTED)."""


class DecompressionError(CollectorError):
    """A body that claims a compression it does not have (answered 400)."""


class OverloadedError(CollectorError):
    """The queue is full: the sender should retry later (429 / RESOURCE_EXHAUSTED)."""


class UnavailableError(CollectorError):
    """The collector is shutting down or cannot write (503 / UNAVAILABLE)."""


class WalClosedError(CollectorError):
    """The log is closed (shutting down) or broken (a write failed); nothing was stored."""
