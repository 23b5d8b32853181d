"""Importing scipy's statistics in the background while the spans are read (:func:`preload`).

``scipy.stats`` takes 1–2 s of one core to import, and every analysis needs it, but only once
the trials table is made. Reading spans into trials runs in Polars' threads, which release
Python's lock and leave a core idle part of the time; an import started beside them costs
the command little of its wall time. Every import of scipy in assay is inside a function, so
the two threads never import scipy modules in opposite orders (no import-lock cycle); the
first function to need it waits for the background import to finish, and an import that
fails in the background fails again, with its own error, where it is needed.
"""

from __future__ import annotations

import importlib
import sys
import threading
from typing import Final

_MODULES: Final = ("scipy.stats",)


def preload() -> None:
    """Start importing scipy's statistics in a background thread (once; no-op if imported)."""
    if all(name in sys.modules for name in _MODULES):
        return
    threading.Thread(target=_import, name="assay-preload", daemon=True).start()


def _import() -> None:
    for name in _MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            return  # the import where scipy is needed reports it


def preloaded() -> None:
    """Have scipy's statistics imported: wait for the background import, or import them here.

    Called before work is handed to threads that may need them: each of those threads then
    finds the modules imported, and none imports a module while another does.
    """
    for name in _MODULES:
        importlib.import_module(name)
