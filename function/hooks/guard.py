"""Which URLs an outgoing webhook may call, and which addresses it may connect to (the SSRF guard).

A webhook URL is typed by whoever registers an endpoint, and the function runs inside a VPC next to the
database, the NAT and the instance metadata service: a URL must never make it call any of them.

- ``https://`` only; ``http://`` only to a loopback address, and only outside Lambda (local development).
- No user name or password in the URL, and a host written as a name or a canonical IP address (not
  ``0x7f.1`` or ``2130706433``, which resolvers read as 127.0.0.1).
- The host is resolved by the resolver given (the system's by default), and refused when **any** of its
  addresses is not a public unicast one: private, shared (100.64/10), link-local (169.254/16, fe80::/10,
  with the metadata service at 169.254.169.254 and fd00:ec2::254), IPv6 site-local (fec0::/10:
  deprecated, but routed inside some networks, and ``ipaddress`` counts it as global), multicast,
  reserved, unspecified, or loopback on Lambda. IPv6 forms that carry an IPv4 address
  (``::ffff:10.0.0.1``, NAT64 ``64:ff9b::/96``, 6to4 ``2002::/16``, Teredo) are judged by that IPv4
  address.
- The sender then connects to one of exactly these checked addresses (never resolving the name again),
  so a DNS answer that changes between the check and the connection (DNS rebinding) cannot bite.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from function.errors import HookUrlRefused

# Host name -> its addresses (strings). Passed in, so tests decide what a name resolves to.
Resolver = Callable[[str, int], Sequence[str]]

MAX_URL_CHARS = 2048
METADATA_ADDRESSES = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
# A label resolvers read as a number (decimal, octal or 0x hex): a host made only of such labels is an
# address, and must then be written canonically.
_NUMBER_LABEL = re.compile(r"0[xX][0-9a-fA-F]*|[0-9]+")


@dataclass(frozen=True)
class Target:
    """A checked URL: where to connect, and what to send as Host and request target."""

    scheme: str
    host: str  # lower case, no brackets around an IPv6 literal
    port: int
    path: str  # path and query, as given ("/" when empty)

    @property
    def origin(self) -> str:
        """scheme://host[:port]: what logs, alarms and errors may name (a deploy hook's path is secret)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = {"https": 443, "http": 80}[self.scheme]
        return f"{self.scheme}://{host}" + ("" if self.port == default else f":{self.port}")


@dataclass(frozen=True)
class AddressPolicy:
    """``allow_loopback``: outside Lambda (local development), loopback addresses may be called, over
    http too. On Lambda they may not: the function's own loopback is no receiver of ours."""

    allow_loopback: bool = False

    def refusal(self, address: str) -> str | None:
        """Why ``address`` may not be connected to, or None when it may."""
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return f"{address!r} is not an IP address"
        for embedded in _embedded_ipv4(ip):
            reason = self.refusal(str(embedded))
            if reason is not None:
                return f"{ip} carries {embedded}: {reason}"
        if ip in METADATA_ADDRESSES:
            return f"{ip} is the instance metadata service"
        if ip.is_loopback:
            return None if self.allow_loopback else f"{ip} is a loopback address"
        if ip.is_multicast:
            return f"{ip} is a multicast address"
        if ip.is_link_local:
            return f"{ip} is a link-local address"
        if isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local:
            return f"{ip} is a site-local address"
        if ip.is_unspecified:
            return f"{ip} is the unspecified address"
        if ip.is_private:
            return f"{ip} is a private address"
        if ip.is_reserved or not ip.is_global:
            return f"{ip} is not a public address"
        return None


def _embedded_ipv4(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    if not isinstance(ip, ipaddress.IPv6Address):
        return []
    found = [a for a in (ip.ipv4_mapped, ip.sixtofour) if a is not None]
    if ip.teredo is not None:
        found.append(ip.teredo[1])  # the client's address (the server's is public by definition)
    if any(ip in network for network in _NAT64):
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    # IPv4-compatible (::a.b.c.d, deprecated but still routed by some stacks)
    if int(ip) >> 32 == 0 and int(ip) > 1:
        found.append(ipaddress.IPv4Address(int(ip)))
    return found


def parse_target(url: str) -> Target:
    """The URL as a Target; HookUrlRefused for a URL no endpoint may have (the rules above that need
    no resolving). ``http://`` passes here only for a loopback host; the sender checks the rest."""
    if len(url) > MAX_URL_CHARS or any(c.isspace() or ord(c) < 32 for c in url):
        raise HookUrlRefused(f"a webhook URL is at most {MAX_URL_CHARS} characters, without spaces")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise HookUrlRefused("not a valid URL") from None
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        raise HookUrlRefused("a webhook URL starts with https://")
    if parts.username is not None or parts.password is not None:
        raise HookUrlRefused("a webhook URL may not hold a user name or password")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise HookUrlRefused("a webhook URL names a host")
    if all(_NUMBER_LABEL.fullmatch(label) for label in host.split(".")) and not is_ip_literal(host):
        raise HookUrlRefused(f"{host!r} is not a host name or a canonical IP address")
    if scheme == "http" and not is_loopback_host(host):
        raise HookUrlRefused("a webhook URL starts with https:// (http:// only to a loopback address)")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(scheme, host, port or (443 if scheme == "https" else 80), path)


def checked_addresses(target: Target, policy: AddressPolicy, resolver: Resolver) -> list[str]:
    """Every address of ``target.host`` (resolved once, here), all allowed by ``policy``; else
    HookUrlRefused naming the first refused address. An IP literal is its own only address."""
    if is_ip_literal(target.host):
        addresses: list[str] = [target.host]
    else:
        try:
            addresses = list(dict.fromkeys(resolver(target.host, target.port)))
        except OSError as exc:
            raise HookUrlRefused(f"{target.host} could not be resolved ({type(exc).__name__})") from None
        if not addresses:
            raise HookUrlRefused(f"{target.host} has no address")
    for address in addresses:
        reason = policy.refusal(address)
        if reason is not None:
            if address == target.host:
                raise HookUrlRefused(reason)
            raise HookUrlRefused(f"{target.host} resolves to a forbidden address: {reason}")
    if target.scheme == "http" and not (
        policy.allow_loopback and all(ipaddress.ip_address(a.split("%", 1)[0]).is_loopback for a in addresses)
    ):
        raise HookUrlRefused("http:// is only allowed to a loopback address outside Lambda; use https://")
    return addresses


def system_resolver(host: str, port: int) -> list[str]:
    """The host's addresses from the system resolver (IPv4 and IPv6, TCP)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def is_ip_literal(host: str) -> bool:
    """Whether ``host`` is an IP address rather than a name."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (lower case, as ``parse_target`` gives it) is loopback by itself: a loopback
    address, ``localhost`` or a name under ``.localhost`` (RFC 6761), whatever a resolver says."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False
