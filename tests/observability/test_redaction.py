"""Redaction by shape as well as by value, in log lines (messages, fields, tracebacks) and error bodies."""

from __future__ import annotations

import io
import json
import logging

import pytest

from function.api.http_errors import error_response
from function.observability.logs import REDACTED, Redactor, configure_logging

PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n-----END RSA PRIVATE KEY-----"
JWT = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiIxMjM0NSJ9.c2lnbmF0dXJlLWJ5dGVz-_x"
SHAPES = {
    "installation token": ("ghs_" + "a1B2" * 9, "ghs_"),
    "user token": ("ghu_" + "Z" * 36, "ghu_"),
    "personal token": ("ghp_" + "9" * 36, "ghp_"),
    "oauth token": ("gho_" + "x" * 36, "gho_"),
    "fine-grained token": ("github_pat_11ABCDEFG0" + "y" * 60, "github_pat_"),
    "jwt": (JWT, "eyJ"),
    "pem": (PEM, "MIIE"),
    "authorization header": ("Authorization: Bearer opaque-value-123", "opaque-value-123"),
    "authorization in a dict": ("{'Authorization': 'token opaque-value-123'}", "opaque-value-123"),
    "url password": ("mysql://blog:s3cr3t-pw@db.example:4000/blog", "s3cr3t-pw"),
    "download token": ("https://raw.example/a.md?token=AAAB1234CCC", "AAAB1234CCC"),
}


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_secret_shapes_are_redacted_in_text(case: str) -> None:
    text, leak = SHAPES[case]
    out = Redactor().text(f"before {text} after")
    assert leak not in out and REDACTED in out
    assert out.startswith("before ")


def test_a_pem_block_cut_short_is_still_redacted() -> None:
    assert "MIIE" not in Redactor().text("key: " + PEM[:60])


def test_innocent_text_is_left_alone() -> None:
    text = "Synced 3 articles from octo/blog at 1f2e3d; see https://blog.example/users/alice?page=2"
    assert Redactor(["a-long-secret"]).text(text) == text


def _line(logger_call: object) -> dict[str, object]:
    stream = io.StringIO()
    configure_logging("INFO", ["configured-secret-value"], stream)
    log = logging.getLogger("function.test_redaction")
    try:
        raise RuntimeError(f"GitHub said no to {SHAPES['installation token'][0]}")
    except RuntimeError:
        log.exception(
            "Failed with configured-secret-value",
            extra={"headers": {"Authorization": "token " + SHAPES["personal token"][0]}, "key": PEM},
        )
    [line] = stream.getvalue().splitlines()
    data: dict[str, object] = json.loads(line)
    return data


def test_messages_fields_and_tracebacks_are_redacted() -> None:
    line = _line(None)
    text = json.dumps(line)
    for leak in ("configured-secret-value", "ghs_", "ghp_", "MIIE"):
        assert leak not in text
    assert "RuntimeError" in str(line["exception"])
    assert line["headers"] == {"Authorization": REDACTED}


def test_error_bodies_are_redacted() -> None:
    from flask import Flask

    with Flask(__name__).app_context():
        response, status = error_response(503, "UNAVAILABLE", "GitHub refused " + SHAPES["jwt"][0])
    assert status == 503
    assert "eyJ" not in response.get_data(as_text=True)
