"""The deploy role's statements for the repository images' bucket, distribution and origin access control
(infra/assets.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from infra.bootstrap.policies import StackNames

# The images' distribution and its origin access control (infra/assets.py). CloudFront is global: no region
# to limit them to, and both are named by random ids.
DISTRIBUTION_ACTIONS = tuple(
    "cloudfront:CreateDistribution cloudfront:GetDistribution cloudfront:GetDistributionConfig "
    "cloudfront:UpdateDistribution cloudfront:DeleteDistribution cloudfront:TagResource "
    "cloudfront:UntagResource cloudfront:ListTagsForResource ".split()
)
ORIGIN_ACCESS_CONTROL_ACTIONS = tuple(
    "cloudfront:GetOriginAccessControl cloudfront:UpdateOriginAccessControl "
    "cloudfront:DeleteOriginAccessControl ".split()
)


def images_statements(stack: StackNames) -> list[dict[str, Any]]:
    """The bucket by the stack's names (configuration, never an image's content); the distribution and its
    origin access control by the account's random ids."""
    return [
        {
            # The bucket's configuration and policy. Its name is the prefix plus a suffix S3 adds
            # (bucket_prefix), so the pattern also covers the objects: the next statement limits that.
            "Sid": "ImagesBucket",
            "Effect": "Allow",
            "Action": "s3:*",
            "Resource": stack.arns("arn:aws:s3:::{p}-blog-api-assets-*"),
        },
        {
            # The images are the function's to write; deploying never reads or writes one. It may delete
            # them: destroying the stack empties the bucket (force_destroy).
            "Sid": "NotTheImages",
            "Effect": "Deny",
            "Action": ["s3:GetObject*", "s3:PutObject*"],
            "Resource": stack.arns("arn:aws:s3:::{p}-blog-api-assets-*/*"),
        },
        {
            "Sid": "ImagesDistribution",
            "Effect": "Allow",
            "Action": list(DISTRIBUTION_ACTIONS),
            "Resource": f"arn:aws:cloudfront::{stack.account_id}:distribution/*",
        },
        {
            "Sid": "CreateTheOriginAccessControl",
            "Effect": "Allow",
            "Action": "cloudfront:CreateOriginAccessControl",
            "Resource": "*",
        },
        {
            "Sid": "TheOriginAccessControl",
            "Effect": "Allow",
            "Action": list(ORIGIN_ACCESS_CONTROL_ACTIONS),
            "Resource": f"arn:aws:cloudfront::{stack.account_id}:origin-access-control/*",
        },
    ]
