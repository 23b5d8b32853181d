"""TLS for the receivers: one certificate and key (and optionally a client CA) for both.

As the OpenTelemetry Collector's ``tls`` settings of a receiver (``cert_file``, ``key_file``,
``client_ca_file``; TLS 1.2 at least, its ``min_version`` default): the files are read and
checked once at start, each named if it cannot be used, and the same bytes serve the HTTP
receiver (Python's ``ssl``) and the gRPC one (gRPC's own TLS).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

from assay._bounded import read_bounded
from assay.errors import ConfigError, InputError

__all__ = ["ServerTls", "failure_reason", "load_tls"]


@dataclass(frozen=True, slots=True)
class ServerTls:
    """A checked certificate chain and key, and the client CA when clients must show one."""

    context: ssl.SSLContext
    """Server-side context for the HTTP receiver (TLS 1.2 or later)."""
    cert: bytes
    """The server's certificate chain (PEM), for gRPC."""
    key: bytes
    """Its private key (PEM), for gRPC."""
    client_ca: bytes | None
    """CA certificates (PEM) a client's certificate must chain to; None = no client auth."""


def load_tls(cert: Path | None, key: Path | None, client_ca: Path | None) -> ServerTls | None:
    """Read and check the TLS files given to ``assay collect``; None when none is given.

    Raises:
        ConfigError: One line naming the flag and the file that cannot be used: missing,
            unreadable, not PEM, a key that does not match the certificate, or a client CA
            given without a certificate.
    """
    if cert is None and key is None:
        if client_ca is not None:
            raise ConfigError("--tls-client-ca needs --tls-cert and --tls-key (the server's own)")
        return None
    if cert is None or key is None:
        given, missing = ("--tls-cert", "--tls-key") if key is None else ("--tls-key", "--tls-cert")
        raise ConfigError(f"{given} needs {missing} too")
    cert_pem, key_pem = _read("--tls-cert", cert), _read("--tls-key", key)
    ca_pem = None if client_ca is None else _read("--tls-client-ca", client_ca)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    _load_certificates(context, "--tls-cert", cert, cert_pem, verify=False)
    try:
        context.load_cert_chain(cert, key)
    except (ssl.SSLError, OSError) as exc:
        raise ConfigError(
            f"--tls-key {key}: not a PEM private key of the certificate in {cert} "
            f"({failure_reason(exc)})"
        ) from None
    if client_ca is not None and ca_pem is not None:
        _load_certificates(context, "--tls-client-ca", client_ca, ca_pem, verify=True)
        context.verify_mode = ssl.CERT_REQUIRED
    return ServerTls(context, cert_pem, key_pem, ca_pem)


def _read(flag: str, path: Path) -> bytes:
    try:
        return read_bounded(path, "certificate or key", _MAX_PEM_BYTES)
    except InputError as exc:
        raise ConfigError(f"{flag} {exc}") from None


_MAX_PEM_BYTES = 1024 * 1024
"""A PEM file of certificates or a key: a chain of a few kilobytes; 1 MiB at most is read."""


def _load_certificates(
    context: ssl.SSLContext, flag: str, path: Path, data: bytes, *, verify: bool
) -> None:
    """Load ``data`` as the CAs clients are verified by, or only check it (not ``verify``).

    The check comes first because ``load_cert_chain`` alone cannot tell a bad certificate
    from a bad key.
    """
    target = context if verify else ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        target.load_verify_locations(cadata=data.decode("ascii"))
    except (ssl.SSLError, ValueError) as exc:  # ValueError: not ASCII, or no certificate
        raise ConfigError(f"{flag} {path}: not a PEM certificate ({failure_reason(exc)})") from None


def failure_reason(exc: BaseException) -> str:
    """A short reason for a TLS failure: OpenSSL's reason code, in words."""
    if isinstance(exc, ssl.SSLError) and exc.reason:
        return str(exc.reason).lower().replace("_", " ")
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
