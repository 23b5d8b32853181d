"""A spans file landing wakes ``assay watch`` (file-system notification), one being written not."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.store import TEMP_SUFFIX
from assay.watch import FileNotifier

_GIVE_UP_S = 20.0
"""How long a notification may take on a loaded machine before the test says none came."""


def _noted(notifier: FileNotifier) -> bool:
    end = time.monotonic() + _GIVE_UP_S
    while time.monotonic() < end:
        if notifier.landed():
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def notifier(tmp_path: Path) -> Iterator[FileNotifier]:
    notifier = FileNotifier((str(tmp_path),))
    if not notifier.active:
        pytest.skip(f"no file-system notification here: {notifier.why_not}")
    yield notifier
    notifier.close()


def test_a_file_renamed_into_a_new_partition_folder_is_noted(
    tmp_path: Path, notifier: FileNotifier
) -> None:
    folder = tmp_path / "date=2026-12-06" / "service=agent"
    folder.mkdir(parents=True)  # made after the watch started, as a writer makes partitions
    time.sleep(0.2)  # the recursive watch adds the new folders as they come
    written = folder / f".spans-1.parquet{TEMP_SUFFIX}"
    written.write_bytes(b"PAR1" * 1000)
    written.rename(folder / "spans-1.parquet")  # how every writer completes a file
    assert _noted(notifier)
    assert not notifier.landed()  # the note is cleared once read


def test_a_file_being_written_is_not_noted(tmp_path: Path, notifier: FileNotifier) -> None:
    written = tmp_path / f".spans-2.parquet{TEMP_SUFFIX}"
    with written.open("wb") as f:
        for _ in range(20):
            f.write(b"x" * 4096)
            f.flush()
    (tmp_path / "notes.txt").write_text("not a spans file")
    time.sleep(0.5)
    assert not notifier.landed()
    (tmp_path / "copied.parquet").write_bytes(b"PAR1")  # a file copied in lands by creation
    assert _noted(notifier)


def test_the_folders_watched_are_those_the_paths_name(tmp_path: Path) -> None:
    from assay.watch._notify import _folders

    inner = tmp_path / "traces" / "date=2026-12-06"
    inner.mkdir(parents=True)
    (inner / "a.parquet").write_bytes(b"")
    traces = str(tmp_path / "traces")
    assert _folders((traces, str(inner))) == [traces]  # a folder inside another: once
    assert _folders((str(inner / "a.parquet"),)) == [str(inner)]  # a file: its folder
    assert _folders((f"{traces}/date=*/*.parquet",)) == [traces]  # before the wildcard
    # A pattern below a folder that does not exist yet: nothing to watch (the loop polls),
    # never the working folder.
    assert _folders((str(tmp_path / "later" / "*.parquet"),)) == []
    assert FileNotifier((str(tmp_path / "later" / "*.parquet"),)).why_not == (
        "no folder to watch yet"
    )
