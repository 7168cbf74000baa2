"""``blog-api hooks add|list|remove|rotate-secret|test|deliveries|redeliver``, as an operator runs them
against a receiver on loopback (the command line is not Lambda: loopback may be called)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from standardwebhooks.webhooks import WebhookVerificationError

from function.hooks.signing import new_secret
from tests.kit.cli import CliResult, run_cli
from tests.kit.webhook_receiver import WebhookReceiver, answer, verify

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "articles"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str | None]:
    values: dict[str, str | None] = {
        "DATABASE_URL": f"sqlite:///{tmp_path}/blog.db",
        "ARTICLE_SOURCE": f"dir:{EXAMPLES}",
        "GITHUB_WEBHOOK_SECRET": None,
        "AWS_LAMBDA_FUNCTION_NAME": None,
        "HTTPS_PROXY": None,
        "https_proxy": None,
    }
    assert run_cli("init-db", env=values).exit_code == 0
    assert run_cli("users", "add", "--name", "demo", "--email", "d@example.com", env=values).exit_code == 0
    return values


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    running = WebhookReceiver().start()
    yield running
    running.stop()


def added(result: CliResult) -> tuple[str, str]:
    """(endpoint id, secret) from ``hooks add``'s output."""
    assert result.exit_code == 0, result.stderr
    endpoint = re.search(r"^added: (ep_[0-9a-f]+)", result.stdout, re.M)
    secret = re.search(r"^secret: (whsec_\S+)$", result.stdout, re.M)
    assert endpoint and secret, result.stdout
    return endpoint.group(1), secret.group(1)


def test_add_prints_the_secret_once_and_list_never_shows_it(
    env: dict[str, str | None], receiver: WebhookReceiver
) -> None:
    endpoint_id, secret = added(
        run_cli("hooks", "add", "--user", "demo", "--url", receiver.url("/in"), env=env)
    )

    listed = run_cli("hooks", "list", env=env)

    assert listed.exit_code == 0, listed.stderr
    [row] = listed.stdout.splitlines()[1:]
    assert row.split("\t")[:5] == [
        endpoint_id,
        "demo",
        receiver.url("/in"),
        "articles.changed,sync.failed",
        "active",
    ]
    assert secret not in listed.stdout and secret[6:] not in listed.stdout


def test_a_deploy_hook_url_is_listed_with_its_secret_part_hidden(env: dict[str, str | None]) -> None:
    url = "https://api.netlify.com/build_hooks/5c23354f454e1350f8543e78?trigger_title=blog"
    result = run_cli("hooks", "add", "--user", "demo", "--url", url, "--event", "articles.changed", env=env)
    added(result)
    listed = run_cli("hooks", "list", "--user", "demo", env=env)

    assert "https://api.netlify.com/build_hooks/5c23…?…" in listed.stdout
    assert "5c23354f454e1350f8543e78" not in listed.stdout + result.stdout
    assert "\tarticles.changed\t" in listed.stdout


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://hooks.example.com/", "https://"),
        ("https://169.254.169.254/latest/", "metadata"),
        ("https://10.0.0.2/", "private"),
        ("https://2130706433/", "canonical"),
    ],
)
def test_add_refuses_a_url_no_endpoint_may_have(env: dict[str, str | None], url: str, why: str) -> None:
    result = run_cli("hooks", "add", "--user", "demo", "--url", url, env=env)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: --url refused:") and why in result.stderr
    assert result.stderr.count("\n") == 1


def test_add_for_an_unknown_user_or_event_is_a_one_line_error(env: dict[str, str | None]) -> None:
    nobody = run_cli("hooks", "add", "--user", "nobody", "--url", "https://hooks.example.com/", env=env)
    assert nobody.exit_code == 1 and nobody.stderr.startswith("error: no user named 'nobody'")
    typo = run_cli(
        "hooks", "add", "--user", "demo", "--url", "https://x.example.com/", "--event", "push", env=env
    )
    assert typo.exit_code == 1 and "'push' is not one of articles.changed, sync.failed" in typo.stderr


def test_test_sends_a_signed_ping_and_fails_on_a_non_2xx(
    env: dict[str, str | None], receiver: WebhookReceiver
) -> None:
    endpoint_id, secret = added(run_cli("hooks", "add", "--user", "demo", "--url", receiver.url(), env=env))

    ok = run_cli("hooks", "test", endpoint_id, env=env)
    receiver.script = [answer(500, b"receiver broke")]
    broken = run_cli("hooks", "test", endpoint_id, env=env)

    assert ok.exit_code == 0, ok.stderr
    assert "status: 200" in ok.stdout and "delivered" in ok.stdout
    assert verify(receiver.received[0], secret)["type"] == "ping"
    assert broken.exit_code == 1
    assert "status: 500" in broken.stdout and "answer: receiver broke" in broken.stdout


