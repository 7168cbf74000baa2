"""prod's parameter key: created by the stack, usable only by the function role and the operator role."""

from __future__ import annotations

import fnmatch
import json
from typing import Any

import pytest

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


# Every KMS action that uses a key's material, or hands that use to someone (a grant).
USE_OR_GRANT = sorted(
    USE_ACTIONS
    | {"kms:ReEncryptTo", "kms:GenerateDataKeyWithoutPlaintext", "kms:GenerateDataKeyPair"}
    | {"kms:CreateGrant", "kms:RetireGrant"}
)


def allows(statement: dict[str, Any], action: str) -> bool:
    """The statement's actions (wildcards as IAM reads them) cover ``action``."""
    return any(fnmatch.fnmatchcase(action.lower(), pattern.lower()) for pattern in actions(statement))


@pytest.mark.parametrize("scenario", ["prod", "dev-kms"])
def test_only_the_function_role_and_the_operator_role_may_use_the_key(
    deployments: dict[str, Deployment], scenario: str
) -> None:
    prod = deployments[scenario]
    function_role = f"arn:aws:iam::{ACCOUNT_ID}:role/{prod.one(ROLE).inputs['name']}"
    deploy_role = f"arn:aws:iam::{ACCOUNT_ID}:role/{prod.setting('operatorRoleName')}"
    assert deploy_role.endswith(f"role/{prod.prefix}-blog-api-operator")
    users: set[str] = set()
    for statement in key_policy(prod)["Statement"]:
        assert statement["Effect"] == "Allow"
        if any(allows(statement, action) for action in USE_OR_GRANT):
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
    # Administration, the policy included (or nobody could ever fix it)...
    assert {"kms:PutKeyPolicy", "kms:ScheduleKeyDeletion", "kms:EnableKeyRotation"} <= actions(account)
    # ...but no use of the key, and no grant: a grant would let an administrator decrypt without touching
    # the key policy. Wildcards are read as IAM reads them (kms:Create* would include kms:CreateGrant).
    assert [a for a in USE_OR_GRANT if allows(account, a)] == []
    assert not any("*" in action for action in actions(account))


def test_function_role_decrypts_the_created_key_through_ssm_only(prod: Deployment) -> None:
    (statement,) = prod.statements("kms:Decrypt")
    assert statement["Resource"] == KEY_ARN
    assert statement["Condition"] == {"StringEquals": {"kms:ViaService": "ssm.ap-northeast-1.amazonaws.com"}}


def test_key_policy_waits_for_the_function_role(prod: Deployment) -> None:
    # KMS refuses a policy naming a principal that does not exist yet.
    assert prod.depends_on(prod.one(KMS_KEY), prod.one(ROLE))


def test_dev_may_use_a_key_of_its_own_like_prod(deployments: dict[str, Deployment]) -> None:
    dev_kms = deployments["dev-kms"]
    assert dev_kms.one(KMS_ALIAS).inputs["name"] == "alias/d-st-blog-api-parameters"
    (statement,) = dev_kms.statements("kms:Decrypt")
    assert statement["Resource"] == KEY_ARN
