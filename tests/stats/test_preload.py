"""scipy's statistics are imported in the background, and nowhere at module level."""

from __future__ import annotations

import subprocess
import sys

_PROGRAM = """
import sys, threading
import assay.api, assay.cli  # every module the analysis runs before its statistics
assert "scipy.stats" not in sys.modules, "scipy.stats imported at module level"
from assay.stats import preload
preload()
for thread in threading.enumerate():
    if thread.name == "assay-preload":
        thread.join()
assert "scipy.stats" in sys.modules
preload()  # imported already: no second thread
assert not any(t.name == "assay-preload" for t in threading.enumerate())
"""


def test_preload_imports_scipy_stats_in_a_thread_and_nothing_imported_it_before() -> None:
    done = subprocess.run([sys.executable, "-c", _PROGRAM], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
