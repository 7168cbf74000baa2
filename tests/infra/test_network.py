"""The function's way out: NAT (gateway or instance) in a new VPC, or an existing VPC used as given.

"A way out" is checked by following the records: the function's subnets → their route table → a
default route → a NAT → a public subnet → a route table whose default route is an internet gateway of
the same VPC.
"""

from __future__ import annotations

import ipaddress

import pytest

from infra.network import AL2023_AMI_PARAMETER, instance_architecture, subnet_blocks
from tests.infra.conftest import EXISTING_GROUP, EXISTING_SUBNETS, EXISTING_VPC
from tests.infra.deployment import (
    EIP,
    INSTANCE,
    INTERNET_GATEWAY,
    NAT_GATEWAY,
    ROUTE_TABLE,
    ROUTE_TABLE_ASSOCIATION,
    ROUTE_TABLE_ROUTE,
    SECURITY_GROUP,
    SUBNET,
    VPC,
    VPC_ENDPOINT,
    Deployment,
    Resource,
)
from tests.infra.mock_run import AMI_ID


def table_of(deployment: Deployment, subnet: Resource) -> Resource:
    (association,) = [
        a for a in deployment.of_type(ROUTE_TABLE_ASSOCIATION) if a.inputs["subnetId"] == subnet.id
    ]
    return deployment.by_id(association.inputs["routeTableId"])


def default_route(deployment: Deployment, table: Resource) -> dict[str, str]:
    routes = [
        r.inputs
        for r in deployment.of_type(ROUTE_TABLE_ROUTE)
        if r.inputs["routeTableId"] == table.id and r.inputs["destinationCidrBlock"] == "0.0.0.0/0"
    ]
    assert len(routes) == 1, f"route table {table.name} has {len(routes)} default routes"
    return routes[0]


def public_subnet_reaches_the_internet(deployment: Deployment, subnet: Resource) -> bool:
    route = default_route(deployment, table_of(deployment, subnet))
    gateway = deployment.by_id(route["gatewayId"])
    return gateway.type == INTERNET_GATEWAY and gateway.inputs["vpcId"] == subnet.inputs["vpcId"]


def function_subnets(deployment: Deployment) -> list[Resource]:
    return [deployment.by_id(i) for i in deployment.function.inputs["vpcConfig"]["subnetIds"]]


@pytest.mark.parametrize("scenario", ["dev", "prod", "dev-nat-gateway"])
def test_every_function_subnet_routes_to_a_nat_in_a_public_subnet(
    deployments: dict[str, Deployment], scenario: str
) -> None:
    deployment = deployments[scenario]
    subnets = function_subnets(deployment)
    assert len(subnets) == int(deployment.setting("availabilityZoneCount")) >= 2
    for subnet in subnets:
        route = default_route(deployment, table_of(deployment, subnet))
        if "natGatewayId" in route:
            nat = deployment.by_id(route["natGatewayId"])
            assert nat.type == NAT_GATEWAY and nat.inputs["connectivityType"] == "public"
            assert deployment.by_id(nat.inputs["allocationId"]).type == EIP
            nat_subnet = deployment.by_id(nat.inputs["subnetId"])
        else:
            (instance,) = deployment.of_type(INSTANCE)
            assert route["networkInterfaceId"] == "eni-0123456789abcdef0"  # the instance's, from the mock
            nat_subnet = deployment.by_id(instance.inputs["subnetId"])
        assert nat_subnet not in subnets
        assert public_subnet_reaches_the_internet(deployment, nat_subnet)


def test_committed_stacks_choose_the_nat_their_files_name(dev: Deployment, prod: Deployment) -> None:
    assert dev.setting("natType") == "instance" and len(dev.of_type(INSTANCE)) == 1
    assert dev.of_type(NAT_GATEWAY) == []
    assert prod.setting("natType") == "gateway" and len(prod.of_type(NAT_GATEWAY)) == 1
    assert prod.of_type(INSTANCE) == []


def test_nat_instance_forwards_and_masquerades(dev: Deployment) -> None:
    instance = dev.one(INSTANCE).inputs
    assert instance["sourceDestCheck"] is False
    assert instance["associatePublicIpAddress"] is True
    assert instance["instanceType"] == dev.setting("natInstanceType")
    assert instance["ami"] == AMI_ID
    assert instance["metadataOptions"]["httpTokens"] == "required"
    user_data = instance["userData"]
    assert "net.ipv4.ip_forward = 1" in user_data
    assert "MASQUERADE" in user_data and "iptables -F FORWARD" in user_data
    # The image is AL2023 for the instance type's architecture (t4g: Graviton).
    (lookup,) = [c["args"] for c in dev.invoke_args if c["args"].get("name", "").startswith("/aws/service/")]
    assert lookup["name"] == AL2023_AMI_PARAMETER.format(arch="arm64")
    (group,) = [g for g in dev.of_type(SECURITY_GROUP) if g.name.endswith("-nat-sg")]
    (ingress,) = group.inputs["ingress"]
    assert ingress["cidrBlocks"] == [dev.setting("vpcCidr")]