def test_rotate_secret_prints_a_new_one_and_both_sign_until_the_switch_over(
    env: dict[str, str | None], receiver: WebhookReceiver
) -> None:
    endpoint_id, old = added(run_cli("hooks", "add", "--user", "demo", "--url", receiver.url(), env=env))

    rotated = run_cli("hooks", "rotate-secret", endpoint_id, env=env)
    new = re.search(r"^secret: (whsec_\S+)$", rotated.stdout, re.M)
    assert rotated.exit_code == 0 and new is not None and new.group(1) != old
    assert run_cli("hooks", "test", endpoint_id, env=env).exit_code == 0

    [request] = receiver.received
    verify(request, old)
    verify(request, new.group(1))
    assert "2 (previous until" in run_cli("hooks", "list", env=env).stdout
    with pytest.raises(WebhookVerificationError):
        verify(request, new_secret())


def test_deliveries_show_each_attempt_and_redeliver_resends_the_same_message(
    env: dict[str, str | None], receiver: WebhookReceiver
) -> None:
    endpoint_id, secret = added(run_cli("hooks", "add", "--user", "demo", "--url", receiver.url(), env=env))
    receiver.script = [answer(503, b"busy\nnow")]
    run_cli("hooks", "test", endpoint_id, env=env)

    listed = run_cli("hooks", "deliveries", "--endpoint", endpoint_id, env=env)
    [row] = listed.stdout.splitlines()[1:]
    fields = row.split("\t")
    assert fields[1:8] == [endpoint_id, fields[2], "ping", "1", "503", fields[6], "HTTP 503"]
    assert fields[9] == "busy now"
    event_id = fields[2]

    again = run_cli("hooks", "redeliver", event_id, env=env)

    assert again.exit_code == 0, again.stdout + again.stderr
    first, second = receiver.received
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == fields[8]
    verify(second, secret)
    assert len(run_cli("hooks", "deliveries", env=env).stdout.splitlines()) == 3


def test_remove_deletes_the_endpoint_and_an_unknown_id_is_a_one_line_error(
    env: dict[str, str | None], receiver: WebhookReceiver
) -> None:
    endpoint_id, _ = added(run_cli("hooks", "add", "--user", "demo", "--url", receiver.url(), env=env))

    assert run_cli("hooks", "remove", endpoint_id, env=env).stdout == f"removed: {endpoint_id}\n"
    assert run_cli("hooks", "list", env=env).stdout.count("\n") == 1
    for command in (("remove", endpoint_id), ("test", endpoint_id), ("rotate-secret", endpoint_id)):
        result = run_cli("hooks", *command, env=env)
        assert result.exit_code == 1
        assert (
            result.stderr == f"error: no webhook endpoint {endpoint_id!r}: `blog-api hooks list` shows them\n"
        )
    assert run_cli("hooks", "redeliver", "evt_nope", env=env).exit_code == 1


def test_sync_tells_the_users_endpoints_what_it_changed(
    env: dict[str, str | None], receiver: WebhookReceiver
) -> None:
    _, secret = added(run_cli("hooks", "add", "--user", "demo", "--url", receiver.url(), env=env))

    first = run_cli("sync", "--user", "demo", env=env)
    again = run_cli("sync", "--user", "demo", env=env)

    assert first.exit_code == 0, first.stderr
    assert "webhooks: told 1 endpoint(s)" in first.stdout
    assert "webhooks" not in again.stdout  # nothing changed: nothing sent
    [request] = receiver.received
    body = verify(request, secret)
    assert body["type"] == "articles.changed" and len(body["data"]["published"]) >= 6


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/in",
        "https://127.0.0.1/in",
        "https://127.8.9.10:8443/in",
        "https://[::1]/in",
        "https://localhost/in",
        "https://LOCALHOST./in",
        "https://api.localhost/in",
    ],
)
def test_add_on_lambda_refuses_a_loopback_endpoint_it_could_never_call(
    env: dict[str, str | None], url: str
) -> None:
    # GIVEN the command run where the function runs (Lambda mode: loopback is never called there)
    on_lambda = {**env, "AWS_LAMBDA_FUNCTION_NAME": "d-st-blog-api", "GITHUB_WEBHOOK_SECRET": "s" * 40}
    # WHEN a loopback endpoint is added THEN it is refused in one line and nothing is registered
    result = run_cli("hooks", "add", "--user", "demo", "--url", url, env=on_lambda)
    assert result.exit_code != 0 and "loopback" in result.stderr, result
    assert run_cli("hooks", "list", env=env).stdout.splitlines()[1:] == []


def test_add_outside_lambda_still_takes_a_loopback_endpoint(env: dict[str, str | None]) -> None:
    result = run_cli("hooks", "add", "--user", "demo", "--url", "https://localhost:8443/in", env=env)
    assert result.exit_code == 0, result.stderr
