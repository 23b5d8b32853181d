"""TLS: the real OTLP exporters (HTTP and gRPC) reach ``assay collect --tls-cert`` and are stored.

A self-signed CA, server and client certificate are made for each test; the collector is a
real process on 127.0.0.1. A plaintext sender, and (with ``--tls-client-ca``) a sender without
a client certificate, are refused and the collector keeps serving; a TLS file that cannot be
used is one line naming it, exit 2.
"""

from __future__ import annotations

import contextlib
import io
import ssl
from pathlib import Path

import grpc
import pytest
from collector_process import AnyCollector, CollectorFactory
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
    OTLPSpanExporter as GrpcSpanExporter,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
    OTLPSpanExporter as HttpSpanExporter,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from otlp_helpers import make_request, post
from tls_files import TlsFiles, make_tls_files

from assay.cli import run
from assay.store import read_spans


@pytest.fixture
def tls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TlsFiles:
    # requests lets these override a session's CA file (which the HTTP exporter's
    # certificate_file sets): unset, as docs/collector.md tells users.
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    return make_tls_files(tmp_path / "tls")


def _client(files: TlsFiles, *, certificate: bool = False) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=files.ca)
    if certificate:
        context.load_cert_chain(files.client_cert, files.client_key)
    return context


def _spans(exporter: SpanExporter, service: str, count: int = 5) -> list[SpanExportResult]:
    """Export ``count`` spans one call each; the exporter's results."""
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    tracer = provider.get_tracer("assay.tests")
    results = []
    for i in range(count):
        with tracer.start_as_current_span(f"span-{i}") as span:
            pass
        results.append(exporter.export([span]))  # type: ignore[list-item]
    exporter.shutdown()
    return results


def _start(
    factory: CollectorFactory, out: Path, tls: TlsFiles, *extra: str, client: bool = False
) -> AnyCollector:
    args = [
        "--roll-age",
        "0.5",
        "--workers",
        "0",
        "--tls-cert",
        str(tls.cert),
        "--tls-key",
        str(tls.key),
        *extra,
    ]
    collector = factory(out, args, process=True)
    collector.tls = _client(tls, certificate=client)
    return collector.start()


@pytest.mark.slow
def test_http_and_grpc_exporters_over_tls(
    tmp_path: Path, tls: TlsFiles, collector_factory: CollectorFactory
) -> None:
    out = tmp_path / "traces"
    collector = _start(collector_factory, out, tls)
    http = HttpSpanExporter(
        endpoint=f"https://127.0.0.1:{collector.http_port}/v1/traces",
        certificate_file=str(tls.ca),
        timeout=10,
    )
    assert _spans(http, "over-https") == [SpanExportResult.SUCCESS] * 5
    credentials = grpc.ssl_channel_credentials(root_certificates=tls.ca.read_bytes())
    secure = GrpcSpanExporter(
        endpoint=f"127.0.0.1:{collector.grpc_port}", credentials=credentials, timeout=10
    )
    assert _spans(secure, "over-grpc-tls") == [SpanExportResult.SUCCESS] * 5
    # Plaintext to a TLS port: refused, named in the log, and the collector serves on.
    insecure = GrpcSpanExporter(
        endpoint=f"127.0.0.1:{collector.grpc_port}", insecure=True, timeout=2
    )
    assert _spans(insecure, "plaintext", count=1) == [SpanExportResult.FAILURE]
    with pytest.raises(Exception):  # noqa: B017 - http.client's error for a TLS alert varies
        post(collector.http_port, "/v1/traces", make_request(1)[0].SerializeToString())
    health = collector.health()
    assert health["status"] == "ok" and health["tls_handshakes_failed"] == 1
    assert collector.terminate() == 0
    assert "TLS handshake failed" in collector.output()
    assert "listening on https://127.0.0.1:" in collector.output()
    services = read_spans(out)["service_name"].value_counts(sort=True).rows()
    assert sorted(services) == [("over-grpc-tls", 5), ("over-https", 5)]


