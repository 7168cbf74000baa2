"""The one Lambda function (HTTP and worker paths), its role, logs, retries, dead letters and parameter key.

With ``snapStart`` on, every deploy publishes a version (SnapStart snapshots published versions only) and
moves the alias ``live`` to it; the API, the schedule and the self-invoke grant then point at the alias.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from shared import names

# Managed policies: CloudWatch Logs, and the ENI permissions a function in a VPC needs.
BASIC_EXECUTION_POLICY = "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
VPC_ACCESS_POLICY = "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole"

# Lambda retries a failed asynchronous event twice before it goes to the dead-letter queue.
MAXIMUM_RETRY_ATTEMPTS = 2
# How long the dead-letter queue keeps an event that exhausted its retries (SQS's maximum, 14 days).
DLQ_RETENTION_SECONDS = 14 * 24 * 3600
# The x86_64 wheels of infra.packaging are built for this architecture.
ARCHITECTURE = "x86_64"
# SQS's largest message (1 MiB; the default is 256 KiB). Lambda's on-failure record wraps the whole
# asynchronous event, which may itself be up to 1 MiB: a smaller queue would lose a big failed delivery.
DLQ_MAX_MESSAGE_SIZE = 1_048_576


@dataclass
class FunctionArgs:
    physical_prefix: str
    region: pulumi.Input[str]
    account_id: pulumi.Input[str]
    code: pulumi.Archive
    runtime: str
    memory_size: int
    timeout: int
    log_retention_days: int
    subnet_ids: pulumi.Input[list[str]]
    security_group_ids: pulumi.Input[list[str]]
    # The function's environment apart from the *_PARAM names, which come from ``parameter_names``.
    environment: dict[str, pulumi.Input[str]]
    parameter_names: dict[str, str]
    maximum_event_age_seconds: int
    # An existing customer managed key of the parameters; or create_kms_key with deploy_role_name.
    ssm_kms_key_arn: str | None = None
    create_kms_key: bool = False
    # With create_kms_key: the role that writes the parameters' values (created by infra/bootstrap).
    operator_role_name: str | None = None
    reserved_concurrency: int | None = None
    snap_start: bool = False
    # Adopt an existing /aws/lambda/<name> log group (left behind by a previous deployment).
    import_log_group: bool = False
    # Bedrock models the function invokes for semantic search (StackConfig.bedrock_models); none: no grant.
    bedrock_models: tuple[str, ...] = ()


def parameter_arn(region: str, account_id: str, name: str) -> str:
    """The ARN of an SSM parameter: a name with a leading ``/`` keeps one slash after ``parameter``."""
    return f"arn:aws:ssm:{region}:{account_id}:parameter/{name.lstrip('/')}"


def bedrock_model_arn(region: str, model: str) -> str:
    """The ARN of a Bedrock foundation model (no account: foundation models are AWS's)."""
    return f"arn:aws:bedrock:{region}::foundation-model/{model}"


def runtime_policy(
    region: str,
    account_id: str,
    physical_prefix: str,
    parameter_names: list[str],
    dlq_arn: str,
    ssm_kms_key_arn: str | None,
    alias: str | None = None,
    bedrock_models: Sequence[str] = (),
) -> dict[str, Any]:
    """The function's own permissions: self-invoke, its parameters, its dead-letter queue, publishing to
    the stack's alarm topic (to say it disabled a webhook endpoint), nothing else.

        The self-invoke resource is the ARN built as a string from region, account and the fixed name.
        Taking ``function.arn`` instead would make the policy depend on the function while the function
        must depend on the policy (its first self-invoke must not fail on IAM): a cycle. With an alias
        (SnapStart), its ARN is granted too: the unqualified ARN covers ``$LATEST`` only.
    """
    function_arn = names.function_arn(region, account_id, physical_prefix)
    invoke_resources: str | list[str] = (
        function_arn if alias is None else [function_arn, f"{function_arn}:{alias}"]
    )
    statements: list[dict[str, Any]] = [
        {
            "Sid": "SelfInvoke",
            "Effect": "Allow",
            "Action": "lambda:InvokeFunction",
            "Resource": invoke_resources,
        },
        {
            # function/settings.py reads its three parameters in one batched GetParameters call;
            # GetParameter covers a single read of the same names.
            "Sid": "ReadOwnParameters",
            "Effect": "Allow",
            "Action": ["ssm:GetParameter", "ssm:GetParameters"],
            "Resource": sorted(parameter_arn(region, account_id, name) for name in parameter_names),
        },
        {
            # Lambda sends events that exhausted their retries with the function's role.
            "Sid": "DeadLetters",
            "Effect": "Allow",
            "Action": "sqs:SendMessage",
            "Resource": dlq_arn,
        },
        {
            # The outgoing webhooks tell a person when they disable an endpoint that failed for days,
            # through the topic every alarm notifies. Built as a string, like the self-invoke's ARN:
            # the topic is created after the function.
            "Sid": "TellAlarmTopic",
            "Effect": "Allow",
            "Action": "sns:Publish",
            "Resource": names.alarm_topic_arn(region, account_id, physical_prefix),
        },
    ]
    if bedrock_models:
        # Semantic search on Bedrock: its embedding model only, in the function's region.
        statements.append(
            {
                "Sid": "InvokeEmbeddingModel",
                "Effect": "Allow",
                "Action": "bedrock:InvokeModel",
                "Resource": sorted(bedrock_model_arn(region, model) for model in bedrock_models),
            }
        )
    if ssm_kms_key_arn:
        # Only a customer managed key needs this: the aws/ssm key's policy already lets every principal
        # of the account decrypt through SSM. Scoped to that key, and only through SSM.
        statements.append(
            {
                "Sid": "DecryptParameters",
                "Effect": "Allow",
                "Action": "kms:Decrypt",
                "Resource": ssm_kms_key_arn,
                "Condition": {"StringEquals": {"kms:ViaService": f"ssm.{region}.amazonaws.com"}},
            }
        )
    return {"Version": "2012-10-17", "Statement": statements}


# What a key's administrators may do: everything but use it, named one by one. No wildcard: ``kms:Create*``
# would include ``kms:CreateGrant``, with which an administrator could grant themselves Decrypt without
# touching the key policy. Changing the policy itself (PutKeyPolicy) stays possible, or nobody could ever
# fix it; that is one visible, audited call which the next ``pulumi up`` reverts.
KEY_ADMIN_ACTIONS = [
    "kms:CreateAlias", "kms:UpdateAlias", "kms:DeleteAlias", "kms:DescribeKey", "kms:GetKeyPolicy",
    "kms:GetKeyRotationStatus", "kms:PutKeyPolicy", "kms:ListAliases", "kms:ListGrants",
    "kms:ListKeyPolicies", "kms:ListResourceTags", "kms:EnableKey", "kms:DisableKey",
    "kms:EnableKeyRotation", "kms:DisableKeyRotation", "kms:UpdateKeyDescription", "kms:RevokeGrant",
    "kms:TagResource", "kms:UntagResource", "kms:ScheduleKeyDeletion", "kms:CancelKeyDeletion",
]  # fmt: skip


def parameter_key_policy(
    region: str, account_id: str, function_role_arn: str, operator_role_arn: str
) -> dict[str, Any]:
    """The key policy of the stack's parameter key: only the function role and the operator role use it.

    No IAM policy alone lets another principal decrypt: the key policy names no one else for a use
    action, and the account statement (which makes IAM policies count) allows administration only, with
    no grant creation. What remains possible is an administrator rewriting this key policy first
    (``kms:PutKeyPolicy``): a logged change that ``pulumi up`` reverts.
    """
    via_ssm = {
        "StringEquals": {"kms:ViaService": f"ssm.{region}.amazonaws.com", "kms:CallerAccount": account_id}
    }
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AdministerNotUse",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{account_id}:root"},
                "Action": KEY_ADMIN_ACTIONS,
                "Resource": "*",
            },
            {
                "Sid": "FunctionReadsParameters",
                "Effect": "Allow",
                "Principal": {"AWS": function_role_arn},
                "Action": "kms:Decrypt",
                "Resource": "*",
                "Condition": via_ssm,
            },
            {
                # Whoever writes the parameter values (put-parameter --key-id) does it as this role,
                # which infra/bootstrap creates; the deploy role never needs the values.
                "Sid": "OperatorWritesParameters",
                "Effect": "Allow",
                "Principal": {"AWS": operator_role_arn},
                "Action": ["kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey", "kms:DescribeKey"],
                "Resource": "*",
                "Condition": via_ssm,
            },
        ],
    }


