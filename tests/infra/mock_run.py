"""Run ``infra/__main__.py`` under Pulumi's unit-test mocks for one stack; write what it registered as JSON.

Pulumi's mocks are process-wide, so the tests start this script once per scenario, in its own process::

    python tests/infra/mock_run.py dev --artifact some.zip --out result.json [--set blog-api:key=value ...]

It reads the committed ``Pulumi.<stack>.yaml`` exactly as the CLI would hand it to the program, and is
started from ``infra/`` as the Pulumi CLI starts the program (``main: infra/``).

``python tests/infra/mock_run.py account --out result.json --set blog-api-bootstrap:key=value ...`` runs
the account's bootstrap program (``infra/bootstrap/``) instead, with only the config given.
"""

from __future__ import annotations

import argparse
import json
import logging
import runpy
import sys
from pathlib import Path
from typing import Any

import pulumi
import yaml
from pulumi.runtime.mocks import MockMonitor
from pulumi.runtime.settings import get_root_resource
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

REPO_ROOT = Path(__file__).resolve().parents[2]
PROJECT = "blog-api"
BOOTSTRAP_PROJECT = "blog-api-bootstrap"
BOOTSTRAP_STACK = "account"
BOOTSTRAP_REGION = "ap-northeast-1"
ACCOUNT_ID = "123456789012"
ZONES = ("a", "c", "d")
# A Local Zone the account opted into: get_availability_zones lists it unless filtered out.
LOCAL_ZONE = "ap-northeast-1-tpe-1a"
ORGANIZATION = "yamada"
# What the mocked SSM returns at deploy time: the GitHub App id (githubAppIdParam).
APP_ID_FROM_SSM = "2718281"
# What the mocked EC2 finds for an image name (the NAT instance's natInstanceAmi).
AMI_ID = "ami-0fedcba9876543210"
# The outputs of the stack a ``shared`` stack reads (dev's network).
SHARED_VPC = "vpc-0d0e0f1011121314a"
SHARED_SUBNETS = ("subnet-0d0e0f101112131a1", "subnet-0d0e0f101112131a2")


def stack_config(stack: str) -> dict[str, str]:
    """The committed stack file's config as the CLI passes it: every value a string, structures as JSON."""
    document = yaml.safe_load((REPO_ROOT / f"Pulumi.{stack}.yaml").read_text())
    config: dict[str, str] = {}
    for key, value in (document.get("config") or {}).items():
        if isinstance(value, str):
            config[key] = value
        else:
            config[key] = json.dumps(value)
    return config