@pytest.mark.slow
def test_client_certificates_are_required_with_a_client_ca(
    tmp_path: Path, tls: TlsFiles, collector_factory: CollectorFactory
) -> None:
    out = tmp_path / "traces"
    collector = _start(collector_factory, out, tls, "--tls-client-ca", str(tls.ca), client=True)
    endpoint = f"https://127.0.0.1:{collector.http_port}/v1/traces"
    with_certificate = HttpSpanExporter(
        endpoint=endpoint,
        certificate_file=str(tls.ca),
        client_certificate_file=str(tls.client_cert),
        client_key_file=str(tls.client_key),
        timeout=10,
    )
    assert _spans(with_certificate, "with-certificate") == [SpanExportResult.SUCCESS] * 5
    without = HttpSpanExporter(endpoint=endpoint, certificate_file=str(tls.ca), timeout=2)
    assert _spans(without, "without-certificate", count=1) == [SpanExportResult.FAILURE]
    grpc_with = GrpcSpanExporter(
        endpoint=f"127.0.0.1:{collector.grpc_port}",
        credentials=grpc.ssl_channel_credentials(
            root_certificates=tls.ca.read_bytes(),
            private_key=tls.client_key.read_bytes(),
            certificate_chain=tls.client_cert.read_bytes(),
        ),
        timeout=10,
    )
    assert _spans(grpc_with, "grpc-with-certificate") == [SpanExportResult.SUCCESS] * 5
    grpc_without = GrpcSpanExporter(
        endpoint=f"127.0.0.1:{collector.grpc_port}",
        credentials=grpc.ssl_channel_credentials(root_certificates=tls.ca.read_bytes()),
        timeout=2,
    )
    assert _spans(grpc_without, "grpc-without-certificate", count=1) == [SpanExportResult.FAILURE]
    assert collector.terminate() == 0
    services = dict(read_spans(out)["service_name"].value_counts().rows())
    assert services == {"with-certificate": 5, "grpc-with-certificate": 5}


def _collect(tmp_path: Path, *args: str) -> tuple[int, str]:
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        code = run(["collect", "--out", str(tmp_path / "traces"), "--http-port", "0"]
                   + ["--grpc-port", "0", *args])  # fmt: skip
    return code, stderr.getvalue().strip()


def test_a_tls_file_that_cannot_be_used_is_one_line_naming_it(
    tmp_path: Path, tls: TlsFiles
) -> None:
    garbage = tmp_path / "garbage.pem"
    garbage.write_text(
        "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n"
    )
    missing = tmp_path / "missing.pem"
    cert, key = ["--tls-cert", str(tls.cert)], ["--tls-key", str(tls.key)]
    cases = [
        ([*cert, "--tls-key", str(missing)], f"--tls-key {missing}: cannot read"),
        (["--tls-cert", str(missing), *key], f"--tls-cert {missing}: cannot read"),
        (["--tls-cert", str(garbage), *key], f"--tls-cert {garbage}: not a PEM certificate"),
        (["--tls-cert", str(tls.key), *key], f"--tls-cert {tls.key}: not a PEM certificate"),
        (  # the client's key: a key, but not the certificate's
            [*cert, "--tls-key", str(tls.client_key)],
            f"--tls-key {tls.client_key}: not a PEM private key of the certificate in",
        ),
        ([*cert, "--tls-key", str(tls.cert)], f"--tls-key {tls.cert}: not a PEM private key"),
        (
            [*cert, *key, "--tls-client-ca", str(garbage)],
            f"--tls-client-ca {garbage}: not a PEM certificate",
        ),
        ([*cert, *key, "--tls-client-ca", str(tmp_path)], f"--tls-client-ca {tmp_path}:"),
        (cert, "--tls-cert needs --tls-key too"),
        (key, "--tls-key needs --tls-cert too"),
        (["--tls-client-ca", str(tls.ca)], "--tls-client-ca needs --tls-cert and --tls-key"),
    ]
    for args, expected in cases:
        code, err = _collect(tmp_path, *args)
        assert code == 2, (args, err)
        assert "\n" not in err and "Traceback" not in err, err
        assert expected in err, err
