"""The roles' policies, checked against what the program under mocks actually calls and creates."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from infra.bootstrap.policies import (
    PREVIEW_READS,
    UNSCOPED,
    StackNames,
    deploy_policies,
    operator_policy,
    preview_policy,
)
from infra.bootstrap.settings import STACKS
from infra.function import parameter_arn
from tests.infra.conftest import ACCOUNT_ID
from tests.infra.deployment import Deployment, Resource

REGION = "ap-northeast-1"
# IAM's size limit of a managed policy, white space not counted.
MANAGED_POLICY_LIMIT = 6144
# What each invoke of the program calls in AWS (None: no permission needed).
INVOKE_ACTIONS: dict[str, str | None] = {
    "aws:index/getRegion:getRegion": None,
    "aws:index/getCallerIdentity:getCallerIdentity": None,
    "aws:index/getAvailabilityZones:getAvailabilityZones": "ec2:DescribeAvailabilityZones",
    "aws:ec2/getAmi:getAmi": "ec2:DescribeImages",
    "aws:ssm/getParameter:getParameter": "ssm:GetParameter",
}


def names_of(stack: str) -> StackNames:
    (spec,) = [s for s in STACKS if s.stack == stack]
    return spec.names(ACCOUNT_ID, REGION)


def statements(policy: dict[str, Any], effect: str = "Allow") -> list[dict[str, Any]]:
    return [s for s in policy["Statement"] if s["Effect"] == effect]


def as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _matches(pattern: str, value: str) -> bool:
    return fnmatch.fnmatchcase(value.lower() if ":" not in pattern else value, pattern)


def allowed(policies: list[dict[str, Any]], action: str, resource: str) -> bool:
    """An Allow of some statement covers (action, resource), and no Deny does (conditions not evaluated)."""

    def covers(statement: dict[str, Any]) -> bool:
        actions = as_list(statement["Action"])
        return any(fnmatch.fnmatchcase(action, a) for a in actions) and any(
            fnmatch.fnmatchcase(resource, r) for r in as_list(statement["Resource"])
        )

    every = [s for p in policies for s in p["Statement"]]
    return any(covers(s) for s in every if s["Effect"] == "Allow") and not any(
        covers(s) for s in every if s["Effect"] == "Deny"
    )


# --- preview: exactly what a preview calls ---


@pytest.mark.parametrize("scenario", ["dev", "prod", "review", "dev-kms", "prod-custom"])
def test_the_preview_role_allows_exactly_the_calls_the_program_makes(
    deployments: dict[str, Deployment], scenario: str
) -> None:
    deployment = deployments[scenario]
    stack = "prod" if deployment.stack == "prod" else "dev"
    policy = preview_policy(names_of(stack))
    unknown = set(deployment.invokes) - set(INVOKE_ACTIONS)
    assert unknown == set(), f"add the IAM action of {unknown} to the preview role and this table"
    for call in deployment.invoke_args:
        action = INVOKE_ACTIONS[call["token"]]
        if action is None:
            continue
        resource = "*"
        if action == "ssm:GetParameter":
            resource = parameter_arn(REGION, ACCOUNT_ID, call["args"]["name"])
        assert allowed([policy], action, resource), (action, resource)


def test_the_preview_role_allows_nothing_else() -> None:
    for stack in ("dev", "prod"):
        names = names_of(stack)
        granted = {a for s in statements(preview_policy(names)) for a in as_list(s["Action"])}
        assert granted == {*PREVIEW_READS, "ssm:GetParameter"}
        (read,) = [s for s in statements(preview_policy(names)) if s["Action"] == "ssm:GetParameter"]
        assert read["Resource"] == [
            f"arn:aws:ssm:{REGION}:{ACCOUNT_ID}:parameter/{names.prefix}/blog-api/github-app-id"
        ]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_preview_and_deploy_roles_are_denied_the_stacks_securestrings(
    deployments: dict[str, Deployment], stack: str
) -> None:
    deployment = deployments[stack]
    names = names_of(stack)
    secure = [
        parameter_arn(REGION, ACCOUNT_ID, deployment.setting(key))
        for key in ("webhookSecretParam", "githubAppPrivateKeyParam", "databaseUrlParam")
    ]
    for policies in ([preview_policy(names)], list(deploy_policies(names).values())):
        for arn in secure:
            for action in ("ssm:GetParameter", "ssm:GetParameters"):
                # Even next to ReadOnlyAccess or ssm:* on "*": an explicit deny wins.
                wide = {"Statement": [{"Effect": "Allow", "Action": "ssm:*", "Resource": "*"}]}
                assert not allowed([*policies, wide], action, arn), (action, arn)
            assert not allowed([*policies, wide], "ssm:GetParametersByPath", "*")
    # The preview role may decrypt nothing, through any key.
    wide_kms = {"Statement": [{"Effect": "Allow", "Action": "kms:*", "Resource": "*"}]}
    assert not allowed([preview_policy(names), wide_kms], "kms:Decrypt", "*")


# --- deploy: what the program creates, on the stack's names; the rest named ---


def required_calls(deployment: Deployment) -> Iterator[tuple[str, str]]:
    """(action, resource ARN) that creating each registered resource takes."""
    r, a = REGION, ACCOUNT_ID
    fn = f"arn:aws:lambda:{r}:{a}:function:"
    by_type: dict[str, Callable[[Resource], list[tuple[str, str]]]] = {
        "aws:lambda/function:Function": lambda x: [
            ("lambda:CreateFunction", f"arn:aws:lambda:{r}:{a}:function:{x.inputs['name']}"),
            ("iam:PassRole", x.inputs["role"]),
        ],
        "aws:lambda/alias:Alias": lambda x: [
            ("lambda:CreateAlias", f"arn:aws:lambda:{r}:{a}:function:{x.inputs['functionName']}")],
        "aws:lambda/permission:Permission": lambda x: [
            ("lambda:AddPermission", f"arn:aws:lambda:{r}:{a}:function:{x.inputs['function']}")],
        "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig": lambda x: [
            ("lambda:PutFunctionEventInvokeConfig", fn + x.inputs["functionName"])],
        "aws:iam/role:Role": lambda x: [("iam:CreateRole", f"arn:aws:iam::{a}:role/{x.inputs['name']}")],
        "aws:iam/rolePolicy:RolePolicy": lambda x: [
            ("iam:PutRolePolicy", f"arn:aws:iam::{a}:role/{x.inputs['role'].removesuffix('-id')}")],
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment": lambda x: [
            ("iam:AttachRolePolicy", f"arn:aws:iam::{a}:role/{x.inputs['role']}")],
        "aws:sqs/queue:Queue": lambda x: [("sqs:CreateQueue", f"arn:aws:sqs:{r}:{a}:{x.inputs['name']}")],
        "aws:cloudwatch/logGroup:LogGroup": lambda x: [
            ("logs:CreateLogGroup", f"arn:aws:logs:{r}:{a}:log-group:{x.inputs['name']}"),
            ("logs:PutRetentionPolicy", f"arn:aws:logs:{r}:{a}:log-group:{x.inputs['name']}"),
        ],
        "aws:cloudwatch/metricAlarm:MetricAlarm": lambda x: [
            ("cloudwatch:PutMetricAlarm", f"arn:aws:cloudwatch:{r}:{a}:alarm:{x.inputs['name']}")],
        "aws:sns/topic:Topic": lambda x: [("sns:CreateTopic", f"arn:aws:sns:{r}:{a}:{x.inputs['name']}")],
        "aws:sns/topicSubscription:TopicSubscription": lambda x: [("sns:Subscribe", x.inputs["topic"])],
        "aws:kms/key:Key": lambda x: [
            ("kms:CreateKey", "*"), ("kms:EnableKeyRotation", f"arn:aws:kms:{r}:{a}:key/{x.id}")],
        "aws:kms/alias:Alias": lambda x: [
            ("kms:CreateAlias", f"arn:aws:kms:{r}:{a}:{x.inputs['name']}"),
            ("kms:CreateAlias", f"arn:aws:kms:{r}:{a}:key/{x.inputs['targetKeyId']}"),
        ],
        "aws:apigatewayv2/api:Api": lambda x: [("apigateway:POST", f"arn:aws:apigateway:{r}::/apis")],
        "aws:apigatewayv2/integration:Integration": lambda x: [
            ("apigateway:POST", f"arn:aws:apigateway:{r}::/apis/{x.inputs['apiId']}/integrations")],
        "aws:apigatewayv2/route:Route": lambda x: [
            ("apigateway:POST", f"arn:aws:apigateway:{r}::/apis/{x.inputs['apiId']}/routes")],
        "aws:apigatewayv2/stage:Stage": lambda x: [
            ("apigateway:POST", f"arn:aws:apigateway:{r}::/apis/{x.inputs['apiId']}/stages"),
            ("logs:CreateLogDelivery", "*"), ("logs:PutResourcePolicy", "*"),
        ],
        "aws:apigatewayv2/domainName:DomainName": lambda x: [
            ("apigateway:POST", f"arn:aws:apigateway:{r}::/domainnames")],
        "aws:apigatewayv2/apiMapping:ApiMapping": lambda x: [
            ("apigateway:POST", f"arn:aws:apigateway:{r}::/domainnames/{x.inputs['domainName']}/mappings")],
        "aws:cloudwatch/eventRule:EventRule": lambda x: [
            ("events:PutRule", f"arn:aws:events:{r}:{a}:rule/{x.inputs['name']}")],
        "aws:cloudwatch/eventTarget:EventTarget": lambda x: [
            ("events:PutTargets", f"arn:aws:events:{r}:{a}:rule/{x.inputs['rule']}")],
        "aws:ec2/vpc:Vpc": lambda x: [("ec2:CreateVpc", "*"), ("ec2:ModifyVpcAttribute", "*")],
        "aws:ec2/subnet:Subnet": lambda x: [("ec2:CreateSubnet", "*")],
        "aws:ec2/internetGateway:InternetGateway": lambda x: [
            ("ec2:CreateInternetGateway", "*"), ("ec2:AttachInternetGateway", "*")],
        "aws:ec2/routeTable:RouteTable": lambda x: [("ec2:CreateRouteTable", "*")],
        "aws:ec2/route:Route": lambda x: [("ec2:CreateRoute", "*")],
        "aws:ec2/routeTableAssociation:RouteTableAssociation": lambda x: [("ec2:AssociateRouteTable", "*")],
        "aws:ec2/securityGroup:SecurityGroup": lambda x: [
            ("ec2:CreateSecurityGroup", "*"), ("ec2:AuthorizeSecurityGroupEgress", "*")],
        "aws:ec2/eip:Eip": lambda x: [("ec2:AllocateAddress", "*"), ("ec2:AssociateAddress", "*")],
        "aws:ec2/natGateway:NatGateway": lambda x: [("ec2:CreateNatGateway", "*")],
        "aws:ec2/networkInterface:NetworkInterface": lambda x: [
            ("ec2:CreateNetworkInterface", "*"), ("ec2:ModifyNetworkInterfaceAttribute", "*")],
        "aws:ec2/instance:Instance": lambda x: [("ec2:RunInstances", "*"), ("ec2:DescribeImages", "*")],
        "aws:ec2/vpcEndpoint:VpcEndpoint": lambda x: [("ec2:CreateVpcEndpoint", "*")],
        "aws:s3/bucket:Bucket": lambda x: [
            ("s3:CreateBucket", f"arn:aws:s3:::{x.id}"), ("s3:PutBucketTagging", f"arn:aws:s3:::{x.id}")],
        "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": lambda x: [
            ("s3:PutBucketPublicAccessBlock", f"arn:aws:s3:::{x.inputs['bucket']}")],
        "aws:s3/bucketOwnershipControls:BucketOwnershipControls": lambda x: [
            ("s3:PutBucketOwnershipControls", f"arn:aws:s3:::{x.inputs['bucket']}")],
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": lambda x: [
            ("s3:PutEncryptionConfiguration", f"arn:aws:s3:::{x.inputs['bucket']}")],
        "aws:s3/bucketPolicy:BucketPolicy": lambda x: [
            ("s3:PutBucketPolicy", f"arn:aws:s3:::{x.inputs['bucket']}")],
        "aws:cloudfront/originAccessControl:OriginAccessControl": lambda x: [
            ("cloudfront:CreateOriginAccessControl", "*"),
            ("cloudfront:GetOriginAccessControl", f"arn:aws:cloudfront::{a}:origin-access-control/{x.id}")],
        "aws:cloudfront/distribution:Distribution": lambda x: [
            ("cloudfront:CreateDistribution", f"arn:aws:cloudfront::{a}:distribution/{x.id}"),
            # Pulumi waits until the distribution is deployed.
            ("cloudfront:GetDistribution", f"arn:aws:cloudfront::{a}:distribution/{x.id}")],
    }  # fmt: skip
    for resource in deployment.resources:
        if not resource.custom or resource.type == "pulumi:pulumi:StackReference":
            continue
        assert resource.type in by_type, f"add what creating {resource.type} takes to this table"
        yield from by_type[resource.type](resource)


@pytest.mark.parametrize(
    "scenario",
    [
        "dev",
        "prod",
        "review",
        "dev-kms",
        "dev-nat-gateway",
        "prod-custom",
        "prod-snapstart",
        "prod-endpoints",
    ],
)
def test_the_deploy_role_may_create_everything_the_stack_registers(
    deployments: dict[str, Deployment], scenario: str
) -> None:
    deployment = deployments[scenario]
    stack = "prod" if deployment.stack == "prod" else "dev"
    policies = list(deploy_policies(names_of(stack)).values())
    missing = [call for call in required_calls(deployment) if not allowed(policies, *call)]
    assert missing == []


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_deploy_action_is_on_the_stacks_names_or_named_as_unscoped(stack: str) -> None:
    names = names_of(stack)
    unscoped = {action for actions, _ in UNSCOPED.values() for action in actions}
    for part, policy in deploy_policies(names).items():
        for statement in statements(policy):
            resources = as_list(statement["Resource"])
            on_names = all(any(f"{p}-blog-api" in r or f"/{names.prefix}/blog-api/" in r
                               for p in names.prefixes) for r in resources)  # fmt: skip
            if not on_names:
                assert set(as_list(statement["Action"])) <= unscoped, (part, statement["Sid"])
        size = len(json.dumps(policy, separators=(",", ":")))
        assert size < MANAGED_POLICY_LIMIT, (part, size)


def test_the_deploy_role_configures_and_empties_its_own_images_bucket_but_never_reads_an_image() -> None:
    policies = list(deploy_policies(names_of("dev")).values())
    own, review, prods = (f"arn:aws:s3:::{p}-blog-api-assets-0123456789" for p in ("d-st", "r-feat", "p-st"))
    for bucket in (own, review):
        assert allowed(policies, "s3:PutBucketPolicy", bucket)
        # Destroying the stack empties the bucket first (force_destroy), then deletes it.
        assert allowed(policies, "s3:ListBucketVersions", bucket)
        assert allowed(policies, "s3:DeleteObjectVersion", f"{bucket}/images/0a1b.png")
        assert allowed(policies, "s3:DeleteBucket", bucket)
        for action in ("s3:GetObject", "s3:GetObjectVersion", "s3:PutObject"):
            assert not allowed(policies, action, f"{bucket}/images/0a1b.png"), action
    assert not allowed(policies, "s3:PutBucketPolicy", prods)
    assert not allowed(policies, "s3:CreateBucket", "arn:aws:s3:::d-st-blog-api-state")


def test_pass_role_is_only_the_function_role_and_only_to_lambda() -> None:
    names = names_of("dev")
    policies = list(deploy_policies(names).values())
    passing = [s for p in policies for s in statements(p) if "iam:PassRole" in as_list(s["Action"])]
    (statement,) = passing
    assert statement["Resource"] == [
        f"arn:aws:iam::{ACCOUNT_ID}:role/d-st-blog-api-role",
        f"arn:aws:iam::{ACCOUNT_ID}:role/r-*-blog-api-role",
    ]
    assert statement["Condition"] == {"StringEquals": {"iam:PassedToService": "lambda.amazonaws.com"}}
    assert not allowed(policies, "iam:PassRole", f"arn:aws:iam::{ACCOUNT_ID}:role/p-st-blog-api-role")
    assert not allowed(policies, "iam:CreateRole", f"arn:aws:iam::{ACCOUNT_ID}:role/d-st-blog-api-deploy")


def test_the_deploy_role_never_uses_or_grants_a_key() -> None:
    for stack in ("dev", "prod"):
        policies = list(deploy_policies(names_of(stack)).values())
        key = f"arn:aws:kms:{REGION}:{ACCOUNT_ID}:key/11111111-2222-3333-4444-555555555555"
        for action in (
            "kms:Encrypt",
            "kms:Decrypt",
            "kms:GenerateDataKey",
            "kms:CreateGrant",
            "kms:ReEncryptTo",
        ):
            assert not allowed(policies, action, key), action


def test_dev_cannot_touch_prods_names() -> None:
    policies = list(deploy_policies(names_of("dev")).values())
    assert not allowed(
        policies, "lambda:UpdateFunctionCode", f"arn:aws:lambda:{REGION}:{ACCOUNT_ID}:function:p-st-blog-api"
    )
    assert not allowed(policies, "sqs:DeleteQueue", f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:p-st-blog-api-dlq")


# --- operator: the stack's parameters through SSM ---


def test_the_operator_writes_only_its_stacks_parameters_and_only_through_ssm() -> None:
    names = names_of("prod")
    policy = operator_policy(names)
    own = f"arn:aws:ssm:{REGION}:{ACCOUNT_ID}:parameter/p-st/blog-api/database-url"
    other = f"arn:aws:ssm:{REGION}:{ACCOUNT_ID}:parameter/d-st/blog-api/database-url"
    assert allowed([policy], "ssm:PutParameter", own)
    assert not allowed([policy], "ssm:PutParameter", other)
    (kms,) = [s for s in statements(policy) if "kms:Encrypt" in as_list(s["Action"])]
    assert kms["Condition"] == {"StringEquals": {"kms:ViaService": f"ssm.{REGION}.amazonaws.com"}}
    assert "kms:CreateGrant" not in as_list(kms["Action"])
