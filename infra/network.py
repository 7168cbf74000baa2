"""Where the function runs: private subnets in two or more AZs, no NAT, one security group.

Either this component creates the VPC, or it adopts one named in config. Outbound traffic leaves the
VPC only through the squid proxy (``HTTPS_PROXY``) or, when switched on, interface endpoints for
Lambda and SSM, so the self-invoke and the secret look-ups do not depend on the proxy.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

# The AWS services the function calls from inside the VPC, by endpoint service suffix.
ENDPOINT_SERVICES = ("lambda", "ssm")


@dataclass
class NetworkArgs:
    physical_prefix: str
    region: pulumi.Input[str]
    vpc_cidr: str
    availability_zone_count: int
    vpc_endpoints: bool
    existing_vpc_id: str | None = None
    existing_subnet_ids: tuple[str, ...] = ()
    existing_security_group_ids: tuple[str, ...] = ()


def endpoint_hosts(region: str) -> list[str]:
    """The host names that private DNS points at the interface endpoints (they bypass the proxy)."""
    return [f"{service}.{region}.amazonaws.com" for service in ENDPOINT_SERVICES]


class Network(pulumi.ComponentResource):
    """The function's subnets and security groups (created or adopted) and optional VPC endpoints."""

    vpc_id: pulumi.Output[str]
    subnet_ids: pulumi.Output[list[str]]
    security_group_ids: pulumi.Output[list[str]]

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("blog-api:infra:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        prefix = args.physical_prefix

        if args.existing_vpc_id is not None:
            vpc_id: pulumi.Input[str] = args.existing_vpc_id
            subnet_ids: list[pulumi.Input[str]] = list(args.existing_subnet_ids)
            group_ids: list[pulumi.Input[str]] = list(args.existing_security_group_ids)
        else:
            vpc = aws.ec2.Vpc(
                f"{name}-vpc",
                cidr_block=args.vpc_cidr,
                # Private DNS of interface endpoints needs both attributes.
                enable_dns_support=True,
                enable_dns_hostnames=True,
                tags={"Name": f"{prefix}-blog-api"},
                opts=child,
            )
            vpc_id = vpc.id
            subnet_ids = [subnet.id for subnet in self._private_subnets(name, args, vpc)]
            group_ids = []

        if not group_ids:
            function_group = aws.ec2.SecurityGroup(
                f"{name}-function-sg",
                name=f"{prefix}-blog-api-function",
                description="blog-api Lambda function",
                vpc_id=vpc_id,
                # The VPC has no route to the internet: what the function may reach is decided by
                # routing (proxy, endpoints, peering), and the proxy and database ports are per
                # deployment, so egress is left open here.
                egress=[
                    aws.ec2.SecurityGroupEgressArgs(
                        protocol="-1", from_port=0, to_port=0, cidr_blocks=["0.0.0.0/0"]
                    )
                ],
                tags={"Name": f"{prefix}-blog-api-function"},
                opts=child,
            )
            group_ids = [function_group.id]

        if args.vpc_endpoints:
            self._endpoints(name, args, vpc_id, subnet_ids, group_ids)

        self.vpc_id = pulumi.Output.from_input(vpc_id)
        self.subnet_ids = pulumi.Output.all(*subnet_ids)
        self.security_group_ids = pulumi.Output.all(*group_ids)
        self.register_outputs(
            {"vpcId": self.vpc_id, "subnetIds": self.subnet_ids, "securityGroupIds": self.security_group_ids}
        )

    def _private_subnets(self, name: str, args: NetworkArgs, vpc: aws.ec2.Vpc) -> list[aws.ec2.Subnet]:
        # One subnet per AZ, each a sixteenth of the VPC block; no internet gateway and no NAT, so
        # the main route table (local routes only) keeps them private.
        zones = aws.get_availability_zones_output(
            state="available", opts=pulumi.InvokeOutputOptions(parent=self)
        )
        blocks = list(ipaddress.ip_network(args.vpc_cidr).subnets(prefixlen_diff=4))
        subnets = []
        for index in range(args.availability_zone_count):
            subnets.append(
                aws.ec2.Subnet(
                    f"{name}-private-{index}",
                    vpc_id=vpc.id,
                    cidr_block=str(blocks[index]),
                    availability_zone=zones.names[index],
                    map_public_ip_on_launch=False,
                    tags={"Name": f"{args.physical_prefix}-blog-api-private-{index}"},
                    opts=pulumi.ResourceOptions(parent=self),
                )
            )
        return subnets

    def _endpoints(
        self,
        name: str,
        args: NetworkArgs,
        vpc_id: pulumi.Input[str],
        subnet_ids: list[pulumi.Input[str]],
        function_group_ids: list[pulumi.Input[str]],
    ) -> None:
        child = pulumi.ResourceOptions(parent=self)
        endpoint_group = aws.ec2.SecurityGroup(
            f"{name}-endpoints-sg",
            name=f"{args.physical_prefix}-blog-api-endpoints",
            description="blog-api interface VPC endpoints: HTTPS from the function",
            vpc_id=vpc_id,
            ingress=[
                aws.ec2.SecurityGroupIngressArgs(
                    protocol="tcp", from_port=443, to_port=443, security_groups=function_group_ids
                )
            ],
            tags={"Name": f"{args.physical_prefix}-blog-api-endpoints"},
            opts=child,
        )
        for service in ENDPOINT_SERVICES:
            aws.ec2.VpcEndpoint(
                f"{name}-{service}-endpoint",
                vpc_id=vpc_id,
                service_name=pulumi.Output.concat("com.amazonaws.", args.region, f".{service}"),
                vpc_endpoint_type="Interface",
                # Private DNS makes the regular host name resolve to the endpoint, so boto3 needs no
                # endpoint override; NO_PROXY then keeps that traffic off the proxy.
                private_dns_enabled=True,
                subnet_ids=subnet_ids,
                security_group_ids=[endpoint_group.id],
                tags={"Name": f"{args.physical_prefix}-blog-api-{service}"},
                opts=child,
            )
