"""The way out of the private subnets in ``nat`` mode: a managed NAT gateway, or a small NAT instance.

The NAT instance (dev) sits behind a network interface of its own with an Elastic IP, so:

- its public address is fixed: it survives a replaced instance (the database's allow list keeps working),
  and the private subnets' route points at the interface, not at one instance;
- the address is attached, and the public subnet's default route exists, before the instance boots: its
  one-time setup downloads a package, which would fail without a way out;
- its image is a stack setting (``natInstanceAmi``), never "the latest": a new image replaces the NAT
  only when someone changes the setting, and then it does (no ``ignore_changes``); so does any change
  of its user data;
- if the setup fails anyway, the instance powers itself off, and the status-check alarm (missing data
  counts as failing) tells the alarm topic.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

# Everything not in the VPC.
DEFAULT_ROUTE = "0.0.0.0/0"
# Amazon's own images: the only owner a NAT image is taken from.
IMAGE_OWNER = "amazon"

# Turns an Amazon Linux 2023 instance into a NAT: forward, masquerade behind its public address, and keep
# both across reboots. iptables-services' stock FORWARD chain rejects everything, hence the flush. The
# package download is retried (the address may take a moment to work); a setup that still fails powers
# the instance off, so its status check stops reporting and the alarm fires instead of a silent NAT.
NAT_INSTANCE_USER_DATA = """#!/bin/bash
set -euo pipefail
trap 'echo "blog-api NAT setup failed; powering off" >&2; shutdown -h now' ERR
echo 'net.ipv4.ip_forward = 1' > /etc/sysctl.d/90-blog-api-nat.conf
sysctl -p /etc/sysctl.d/90-blog-api-nat.conf
for attempt in 1 2 3 4 5 6 7 8 9 10; do
  dnf install -y iptables-services && break
  if [ "$attempt" = 10 ]; then false; fi
  sleep 15
done
systemctl enable --now iptables
iface=$(ip route show default | awk '{print $5; exit}')
iptables -t nat -A POSTROUTING -o "$iface" -j MASQUERADE
iptables -F FORWARD
service iptables save
"""


@dataclass
class NatRoute:
    """What the private route table's default route points at, and what the alarms watch."""

    nat_gateway_id: pulumi.Output[str] | None = None
    network_interface_id: pulumi.Output[str] | None = None
    instance_id: pulumi.Output[str] | None = None


def nat_gateway(
    name: str, prefix: str, subnet: aws.ec2.Subnet, public_route: aws.ec2.Route, parent: pulumi.Resource
) -> NatRoute:
    address = aws.ec2.Eip(
        f"{name}-nat-eip",
        domain="vpc",
        tags={"Name": f"{prefix}-blog-api-nat"},
        opts=pulumi.ResourceOptions(parent=parent),
    )
    gateway = aws.ec2.NatGateway(
        f"{name}-nat",
        allocation_id=address.id,
        subnet_id=subnet.id,
        connectivity_type="public",
        tags={"Name": f"{prefix}-blog-api-nat"},
        # It routes only once its subnet's way out exists.
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[public_route]),
    )
    return NatRoute(nat_gateway_id=gateway.id)


def nat_image_id(image: str, parent: pulumi.Resource) -> pulumi.Input[str]:
    """An ``ami-…`` id as it is; an image name (region-independent) looked up among Amazon's images."""
    if image.startswith("ami-"):
        return image
    found = aws.ec2.get_ami_output(
        owners=[IMAGE_OWNER],
        filters=[aws.ec2.GetAmiFilterArgs(name="name", values=[image])],
        # A pinned image stays usable after AWS marks it deprecated.
        include_deprecated=True,
        most_recent=True,
        opts=pulumi.InvokeOutputOptions(parent=parent),
    )
    return found.id


@dataclass
class NatInstanceArgs:
    prefix: str
    vpc_id: pulumi.Input[str]
    vpc_cidr: str
    instance_type: str
    image: str


def nat_instance(
    name: str,
    args: NatInstanceArgs,
    subnet: aws.ec2.Subnet,
    public_route: aws.ec2.Route,
    parent: pulumi.Resource,
) -> NatRoute:
    prefix = args.prefix
    child = pulumi.ResourceOptions(parent=parent)
    group = aws.ec2.SecurityGroup(
        f"{name}-nat-sg",
        name=f"{prefix}-blog-api-nat",
        description="blog-api NAT instance: forwards the VPC's traffic to the internet",
        vpc_id=args.vpc_id,
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
    interface = aws.ec2.NetworkInterface(
        f"{name}-nat-eni",
        subnet_id=subnet.id,
        security_groups=[group.id],
        # It forwards packets that are neither from nor to itself.
        source_dest_check=False,
        description="blog-api NAT instance",
        tags={"Name": f"{prefix}-blog-api-nat"},
        opts=child,
    )
    address = aws.ec2.Eip(
        f"{name}-nat-eip",
        domain="vpc",
        network_interface=interface.id,
        tags={"Name": f"{prefix}-blog-api-nat"},
        # An address for an interface needs the internet gateway's route in place.
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[public_route]),
    )
    instance = aws.ec2.Instance(
        f"{name}-nat-instance",
        ami=nat_image_id(args.image, parent),
        instance_type=args.instance_type,
        primary_network_interface=aws.ec2.InstancePrimaryNetworkInterfaceArgs(
            network_interface_id=interface.id
        ),
        user_data=NAT_INSTANCE_USER_DATA,
        # A new setup script takes a new instance (by default it would only be stopped and started, and a
        # one-time setup would never run again).
        user_data_replace_on_change=True,
        metadata_options=aws.ec2.InstanceMetadataOptionsArgs(http_tokens="required"),
        tags={"Name": f"{prefix}-blog-api-nat"},
        opts=pulumi.ResourceOptions(
            parent=parent,
            # The setup downloads a package: the public route and the address come first.
            depends_on=[public_route, address],
            # The interface belongs to one instance at a time: the old one goes before the new one boots.
            delete_before_replace=True,
        ),
    )
    return NatRoute(network_interface_id=interface.id, instance_id=instance.id)
