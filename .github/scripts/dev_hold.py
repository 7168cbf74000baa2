"""Who may deploy to the shared ``dev`` stack, and what a per-branch review stack is called.

The deploy workflow (``.github/workflows/deploy.yaml``) calls this script; every rule lives here, in plain
functions with tests (``tests/workflows/test_dev_hold.py``), rather than in YAML expressions.

The rule for ``dev``:

* A push to ``main`` deploys to dev, unless a branch holds dev: then nothing is deployed and the job summary
  says who holds it and how to free it.
* A manual deploy of branch X to dev deploys X and marks dev as held by X, so main's pushes stop replacing it
  mid-test. With ``release: true`` it deploys X and frees dev instead.
* A manual ``release-dev`` run frees dev without deploying anything.
* A manual deploy (of main or of a branch) while another branch holds dev is refused: taking over a stack that
  someone is testing must be a visible step (``release-dev`` first), never a side effect.

Where the hold lives: a Pulumi *stack tag* (``blog-api:dev-held-by`` = branch name) on the dev stack. The
Pulumi backend stores a tag with the stack, so every later workflow run sees it; writing one changes neither
the stack's resources nor its config (it is not a deployment); and people see it in ``pulumi stack tag ls``
and in Pulumi Cloud. A config value would live in ``Pulumi.dev.yaml``, which is committed: a value written by
a job on a throwaway runner is lost unless the job pushes a commit to main, and that commit would itself be a
push to main. Stack tags need the Pulumi Cloud backend (the self-managed backends do not keep them), so the
workflow reads the tag back after writing it (``verify``) and fails if it did not stick.

Stdlib only: the workflow runs it with the runner's Python before anything is installed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

HOLD_TAG = "blog-api:dev-held-by"
# Set on each review stack so `pulumi stack ls --tag blog-api:review-branch` lists them with their branches.
REVIEW_TAG = "blog-api:review-branch"
MAIN_BRANCH = "main"

# Pulumi Cloud limits a stack tag value to 256 characters; a longer branch name could not be compared back.
MAX_TAG_VALUE = 256

REVIEW_STACK_PREFIX = "review-"
# Room for the readable part of a review stack name (Pulumi allows 100 characters; keep names short to type).
MAX_REVIEW_SLUG = 40
# The physical prefix starts every AWS name of the stack (function, role, queue, log group, alarm, ...), and
# IAM role and Lambda function names stop at 64 characters: keep it as short as dev's and prod's allow
# (``d-st``, ``p-st``) plus a hash that makes it unique per branch. ``r-`` can never be ``d-``/``p-``.
REVIEW_PREFIX_START = "r-"
MAX_REVIEW_PREFIX_SLUG = 7
HASH_CHARS = 6


class Event(StrEnum):
    """The GitHub events that can reach the dev job."""

    PUSH = "push"
    DISPATCH = "workflow_dispatch"


class HoldChange(StrEnum):
    """What the job does to the hold tag."""

    KEEP = "keep"
    SET = "set"
    CLEAR = "clear"


@dataclass(frozen=True)
class Request:
    """One run of the dev job: what triggered it, for which branch, and what the person asked for."""

    event: Event
    branch: str
    release: bool = False
    release_only: bool = False


@dataclass(frozen=True)
class Decision:
    """What the dev job does: deploy or not, what happens to the hold, and one line for the job summary."""

    deploy: bool
    hold: HoldChange
    held_by_after: str | None
    notice: str


class HoldConflict(Exception):
    """A manual run asked for something that would silently take dev from the branch holding it."""


class BadTags(ValueError):
    """The stack tags could not be read (not the JSON object ``pulumi stack tag ls --json`` prints)."""


def _code(text: str) -> str:
    """Markdown code span for a branch name (branch names may hold characters Markdown would interpret)."""
    return "`" + text.replace("`", "'") + "`"


def held_by(tags: dict[str, str]) -> str | None:
    """The branch holding dev, from the stack's tags; ``None`` when dev is free (an empty tag is free)."""
    value = tags.get(HOLD_TAG, "").strip()
    return value or None


