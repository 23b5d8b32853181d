"""The collector's test helpers (a real ``assay collect`` on 127.0.0.1) are shared with watch."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "collect"))