class Function(pulumi.ComponentResource):
    """The Lambda function ``<prefix>-blog-api`` and everything that belongs to it alone."""

    function: aws.lambda_.Function
    name: pulumi.Output[str]
    arn: pulumi.Output[str]
    # What the API and the schedule invoke: the function, or its ``live`` alias with SnapStart.
    target_arn: pulumi.Output[str]
    invoke_arn: pulumi.Output[str]
    qualifier: str | None
    dead_letter_queue_arn: pulumi.Output[str]
    dead_letter_queue_name: pulumi.Output[str]
    parameter_key_arn: pulumi.Output[str] | None

    def __init__(self, name: str, args: FunctionArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("blog-api:infra:Function", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        prefix = args.physical_prefix
        function_name = names.function_name(prefix)

        role = aws.iam.Role(
            f"{name}-role",
            name=f"{function_name}-role",
            assume_role_policy=pulumi.Output.json_dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "lambda.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                        }
                    ],
                }
            ),
            opts=child,
        )
        attachments = [
            aws.iam.RolePolicyAttachment(f"{name}-{label}", role=role.name, policy_arn=arn, opts=child)
            for label, arn in (("basic-execution", BASIC_EXECUTION_POLICY), ("vpc-access", VPC_ACCESS_POLICY))
        ]

        dlq = aws.sqs.Queue(
            f"{name}-dlq",
            name=f"{function_name}-dlq",
            message_retention_seconds=DLQ_RETENTION_SECONDS,
            max_message_size=DLQ_MAX_MESSAGE_SIZE,
            sqs_managed_sse_enabled=True,
            opts=child,
        )

        self.qualifier = names.LIVE_ALIAS if args.snap_start else None
        key_arn: pulumi.Input[str] | None = args.ssm_kms_key_arn
        self.parameter_key_arn = None
        if args.create_kms_key:
            if not args.operator_role_name:
                raise ValueError("create_kms_key needs operator_role_name")
            key = self._parameter_key(name, args, function_name, role)
            key_arn = self.parameter_key_arn = key.arn

        policy_document = pulumi.Output.all(args.region, args.account_id, dlq.arn, key_arn).apply(
            lambda values: runtime_policy(
                values[0],
                values[1],
                prefix,
                list(args.parameter_names.values()),
                values[2],
                values[3],
                alias=self.qualifier,
                bedrock_models=args.bedrock_models,
            )
        )
        policy = aws.iam.RolePolicy(
            f"{name}-runtime-policy",
            name=f"{function_name}-runtime",
            role=role.id,
            policy=pulumi.Output.json_dumps(policy_document),
            opts=child,
        )

        # Created here rather than by Lambda on first log line, so it has a retention and is deleted
        # with the stack.
        log_group = aws.cloudwatch.LogGroup(
            f"{name}-logs",
            name=f"/aws/lambda/{function_name}",
            retention_in_days=args.log_retention_days,
            # Adopting needs the retention above to equal the group's current one (Pulumi refuses an
            # import whose inputs differ); see docs/deploying.md, "Moving from the CDK stack".
            opts=pulumi.ResourceOptions(
                parent=self, import_=f"/aws/lambda/{function_name}" if args.import_log_group else None
            ),
        )

        environment: dict[str, pulumi.Input[str]] = {**args.environment, **args.parameter_names}
        self.function = aws.lambda_.Function(
            f"{name}-function",
            name=function_name,
            role=role.arn,
            runtime=args.runtime,
            architectures=[ARCHITECTURE],
            handler=names.HANDLER,
            code=args.code,
            memory_size=args.memory_size,
            timeout=args.timeout,
            vpc_config=aws.lambda_.FunctionVpcConfigArgs(
                subnet_ids=args.subnet_ids, security_group_ids=args.security_group_ids
            ),
            environment=aws.lambda_.FunctionEnvironmentArgs(variables=environment),
            logging_config=aws.lambda_.FunctionLoggingConfigArgs(
                # The function writes one JSON object per line itself.
                log_format="Text",
                log_group=log_group.name,
            ),
            # -1: no reservation (the account's unreserved pool).
            reserved_concurrent_executions=(
                args.reserved_concurrency if args.reserved_concurrency is not None else -1
            ),
            # SnapStart snapshots published versions only, so each code or configuration change
            # publishes one; $LATEST keeps working without a snapshot.
            publish=args.snap_start,
            snap_start=(
                aws.lambda_.FunctionSnapStartArgs(apply_on="PublishedVersions") if args.snap_start else None
            ),
            # The first self-invoke must find the permissions already in place.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy, log_group, *attachments]),
        )

        self.target_arn = self.function.arn
        self.invoke_arn = self.function.invoke_arn
        alias = None
        if self.qualifier is not None:
            alias = aws.lambda_.Alias(
                f"{name}-live",
                name=self.qualifier,
                description="The published version with a SnapStart snapshot that serves traffic",
                function_name=self.function.name,
                function_version=self.function.version,
                opts=child,
            )
            self.target_arn = alias.arn
            self.invoke_arn = alias.invoke_arn

        # Retries and the dead-letter queue for asynchronous events: Lambda applies the configuration of
        # the qualifier invoked, so the alias gets the same one as the unqualified function.
        targets: list[tuple[str, str | None, list[pulumi.Resource]]] = [("async", None, [])]
        if alias is not None:
            targets.append(("async-live", self.qualifier, [alias]))
        for suffix, qualifier, depends_on in targets:
            aws.lambda_.FunctionEventInvokeConfig(
                f"{name}-{suffix}",
                function_name=self.function.name,
                qualifier=qualifier,
                maximum_retry_attempts=MAXIMUM_RETRY_ATTEMPTS,
                maximum_event_age_in_seconds=args.maximum_event_age_seconds,
                destination_config=aws.lambda_.FunctionEventInvokeConfigDestinationConfigArgs(
                    on_failure=aws.lambda_.FunctionEventInvokeConfigDestinationConfigOnFailureArgs(
                        destination=dlq.arn
                    )
                ),
                opts=pulumi.ResourceOptions(parent=self, depends_on=depends_on),
            )

        self.name = self.function.name
        self.arn = self.function.arn
        self.dead_letter_queue_arn = dlq.arn
        self.dead_letter_queue_name = dlq.name
        self.register_outputs(
            {"name": self.name, "arn": self.arn, "targetArn": self.target_arn, "deadLetterQueueArn": dlq.arn}
        )

    def _parameter_key(
        self, name: str, args: FunctionArgs, function_name: str, role: aws.iam.Role
    ) -> aws.kms.Key:
        operator_role_arn = pulumi.Output.concat(
            "arn:aws:iam::", args.account_id, ":role/", args.operator_role_name or ""
        )
        key_policy = pulumi.Output.all(args.region, args.account_id, role.arn, operator_role_arn).apply(
            lambda values: parameter_key_policy(values[0], values[1], values[2], values[3])
        )
        key = aws.kms.Key(
            f"{name}-parameters-key",
            description=f"{function_name}: the SSM SecureString parameters",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            policy=pulumi.Output.json_dumps(key_policy),
            tags={"Name": f"{function_name}-parameters"},
            opts=pulumi.ResourceOptions(parent=self),
        )
        aws.kms.Alias(
            f"{name}-parameters-key-alias",
            name=f"alias/{function_name}-parameters",
            target_key_id=key.key_id,
            opts=pulumi.ResourceOptions(parent=self),
        )
        return key
