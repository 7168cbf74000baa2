"""What the bootstrap reads from its configuration, and the fixed map of stacks to GitHub environments."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from infra.bootstrap.policies import StackNames

GITHUB_OIDC_URL = "https://token.actions.githubusercontent.com"
_REPOSITORY_RE = re.compile(r"^[A-Za-z0-9-]+/[A-Za-z0-9._-]+$")
_PRINCIPAL_RE = re.compile(r"^arn:aws[\w-]*:(iam|sts)::\d{12}:[\w+=,.@/-]+$")
_OIDC_ARN_RE = re.compile(r"^arn:aws[\w-]*:iam::\d{12}:oidc-provider/token\.actions\.githubusercontent\.com$")
# The documentation's example repository: a value still equal to it was copied, not chosen.
EXAMPLE_REPOSITORIES = frozenset({"alice/blog-api", "<owner>/<repo>"})


@dataclass(frozen=True)
class StackRoleSpec:
    """One stack of the project: its prefixes, and which GitHub environments deploy and preview it."""

    stack: str
    prefixes: tuple[str, ...]
    deploy_environments: tuple[str, ...]
    preview_environments: tuple[str, ...]

    @property
    def prefix(self) -> str:
        return self.prefixes[0]

    def names(self, account_id: str, region: str) -> StackNames:
        return StackNames(account_id=account_id, region=region, prefixes=self.prefixes)


# The deploy workflow's environments (.github/workflows/deploy.yaml). Review stacks are deployed with
# dev's role (their prefixes start with r-), and read dev's parameters.
STACKS = (
    StackRoleSpec("dev", ("d-st", "r-*"), ("dev", "review"), ("preview",)),
    StackRoleSpec("prod", ("p-st",), ("prod",), ("prod-preview",)),
)


class ConfigSource(Protocol):
    def get(self, key: str) -> str | None: ...
    def get_object(self, key: str) -> Any: ...


class SettingsError(ValueError):
    """One line per unusable setting, each with the command that fixes it."""


@dataclass(frozen=True)
class BootstrapSettings:
    repository: str
    operator_principals: tuple[str, ...]
    oidc_provider_arn: str | None

    @classmethod
    def load(cls, cfg: ConfigSource) -> BootstrapSettings:
        problems: list[str] = []
        repository = (cfg.get("githubRepository") or "").strip()
        if not _REPOSITORY_RE.match(repository) or repository in EXAMPLE_REPOSITORIES:
            problems.append(
                f"blog-api-bootstrap:githubRepository is {repository!r}; it must be the repository that "
                "deploys (owner/name); fix: pulumi config set githubRepository '<owner>/<repo>'"
            )
        principals = cfg.get_object("operatorPrincipals") or []
        if not isinstance(principals, list) or not all(
            isinstance(p, str) and _PRINCIPAL_RE.match(p) for p in principals
        ):
            problems.append(
                "blog-api-bootstrap:operatorPrincipals must be a list of IAM ARNs (empty: the account's "
                "principals allowed to assume it by their own policies); fix: pulumi config set "
                "operatorPrincipals '[\"arn:aws:iam::<account>:role/<your admin role>\"]'"
            )
            principals = []
        provider = (cfg.get("oidcProviderArn") or "").strip() or None
        if provider is not None and not _OIDC_ARN_RE.match(provider):
            problems.append(
                "blog-api-bootstrap:oidcProviderArn must be the ARN of the account's "
                "token.actions.githubusercontent.com provider, or empty to create it; fix: "
                "pulumi config rm oidcProviderArn"
            )
        if problems:
            raise SettingsError("\n".join(problems))
        return cls(repository=repository, operator_principals=tuple(principals), oidc_provider_arn=provider)
