"""The webhook against hostile receivers on 127.0.0.1: slow, silent, redirecting, swamped.

Each receiver is a real socket server; nothing is mocked. Every event not delivered must be
named with its true number of attempts.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from assay.watch import WebhookSender

Answer = Callable[[socket.socket], None]


@contextmanager
def _server(answer: Answer) -> Iterator[tuple[str, list[bytes]]]:
    """A receiver that reads each request, records it, then answers with ``answer``."""
    listener = socket.create_server(("127.0.0.1", 0))
    received: list[bytes] = []
    done = threading.Event()

    def serve() -> None:
        listener.settimeout(0.1)
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    def handle(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                received.append(conn.recv(65536))
                answer(conn)
            except OSError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/hook", received
    finally:
        done.set()
        listener.close()
        thread.join(2)


def _drip(conn: socket.socket) -> None:
    for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n":
        conn.sendall(bytes([byte]))
        time.sleep(0.4)


def _silent(conn: socket.socket) -> None:
    time.sleep(30)


def _redirect(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n")


def _event(i: int) -> dict[str, object]:
    return {"event": "verdict_changed", "test": f"t{i}", "time": f"T{i}"}


def test_a_receiver_dripping_its_answer_is_cut_off_at_the_total_deadline() -> None:
    with _server(_drip) as (url, received):
        sender = WebhookSender(url, attempts=2, backoff=0.01, timeout=1.0).start()
        sender.send(_event(1))
        sender.stop(timeout=30)
    assert (sender.delivered, sender.failed) == (0, 1)
    (line,) = sender.undelivered
    assert "after 2 attempt(s): no answer within 1 s" in line and "test t1" in line
    assert len(received) == 2


def test_a_redirect_is_not_followed_and_not_counted_as_delivered() -> None:
    with _server(_redirect) as (url, received):
        sender = WebhookSender(url, attempts=6, backoff=0.01).start()
        sender.send(_event(1))
        sender.stop(timeout=30)
    assert (sender.delivered, sender.failed) == (0, 1)
    (line,) = sender.undelivered
    assert "after 1 attempt(s): HTTP 302: a redirect, not followed" in line
    assert len(received) == 1 and received[0].startswith(b"POST /hook")  # no GET after it


def test_at_exit_every_undelivered_event_is_named_with_its_true_attempts() -> None:
    with _server(_silent) as (url, received):
        sender = WebhookSender(url, attempts=6, timeout=60).start()
        for i in range(4):
            sender.send(_event(i))
        while not received:  # the first POST is in flight
            time.sleep(0.01)
        sender.stop(timeout=0.2)
    assert (sender.delivered, sender.failed) == (0, 4)
    first, *rest = sender.undelivered
    assert "test t0" in first and "after 1 attempt(s): the watch stopped during it" in first
    assert [line.split("test ")[1].split()[0] for line in rest] == ["t1", "t2", "t3"]
    assert all("after 0 attempt(s): the watch stopped first" in line for line in rest)


def test_a_full_queue_drops_its_oldest_and_names_each_one_dropped() -> None:
    with _server(_silent) as (url, received):
        sender = WebhookSender(url, capacity=2, timeout=60).start()
        sender.send(_event(0))
        while not received:  # t0 in flight: the queue holds the rest
            time.sleep(0.01)
        for i in range(1, 6):
            sender.send(_event(i))
        dropped = [line for line in sender.undelivered if "queue of 2 was full" in line]
        assert [line.split("test ")[1].split()[0] for line in dropped] == ["t1", "t2", "t3"]
        sender.stop(timeout=0.2)
    assert sender.failed == 6 and sender.delivered == 0
