"""What one mocked run of the Pulumi program registered, with small helpers to query it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FUNCTION = "aws:lambda/function:Function"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
ROLE = "aws:iam/role:Role"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
QUEUE = "aws:sqs/queue:Queue"
LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"
ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
INVOKE_CONFIG = "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig"
PERMISSION = "aws:lambda/permission:Permission"
HTTP_API = "aws:apigatewayv2/api:Api"
INTEGRATION = "aws:apigatewayv2/integration:Integration"
ROUTE = "aws:apigatewayv2/route:Route"
STAGE = "aws:apigatewayv2/stage:Stage"
DOMAIN = "aws:apigatewayv2/domainName:DomainName"
API_MAPPING = "aws:apigatewayv2/apiMapping:ApiMapping"
VPC = "aws:ec2/vpc:Vpc"
SUBNET = "aws:ec2/subnet:Subnet"
SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
VPC_ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
EVENT_RULE = "aws:cloudwatch/eventRule:EventRule"
EVENT_TARGET = "aws:cloudwatch/eventTarget:EventTarget"
INTERNET_GATEWAY = "aws:ec2/internetGateway:InternetGateway"
NAT_GATEWAY = "aws:ec2/natGateway:NatGateway"
EIP = "aws:ec2/eip:Eip"
INSTANCE = "aws:ec2/instance:Instance"
ROUTE_TABLE = "aws:ec2/routeTable:RouteTable"
ROUTE_TABLE_ROUTE = "aws:ec2/route:Route"
ROUTE_TABLE_ASSOCIATION = "aws:ec2/routeTableAssociation:RouteTableAssociation"
TOPIC = "aws:sns/topic:Topic"
SUBSCRIPTION = "aws:sns/topicSubscription:TopicSubscription"
KMS_KEY = "aws:kms/key:Key"
KMS_ALIAS = "aws:kms/alias:Alias"
ALIAS = "aws:lambda/alias:Alias"


@dataclass(frozen=True)
class Resource:
    urn: str
    type: str
    name: str
    id: str
    parent: str
    custom: bool
    inputs: dict[str, Any]
    dependencies: tuple[str, ...]
    property_dependencies: dict[str, list[str]]
    import_id: str
    ignore_changes: tuple[str, ...] = ()
    delete_before_replace: bool = False


@dataclass(frozen=True)
class Deployment:
    stack: str
    config: dict[str, str]
    outputs: dict[str, Any]
    resources: tuple[Resource, ...]
    invokes: tuple[str, ...]
    invoke_args: tuple[dict[str, Any], ...]
    warnings: tuple[str, ...]
    packaging_loaded: bool

    @classmethod
    def load(cls, path: Path) -> Deployment:
        record = json.loads(path.read_text())
        resources = tuple(
            Resource(
                urn=r["urn"],
                type=r["type"],
                name=r["name"],
                id=r["id"],
                parent=r["parent"],
                custom=r["custom"],
                inputs=r["inputs"],
                dependencies=tuple(r["dependencies"]),
                property_dependencies=r["propertyDependencies"],
                import_id=r["importId"],
                ignore_changes=tuple(r["ignoreChanges"]),
                delete_before_replace=r["deleteBeforeReplace"],
            )
            for r in record["resources"]
        )
        return cls(
            stack=record["stack"],
            config=record["config"],
            outputs=record["outputs"],
            resources=resources,
            invokes=tuple(record["invokes"]),
            invoke_args=tuple(record["invokeArgs"]),
            warnings=tuple(record["warnings"]),
            packaging_loaded=record["packagingLoaded"],
        )

    def setting(self, key: str) -> str:
        """A ``blog-api:`` config value as the program saw it."""
        return self.config[f"blog-api:{key}"]

    @property
    def prefix(self) -> str:
        return self.setting("physicalPrefix")

    @property
    def region(self) -> str:
        return self.config["aws:region"]

    def of_type(self, type_: str) -> list[Resource]:
        return [r for r in self.resources if r.type == type_]

    def one(self, type_: str) -> Resource:
        found = self.of_type(type_)
        assert len(found) == 1, f"expected one {type_}, found {[r.name for r in found]}"
        return found[0]

    def named(self, type_: str, suffix: str) -> Resource:
        """The one resource of ``type_`` whose logical name ends with ``suffix``."""
        found = [r for r in self.of_type(type_) if r.name.endswith(suffix)]
        assert len(found) == 1, f"expected one {type_} named *{suffix}, found {[r.name for r in found]}"
        return found[0]

    def by_id(self, resource_id: str) -> Resource:
        return next(r for r in self.resources if r.id == resource_id)

    def by_urn(self, urn: str) -> Resource:
        return next(r for r in self.resources if r.urn == urn)

    def depends_on(self, resource: Resource, other: Resource) -> bool:
        """True when ``resource`` waits for ``other``, directly or through any chain of dependencies."""
        seen: set[str] = set()
        pending = [resource.urn]
        while pending:
            current = self.by_urn(pending.pop())
            edges = set(current.dependencies)
            for urns in current.property_dependencies.values():
                edges.update(urns)
            for urn in edges - seen:
                if urn == other.urn:
                    return True
                seen.add(urn)
                pending.append(urn)
        return False

    @property
    def function(self) -> Resource:
        return self.one(FUNCTION)

    @property
    def environment(self) -> dict[str, str]:
        return dict(self.function.inputs["environment"]["variables"])

    @property
    def runtime_policy(self) -> dict[str, Any]:
        return dict(json.loads(self.named(ROLE_POLICY, "-runtime-policy").inputs["policy"]))

    def statements(self, action: str) -> list[dict[str, Any]]:
        """The policy statements that allow ``action``."""
        return [s for s in self.runtime_policy["Statement"] if action in _as_list(s["Action"])]


def _as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def resources_of(statement: dict[str, Any]) -> list[str]:
    return _as_list(statement["Resource"])
