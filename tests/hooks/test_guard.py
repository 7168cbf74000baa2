"""The SSRF guard: which URLs an endpoint may have, and which addresses the function may connect to,
with a resolver the test controls."""

from __future__ import annotations

import pytest

from function.errors import HookUrlRefused
from function.hooks.guard import AddressPolicy, checked_addresses, parse_target
from tests.kit.fakes import FakeResolver

ON_LAMBDA = AddressPolicy(allow_loopback=False)
LOCALLY = AddressPolicy(allow_loopback=True)


def check(url: str, answers: dict[str, list[str]], policy: AddressPolicy = ON_LAMBDA) -> list[str]:
    return checked_addresses(parse_target(url), policy, FakeResolver(dict(answers)))


def test_a_public_https_host_is_allowed_with_every_address_it_resolves_to() -> None:
    addresses = check(
        "https://hooks.example.com/in", {"hooks.example.com": ["93.184.216.34", "2606:2800:220:1::1"]}
    )
    assert addresses == ["93.184.216.34", "2606:2800:220:1::1"]


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("10.0.0.5", "private"),
        ("172.16.3.4", "private"),
        ("192.168.1.1", "private"),
        ("100.64.0.1", "not a public address"),  # carrier-grade NAT, shared address space
        ("169.254.169.254", "metadata"),
        ("169.254.10.10", "link-local"),
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.251", "multicast"),
        ("239.255.255.250", "multicast"),
        ("255.255.255.255", "private"),  # broadcast
        ("::1", "loopback"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("fd00:ec2::254", "metadata"),
        ("fc00::1", "private"),
        ("fec0::1", "site-local"),  # deprecated site-local (RFC 3879), still routed inside some networks
        ("feff:ffff::1", "site-local"),
        ("ff02::1", "multicast"),
        ("::", "unspecified"),
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "metadata"),
        ("64:ff9b::a9fe:a9fe", "metadata"),  # NAT64 of 169.254.169.254
        ("2002:a00:1::1", "private"),  # 6to4 of 10.0.0.1
        ("::10.0.0.1", "private"),  # IPv4-compatible
    ],
)
def test_a_host_resolving_to_a_forbidden_address_is_refused_on_lambda(address: str, why: str) -> None:
    with pytest.raises(HookUrlRefused, match=why):
        check("https://evil.example.com/", {"evil.example.com": [address]})


def test_one_forbidden_address_among_public_ones_refuses_the_host() -> None:
    with pytest.raises(HookUrlRefused, match=r"10\.1\.2\.3 is a private address"):
        check("https://mixed.example.com/", {"mixed.example.com": ["93.184.216.34", "10.1.2.3"]})


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/",
        "https://[::1]/",
        "https://169.254.169.254/latest/meta-data/",
        "https://[::ffff:169.254.169.254]/",
        "https://10.0.0.1:8443/",
        "https://[fd00:ec2::254]/",
    ],
)
def test_an_ip_literal_is_checked_like_a_resolved_address(url: str) -> None:
    resolver = FakeResolver({})
    with pytest.raises(HookUrlRefused):
        checked_addresses(parse_target(url), ON_LAMBDA, resolver)
    assert resolver.asked == []  # a literal is not looked up


@pytest.mark.parametrize(
    "url",
    [
        "https://2130706433/",  # 127.0.0.1 as one number
        "https://0x7f.1/",
        "https://0177.0.0.1/",
        "https://127.1/",
    ],
)
def test_a_host_written_as_a_number_that_resolvers_read_as_an_address_is_refused(url: str) -> None:
    with pytest.raises(HookUrlRefused, match="canonical"):
        parse_target(url)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://hooks.example.com/", "https://"),
        ("ftp://hooks.example.com/", "https://"),
        ("https://user:pw@hooks.example.com/", "user name or password"),
        ("https:///no-host", "names a host"),
        ("https://hooks.example.com/a b", "without spaces"),
        ("https://hooks.example.com:99999/", "not a valid URL"),
        ("https://hooks.example.com/" + "a" * 3000, "at most"),
    ],
)
def test_urls_no_endpoint_may_have(url: str, why: str) -> None:
    with pytest.raises(HookUrlRefused, match=why):
        parse_target(url)


def test_http_to_loopback_is_allowed_only_outside_lambda() -> None:
    assert check("http://127.0.0.1:8080/hook", {}, LOCALLY) == ["127.0.0.1"]
    assert check("http://localhost:8080/hook", {"localhost": ["127.0.0.1", "::1"]}, LOCALLY) == [
        "127.0.0.1",
        "::1",
    ]
    with pytest.raises(HookUrlRefused, match="loopback"):
        check("http://127.0.0.1:8080/hook", {}, ON_LAMBDA)


def test_localhost_resolving_elsewhere_does_not_open_http() -> None:
    with pytest.raises(HookUrlRefused, match="http://"):
        check("http://localhost/", {"localhost": ["93.184.216.34"]}, LOCALLY)


def test_outside_lambda_private_addresses_stay_refused() -> None:
    with pytest.raises(HookUrlRefused, match="private"):
        check("https://nas.example.com/", {"nas.example.com": ["192.168.0.10"]}, LOCALLY)


def test_a_host_that_does_not_resolve_is_refused_by_name_only() -> None:
    with pytest.raises(HookUrlRefused, match="could not be resolved") as caught:
        check("https://nowhere.example.com/secret-path-token", {})
    assert "secret-path-token" not in str(caught.value)


def test_the_origin_names_no_path_or_query() -> None:
    target = parse_target("https://api.vercel.com/v1/integrations/deploy/prj_x/SECRET?buildCache=false")
    assert target.origin == "https://api.vercel.com"
    assert target.path == "/v1/integrations/deploy/prj_x/SECRET?buildCache=false"
    assert parse_target("https://[2606:2800::1]:8443/x").origin == "https://[2606:2800::1]:8443"
