"""Reading a GitHub delivery: decode its payload and decide what it asks of us."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import parse_qs

from function.errors import BadRequest
from function.webhooks.envelope import Envelope, PushRef, is_installation_id

FORM = "application/x-www-form-urlencoded"
# No git ref or GitHub repository name holds a control character, and a lone surrogate (what JSON's
# "\udcbf" escape decodes to) cannot even be encoded as UTF-8 to be stored, logged or requested.
_NOT_IN_A_NAME = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def decode_payload(body: bytes, content_type: str | None = None) -> object:
    """The delivery's JSON, from either of GitHub's content types.

    Form deliveries carry the JSON in a ``payload=`` field. When the content type is unknown (an
    envelope does not carry it) the form is recognised by that prefix, which JSON can never start with.
    """
    is_form = (content_type or "").split(";")[0].strip().lower() == FORM or body.startswith(b"payload=")
    try:
        if is_form:
            fields = parse_qs(body.decode("utf-8"), strict_parsing=False, max_num_fields=50)
            values = fields.get("payload")
            if not values:
                raise BadRequest("form-encoded delivery has no 'payload' field")
            return json.loads(values[0])
        return json.loads(body)
    except BadRequest:
        raise
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise BadRequest("the delivery body is not valid JSON") from exc


@dataclass(frozen=True)
class Skip:
    reason: str


def _field(obj: object, key: str) -> object:
    return obj.get(key) if isinstance(obj, dict) else None


def classify_push(payload: object, tracked_branch: str | None) -> PushRef | Skip:
    """Decide whether a push delivery should sync articles.

    Tags, branch deletions and other branches are skipped (200). A push whose shape is wrong for a
    push (``"ref": 5``, no repository, no installation) is a bad request (400): it can never work.
    """
    if not isinstance(payload, dict):
        raise BadRequest("push payload must be a JSON object")
    ref = payload.get("ref")
    if not isinstance(ref, str):
        raise BadRequest("push payload has no string 'ref'")
    _check_name("ref", ref)
    if ref.startswith("refs/tags/"):
        return Skip(f"tag push ({ref[len('refs/tags/') :]})")
    if not ref.startswith("refs/heads/"):
        return Skip(f"not a branch: {ref[:200]}")
    if payload.get("deleted") is True:
        return Skip("branch deleted")
    repository = payload.get("repository")
    full_name = _field(repository, "full_name")
    if not isinstance(full_name, str) or "/" not in full_name:
        raise BadRequest("push payload has no repository.full_name")
    _check_name("repository.full_name", full_name)
    branch = ref[len("refs/heads/") :]
    default_branch = _field(repository, "default_branch") or _field(repository, "master_branch")
    tracked = tracked_branch or (default_branch if isinstance(default_branch, str) else None)
    if tracked is None:
        raise BadRequest("push payload has no repository.default_branch and ARTICLE_BRANCH is not set")
    _check_name("repository.default_branch", tracked)
    if branch != tracked:
        return Skip(f"push to {branch[:200]}, not the tracked branch {tracked}")
    installation_id = _field(payload.get("installation"), "id")
    if not is_installation_id(installation_id):
        raise BadRequest("push payload has no valid installation.id (is the webhook sent by the GitHub App?)")
    after = payload.get("after")
    # Same range as an installation id (positive, signed 64-bit); a push without one is matched by name.
    repository_id = _field(repository, "id")
    return PushRef(
        repository=full_name,
        branch=branch,
        installation_id=installation_id,
        # Only a hint (the head the push reported): one that could be no commit SHA is dropped.
        after=after if isinstance(after, str) and not _NOT_IN_A_NAME.search(after) else None,
        repository_id=repository_id if is_installation_id(repository_id) else None,
    )


def _check_name(field: str, value: str) -> None:
    if _NOT_IN_A_NAME.search(value):
        raise BadRequest(f"push payload's {field} holds a control character or a lone surrogate")


@dataclass(frozen=True)
class DeliveryInfo:
    """What the worker is told of the delivery it runs (ids and times; never a token)."""

    delivery_id: str
    event: str
    received_at: datetime


def push_of_envelope(env: Envelope, tracked_branch: str | None) -> PushRef | Skip:
    """The push a verified envelope carries, decided once: a compact envelope names it (the accept path
    classified it and signed the result); a standard one carries GitHub's signed body, classified here
    as the accept path did (the worker trusts nothing of the envelope that is not signed). Any other
    event is a Skip."""
    if env.event != "push":
        return Skip(f"event {env.event!r} is not handled")
    if env.push is not None:
        return env.push
    return classify_push(decode_payload(env.body or b""), tracked_branch)
