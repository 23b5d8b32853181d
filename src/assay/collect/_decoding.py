"""Decoding logged requests into spans-table batches, in worker processes.

Decoding OTLP into typed columns is the collector's hottest Python loop, and Python runs one
thread at a time per process. So the converter hands records to a small pool of worker
processes (one per core by default), each returning its batch as Arrow IPC bytes, and the
receivers keep their interpreter to themselves. With ``workers=0`` (or if the pool breaks)
records are decoded in the converter thread instead.

The first decode in a process is slow: pyarrow imports pandas on its first ``pa.array`` (to
check for pandas objects) — 1 s here, 6 s on a busy machine. Records that waited for it, and
for spawned workers starting, kept a running collector's first spans out of sight for 2–6 s
(measured). So the pool pays it when it is made, before the collector listens: it decodes an
empty request in the calling thread, starts every worker with one, and decodes records in the
calling thread until every worker has answered.
"""

from __future__ import annotations

import importlib.util
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import pyarrow as pa

from assay.collect._wal import KIND_LOGS, KIND_TRACES
from assay.errors import InputError
from assay.ingest import logs_to_table, parse_logs_protobuf, parse_traces_protobuf, traces_to_table

__all__ = ["DecodePool", "decode_record"]

_log = logging.getLogger("assay.collect")


def decode_record(kind: int, payload: bytes) -> pa.Table:
    """Decode one logged request into a spans-table batch.

    Raises:
        InputError: The record is not a valid request of its kind.
    """
    if kind == KIND_TRACES:
        decoded = traces_to_table(parse_traces_protobuf(payload))
        if decoded.rejected:
            # Receivers refuse these before logging; a log written by an older version may
            # still hold some. The others of the record are stored.
            _log.error(
                "a logged request holds %d span(s) the table cannot hold, not stored: %s",
                decoded.rejected,
                decoded.problem,
            )
        return decoded.table
    if kind == KIND_LOGS:
        return logs_to_table(parse_logs_protobuf(payload)).table
    raise InputError(f"unknown record kind {kind}")


def _decode_to_ipc(kind: int, payload: bytes) -> bytes | str:
    """Worker side: the batch as Arrow IPC stream bytes, or an error message."""
    try:
        table = decode_record(kind, payload)
    except Exception as exc:  # one record must never stop the converter
        return f"{type(exc).__name__}: {exc}"
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def remember_missing_imports() -> None:
    """Make pyarrow's repeated look-up of an absent optional module cheap.

    pyarrow checks for ``dateutil`` on conversions from Python objects. When it is not installed,
    every check is a failed import that searches ``sys.path`` again — about 2 µs per decoded
    span. A ``None`` entry in ``sys.modules`` makes later imports fail at once. Only called in
    processes the collector owns (its workers and ``assay collect`` itself).
    """
    if importlib.util.find_spec("dateutil") is None:
        sys.modules.setdefault("dateutil.relativedelta", None)  # type: ignore[arg-type]


def _worker_init(parent: int) -> None:
    remember_missing_imports()
    # Signals are for the collector process, which drains and then stops the pool; a Ctrl-C
    # reaching the whole process group must not kill the workers mid-drain.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # If the collector is killed (kill -9), nobody shuts the pool down: leave with it.
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()


def _exit_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def warm_up() -> int:
    """Decode an empty request, so that the next decode pays no first-time imports."""
    decode_record(KIND_TRACES, b"")
    return os.getpid()


def default_workers() -> int:
    """One worker per core, at most 4."""
    return max(1, min(4, os.cpu_count() or 1))


class DecodePool:
    """Decode records in order, ``workers`` processes at a time.

    :meth:`submit` queues a record; :meth:`next` returns the batch of the oldest one (or None if
    it could not be decoded), so results come back in submission order.

    Args:
        workers: Worker processes; 0 decodes in the calling thread.
    """

    def __init__(self, workers: int) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._starting: list[Future[int]] = []
        if workers > 0:
            try:
                self._pool = ProcessPoolExecutor(
                    max_workers=workers,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_worker_init,
                    initargs=(os.getpid(),),
                )
                # A task per worker starts them all now (the executor starts them on demand).
                self._starting = [self._pool.submit(warm_up) for _ in range(workers)]
            except (OSError, ImportError) as exc:  # e.g. no working semaphores in a sandbox
                _log.warning("cannot start decode workers (%s); decoding in one thread", exc)
                self._pool = None
        warm_up()
        self.depth = 2 * workers + 1
        self._inflight: deque[tuple[Future[bytes | str] | None, int, bytes]] = deque()

    def __len__(self) -> int:
        return len(self._inflight)

    def submit(self, kind: int, payload: bytes) -> None:
        """Queue one record for decoding."""
        future = None
        if self._pool is not None and self._started():
            try:
                future = self._pool.submit(_decode_to_ipc, kind, payload)
            except (BrokenProcessPool, RuntimeError) as exc:
                self._broken(exc)
        self._inflight.append((future, kind, payload))

    def _started(self) -> bool:
        """Whether every worker is up (until then, records are decoded in this thread)."""
        if self._starting and all(f.done() for f in self._starting):
            self._starting = []
        return not self._starting

    def next(self) -> tuple[pa.Table | None, int]:
        """The oldest record's batch (None if undecodable) and its payload size."""
        future, kind, payload = self._inflight.popleft()
        result: bytes | str | None = None
        if future is not None:
            try:
                result = future.result()
            except BrokenProcessPool as exc:
                self._broken(exc)
        if result is None:
            try:
                return decode_record(kind, payload), len(payload)
            except Exception as exc:  # one record must never stop the converter
                result = f"{type(exc).__name__}: {exc}"
        if isinstance(result, str):
            _log.error("skipping a logged request that cannot be converted: %s", result)
            return None, len(payload)
        with pa.ipc.open_stream(pa.py_buffer(result)) as reader:
            return reader.read_all(), len(payload)

    def _broken(self, exc: BaseException) -> None:
        if self._pool is not None:
            _log.warning("decode workers failed (%s); decoding in the converter thread", exc)
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def close(self) -> None:
        """Stop the workers (after every queued record was taken with :meth:`next`)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
