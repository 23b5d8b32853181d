"""Flags renamed so that each spelling has one meaning; the old spelling still works, and says so.

A renamed flag keeps its old spelling for a release, as ruff and pytest do: a cron line or a
service unit does not break on upgrade, and one line on stderr names the new spelling. The old
spelling is rewritten to the new one before click parses, so it is not an option of its own
(not in ``--help``) and means exactly what the new one means.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from assay.errors import ConfigError

RENAMED: dict[str, dict[str, tuple[str, str]]] = {
    "run": {
        "--run-id": (
            "--assign-run-id",
            "--run-id selects the trials of a run in analyze, compare and report",
        ),
    },
    "watch": {
        "--alpha": ("--drift-alpha", "--alpha is a regression's significance in analyze"),
        "--delta": (
            "--drift-margin",
            "--delta means the smallest drop worth detecting in analyze, plan and compare",
        ),
        "--max-cost": ("--trial-cost-bound", "--max-cost is a run's budget in run"),
        "--interval": ("--poll-interval", "an interval is a confidence interval elsewhere"),
    },
}
"""Per command: old spelling → (new spelling, why it moved)."""


def renamed(command: str, args: Sequence[str]) -> list[str]:
    """``args`` with every old spelling of ``command``'s flags replaced by the new one.

    Raises:
        ConfigError: Both spellings of one flag are given.
    """
    table = RENAMED.get(command, {})
    out = list(args)
    end = out.index("--") if "--" in out else len(out)
    for i, arg in enumerate(out[:end]):
        old, eq, value = arg.partition("=")
        if old not in table:
            continue
        new, why = table[old]
        if any(a == new or a.startswith(new + "=") for a in out[:end]):
            raise ConfigError(f"{old} is the deprecated name of {new}: give {new} alone")
        print(f"assay {command}: {old} is deprecated, use {new} ({why})", file=sys.stderr)
        out[i] = new + eq + value
    return out
