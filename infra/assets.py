"""The repository images' store: a private S3 bucket that readers reach only through CloudFront.

- The bucket blocks every form of public access, encrypts at rest (SSE-S3) and enforces the owner on
  every object (``BucketOwnerEnforced``: ACLs are off, so no object can be made public by one).
- CloudFront reads it with Origin Access Control (SigV4-signed requests); the bucket policy lets the
  CloudFront service read objects only on behalf of this one distribution (``AWS:SourceArn``).
- Objects are immutable (content-addressed keys, a year's ``Cache-Control`` set at upload), so the
  distribution caches with AWS's managed CachingOptimized policy and nothing is ever invalidated; AWS's
  managed SecurityHeadersPolicy adds ``X-Content-Type-Options: nosniff`` to every answer.
- The function's subnets reach S3 through a gateway endpoint on their route tables (free, no NAT
  traffic); its role may put, get and delete objects in this bucket and nothing else of S3.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from shared.runtime_settings import variable

# AWS's managed policies (the same ids in every account): CachingOptimized, and SecurityHeadersPolicy
# (nosniff, HSTS, frame options, referrer policy).
CACHING_OPTIMIZED_POLICY_ID = "658327ea-f89d-4fab-a63d-7e88639e58f6"
SECURITY_HEADERS_POLICY_ID = "67f7725c-6f97-4210-82d7-5512b31e9d03"
ORIGIN_ID = "assets-bucket"


@dataclass
class AssetsArgs:
    physical_prefix: str
    region: pulumi.Input[str]
    vpc_id: pulumi.Input[str] | None = None
    # The route tables of the function's subnets: the S3 gateway endpoint is added to them. None (a VPC
    # whose routes this program does not manage): no endpoint.
    route_table_ids: pulumi.Input[Sequence[pulumi.Input[str]]] | None = None
    price_class: str = "PriceClass_All"


def bucket_policy(bucket_arn: str, distribution_arn: str) -> dict[str, Any]:
    """Only CloudFront, and only for this distribution, may read objects."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ReadThroughTheDistributionOnly",
                "Effect": "Allow",
                "Principal": {"Service": "cloudfront.amazonaws.com"},
                "Action": "s3:GetObject",
                "Resource": f"{bucket_arn}/*",
                "Condition": {"StringEquals": {"AWS:SourceArn": distribution_arn}},
            }
        ],
    }


