"""The images' bucket and distribution, checked on the values the program registers under mocks."""

from __future__ import annotations

import json

from infra.assets import CACHING_OPTIMIZED_POLICY_ID, SECURITY_HEADERS_POLICY_ID
from tests.infra.deployment import (
    FUNCTION,
    ROLE_POLICY,
    ROUTE_TABLE,
    ROUTE_TABLE_ASSOCIATION,
    VPC_ENDPOINT,
    Deployment,
)

BUCKET = "aws:s3/bucket:Bucket"
ACCESS_BLOCK = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
OWNERSHIP = "aws:s3/bucketOwnershipControls:BucketOwnershipControls"
ENCRYPTION = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy"
OAC = "aws:cloudfront/originAccessControl:OriginAccessControl"
DISTRIBUTION = "aws:cloudfront/distribution:Distribution"


def test_the_bucket_is_private_encrypted_and_takes_no_acls(deployment: Deployment) -> None:
    bucket = deployment.one(BUCKET)
    block = deployment.one(ACCESS_BLOCK).inputs
    assert block["bucket"] == bucket.id
    assert all(
        block[k] is True
        for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
    )
    assert deployment.one(OWNERSHIP).inputs["rule"]["objectOwnership"] == "BucketOwnerEnforced"
    # A destroy (a review stack's branch deleted) empties the bucket instead of failing on it.
    assert bucket.inputs["forceDestroy"] is True
    (rule,) = deployment.one(ENCRYPTION).inputs["rules"]
    assert rule["applyServerSideEncryptionByDefault"]["sseAlgorithm"] == "AES256"


def test_only_the_distribution_may_read_and_only_through_cloudfront(deployment: Deployment) -> None:
    bucket = deployment.one(BUCKET)
    distribution = deployment.one(DISTRIBUTION)
    policy = json.loads(deployment.one(BUCKET_POLICY).inputs["policy"])
    (statement,) = policy["Statement"]
    assert statement["Effect"] == "Allow"
    assert statement["Principal"] == {"Service": "cloudfront.amazonaws.com"}
    assert statement["Action"] == "s3:GetObject"
    assert statement["Resource"] == f"arn:aws:s3:::{bucket.id}/*"
    assert statement["Condition"] == {
        "StringEquals": {"AWS:SourceArn": f"arn:aws:cloudfront::123456789012:distribution/{distribution.id}"}
    }


def test_cloudfront_signs_every_request_to_the_bucket_with_origin_access_control(
    deployment: Deployment,
) -> None:
    oac = deployment.one(OAC)
    assert oac.inputs["originAccessControlOriginType"] == "s3"
    assert oac.inputs["signingBehavior"] == "always"
    assert oac.inputs["signingProtocol"] == "sigv4"
    (origin,) = deployment.one(DISTRIBUTION).inputs["origins"]
    bucket = deployment.one(BUCKET)
    assert origin["domainName"] == f"{bucket.id}.s3.{deployment.region}.amazonaws.com"
    assert origin["originAccessControlId"] == oac.id
    assert "s3OriginConfig" not in origin  # no legacy origin access identity


def test_the_distribution_serves_only_reads_over_https_cached_and_nosniff(deployment: Deployment) -> None:
    inputs = deployment.one(DISTRIBUTION).inputs
    behaviour = inputs["defaultCacheBehavior"]
    assert behaviour["targetOriginId"] == inputs["origins"][0]["originId"]
    assert behaviour["viewerProtocolPolicy"] == "redirect-to-https"
    assert sorted(behaviour["allowedMethods"]) == ["GET", "HEAD"]
    assert behaviour["cachePolicyId"] == CACHING_OPTIMIZED_POLICY_ID
    assert behaviour["responseHeadersPolicyId"] == SECURITY_HEADERS_POLICY_ID
    assert inputs["enabled"] is True


def test_s3_is_reached_through_a_gateway_endpoint_on_the_functions_route_table(dev: Deployment) -> None:
    (endpoint,) = [e for e in dev.of_type(VPC_ENDPOINT) if e.inputs["serviceName"].endswith(".s3")]
    assert endpoint.inputs["vpcEndpointType"] == "Gateway"
    assert endpoint.inputs["serviceName"] == f"com.amazonaws.{dev.region}.s3"
    subnet_ids = dev.one(FUNCTION).inputs["vpcConfig"]["subnetIds"]
    function_tables = {
        a.inputs["routeTableId"]
        for a in dev.of_type(ROUTE_TABLE_ASSOCIATION)
        if a.inputs["subnetId"] in subnet_ids
    }
    assert set(endpoint.inputs["routeTableIds"]) == function_tables
    assert all(dev.by_id(t).type == ROUTE_TABLE for t in function_tables)


def test_an_existing_vpc_gets_no_endpoint_on_routes_the_program_does_not_own(
    deployments: dict[str, Deployment],
) -> None:
    existing = deployments["dev-existing-vpc"]
    assert not [e for e in existing.of_type(VPC_ENDPOINT) if e.inputs["serviceName"].endswith(".s3")]


def test_the_function_may_put_get_and_delete_images_in_that_bucket_only(deployment: Deployment) -> None:
    bucket = deployment.one(BUCKET)
    (grant,) = [p for p in deployment.of_type(ROLE_POLICY) if p.name.endswith("-function-access")]
    assert grant.inputs["role"] == f"{deployment.prefix}-blog-api-role"
    (statement,) = json.loads(grant.inputs["policy"])["Statement"]
    assert sorted(statement["Action"]) == ["s3:DeleteObject", "s3:GetObject", "s3:PutObject"]
    assert statement["Resource"] == f"arn:aws:s3:::{bucket.id}/*"


def test_the_function_is_told_the_bucket_and_the_asset_url_and_the_stack_exports_the_domain(
    deployment: Deployment,
) -> None:
    variables = deployment.one(FUNCTION).inputs["environment"]["variables"]
    assert variables["ASSET_BUCKET"] == deployment.one(BUCKET).id
    assert variables["ASSET_URL"] == "https://d111111abcdef8.cloudfront.net"
    assert deployment.outputs["assetDomain"] == "d111111abcdef8.cloudfront.net"
