"""One stack's three roles (preview, deploy, operator) with their policies (``infra.bootstrap.policies``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from infra.bootstrap.policies import (
    StackNames,
    deploy_policies,
    github_trust,
    operator_policy,
    operator_trust,
    preview_policy,
    role_name,
)

# A deploy can take a while (a NAT gateway, a VPC-attached function's network interfaces).
DEPLOY_SESSION_SECONDS = 2 * 3600


@dataclass
class StackRolesArgs:
    names: StackNames
    provider_arn: pulumi.Input[str]
    repository: str
    # GitHub environments whose jobs may assume each role.
    deploy_environments: Sequence[str]
    preview_environments: Sequence[str]
    operator_principals: Sequence[str]


class StackRoles(pulumi.ComponentResource):
    """``<prefix>-blog-api-{preview,deploy,operator}`` and what each may do."""

    preview_role_arn: pulumi.Output[str]
    deploy_role_arn: pulumi.Output[str]
    operator_role_arn: pulumi.Output[str]

    def __init__(self, name: str, args: StackRolesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("blog-api:bootstrap:StackRoles", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        prefix = args.names.prefix

        def github_role(kind: str, environments: Sequence[str], seconds: int = 3600) -> aws.iam.Role:
            return aws.iam.Role(
                f"{name}-{kind}",
                name=role_name(prefix, kind),
                assume_role_policy=pulumi.Output.from_input(args.provider_arn).apply(
                    lambda arn: json.dumps(github_trust(arn, args.repository, environments))
                ),
                max_session_duration=seconds,
                opts=child,
            )

        preview = github_role("preview", args.preview_environments)
        aws.iam.RolePolicy(
            f"{name}-preview-policy",
            name="preview",
            role=preview.id,
            policy=json.dumps(preview_policy(args.names)),
            opts=child,
        )

        deploy = github_role("deploy", args.deploy_environments, DEPLOY_SESSION_SECONDS)
        for part, document in deploy_policies(args.names).items():
            # Managed policies: each has its own size limit (6,144 characters), an inline one shares 10,240.
            policy = aws.iam.Policy(
                f"{name}-deploy-{part}",
                name=f"{role_name(prefix, 'deploy')}-{part}",
                policy=json.dumps(document),
                opts=child,
            )
            aws.iam.RolePolicyAttachment(
                f"{name}-deploy-{part}-attachment", role=deploy.name, policy_arn=policy.arn, opts=child
            )

        operator = aws.iam.Role(
            f"{name}-operator",
            name=role_name(prefix, "operator"),
            assume_role_policy=json.dumps(operator_trust(args.operator_principals)),
            opts=child,
        )
        aws.iam.RolePolicy(
            f"{name}-operator-policy",
            name="parameters",
            role=operator.id,
            policy=json.dumps(operator_policy(args.names)),
            opts=child,
        )

        self.preview_role_arn = preview.arn
        self.deploy_role_arn = deploy.arn
        self.operator_role_arn = operator.arn
        self.register_outputs({"preview": preview.arn, "deploy": deploy.arn, "operator": operator.arn})
