"""Where the function runs, and its way out to GitHub, the Lambda and SSM APIs and the database.

Three modes (``blog-api:networkMode``):

- ``nat``: a new VPC. Public subnets with an internet gateway hold one NAT (a managed NAT gateway, or a
  small NAT instance for a cheap dev: ``infra.nat``); the function's private subnets have a default route
  to it. The function reaches anything on the internet (GitHub, TiDB Cloud's public endpoint, AWS APIs)
  with no proxy and no VPC endpoint needed.
- ``existing``: the VPC, subnets (and optionally security groups) given in config, where the routes to a
  proxy and the database already exist; this program adds no route there.
- ``shared``: the VPC and private subnets another stack of this project built (``networkStack``, dev by
  default), read from its outputs: review stacks get no VPC of their own (a region allows five).

Interface endpoints for Lambda and SSM can be added (``vpcEndpoints``), so the self-invoke and the secret
look-ups stay inside the VPC; the NAT reaches both APIs anyway, so they are off unless configured.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from infra.nat import DEFAULT_ROUTE, NatInstanceArgs, NatRoute, nat_gateway, nat_instance

# The AWS services the function calls from inside the VPC, by endpoint service suffix.
ENDPOINT_SERVICES = ("lambda", "ssm")
# The outputs a ``nat`` stack exports for ``shared`` stacks (see infra/__main__.py).
SHARED_OUTPUTS = ("vpcId", "privateSubnetIds")
# Availability zones proper: no Local Zone or Wavelength Zone, even one the account opted into.
ZONE_FILTERS = {"zone-type": ["availability-zone"], "opt-in-status": ["opt-in-not-required"]}


class NetworkError(ValueError):
    """The region cannot hold the network the stack asks for."""


def usable_zones(available: list[str], wanted: int, region: str, stack: str) -> list[str]:
    """The first ``wanted`` zones, or a NetworkError naming the count and the fix (before any resource)."""
    if wanted > len(available):
        raise NetworkError(
            f"blog-api:availabilityZoneCount is {wanted}, but {region} has {len(available)} availability "
            f"zones ({', '.join(available) or 'none'}); fix: pulumi config set "
            f"blog-api:availabilityZoneCount {min(max(len(available), 2), 6)} --stack {stack}"
        )
    return available[:wanted]


def region_zones(parent: pulumi.Resource | None = None) -> list[str]:
    """The region's availability zones (Local Zones excluded), read when the program starts."""
    result = aws.get_availability_zones(
        state="available",
        filters=[aws.GetAvailabilityZonesFilterArgs(name=n, values=v) for n, v in ZONE_FILTERS.items()],
        opts=pulumi.InvokeOptions(parent=parent),
    )
    return list(result.names)


def shared_stack_name(value: str) -> str:
    """``dev`` → ``<organization>/blog-api/dev``; a fully qualified name is kept."""
    if "/" in value:
        return value
    return f"{pulumi.get_organization()}/{pulumi.get_project()}/{value}"


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
    # nat mode: the zones to use, already checked against the region (``usable_zones``).
    zones: tuple[str, ...] = ()
    nat_type: str = "gateway"
    nat_instance_type: str = "t4g.nano"
    nat_instance_image: str = ""
    # shared mode: the stack whose network is used.
    shared_stack: str = "dev"
    existing_vpc_id: str | None = None
    existing_subnet_ids: tuple[str, ...] = ()
    existing_security_group_ids: tuple[str, ...] = ()


def endpoint_hosts(region: str) -> list[str]:
    """The host names that private DNS points at the interface endpoints (they bypass the proxy)."""
    return [f"{service}.{region}.amazonaws.com" for service in ENDPOINT_SERVICES]


def subnet_blocks(vpc_cidr: str, zones: int) -> tuple[list[str], list[str]]:
    """(public, private) blocks, each 1/16 of the VPC: public from the first, private from the ninth."""
    blocks = [str(b) for b in ipaddress.ip_network(vpc_cidr).subnets(prefixlen_diff=4)]
    return blocks[:zones], blocks[8 : 8 + zones]


