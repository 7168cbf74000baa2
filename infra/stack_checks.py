"""The checks of the stack keys (``infra.config`` names them in its declarations).

Each takes the value read and the key's ``KeyCheck``, through which it reports problems and sees the
keys read before it. Values that only the person deploying knows are refused while they still hold the
documentation's examples.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from infra.stack_keys import KeyCheck
from shared.runtime_settings import LOG_LEVELS, declaration
from shared.setting import SettingProblem

# ssmKmsKey: "" (AWS's aws/ssm key), "create" (a key of this stack that only the function role and the
# deploy role may use), or the ARN of an existing customer managed key.
KMS_CREATE = "create"

# CloudWatch Logs accepts only these retention periods (days).
LOG_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192,
                      2557, 2922, 3288, 3653)  # fmt: skip

# Examples the documentation uses: a value still equal to one of them was copied, not chosen.
EXAMPLE_APP_IDS = frozenset({"123456", "654321"})
EXAMPLE_IDS = frozenset(
    {
        "vpc-0123456789abcdef0",
        "subnet-0aaaaaaaaaaaaaaaa",
        "subnet-0bbbbbbbbbbbbbbbb",
        "sg-0cccccccccccccccc",
    }
)
# Reserved for documentation (RFC 2606 / 6761): no real host ends in these.
_EXAMPLE_HOST = re.compile(r"(^|\.)(example|invalid|test|localhost)$|(^|\.)example\.(com|net|org)$")

_PREFIX_RE = re.compile(r"^[a-z][a-z0-9-]{0,19}$")
_PARAM_RE = re.compile(r"^/?[A-Za-z0-9_.\-/]+$")
_APP_ID_RE = re.compile(r"^[1-9][0-9]{0,11}$")
_EMAIL_RE = re.compile(r"^[^@\s]+@([^@\s]+\.[^@\s]+)$")
_ROLE_NAME_RE = re.compile(r"^[\w+=,.@-]{1,64}$")
_AMI_ID_RE = re.compile(r"^ami-[0-9a-f]{8,17}$")
_AL2023_NAME_RE = re.compile(r"^al2023-ami-2023\.\d+\.\d{8}\.\d+-kernel-[\d.]+-(?P<arch>arm64|x86_64)$")
_KMS_ARN_RE = re.compile(r"^arn:aws[\w-]*:kms:[a-z0-9-]+:\d{12}:key/[0-9a-f-]{36}$")
_RESOURCE_ID_RE = {
    "vpcId": re.compile(r"^vpc-[0-9a-f]{8,17}$"),
    "subnetIds": re.compile(r"^subnet-[0-9a-f]{8,17}$"),
    "securityGroupIds": re.compile(r"^sg-[0-9a-f]{8,17}$"),
}


def is_example_host(host: str) -> bool:
    return bool(_EXAMPLE_HOST.search(host.strip().lower().rstrip(".")))


def physical_prefix(value: str, k: KeyCheck) -> None:
    k.check(bool(_PREFIX_RE.match(value)), f"must match {_PREFIX_RE.pattern}", "d-st")


def network_ids(groups: tuple[str, ...], k: KeyCheck) -> None:
    """The ids of an existing VPC, checked with the mode: required and real in ``existing``, absent in
    ``nat``."""
    mode, vpc_id, subnets = k.text_of("networkMode"), k.text_of("vpcId"), k.strings_of("subnetIds")
    if mode == "existing":
        if vpc_id is None:
            k.problem("is empty; networkMode existing needs the VPC's id", "vpc-…", key="vpcId")
        if len(subnets) < 2:
            k.problem("needs subnets in at least two AZs (networkMode existing)", '["subnet-…","subnet-…"]',
                      key="subnetIds")  # fmt: skip
        for key, ids in (("vpcId", (vpc_id,) if vpc_id else ()), ("subnetIds", subnets),
                         ("securityGroupIds", groups)):  # fmt: skip
            for value in ids:
                if value in EXAMPLE_IDS:
                    k.problem(f"{value} is the documentation's example", "<your id>", key=key)
                elif not _RESOURCE_ID_RE[key].match(value):
                    k.problem(f"{value!r} is not an id of that kind", "<your id>", key=key)
    elif vpc_id or subnets or groups:
        # Silently ignoring them would deploy into a network nobody asked for.
        k.problem(f"is {mode}, but vpcId/subnetIds/securityGroupIds are set", "existing", key="networkMode")


def proxy_url(value: str | None, k: KeyCheck) -> None:
    if value is not None:
        url(value, k, ("http", "https"), "http://<your squid>:3128")


def github_api_url(value: str, k: KeyCheck) -> None:
    default = declaration("github_api_url").default
    url(value, k, ("https",), default)


def url(value: str, k: KeyCheck, schemes: tuple[str, ...], example: str) -> None:
    parts = urlsplit(value)
    if parts.scheme not in schemes or not parts.hostname:
        k.problem(f"{value!r} is not a {'/'.join(schemes)} URL", example)
    elif is_example_host(parts.hostname):
        k.problem(f"{parts.hostname} is an example host", example)


def no_example_hosts(hosts: tuple[str, ...], k: KeyCheck) -> None:
    for host in hosts:
        k.check(not is_example_host(host), f"{host!r} is an example host", "<host>,<host>")


def app_id(value: str | None, k: KeyCheck) -> None:
    if value is not None:
        k.check(bool(_APP_ID_RE.match(value)), "must be the App's numeric id", "<App id>")
        k.check(value not in EXAMPLE_APP_IDS, f"{value} is the documentation's example", "<your App id>")


def app_id_param(value: str | None, k: KeyCheck) -> None:
    """Read only without githubAppId, so the function needs it."""
    if value is None:
        k.problem("is empty and so is githubAppId: the function needs the App id",
                  "/<prefix>/blog-api/github-app-id")  # fmt: skip
    else:
        parameter_name(value, k)


def parameter_name(value: str, k: KeyCheck) -> None:
    k.check(
        not value.startswith("arn:") and bool(_PARAM_RE.match(value)),
        "must be an SSM parameter name such as /d-st/blog-api/x", "/<prefix>/blog-api/<name>",
    )  # fmt: skip


def kms_key(value: str | None, k: KeyCheck) -> None:
    if value not in (None, KMS_CREATE):
        k.check(bool(_KMS_ARN_RE.match(value or "")), f'must be empty, "{KMS_CREATE}" or a KMS key ARN',
                KMS_CREATE)  # fmt: skip


def operator_role(value: str | None, k: KeyCheck) -> None:
    if k.text_of("ssmKmsKey") == KMS_CREATE:
        k.check(
            value is not None and bool(_ROLE_NAME_RE.match(value)),
            "must name the IAM role that writes the parameters (it may use the parameters' key)",
            "<prefix>-blog-api-operator",
        )


def instance_architecture(instance_type: str) -> str:
    """``t4g.nano`` → ``arm64`` (Graviton families end in ``g``, ``gd``, ``gn``), else ``x86_64``."""
    family = instance_type.split(".", 1)[0]
    return "arm64" if family.rstrip("dn").endswith("g") else "x86_64"


def nat_image(value: str, k: KeyCheck) -> None:
    """An ``ami-`` id, or an AL2023 image name whose architecture is the NAT instance type's."""
    if _AMI_ID_RE.match(value):
        return
    match = _AL2023_NAME_RE.match(value)
    if match is None:
        k.problem(
            "must be an ami-… id or an Amazon Linux 2023 image name", "al2023-ami-<release>-kernel-6.1-arm64"
        )
        return
    wanted = instance_architecture(k.text_of("natInstanceType") or "")
    k.check(
        match.group("arch") == wanted,
        f"is an {match.group('arch')} image, but natInstanceType needs {wanted}",
        value.removesuffix(match.group("arch")) + wanted,
    )


