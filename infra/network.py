"""Where the function runs, and its way out to GitHub, the Lambda and SSM APIs and the database.

Two modes (``blog-api:networkMode``):

- ``nat``: a new VPC. Public subnets with an internet gateway hold one NAT (a managed NAT gateway, or a
  small NAT instance for a cheap dev); the function's private subnets have a default route to it. The
  function reaches anything on the internet (GitHub, TiDB Cloud's public endpoint, AWS APIs) with no
  proxy and no VPC endpoint needed.
- ``existing``: the VPC, subnets (and optionally security groups) given in config, where the routes to a
  proxy and the database already exist; this program adds no route there.

Either way, interface endpoints for Lambda and SSM can be added (``vpcEndpoints``), so the self-invoke
and the secret look-ups stay inside the VPC.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

# The AWS services the function calls from inside the VPC, by endpoint service suffix.
ENDPOINT_SERVICES = ("lambda", "ssm")
# Everything not in the VPC.
DEFAULT_ROUTE = "0.0.0.0/0"
# The NAT instance's image: AWS's public SSM parameter for the latest Amazon Linux 2023, per architecture.
AL2023_AMI_PARAMETER = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-{arch}"

# Turns an Amazon Linux 2023 instance into a NAT: forward, masquerade behind its public address, and keep
# both across reboots. iptables-services' stock FORWARD chain rejects everything, hence the flush.
NAT_INSTANCE_USER_DATA = """#!/bin/bash
set -euo pipefail
echo 'net.ipv4.ip_forward = 1' > /etc/sysctl.d/90-blog-api-nat.conf
sysctl -p /etc/sysctl.d/90-blog-api-nat.conf
dnf install -y iptables-services
systemctl enable --now iptables
iface=$(ip route show default | awk '{print $5; exit}')
iptables -t nat -A POSTROUTING -o "$iface" -j MASQUERADE
iptables -F FORWARD
service iptables save
"""


@dataclass
class NetworkArgs:
    physical_prefix: str
    region: pulumi.Input[str]
    mode: str
    vpc_cidr: str
    availability_zone_count: int
    vpc_endpoints: bool
    nat_type: str = "gateway"
    nat_instance_type: str = "t4g.nano"
    existing_vpc_id: str | None = None
    existing_subnet_ids: tuple[str, ...] = ()
    existing_security_group_ids: tuple[str, ...] = ()


def endpoint_hosts(region: str) -> list[str]:
    """The host names that private DNS points at the interface endpoints (they bypass the proxy)."""
    return [f"{service}.{region}.amazonaws.com" for service in ENDPOINT_SERVICES]


def instance_architecture(instance_type: str) -> str:
    """``t4g.nano`` → ``arm64`` (Graviton families end in ``g``, ``gd``, ``gn``), else ``x86_64``."""
    family = instance_type.split(".", 1)[0]
    return "arm64" if family.rstrip("dn").endswith("g") else "x86_64"


def subnet_blocks(vpc_cidr: str, zones: int) -> tuple[list[str], list[str]]:
    """(public, private) blocks, each 1/16 of the VPC: public from the first, private from the ninth."""
    blocks = [str(b) for b in ipaddress.ip_network(vpc_cidr).subnets(prefixlen_diff=4)]
    return blocks[:zones], blocks[8 : 8 + zones]


class Network(pulumi.ComponentResource):
    """The function's subnets and security groups, with a route out (nat) or adopted as given (existing)."""

    vpc_id: pulumi.Output[str]
    subnet_ids: pulumi.Output[list[str]]
    security_group_ids: pulumi.Output[list[str]]
    # The private subnets' route tables (nat mode; none otherwise), for gateway endpoints (infra.assets).
    private_route_table_ids: pulumi.Output[list[str]]

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("blog-api:infra:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        prefix = args.physical_prefix

        if args.mode == "existing":
            if args.existing_vpc_id is None or len(args.existing_subnet_ids) < 2:
                raise ValueError("networkMode existing needs vpcId and two or more subnetIds")
            vpc_id: pulumi.Input[str] = args.existing_vpc_id
            subnet_ids: list[pulumi.Input[str]] = list(args.existing_subnet_ids)
            group_ids: list[pulumi.Input[str]] = list(args.existing_security_group_ids)
            self.private_route_table_ids = pulumi.Output.all()
        elif args.mode == "nat":
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
            subnet_ids = [subnet.id for subnet in self._nat_network(name, args, vpc)]
            group_ids = []
        else:
            raise ValueError(f"unknown network mode {args.mode!r}")

        if not group_ids:
            function_group = aws.ec2.SecurityGroup(
                f"{name}-function-sg",
                name=f"{prefix}-blog-api-function",
                description="blog-api Lambda function",
                vpc_id=vpc_id,
                # The function only opens connections (HTTPS to GitHub and AWS, MySQL to the database,
                # the proxy's port); nothing connects to it, so there is no ingress rule at all.
                egress=[
                    aws.ec2.SecurityGroupEgressArgs(
                        protocol="-1", from_port=0, to_port=0, cidr_blocks=[DEFAULT_ROUTE]
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

    def _nat_network(self, name: str, args: NetworkArgs, vpc: aws.ec2.Vpc) -> list[aws.ec2.Subnet]:
        """Public subnets behind an internet gateway, one NAT in the first, private subnets routed to it."""
        child = pulumi.ResourceOptions(parent=self)
        prefix = args.physical_prefix
        zones = aws.get_availability_zones_output(
            state="available", opts=pulumi.InvokeOutputOptions(parent=self)
        )
        public_blocks, private_blocks = subnet_blocks(args.vpc_cidr, args.availability_zone_count)

        gateway = aws.ec2.InternetGateway(
            f"{name}-igw", vpc_id=vpc.id, tags={"Name": f"{prefix}-blog-api"}, opts=child
        )
        public_table = aws.ec2.RouteTable(
            f"{name}-public-rt", vpc_id=vpc.id, tags={"Name": f"{prefix}-blog-api-public"}, opts=child
        )
        aws.ec2.Route(
            f"{name}-public-default",
            route_table_id=public_table.id,
            destination_cidr_block=DEFAULT_ROUTE,
            gateway_id=gateway.id,
            opts=child,
        )
        public = []
        for index, block in enumerate(public_blocks):
            subnet = aws.ec2.Subnet(
                f"{name}-public-{index}",
                vpc_id=vpc.id,
                cidr_block=block,
                availability_zone=zones.names[index],
                # Only the NAT lives here; it gets its address explicitly.
                map_public_ip_on_launch=False,
                tags={"Name": f"{prefix}-blog-api-public-{index}"},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-public-{index}-rta", subnet_id=subnet.id, route_table_id=public_table.id, opts=child
            )
            public.append(subnet)

        private_table = aws.ec2.RouteTable(
            f"{name}-private-rt", vpc_id=vpc.id, tags={"Name": f"{prefix}-blog-api-private"}, opts=child
        )
        self.private_route_table_ids = pulumi.Output.all(private_table.id)
        if args.nat_type == "gateway":
            address = aws.ec2.Eip(
                f"{name}-nat-eip", domain="vpc", tags={"Name": f"{prefix}-blog-api-nat"}, opts=child
            )
            nat = aws.ec2.NatGateway(
                f"{name}-nat",
                allocation_id=address.id,
                subnet_id=public[0].id,
                connectivity_type="public",
                tags={"Name": f"{prefix}-blog-api-nat"},
                # A NAT gateway needs the internet gateway attached before it can route.
                opts=pulumi.ResourceOptions(parent=self, depends_on=[gateway]),
            )
            aws.ec2.Route(
                f"{name}-private-default",
                route_table_id=private_table.id,
                destination_cidr_block=DEFAULT_ROUTE,
                nat_gateway_id=nat.id,
                opts=child,
            )
        else:
            instance = self._nat_instance(name, args, vpc, public[0], gateway)
            aws.ec2.Route(
                f"{name}-private-default",
                route_table_id=private_table.id,
                destination_cidr_block=DEFAULT_ROUTE,
                network_interface_id=instance.primary_network_interface_id,
                opts=child,
            )

        private = []
        for index, block in enumerate(private_blocks):
            subnet = aws.ec2.Subnet(
                f"{name}-private-{index}",
                vpc_id=vpc.id,
                cidr_block=block,
                availability_zone=zones.names[index],
                map_public_ip_on_launch=False,
                tags={"Name": f"{prefix}-blog-api-private-{index}"},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-private-{index}-rta",
                subnet_id=subnet.id,
                route_table_id=private_table.id,
                opts=child,
            )
            private.append(subnet)
        return private

    def _nat_instance(
        self,
        name: str,
        args: NetworkArgs,
        vpc: aws.ec2.Vpc,
        subnet: aws.ec2.Subnet,
        gateway: aws.ec2.InternetGateway,
    ) -> aws.ec2.Instance:
        prefix = args.physical_prefix
        child = pulumi.ResourceOptions(parent=self)
        group = aws.ec2.SecurityGroup(
            f"{name}-nat-sg",
            name=f"{prefix}-blog-api-nat",
            description="blog-api NAT instance: forwards the VPC's traffic to the internet",
            vpc_id=vpc.id,
            ingress=[
                aws.ec2.SecurityGroupIngressArgs(
                    protocol="-1", from_port=0, to_port=0, cidr_blocks=[args.vpc_cidr]
                )
            ],
            egress=[
                aws.ec2.SecurityGroupEgressArgs(
                    protocol="-1", from_port=0, to_port=0, cidr_blocks=[DEFAULT_ROUTE]
                )
            ],
            tags={"Name": f"{prefix}-blog-api-nat"},
            opts=child,
        )
        image = aws.ssm.get_parameter_output(
            name=AL2023_AMI_PARAMETER.format(arch=instance_architecture(args.nat_instance_type)),
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        return aws.ec2.Instance(
            f"{name}-nat-instance",
            ami=image.insecure_value,
            instance_type=args.nat_instance_type,
            subnet_id=subnet.id,
            vpc_security_group_ids=[group.id],
            associate_public_ip_address=True,
            # It forwards packets that are neither from nor to itself.
            source_dest_check=False,
            user_data=NAT_INSTANCE_USER_DATA,
            metadata_options=aws.ec2.InstanceMetadataOptionsArgs(http_tokens="required"),
            tags={"Name": f"{prefix}-blog-api-nat"},
            # A newer Amazon Linux image must not replace the running NAT (and cut the function off);
            # replace it deliberately with `pulumi up --replace`.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[gateway], ignore_changes=["ami"]),
        )

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