@pytest.mark.parametrize(
    ("instance_type", "arch"),
    [("t4g.nano", "arm64"), ("c7gn.large", "arm64"), ("m6gd.large", "arm64"), ("t3.nano", "x86_64")],
)
def test_nat_image_architecture_follows_the_instance_type(instance_type: str, arch: str) -> None:
    assert instance_architecture(instance_type) == arch


def test_subnets_split_the_vpc_block_without_overlap(deployment: Deployment) -> None:
    vpc = deployment.one(VPC)
    assert vpc.inputs["cidrBlock"] == deployment.setting("vpcCidr")
    assert vpc.inputs["enableDnsSupport"] is True and vpc.inputs["enableDnsHostnames"] is True
    subnets = deployment.of_type(SUBNET)
    blocks = [ipaddress.ip_network(s.inputs["cidrBlock"]) for s in subnets]
    assert all(b.subnet_of(ipaddress.ip_network(vpc.inputs["cidrBlock"])) for b in blocks)  # type: ignore[arg-type]
    assert not any(a.overlaps(b) for i, a in enumerate(blocks) for b in blocks[i + 1 :])
    zones = int(deployment.setting("availabilityZoneCount"))
    assert len(subnets) == 2 * zones
    private = function_subnets(deployment)
    assert len({s.inputs["availabilityZone"] for s in private}) == zones
    assert not any(s.inputs["mapPublicIpOnLaunch"] for s in subnets)


def test_subnet_blocks_for_six_zones_fit_a_slash_24() -> None:
    public, private = subnet_blocks("10.0.0.0/24", 6)
    assert public[0] == "10.0.0.0/28" and private[0] == "10.0.0.128/28"
    assert len(set(public) | set(private)) == 12


def test_function_runs_in_the_private_subnets_with_its_security_group(deployment: Deployment) -> None:
    vpc_config = deployment.function.inputs["vpcConfig"]
    (group,) = [g for g in deployment.of_type(SECURITY_GROUP) if g.name.endswith("-function-sg")]
    assert vpc_config["securityGroupIds"] == [group.id]
    assert group.inputs["vpcId"] == deployment.one(VPC).id
    assert "ingress" not in group.inputs or group.inputs["ingress"] == []
    (egress,) = group.inputs["egress"]
    assert (egress["protocol"], egress["cidrBlocks"]) == ("-1", ["0.0.0.0/0"])


def test_endpoints_are_off_in_dev(dev: Deployment) -> None:
    # Interface endpoints (the S3 gateway endpoint of the images is always there: tests/infra/test_assets.py).
    assert [e for e in dev.of_type(VPC_ENDPOINT) if e.inputs["vpcEndpointType"] == "Interface"] == []


def test_prod_reaches_lambda_and_ssm_through_interface_endpoints(prod: Deployment) -> None:
    endpoints = {
        e.inputs["serviceName"]: e.inputs
        for e in prod.of_type(VPC_ENDPOINT)
        if e.inputs["vpcEndpointType"] == "Interface"
    }
    assert set(endpoints) == {"com.amazonaws.ap-northeast-1.lambda", "com.amazonaws.ap-northeast-1.ssm"}
    endpoint_group = next(g for g in prod.of_type(SECURITY_GROUP) if g.name.endswith("-endpoints-sg"))
    function_groups = prod.function.inputs["vpcConfig"]["securityGroupIds"]
    for endpoint in endpoints.values():
        assert endpoint["vpcEndpointType"] == "Interface"
        assert endpoint["privateDnsEnabled"] is True
        assert endpoint["subnetIds"] == prod.function.inputs["vpcConfig"]["subnetIds"]
        assert endpoint["securityGroupIds"] == [endpoint_group.id]
    (rule,) = endpoint_group.inputs["ingress"]
    assert (rule["protocol"], rule["fromPort"], rule["toPort"]) == ("tcp", 443, 443)
    assert rule["securityGroups"] == function_groups


def test_existing_vpc_subnets_and_groups_are_used_as_given(deployments: dict[str, Deployment]) -> None:
    existing = deployments["dev-existing-vpc"]
    for created in (VPC, SUBNET, INTERNET_GATEWAY, NAT_GATEWAY, INSTANCE, ROUTE_TABLE, ROUTE_TABLE_ROUTE):
        assert existing.of_type(created) == [], created
    assert [g.name for g in existing.of_type(SECURITY_GROUP)] == ["d-st-network-endpoints-sg"]
    vpc_config = existing.function.inputs["vpcConfig"]
    assert vpc_config["subnetIds"] == list(EXISTING_SUBNETS)
    assert vpc_config["securityGroupIds"] == [EXISTING_GROUP]
    assert {e.inputs["vpcId"] for e in existing.of_type(VPC_ENDPOINT)} == {EXISTING_VPC}
