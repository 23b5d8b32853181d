"""No test asserts how long something took by the wall clock (docs/architecture.md).

On a busy machine a wall-clock bound that held alone fails, and one loose enough never to fail
tests nothing; speed lives in benchmarks/. Two things stay allowed: a deadline for waiting on an
event (``assert time.monotonic() < deadline`` inside a polling loop: it bounds a hang, and the
event is what the test asserts) and a bound on the process's own CPU time (``time.process_time``,
which other processes on the machine do not inflate) guarding against runaway work.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
WALL_CLOCKS = {"time", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns"}


def _is_wall_clock(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in WALL_CLOCKS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "time"
    )


def _wall_clock_names(tree: ast.AST) -> set[str]:
    """Names bound to a wall-clock reading or to a difference of readings."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(_is_wall_clock(n) for n in ast.walk(node.value)):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def timed_assertions(source: str) -> list[int]:
    """Lines of ``source`` whose assertion measures an elapsed wall-clock time."""
    tree = ast.parse(source)
    clocked = _wall_clock_names(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        for sub in ast.walk(node.test):
            if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Sub):
                sides = (sub.left, sub.right)
                if any(
                    _is_wall_clock(s) or (isinstance(s, ast.Name) and s.id in clocked)
                    for s in sides
                ):
                    found.append(node.lineno)
                    break
            if isinstance(sub, ast.Name) and sub.id in clocked and "deadline" not in sub.id:
                found.append(node.lineno)
                break
    return found


def test_the_check_finds_an_elapsed_time_assertion() -> None:
    assert timed_assertions(
        "import time\nstarted = time.perf_counter()\nassert time.perf_counter() - started < 5\n"
    ) == [3]
    assert timed_assertions(
        "import time\nt0 = time.monotonic()\nelapsed = time.monotonic() - t0\nassert elapsed < 2\n"
    ) == [4]
    # allowed: a deadline on a wait, a bound on the process's own CPU time
    assert not timed_assertions(
        "import time\ndeadline = time.monotonic() + 10\nassert time.monotonic() < deadline\n"
    )
    assert not timed_assertions(
        "import time\nstarted = time.process_time()\nassert time.process_time() - started < 10\n"
    )


def test_no_test_asserts_wall_clock_time() -> None:
    offending = [
        f"{path.relative_to(TESTS)}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        if "node_modules" not in path.parts
        for line in timed_assertions(path.read_text())
    ]
    assert not offending, offending
