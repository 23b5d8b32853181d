"""Binding an address other machines can reach, without a token, is said loudly."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.collect import CollectorConfig


@pytest.mark.parametrize(
    ("host", "token", "warned"),
    [
        ("0.0.0.0", None, True),
        ("::", None, True),
        ("192.168.1.20", None, True),
        ("collector.internal", None, True),
        ("0.0.0.0", "s3cret", False),
        ("127.0.0.1", None, False),
        ("127.0.0.2", None, False),
        ("::1", None, False),
        ("localhost", None, False),
    ],
)
def test_an_open_address_without_a_token_is_warned_about(
    tmp_path: Path, host: str, token: str | None, warned: bool
) -> None:
    # Only the configuration is built: tests bind 127.0.0.1 alone.
    warning = CollectorConfig(out=tmp_path, host=host, token=token).exposure_warning()
    assert (warning is not None) == warned
    if warning is not None:
        assert host in warning and "WITHOUT A TOKEN" in warning and "--token" in warning
