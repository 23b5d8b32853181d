import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.analysis._engines import SPANS_PER_BUCKET_ENV


def test_import_stats_loads_no_polars() -> None:
    code = (
        "import sys, assay.stats; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('polars', 'pyarrow')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_scipy_stats_and_pandas_load_only_when_an_analysis_needs_them(tmp_path) -> None:
    # The fixed cost of every command: importing the library and reading a trace set's
    # schema must not pay for scipy.stats (about 0.6 s) or pandas (about 1 s).
    code = (
        "import sys, assay, assay.cli, assay.stats, assay.judge, assay.analysis\n"
        "from assay.store import polars_schema\n"
        "polars_schema()\n"
        "bad = [m for m in ('scipy.stats', 'pandas') if m in sys.modules]\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_preloaded_waits_for_the_background_import_or_imports_itself() -> None:
    # Threads judging tests at once find scipy's statistics imported: none imports a module.
    code = (
        "import sys\n"
        "from assay.stats import preload, preloaded\n"
        "preloaded()\n"
        "assert 'scipy.stats' in sys.modules\n"
    )
    alone = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert alone.returncode == 0, alone.stderr
    started = code.replace("preloaded()\n", "preload()\npreloaded()\n")
    waited = subprocess.run([sys.executable, "-c", started], capture_output=True, text=True)
    assert waited.returncode == 0, waited.stderr


_ANALYZE_AND_LIST_PANDAS = """
import sys
from assay.cli import app
try:
    app(["analyze", *sys.argv[1:]])
except SystemExit:
    pass
print("pandas" in sys.modules)
"""


@pytest.mark.parametrize("spans_per_bucket", [None, "60"])
@pytest.mark.parametrize("report", ["json", "html"])
def test_an_analysis_never_loads_pandas(
    traces: Path, tmp_path: Path, spans_per_bucket: str | None, report: str
) -> None:
    # pyarrow imports pandas the first time pa.array() meets a list or a numpy array (to ask
    # whether it is one of pandas' own): 0.3-0.6 s of every command for nothing assay uses.
    env = {k: v for k, v in os.environ.items() if k != SPANS_PER_BUCKET_ENV}
    if spans_per_bucket:
        env[SPANS_PER_BUCKET_ENV] = spans_per_bucket
    out = tmp_path / f"report.{report}"
    args = [str(traces), "--format", report, "--output", str(out)]
    result = subprocess.run(
        [sys.executable, "-c", _ANALYZE_AND_LIST_PANDAS, *args],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.stat().st_size > 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "False", result.stderr
