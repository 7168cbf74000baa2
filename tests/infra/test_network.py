"""Where the function runs: private subnets in two or more AZs, no NAT, security groups, endpoints."""

from __future__ import annotations

from tests.infra.deployment import SECURITY_GROUP, SUBNET, VPC, VPC_ENDPOINT, Deployment


def test_created_vpc_has_private_subnets_in_distinct_zones(deployment: Deployment) -> None:
    vpc = deployment.one(VPC)
    subnets = deployment.of_type(SUBNET)
    assert len(subnets) == int(deployment.setting("availabilityZoneCount")) >= 2
    assert len({s.inputs["availabilityZone"] for s in subnets}) == len(subnets)
    assert all(s.inputs["vpcId"] == vpc.id and not s.inputs["mapPublicIpOnLaunch"] for s in subnets)
    assert vpc.inputs["cidrBlock"] == deployment.setting("vpcCidr")


def test_nothing_routes_to_the_internet(deployment: Deployment) -> None:
    types = {r.type for r in deployment.resources}
    for forbidden in ("NatGateway", "InternetGateway", "Eip", "Route:", "EgressOnlyInternetGateway"):
        assert not any(forbidden in t for t in types), forbidden


def test_function_runs_in_the_private_subnets_with_its_security_group(deployment: Deployment) -> None:
    vpc_config = deployment.function.inputs["vpcConfig"]
    assert sorted(vpc_config["subnetIds"]) == sorted(s.id for s in deployment.of_type(SUBNET))
    groups = [g for g in deployment.of_type(SECURITY_GROUP) if g.name.endswith("-function-sg")]
    assert vpc_config["securityGroupIds"] == [groups[0].id]
    assert groups[0].inputs["vpcId"] == deployment.one(VPC).id


def test_endpoints_are_off_in_dev(dev: Deployment) -> None:
    assert dev.of_type(VPC_ENDPOINT) == []


def test_prod_reaches_lambda_and_ssm_through_interface_endpoints(prod: Deployment) -> None:
    endpoints = {e.inputs["serviceName"]: e.inputs for e in prod.of_type(VPC_ENDPOINT)}
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
    assert existing.of_type(VPC) == [] and existing.of_type(SUBNET) == []
    assert [g.name for g in existing.of_type(SECURITY_GROUP)] == ["d-st-network-endpoints-sg"]
    vpc_config = existing.function.inputs["vpcConfig"]
    assert vpc_config["subnetIds"] == ["subnet-0aaaaaaaaaaaaaaaa", "subnet-0bbbbbbbbbbbbbbbb"]
    assert vpc_config["securityGroupIds"] == ["sg-0cccccccccccccccc"]
    assert {e.inputs["vpcId"] for e in existing.of_type(VPC_ENDPOINT)} == {"vpc-0123456789abcdef0"}
