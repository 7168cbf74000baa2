"""One attempt on the wire: time-outs, resets, redirects not followed, a capped answer, TLS for the URL's
host on the checked address, and the proxy asked for that address, never the name."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from function.hooks.guard import AddressPolicy
from function.hooks.transport import Transport
from tests.kit.fakes import FakeResolver
from tests.kit.webhook_receiver import (
    WebhookReceiver,
    answer,
    drip,
    hang,
    make_authority,
    redirect,
    reset,
    running,
)

LOCALLY = AddressPolicy(allow_loopback=True)
BODY = b'{"type":"ping"}'


def transport(**options: object) -> Transport:
    values: dict[str, object] = {"connect_timeout_s": 0.5, "total_timeout_s": 1.0}
    values.update(options)
    return Transport(LOCALLY, **values)  # type: ignore[arg-type]


def test_a_2xx_is_a_delivery_and_the_request_is_a_json_post(receiver: WebhookReceiver) -> None:
    got = transport().post(receiver.url("/hooks?x=1"), {"webhook-id": "msg_1"}, BODY)

    assert got.ok and got.status == 200 and got.body == b"ok" and got.error is None
    [request] = receiver.received
    assert (request.method, request.path, request.body) == ("POST", "/hooks?x=1", BODY)
    assert request.headers["content-type"] == "application/json"
    assert request.headers["webhook-id"] == "msg_1"
    assert request.headers["host"] == f"127.0.0.1:{receiver.port}"


def test_a_500_is_no_delivery(receiver: WebhookReceiver) -> None:
    receiver.script = [answer(500, b"boom")]
    got = transport().post(receiver.url(), {}, BODY)
    assert not got.ok and (got.status, got.body, got.describe()) == (500, b"boom", "HTTP 500")


def test_a_redirect_is_not_followed(receiver: WebhookReceiver) -> None:
    with running(WebhookReceiver()) as elsewhere:
        receiver.script = [redirect(elsewhere.url("/stolen"), 307)]
        got = transport().post(receiver.url(), {}, BODY)
        assert not got.ok and got.status == 307
        assert got.describe() == "HTTP 307: redirect not followed"
        assert elsewhere.received == []


def test_a_server_that_never_answers_times_out(receiver: WebhookReceiver) -> None:
    receiver.script = [hang(5)]
    got = transport().post(receiver.url(), {}, BODY)
    assert not got.ok and got.status is None and got.error is not None and "timed out" in got.error


def test_an_answer_dripped_byte_by_byte_is_cut_at_the_total_time_out(receiver: WebhookReceiver) -> None:
    # Each byte arrives well within any per-read time-out; only the total can end this.
    receiver.script = [drip(5)]
    got = transport(total_timeout_s=0.6).post(receiver.url(), {}, BODY)
    assert not got.ok and got.error == "timed out after 0.6 s"


def test_a_reset_connection_is_no_delivery(receiver: WebhookReceiver) -> None:
    receiver.script = [reset()]
    got = transport().post(receiver.url(), {}, BODY)
    assert not got.ok and got.status is None and got.error in ("connection reset", "closed without an answer")


def test_nothing_listening_is_connection_refused() -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    got = transport().post(f"http://127.0.0.1:{port}/", {}, BODY)
    assert not got.ok and got.error == "connection refused"


def test_a_connect_that_hangs_ends_at_the_connect_time_out() -> None:
    asked: list[tuple[tuple[str, int], float]] = []

    def black_hole(address: tuple[str, int], timeout: float) -> socket.socket:
        asked.append((address, timeout))
        raise TimeoutError("timed out")

    got = transport(connector=black_hole, connect_timeout_s=2.0, total_timeout_s=5.0).post(
        "http://127.0.0.1:9/", {}, BODY
    )
    assert got.error == "connect timed out after 2 s"
    assert asked == [(("127.0.0.1", 9), 2.0)]


def test_only_the_first_kilobyte_of_the_answer_is_read(receiver: WebhookReceiver) -> None:
    receiver.script = [answer(200, b"x" * 5_000_000)]
    got = transport().post(receiver.url(), {}, BODY)
    assert got.ok and got.body == b"x" * 1024


def test_the_connection_goes_to_the_address_checked_not_to_a_second_lookup() -> None:
    # GIVEN a DNS server that answers a public address first and loopback after (DNS rebinding)
    resolver = FakeResolver({"rebind.example.com": [["93.184.216.34"], ["127.0.0.1"]]})
    asked: list[tuple[str, int]] = []

    def record(address: tuple[str, int], timeout: float) -> socket.socket:
        asked.append(address)
        raise ConnectionRefusedError  # nothing leaves the machine

    # WHEN the function sends to it (on Lambda: loopback is forbidden)
    got = Transport(AddressPolicy(allow_loopback=False), resolver=resolver, connector=record).post(
        "https://rebind.example.com/hook", {}, BODY
    )

    # THEN the name was resolved once, and the connection was to the address that was checked
    assert resolver.asked == ["rebind.example.com"]
    assert asked == [("93.184.216.34", 443)]
    assert got.error == "connection refused"


def test_a_refused_url_is_an_attempt_that_fails_without_any_connection() -> None:
    asked: list[tuple[str, int]] = []

    def record(address: tuple[str, int], timeout: float) -> socket.socket:
        asked.append(address)
        raise AssertionError("must not connect")

    resolver = FakeResolver({"internal.example.com": ["10.0.0.7"]})
    got = Transport(AddressPolicy(), resolver=resolver, connector=record).post(
        "https://internal.example.com/", {}, BODY
    )
    assert (
        got.error
        == "refused: internal.example.com resolves to a forbidden address: 10.0.0.7 is a private address"
    )
    assert asked == []


@pytest.fixture
def tls_receiver(tmp_path: Path) -> Iterator[tuple[WebhookReceiver, object]]:
    authority = make_authority(tmp_path)
    running = WebhookReceiver(tls=authority.server).start()
    yield running, authority.client
    running.stop()


def test_https_verifies_the_certificate_for_the_urls_host_on_the_checked_address(
    tls_receiver: tuple[WebhookReceiver, object],
) -> None:
    receiver, trusted = tls_receiver
    resolver = FakeResolver({"hooks.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
    sender = transport(resolver=resolver, ssl_context=trusted)

    got = sender.post(f"https://hooks.test:{receiver.port}/in", {}, BODY)
    assert got.ok, got.error
    assert receiver.received[0].headers["host"] == f"hooks.test:{receiver.port}"

    wrong_name = sender.post(f"https://other.test:{receiver.port}/in", {}, BODY)
    assert (
        not wrong_name.ok and wrong_name.error is not None and "TLS certificate refused" in wrong_name.error
    )


def test_https_refuses_a_certificate_from_an_unknown_authority(
    tls_receiver: tuple[WebhookReceiver, object],
) -> None:
    receiver, _ = tls_receiver
    resolver = FakeResolver({"hooks.test": ["127.0.0.1"]})
    got = transport(resolver=resolver).post(f"https://hooks.test:{receiver.port}/in", {}, BODY)
    assert not got.ok and got.error is not None and got.error.startswith("TLS certificate refused")
    assert receiver.received == []


class ConnectProxy:
    """A CONNECT proxy on loopback that records the authority each tunnel was asked for."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(client,), daemon=True).start()

    def _tunnel(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            head += client.recv(1024)
        authority = head.split(b" ")[1].decode()
        self.asked.append(authority)
        host, _, port = authority.rpartition(":")
        upstream = socket.create_connection((host.strip("[]"), int(port)))
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pipe, args=(a, b), daemon=True).start()

    def close(self) -> None:
        self._server.close()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def test_through_the_proxy_the_tunnel_is_asked_for_the_checked_address(
    tls_receiver: tuple[WebhookReceiver, object],
) -> None:
    receiver, trusted = tls_receiver
    proxy = ConnectProxy()
    try:
        resolver = FakeResolver({"hooks.test": ["127.0.0.1"]})
        sender = transport(
            resolver=resolver, ssl_context=trusted, https_proxy=f"http://127.0.0.1:{proxy.port}"
        )
        got = sender.post(f"https://hooks.test:{receiver.port}/in", {}, BODY)
    finally:
        proxy.close()
    assert got.ok, got.error
    assert proxy.asked == [f"127.0.0.1:{receiver.port}"]
    assert len(receiver.received) == 1


def test_no_proxy_sends_direct(tls_receiver: tuple[WebhookReceiver, object]) -> None:
    receiver, trusted = tls_receiver
    resolver = FakeResolver({"hooks.test": ["127.0.0.1"]})
    sender = transport(
        resolver=resolver, ssl_context=trusted, https_proxy="http://127.0.0.1:9", no_proxy=["hooks.test"]
    )
    assert sender.post(f"https://hooks.test:{receiver.port}/in", {}, BODY).ok