class Network(pulumi.ComponentResource):
    """The function's subnets and security groups: with a route out (nat), as given (existing), or another
    stack's (shared)."""

    vpc_id: pulumi.Output[str]
    subnet_ids: pulumi.Output[list[str]]
    security_group_ids: pulumi.Output[list[str]]
    # The private subnets' route tables (nat mode; none otherwise), for gateway endpoints (infra.assets).
    private_route_table_ids: pulumi.Output[list[str]]
    # The NAT instance, for its status-check alarm (None with a NAT gateway or no NAT).
    nat_instance_id: pulumi.Output[str] | None

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("blog-api:infra:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        prefix = args.physical_prefix
        self.nat_instance_id = None
        route_table_ids: list[pulumi.Input[str]] = []

        if args.mode == "existing":
            if args.existing_vpc_id is None or len(args.existing_subnet_ids) < 2:
                raise ValueError("networkMode existing needs vpcId and two or more subnetIds")
            vpc_id: pulumi.Input[str] = args.existing_vpc_id
            subnet_ids: pulumi.Output[list[str]] = pulumi.Output.from_input(list(args.existing_subnet_ids))
            group_ids: list[pulumi.Input[str]] = list(args.existing_security_group_ids)
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
            private_subnets, private_table = self._nat_network(name, args, vpc)
            subnet_ids = pulumi.Output.all(*[subnet.id for subnet in private_subnets])
            route_table_ids = [private_table.id]
            group_ids = []
        elif args.mode == "shared":
            # Read from the other stack's outputs: nothing of its network is managed here.
            network = pulumi.StackReference(f"{name}-shared", stack_name=shared_stack_name(args.shared_stack))
            vpc_id = network.require_output("vpcId").apply(str)
            subnet_ids = network.require_output("privateSubnetIds").apply(lambda ids: [str(i) for i in ids])
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
        self.subnet_ids = subnet_ids
        self.security_group_ids = pulumi.Output.all(*group_ids)
        self.private_route_table_ids = pulumi.Output.all(*route_table_ids)
        self.register_outputs(
            {"vpcId": self.vpc_id, "subnetIds": self.subnet_ids, "securityGroupIds": self.security_group_ids}
        )

    def _nat_network(
        self, name: str, args: NetworkArgs, vpc: aws.ec2.Vpc
    ) -> tuple[list[aws.ec2.Subnet], aws.ec2.RouteTable]:
        """Public subnets behind an internet gateway, one NAT in the first, private subnets routed to it."""
        child = pulumi.ResourceOptions(parent=self)
        prefix = args.physical_prefix
        if len(args.zones) != args.availability_zone_count:
            raise NetworkError("nat mode needs the zones checked by usable_zones")
        public_blocks, private_blocks = subnet_blocks(args.vpc_cidr, args.availability_zone_count)

        gateway = aws.ec2.InternetGateway(
            f"{name}-igw", vpc_id=vpc.id, tags={"Name": f"{prefix}-blog-api"}, opts=child
        )
        public_table = aws.ec2.RouteTable(
            f"{name}-public-rt", vpc_id=vpc.id, tags={"Name": f"{prefix}-blog-api-public"}, opts=child
        )
        public_route = aws.ec2.Route(
            f"{name}-public-default",
            route_table_id=public_table.id,
            destination_cidr_block=DEFAULT_ROUTE,
            gateway_id=gateway.id,
            opts=child,
        )
        public = [
            self._subnet(name, "public", index, vpc, block, zone, public_table, prefix)
            for index, (block, zone) in enumerate(zip(public_blocks, args.zones, strict=True))
        ]

        private_table = aws.ec2.RouteTable(
            f"{name}-private-rt", vpc_id=vpc.id, tags={"Name": f"{prefix}-blog-api-private"}, opts=child
        )
        nat: NatRoute
        if args.nat_type == "gateway":
            nat = nat_gateway(name, prefix, public[0], public_route, self)
        else:
            instance_args = NatInstanceArgs(
                prefix=prefix,
                vpc_id=vpc.id,
                vpc_cidr=args.vpc_cidr,
                instance_type=args.nat_instance_type,
                image=args.nat_instance_image,
            )
            nat = nat_instance(name, instance_args, public[0], public_route, self)
            self.nat_instance_id = nat.instance_id
        aws.ec2.Route(
            f"{name}-private-default",
            route_table_id=private_table.id,
            destination_cidr_block=DEFAULT_ROUTE,
            nat_gateway_id=nat.nat_gateway_id,
            network_interface_id=nat.network_interface_id,
            opts=child,
        )
        private = [
            self._subnet(name, "private", index, vpc, block, zone, private_table, prefix)
            for index, (block, zone) in enumerate(zip(private_blocks, args.zones, strict=True))
        ]
        return private, private_table

    def _subnet(
        self,
        name: str,
        kind: str,
        index: int,
        vpc: aws.ec2.Vpc,
        block: str,
        zone: str,
        table: aws.ec2.RouteTable,
        prefix: str,
    ) -> aws.ec2.Subnet:
        child = pulumi.ResourceOptions(parent=self)
        subnet = aws.ec2.Subnet(
            f"{name}-{kind}-{index}",
            vpc_id=vpc.id,
            cidr_block=block,
            availability_zone=zone,
            # Nothing gets a public address by itself; the NAT instance's is an Elastic IP.
            map_public_ip_on_launch=False,
            tags={"Name": f"{prefix}-blog-api-{kind}-{index}"},
            opts=child,
        )
        aws.ec2.RouteTableAssociation(
            f"{name}-{kind}-{index}-rta", subnet_id=subnet.id, route_table_id=table.id, opts=child
        )
        return subnet

    def _endpoints(
        self,
        name: str,
        args: NetworkArgs,
        vpc_id: pulumi.Input[str],
        subnet_ids: pulumi.Output[list[str]],
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
