"""Nobody gets in, nothing leaks: a whole sync at DEBUG (with faults, refusals and retries) leaves no
secret in any log line or response body; database errors do not echo the password; article HTML served
by the read route cannot run script."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from typing import Any

import pytest
from flask import Flask

from function.app import create_app
from function.aws.dispatch import dispatch
from function.errors import ConfigError, PassThroughFailed
from function.services import Services
from function.settings import Settings
from tests.kit.answers import contract_counts
from tests.kit.blog_checks import TREES, blob_path, served
from tests.kit.blog_fixtures import Blog, article
from tests.kit.deliveries import SECRET, github_headers, push_payload
from tests.kit.github_fixtures import INSTALLATION_ID, REPO, GitHubClientParts
from tests.kit.mariadb import server_from_url


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """The apps built here configure the root logger at DEBUG: put it back afterwards."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    yield
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)


def debug_apps(blog: Blog) -> tuple[Flask, Flask, Settings]:
    """Inline and Lambda apps on the blog's database and stand-in, built as on start-up with
    LOG_LEVEL=DEBUG (so their logs go through the app's own JSON formatter and redaction)."""
    settings = Settings(**{**blog.settings.__dict__, "log_level": "DEBUG"})
    inline = create_app(services=Services(settings, source=blog.source, database=blog.db))
    on_lambda = Settings(**{**settings.__dict__, "lambda_function_name": "d-st-blog-api"})
    lambda_app = create_app(
        services=Services(on_lambda, source=blog.source, database=blog.db, invoker=blog.invoker)
    )
    return inline, lambda_app, settings


def test_whole_sync_at_debug_leaks_no_secret_to_logs_or_answers(
    blog: Blog, capsys: pytest.CaptureFixture[str], restore_logging: None
) -> None:
    # GIVEN the app at DEBUG, logging to stderr as on Lambda, and a repository with a blob GitHub
    # refuses (502) and a file that is not UTF-8, so failure paths log too
    inline, lambda_app, settings = debug_apps(blog)
    files = {
        "articles/a.md": article("A"),
        "articles/b.md": article("B"),
        "articles/latin1.md": b"---\ntitle: x\n---\ncaf\xe9\n",
    }
    blog.github.set_files(files)
    blog.github.fail(blob_path(files["articles/b.md"]), 502, times=None)
    answers: list[str] = []

    def push(app: Flask, *, delivery: str, secret: str = SECRET) -> Any:
        body = json.dumps(push_payload(installation_id=INSTALLATION_ID, repo=REPO)).encode()
        answer = app.test_client().post(
            "/webhooks/github", data=body, headers=github_headers(body, delivery=delivery, secret=secret)
        )
        answers.append(answer.get_data(as_text=True))
        return answer

    # WHEN a delivery is processed inline, then on Lambda through the pass-through (its envelope holds
    # the delivery's signature), after the installation token was revoked, then one with a forged
    # signature, one while GitHub's tree listing fails, and /events is probed over HTTP
    assert push(inline, delivery="inline").get_json()["failed"] == 2
    blog.github.revoke_tokens()
    assert push(lambda_app, delivery="lambda").status_code == 202
    with pytest.raises(PassThroughFailed) as retried:  # b's 502 is worth a retry
        dispatch(lambda_app, json.loads(blog.invoker.payloads[-1]), None)
    answers.append(str(retried.value))
    assert push(inline, delivery="forged", secret="not-the-secret").status_code == 401
    blog.github.fail(TREES, 502, times=None)
    assert push(inline, delivery="tree-down").status_code == 503
    answers.append(lambda_app.test_client().post("/events", json={"x": SECRET}).get_data(as_text=True))
    logs = capsys.readouterr().err

    # THEN the run logged at DEBUG (HTTP requests, token issue, failures) ...
    lines = [json.loads(line) for line in logs.splitlines() if line.startswith("{")]
    assert any(line["level"] == "DEBUG" for line in lines)
    assert any(line["message"] == "Article failed" for line in lines)
    # ... and no secret is in any log line or answer: the webhook secret, the App's private key (whole
    # or any line of it), every installation token and App JWT GitHub saw, the database password
    tokens = {
        r.headers["authorization"].partition(" ")[2]
        for r in blog.github.requests
        if r.headers.get("authorization")
    }
    assert any(t.startswith("ghs_") for t in tokens) and len(tokens) >= 3  # JWTs and two tokens
    secrets = {*settings.secrets(), *tokens}
    assert settings.github_private_key is not None
    secrets |= {
        line for line in settings.github_private_key.splitlines() if "PRIVATE KEY" not in line and line
    }
    everything = [logs, *answers]
    leaked = {s[:12] + "…" for s in secrets for text in everything if s in text}
    assert not leaked, f"secrets found in logs or answers: {leaked}"


def test_a_secret_that_reaches_a_log_call_is_redacted(
    blog: Blog, capsys: pytest.CaptureFixture[str], restore_logging: None
) -> None:
    # GIVEN the app's own logging (LOG_LEVEL=DEBUG), the safety net behind "never log a secret"
    _, _, settings = debug_apps(blog)
    assert settings.github_private_key is not None
    pem_line = settings.github_private_key.splitlines()[1]
    # WHEN code logs the webhook secret, or a line of the private key, by mistake
    log = logging.getLogger("function.reliability_probe")
    log.warning("oops %s", SECRET, extra={"key": pem_line})
    try:
        raise RuntimeError(f"failed with {SECRET}")
    except RuntimeError:
        log.exception("and with a traceback")
    logs = capsys.readouterr().err
    # THEN every line carries "[redacted]" in their place
    assert SECRET not in logs and pem_line not in logs
    assert logs.count("[redacted]") >= 3


