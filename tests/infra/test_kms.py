"""prod's parameter key: created by the stack, usable only by the function role and the deploy role."""

from __future__ import annotations

import json
from typing import Any

from tests.infra.conftest import ACCOUNT_ID
from tests.infra.deployment import KMS_ALIAS, KMS_KEY, ROLE, Deployment

KEY_ARN = f"arn:aws:kms:ap-northeast-1:{ACCOUNT_ID}:key/11111111-2222-3333-4444-555555555555"
USE_ACTIONS = {"kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:ReEncrypt*", "kms:ReEncryptFrom"}


def key_policy(deployment: Deployment) -> dict[str, Any]:
    return dict(json.loads(deployment.one(KMS_KEY).inputs["policy"]))


def actions(statement: dict[str, Any]) -> set[str]:
    value = statement["Action"]
    return {value} if isinstance(value, str) else set(value)


def principals(statement: dict[str, Any]) -> set[str]:
    value = statement["Principal"]["AWS"]
    return {value} if isinstance(value, str) else set(value)


def test_dev_uses_the_aws_managed_key_and_creates_none(dev: Deployment) -> None:
    assert dev.setting("ssmKmsKey") == ""
    assert dev.of_type(KMS_KEY) == [] and dev.statements("kms:Decrypt") == []


def test_prod_creates_a_rotating_key_with_a_prefixed_alias(prod: Deployment) -> None:
    key = prod.one(KMS_KEY).inputs
    assert key["enableKeyRotation"] is True
    assert 7 <= key["deletionWindowInDays"] <= 30
    assert prod.one(KMS_ALIAS).inputs["name"] == "alias/p-st-blog-api-parameters"


def test_only_the_function_role_and_the_deploy_role_may_use_the_key(prod: Deployment) -> None:
    function_role = f"arn:aws:iam::{ACCOUNT_ID}:role/{prod.one(ROLE).inputs['name']}"
    deploy_role = f"arn:aws:iam::{ACCOUNT_ID}:role/{prod.setting('deployRoleName')}"
    users: set[str] = set()
    for statement in key_policy(prod)["Statement"]:
        assert statement["Effect"] == "Allow"
        if actions(statement) & USE_ACTIONS or any(a in ("kms:*", "*") for a in actions(statement)):
            users |= principals(statement)
            # Only through SSM, and from this account.
            condition = statement["Condition"]["StringEquals"]
            assert condition["kms:ViaService"] == "ssm.ap-northeast-1.amazonaws.com"
            assert condition["kms:CallerAccount"] == ACCOUNT_ID
    assert users == {function_role, deploy_role}


def test_function_role_may_only_decrypt(prod: Deployment) -> None:
    function_role = f"arn:aws:iam::{ACCOUNT_ID}:role/p-st-blog-api-role"
    granted = set().union(
        *(actions(s) for s in key_policy(prod)["Statement"] if function_role in principals(s))
    )
    assert granted == {"kms:Decrypt"}


def test_account_statement_administers_but_cannot_use(prod: Deployment) -> None:
    (account,) = [
        s for s in key_policy(prod)["Statement"] if principals(s) == {f"arn:aws:iam::{ACCOUNT_ID}:root"}
    ]
    assert "kms:Put*" in actions(account)
    assert not actions(account) & (USE_ACTIONS | {"kms:*", "kms:GenerateDataKey*"})


def test_function_role_decrypts_the_created_key_through_ssm_only(prod: Deployment) -> None:
    (statement,) = prod.statements("kms:Decrypt")
    assert statement["Resource"] == KEY_ARN
    assert statement["Condition"] == {"StringEquals": {"kms:ViaService": "ssm.ap-northeast-1.amazonaws.com"}}


def test_key_policy_waits_for_the_function_role(prod: Deployment) -> None:
    # KMS refuses a policy naming a principal that does not exist yet.
    assert prod.depends_on(prod.one(KMS_KEY), prod.one(ROLE))
