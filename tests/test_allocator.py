"""The command line keeps freed pages for a while; a user's own allocator setting wins."""

from __future__ import annotations

import os
import subprocess
import sys

from assay._cli._allocator import ALLOCATOR_ENV, KEEP_FREED_PAGES, keep_freed_pages

_SHOW = "import assay.cli, polars, os; print(os.environ.get('_RJEM_MALLOC_CONF'))"


def _setting_seen_by_polars(env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _SHOW], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


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
