"""The command line keeps freed pages for a while, maps large blocks on their own and has pyarrow
allocate with jemalloc; a user's own allocator setting wins."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import pytest

from assay._cli._allocator import (
    ALLOCATOR_ENV,
    ARROW_POOL,
    ARROW_POOL_ENV,
    KEEP_FREED_PAGES,
    MMAP_THRESHOLD_ENV,
    arrow_pool,
    keep_freed_pages,
)


def _has_mallinfo2() -> bool:
    try:
        return hasattr(ctypes.CDLL("libc.so.6"), "mallinfo2")
    except OSError:
        return False


_SHOW = "import assay.cli, polars, os; print(os.environ.get('_RJEM_MALLOC_CONF'))"


def _printed(code: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _setting_seen_by_polars(env: dict[str, str]) -> str:
    return _printed(_SHOW, env)


def test_the_cli_sets_it_before_polars_loads_and_polars_applies_it_last() -> None:
    env = {k: v for k, v in os.environ.items() if k != ALLOCATOR_ENV}
    # Polars puts its defaults first and the variable's value after them: the last one wins.
    assert _setting_seen_by_polars(env).endswith("," + KEEP_FREED_PAGES)


def test_a_users_setting_is_left_alone() -> None:
    env = {**os.environ, ALLOCATOR_ENV: "dirty_decay_ms:0"}
    assert _setting_seen_by_polars(env).endswith(",dirty_decay_ms:0")
    assert KEEP_FREED_PAGES not in _setting_seen_by_polars(env)


def test_not_set_once_polars_is_loaded(monkeypatch) -> None:
    import polars  # noqa: F401  (loaded: its allocator is configured already)

    monkeypatch.delenv(ALLOCATOR_ENV, raising=False)
    assert keep_freed_pages() is False
    assert ALLOCATOR_ENV not in os.environ


# A 4 MiB block freed moves glibc's threshold up to 4 MiB; a 1 MiB block is then mapped on its
# own only if the threshold stayed fixed. Prints the bytes mapped by the 1 MiB block.
_MAPPED = """
import ctypes, sys
if sys.argv[1] == "cli":
    import assay.cli
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
big = bytearray(4 << 20)
del big
before = libc.mallinfo2().hblkhd
block = bytearray(1 << 20)
print(libc.mallinfo2().hblkhd - before)
"""


def _mapped(how: str, env: dict[str, str]) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _MAPPED, how], env=env, capture_output=True, text=True, check=True
    )
    return int(done.stdout)


@pytest.mark.skipif(not _has_mallinfo2(), reason="glibc 2.33 or later only")
def test_the_cli_maps_large_blocks_on_their_own_unless_the_user_chose() -> None:
    env = {k: v for k, v in os.environ.items() if k != MMAP_THRESHOLD_ENV}
    assert _mapped("plain", env) == 0  # glibc's moving threshold: carved from a heap
    assert _mapped("cli", env) >= 1 << 20
    assert _mapped("cli", {**env, MMAP_THRESHOLD_ENV: str(8 << 20)}) == 0


_ARROW_POOL = "import assay.cli, pyarrow; print(pyarrow.default_memory_pool().backend_name)"


def _arrow_pool(env: dict[str, str]) -> str:
    return _printed(_ARROW_POOL, env)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="set on Linux only")
def test_the_cli_has_pyarrow_allocate_with_jemalloc_unless_the_user_chose() -> None:
    env = {k: v for k, v in os.environ.items() if k != ARROW_POOL_ENV}
    assert _arrow_pool(env) == ARROW_POOL
    assert _arrow_pool({**env, ARROW_POOL_ENV: "mimalloc"}) == "mimalloc"


def test_pyarrow_is_left_alone_once_loaded(monkeypatch) -> None:
    import pyarrow  # noqa: F401  (loaded: it may have chosen its allocator already)

    monkeypatch.delenv(ARROW_POOL_ENV, raising=False)
    assert arrow_pool() is False
    assert ARROW_POOL_ENV not in os.environ
