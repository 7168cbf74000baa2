from __future__ import annotations

import pytest

from function.errors import InvalidSignature
from function.webhooks.signature import sign, verify

# GitHub's documented test vector (docs: "Validating webhook deliveries").
GITHUB_SECRET = "It's a Secret to Everybody"
GITHUB_BODY = b"Hello, World!"
GITHUB_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def test_sign_matches_githubs_documented_vector() -> None:
    assert sign(GITHUB_SECRET, GITHUB_BODY) == GITHUB_SIGNATURE


def test_verify_accepts_githubs_documented_vector() -> None:
    verify(GITHUB_SECRET, GITHUB_BODY, GITHUB_SIGNATURE)


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "sha256=" + "0" * 64,
        GITHUB_SIGNATURE.replace("sha256=", "sha1="),
        GITHUB_SIGNATURE[:-1],
        GITHUB_SIGNATURE + "00",
        "sha256=ünïcödé",
        "x" * 8000,
    ],
)
def test_verify_rejects_missing_or_wrong_signatures(header: str | None) -> None:
    with pytest.raises(InvalidSignature):
        verify(GITHUB_SECRET, GITHUB_BODY, header)


def test_verify_rejects_a_body_changed_by_one_byte() -> None:
    with pytest.raises(InvalidSignature):
        verify(GITHUB_SECRET, b"Hello, World?", GITHUB_SIGNATURE)
