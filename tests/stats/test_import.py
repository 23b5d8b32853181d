import subprocess
import sys


def test_import_stats_loads_no_polars() -> None:
    code = (
        "import sys, assay.stats, assay.verdict; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('polars', 'pyarrow')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
