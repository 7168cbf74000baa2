"""The function's environment variables, derived from the runtime settings' declarations
(``shared.runtime_settings``): a setting with a ``stack_key`` is set from that key, one with an
``on_lambda`` value always to that value, and the ``*_PARAM`` variables from their parameters' keys."""

from __future__ import annotations

from typing import Any

import pulumi

from infra.config import StackConfig
from infra.network import endpoint_hosts
from shared import names
from shared.runtime_settings import RuntimeSettings, variable
from shared.setting import settings_of


def parameter_variables(config: StackConfig, declarations: type[Any] = RuntimeSettings) -> dict[str, str]:
    """``*_PARAM`` variable → SSM parameter name: the function reads its secrets from these. An
    optional parameter whose key is empty (no Cloudinary) is left out, and so out of the role's policy."""
    params = [spec.param for spec in settings_of(declarations) if spec.param is not None]
    named = {param.env: config.value_of(param.stack_key) for param in params}
    return {variable: name for variable, name in named.items() if name}


def plain_variables(
    config: StackConfig,
    region: pulumi.Input[str],
    github_app_id: pulumi.Input[str],
    account_id: pulumi.Input[str],
    declarations: type[Any] = RuntimeSettings,
) -> dict[str, pulumi.Input[str]]:
    """Every other variable the function reads on Lambda; none of them is a secret.

    ``github_app_id`` is the configured id, or the value of ``githubAppIdParam`` read at deploy time.
    ``account_id`` (with ``region``) names the alarm topic the webhooks tell of a disabled endpoint.
    ``declarations``: the runtime settings' class (another one in tests).

    ``AWS_LAMBDA_FUNCTION_NAME`` is not here: Lambda sets it, and its presence is what switches the
    app into accept-and-invoke mode.
    """
    # Worked out by the program from their keys rather than copied (None: not set).
    computed: dict[str, pulumi.Input[str] | None] = {
        variable("github_app_id"): github_app_id,
        # The worker runs from the snapshot too: the self-invoke targets the alias, not $LATEST.
        variable("self_invoke_qualifier"): names.LIVE_ALIAS if config.snap_start else None,
        variable("no_proxy"): _no_proxy(config, region),
        # The topic is named after the prefix; its ARN is built as a string, as the policy's is.
        variable("alarm_topic_arn"): pulumi.Output.all(region, account_id).apply(
            lambda values: names.alarm_topic_arn(str(values[0]), str(values[1]), config.physical_prefix)
        ),
    }
    variables: dict[str, pulumi.Input[str]] = {}
    for spec in settings_of(declarations):
        value: pulumi.Input[str] | None
        if spec.on_lambda is not None:
            value = spec.on_lambda
        elif spec.stack_key is None:
            continue
        elif spec.env in computed:
            value = computed[spec.env]
        else:
            value = config.value_of(spec.stack_key)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{spec.env}: blog-api:{spec.stack_key} is not text; compute it above")
        if value is not None:
            variables[spec.env] = value
    return variables


def _no_proxy(config: StackConfig, region: pulumi.Input[str]) -> pulumi.Output[str] | None:
    # With interface endpoints, Lambda and SSM are reached inside the VPC: keep them off the proxy
    # so the self-invoke keeps working when the proxy does not.
    if not config.no_proxy and not config.network.vpc_endpoints:
        return None
    return pulumi.Output.from_input(region).apply(
        lambda r: ",".join(
            dict.fromkeys([*config.no_proxy, *(endpoint_hosts(r) if config.network.vpc_endpoints else [])])
        )
    )