def parse_tags(text: str) -> dict[str, str]:
    """Parse the output of ``pulumi stack tag ls --json`` (a JSON object of tag name to value)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadTags(f"stack tags are not JSON: {exc}") from exc
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise BadTags("stack tags must be a JSON object of strings")
    return data


def decide(request: Request, current: str | None) -> Decision:
    """Apply the dev rule (module docstring) to one run, given the branch that holds dev now (or ``None``).

    Raises ``HoldConflict`` when a manual run would take dev from another branch.
    """
    branch = request.branch
    if not branch:
        raise ValueError("branch must not be empty")

    if request.release_only:
        if request.event is not Event.DISPATCH:
            raise ValueError("only a manual run can release dev")
        if current is None:
            return Decision(False, HoldChange.KEEP, None, "dev was not held; nothing to release.")
        return Decision(
            False,
            HoldChange.CLEAR,
            None,
            f"dev released (was held by {_code(current)}); the next push to `main` deploys to dev again. "
            f"dev still runs {_code(current)}'s code until then.",
        )

    if request.event is Event.PUSH:
        if branch != MAIN_BRANCH:
            raise ValueError(f"pushes deploy to dev only from {MAIN_BRANCH}, not {branch}")
        if current is not None and current != MAIN_BRANCH:
            return Decision(
                False,
                HoldChange.KEEP,
                current,
                f"Skipped: dev is held by branch {_code(current)}, so this push to `main` was **not** "
                "deployed to dev. To free dev, run the deploy workflow with target `release-dev`, or deploy "
                "that branch again with `release: true`; then push to `main` or run the workflow on `main`.",
            )
        return Decision(True, HoldChange.KEEP, None, "Deploying `main` to dev (dev is not held).")

    # A manual run for a branch.
    if current is not None and current != branch:
        raise HoldConflict(
            f"dev is held by branch {_code(current)}; {_code(branch)} was not deployed. Free dev first "
            "(target `release-dev`), after checking with whoever is testing that branch."
        )
    if branch == MAIN_BRANCH:
        # main never holds dev: its own pushes would then skip themselves.
        return Decision(True, HoldChange.KEEP, None, "Deploying `main` to dev (manual run; dev stays free).")
    if len(branch) > MAX_TAG_VALUE:
        raise ValueError(f"branch name longer than {MAX_TAG_VALUE} characters cannot hold dev")
    if request.release:
        if current is None:
            return Decision(True, HoldChange.KEEP, None, f"Deploying {_code(branch)} to dev; dev stays free.")
        return Decision(
            True,
            HoldChange.CLEAR,
            None,
            f"Deploying {_code(branch)} to dev and releasing dev: the next push to `main` replaces it.",
        )
    return Decision(
        True,
        HoldChange.SET,
        branch,
        f"Deploying {_code(branch)} to dev and holding dev for it: pushes to `main` skip dev until it is "
        "released (target `release-dev`, or this branch again with `release: true`).",
    )


@dataclass(frozen=True)
class ReviewStack:
    """The Pulumi stack and the AWS physical prefix of a branch's review deployment."""

    name: str
    physical_prefix: str


def _slug(branch: str) -> str:
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9]", "-", branch.lower())).strip("-")


def review_stack(branch: str) -> ReviewStack:
    """The review stack of a branch: ``review-<slug>`` and a short ``r-<slug>-<hash>`` physical prefix.

    The same branch always gets the same names (they are derived, not stored, so the delete event can find the
    stack again). The slug keeps lower-case letters, digits and single hyphens; when that loses anything
    (case, ``/``, ``_``, length), a hash of the exact branch name is appended so that ``feature/a`` and
    ``feature-a`` do not share a stack. The prefix always carries the hash because it keeps only a few
    characters of the slug.
    """
    if not branch:
        raise ValueError("branch must not be empty")
    digest = hashlib.sha256(branch.encode()).hexdigest()[:HASH_CHARS]
    slug = _slug(branch)
    short = slug[:MAX_REVIEW_SLUG].rstrip("-")
    if short == branch and short:
        name = REVIEW_STACK_PREFIX + short
    else:
        name = REVIEW_STACK_PREFIX + (f"{short}-{digest}" if short else digest)
    prefix_slug = slug[:MAX_REVIEW_PREFIX_SLUG].rstrip("-")
    prefix = REVIEW_PREFIX_START + (f"{prefix_slug}-{digest}" if prefix_slug else digest)
    return ReviewStack(name=name, physical_prefix=prefix)


