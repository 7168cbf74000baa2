"""AWS clients for the function's calls: tight time-outs and the outbound proxy honoured together with
NO_PROXY, so interface VPC endpoints listed there really bypass squid.

Built on botocore alone, never boto3: ``import boto3`` pulls in s3transfer and its dependencies (about
0.6 s of a cold start here, for a transfer manager we never use), and the clients are botocore's anyway.
One botocore session per process (``session``) holds the loaded endpoint and model data, so a second
client reuses it."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from function.net.proxy import bypasses_proxy, parse_no_proxy


def proxies_for(
    service: str,
    https_proxy: str | None,
    no_proxy: Iterable[str] = (),
    endpoint_url: str | None = None,
    region: str | None = None,
) -> dict[str, str] | None:
    """The ``Config(proxies=...)`` value for ``service``: None when there is no proxy or the endpoint
    host is listed in NO_PROXY (botocore's explicit ``proxies`` would otherwise ignore NO_PROXY)."""
    if not https_proxy:
        return None
    if endpoint_url:
        parts = urlsplit(endpoint_url)
        host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
    else:
        host, port = f"{service}.{region or _default_region()}.amazonaws.com", 443
    if bypasses_proxy(host, port, parse_no_proxy(list(no_proxy))):
        return None
    return {"https": https_proxy, "http": https_proxy}


def _default_region() -> str:
    region: str | None = session().get_config_variable("region")
    return region or "us-east-1"


@functools.cache
def session() -> Any:
    """This process's botocore session (credentials and region from the environment, as boto3's)."""
    import botocore.session

    return botocore.session.get_session()


def client(
    service: str,
    *,
    connect_timeout: float,
    read_timeout: float,
    attempts: int,
    https_proxy: str | None = None,
    no_proxy: Iterable[str] = (),
    endpoint_url: str | None = None,
) -> Any:
    """A client with at most ``attempts`` calls in all (botocore's ``max_attempts`` counts
    retries, ``total_max_attempts`` the total) and the proxy decided by ``proxies_for``."""
    from botocore.config import Config

    config = Config(
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        retries={"mode": "standard", "total_max_attempts": attempts},
        proxies=proxies_for(service, https_proxy, no_proxy, endpoint_url),
        tcp_keepalive=True,
    )
    return session().create_client(service, config=config, endpoint_url=endpoint_url)