def alarm_emails(emails: tuple[str, ...], k: KeyCheck) -> None:
    for email in emails:
        match = _EMAIL_RE.match(email)
        k.check(match is not None, f"{email!r} is not an e-mail address", '["you@…"]')
        if match is not None:
            k.check(not is_example_host(match.group(1)), f"{email!r} is an example address",
                    '["<you>@<your domain>"]')  # fmt: skip


def custom_domain(value: str | None, k: KeyCheck) -> None:
    certificate = k.text_of("customDomainCertificateArn")
    k.check(bool(value) == bool(certificate), "and customDomainName go together (set both or neither)",
            "arn:aws:acm:…", key="customDomainCertificateArn")  # fmt: skip
    if value is not None:
        k.check(not is_example_host(value), "is an example host", "<api.your-domain>")


def log_level(value: str, k: KeyCheck) -> None:
    k.check(value in LOG_LEVELS, f"must be one of {', '.join(LOG_LEVELS)}", "INFO")


def site_url(value: str | None, k: KeyCheck) -> None:
    """siteUrl: what the function's ``SITE_URL`` accepts, and https with a real host (the feed's links)."""
    if value is not None and _as_runtime_setting("site_url", value, k, "https://blog.example.com"):
        url(value.rstrip("/"), k, ("https",), "https://blog.example.com")


