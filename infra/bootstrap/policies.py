"""The IAM policy documents of the roles GitHub Actions and people use, as plain functions of names.

Per stack (a physical prefix such as ``d-st``) there are three roles:

- **preview** (``<prefix>-blog-api-preview``): exactly the calls ``pulumi preview`` of this program makes,
  and an explicit deny on the stack's SecureString parameters and on KMS decryption, which no allow
  anywhere can undo (``ReadOnlyAccess`` could read dev's secrets through the ``aws/ssm`` key);
- **deploy** (``<prefix>-blog-api-deploy``): what ``pulumi up`` creates, changes and deletes, each action
  on the ARNs of the stack's own names where AWS allows it; the few that cannot be scoped by name are
  listed in ``UNSCOPED`` with the reason;
- **operator** (``<prefix>-blog-api-operator``): a person writing the stack's parameters through SSM (with
  the stack's key, which names this role).

A name pattern covers review stacks too: dev's roles are given the prefixes ``d-st`` and ``r-*``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from infra.bootstrap.image_policies import (
    DISTRIBUTION_ACTIONS,
    ORIGIN_ACCESS_CONTROL_ACTIONS,
    images_statements,
)
from shared import names

# The function's parameters, by the suffix of their name under /<prefix>/blog-api/ (the stack files'
# defaults): the SecureStrings (the Cloudinary secret only exists where share images use Cloudinary), and
# the App id, a String that `pulumi up` reads.
SECURE_PARAMETERS = (
    "github-webhook-secret",
    "github-app-private-key",
    "database-url",
    "cloudinary-api-secret",
)
APP_ID_PARAMETER = "github-app-id"
# The managed policies the function role gets (infra.function); the deploy role may attach only these.
FUNCTION_MANAGED_POLICIES = (
    "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
    "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole",
)

# The actions a preview of this program calls: the invokes of infra/__main__.py, infra/network.py and
# infra/nat.py (the region's zones, the NAT image, the App id). sts:GetCallerIdentity needs no permission
# and get_region makes no call; nothing else is read, because a preview does not refresh.
PREVIEW_READS = ("ec2:DescribeAvailabilityZones", "ec2:DescribeImages")

FUNCTION_ROLE_ACTIONS = tuple(
    "iam:CreateRole iam:DeleteRole iam:GetRole iam:UpdateRole iam:TagRole iam:UntagRole "
    "iam:UpdateAssumeRolePolicy iam:PutRolePolicy iam:GetRolePolicy iam:DeleteRolePolicy "
    "iam:ListRolePolicies iam:ListAttachedRolePolicies iam:ListInstanceProfilesForRole ".split()
)

ACCESS_LOG_DELIVERY_ACTIONS = tuple(
    "logs:CreateLogDelivery logs:GetLogDelivery logs:UpdateLogDelivery logs:DeleteLogDelivery "
    "logs:ListLogDeliveries logs:PutResourcePolicy logs:DescribeResourcePolicies "
    "logs:DescribeLogGroups ".split()
)

NETWORK_ACTIONS = tuple(
    "ec2:Describe* ec2:CreateVpc ec2:DeleteVpc ec2:ModifyVpcAttribute ec2:CreateSubnet "
    "ec2:DeleteSubnet ec2:ModifySubnetAttribute ec2:CreateInternetGateway ec2:DeleteInternetGateway "
    "ec2:AttachInternetGateway ec2:DetachInternetGateway ec2:CreateRouteTable ec2:DeleteRouteTable "
    "ec2:CreateRoute ec2:DeleteRoute ec2:ReplaceRoute ec2:AssociateRouteTable "
    "ec2:DisassociateRouteTable ec2:CreateSecurityGroup ec2:DeleteSecurityGroup "
    "ec2:AuthorizeSecurityGroupIngress ec2:AuthorizeSecurityGroupEgress "
    "ec2:RevokeSecurityGroupIngress ec2:RevokeSecurityGroupEgress ec2:AllocateAddress "
    "ec2:ReleaseAddress ec2:AssociateAddress ec2:DisassociateAddress ec2:CreateNatGateway "
    "ec2:DeleteNatGateway ec2:CreateNetworkInterface ec2:DeleteNetworkInterface "
    "ec2:ModifyNetworkInterfaceAttribute ec2:RunInstances ec2:TerminateInstances "
    "ec2:ModifyInstanceAttribute ec2:CreateVpcEndpoint ec2:DeleteVpcEndpoints ec2:ModifyVpcEndpoint "
    "ec2:CreateTags ec2:DeleteTags ".split()
)

KEY_ADMIN_ACTIONS = tuple(
    "kms:PutKeyPolicy kms:DescribeKey kms:GetKeyPolicy kms:GetKeyRotationStatus "
    "kms:EnableKeyRotation kms:ListResourceTags kms:TagResource kms:UntagResource "
    "kms:UpdateKeyDescription kms:ScheduleKeyDeletion kms:CancelKeyDeletion ".split()
)

PARAMETER_ACTIONS = tuple(
    "ssm:PutParameter ssm:GetParameter ssm:GetParameters ssm:DeleteParameter ssm:AddTagsToResource "
    "ssm:ListTagsForResource ".split()
)

HTTP_API_ACTIONS = (
    "apigateway:GET",
    "apigateway:POST",
    "apigateway:PUT",
    "apigateway:PATCH",
    "apigateway:DELETE",
)

# The deploy role's actions that no name of the stack can scope (they are on "*", on every key, or on every
# HTTP API of the region), and why. Every other action is on ARNs built from the stack's prefixes.
UNSCOPED: dict[str, tuple[tuple[str, ...], str]] = {
    "HTTP API access logs": (
        ACCESS_LOG_DELIVERY_ACTIONS,
        "API Gateway delivers access logs to CloudWatch through log deliveries and a resource policy, "
        "which have no resource ARN; listing log groups is account-wide",
    ),
    "the parameter key": (
        (
            "kms:CreateKey",
            "kms:ListAliases",
            "kms:CreateAlias",
            "kms:UpdateAlias",
            "kms:DeleteAlias",
            *KEY_ADMIN_ACTIONS,
        ),
        "a key is named by a random id that does not exist before CreateKey (an alias's own ARN is scoped "
        "by name, but creating one also takes the key's)",
    ),
    "EC2 networking": (
        NETWORK_ACTIONS,
        "VPCs, subnets, route tables, gateways, addresses, interfaces and instances are named by random "
        "ids; limited to the stack's region",
    ),
    "HTTP APIs": (
        HTTP_API_ACTIONS,
        "an HTTP API and its routes, stages and domain mappings are named by random ids; limited to the "
        "region's /apis and /domainnames",
    ),
    "the images' distribution": (
        ("cloudfront:CreateOriginAccessControl", *ORIGIN_ACCESS_CONTROL_ACTIONS, *DISTRIBUTION_ACTIONS),
        "a distribution and an origin access control are named by random ids (limited to the account's "
        "distribution/* and origin-access-control/*); CreateOriginAccessControl takes no resource at all",
    ),
}


@dataclass(frozen=True)
class StackNames:
    """Where one stack's names live: account, region, and the prefixes its resources start with."""

    account_id: str
    region: str
    # The stack's own prefix first; dev's roles also serve review stacks (``r-*``).
    prefixes: tuple[str, ...]

    @property
    def prefix(self) -> str:
        return self.prefixes[0]

    def arns(self, template: str) -> list[str]:
        """``template`` once per prefix: ``{p}`` the prefix, ``{a}`` the account, ``{r}`` the region."""
        return [template.format(p=p, a=self.account_id, r=self.region) for p in self.prefixes]

    def parameter_arns(self, suffixes: Sequence[str]) -> list[str]:
        # Review stacks read dev's parameters (their config is a copy of dev's): the stack's own prefix.
        return [
            f"arn:aws:ssm:{self.region}:{self.account_id}:parameter/{self.prefix}/{names.PROJECT}/{suffix}"
            for suffix in suffixes
        ]


