"""The stack keys of the network group (``StackConfig.network``): where the function runs and how it gets
out. Declared as ``infra.config`` declares the others (see ``infra.stack_keys``)."""

from __future__ import annotations

from infra import stack_checks as checks
from infra.stack_keys import boolean, choice, cidr, integer, key, optional, stack_settings, string_list, text

# networkMode: "nat" creates a VPC whose private subnets route to the internet through NAT;
# "existing" adopts the VPC (and its routes to a proxy and the database) given by vpcId/subnetIds;
# "shared" uses the network another stack of this project built (review stacks: dev's).
NETWORK_MODES = ("nat", "existing", "shared")
# natInstanceAmi's default: the Amazon Linux 2023 release this program was last tested with (arm64, for
# the default t4g.nano). Moved on purpose, never by AWS publishing a newer image.
DEFAULT_NAT_IMAGE = "al2023-ami-2023.6.20241212.0-kernel-6.1-arm64"

# natType: a managed NAT gateway, or a small EC2 instance doing NAT (a tenth of the price, one AZ,
# no managed failover: for dev).
NAT_TYPES = ("gateway", "instance")


@stack_settings
class NetworkSettings:
    """Where the function runs and how it gets out: NAT in a VPC this program creates, or an existing VPC."""

    mode: str = key(
        "networkMode", choice(NETWORK_MODES), default="nat", doc="`nat`, `existing` or `shared` (above)"
    )
    existing_vpc_id: str | None = key("vpcId", optional, default=None, doc="`existing` mode: the VPC")
    existing_subnet_ids: tuple[str, ...] = key(
        "subnetIds",
        string_list,
        default=(),
        doc="`existing` mode: the function's subnets, in at least two AZs, with routes to the proxy and "
        "database",
    )
    existing_security_group_ids: tuple[str, ...] = key(
        "securityGroupIds",
        string_list,
        default=(),
        doc="`existing` mode: the function's groups; empty: one is created",
        check=checks.network_ids,
    )
    shared_stack: str = key(
        "networkStack",
        text,
        default="dev",
        doc="`shared` mode: the stack whose `vpcId` and `privateSubnetIds` outputs are used (`dev`, or "
        "`<org>/blog-api/<stack>`)",
    )
    nat_type: str = key(
        "natType",
        choice(NAT_TYPES),
        default="gateway",
        doc="`nat` mode: `gateway` (managed, with failover inside its AZ) or `instance` (one small "
        "instance, no managed failover); prices in *The network's cost*",
    )
    nat_instance_type: str = key(
        "natInstanceType",
        text,
        default="t4g.nano",
        doc="the NAT instance's type (Graviton types take the arm64 image)",
    )
    nat_instance_image: str = key(
        "natInstanceAmi",
        text,
        default=DEFAULT_NAT_IMAGE,
        doc="the NAT instance's image: an Amazon Linux 2023 image name for the type's architecture (the "
        "same in every region), or an `ami-…` id. Changing it replaces the instance (see *Upgrading the "
        "NAT instance*)",
        check=checks.nat_image,
        applies=lambda k: k.text_of("natType") == "instance",
    )
    vpc_cidr: str = key(
        "vpcCidr",
        cidr,
        default="10.20.0.0/16",
        doc="`nat` mode: the VPC block (/16–/24); each subnet is 1/16 of it",
    )
    availability_zone_count: int = key(
        "availabilityZoneCount",
        integer(2, 6),
        default=2,
        doc="`nat` mode: AZs with a public and a private subnet (2–6)",
    )
    vpc_endpoints: bool = key(
        "vpcEndpoints",
        boolean,
        default=False,
        doc="interface endpoints for Lambda and SSM with private DNS, in every AZ (priced per endpoint "
        "per AZ: *The network's cost*); the NAT reaches both APIs without them",
    )

    @property
    def uses_existing_vpc(self) -> bool:
        return self.mode == "existing"
