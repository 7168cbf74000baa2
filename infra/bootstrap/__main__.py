"""The account's bootstrap: run once per AWS account, by an administrator, before any blog-api stack.

It creates GitHub's OIDC provider (or uses the one the account has) and, for dev and prod, the roles the
deploy workflow assumes and the operator role people use to write the parameters. It exports the role
ARNs to put into the GitHub environments' ``AWS_ROLE_ARN`` variables (docs/deploying.md, "From an empty
account").
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from infra.bootstrap.roles import StackRoles, StackRolesArgs
from infra.bootstrap.settings import GITHUB_OIDC_URL, STACKS, BootstrapSettings, SettingsError

try:
    settings = BootstrapSettings.load(pulumi.Config())
except SettingsError as exc:
    raise pulumi.RunError(f"the bootstrap's configuration is not usable:\n{exc}") from None

account_id = aws.get_caller_identity().account_id
region = aws.get_region().region

provider_arn: pulumi.Input[str]
if settings.oidc_provider_arn is not None:
    # An account has one provider per URL: reuse it rather than fail on a second one.
    provider_arn = settings.oidc_provider_arn
else:
    provider = aws.iam.OpenIdConnectProvider(
        "github-actions",
        url=GITHUB_OIDC_URL,
        # The audience configure-aws-credentials asks for. No thumbprint: IAM trusts GitHub's
        # certificate through its own root store.
        client_id_lists=["sts.amazonaws.com"],
    )
    provider_arn = provider.arn

role_arns: dict[str, pulumi.Output[str]] = {}
operators: dict[str, pulumi.Output[str]] = {}
for stack in STACKS:
    roles = StackRoles(
        f"{stack.prefix}-roles",
        StackRolesArgs(
            names=stack.names(account_id, region),
            provider_arn=provider_arn,
            repository=settings.repository,
            deploy_environments=stack.deploy_environments,
            preview_environments=stack.preview_environments,
            operator_principals=settings.operator_principals or (f"arn:aws:iam::{account_id}:root",),
        ),
    )
    for environment in stack.deploy_environments:
        role_arns[environment] = roles.deploy_role_arn
    for environment in stack.preview_environments:
        role_arns[environment] = roles.preview_role_arn
    operators[stack.stack] = roles.operator_role_arn

pulumi.export("oidcProviderArn", provider_arn)
# GitHub environment → the AWS_ROLE_ARN variable to give it.
pulumi.export("environmentRoleArns", role_arns)
# Stack → the role to assume for writing its parameters (aws sts assume-role, or a CLI profile).
pulumi.export("operatorRoleArns", operators)
