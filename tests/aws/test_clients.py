from __future__ import annotations

from function.aws.clients import proxies_for

PROXY = "http://squid.internal:3128"


def test_no_proxy_setting_means_no_proxies() -> None:
    assert proxies_for("lambda", None, (), region="ap-northeast-1") is None


def test_the_regional_endpoint_goes_through_the_proxy() -> None:
    assert proxies_for("lambda", PROXY, ("github.com",), region="ap-northeast-1") == {
        "https": PROXY,
        "http": PROXY,
    }


def test_an_endpoint_listed_in_no_proxy_goes_direct() -> None:
    # A VPC interface endpoint makes lambda.<region>.amazonaws.com resolve inside the VPC.
    no_proxy = ("lambda.ap-northeast-1.amazonaws.com", "ssm.ap-northeast-1.amazonaws.com")
    assert proxies_for("lambda", PROXY, no_proxy, region="ap-northeast-1") is None
    assert proxies_for("ssm", PROXY, no_proxy, region="ap-northeast-1") is None
    assert proxies_for("ssm", PROXY, no_proxy, region="us-east-1") == {"https": PROXY, "http": PROXY}


def test_a_domain_suffix_in_no_proxy_covers_every_service() -> None:
    assert proxies_for("lambda", PROXY, (".amazonaws.com",), region="ap-northeast-1") is None


def test_an_explicit_endpoint_url_is_matched_by_host_and_port() -> None:
    assert proxies_for("lambda", PROXY, ("127.0.0.1:4566",), endpoint_url="http://127.0.0.1:4566") is None
    assert proxies_for("lambda", PROXY, ("127.0.0.1:9",), endpoint_url="http://127.0.0.1:4566") is not None