def role_name(prefix: str, kind: str) -> str:
    """``d-st``, ``deploy`` → ``d-st-blog-api-deploy``."""
    return f"{names.function_name(prefix)}-{kind}"


def _in_region(stack: StackNames) -> dict[str, Any]:
    return {"StringEquals": {"aws:RequestedRegion": stack.region}}


def _doc(*statements: dict[str, Any]) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def _deny_secrets(stack: StackNames, *, decrypt: bool) -> list[dict[str, Any]]:
    """Never the SecureStrings' values: by name, by path, and (``decrypt``) through any key at all."""
    return [
        {
            "Sid": "NeverReadSecureStrings",
            "Effect": "Deny",
            "Action": ["ssm:GetParameter", "ssm:GetParameters", "ssm:GetParameterHistory"],
            "Resource": stack.parameter_arns(SECURE_PARAMETERS),
        },
        {
            # A path query would return them too; Decrypt covers any other way (another key, or aws/ssm
            # through SSM). The deploy role keeps Decrypt: Lambda may need it for the function's
            # environment, which holds no secret.
            "Sid": "NeverDecrypt",
            "Effect": "Deny",
            "Action": ["ssm:GetParametersByPath", *(["kms:Decrypt"] if decrypt else [])],
            "Resource": "*",
        },
    ]


