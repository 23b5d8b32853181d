import subprocess
import sys


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
