"""SIGTERM and SIGINT stop the waiting loops of `assay watch` and `assay collect`, never hang."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import textwrap

import pytest

# The loop waits with a zero timeout, so a signal nearly always lands while the loop is inside
# its wait: where a handler that took the waiting side's lock hung on about half the signals.
_LOOP = textwrap.dedent(
    """
    import sys
    from assay._stop_signal import StopSignal
    with StopSignal() as stop:
        print("ready", flush=True)
        while not stop.wait(0):
            pass
        print(stop.received.name, flush=True)
    """
)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_a_loop_waiting_on_it_every_time(signum: signal.Signals) -> None:
    pace = random.Random(7)
    for _ in range(15):
        with subprocess.Popen(
            [sys.executable, "-c", _LOOP], stdout=subprocess.PIPE, text=True
        ) as proc:
            assert proc.stdout is not None
            assert proc.stdout.readline() == "ready\n"
            try:
                proc.wait(pace.uniform(0.005, 0.03))  # a moment into the loop, never the same one
            except subprocess.TimeoutExpired:
                pass
            proc.send_signal(signum)
            try:
                out, _ = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                pytest.fail(f"still waiting 10 s after {signum.name}")
        assert (proc.returncode, out) == (0, f"{signum.name}\n")


def test_the_handlers_before_are_back_after_the_block() -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    from assay._stop_signal import StopSignal

    with StopSignal() as stop:
        assert signal.getsignal(signal.SIGTERM) != before[0]
        signal.raise_signal(signal.SIGTERM)
        assert stop.wait(5) and stop.received is signal.SIGTERM
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


def test_outside_the_main_thread_it_refuses_and_leaves_no_socket_open() -> None:
    import threading

    from assay._stop_signal import StopSignal

    stop = StopSignal()
    raised: list[BaseException] = []

    def enter() -> None:
        try:
            stop.__enter__()
        except ValueError as exc:
            raised.append(exc)

    thread = threading.Thread(target=enter)
    thread.start()
    thread.join()
    assert raised and stop._wake_read.fileno() == -1 and stop._wake_write.fileno() == -1