def function_access_policy(bucket_arn: str) -> dict[str, Any]:
    """What the function may do with the images: put, get and delete objects of this bucket only."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "StoreImages",
                "Effect": "Allow",
                "Action": ["s3:PutObject", "s3:GetObject", "s3:DeleteObject"],
                "Resource": f"{bucket_arn}/*",
            }
        ],
    }


class Assets(pulumi.ComponentResource):
    """The bucket, its distribution and the gateway endpoint; ``environment`` is what the function
    needs to store images there, ``grant`` gives its role the access."""

    bucket_name: pulumi.Output[str]
    bucket_arn: pulumi.Output[str]
    domain_name: pulumi.Output[str]

    def __init__(self, name: str, args: AssetsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("blog-api:infra:Assets", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        prefix = args.physical_prefix
        self._name = name

        bucket = aws.s3.Bucket(
            f"{name}-bucket",
            bucket_prefix=f"{prefix}-blog-api-assets-",
            # Destroying the stack empties the bucket (a review stack's branch deletion must not fail on
            # it): its distribution goes too, so no stored URL could reach an image kept behind.
            force_destroy=True,
            tags={"Name": f"{prefix}-blog-api-assets"},
            opts=child,
        )
        access_block = aws.s3.BucketPublicAccessBlock(
            f"{name}-public-access-block",
            bucket=bucket.id,
            block_public_acls=True,
            block_public_policy=True,
            ignore_public_acls=True,
            restrict_public_buckets=True,
            opts=child,
        )
        aws.s3.BucketOwnershipControls(
            f"{name}-ownership",
            bucket=bucket.id,
            rule=aws.s3.BucketOwnershipControlsRuleArgs(object_ownership="BucketOwnerEnforced"),
            opts=child,
        )
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{name}-encryption",
            bucket=bucket.id,
            rules=[
                aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                    apply_server_side_encryption_by_default=aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                        sse_algorithm="AES256"
                    ),
                    bucket_key_enabled=True,
                )
            ],
            opts=child,
        )
        access_control = aws.cloudfront.OriginAccessControl(
            f"{name}-oac",
            name=f"{prefix}-blog-api-assets",
            description="blog-api images: CloudFront signs every request to the bucket",
            origin_access_control_origin_type="s3",
            signing_behavior="always",
            signing_protocol="sigv4",
            opts=child,
        )
        distribution = aws.cloudfront.Distribution(
            f"{name}-distribution",
            enabled=True,
            is_ipv6_enabled=True,
            http_version="http2and3",
            comment=f"{prefix} blog-api images",
            price_class=args.price_class,
            origins=[
                aws.cloudfront.DistributionOriginArgs(
                    origin_id=ORIGIN_ID,
                    domain_name=bucket.bucket_regional_domain_name,
                    origin_access_control_id=access_control.id,
                )
            ],
            default_cache_behavior=aws.cloudfront.DistributionDefaultCacheBehaviorArgs(
                target_origin_id=ORIGIN_ID,
                viewer_protocol_policy="redirect-to-https",
                allowed_methods=["GET", "HEAD"],
                cached_methods=["GET", "HEAD"],
                compress=True,
                cache_policy_id=CACHING_OPTIMIZED_POLICY_ID,
                response_headers_policy_id=SECURITY_HEADERS_POLICY_ID,
            ),
            restrictions=aws.cloudfront.DistributionRestrictionsArgs(
                geo_restriction=aws.cloudfront.DistributionRestrictionsGeoRestrictionArgs(
                    restriction_type="none"
                )
            ),
            viewer_certificate=aws.cloudfront.DistributionViewerCertificateArgs(
                cloudfront_default_certificate=True
            ),
            opts=child,
        )
        aws.s3.BucketPolicy(
            f"{name}-policy",
            bucket=bucket.id,
            policy=pulumi.Output.all(bucket.arn, distribution.arn).apply(
                lambda arns: json.dumps(bucket_policy(str(arns[0]), str(arns[1])))
            ),
            # The public access block first: the policy names a service principal, never "*", but the
            # block must already be in force when any policy lands.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[access_block]),
        )
        if args.vpc_id is not None and args.route_table_ids is not None:
            aws.ec2.VpcEndpoint(
                f"{name}-s3-endpoint",
                vpc_id=args.vpc_id,
                service_name=pulumi.Output.concat("com.amazonaws.", args.region, ".s3"),
                vpc_endpoint_type="Gateway",
                route_table_ids=args.route_table_ids,
                tags={"Name": f"{prefix}-blog-api-s3"},
                opts=child,
            )

        self.bucket_name = bucket.bucket
        self.bucket_arn = bucket.arn
        self.domain_name = distribution.domain_name
        self.register_outputs(
            {"bucketName": self.bucket_name, "bucketArn": self.bucket_arn, "domainName": self.domain_name}
        )

    def environment(self) -> dict[str, pulumi.Input[str]]:
        """The function's settings for the images: the bucket, and the URL readers load them from."""
        return {
            variable("asset_bucket"): self.bucket_name,
            variable("asset_url"): pulumi.Output.concat("https://", self.domain_name),
        }

    def grant(self, role_name: pulumi.Input[str], opts: pulumi.ResourceOptions | None = None) -> None:
        """Let the function's role put, get and delete the images (a policy of its own on the role)."""
        aws.iam.RolePolicy(
            f"{self._name}-function-access",
            role=role_name,
            policy=self.bucket_arn.apply(lambda arn: json.dumps(function_access_policy(arn))),
            opts=pulumi.ResourceOptions.merge(pulumi.ResourceOptions(parent=self), opts),
        )
