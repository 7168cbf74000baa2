"""Run ``infra/__main__.py`` under Pulumi's unit-test mocks for one stack; write what it registered as JSON.

Pulumi's mocks are process-wide, so the tests start this script once per scenario, in its own process::

    python tests/infra/mock_run.py dev --artifact some.zip --out result.json [--set blog-api:key=value ...]

It reads the committed ``Pulumi.<stack>.yaml`` exactly as the CLI would hand it to the program, and is
started from ``infra/`` as the Pulumi CLI starts the program (``main: infra/``).
"""

from __future__ import annotations

import argparse
import json
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
ACCOUNT_ID = "123456789012"
ZONES = ("a", "c", "d")


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

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.inputs[(args.typ, args.name)] = args.inputs
        region, account = self.region, ACCOUNT_ID
        resource_id = f"{args.name}-id"
        name = args.inputs.get("name", args.name)
        outputs = dict(args.inputs)
        if args.typ == "aws:lambda/function:Function":
            arn = f"arn:aws:lambda:{region}:{account}:function:{name}"
            outputs["arn"] = arn
            outputs["invokeArn"] = (
                f"arn:aws:apigateway:{region}:lambda:path/2015-03-31/functions/{arn}/invocations"
            )
        elif args.typ == "aws:sqs/queue:Queue":
            outputs["arn"] = f"arn:aws:sqs:{region}:{account}:{name}"
            outputs["url"] = f"https://sqs.{region}.amazonaws.com/{account}/{name}"
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
        elif args.typ.startswith("aws:"):
            outputs.setdefault("arn", f"arn:aws:mock:{region}:{account}:{args.typ}/{args.name}")
        return resource_id, outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        self.calls.append(args.token)
        if args.token == "aws:index/getRegion:getRegion":
            # pulumi-aws 7 reads ``region``; ``name`` is the deprecated field.
            return {"region": self.region, "name": self.region, "id": self.region}, []
        if args.token == "aws:index/getCallerIdentity:getCallerIdentity":
            arn = f"arn:aws:iam::{ACCOUNT_ID}:user/ci"
            return {"accountId": ACCOUNT_ID, "arn": arn, "userId": "AIDA", "id": ACCOUNT_ID}, []
        if args.token == "aws:index/getAvailabilityZones:getAvailabilityZones":
            names = [f"{self.region}{zone}" for zone in ZONES]
            return {"names": names, "zoneIds": [f"apne1-az{i}" for i in (4, 1, 2)], "id": self.region}, []
        raise NotImplementedError(f"the program made an invoke the mocks do not know: {args.token}")


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
                    "propertyDependencies": {
                        key: sorted(value.urns) for key, value in request.propertyDependencies.items()
                    },
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
    """Run the program for ``stack`` with its stack file's config plus ``overrides``; return the record."""
    config = {**stack_config(stack), **overrides}
    for key, value in config.items():
        pulumi.runtime.set_config(key, value)
    mocks = StackMocks(region=config["aws:region"])
    monitor = RecordingMonitor(mocks)
    pulumi.runtime.set_mocks(mocks, project=PROJECT, stack=stack, preview=False, monitor=monitor)

    outputs: dict[str, Any] = {}

    def program() -> Any:
        runpy.run_path(str(REPO_ROOT / "infra" / "__main__.py"), run_name="__main__")
        exported = dict(get_root_resource().outputs)  # type: ignore[union-attr]

        async def resolve() -> None:
            outputs.update(await pulumi.Output.all(**exported).future() or {})

        return resolve()

    _sync_await(run_pulumi_func(program))
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
        "packagingLoaded": "infra.packaging" in sys.modules,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("stack", choices=["dev", "prod"])
    parser.add_argument("--artifact", required=True, help="the prebuilt zip, given as blog-api:artifactPath")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="extra config")
    args = parser.parse_args(argv)
    overrides = dict(item.split("=", 1) for item in args.set)
    overrides[f"{PROJECT}:artifactPath"] = args.artifact
    record = run(args.stack, overrides)
    args.out.write_text(json.dumps(record, indent=1, sort_keys=True, default=_plain))
    return 0


if __name__ == "__main__":
    sys.exit(main())
