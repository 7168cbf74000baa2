"""The blog-api stack: wires the components together and exports the four outputs of CONTRACT section 4."""

from __future__ import annotations

import sys
from pathlib import Path

# Pulumi runs this directory as a script (``main: infra/``), with ``infra/`` rather than the repository
# root on sys.path; the components are the package ``infra`` and import ``shared`` beside it.
_REPO_ROOT = str(Path(__file__).resolve().parent.parent)
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

import pulumi  # noqa: E402
import pulumi_aws as aws  # noqa: E402

from infra.api import Api, ApiArgs  # noqa: E402
from infra.artifact import function_code  # noqa: E402
from infra.config import StackConfig  # noqa: E402
from infra.environment import parameter_variables, plain_variables  # noqa: E402
from infra.function import Function, FunctionArgs  # noqa: E402
from infra.network import Network, NetworkArgs  # noqa: E402
from infra.schedule import Schedule, ScheduleArgs  # noqa: E402

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
        throttling_rate_limit=config.api_throttling_rate_limit,
        throttling_burst_limit=config.api_throttling_burst_limit,
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
