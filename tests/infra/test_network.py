"""The function's way out: NAT (gateway or instance) in a new VPC, or an existing VPC used as given.

"A way out" is checked by following the records: the function's subnets → their route table → a
default route → a NAT → a public subnet → a route table whose default route is an internet gateway of
the same VPC.
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from infra.nat import nat_image_id
from infra.network import SHARED_OUTPUTS, NetworkError, shared_stack_name, subnet_blocks, usable_zones
from infra.stack_checks import instance_architecture
from tests.infra.conftest import EXISTING_GROUP, EXISTING_SUBNETS, EXISTING_VPC, REVIEW_PREFIX
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
from tests.infra.mock_run import AMI_ID, LOCAL_ZONE, ORGANIZATION, SHARED_SUBNETS, SHARED_VPC

REPO_ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("mock_run.py")


def refused_run(tmp_path: Path, stack: str, overrides: dict[str, str]) -> dict[str, Any]:
    """A run of the program that must stop with a RunError: its record (resources, error)."""
    artifact = tmp_path / "a.zip"
    artifact.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    out = tmp_path / "run.json"
    command = [sys.executable, str(RUNNER), stack, "--artifact", str(artifact), "--out", str(out)]
    for key, value in overrides.items():
        command += ["--set", f"{key}={value}"]
    result = subprocess.run(
        command, cwd=REPO_ROOT / "infra", capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 3, result.stderr
    record: dict[str, Any] = json.loads(out.read_text())
    return record


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
            interface = deployment.by_id(route["networkInterfaceId"])
            assert instance.inputs["primaryNetworkInterface"]["networkInterfaceId"] == interface.id
            nat_subnet = deployment.by_id(interface.inputs["subnetId"])
        assert nat_subnet not in subnets
        assert public_subnet_reaches_the_internet(deployment, nat_subnet)


def test_committed_stacks_choose_the_nat_their_files_name(dev: Deployment, prod: Deployment) -> None:
    assert dev.setting("natType") == "instance" and len(dev.of_type(INSTANCE)) == 1
    assert dev.of_type(NAT_GATEWAY) == []
    assert prod.setting("natType") == "gateway" and len(prod.of_type(NAT_GATEWAY)) == 1
    assert prod.of_type(INSTANCE) == []


def test_nat_instance_forwards_and_masquerades(dev: Deployment) -> None:
    instance = dev.one(INSTANCE).inputs
    interface = dev.by_id(instance["primaryNetworkInterface"]["networkInterfaceId"])
    assert interface.inputs["sourceDestCheck"] is False
    assert instance["instanceType"] == dev.setting("natInstanceType")
    assert instance["ami"] == AMI_ID
    assert instance["metadataOptions"]["httpTokens"] == "required"
    user_data = instance["userData"]
    assert "net.ipv4.ip_forward = 1" in user_data
    assert "MASQUERADE" in user_data and "iptables -F FORWARD" in user_data
    (group,) = [g for g in dev.of_type(SECURITY_GROUP) if g.name.endswith("-nat-sg")]
    assert interface.inputs["securityGroups"] == [group.id]
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


def interface_endpoints(deployment: Deployment) -> list[Resource]:
    """The interface endpoints (the images' S3 gateway endpoint is always there: test_assets.py)."""
    return [e for e in deployment.of_type(VPC_ENDPOINT) if e.inputs["vpcEndpointType"] == "Interface"]


def test_endpoints_are_off_in_dev(dev: Deployment) -> None:
    assert interface_endpoints(dev) == []


def test_endpoints_are_off_in_prod_too_because_the_nat_reaches_both_apis(prod: Deployment) -> None:
    assert prod.setting("vpcEndpoints") == "false"
    assert interface_endpoints(prod) == []
    assert not [g for g in prod.of_type(SECURITY_GROUP) if g.name.endswith("-endpoints-sg")]


def test_configured_endpoints_reach_lambda_and_ssm(deployments: dict[str, Deployment]) -> None:
    prod = deployments["prod-endpoints"]
    endpoints = {e.inputs["serviceName"]: e.inputs for e in interface_endpoints(prod)}
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


# --- the NAT instance boots with a way out, keeps its address, and is replaced on purpose ---


def test_nat_instance_waits_for_the_public_route_and_its_elastic_ip(dev: Deployment) -> None:
    instance = dev.one(INSTANCE)
    public_route = dev.named(ROUTE_TABLE_ROUTE, "-public-default")
    address = dev.one(EIP)
    interface = dev.by_id(instance.inputs["primaryNetworkInterface"]["networkInterfaceId"])
    # Direct depends_on edges, not just a chain through the subnet: the setup needs the internet.
    assert public_route.urn in instance.dependencies
    assert address.urn in instance.dependencies
    assert address.inputs["networkInterface"] == interface.id and address.inputs["domain"] == "vpc"
    assert public_route.urn in address.dependencies


def test_nat_instance_image_is_the_configured_one_and_changes_replace_it(dev: Deployment) -> None:
    instance = dev.one(INSTANCE)
    (lookup,) = [c["args"] for c in dev.invoke_args if c["token"] == "aws:ec2/getAmi:getAmi"]
    assert lookup["owners"] == ["amazon"]
    assert lookup["filters"] == [{"name": "name", "values": [dev.setting("natInstanceAmi")]}]
    assert dev.setting("natInstanceAmi").endswith("-arm64")  # t4g.nano is Graviton
    assert instance.inputs["ami"] == AMI_ID
    assert instance.inputs["userDataReplaceOnChange"] is True
    # Nothing looks up "the latest" image any more, and nothing ignores the image: the key decides.
    assert not [c for c in dev.invoke_args if c["token"] == "aws:ssm/getParameter:getParameter"
                and c["args"]["name"].startswith("/aws/service/")]  # fmt: skip
    assert instance.ignore_changes == ()
    # Its interface (and address) belong to one instance at a time: the old one goes first.
    assert instance.delete_before_replace is True


def test_nat_setup_retries_its_download_and_powers_off_when_it_fails(dev: Deployment) -> None:
    user_data = dev.one(INSTANCE).inputs["userData"]
    assert "trap" in user_data and "shutdown -h now" in user_data
    assert "for attempt in" in user_data and "dnf install -y iptables-services && break" in user_data


def test_an_ami_id_is_used_as_it_is() -> None:
    assert nat_image_id("ami-0abcdef1234567890", parent=None) == "ami-0abcdef1234567890"  # type: ignore[arg-type]


# --- zones: checked against the region first; Local Zones are not zones ---


def test_zones_are_asked_without_local_zones(deployment: Deployment) -> None:
    (call,) = [c["args"] for c in deployment.invoke_args if c["token"].endswith("getAvailabilityZones")]
    filters = {f["name"]: f["values"] for f in call["filters"]}
    assert filters == {"zone-type": ["availability-zone"], "opt-in-status": ["opt-in-not-required"]}
    zones = {s.inputs["availabilityZone"] for s in deployment.of_type(SUBNET)}
    assert LOCAL_ZONE not in zones


def test_more_zones_than_the_region_has_stop_before_any_resource(tmp_path: Path) -> None:
    record = refused_run(tmp_path, "dev", {"blog-api:availabilityZoneCount": "4"})
    assert record["resources"] == []
    assert record["error"].splitlines()[1:] == [
        "blog-api:availabilityZoneCount is 4, but ap-northeast-1 has 3 availability zones "
        "(ap-northeast-1a, ap-northeast-1c, ap-northeast-1d); fix: pulumi config set "
        "blog-api:availabilityZoneCount 3 --stack dev"
    ]


def test_usable_zones_takes_the_first_ones() -> None:
    assert usable_zones(["z-a", "z-c", "z-d"], 2, "r", "dev") == ["z-a", "z-c"]
    with pytest.raises(NetworkError, match="has 1 availability zones"):
        usable_zones(["z-a"], 2, "r", "dev")


def test_prod_uses_two_zones_behind_its_one_nat_gateway(prod: Deployment) -> None:
    assert len(prod.of_type(NAT_GATEWAY)) == 1
    assert prod.setting("availabilityZoneCount") == "2"
    assert len(function_subnets(prod)) == 2


# --- review stacks: dev's network, no VPC of their own ---


def test_a_shared_stack_uses_devs_outputs_and_builds_no_network(deployments: dict[str, Deployment]) -> None:
    review = deployments["review"]
    for created in (VPC, SUBNET, INTERNET_GATEWAY, NAT_GATEWAY, INSTANCE, EIP, ROUTE_TABLE, VPC_ENDPOINT):
        assert review.of_type(created) == [], created
    (reference,) = review.of_type("pulumi:pulumi:StackReference")
    assert reference.id == f"{ORGANIZATION}/blog-api/dev"
    vpc_config = review.function.inputs["vpcConfig"]
    assert vpc_config["subnetIds"] == list(SHARED_SUBNETS)
    (group,) = review.of_type(SECURITY_GROUP)
    assert group.inputs["vpcId"] == SHARED_VPC and vpc_config["securityGroupIds"] == [group.id]
    assert group.inputs["name"] == f"{REVIEW_PREFIX}-blog-api-function"


def test_nat_stacks_export_what_shared_stacks_read(dev: Deployment) -> None:
    assert dev.outputs["vpcId"] == dev.one(VPC).id
    assert dev.outputs["privateSubnetIds"] == dev.function.inputs["vpcConfig"]["subnetIds"]
    assert set(SHARED_OUTPUTS) <= set(dev.outputs)


def test_shared_stack_names_are_qualified_with_the_organization() -> None:
    assert shared_stack_name("acme/blog-api/dev") == "acme/blog-api/dev"
