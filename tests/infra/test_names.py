"""The names and permissions the program gives the function are the ones ``function/`` really uses."""

from __future__ import annotations

import ast
from pathlib import Path

from shared import runtime_settings
from tests.infra.deployment import Deployment

REPO_ROOT = Path(__file__).resolve().parents[2]

# boto3 client methods the function may call → the IAM action each needs.
IAM_ACTIONS = {
    ("ssm", "get_parameter"): "ssm:GetParameter",
    ("ssm", "get_parameters"): "ssm:GetParameters",
    ("ssm", "get_parameters_by_path"): "ssm:GetParametersByPath",
    ("lambda", "invoke"): "lambda:InvokeFunction",
}


def function_modules() -> list[ast.Module]:
    return [ast.parse(path.read_text(), str(path)) for path in sorted((REPO_ROOT / "function").rglob("*.py"))]


def env_names_read_by_function() -> set[str]:
    """The variables ``function/`` reads: every declared runtime setting's, and its ``*_PARAM``'s
    (``Settings.from_env`` reads each declaration; tests/test_settings.py checks the reading)."""
    declared = runtime_settings.declared()
    return {spec.env for spec in declared} | {spec.param.env for spec in declared if spec.param}


def actions_needed_by_function() -> set[str]:
    """The IAM actions behind the boto3 calls in ``function/`` (by client service and method name)."""
    services: set[str] = set()
    methods: set[str] = set()
    for module in function_modules():
        for node in ast.walk(module):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            target = node.func.value
            # boto3.client("ssm", ...) or our wrapper aws_clients.client("lambda", ...)
            if (
                node.func.attr == "client"
                and isinstance(target, ast.Name)
                and target.id in {"boto3", "aws_clients"}
            ):
                if node.args and isinstance(node.args[0], ast.Constant):
                    services.add(str(node.args[0].value))
            else:
                methods.add(node.func.attr)
    return {
        action
        for (service, method), action in IAM_ACTIONS.items()
        if service in services and method in methods
    }


def test_every_variable_the_program_sets_is_read_by_the_function(dev: Deployment) -> None:
    read = env_names_read_by_function()
    assert set(dev.environment) <= read, set(dev.environment) - read


def test_every_parameter_variable_the_function_reads_is_set(deployment: Deployment) -> None:
    params = {name for name in env_names_read_by_function() if name.endswith("_PARAM")}
    assert params, "function/ reads no *_PARAM variable"
    # An optional secret's parameter (Cloudinary's) is named only when its stack key is set.
    unset = {
        spec.param.env
        for spec in runtime_settings.declared()
        if spec.param is not None and not deployment.setting(spec.param.stack_key)
    }
    assert params - unset <= set(deployment.environment)
    assert not unset & set(deployment.environment)


def test_role_allows_every_aws_call_the_function_makes(deployment: Deployment) -> None:
    needed = actions_needed_by_function()
    assert "lambda:InvokeFunction" in needed
    granted = {
        action
        for statement in deployment.runtime_policy["Statement"]
        for action in ([statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"])
    }
    assert needed <= granted, needed - granted
