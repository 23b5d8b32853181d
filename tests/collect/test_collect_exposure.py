"""Binding an address other machines can reach, without a token or without TLS, is said loudly."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.collect import CollectorConfig

TLS = {"tls_cert": Path("cert.pem"), "tls_key": Path("key.pem")}
MTLS = {**TLS, "tls_client_ca": Path("ca.pem")}


@pytest.mark.parametrize(
    ("host", "token", "tls", "warned"),
    [
        ("0.0.0.0", None, {}, "WITHOUT A TOKEN"),
        ("::", None, {}, "WITHOUT A TOKEN"),
        ("192.168.1.20", None, {}, "WITHOUT A TOKEN"),
        ("collector.internal", None, {}, "WITHOUT A TOKEN"),
        ("0.0.0.0", None, TLS, "WITHOUT A TOKEN"),  # TLS hides the spans, lets anyone send
        ("0.0.0.0", "s3cret", {}, "WITHOUT TLS"),  # the token in clear text on the network
        ("0.0.0.0", "s3cret", TLS, None),
        ("0.0.0.0", None, MTLS, None),  # a client certificate proves the sender
        ("127.0.0.1", None, {}, None),
        ("127.0.0.2", None, {}, None),
        ("::1", None, {}, None),
        ("localhost", "s3cret", {}, None),
    ],
)
def test_an_open_address_without_a_token_or_tls_is_warned_about(
    tmp_path: Path, host: str, token: str | None, tls: dict[str, Path], warned: str | None
) -> None:
    # Only the configuration is built: tests bind 127.0.0.1 alone.
    warning = CollectorConfig(out=tmp_path, host=host, token=token, **tls).exposure_warning()
    if warned is None:
        assert warning is None
    else:
        assert warning is not None and host in warning and warned in warning
        assert ("--token" if "TOKEN" in warned else "--tls-cert") in warning
