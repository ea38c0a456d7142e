"""Addresses as the options write them: tcp://HOST:PORT, an IPv6 host in brackets.

The Wyoming listener, the HTTP listener and zeroconf each read `--uri`/`--http`;
the brackets come off and go back on here, in one way.
"""

from __future__ import annotations

from urllib.parse import urlparse


def uri_scheme(uri: str) -> str:
    """The URI's scheme: tcp, unix, stdio, http."""
    return urlparse(uri).scheme


def uri_host(uri: str) -> str:
    """The host (an IPv6 address without its brackets); empty if none."""
    return urlparse(uri).hostname or ""


def uri_path(uri: str) -> str:
    """What follows unix:// (unix:///run/kokoro.sock: /run/kokoro.sock)."""
    parsed = urlparse(uri)
    return parsed.netloc + parsed.path


def uri_host_port(uri: str) -> tuple[str, int] | None:
    """The host (an IPv6 address without its brackets) and port; None if either is missing.

    Raises ValueError for a port that is no number or out of range.
    """
    parsed = urlparse(uri)
    if parsed.hostname is None or parsed.port is None:
        return None
    return parsed.hostname, parsed.port


def bracketed(host: str) -> str:
    """A host as a URI writes it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host


def bare_host(host: str) -> str:
    """A host without the brackets a URI puts around an IPv6 address, nor spaces."""
    return host.strip().strip("[]")
