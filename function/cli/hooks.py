"""``blog-api hooks``: the outgoing webhooks that tell a front end what a push changed.

An endpoint's secret is printed once, when it is made (``add``, ``rotate-secret``), and never again;
its URL is shown with the last part of its path and its query hidden, since a deploy hook's URL is
itself a secret.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from typing import Any

import click

from function.cli.context import Context, pass_context
from function.errors import BlogApiError, HookUrlRefused

# After a rotation, the previous secret still signs for this long, so receivers can switch over.
ROTATION_GRACE = timedelta(hours=24)
ANSWER_SHOWN = 200


@click.group("hooks")
def hooks() -> None:
    """Outgoing webhooks to the blog's front end (Standard Webhooks): endpoints, deliveries."""


def _dispatcher(ctx: Context, store: Any) -> Any:
    return ctx.services().hooks(store)


def _no_endpoint(endpoint_id: str) -> BlogApiError:
    return BlogApiError(f"no webhook endpoint {endpoint_id!r}: `blog-api hooks list` shows them")


def _endpoint_or_fail(dispatcher_store: Any, endpoint_id: str) -> Any:
    endpoint = dispatcher_store.endpoint(endpoint_id)
    if endpoint is None:
        raise _no_endpoint(endpoint_id)
    return endpoint


def masked_url(url: str) -> str:
    """The URL with the last path segment cut to 4 characters and the query hidden."""
    base, _, query = url.partition("?")
    scheme, _, rest = base.partition("://")
    host, slash, path = rest.partition("/")
    parts = path.split("/") if slash else []
    if parts and len(parts[-1]) > 8:
        parts[-1] = parts[-1][:4] + "…"
    shown = f"{scheme}://{host}" + ("/" + "/".join(parts) if slash else "")
    return shown + ("?…" if query else "")


def _now() -> Any:
    from function.store.models import utc_now

    return utc_now()


def _state(endpoint: Any) -> str:
    if endpoint.disabled_at is not None:
        return f"disabled since {endpoint.disabled_at.isoformat(timespec='seconds')}Z"
    if endpoint.failing_since is not None:
        return f"failing since {endpoint.failing_since.isoformat(timespec='seconds')}Z"
    return "active"


@hooks.command("add")
@click.option("--user", "user_name", required=True)
@click.option("--url", required=True, help="https:// (http:// only to a loopback address, not on Lambda)")
@click.option(
    "--event",
    "event_types",
    multiple=True,
    help="articles.changed or sync.failed, repeatable (default: both); every endpoint gets pings",
)
@pass_context
def hooks_add(ctx: Context, user_name: str, url: str, event_types: tuple[str, ...]) -> None:
    """Register an endpoint; prints its signing secret, once."""
    from function.hooks.events import SUBSCRIBABLE
    from function.hooks.guard import (
        AddressPolicy,
        checked_addresses,
        is_ip_literal,
        is_loopback_host,
        parse_target,
    )
    from function.hooks.signing import new_secret
    from function.store.models import utc_now

    unknown = [e for e in event_types if e not in SUBSCRIBABLE]
    if unknown:
        raise BlogApiError(f"--event {unknown[0]!r} is not one of {', '.join(SUBSCRIBABLE)}")
    on_lambda = ctx.services().settings.lambda_mode
    try:
        target = parse_target(url)
        if on_lambda and is_loopback_host(target.host):
            # Run where the function runs, the endpoint could never be called: the sender refuses
            # loopback on Lambda. Said now, rather than as a failing endpoint later.
            raise HookUrlRefused(f"{target.host} is a loopback address, never called on Lambda")
        if is_ip_literal(target.host):
            # An address in the URL can be judged now (a name is judged at every send, where it
            # resolves); outside Lambda loopback is allowed (local development).
            checked_addresses(target, AddressPolicy(allow_loopback=not on_lambda), lambda host, port: [])
    except HookUrlRefused as exc:
        raise BlogApiError(f"--url refused: {exc}") from None
    with ctx.store() as store:
        user = store.get_user(user_name)
        if user is None:
            raise BlogApiError(f"no user named {user_name!r}: `blog-api users list` shows who exists")
        secret = new_secret()
        endpoint = _dispatcher(ctx, store).store.add_endpoint(
            user.id, url, list(dict.fromkeys(event_types or SUBSCRIBABLE)), secret, utc_now()
        )
    click.echo(
        f"added: {endpoint.id}\tuser={user_name}\turl={masked_url(url)}\tevents={','.join(endpoint.events)}"
    )
    click.echo(f"secret: {secret}")
    click.echo(
        "  shown this once: give it to the receiver now (e.g. as WEBHOOK_SECRET); it is not shown again"
    )
    if target.scheme == "http":
        click.echo("  note: http:// is only called outside Lambda (local development)")


