"""The function's environment variables, named by ``shared.names``, the module ``function/`` reads them by."""

from __future__ import annotations

import pulumi

from infra.config import StackConfig
from infra.network import endpoint_hosts
from shared import names


def parameter_variables(config: StackConfig) -> dict[str, str]:
    """``*_PARAM`` variable → SSM parameter name: the function reads its secrets from these."""
    return {
        names.ENV_WEBHOOK_SECRET_PARAM: config.webhook_secret_param,
        names.ENV_GITHUB_APP_PRIVATE_KEY_PARAM: config.github_app_private_key_param,
        names.ENV_DATABASE_URL_PARAM: config.database_url_param,
    }


def plain_variables(
    config: StackConfig,
    region: pulumi.Input[str],
    github_app_id: pulumi.Input[str],
    account_id: pulumi.Input[str],
) -> dict[str, pulumi.Input[str]]:
    """Every other variable the function reads on Lambda; none of them is a secret.

    ``github_app_id`` is the configured id, or the value of ``githubAppIdParam`` read at deploy time.
    ``account_id`` (with ``region``) names the alarm topic the webhooks tell of a disabled endpoint.

    ``AWS_LAMBDA_FUNCTION_NAME`` is not here: Lambda sets it, and its presence is what switches the
    app into accept-and-invoke mode.
    """
    variables: dict[str, pulumi.Input[str]] = {
        names.ENV_PASS_THROUGH_PATH: names.DEFAULT_PASS_THROUGH_PATH,
        names.ENV_GITHUB_APP_ID: github_app_id,
        names.ENV_GITHUB_API_URL: config.github_api_url,
        names.ENV_ARTICLE_SOURCE: names.DEFAULT_ARTICLE_SOURCE,
        names.ENV_ARTICLES_DIR: config.articles_dir,
        names.ENV_LOG_LEVEL: config.log_level,
    }
    variables[names.ENV_ALARM_TOPIC_ARN] = pulumi.Output.all(region, account_id).apply(
        lambda values: names.alarm_topic_arn(str(values[0]), str(values[1]), config.physical_prefix)
    )
    if config.snap_start:
        # The worker runs from the snapshot too: the self-invoke targets the alias, not $LATEST.
        variables[names.ENV_SELF_INVOKE_QUALIFIER] = names.LIVE_ALIAS
    if config.article_branch:
        variables[names.ENV_ARTICLE_BRANCH] = config.article_branch
    if config.https_proxy:
        variables[names.ENV_HTTPS_PROXY] = config.https_proxy
    no_proxy = _no_proxy(config, region)
    if no_proxy is not None:
        variables[names.ENV_NO_PROXY] = no_proxy
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
