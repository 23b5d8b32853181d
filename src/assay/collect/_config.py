"""The collector's settings, and the limits that keep it safe in front of untrusted senders."""

from __future__ import annotations

import ipaddress
import zlib
from dataclasses import dataclass
from pathlib import Path

from assay.errors import ConfigError, DecompressionError, OptionError, TooLargeError
from assay.store import DEFAULT_FANOUT

__all__ = [
    "CollectorConfig",
    "DecompressionError",
    "TooLargeError",
    "gunzip_bounded",
    "inflate_bounded",
]


@dataclass(frozen=True, slots=True)
class CollectorConfig:
    """Everything ``assay collect`` can be told.

    The defaults are safe for a laptop: loopback only, fsync on, bounded memory.
    """

    out: Path
    """Output folder of the spans table (Hive-partitioned Parquet files)."""
    host: str = "127.0.0.1"
    """Interface to bind; ``0.0.0.0`` exposes the collector to the network."""
    http_port: int | None = 4318
    """OTLP/HTTP port (``0`` picks a free port, ``None`` disables the receiver)."""
    grpc_port: int | None = 4317
    """OTLP/gRPC port (``0`` picks a free port, ``None`` disables the receiver)."""
    token: str | None = None
    """Bearer token every request must carry (``Authorization: Bearer …``); None = no auth."""
    tls_cert: Path | None = None
    """Serve both receivers over TLS with this certificate chain (PEM; with ``tls_key``)."""
    tls_key: Path | None = None
    """The private key (PEM) of ``tls_cert``."""
    tls_client_ca: Path | None = None
    """Also require a client certificate signed by one of these CAs (PEM; mutual TLS)."""
    wal_dir: Path | None = None
    """Write-ahead log folder; default ``OUT/_wal`` (hidden from readers)."""
    partition_by: tuple[str, ...] = ("date", "service")
    """Hive partition keys of the output."""
    buckets: int | None = None
    """Also lay the output out in this many ``bucket=NN`` folders by trace (``docs/scale.md``)."""
    max_body_bytes: int = 16 * 1024 * 1024
    """Largest request body accepted as sent (compressed or not); larger gets 413."""
    max_decompressed_bytes: int = 64 * 1024 * 1024
    """Largest request once decompressed; a gzip bomb is refused with 413, not inflated."""
    max_queue_bytes: int = 128 * 1024 * 1024
    """Request bytes waiting to be logged or converted; beyond it senders get 429."""
    roll_bytes: int = 128 * 1024 * 1024
    """Roll output files (and checkpoint the log) after this many request bytes."""
    roll_age_s: float = 60.0
    """Roll output files (and checkpoint the log) at least this often while data arrives."""
    idle_flush_s: float = 0.5
    """Once no span has arrived for this long, write what was received to visible files, so a
    running collector's spans can be read within a second of a pause; 0 = only at the roll."""
    compact_fanout: int | None = DEFAULT_FANOUT
    """After each commit, merge a partition's files once it holds this many of one size tier
    (``assay.store.compact_folder``: crash-safe, docs/collector.md); None: never."""
    fsync: bool = True
    """fsync the write-ahead log before acknowledging (turning it off loses durability)."""
    retry_after_s: int = 1
    """Seconds senders are told to wait when pushed back."""
    max_connections: int = 512
    """Concurrent HTTP connections; more are answered 503 and closed."""
    max_gzip_members: int = 16
    """Concatenated gzip members one request may hold; more get 400 (a member flood)."""
    header_timeout_s: float = 20.0
    """Seconds a connection may take to send a request's line and headers (idle keep-alive
    time included); slower ones are closed (slowloris)."""
    body_timeout_s: float = 60.0
    """Seconds a request may take to send its body once its headers are in; slower ones are
    closed."""
    workers: int | None = None
    """Processes decoding OTLP into columns; None = one per core (at most 4), 0 = none."""
    log_file: Path | None = None
    """Write the collector's log here (rotated within ``log_file_bytes``) instead of stderr."""
    log_file_bytes: int = 10 * 1024 * 1024
    """Most bytes ``log_file`` and its one rotated copy (``log_file.1``) hold together."""
    verbose: bool = False
    """Log every request (DEBUG), and every repeated line."""

    def __post_init__(self) -> None:
        for name in (
            "max_body_bytes",
            "max_decompressed_bytes",
            "max_queue_bytes",
            "roll_bytes",
            "log_file_bytes",
        ):
            if getattr(self, name) <= 0:
                raise OptionError(name, "must be positive")
        for name in ("max_connections", "max_gzip_members"):
            if getattr(self, name) < 1:
                raise OptionError(name, "must be at least 1")
        for name in ("roll_age_s", "header_timeout_s", "body_timeout_s"):
            if getattr(self, name) <= 0:
                raise OptionError(name, "must be positive")
        if self.idle_flush_s < 0:
            raise OptionError("idle_flush_s", "must not be negative")
        if self.compact_fanout is not None and self.compact_fanout < 2:
            raise OptionError("compact_fanout", "must be at least 2 (or None: never compact)")
        if self.http_port is None and self.grpc_port is None:
            raise ConfigError("enable at least one receiver (an HTTP or a gRPC port)")
        for name in ("http_port", "grpc_port"):
            port = getattr(self, name)
            if port is not None and not 0 <= port <= 65535:
                raise OptionError(name, f"{port} is not a TCP port")
        if self.workers is not None and not 0 <= self.workers <= 64:
            raise OptionError("workers", f"must be between 0 and 64, not {self.workers}")
        if self.token is not None and not self.token.strip():
            raise ConfigError("the token must not be empty")

    def exposure_warning(self) -> str | None:
        """What to say loudly when the collector listens beyond this machine unprotected.

        Without a token (or a client certificate), anyone who can reach a non-loopback
        address could write spans into the trace set that gates releases; with a token but
        without TLS, anyone on the path can read the token. (The OpenTelemetry Collector
        warns the same way when a receiver binds 0.0.0.0.)
        """
        if _loopback(self.host) or self.tls_client_ca is not None:  # mTLS: clients proven
            return None
        if self.token is None:
            return (
                f"listening on {self.host} WITHOUT A TOKEN: anyone who can reach this address "
                "can write spans into the trace set; set --token (or ASSAY_COLLECT_TOKEN), or "
                "bind 127.0.0.1"
            )
        if self.tls_cert is None:
            return (
                f"listening on {self.host} WITHOUT TLS: the token crosses the network in clear "
                "text, readable by anyone on the path; set --tls-cert and --tls-key"
            )
        return None

    @property
    def wal_path(self) -> Path:
        """The write-ahead log folder actually used."""
        return self.wal_dir if self.wal_dir is not None else self.out / "_wal"