@hooks.command("list")
@click.option("--user", "user_name", default=None, help="only this user's endpoints")
@pass_context
def hooks_list(ctx: Context, user_name: str | None) -> None:
    """Endpoints: id, user, URL (its secret part hidden), events, state, events waiting, secrets."""
    with ctx.store() as store:
        user_id = None
        if user_name is not None:
            user = store.get_user(user_name)
            if user is None:
                raise BlogApiError(f"no user named {user_name!r}: `blog-api users list` shows who exists")
            user_id = user.id
        hook_store = _dispatcher(ctx, store).store
        rows = [(e, hook_store.live_events(e.id)) for e in hook_store.endpoints(user_id)]
    click.echo("endpoint\tuser\turl\tevents\tstate\twaiting\tsecrets")
    for endpoint, waiting in rows:
        secrets = "1"
        if endpoint.previous_secret_until is not None and len(endpoint.secrets_at(_now())) > 1:
            secrets = f"2 (previous until {endpoint.previous_secret_until.isoformat(timespec='seconds')}Z)"
        events = ",".join(endpoint.events) or "-"
        click.echo(
            f"{endpoint.id}\t{endpoint.user_name}\t{masked_url(endpoint.url)}\t{events}"
            f"\t{_state(endpoint)}\t{waiting}\t{secrets}"
        )


@hooks.command("remove")
@click.argument("endpoint_id")
@pass_context
def hooks_remove(ctx: Context, endpoint_id: str) -> None:
    """Delete an endpoint, with its waiting events and its delivery records."""
    with ctx.store() as store:
        if not _dispatcher(ctx, store).store.remove_endpoint(endpoint_id):
            raise _no_endpoint(endpoint_id)
    click.echo(f"removed: {endpoint_id}")


@hooks.command("rotate-secret")
@click.argument("endpoint_id")
@pass_context
def hooks_rotate_secret(ctx: Context, endpoint_id: str) -> None:
    """A new signing secret, printed once; the old one also signs for 24 hours."""
    from function.hooks.signing import new_secret

    secret = new_secret()
    until = _now() + ROTATION_GRACE
    with ctx.store() as store:
        if _dispatcher(ctx, store).store.rotate_secret(endpoint_id, secret, until) is None:
            raise _no_endpoint(endpoint_id)
    click.echo(f"rotated: {endpoint_id}")
    click.echo(f"secret: {secret}")
    click.echo(
        f"  shown this once. Until {until.isoformat(timespec='seconds')}Z every request carries two "
        "signatures, the new secret's and the old one's: switch the receiver over before then"
    )


def _outcome(sent: Any) -> str:
    answer = sent.answer
    shown = answer.body[:ANSWER_SHOWN].decode("utf-8", "replace").replace("\n", " ") if answer.body else ""
    status = answer.status if answer.status is not None else "-"
    outcome = "delivered" if answer.ok else answer.describe()
    return f"status: {status}\tduration_ms: {answer.duration_ms:.0f}\t{outcome}" + (
        f"\tanswer: {shown}" if shown else ""
    )


@hooks.command("test")
@click.argument("endpoint_id")
@pass_context
def hooks_test(ctx: Context, endpoint_id: str) -> None:
    """Send a ping now. A 2xx enables a disabled endpoint again, and its waiting events are sent."""
    with ctx.store() as store:
        dispatcher = _dispatcher(ctx, store)
        before = _endpoint_or_fail(dispatcher.store, endpoint_id)
        sent = dispatcher.ping(endpoint_id)
        assert sent is not None  # the endpoint exists
        click.echo(f"ping {endpoint_id}\t{_outcome(sent)}")
        if not sent.answer.ok:
            sys.exit(1)
        if before.disabled_at is not None:
            report = dispatcher.deliver([endpoint_id])
            click.echo(
                f"enabled again; sent {len(report.sent)} waiting event(s), {report.delivered} delivered"
            )


@hooks.command("deliveries")
@click.option("--endpoint", "endpoint_id", default=None, help="only this endpoint's")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
@pass_context
def hooks_deliveries(ctx: Context, endpoint_id: str | None, limit: int) -> None:
    """Recent attempts, newest first: when, which event, the answer (status, time, its first bytes)."""
    with ctx.store() as store:
        attempts = _dispatcher(ctx, store).store.attempts(endpoint_id, limit)
    click.echo("attempted\tendpoint\tevent\ttype\tattempt\tstatus\tduration_ms\toutcome\twebhook-id\tanswer")
    for a in attempts:
        answer = (a.answer or "")[:ANSWER_SHOWN].replace("\n", " ").replace("\t", " ")
        click.echo(
            f"{a.attempted_at.isoformat(timespec='milliseconds')}Z\t{a.endpoint_id}\t{a.event_id}\t{a.event_type}"
            f"\t{a.number}\t{a.status_code if a.status_code is not None else '-'}\t{a.duration_ms:.0f}"
            f"\t{'delivered' if a.ok else a.error}\t{a.message_id}\t{answer}"
        )


@hooks.command("redeliver")
@click.argument("event_id")
@pass_context
def hooks_redeliver(ctx: Context, event_id: str) -> None:
    """Send an event again now, with the same webhook-id (``hooks deliveries`` shows event ids)."""
    with ctx.store() as store:
        sent = _dispatcher(ctx, store).redeliver(event_id)
    if sent is None:
        raise BlogApiError(f"no webhook event {event_id!r}: `blog-api hooks deliveries` shows them")
    click.echo(f"redelivered {event_id} to {sent.endpoint_id}\t{_outcome(sent)}")
    if not sent.answer.ok:
        sys.exit(1)
