"""TLS to the database: with a CA, the server's certificate and host name are checked unless the URL
itself opts out. Checked on the arguments PyMySQL receives and on real handshakes with a loopback
server that speaks the start of the MySQL protocol, under a certificate authority made for the test."""

from __future__ import annotations

import contextlib
import socket
import ssl
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import peewee
import pytest

from function.store.backends import open_database
from function.store.tls import tls_context
from function.store.url import parse_database_url
from tests.kit.webhook_receiver import make_authority

# Capabilities a MySQL 5.7 server announces, with CLIENT_SSL: protocol 4.1, secure and plugin auth,
# transactions, multi statements and results, long password.
_CAPABILITIES = 0x1 | 0x200 | 0x800 | 0x2000 | 0x8000 | 0x10000 | 0x20000 | 0x80000


def _greeting() -> bytes:
    payload = (
        b"\x0a5.7.0-tls-stand-in\x00"
        + struct.pack("<I", 7)
        + b"abcdefgh\x00"
        + struct.pack("<H", _CAPABILITIES & 0xFFFF)
        + bytes([45])
        + struct.pack("<H", 2)
        + struct.pack("<H", _CAPABILITIES >> 16)
        + bytes([21])
        + b"\x00" * 10
        + b"ijklmnopqrst\x00"
        + b"mysql_native_password\x00"
    )
    return struct.pack("<I", len(payload))[:3] + b"\x00" + payload


class TlsStandIn:
    """Greets as a MySQL server offering TLS, reads the client's SSL request, then completes the TLS
    handshake (or sees the client abandon it) and hangs up. ``handshakes`` counts completed ones."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self._context = context
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.handshakes = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                try:
                    conn.sendall(_greeting())
                    header = conn.recv(4, socket.MSG_WAITALL)
                    conn.recv(int.from_bytes(header[:3], "little"), socket.MSG_WAITALL)
                    with self._context.wrap_socket(conn, server_side=True):
                        self.handshakes += 1
                except (ssl.SSLError, OSError):
                    pass  # the client refused the certificate

    def __enter__(self) -> TlsStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self._listener.close()
        self._thread.join(10)


@pytest.fixture
def stand_in(tmp_path: Path) -> Iterator[TlsStandIn]:
    # The certificate names db.test and 127.0.0.1, not "localhost".
    authority = make_authority(tmp_path, ("db.test",))
    with TlsStandIn(authority.server) as server:
        yield server


def _connect(url: str) -> BaseException | None:
    db = open_database(url)
    try:
        db.connect()
    except (peewee.PeeweeException, OSError) as exc:
        return exc
    finally:
        if not db.is_closed():
            db.close()
    return None


def test_a_ca_alone_verifies_the_certificate_and_the_host_name(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    params = parse_database_url(f"mysql://u:p@tidb.example:4000/blog?ssl_ca={ca}").params
    assert params["ssl_verify_cert"] is True
    assert params["ssl_verify_identity"] is True


def test_opting_out_of_verification_takes_the_url_saying_so(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    url = f"mysql://u:p@tidb.example:4000/blog?ssl_ca={ca}&ssl_verify_cert=false&ssl_verify_identity=false"
    params = parse_database_url(url).params
    assert (params["ssl_verify_cert"], params["ssl_verify_identity"]) == (False, False)


def test_a_server_whose_certificate_names_another_host_is_refused(
    stand_in: TlsStandIn, tmp_path: Path
) -> None:
    # GIVEN a server on this machine whose certificate (from the right CA) names db.test, not localhost
    # WHEN the app connects to "localhost" with only the CA in its URL
    refused = _connect(f"mysql://app:pw@localhost:{stand_in.port}/blog?ssl_ca={tmp_path / 'ca.pem'}")
    # THEN the handshake is abandoned: nothing (the password included) is sent to the impostor
    assert refused is not None
    assert "certificate" in repr(refused.__cause__ or refused).lower() or "hostname" in repr(refused).lower()
    assert stand_in.handshakes == 0


def test_a_certificate_from_another_authority_is_refused(stand_in: TlsStandIn, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    make_authority(other, ("db.test",))
    refused = _connect(f"mysql://app:pw@127.0.0.1:{stand_in.port}/blog?ssl_ca={other / 'ca.pem'}")
    assert refused is not None
    assert stand_in.handshakes == 0


def test_the_right_host_and_authority_complete_the_handshake(stand_in: TlsStandIn, tmp_path: Path) -> None:
    # The stand-in hangs up after TLS, so the connection fails later, on authentication.
    _connect(f"mysql://app:pw@127.0.0.1:{stand_in.port}/blog?ssl_ca={tmp_path / 'ca.pem'}")
    assert stand_in.handshakes == 1


def test_verify_identity_without_a_ca_file_checks_the_host_name_too(
    stand_in: TlsStandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the test's CA as the system's trusted authorities (OpenSSL reads SSL_CERT_FILE), so that only
    # the host name can make a difference
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    options = "ssl_verify_cert=true&ssl_verify_identity=true"
    # WHEN the URL names no CA file (PyMySQL then skips the host name) and connects to a name the
    # certificate does not hold, THEN it is refused
    assert _connect(f"mysql://app:pw@localhost:{stand_in.port}/blog?{options}") is not None
    assert stand_in.handshakes == 0
    # and the name it holds is accepted
    _connect(f"mysql://app:pw@127.0.0.1:{stand_in.port}/blog?{options}")
    assert stand_in.handshakes == 1


def test_a_url_without_tls_options_connects_in_plaintext_as_it_says(stand_in: TlsStandIn) -> None:
    # GIVEN a server offering TLS, and a URL that names no CA and no check
    # WHEN the app connects
    _connect(f"mysql://app:pw@127.0.0.1:{stand_in.port}/blog")
    # THEN no TLS is attempted: a connection that checks nothing would only look safe
    assert stand_in.handshakes == 0


def test_one_context_serves_every_connection_of_a_database(stand_in: TlsStandIn, tmp_path: Path) -> None:
    db = open_database(f"mysql://app:pw@127.0.0.1:{stand_in.port}/blog?ssl_ca={tmp_path / 'ca.pem'}")
    contexts = []
    for _ in range(2):
        with contextlib.suppress(peewee.PeeweeException, OSError):
            db.connect()
        contexts.append(db._tls_arguments)  # type: ignore[attr-defined]
        if not db.is_closed():
            db.close()
    # The CA bundle is loaded once per database, not once per connection.
    assert stand_in.handshakes == 2
    assert contexts[0] is contexts[1] and isinstance(contexts[0]["ssl"], ssl.SSLContext)


@pytest.mark.parametrize(
    ("options", "verify_mode", "checks_host"),
    [
        ({"ssl_verify_cert": True, "ssl_verify_identity": True}, ssl.CERT_REQUIRED, True),
        ({"ssl_verify_cert": True, "ssl_verify_identity": False}, ssl.CERT_REQUIRED, False),
        ({"ssl_verify_cert": False, "ssl_verify_identity": False}, ssl.CERT_NONE, False),
    ],
)
def test_the_context_checks_what_the_url_asks(
    tmp_path: Path, options: dict[str, bool], verify_mode: ssl.VerifyMode, checks_host: bool
) -> None:
    make_authority(tmp_path, ("db.test",))
    context = tls_context({"ssl_ca": str(tmp_path / "ca.pem"), **options})
    assert (context.verify_mode, context.check_hostname) == (verify_mode, checks_host)