class StackMocks(pulumi.runtime.Mocks):
    """Resource outputs shaped like AWS's (ARNs, endpoints), and the three invokes the program makes."""

    def __init__(self, region: str) -> None:
        self.region = region
        self.inputs: dict[tuple[str, str], dict[str, Any]] = {}
        self.calls: list[str] = []
        self.call_args: list[dict[str, Any]] = []
        self.image_names: list[str] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.inputs[(args.typ, args.name)] = args.inputs
        region, account = self.region, ACCOUNT_ID
        resource_id = f"{args.name}-id"
        name = args.inputs.get("name", args.name)
        outputs = dict(args.inputs)
        if args.typ == "aws:lambda/function:Function":
            arn = f"arn:aws:lambda:{region}:{account}:function:{name}"
            outputs["arn"] = arn
            outputs["invokeArn"] = _invoke_arn(region, arn)
            # What Lambda reports: a number once publish=true has published one, else $LATEST.
            outputs["version"] = "7" if args.inputs.get("publish") else "$LATEST"
        elif args.typ == "aws:lambda/alias:Alias":
            function_arn = f"arn:aws:lambda:{region}:{account}:function:{args.inputs['functionName']}"
            arn = f"{function_arn}:{name}"
            outputs["arn"] = arn
            outputs["invokeArn"] = _invoke_arn(region, arn)
        elif args.typ == "aws:kms/key:Key":
            resource_id = "11111111-2222-3333-4444-555555555555"
            outputs["keyId"] = resource_id
            outputs["arn"] = f"arn:aws:kms:{region}:{account}:key/{resource_id}"
        elif args.typ == "aws:sns/topic:Topic":
            outputs["arn"] = f"arn:aws:sns:{region}:{account}:{name}"
        elif args.typ == "aws:cloudwatch/logGroup:LogGroup":
            resource_id = name
            outputs["arn"] = f"arn:aws:logs:{region}:{account}:log-group:{name}"
        elif args.typ == "aws:ec2/instance:Instance":
            resource_id = "i-0123456789abcdef0"
            outputs["primaryNetworkInterfaceId"] = "eni-0123456789abcdef0"
        elif args.typ == "pulumi:pulumi:StackReference":
            outputs["outputs"] = {"vpcId": SHARED_VPC, "privateSubnetIds": list(SHARED_SUBNETS)}
        elif args.typ == "aws:sqs/queue:Queue":
            outputs["arn"] = f"arn:aws:sqs:{region}:{account}:{name}"
            outputs["url"] = f"https://sqs.{region}.amazonaws.com/{account}/{name}"
        elif args.typ == "aws:iam/openIdConnectProvider:OpenIdConnectProvider":
            host = str(args.inputs["url"]).removeprefix("https://")
            outputs["arn"] = f"arn:aws:iam::{account}:oidc-provider/{host}"
        elif args.typ == "aws:iam/policy:Policy":
            outputs["arn"] = f"arn:aws:iam::{account}:policy/{name}"
        elif args.typ == "aws:iam/role:Role":
            resource_id = name
            outputs["arn"] = f"arn:aws:iam::{account}:role/{name}"
        elif args.typ == "aws:apigatewayv2/api:Api":
            resource_id = "a1b2c3d4e5"
            outputs["apiEndpoint"] = f"https://{resource_id}.execute-api.{region}.amazonaws.com"
            outputs["executionArn"] = f"arn:aws:execute-api:{region}:{account}:{resource_id}"
        elif args.typ == "aws:cloudwatch/eventRule:EventRule":
            resource_id = name
            outputs["arn"] = f"arn:aws:events:{region}:{account}:rule/{name}"
        elif args.typ == "aws:s3/bucket:Bucket":
            resource_id = f"{args.inputs.get('bucketPrefix', '')}0123456789"
            outputs["bucket"] = resource_id
            outputs["arn"] = f"arn:aws:s3:::{resource_id}"
            outputs["bucketRegionalDomainName"] = f"{resource_id}.s3.{region}.amazonaws.com"
        elif args.typ == "aws:cloudfront/distribution:Distribution":
            resource_id = "E2QWRUHAPOMQZL"
            outputs["arn"] = f"arn:aws:cloudfront::{account}:distribution/{resource_id}"
            outputs["domainName"] = "d111111abcdef8.cloudfront.net"
        elif args.typ.startswith("aws:"):
            outputs.setdefault("arn", f"arn:aws:mock:{region}:{account}:{args.typ}/{args.name}")
        return resource_id, outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        self.calls.append(args.token)
        self.call_args.append({"token": args.token, "args": dict(args.args)})
        if args.token == "aws:index/getRegion:getRegion":
            # pulumi-aws 7 reads ``region``; ``name`` is the deprecated field.
            return {"region": self.region, "name": self.region, "id": self.region}, []
        if args.token == "aws:index/getCallerIdentity:getCallerIdentity":
            arn = f"arn:aws:iam::{ACCOUNT_ID}:user/ci"
            return {"accountId": ACCOUNT_ID, "arn": arn, "userId": "AIDA", "id": ACCOUNT_ID}, []
        if args.token == "aws:index/getAvailabilityZones:getAvailabilityZones":
            names = [f"{self.region}{zone}" for zone in ZONES]
            filters = {f["name"]: f["values"] for f in args.args.get("filters") or []}
            # EC2 lists an opted-in Local Zone too, unless the zone type (or opt-in status) is filtered.
            if "availability-zone" not in filters.get("zone-type", []) and "opt-in-not-required" not in (
                filters.get("opt-in-status", [])
            ):
                names.insert(1, LOCAL_ZONE)
            zone_ids = [f"apne1-az{i}" for i in range(len(names))]
            return {"names": names, "zoneIds": zone_ids, "id": self.region}, []
        if args.token == "aws:ec2/getAmi:getAmi":
            (name_filter,) = [f["values"] for f in args.args["filters"] if f["name"] == "name"]
            self.image_names.extend(name_filter)
            return {"id": AMI_ID, "imageId": AMI_ID, "name": name_filter[0], "architecture": "arm64"}, []
        if args.token == "aws:ssm/getParameter:getParameter":
            name = args.args["name"]
            value = APP_ID_FROM_SSM if name.endswith("/github-app-id") else None
            if value is None:
                raise NotImplementedError(f"the mocks have no SSM parameter {name}")
            return {"name": name, "value": value, "insecureValue": value, "type": "String", "id": name}, []
        raise NotImplementedError(f"the program made an invoke the mocks do not know: {args.token}")


