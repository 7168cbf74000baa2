"""The blog-api stack: wires the components together and exports functionName, functionArn, apiUrl
and webhookUrl."""

from __future__ import annotations

# Pulumi runs this directory as a script (``main: infra/``); ``infra`` and ``shared`` are importable
# because the project's virtualenv has the repository installed (``pip install -e .``), not by a path hack.
import pulumi
import pulumi_aws as aws

from infra.api import Api, ApiArgs
from infra.artifact import function_code
from infra.config import StackConfig
from infra.environment import parameter_variables, plain_variables
from infra.function import Function, FunctionArgs
from infra.network import Network, NetworkArgs
from infra.schedule import Schedule, ScheduleArgs

config = StackConfig.load()
prefix = config.physical_prefix
region = aws.get_region_output().region
account_id = aws.get_caller_identity_output().account_id

network = Network(
    f"{prefix}-network",
    NetworkArgs(
        physical_prefix=prefix,
        region=region,
        vpc_cidr=config.network.vpc_cidr,
        availability_zone_count=config.network.availability_zone_count,
        vpc_endpoints=config.network.vpc_endpoints,
        existing_vpc_id=config.network.existing_vpc_id,
        existing_subnet_ids=config.network.existing_subnet_ids,
        existing_security_group_ids=config.network.existing_security_group_ids,
    ),
)

function = Function(
    f"{prefix}-app",
    FunctionArgs(
        physical_prefix=prefix,
        region=region,
        account_id=account_id,
        code=function_code(config),
        runtime=config.runtime,
        memory_size=config.memory_size,
        timeout=config.timeout,
        log_retention_days=config.log_retention_days,
        subnet_ids=network.subnet_ids,
        security_group_ids=network.security_group_ids,
        environment=plain_variables(config, region),
        parameter_names=parameter_variables(config),
        maximum_event_age_seconds=config.maximum_event_age_seconds,
        ssm_kms_key_arn=config.ssm_kms_key_arn,
        alarm_actions=list(config.alarm_actions),
    ),
)

api = Api(
    f"{prefix}-api",
    ApiArgs(
        physical_prefix=prefix,
        function_name=function.name,
        function_invoke_arn=function.invoke_arn,
        custom_domain_name=config.custom_domain_name,
        custom_domain_certificate_arn=config.custom_domain_certificate_arn,
    ),
)

if config.schedule_enabled:
    Schedule(
        f"{prefix}-schedule",
        ScheduleArgs(
            physical_prefix=prefix,
            function_name=function.name,
            function_arn=function.arn,
            schedule_expression=config.schedule_expression,
        ),
    )

pulumi.export("functionName", function.name)
pulumi.export("functionArn", function.arn)
pulumi.export("apiUrl", api.url)
pulumi.export("webhookUrl", api.webhook_url)
