"""A command agent's process: run it in its own process group, exchange its pipes, end it.

A command is done when it exits, not when its stdout reaches end-of-file: a background child
(`tool &` in a shell script, a tool server) inherits the pipe and may hold it open for hours.
Waiting for end-of-file once turned every trial of such an agent into "did not finish within
10 s". So the pipes are read until the command exits, then for at most :data:`EXIT_GRACE_S`
more — what it wrote before exiting is already in the pipe — and closed.

What the command left behind in its process group is killed as soon as it exits; a process
that started its own session (the user's daemon) is out of reach by design, and is neither
waited for nor killed (docs/reliability.md).

What is read is bounded, as a collector bounds a request body: stdout (the answer, JSON) at
:data:`MAX_STDOUT_BYTES` — past it the command is stopped and the trial is an error that
says so (:class:`OutputTooLarge`); stderr (read for its last line) keeps its last
:data:`MAX_STDERR_BYTES`, the rest dropped and counted, and never stops the command.
"""

from __future__ import annotations

import os
import select
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Sequence

__all__ = [
    "EXIT_GRACE_S",
    "MAX_STDERR_BYTES",
    "MAX_STDOUT_BYTES",
    "OutputTooLarge",
    "run_command",
    "stop_commands",
]

MAX_STDOUT_BYTES = 16 * 1024 * 1024
"""The most a command's answer (stdout) may hold: 16 MiB, far above any agent's JSON."""
MAX_STDERR_BYTES = 64 * 1024
"""The last bytes of a command's stderr kept (its last line is shown on a failure)."""


class OutputTooLarge(Exception):
    """The command wrote more than :data:`MAX_STDOUT_BYTES` on stdout; it was stopped."""


EXIT_GRACE_S = 0.2
"""Seconds the pipes are still read after the command exited, for a holder outside its group."""
_POLL_S = 0.05
"""How often the exit is checked while a pipe stays open (a background child holds it)."""

_RUNNING: set[subprocess.Popen[bytes]] = set()
_RUNNING_LOCK = threading.Lock()


def run_command(
    argv: Sequence[str], stdin: str, env: dict[str, str], timeout: float | None
) -> tuple[int, str, str]:
    """Run one command in its own process group; return its status, stdout and stderr.

    Whatever the command started in its group and left running is killed when it exits,
    when it times out and when the run is interrupted (:func:`stop_commands`), so a trial
    leaves nothing behind.

    Raises:
        subprocess.TimeoutExpired: The command did not exit within ``timeout`` seconds (it
            and its group are killed first).
        OutputTooLarge: Its stdout passed :data:`MAX_STDOUT_BYTES` (it and its group are
            killed first).
        OSError: The command cannot be started.
    """
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    with _RUNNING_LOCK:
        _RUNNING.add(process)
    try:
        deadline = None if timeout is None else time.monotonic() + timeout
        stdout, stderr = _exchange(process, stdin.encode(), deadline)
        if process.returncode is None:  # closed its pipes, still running
            process.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise subprocess.TimeoutExpired(argv, timeout or 0.0) from None
    finally:
        _kill_group(process, signal.SIGKILL)  # its leftovers, or all of it on a timeout
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
        process.wait()  # killed or exited: reaped at once
        with _RUNNING_LOCK:
            _RUNNING.discard(process)
    return process.returncode, _text(stdout), _text(stderr)


def _exchange(
    process: subprocess.Popen[bytes], data: bytes, deadline: float | None
) -> tuple[bytes, bytes]:
    """Write ``data`` to stdin and read stdout and stderr until the command is done with them.

    Done: both pipes at end-of-file, or the command exited and :data:`EXIT_GRACE_S` passed.

    Raises:
        subprocess.TimeoutExpired: ``deadline`` passed with the command still running.
    """
    assert process.stdin and process.stdout and process.stderr
    out, err = process.stdout.fileno(), process.stderr.fileno()
    read: dict[int, bytearray] = {out: bytearray(), err: bytearray()}
    dropped = 0  # stderr bytes before the last MAX_STDERR_BYTES
    written = 0
    with selectors.DefaultSelector() as selector:
        for fd in read:
            selector.register(fd, selectors.EVENT_READ)
        if data:
            selector.register(process.stdin.fileno(), selectors.EVENT_WRITE)
        else:
            process.stdin.close()
        ends: float | None = None  # when the pipes stop being read: exit + grace
        while any(fd in read for fd in selector.get_map()):
            now = time.monotonic()
            if ends is None and process.poll() is not None:
                ends = now + EXIT_GRACE_S
                _kill_group(process, signal.SIGKILL)  # its group's children: end-of-file soon
            limit = ends if ends is not None else deadline
            if limit is not None and now >= limit:
                if ends is None:
                    raise subprocess.TimeoutExpired(process.args, 0.0)
                break  # exited; a holder outside its group keeps the pipe: not waited for
            wait = _POLL_S if limit is None else min(_POLL_S, limit - now)
            for key, _ in selector.select(wait):
                fd = int(key.fd)
                if fd in read:
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        selector.unregister(fd)
                        continue
                    held = read[fd]
                    held += chunk
                    if fd == out and len(held) > MAX_STDOUT_BYTES:
                        raise OutputTooLarge(
                            f"command wrote more than {MAX_STDOUT_BYTES // (1024 * 1024)} MiB "
                            "on stdout: stopped, its answer not read"
                        )
                    if fd == err and len(held) > MAX_STDERR_BYTES:
                        dropped += len(held) - MAX_STDERR_BYTES
                        del held[: len(held) - MAX_STDERR_BYTES]
                    continue
                try:  # stdin: select promises room for PIPE_BUF bytes without blocking
                    written += os.write(fd, data[written : written + select.PIPE_BUF])
                except BrokenPipeError:  # it stopped reading its input: its answer decides
                    written = len(data)
                if written >= len(data):
                    selector.unregister(fd)
                    process.stdin.close()
    if dropped:
        read[err][:0] = f"[first {dropped} bytes of stderr dropped]\n".encode()
    return bytes(read[out]), bytes(read[err])


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")  # JSON is UTF-8 (RFC 8259)


def _kill_group(process: subprocess.Popen[bytes], signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass  # already gone


def stop_commands(grace_s: float = 2.0) -> None:
    """End every running command agent and its process group: SIGTERM, then SIGKILL."""
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for process in running:
        _kill_group(process, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for process in running:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        _kill_group(process, signal.SIGKILL)  # stragglers of the group, too
