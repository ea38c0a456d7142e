"""Listening addresses read one way for the Wyoming listener, the HTTP API and zeroconf."""

from __future__ import annotations

import pytest

from wyoming_kokoro.server.uri import (
    bare_host,
    bracketed,
    uri_host,
    uri_host_port,
    uri_path,
    uri_scheme,
)


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("tcp://0.0.0.0:10200", ("0.0.0.0", 10200)),
        ("tcp://[::1]:10200", ("::1", 10200)),
        ("tcp://Localhost:8880", ("localhost", 8880)),
        ("tcp://127.0.0.1", None),
        ("tcp://:10200", None),
        ("stdio://", None),
    ],
)
def test_host_and_port(uri: str, expected: tuple[str, int] | None) -> None:
    assert uri_host_port(uri) == expected


def test_a_port_out_of_range_is_an_error() -> None:
    with pytest.raises(ValueError):
        uri_host_port("tcp://127.0.0.1:99999")


def test_schemes_hosts_and_paths() -> None:
    assert [uri_scheme(u) for u in ("tcp://a:1", "unix:///x", "stdio://")] == [
        "tcp",
        "unix",
        "stdio",
    ]
    assert uri_host("tcp://[fe80::1]:1") == "fe80::1"
    assert uri_host("stdio://") == ""
    assert uri_path("unix:///run/kokoro.sock") == "/run/kokoro.sock"
    assert uri_path("unix://relative/kokoro.sock") == "relative/kokoro.sock"


@pytest.mark.parametrize("host", ["::1", "fe80::1", "127.0.0.1", "kokoro.local"])
def test_brackets_go_on_and_come_off(host: str) -> None:
    assert bare_host(bracketed(host)) == host
    assert bracketed(host).startswith("[") == (":" in host)
    assert bare_host(f" {bracketed(host)} ") == host
