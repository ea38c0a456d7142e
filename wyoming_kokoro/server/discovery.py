"""Advertise the Wyoming server over zeroconf (mDNS/DNS-SD) so Home Assistant finds it."""

from __future__ import annotations

import ipaddress
import logging
import re
import socket

from zeroconf import InterfaceChoice
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

from wyoming_kokoro.server.uri import bare_host

SERVICE_TYPE = "_wyoming._tcp.local."

_LOGGER = logging.getLogger(__name__)

# Any globally routed address works: connect() on a UDP socket only looks up the route, it
# sends nothing. A documentation range (TEST-NET-2) keeps it clear that nobody is contacted.
_ROUTE_PROBE = ("198.51.100.1", 9)


def outgoing_address() -> str | None:
    """The IPv4 address of the interface that routes outward, found with a UDP socket
    connect() (sends no packet); None when there is no route. Never returns 0.0.0.0."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.connect(_ROUTE_PROBE)
            address = sock.getsockname()[0]
    except OSError:
        return None
    return None if address == "0.0.0.0" else address


def _concrete_address(host: str) -> str | None:
    """host as a specific IP address, resolving a host name; None for wildcards or failure."""
    host = bare_host(host)
    if not host or host == "*":
        return None
    try:
        parsed = ipaddress.ip_address(host)
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
        except OSError:
            return None
        # Prefer IPv4: Home Assistant connects to the first address it is given.
        infos.sort(key=lambda info: info[0] != socket.AF_INET)
        if not infos:
            return None
        parsed = ipaddress.ip_address(infos[0][4][0])
    return None if parsed.is_unspecified else str(parsed)


def advertised_address(bind_host: str, override: str | None) -> str:
    """override if given; else bind_host if it is a concrete address (not 0.0.0.0/::/empty);
    else outgoing_address(); else 127.0.0.1 with a logged warning."""
    if override:
        return override
    address = _concrete_address(bind_host) or outgoing_address()
    if address:
        return address
    _LOGGER.warning(
        "No outward network route found; advertising 127.0.0.1, which only clients on this "
        "host can reach. Set the advertised address explicitly to fix this."
    )
    return "127.0.0.1"


def _instance_label(name: str) -> str:
    """name reduced to a DNS label: ASCII letters, digits and '-', at most 63 characters."""
    label = re.sub(r"[^A-Za-z0-9-]", "", re.sub(r"\s+", "-", name.strip()))
    label = label[:63].strip("-")
    if not label:
        raise ValueError(f"service name {name!r} has no letters or digits")
    return label


class Discovery:
    """One zeroconf registration of a Wyoming service, from start() until stop()."""

    def __init__(
        self, name: str, port: int, address: str, interfaces: list[str] | None = None
    ) -> None:
        """name: instance name (sanitized); port: the server's TCP port; address: the IPv4 or
        IPv6 address clients should connect to; interfaces: addresses of the interfaces to
        multicast on, None for all."""
        self.name = _instance_label(name)
        self.port = port
        # Parse now so a bad address fails at construction rather than inside start().
        self.address = str(ipaddress.ip_address(bare_host(address)))
        self.interfaces = interfaces
        self._aiozc: AsyncZeroconf | None = None
        self._info: AsyncServiceInfo | None = None
        self._announced = False

    @property
    def service_name(self) -> str:
        """Fully qualified service name; may gain a '-N' suffix after a name conflict."""
        return self._info.name if self._info else f"{self.name}.{SERVICE_TYPE}"

    async def start(self) -> None:
        """Register the service; returns once probing and announcements are done."""
        if self._aiozc is not None:
            return
        self._info = AsyncServiceInfo(
            SERVICE_TYPE,
            f"{self.name}.{SERVICE_TYPE}",
            addresses=[ipaddress.ip_address(self.address).packed],
            port=self.port,
            properties={},
            server=f"{self.name}.local.",
        )
        interfaces = InterfaceChoice.All if self.interfaces is None else self.interfaces
        # Kept before registering so stop() can clean up a start that failed or was cancelled.
        self._aiozc = AsyncZeroconf(interfaces=interfaces)
        try:
            # Renaming on conflict beats refusing to start when another host uses the name.
            announced = await self._aiozc.async_register_service(self._info, allow_name_change=True)
            await announced
            self._announced = True
        except BaseException:
            await self.stop()
            raise
        _LOGGER.info(
            "Advertising %s at %s port %d over zeroconf",
            self._info.name,
            self.address,
            self.port,
        )

    async def stop(self) -> None:
        """Unregister (sending goodbye packets) and close; idempotent, safe after a failed
        start."""
        aiozc, self._aiozc = self._aiozc, None
        announced, self._announced = self._announced, False
        if aiozc is None:
            return
        try:
            # async_close() unregisters every service first, so goodbyes go out before the
            # sockets close and browsers drop the service at once instead of at TTL expiry.
            await aiozc.async_close()
        except Exception:
            # Shutdown must go on even when the network is already gone.
            _LOGGER.warning("Closing zeroconf failed", exc_info=True)
        else:
            if announced:
                _LOGGER.info("Stopped advertising %s", self.service_name)