def preview_policy(stack: StackNames) -> dict[str, Any]:
    """The calls ``pulumi preview`` makes, and a deny on the secrets that no other policy can lift."""
    return _doc(
        {
            "Sid": "PreviewReads",
            "Effect": "Allow",
            "Action": list(PREVIEW_READS),
            "Resource": "*",
            "Condition": _in_region(stack),
        },
        {
            "Sid": "ReadTheAppId",
            "Effect": "Allow",
            "Action": "ssm:GetParameter",
            "Resource": stack.parameter_arns([APP_ID_PARAMETER]),
        },
        *_deny_secrets(stack, decrypt=True),
    )


def deploy_policies(stack: StackNames) -> dict[str, dict[str, Any]]:
    """The deploy role's policies, by name suffix (each one small enough for a managed policy)."""
    function = "arn:aws:lambda:{r}:{a}:function:{p}-blog-api"
    return {
        "app": _doc(
            {
                "Sid": "Function",
                "Effect": "Allow",
                "Action": "lambda:*",
                "Resource": stack.arns(function) + stack.arns(function + ":*"),
            },
            {
                "Sid": "FunctionRole",
                "Effect": "Allow",
                "Action": list(FUNCTION_ROLE_ACTIONS),
                "Resource": stack.arns("arn:aws:iam::{a}:role/{p}-blog-api-role"),
            },
            {
                "Sid": "FunctionRoleManagedPolicies",
                "Effect": "Allow",
                "Action": ["iam:AttachRolePolicy", "iam:DetachRolePolicy"],
                "Resource": stack.arns("arn:aws:iam::{a}:role/{p}-blog-api-role"),
                "Condition": {"ArnEquals": {"iam:PolicyARN": list(FUNCTION_MANAGED_POLICIES)}},
            },
            {
                # Scoped by role name: only the function's own role, and only to Lambda.
                "Sid": "PassFunctionRole",
                "Effect": "Allow",
                "Action": "iam:PassRole",
                "Resource": stack.arns("arn:aws:iam::{a}:role/{p}-blog-api-role"),
                "Condition": {"StringEquals": {"iam:PassedToService": "lambda.amazonaws.com"}},
            },
            {
                "Sid": "QueueTopicAlarmsSchedule",
                "Effect": "Allow",
                "Action": ["sqs:*", "sns:*", "cloudwatch:*", "events:*"],
                "Resource": stack.arns("arn:aws:sqs:{r}:{a}:{p}-blog-api-*")
                + stack.arns("arn:aws:sns:{r}:{a}:{p}-blog-api-alarms")
                + stack.arns("arn:aws:sns:{r}:{a}:{p}-blog-api-alarms:*")
                + stack.arns("arn:aws:cloudwatch:{r}:{a}:alarm:{p}-blog-api-*")
                + stack.arns("arn:aws:events:{r}:{a}:rule/{p}-blog-api-*"),
            },
            {
                "Sid": "LogGroups",
                "Effect": "Allow",
                "Action": "logs:*",
                "Resource": stack.arns("arn:aws:logs:{r}:{a}:log-group:/aws/lambda/{p}-blog-api")
                + stack.arns("arn:aws:logs:{r}:{a}:log-group:/aws/lambda/{p}-blog-api:*")
                + stack.arns("arn:aws:logs:{r}:{a}:log-group:/aws/apigateway/{p}-blog-api")
                + stack.arns("arn:aws:logs:{r}:{a}:log-group:/aws/apigateway/{p}-blog-api:*"),
            },
            {
                "Sid": "AccessLogDelivery",
                "Effect": "Allow",
                "Action": list(ACCESS_LOG_DELIVERY_ACTIONS),
                "Resource": "*",
            },
            {
                "Sid": "HttpApi",
                "Effect": "Allow",
                "Action": list(HTTP_API_ACTIONS),
                "Resource": [
                    f"arn:aws:apigateway:{stack.region}::/{path}"
                    for path in ("apis", "apis/*", "domainnames", "domainnames/*", "tags/*")
                ],
            },
            {
                # The App id (a String); never the SecureStrings, which only the function reads.
                "Sid": "ReadTheAppId",
                "Effect": "Allow",
                "Action": "ssm:GetParameter",
                "Resource": stack.parameter_arns([APP_ID_PARAMETER]),
            },
            *_deny_secrets(stack, decrypt=False),
        ),
        "network": _doc(
            {
                "Sid": "Networking",
                "Effect": "Allow",
                "Action": list(NETWORK_ACTIONS),
                "Resource": "*",
                "Condition": _in_region(stack),
            },
        ),
        "key": _doc(
            {
                "Sid": "CreateTheParameterKey",
                "Effect": "Allow",
                "Action": "kms:CreateKey",
                "Resource": "*",
                "Condition": _in_region(stack),
            },
            {
                # Administration only: no Encrypt, Decrypt or CreateGrant (the key policy allows none to
                # this role either).
                "Sid": "AdministerTheParameterKey",
                "Effect": "Allow",
                "Action": list(KEY_ADMIN_ACTIONS),
                "Resource": f"arn:aws:kms:{stack.region}:{stack.account_id}:key/*",
            },
            {
                "Sid": "TheKeysAlias",
                "Effect": "Allow",
                "Action": ["kms:CreateAlias", "kms:UpdateAlias", "kms:DeleteAlias"],
                "Resource": [
                    *stack.arns("arn:aws:kms:{r}:{a}:alias/{p}-blog-api-*"),
                    f"arn:aws:kms:{stack.region}:{stack.account_id}:key/*",
                ],
            },
            {"Sid": "ListAliases", "Effect": "Allow", "Action": "kms:ListAliases", "Resource": "*"},
        ),
        "assets": _doc(*images_statements(stack)),
    }


