"""Whether a framework's module can be imported, without importing it.

``importlib.util.find_spec("a.b")`` imports ``a`` first and raises when ``a`` itself is absent,
so a dotted name of a framework that is not installed errors at collection instead of skipping.
A find_spec, not an import: a broken install must fail the tests, not skip them.
"""

from __future__ import annotations

import importlib.util


def installed(module: str) -> bool:
    """True when ``module`` (dotted or not) is there to import."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is absent
        return False