class _Records(logging.Handler):
    """What the program logged through ``pulumi.log`` (the mock engine hands it to a logger)."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _invoke_arn(region: str, arn: str) -> str:
    return f"arn:aws:apigateway:{region}:lambda:path/2015-03-31/functions/{arn}/invocations"


class RecordingMonitor(MockMonitor):
    """The default mock monitor, plus what it drops: each registration's parent and dependencies."""

    def __init__(self, mocks: StackMocks) -> None:
        super().__init__(mocks)
        self.registrations: list[dict[str, Any]] = []

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            self.registrations.append(
                {
                    "urn": response.urn,
                    "type": request.type,
                    "name": request.name,
                    "custom": bool(request.custom),
                    "parent": request.parent,
                    "id": response.id,
                    "dependencies": sorted(request.dependencies),
                    # The import_ option: the id of an existing resource to adopt.
                    "importId": request.importId,
                    "ignoreChanges": sorted(request.ignoreChanges),
                    "deleteBeforeReplace": bool(request.deleteBeforeReplace),
                    "propertyDependencies": {
                        key: sorted(value.urns) for key, value in request.propertyDependencies.items()
                    },
                }
            )
        return response

    def ReadResource(self, request: Any) -> Any:
        # A read (a StackReference): recorded like a registration, with the id it reads.
        response = super().ReadResource(request)
        self.registrations.append(
            {
                "urn": response.urn,
                "type": request.type,
                "name": request.name,
                "custom": True,
                "parent": request.parent,
                "id": request.id,
                "dependencies": sorted(request.dependencies),
                "importId": "",
                "ignoreChanges": [],
                "deleteBeforeReplace": False,
                "propertyDependencies": {},
            }
        )
        return response


def _plain(value: Any) -> Any:
    if isinstance(value, pulumi.FileArchive):
        return {"fileArchive": value.path}
    if isinstance(value, pulumi.Asset | pulumi.Archive):
        return {"asset": repr(value)}
    if isinstance(value, pulumi.Resource):
        return {"resource": type(value).__name__}
    return str(value)


def run(stack: str, overrides: dict[str, str]) -> dict[str, Any]:
    """Run the program for ``stack`` with its stack file's config plus ``overrides``; return the record.

    The stack ``account`` is the bootstrap program's, with no stack file: only ``overrides``."""
    bootstrap = stack == BOOTSTRAP_STACK
    project = BOOTSTRAP_PROJECT if bootstrap else PROJECT
    main = REPO_ROOT / "infra" / ("bootstrap/__main__.py" if bootstrap else "__main__.py")
    base = {"aws:region": BOOTSTRAP_REGION} if bootstrap else stack_config(stack)
    config = {**base, **overrides}
    for key, value in config.items():
        pulumi.runtime.set_config(key, value)
    mocks = StackMocks(region=config["aws:region"])
    monitor = RecordingMonitor(mocks)
    logger = logging.getLogger("blog-api.mock-run")
    log_records = _Records()
    logger.addHandler(log_records)
    pulumi.runtime.set_mocks(
        mocks,
        project=project,
        stack=stack,
        preview=False,
        monitor=monitor,
        logger=logger,
        organization=ORGANIZATION,
    )

    outputs: dict[str, Any] = {}

    def program() -> Any:
        runpy.run_path(str(main), run_name="__main__")
        exported = dict(get_root_resource().outputs)  # type: ignore[union-attr]

        async def resolve() -> None:
            outputs.update(await pulumi.Output.all(**exported).future() or {})

        return resolve()

    error: str | None = None
    try:
        _sync_await(run_pulumi_func(program))
    except pulumi.RunError as exc:
        # A refusal: the test checks its message and that nothing was registered before it.
        error = str(exc)
    warnings = [record.getMessage() for record in log_records.records if record.levelno == logging.WARNING]
    resources = [
        {**registration, "inputs": mocks.inputs.get((registration["type"], registration["name"]), {})}
        for registration in monitor.registrations
    ]
    return {
        "stack": stack,
        "config": config,
        "outputs": outputs,
        "resources": resources,
        "invokes": mocks.calls,
        "invokeArgs": mocks.call_args,
        "warnings": warnings,
        "packagingLoaded": "infra.packaging" in sys.modules,
        "error": error,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("stack", choices=["dev", "prod", BOOTSTRAP_STACK])
    parser.add_argument("--artifact", help="the prebuilt zip, given as blog-api:artifactPath")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="extra config")
    args = parser.parse_args(argv)
    overrides = dict(item.split("=", 1) for item in args.set)
    if args.artifact is not None:
        overrides[f"{PROJECT}:artifactPath"] = args.artifact
    record = run(args.stack, overrides)
    args.out.write_text(json.dumps(record, indent=1, sort_keys=True, default=_plain))
    if record["error"] is not None:
        print(record["error"], file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
