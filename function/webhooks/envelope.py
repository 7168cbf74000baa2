"""The self-invoke envelope: what the accept path hands to the worker.

Standard form: the raw delivery, base64, with GitHub's own signature, so ``/events`` re-verifies
exactly what GitHub signed. Lambda's asynchronous payload limit is 1 MB and base64 grows a body by a
third, so a big delivery is sent in a compact form instead: only the fields the worker needs, signed
by us with the same webhook secret over a canonical JSON encoding.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any, TypeGuard

from function.errors import BadRequest, InvalidSignature
from function.webhooks import signature
from shared.names import ASYNC_INVOKE_PAYLOAD_LIMIT

KIND_STANDARD = "github-webhook"
KIND_COMPACT = "github-webhook-compact"
# Leave room for Lambda's own framing of the payload.
PAYLOAD_BUDGET = ASYNC_INVOKE_PAYLOAD_LIMIT - 4096


# Installation ids are positive and stored in a signed 64-bit column; anything outside that range is a
# malformed delivery (a 4xx), not a database error (SQLite raises OverflowError for such a value).
MAX_INSTALLATION_ID = 2**63 - 1


def is_installation_id(value: Any) -> TypeGuard[int]:
    """True for an int (not a bool) that can be a GitHub App installation id."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_INSTALLATION_ID


# The longest event name and delivery id a delivery may carry (the deliveries table's columns).
EVENT_MAX_CHARS = 64
DELIVERY_ID_MAX_CHARS = 100


@dataclass(frozen=True)
class PushRef:
    """What the worker needs from a push delivery."""

    repository: str  # "owner/name"
    branch: str  # the branch pushed to (already checked against the tracked one)
    installation_id: int
    after: str | None = None  # head SHA in the delivery; the worker re-reads the head anyway

    def to_json(self) -> dict[str, Any]:
        return {
            "repository": self.repository,
            "branch": self.branch,
            "installationId": self.installation_id,
            "after": self.after,
        }

    @classmethod
    def from_json(cls, data: Any) -> PushRef:
        if not isinstance(data, dict):
            raise BadRequest("compact envelope: 'push' must be an object")
        repo, branch, inst, after = (
            data.get("repository"),
            data.get("branch"),
            data.get("installationId"),
            data.get("after"),
        )
        if not isinstance(repo, str) or not isinstance(branch, str):
            raise BadRequest("compact envelope: 'repository' and 'branch' must be strings")
        if not is_installation_id(inst):
            raise BadRequest("compact envelope: 'installationId' must be a positive 64-bit integer")
        if after is not None and not isinstance(after, str):
            raise BadRequest("compact envelope: 'after' must be a string")
        return cls(repository=repo, branch=branch, installation_id=inst, after=after)


@dataclass(frozen=True)
class Envelope:
    """A verified envelope. Exactly one of ``body`` (standard) or ``push`` (compact) is set."""

    event: str
    delivery: str
    received_at: str | None
    body: bytes | None = None
    push: PushRef | None = None


def _canonical(data: dict[str, Any]) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _compact_signature(secret: str, fields: dict[str, Any]) -> str:
    return "sha256=" + hmac.new(secret.encode(), _canonical(fields), hashlib.sha256).hexdigest()


def build(
    *,
    secret: str,
    event: str,
    delivery: str,
    signature_header: str,
    body: bytes,
    push: PushRef,
    received_at: str,
    budget: int = PAYLOAD_BUDGET,
) -> bytes:
    """Serialise the envelope: the standard form when it fits ``budget`` bytes, else the compact one."""
    standard = json.dumps(
        {
            "kind": KIND_STANDARD,
            "event": event,
            "delivery": delivery,
            "signature": signature_header,
            "body": base64.b64encode(body).decode("ascii"),
            "receivedAt": received_at,
        },
        separators=(",", ":"),
    ).encode()
    if len(standard) <= budget:
        return standard
    return build_compact(secret=secret, event=event, delivery=delivery, push=push, received_at=received_at)


def build_compact(*, secret: str, event: str, delivery: str, push: PushRef, received_at: str) -> bytes:
    """The compact form: only what the worker needs, signed with the webhook secret."""
    fields: dict[str, Any] = {
        "kind": KIND_COMPACT,
        "event": event,
        "delivery": delivery,
        "push": push.to_json(),
        "receivedAt": received_at,
    }
    fields["signature"] = _compact_signature(secret, fields)
    return json.dumps(fields, separators=(",", ":")).encode()


def is_compact(payload: bytes) -> bool:
    return len(payload) < 4096 and b'"kind":"' + KIND_COMPACT.encode() + b'"' in payload


def parse_and_verify(secret: str, raw: bytes) -> Envelope:
    """Parse an envelope and prove it came from us or from GitHub; nothing else is accepted.

    Raises BadRequest for anything that is not an envelope and InvalidSignature for a wrong signature.
    """
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest("the event is not valid JSON") from exc
    if not isinstance(data, dict):
        raise BadRequest("the event is not an envelope object")
    kind = data.get("kind")
    event, delivery, received_at = data.get("event"), data.get("delivery"), data.get("receivedAt")
    if not isinstance(event, str) or not event or not isinstance(delivery, str):
        raise BadRequest("envelope needs string 'event' and 'delivery'")
    if len(event) > EVENT_MAX_CHARS or not 0 < len(delivery) <= DELIVERY_ID_MAX_CHARS:
        # The deliveries table's columns; the webhook route cuts GitHub's headers to these lengths.
        raise BadRequest(
            f"envelope 'event' is at most {EVENT_MAX_CHARS} characters, "
            f"'delivery' 1 to {DELIVERY_ID_MAX_CHARS}"
        )
    if received_at is not None and not isinstance(received_at, str):
        raise BadRequest("envelope 'receivedAt' must be a string")
    sig = data.get("signature")
    if not isinstance(sig, str):
        raise InvalidSignature("envelope signature is missing")

    if kind == KIND_STANDARD:
        encoded = data.get("body")
        if not isinstance(encoded, str):
            raise BadRequest("envelope 'body' must be a base64 string")
        try:
            body = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise BadRequest("envelope 'body' is not valid base64") from exc
        signature.verify(secret, body, sig)
        return Envelope(event=event, delivery=delivery, received_at=received_at, body=body)

    if kind == KIND_COMPACT:
        fields = {k: v for k, v in data.items() if k != "signature"}
        expected = _compact_signature(secret, fields).encode()
        if not hmac.compare_digest(expected, sig.encode("utf-8", "replace")):
            raise InvalidSignature("compact envelope signature does not match")
        return Envelope(
            event=event, delivery=delivery, received_at=received_at, push=PushRef.from_json(data.get("push"))
        )

    raise BadRequest("unknown envelope kind")