# --- CLI: the glue the workflow calls ---


def _write_outputs(path: str | None, values: dict[str, str]) -> None:
    """Append ``key=value`` lines to the step's ``$GITHUB_OUTPUT`` (or print them when there is none)."""
    lines = []
    for key, value in values.items():
        if "\n" in value or "\r" in value:
            raise ValueError(f"output {key} must be one line")
        lines.append(f"{key}={value}\n")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.writelines(lines)
    else:
        sys.stdout.writelines(lines)


def _write_summary(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(text + "\n")


def _annotation(level: str, text: str) -> None:
    # Workflow command: shows on the run's page. Escape what the command syntax reserves.
    escaped = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    print(f"::{level} title=dev hold::{escaped}")


def _truthy(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no", ""):
        return False
    raise argparse.ArgumentTypeError(f"not a boolean: {value!r}")


def _cmd_decide(args: argparse.Namespace) -> int:
    tags = parse_tags(Path(args.tags_file).read_text(encoding="utf-8"))
    request = Request(
        event=Event(args.event),
        branch=args.branch,
        release=args.release,
        release_only=args.release_only,
    )
    try:
        decision = decide(request, held_by(tags))
    except HoldConflict as exc:
        _write_summary(args.summary, f"### dev\n\n:no_entry: {exc}")
        _annotation("error", str(exc))
        return 1
    _write_outputs(
        args.output,
        {
            "deploy": "true" if decision.deploy else "false",
            "hold": decision.hold.value,
            "held-by": decision.held_by_after or "",
            "hold-tag": HOLD_TAG,
        },
    )
    _write_summary(args.summary, f"### dev\n\n{decision.notice}")
    _annotation(
        "warning" if not decision.deploy and decision.hold is HoldChange.KEEP else "notice", decision.notice
    )
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    actual = held_by(parse_tags(Path(args.tags_file).read_text(encoding="utf-8")))
    expected = args.expect_held_by or None
    if actual == expected:
        return 0
    message = (
        f"the dev hold tag reads {actual!r} but this run set it to {expected!r}: "
        "the Pulumi backend did not keep the stack tag (the hold needs the Pulumi Cloud backend)"
    )
    _annotation("error", message)
    _write_summary(args.summary, f"### dev\n\n:no_entry: {message}")
    return 1


def _cmd_review_stack(args: argparse.Namespace) -> int:
    stack = review_stack(args.branch)
    _write_outputs(
        args.output, {"stack": stack.name, "prefix": stack.physical_prefix, "branch-tag": REVIEW_TAG}
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The command line: ``decide``, ``verify`` and ``review-stack`` (see each ``--help``).

    Only the CLI reads the environment, for the defaults of ``--output`` and ``--summary``.
    """
    parser = argparse.ArgumentParser(prog="dev_hold.py", description=__doc__.splitlines()[0])
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--output", default=os.environ.get("GITHUB_OUTPUT"), help="step output file (default $GITHUB_OUTPUT)"
    )
    common.add_argument(
        "--summary",
        default=os.environ.get("GITHUB_STEP_SUMMARY"),
        help="job summary file (default $GITHUB_STEP_SUMMARY)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("decide", parents=[common], help="deploy or skip, and what to do with the hold")
    p.add_argument("--event", required=True, choices=[e.value for e in Event])
    p.add_argument("--branch", required=True)
    p.add_argument("--release", type=_truthy, default=False, help="free dev after deploying (true/false)")
    p.add_argument(
        "--release-only", type=_truthy, default=False, help="free dev, deploy nothing (true/false)"
    )
    p.add_argument("--tags-file", required=True, help="output of `pulumi stack tag ls --json`")
    p.set_defaults(func=_cmd_decide)

    p = sub.add_parser("verify", parents=[common], help="check the hold tag reads what this run wrote")
    p.add_argument("--tags-file", required=True)
    p.add_argument("--expect-held-by", default="", help="branch expected to hold dev; empty: dev is free")
    p.set_defaults(func=_cmd_verify)

    p = sub.add_parser("review-stack", parents=[common], help="the review stack and prefix of a branch")
    p.add_argument("--branch", required=True)
    p.set_defaults(func=_cmd_review_stack)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (1 when dev is held by someone else or a check fails)."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (BadTags, ValueError) as exc:
        print(f"dev_hold.py: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
