"""The one error tree of assay.

Every error a user can cause derives from :class:`AssayError`; the CLI turns any of them into a
single line and exit code 2. Anything else escaping is a bug.

::

    AssayError
     ├── ConfigError             a bad option, flag or configuration value
     ├── InputError              data that cannot be read (a missing path, a corrupt file)
     │    └── SchemaError        data that reads but breaks the spans-table or trial contract
     └── InsufficientDataError   too little data for the statistic that was asked for
"""

from __future__ import annotations

__all__ = [
    "AssayError",
    "ConfigError",
    "InputError",
    "InsufficientDataError",
    "SchemaError",
]


class AssayError(Exception):
    """Base class of every error a user of assay can cause."""


class ConfigError(AssayError):
    """A bad option, flag or configuration value."""


class InputError(AssayError):
    """Input data that cannot be read: a missing path, a file that is not Parquet, a truncation."""


class SchemaError(InputError):
    """Input data that reads, but does not follow the spans table or the trial contract."""


class InsufficientDataError(AssayError):
    """Too little data for the statistic that was asked for."""
