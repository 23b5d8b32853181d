"""Self-signed TLS files for the tests: a CA, a server certificate for 127.0.0.1, a client one.

Made with the ``cryptography`` package when it is installed, else with the ``openssl`` command;
without either the tests that need them are skipped, saying why.
"""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class TlsFiles:
    """PEM files in one folder."""

    ca: Path
    """The CA certificate, which signed both others."""
    cert: Path
    """The server's certificate (``127.0.0.1`` and ``localhost``)."""
    key: Path
    """The server's private key."""
    client_cert: Path
    """A client certificate (mutual TLS)."""
    client_key: Path
    """Its private key."""


def make_tls_files(folder: Path) -> TlsFiles:
    """Write a CA, a server and a client certificate with their keys into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    files = TlsFiles(
        *(folder / n for n in ("ca.pem", "cert.pem", "key.pem", "client.pem", "ck.pem"))
    )
    try:
        import cryptography  # noqa: F401
    except ImportError:
        if shutil.which("openssl") is None:
            pytest.skip("neither the cryptography package nor the openssl command is installed")
        _with_openssl(files)
    else:
        _with_cryptography(files)
    return files


def _with_cryptography(files: TlsFiles) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    def write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
        path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("assay test CA"))
        .issuer_name(name("assay test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    files.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))

    def issue(common: str, usage: x509.ObjectIdentifier, cert: Path, key_path: Path) -> None:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(name(common))
            .issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                critical=False,
            )
        )
        if usage == ExtendedKeyUsageOID.SERVER_AUTH:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [
                        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                        x509.DNSName("localhost"),
                    ]
                ),
                critical=False,
            )
        cert.write_bytes(
            builder.sign(ca_key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
        )
        write_key(key, key_path)

    issue("127.0.0.1", ExtendedKeyUsageOID.SERVER_AUTH, files.cert, files.key)
    issue("assay test client", ExtendedKeyUsageOID.CLIENT_AUTH, files.client_cert, files.client_key)


def _with_openssl(files: TlsFiles) -> None:
    folder = files.ca.parent
    ca_key = folder / "ca-key.pem"
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    _openssl(
        "req", "-x509", *ec, "-keyout", ca_key, "-out", files.ca, "-days", "1",
        "-subj", "/CN=assay test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
    )  # fmt: skip
    for common, extensions, cert, key in (
        (
            "127.0.0.1",
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
            files.cert,
            files.key,
        ),
        ("assay test client", "extendedKeyUsage=clientAuth\n", files.client_cert, files.client_key),
    ):
        request, extfile = folder / "request.csr", folder / "extensions.cnf"
        extfile.write_text(extensions)
        _openssl("req", *ec, "-keyout", key, "-out", request, "-subj", f"/CN={common}")
        _openssl(
            "x509", "-req", "-in", request, "-CA", files.ca, "-CAkey", ca_key,
            "-CAcreateserial", "-out", cert, "-days", "1", "-extfile", extfile,
        )  # fmt: skip


def _openssl(*args: str | Path) -> None:
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)
