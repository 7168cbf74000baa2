"""The blog-api stack: wires the components together and exports functionName, functionArn, apiUrl,
webhookUrl, assetDomain, and the network's vpcId and privateSubnetIds (which ``shared`` stacks read)."""

from __future__ import annotations

# Pulumi runs this directory as a script (``main: infra/``); ``infra`` and ``shared`` are importable
# because the project's virtualenv has the repository installed (``pip install -e .``), not by a path hack.
import pulumi
import pulumi_aws as aws

from infra.alarms import Alarms, AlarmsArgs
from infra.api import Api, ApiArgs
from infra.artifact import function_code
from infra.assets import Assets, AssetsArgs
from infra.config import ConfigError, StackConfig
from infra.environment import parameter_variables, plain_variables
from infra.function import Function, FunctionArgs
from infra.network import Network, NetworkArgs, NetworkError, region_zones, usable_zones
from infra.schedule import Schedule, ScheduleArgs
from shared import names

# Everything that can refuse the stack runs before the first resource is registered: a bad value never
# leaves half a stack behind. RunError prints its message without a traceback.
try:
    config = StackConfig.load()
    # The region's zones are read first too: too few is a clear error here, not an IndexError later.
    zones: tuple[str, ...] = ()
    if config.network.mode == "nat":
        zones = tuple(
            usable_zones(
                region_zones(),
                config.network.availability_zone_count,
                aws.get_region().region,
                pulumi.get_stack(),
            )
        )
    code = function_code(config)
except (ConfigError, NetworkError) as exc:
    raise pulumi.RunError(f"the stack's configuration is not deployable:\n{exc}") from None

prefix = config.physical_prefix
region = aws.get_region_output().region
account_id = aws.get_caller_identity_output().account_id
# The App id is not a secret, but only its owner knows it: read from SSM at deploy time unless set.
github_app_id: pulumi.Input[str] = (
    config.github_app_id
    if config.github_app_id is not None
    else aws.ssm.get_parameter_output(name=config.github_app_id_param or "").insecure_value
)

network = Network(
    f"{prefix}-network",
    NetworkArgs(
        physical_prefix=prefix,
        region=region,
        mode=config.network.mode,
        nat_type=config.network.nat_type,
        nat_instance_type=config.network.nat_instance_type,
        vpc_cidr=config.network.vpc_cidr,
        availability_zone_count=config.network.availability_zone_count,
        zones=zones,
        vpc_endpoints=config.network.vpc_endpoints,
        nat_instance_image=config.network.nat_instance_image,
        shared_stack=config.network.shared_stack,
        existing_vpc_id=config.network.existing_vpc_id,
        existing_subnet_ids=config.network.existing_subnet_ids,
        existing_security_group_ids=config.network.existing_security_group_ids,
    ),
)

# The images' bucket and distribution come before the function, whose environment names them.
assets = Assets(
    f"{prefix}-assets",
    AssetsArgs(
        physical_prefix=prefix,
        region=region,
        vpc_id=network.vpc_id,
        # Only a VPC of this stack's own has route tables the program may add the S3 endpoint to.
        route_table_ids=network.private_route_table_ids if config.network.mode == "nat" else None,
    ),
)

function = Function(
    f"{prefix}-app",
    FunctionArgs(
        physical_prefix=prefix,
        region=region,
        account_id=account_id,
        code=code,
        runtime=config.runtime,
        memory_size=config.memory_size,
        timeout=config.timeout,
        log_retention_days=config.log_retention_days,
        subnet_ids=network.subnet_ids,
        security_group_ids=network.security_group_ids,
        environment={**plain_variables(config, region, github_app_id, account_id), **assets.environment()},
        parameter_names=parameter_variables(config),
        bedrock_models=config.bedrock_models,
        maximum_event_age_seconds=config.maximum_event_age_seconds,
        ssm_kms_key_arn=config.ssm_kms_key_arn,
        create_kms_key=config.creates_kms_key,
        operator_role_name=config.operator_role_name,
        reserved_concurrency=config.reserved_concurrency,
        snap_start=config.snap_start,
        import_log_group=config.log_group_import,
    ),
)

# The role is named after the function; the policy waits for the function's resources (its role).
assets.grant(f"{names.function_name(prefix)}-role", pulumi.ResourceOptions(depends_on=[function]))

api = Api(
    f"{prefix}-api",
    ApiArgs(
        physical_prefix=prefix,
        function_name=function.name,
        function_invoke_arn=function.invoke_arn,
        function_qualifier=function.qualifier,
        access_log_retention_days=config.api_access_log_retention_days,
        custom_domain_name=config.custom_domain_name,
        custom_domain_certificate_arn=config.custom_domain_certificate_arn,
        throttling_rate_limit=config.api_throttling_rate_limit,
        throttling_burst_limit=config.api_throttling_burst_limit,
    ),
)

Alarms(
    f"{prefix}-alarms",
    AlarmsArgs(
        physical_prefix=prefix,
        stack=pulumi.get_stack(),
        emails=config.alarm_emails,
        function_name=function.name,
        dead_letter_queue_name=function.dead_letter_queue_name,
        api_id=api.api_id,
        api_stage=api.stage_name,
        nat_instance_id=network.nat_instance_id,
    ),
)

if config.schedule_enabled:
    Schedule(
        f"{prefix}-schedule",
        ScheduleArgs(
            physical_prefix=prefix,
            function_name=function.name,
            function_arn=function.target_arn,
            function_qualifier=function.qualifier,
            schedule_expression=config.schedule_expression,
        ),
    )

pulumi.export("functionName", function.name)
pulumi.export("functionArn", function.arn)
pulumi.export("apiUrl", api.url)
pulumi.export("webhookUrl", api.webhook_url)
pulumi.export("assetDomain", assets.domain_name)
# For the stacks that share this network (networkMode shared: review stacks use dev's).
pulumi.export("vpcId", network.vpc_id)
pulumi.export("privateSubnetIds", network.subnet_ids)