def cors_allowed_origins(value: str | None, k: KeyCheck) -> None:
    """corsAllowedOrigins: what the function's ``CORS_ALLOWED_ORIGINS`` accepts (``*``, or origins
    without example hosts)."""
    if value is None or not _as_runtime_setting("cors_allowed_origins", value, k, "https://blog.example.com"):
        return
    if value.strip() == "*":
        return
    for origin in value.split(","):
        url(origin.strip(), k, ("https", "http"), "https://blog.example.com")


def ogp_image_url_template(value: str | None, k: KeyCheck) -> None:
    """ogpImageUrlTemplate: what ``OGP_IMAGE_URL_TEMPLATE`` accepts, on a real host."""
    example = "https://<your card service>/og?title={title}"
    if value is not None and _as_runtime_setting("ogp_image_url_template", value, k, example):
        url(value.replace("{", "").replace("}", ""), k, ("https", "http"), example)


def ogp_default_image_url(value: str | None, k: KeyCheck) -> None:
    """ogpDefaultImageUrl: an http(s) URL on a real host."""
    example = "https://<your blog>/og.png"
    if value is not None and _as_runtime_setting("ogp_default_image_url", value, k, example):
        url(value, k, ("https", "http"), example)


def cloudinary_name(value: str | None, k: KeyCheck) -> None:
    if value is not None:
        _as_runtime_setting("cloudinary_cloud_name", value, k, "<cloud name>")


def cloudinary_api_secret_param(value: str | None, k: KeyCheck) -> None:
    """cloudinaryApiSecretParam: a parameter name; the three Cloudinary keys are set together."""
    if value is not None:
        parameter_name(value, k)
    cloud, public_id = k.text_of("cloudinaryCloudName"), k.text_of("cloudinaryOgpPublicId")
    k.check(
        bool(cloud) == bool(public_id) == (value is not None),
        "goes with cloudinaryCloudName and cloudinaryOgpPublicId: set the three, or none",
        "/<prefix>/blog-api/cloudinary-api-secret",
    )


def embedding_provider(value: str | None, k: KeyCheck) -> None:
    """embeddingProvider: what ``EMBEDDING_PROVIDER`` accepts."""
    if value is not None:
        _as_runtime_setting("embedding_provider", value, k, "bedrock")


def embedding_url(value: str | None, k: KeyCheck) -> None:
    """embeddingUrl: an https URL on a real host (it may carry the key); ``service`` and ``openai`` need
    one."""
    example = "https://<your embedding service>"
    provider = (k.text_of("embeddingProvider") or "").lower()
    if value is None:
        k.check(provider not in ("service", "openai"), f"is needed by embeddingProvider {provider}", example)
    elif _as_runtime_setting("embedding_url", value, k, example):
        url(value.rstrip("/"), k, ("https",), example)


def embedding_model(value: str | None, k: KeyCheck) -> None:
    """embeddingModel: an id without spaces (Bedrock's model ids go into the role's policy)."""
    if value is not None:
        k.check(bool(re.fullmatch(r"[A-Za-z0-9._:/-]+", value)), "must be a model id without spaces",
                "amazon.titan-embed-text-v2:0")  # fmt: skip


def optional_parameter_name(value: str | None, k: KeyCheck) -> None:
    if value is not None:
        parameter_name(value, k)


def _as_runtime_setting(attribute: str, value: str, k: KeyCheck, example: str) -> bool:
    """Whether the function would start with ``value`` in the setting ``attribute`` (its own parse and
    check); else the problem is reported here, at deploy time, rather than by a function that fails."""
    spec = declaration(attribute)
    try:
        parsed = spec.parse(value)
    except SettingProblem as problem:
        k.problem(str(problem), example)
        return False
    why = spec.check(parsed) if spec.check is not None and parsed is not None else None
    if why is not None:
        k.problem(why, example)
    return why is None