def operator_policy(stack: StackNames) -> dict[str, Any]:
    """Write and check the stack's parameters through SSM, with whatever key the stack uses."""
    parameters = f"arn:aws:ssm:{stack.region}:{stack.account_id}:parameter/{stack.prefix}/{names.PROJECT}/*"
    return _doc(
        {
            "Sid": "TheStacksParameters",
            "Effect": "Allow",
            "Action": list(PARAMETER_ACTIONS),
            "Resource": parameters,
        },
        {"Sid": "ListParameters", "Effect": "Allow", "Action": "ssm:DescribeParameters", "Resource": "*"},
        {
            # The key policy decides which key (prod's names this role); only ever through SSM.
            "Sid": "EncryptThroughSsm",
            "Effect": "Allow",
            "Action": ["kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey", "kms:DescribeKey"],
            "Resource": f"arn:aws:kms:{stack.region}:{stack.account_id}:key/*",
            "Condition": {"StringEquals": {"kms:ViaService": f"ssm.{stack.region}.amazonaws.com"}},
        },
    )


def github_trust(provider_arn: str, repository: str, environments: Sequence[str]) -> dict[str, Any]:
    """Only GitHub Actions jobs of ``repository`` that run in one of ``environments``."""
    issuer = "token.actions.githubusercontent.com"
    return _doc(
        {
            "Effect": "Allow",
            "Principal": {"Federated": provider_arn},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {
                "StringEquals": {
                    f"{issuer}:aud": "sts.amazonaws.com",
                    f"{issuer}:sub": [f"repo:{repository}:environment:{env}" for env in environments],
                }
            },
        }
    )


def operator_trust(principals: Sequence[str]) -> dict[str, Any]:
    """The people (IAM principals) who may assume the operator role."""
    return _doc({"Effect": "Allow", "Principal": {"AWS": list(principals)}, "Action": "sts:AssumeRole"})
