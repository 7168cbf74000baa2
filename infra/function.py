"""The one Lambda function (HTTP and worker paths), its role, logs, retries, dead letters and alarms."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from shared import metric_names, names

# Managed policies: CloudWatch Logs, and the ENI permissions a function in a VPC needs.
BASIC_EXECUTION_POLICY = "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
VPC_ACCESS_POLICY = "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole"

# Lambda retries a failed asynchronous event twice before it goes to the dead-letter queue.
MAXIMUM_RETRY_ATTEMPTS = 2
# How long the dead-letter queue keeps an event that exhausted its retries (SQS's maximum, 14 days).
DLQ_RETENTION_SECONDS = 14 * 24 * 3600
# The x86_64 wheels of infra.packaging are built for this architecture.
ARCHITECTURE = "x86_64"


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
    ssm_kms_key_arn: str | None = None
    alarm_actions: list[str] = field(default_factory=list)


def parameter_arn(region: str, account_id: str, name: str) -> str:
    """The ARN of an SSM parameter: a name with a leading ``/`` keeps one slash after ``parameter``."""
    return f"arn:aws:ssm:{region}:{account_id}:parameter/{name.lstrip('/')}"


def runtime_policy(
    region: str,
    account_id: str,
    physical_prefix: str,
    parameter_names: list[str],
    dlq_arn: str,
    ssm_kms_key_arn: str | None,
) -> dict[str, Any]:
    """The function's own permissions: self-invoke, its parameters, its dead-letter queue, nothing else.

    The self-invoke resource is the ARN built as a string from region, account and the fixed name.
    Taking ``function.arn`` instead would make the policy depend on the function while the function
    must depend on the policy (its first self-invoke must not fail on IAM): a cycle.
    """
    statements: list[dict[str, Any]] = [
        {
            "Sid": "SelfInvoke",
            "Effect": "Allow",
            "Action": "lambda:InvokeFunction",
            "Resource": names.function_arn(region, account_id, physical_prefix),
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
    ]
    if ssm_kms_key_arn:
        # Only a customer managed key needs this: the aws/ssm key's policy already lets the account's
        # principals decrypt through SSM. Scoped to that key, and only through SSM.
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


class Function(pulumi.ComponentResource):
    """The Lambda function ``<prefix>-blog-api`` and everything that belongs to it alone."""

    function: aws.lambda_.Function
    name: pulumi.Output[str]
    arn: pulumi.Output[str]
    invoke_arn: pulumi.Output[str]
    dead_letter_queue_arn: pulumi.Output[str]

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
            sqs_managed_sse_enabled=True,
            opts=child,
        )

        policy_document = pulumi.Output.all(args.region, args.account_id, dlq.arn).apply(
            lambda values: runtime_policy(
                values[0],
                values[1],
                prefix,
                list(args.parameter_names.values()),
                values[2],
                args.ssm_kms_key_arn,
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
            opts=child,
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
            # The first self-invoke must find the permissions already in place.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy, log_group, *attachments]),
        )

        aws.lambda_.FunctionEventInvokeConfig(
            f"{name}-async",
            function_name=self.function.name,
            maximum_retry_attempts=MAXIMUM_RETRY_ATTEMPTS,
            maximum_event_age_in_seconds=args.maximum_event_age_seconds,
            destination_config=aws.lambda_.FunctionEventInvokeConfigDestinationConfigArgs(
                on_failure=aws.lambda_.FunctionEventInvokeConfigDestinationConfigOnFailureArgs(
                    destination=dlq.arn
                )
            ),
            opts=child,
        )

        aws.cloudwatch.MetricAlarm(
            f"{name}-dlq-alarm",
            name=f"{function_name}-dlq-depth",
            alarm_description="Events that failed every retry are waiting in the dead-letter queue.",
            namespace="AWS/SQS",
            metric_name="ApproximateNumberOfMessagesVisible",
            dimensions={"QueueName": dlq.name},
            statistic="Maximum",
            period=300,
            evaluation_periods=1,
            threshold=0,
            comparison_operator="GreaterThanThreshold",
            treat_missing_data="notBreaching",
            alarm_actions=args.alarm_actions,
            opts=child,
        )
        aws.cloudwatch.MetricAlarm(
            f"{name}-errors-alarm",
            name=f"{function_name}-errors",
            alarm_description="The function raised errors (5xx from /events, crashes, time-outs).",
            namespace="AWS/Lambda",
            metric_name="Errors",
            dimensions={"FunctionName": self.function.name},
            statistic="Sum",
            period=300,
            evaluation_periods=1,
            threshold=0,
            comparison_operator="GreaterThanThreshold",
            treat_missing_data="notBreaching",
            alarm_actions=args.alarm_actions,
            opts=child,
        )
        # The worker's own metric (embedded metric format): a push that failed for good, e.g. an unknown
        # installation, answers 4xx so Lambda counts no error and nothing reaches the dead-letter queue.
        aws.cloudwatch.MetricAlarm(
            f"{name}-processing-errors-alarm",
            name=f"{function_name}-processing-errors",
            alarm_description="Pushes whose processing failed (unknown installation, GitHub or DB down).",
            namespace=metric_names.NAMESPACE,
            metric_name=metric_names.PROCESSING_ERRORS,
            dimensions={metric_names.DIMENSION_FUNCTION: self.function.name},
            statistic="Sum",
            period=300,
            evaluation_periods=1,
            threshold=0,
            comparison_operator="GreaterThanThreshold",
            treat_missing_data="notBreaching",
            alarm_actions=args.alarm_actions,
            opts=child,
        )

        self.name = self.function.name
        self.arn = self.function.arn
        self.invoke_arn = self.function.invoke_arn
        self.dead_letter_queue_arn = dlq.arn
        self.register_outputs({"name": self.name, "arn": self.arn, "deadLetterQueueArn": dlq.arn})
