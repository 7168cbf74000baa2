"""The share image's stack keys: the template, the Cloudinary card (its secret only as an SSM parameter
the role may read) and the default image, checked and set on the function."""

from __future__ import annotations

import pytest

from tests.infra.conftest import ACCOUNT_ID
from tests.infra.deployment import Deployment
from tests.infra.test_config import config_of, problems

SECRET_PARAM = "/p-st/blog-api/cloudinary-api-secret"


def test_the_share_image_settings_reach_the_function(deployments: dict[str, Deployment]) -> None:
    environment = deployments["prod-custom"].environment
    assert environment["OGP_IMAGE_URL_TEMPLATE"] == "https://og.kumo-corp.jp/card?title={title}&slug={slug}"
    assert environment["CLOUDINARY_CLOUD_NAME"] == "kumo-corp"
    assert environment["CLOUDINARY_OGP_PUBLIC_ID"] == "blog/og-base"
    assert environment["CLOUDINARY_API_SECRET_PARAM"] == SECRET_PARAM
    assert environment["OGP_DEFAULT_IMAGE_URL"] == "https://blog.kumo-corp.jp/og.png"
    assert "CLOUDINARY_API_SECRET" not in environment


def test_the_role_may_read_the_cloudinary_secret_only_when_it_is_named(
    deployments: dict[str, Deployment],
) -> None:
    custom = deployments["prod-custom"]
    (statement,) = custom.statements("ssm:GetParameters")
    resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
    assert f"arn:aws:ssm:{custom.region}:{ACCOUNT_ID}:parameter{SECRET_PARAM}" in resources
    assert len(resources) == 4
    dev = deployments["dev"]
    assert "CLOUDINARY_API_SECRET_PARAM" not in dev.environment
    (statement,) = dev.statements("ssm:GetParameters")
    assert not [r for r in statement["Resource"] if "cloudinary" in r]
    assert "OGP_IMAGE_URL_TEMPLATE" not in dev.environment


def test_the_committed_stacks_leave_them_unset() -> None:
    prod = config_of("prod")
    assert (prod.ogp_image_url_template, prod.cloudinary_cloud_name, prod.cloudinary_api_secret_param) == (
        None,
        None,
        None,
    )
    assert prod.parameter_names == (
        prod.webhook_secret_param,
        prod.github_app_private_key_param,
        prod.database_url_param,
    )


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"ogpImageUrlTemplate": "https://og.kumo-corp.jp/{name}"}, "ogpImageUrlTemplate"),
        ({"ogpImageUrlTemplate": "https://og.example.com/card?title={title}"}, "ogpImageUrlTemplate"),
        ({"ogpDefaultImageUrl": "og.png"}, "ogpDefaultImageUrl"),
        ({"ogpDefaultImageUrl": "https://blog.example.com/og.png"}, "ogpDefaultImageUrl"),
        ({"cloudinaryCloudName": "kumo corp"}, "cloudinaryCloudName"),
        ({"cloudinaryCloudName": "kumo-corp", "cloudinaryOgpPublicId": "og"}, "cloudinaryApiSecretParam"),
        ({"cloudinaryApiSecretParam": SECRET_PARAM}, "cloudinaryApiSecretParam"),
        (
            {
                "cloudinaryApiSecretParam": "arn:aws:ssm:x",
                "cloudinaryCloudName": "k",
                "cloudinaryOgpPublicId": "o",
            },
            "cloudinaryApiSecretParam",
        ),
    ],
)
def test_bad_or_incomplete_values_are_refused_naming_the_key(overrides: dict[str, str], key: str) -> None:
    found = problems("prod", **overrides)
    assert found[0].startswith(f"blog-api:{key} "), found
    assert "--stack prod" in found[0]
