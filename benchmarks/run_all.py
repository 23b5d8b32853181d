"""Run every benchmark (``benchmarks/bench_*.py``) in turn: ``make bench``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    """Run each benchmark script; return non-zero if any of them crashed."""
    failed = 0
    for script in sorted(Path(__file__).parent.glob("bench_*.py")):
        print(f"\n=== {script.name} ===", flush=True)
        failed |= subprocess.run([sys.executable, str(script)], check=False).returncode != 0
    return int(failed)


if __name__ == "__main__":
    sys.exit(main())
