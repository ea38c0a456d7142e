"""Looking a Wyoming service up over zeroconf, on loopback."""

from __future__ import annotations

from zeroconf import DNSQuestionType
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

from wyoming_kokoro.server.discovery import (
    SERVICE_TYPE,
)

LOOPBACK = ["127.0.0.1"]


async def lookup(name: str, timeout_ms: int = 3000) -> AsyncServiceInfo | None:
    """Ask for the service from a fresh zeroconf instance, so no cached answer can help."""
    browser_zc = AsyncZeroconf(interfaces=LOOPBACK)
    try:
        info = AsyncServiceInfo(SERVICE_TYPE, f"{name}.{SERVICE_TYPE}")
        # Ask for a multicast answer: a unicast one to 127.0.0.1:5353 can be delivered to the
        # advertiser's socket instead, since both share the port on this host.
        found = await info.async_request(
            browser_zc.zeroconf, timeout_ms, question_type=DNSQuestionType.QM
        )
        return info if found else None
    finally:
        await browser_zc.async_close()
