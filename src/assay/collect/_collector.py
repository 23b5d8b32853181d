"""The collector: receivers → write-ahead log → converter → Parquet, started and drained."""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from pathlib import Path

from assay._stop_signal import StopSignal
from assay.collect._config import CollectorConfig
from assay.collect._converter import Converter, recover
from assay.collect._counters import Counters
from assay.collect._decoding import default_workers, remember_missing_imports
from assay.collect._grpc import GrpcReceiver
from assay.collect._http import HttpReceiver
from assay.collect._intake import Intake
from assay.collect._logs import GuardedHandler, open_log
from assay.collect._tls import load_tls
from assay.collect._wal import WriteAheadLog
from assay.errors import ConfigError

__all__ = ["Collector", "run_collector"]

_log = logging.getLogger("assay.collect")
LOCK_FILE = "LOCK"
#: In the output folder; readers skip names starting with ``_``.
OUT_LOCK_FILE = "_collector.lock"


class Collector:
    """An OTLP → Parquet collector, as a library object.

    ``start()`` first recovers whatever a previous run left in the write-ahead log, then opens
    the receivers; ``stop()`` refuses new requests, answers those in progress, writes every
    acknowledged span into visible files and empties the log.

    Example:
        >>> collector = Collector(CollectorConfig(out=Path("traces"), grpc_port=None))
        >>> collector.start()   # doctest: +SKIP
        >>> collector.stop()    # doctest: +SKIP
    """

    def __init__(self, config: CollectorConfig) -> None:
        self.config = config
        self.counters = Counters()
        self._http: HttpReceiver | None = None
        self._grpc: GrpcReceiver | None = None
        self._wal: WriteAheadLog | None = None
        self._converter: Converter | None = None
        self._intake: Intake | None = None
        self._stopped = False
        self._serving = False
        self._lock_fds: list[tuple[Path, int]] = []

    @property
    def http_port(self) -> int | None:
        """The bound OTLP/HTTP port, once started."""
        return self._http.port if self._http is not None else None

    @property
    def grpc_port(self) -> int | None:
        """The bound OTLP/gRPC port, once started."""
        return self._grpc.port if self._grpc is not None else None

    def start(self) -> None:
        """Recover the log, then start the converter and the receivers.

        Raises:
            ConfigError: A TLS file cannot be used, the output folder cannot be written or a
                port cannot be bound.
        """
        config = self.config
        tls = load_tls(config.tls_cert, config.tls_key, config.tls_client_ca)
        try:
            config.out.mkdir(parents=True, exist_ok=True)
            config.wal_path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"{config.out}: cannot create the output folder ({exc})") from exc
        self._lock_out()
        try:
            recovered = recover(config, self.counters)
        except OSError as exc:
            self._unlock_out()
            raise ConfigError(
                f"{config.out}: cannot convert the write-ahead log left by the last run "
                f"({exc.strerror or exc}); it is kept — free space and start again"
            ) from exc
        if recovered:
            _log.info("recovered %d acknowledged spans from the write-ahead log", recovered)
        intake_ref: list[Intake] = []
        converter = Converter(
            config,
            self.counters,
            request_rotation=lambda: wal.request_rotation(),
            release=lambda size: intake_ref[0].release(size),
            workers=default_workers() if config.workers is None else config.workers,
        )
        wal = WriteAheadLog(
            config.wal_path,
            on_durable=converter.on_durable,
            on_sealed=converter.on_sealed,
            fsync=config.fsync,
        )
        intake = Intake(config, wal, self.counters)
        intake_ref.append(intake)
        self.counters.add_gauge("queue_records", converter.queued)
        self.counters.add_gauge("queue_bytes", intake.queued_bytes)
        self.counters.add_gauge("converter_failed", lambda: int(converter.failed is not None))
        self.counters.add_gauge("wal_failed", lambda: int(wal.failed))
        self.counters.add_gauge("disk_full", lambda: int(wal.full_now() or converter.disk_full))
        self._wal, self._converter, self._intake = wal, converter, intake
        converter.start()
        address = ""  # the one being bound, for the error: the port is what the user fixes
        try:
            if config.http_port is not None:
                address = f"{config.host}:{config.http_port} (OTLP/HTTP, --http-port)"
                self._http = HttpReceiver(config, intake, self.counters, tls)
            if config.grpc_port is not None:
                address = f"{config.host}:{config.grpc_port} (OTLP/gRPC, --grpc-port)"
                self._grpc = GrpcReceiver(config, intake, self.counters, tls)
        except (OSError, RuntimeError) as exc:
            self.stop()
            raise ConfigError(f"cannot listen on {address}: {exc}") from exc
        if self._http is not None:
            self._http.start()
            scheme = "https" if tls is not None else "http"
            _log.info("OTLP/HTTP listening on %s://%s:%d", scheme, config.host, self._http.port)
        if self._grpc is not None:
            self._grpc.start()
            how = " (TLS)" if tls is not None else ""
            _log.info("OTLP/gRPC listening on %s:%d%s", config.host, self._grpc.port, how)
        warning = config.exposure_warning()
        if warning is not None:
            _log.warning("%s", warning)
        _log.info("writing spans to %s", config.out)
        self._serving = True

    def _lock_out(self) -> None:
        """Hold exclusive locks on the output folder and the log folder.

        One output folder, one collector: two collectors sharing ``OUT`` would share its
        staging area and delete each other's uncommitted files on recovery (losing acknowledged
        spans), even with separate logs. The locks are ``flock``s, so they vanish with the
        process, kill -9 included; a clean stop also removes the lock files.
        """
        config = self.config
        targets = [(config.out / OUT_LOCK_FILE, "output folder", "--out")]
        if config.wal_path.resolve() != config.out.resolve():
            targets.append((config.wal_path / LOCK_FILE, "write-ahead log", "--wal-dir"))
        for path, what, flag in targets:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                os.close(fd)
                self._unlock_out()
                raise ConfigError(
                    f"{path.parent}: another collector is using this {what}; give each "
                    f"collector its own {flag}"
                ) from exc
            self._lock_fds.append((path, fd))

    def _unlock_out(self) -> None:
        for path, fd in self._lock_fds:
            path.unlink(missing_ok=True)
            os.close(fd)
        self._lock_fds.clear()

    def stop(self) -> None:
        """Drain: refuse new requests (503), finish those in progress, flush everything."""
        if self._stopped:
            return
        self._stopped = True
        if self._intake is not None:
            self._intake.draining = True
        if self._http is not None:
            self._http.stop()
        if self._grpc is not None:
            self._grpc.stop()
        if self._wal is not None:
            self._wal.close()
        if self._converter is not None:
            self._converter.stop()
        self._unlock_out()
        if self._serving:  # a start that failed ends with its one error line alone
            _log.info("stopped: %s", self.counters.summary())


def run_collector(config: CollectorConfig, *, ready: threading.Event | None = None) -> None:
    """Run a collector until SIGTERM or SIGINT, then drain it, logging as ``config`` says.

    Args:
        config: The settings.
        ready: Set once the receivers listen (for embedding).
    """
    log = open_log(config.log_file, config.log_file_bytes, verbose=config.verbose)
    root = logging.getLogger()
    root.addHandler(log)
    level = root.level
    root.setLevel(logging.DEBUG if config.verbose else logging.INFO)
    try:
        _run(config, log, ready)
    finally:
        root.removeHandler(log)
        root.setLevel(level)
        log.close()


def _run(config: CollectorConfig, log: GuardedHandler, ready: threading.Event | None) -> None:
    remember_missing_imports()
    with StopSignal() as stop:
        collector = Collector(config)
        collector.counters.add_gauge("log_lines_dropped", lambda: log.dropped)
        collector.counters.add_gauge("log_lines_suppressed", lambda: log.suppressed)
        try:
            collector.start()
            if ready is not None:
                ready.set()
            while (received := stop.wait(0.5)) is None:
                pass
            # logged here, not in the handler: a handler runs inside whatever the thread was doing
            _log.info("received %s, draining", received.name)
        finally:
            collector.stop()
