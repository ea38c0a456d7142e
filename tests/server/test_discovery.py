"""Zeroconf advertising, checked with a real zeroconf browser.

Every Zeroconf instance here is restricted to 127.0.0.1, so all multicast stays on loopback
and nothing reaches another interface. Waits are bounded to a few seconds.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import uuid

import pytest
from support.zeroconf_lookup import LOOPBACK, lookup
from zeroconf import IPVersion, ServiceStateChange, Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncZeroconf

from wyoming_kokoro.server import discovery
from wyoming_kokoro.server.discovery import (
    SERVICE_TYPE,
    Discovery,
    advertised_address,
    outgoing_address,
)

WAIT_S = 3.0


def unique_name() -> str:
    """A service name no other test (or concurrent run) uses."""
    return f"test-{uuid.uuid4().hex[:12]}"


def test_advertised_then_withdrawn() -> None:
    name = unique_name()
    full_name = f"{name}.{SERVICE_TYPE}"

    async def run() -> None:
        browser_zc = AsyncZeroconf(interfaces=LOOPBACK)
        added, removed = asyncio.Event(), asyncio.Event()

        def on_change(
            zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange
        ) -> None:
            if name != full_name:
                return  # another test run's service
            if state_change is ServiceStateChange.Added:
                added.set()
            elif state_change is ServiceStateChange.Removed:
                removed.set()

        browser = AsyncServiceBrowser(browser_zc.zeroconf, SERVICE_TYPE, handlers=[on_change])
        advertiser = Discovery(name, 10299, "127.0.0.1", interfaces=LOOPBACK)
        try:
            await advertiser.start()
            assert advertiser.service_name == full_name
            await asyncio.wait_for(added.wait(), WAIT_S)

            info = await lookup(name)
            assert info is not None, "service not found after start()"
            assert info.port == 10299
            assert info.parsed_addresses() == ["127.0.0.1"]
            assert info.server == f"{name}.local."

            await advertiser.stop()
            # The goodbye packets make the browser drop it well before the record TTL.
            await asyncio.wait_for(removed.wait(), WAIT_S)
            assert await lookup(name, timeout_ms=1000) is None
        finally:
            await advertiser.stop()
            await browser.async_cancel()
            await browser_zc.async_close()

    asyncio.run(run())


def test_ipv6_address_and_sanitized_name() -> None:
    raw = unique_name()
    name = raw.replace("-", " ") + " (Kokoro!)"

    async def run() -> None:
        advertiser = Discovery(name, 10298, "::1", interfaces=LOOPBACK)
        try:
            await advertiser.start()
            info = await lookup(f"{raw}-Kokoro")
        finally:
            await advertiser.stop()
        assert info is not None
        assert info.parsed_addresses(IPVersion.V6Only) == ["::1"]
        assert info.port == 10298

    assert Discovery(name, 1, "::1").name == f"{raw}-Kokoro"
    asyncio.run(run())


def test_stop_is_idempotent_and_safe_without_start() -> None:
    async def run() -> None:
        never_started = Discovery(unique_name(), 10297, "127.0.0.1", interfaces=LOOPBACK)
        await never_started.stop()

        advertiser = Discovery(unique_name(), 10297, "127.0.0.1", interfaces=LOOPBACK)
        await advertiser.start()
        await advertiser.stop()
        await advertiser.stop()

        # No interface has this (documentation) address, so start() fails before sending.
        broken = Discovery(unique_name(), 10297, "127.0.0.1", interfaces=["203.0.113.77"])
        with pytest.raises(OSError):
            await broken.start()
        await broken.stop()
        await broken.stop()

    asyncio.run(run())


def test_bad_names_and_addresses_rejected() -> None:
    with pytest.raises(ValueError):
        Discovery("!!!", 1, "127.0.0.1")
    with pytest.raises(ValueError):
        Discovery("kokoro", 1, "not-an-address")


def test_outgoing_address_is_concrete_ipv4() -> None:
    address = outgoing_address()
    if address is not None:
        parsed = ipaddress.ip_address(address)
        assert parsed.version == 4
        assert not parsed.is_unspecified


def test_advertised_address_override_wins() -> None:
    assert advertised_address("0.0.0.0", "192.0.2.10") == "192.0.2.10"
    assert advertised_address("127.0.0.1", "192.0.2.10") == "192.0.2.10"


def test_advertised_address_uses_concrete_bind_host() -> None:
    assert advertised_address("192.0.2.77", None) == "192.0.2.77"
    assert advertised_address("127.0.0.1", None) == "127.0.0.1"
    assert advertised_address("fd00::7", None) == "fd00::7"
    assert advertised_address("localhost", None) in {"127.0.0.1", "::1"}


@pytest.mark.parametrize("wildcard", ["0.0.0.0", "::", "", "[::]"])
def test_advertised_address_never_wildcard(wildcard: str) -> None:
    address = advertised_address(wildcard, None)
    assert address not in {"0.0.0.0", "::"}
    assert address == (outgoing_address() or "127.0.0.1")


def test_advertised_address_falls_back_to_loopback_with_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Simulates a host with no outward route; the real lookup is covered above.
    monkeypatch.setattr(discovery, "outgoing_address", lambda: None)
    with caplog.at_level(logging.WARNING, logger=discovery.__name__):
        assert advertised_address("0.0.0.0", None) == "127.0.0.1"
    assert "127.0.0.1" in caplog.text