def _loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve to any interface


def gunzip_bounded(data: bytes, limit: int, max_members: int = 16) -> bytes:
    """Decompress gzip ``data`` without ever inflating more than ``limit`` bytes.

    Args:
        data: One or more concatenated gzip members.
        limit: Most bytes to inflate.
        max_members: Most members to accept: each costs a fresh inflater, so a body of
            thousands of tiny members would buy unbounded CPU with few bytes.

    Raises:
        TooLargeError: The data inflates beyond ``limit`` (a gzip bomb stops here).
        DecompressionError: The data is not valid gzip, or has more than ``max_members``.
    """
    out: list[bytes] = []
    size = 0
    rest = data
    try:
        while rest:
            if len(out) >= max_members:
                raise DecompressionError(f"more than {max_members} gzip members in one body")
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            chunk = inflater.decompress(rest, limit - size + 1)
            size += len(chunk)
            if size > limit or inflater.unconsumed_tail:
                raise TooLargeError(f"decompressed body exceeds {limit} bytes")
            if not inflater.eof:
                raise DecompressionError("truncated gzip data")
            out.append(chunk)
            rest = inflater.unused_data  # concatenated gzip members
    except zlib.error as exc:
        raise DecompressionError(f"invalid gzip data ({exc})") from exc
    return b"".join(out)


def inflate_bounded(data: bytes, limit: int) -> bytes:
    """Decompress HTTP ``deflate`` data (zlib-wrapped, or raw as some senders make it).

    The Python OTLP exporter offers ``deflate`` (``zlib.compress``) besides gzip.

    Raises:
        TooLargeError: The data inflates beyond ``limit``.
        DecompressionError: The data is neither zlib nor raw deflate, or is truncated.
    """
    # 0x78 is the first byte of every zlib header with the usual 32 KB window
    wbits = zlib.MAX_WBITS if data[:1] == b"\x78" else -zlib.MAX_WBITS
    inflater = zlib.decompressobj(wbits)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as exc:
        raise DecompressionError(f"invalid deflate data ({exc})") from exc
    if len(out) > limit or inflater.unconsumed_tail:
        raise TooLargeError(f"decompressed body exceeds {limit} bytes")
    if not inflater.eof or inflater.unused_data:
        raise DecompressionError("truncated or trailing deflate data")
    return out
