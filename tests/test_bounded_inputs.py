"""Every file a command reads by name is read within a bound: /dev/zero is refused in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from assay._bounded import MAX_DOCUMENT_BYTES, read_bounded

sys.path.insert(0, str(Path(__file__).resolve().parent / "watch"))
from streams import write_trials  # noqa: E402


def _assay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("command", ["analyze", "watch"])
def test_prices_from_dev_zero_are_refused_in_one_line_exit_2(command: str, tmp_path: Path) -> None:
    extra = ["--once"] if command == "watch" else []
    write_trials(tmp_path, [True] * 5)
    done = _assay(command, str(tmp_path), *extra, "--prices", "/dev/zero")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert "/dev/zero: price table larger than 16 MiB: not read" in done.stderr


def _sparse(path: Path, size: int) -> Path:
    with path.open("wb") as handle:
        handle.truncate(size)  # a file of zeros that takes no disk
    return path


def test_a_suite_past_the_bound_is_refused_in_one_line_exit_2(tmp_path: Path) -> None:
    suite = _sparse(tmp_path / "suite.yaml", 1 << 34)  # 16 GiB
    done = _assay("run", str(suite), "--command", "true")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{suite}: suite larger than 16 MiB: not read" in done.stderr


def test_a_tls_certificate_past_the_bound_is_refused(tmp_path: Path) -> None:
    pem = _sparse(tmp_path / "cert.pem", 1 << 34)
    args = ["collect", "--out", str(tmp_path), "--grpc-port", "0", "--http-port", "0"]
    done = _assay(*args, "--tls-cert", str(pem), "--tls-key", str(pem))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"{pem}: certificate or key larger than 1 MiB" in done.stderr


def test_a_file_just_at_the_bound_is_read_and_one_byte_more_is_not(tmp_path: Path) -> None:
    path = tmp_path / "doc.yaml"
    path.write_bytes(b"x" * MAX_DOCUMENT_BYTES)
    assert len(read_bounded(path, "document")) == MAX_DOCUMENT_BYTES
    path.write_bytes(b"x" * (MAX_DOCUMENT_BYTES + 1))
    with pytest.raises(Exception, match="larger than 16 MiB"):
        read_bounded(path, "document")
