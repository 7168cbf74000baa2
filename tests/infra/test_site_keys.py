"""siteUrl and corsAllowedOrigins: read and checked like every stack key, and set on the function."""

from __future__ import annotations

import pytest

from tests.infra.deployment import Deployment
from tests.infra.test_config import config_of, problems


def test_site_url_and_origins_reach_the_function(deployments: dict[str, Deployment]) -> None:
    environment = deployments["prod-custom"].environment
    assert environment["SITE_URL"] == "https://blog.kumo-corp.jp"
    assert environment["CORS_ALLOWED_ORIGINS"] == "https://blog.kumo-corp.jp,https://www.kumo-corp.jp"
    # Unset in the committed stacks: the function gets neither (feed and sitemap answer 404, no CORS).
    assert "SITE_URL" not in deployments["dev"].environment
    assert "CORS_ALLOWED_ORIGINS" not in deployments["dev"].environment


def test_the_committed_stacks_leave_them_unset() -> None:
    dev = config_of("dev")
    assert (dev.site_url, dev.cors_allowed_origins) == (None, None)


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"siteUrl": "blog.kumo-corp.jp"}, "siteUrl"),
        ({"siteUrl": "http://blog.kumo-corp.jp"}, "siteUrl"),
        ({"siteUrl": "https://blog.example.com"}, "siteUrl"),
        ({"corsAllowedOrigins": "*,https://blog.kumo-corp.jp"}, "corsAllowedOrigins"),
        ({"corsAllowedOrigins": "https://blog.kumo-corp.jp/"}, "corsAllowedOrigins"),
        ({"corsAllowedOrigins": "https://blog.example.com"}, "corsAllowedOrigins"),
    ],
)
def test_bad_or_example_values_are_refused_naming_the_key(overrides: dict[str, str], key: str) -> None:
    (problem,) = problems("prod", **overrides)
    assert problem.startswith(f"blog-api:{key} ") and "--stack prod" in problem


def test_any_origin_is_a_value_a_stack_may_set() -> None:
    assert config_of("prod", corsAllowedOrigins="*").cors_allowed_origins == "*"