@pytest.mark.mysql
def test_database_with_a_wrong_password_answers_5xx_without_echoing_it(
    mysql_server: str,
    make_github_source: Callable[..., GitHubClientParts],
    capsys: pytest.CaptureFixture[str],
    restore_logging: None,
) -> None:
    # GIVEN the app pointed at the real MariaDB with a password that is wrong
    server = server_from_url(mysql_server)
    wrong = "wrong-pw-5be0d0c2"
    url = f"mysql://{server.user}:{wrong}@{server.host}:{server.port}/blog"
    settings = Settings(webhook_secret=SECRET, github_app_id="12345", database_url=url)
    app = create_app(services=Services(settings, source=make_github_source().source))
    body = json.dumps(push_payload(installation_id=INSTALLATION_ID, repo=REPO)).encode()
    # WHEN a push is delivered
    answer = app.test_client().post("/webhooks/github", data=body, headers=github_headers(body))
    # THEN GitHub gets a 5xx it can redeliver, and neither the answer nor the logs hold the password
    assert answer.status_code == 503  # refused credentials are a dependency failure, not a bug
    assert answer.is_json and set(answer.get_json()) == {"error", "message"}
    assert wrong not in answer.get_data(as_text=True)
    assert wrong not in capsys.readouterr().err


def test_database_url_with_an_unencoded_slash_in_the_password_leaks_no_part_of_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN a DATABASE_URL whose password holds a "/" that was not URL-encoded (common in generated
    # passwords): the URL parser then reads the password's first half as the port
    url = "mysql://blogapi:Pa55-w0rd-half/other-half@127.0.0.1:3306/blog"
    # WHEN the app's settings are read THEN it refuses to start, saying what is wrong with the URL,
    # and no part of the password is in the message or the output
    with pytest.raises(ConfigError) as refused:
        Settings.from_env({"GITHUB_WEBHOOK_SECRET": SECRET, "DATABASE_URL": url}, lambda wanted: {})
    assert "URL-encode" in str(refused.value)
    output = capsys.readouterr()
    for part in ("Pa55-w0rd-half", "other-half"):
        assert part not in str(refused.value) and part not in output.err + output.out


XSS = """---
title: "XSS <script>alert('title')</script>"
publish: true
---
<script>alert(1)</script>
<img src=x onerror="alert(2)">
<svg onload=alert(3)></svg>
<iframe src="javascript:alert(4)"></iframe>
<a href="javascript:alert(5)">raw link</a>

[markdown link](javascript:alert(6))
[spaced](  JaVaScRiPt:alert(7))
[entity](&#106;avascript:alert(8))
![image](javascript:alert(9))
[vb](vbscript:msgbox(10))
[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxMSk8L3NjcmlwdD4=)
<details open ontoggle=alert(12)>
`<script>in code</script>`

:::details <img src=x onerror=alert(13)>
inside
:::
"""


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def live_script(html: str) -> list[str]:
    """Elements or attributes in ``html`` that a browser would run."""
    parser = _Collector()
    parser.feed(html)
    found = []
    for tag, attrs in parser.tags:
        if tag in ("script", "iframe", "object", "embed", "svg", "math", "base", "form", "meta"):
            found.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                found.append(f"{tag} {name}=")
            url = "".join((value or "").split()).lower()
            if name in ("href", "src", "action", "formaction", "xlink:href") and url.startswith(
                ("javascript:", "vbscript:", "data:text")
            ):
                found.append(f"{tag} {name}={value}")
    return found


def test_article_html_served_by_the_read_route_cannot_run_script(blog: Blog) -> None:
    # GIVEN an article full of script vectors: raw tags, event handlers, script URLs, a Zenn block title
    blog.github.set_files({"articles/xss.md": XSS.encode()})
    # WHEN it is synced and the front end reads it
    assert blog.push(delivery="xss").get_json()["failed"] == 0
    html = blog.client.get("/users/alice/articles/xss").get_json()["contentHtml"]
    # THEN nothing in its HTML can run, and the raw HTML is shown escaped, as text
    assert live_script(html) == []
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script" not in html.lower()


def test_thumbnail_with_a_script_url_fails_that_article_with_a_message(blog: Blog) -> None:
    # GIVEN an article whose thumbnail is a javascript: URL, next to a good one
    bad = b'---\ntitle: T\npublish: true\nthumbnail: "javascript:alert(1)"\n---\nx\n'
    blog.github.set_files({"articles/bad.md": bad, "articles/good.md": article("Good")})
    # WHEN the push is delivered THEN that article fails alone and is not served
    answer = blog.push(delivery="thumb")
    assert contract_counts(answer.get_json()) == {
        "status": "processed",
        "processed": 2,
        "succeeded": 1,
        "failed": 1,
    }
    assert sorted(served(blog)) == ["good"]
