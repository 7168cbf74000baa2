"""Every input value the program sets is one AWS accepts (see tests/infra/allowed_values.py)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tests.infra import deployment as d
from tests.infra.allowed_values import RULES, violations
from tests.infra.deployment import Deployment


def test_every_scenario_sets_only_values_aws_accepts(deployments: dict[str, Deployment]) -> None:
    for scenario, deployment in deployments.items():
        assert violations(deployment.resources) == [], scenario


def test_the_rules_reach_the_program(deployments: dict[str, Deployment]) -> None:
    # A rule whose input never appears checks nothing: each one meets a value in some scenario.
    from tests.infra.allowed_values import values_at

    unused = [
        key
        for key in RULES
        if not any(
            list(values_at(r.inputs, key[1])) for dep in deployments.values() for r in dep.of_type(key[0])
        )
    ]
    assert unused == []


def mutated(resource: d.Resource, path: str, value: object) -> d.Resource:
    inputs = json.loads(json.dumps(resource.inputs))
    target = inputs
    *parents, leaf = path.split(".")
    for key in parents:
        target = target[key]
    target[leaf] = value
    return dataclasses.replace(resource, inputs=inputs)


@pytest.mark.parametrize(
    ("type_", "path", "value"),
    [
        (d.FUNCTION, "loggingConfig.logFormat", "text"),
        (d.FUNCTION, "runtime", "python3.9"),
        (d.FUNCTION, "architectures", ["amd64"]),
        (d.ALARM, "comparisonOperator", "GreaterThan"),
        (d.ALARM, "statistic", "sum"),
        (d.ALARM, "treatMissingData", "not-breaching"),
        (d.ALARM, "period", 90),
        (d.LOG_GROUP, "retentionInDays", 10),
        (d.INTEGRATION, "payloadFormatVersion", "2"),
        (d.SUBSCRIPTION, "protocol", "mail"),
        (d.NAT_GATEWAY, "connectivityType", "Public"),
    ],
)
def test_a_wrong_value_is_caught(
    deployments: dict[str, Deployment], type_: str, path: str, value: object
) -> None:
    resources = [r for dep in deployments.values() for r in dep.of_type(type_)]
    assert resources, type_
    assert violations([mutated(resources[0], path, value)]) == [f"{resources[0].name}: {path} = {value!r}"]
