"""Which requests go through the outbound proxy (``HTTPS_PROXY`` / ``NO_PROXY``): one rule for the GitHub
client and the AWS clients, standard library only so that the accept path can use it."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def parse_no_proxy(no_proxy: str | Iterable[str] | None) -> tuple[str, ...]:
    """Normalise a ``NO_PROXY`` value (comma/space separated string or list) to lower-case entries."""
    if no_proxy is None:
        return ()
    items = no_proxy.replace(",", " ").split() if isinstance(no_proxy, str) else list(no_proxy)
    return tuple(item.strip().lower() for item in items if item.strip())


def _is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bypasses_proxy(host: str, port: int | None, no_proxy: Iterable[str]) -> bool:
    """Whether a request to ``host`` (``port``) goes direct rather than through the proxy.

    Rules, chosen to be predictable (botocore's exact-string matching surprises people):

    - ``*`` bypasses every host;
    - an entry matches its host exactly, case-insensitively; ``host:port`` matches that port only;
    - an entry with a leading dot (``.example.com``) matches every subdomain, and ``example.com`` itself;
    - any loopback entry (``localhost``, ``127.0.0.1``, ``::1``, any ``127.x``) bypasses every loopback host,
      so ``NO_PROXY=localhost`` also covers ``127.0.0.1``;
    - nothing is bypassed implicitly, not even loopback: an explicit setting is obeyed.

    Address ranges (CIDR) are not understood.
    """
    host = host.strip("[]").lower().rstrip(".")
    for entry in no_proxy:
        if entry == "*":
            return True
        name, entry_port = entry, None
        if entry.count(":") == 1 or (entry.startswith("[") and "]:" in entry):
            name, _, port_text = entry.rpartition(":")
            if port_text.isdigit():
                entry_port = int(port_text)
            else:
                name = entry
        name = name.strip("[]").rstrip(".")
        if entry_port is not None and port is not None and entry_port != port:
            continue
        if name.startswith("."):
            if host == name[1:] or host.endswith(name):
                return True
        elif host == name or (_is_loopback(name) and _is_loopback(host)):
            return True
    return False
