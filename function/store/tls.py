"""TLS to a MySQL-protocol database: the URL's ``ssl_*`` options as one ``ssl.SSLContext``.

PyMySQL takes an ``ssl.SSLContext`` as its public ``ssl`` argument. Building the context ourselves,
once per database, lets every connection share it (contexts are thread-safe): loading a CA bundle
costs 50-120 ms of CPU, more than a database round trip, and PyMySQL would load it again on every
connect. It also lets ``ssl_verify_identity=true`` without ``ssl_ca`` check the host name against the
system's authorities, which PyMySQL skips when no CA file is named.

A URL without TLS options connects in plaintext, as ``DatabaseTarget.uses_tls`` reads it (and the
settings refuse that on Lambda to another host unless ``DATABASE_ALLOW_PLAINTEXT`` says so). PyMySQL's
own default would be to try TLS without checking the certificate, which protects nothing from
whoever sits on the path and hides what the URL asked for.
"""

from __future__ import annotations

import ssl
from typing import Any

# The URL options this module turns into the context; PyMySQL never sees them.
TLS_OPTIONS = (
    "ssl_ca",
    "ssl_cert",
    "ssl_key",
    "ssl_key_password",
    "ssl_verify_cert",
    "ssl_verify_identity",
    "ssl_disabled",
)


def split_tls_options(params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``params`` as (the TLS options, everything else)."""
    tls = {key: value for key, value in params.items() if key in TLS_OPTIONS}
    rest = {key: value for key, value in params.items() if key not in TLS_OPTIONS}
    return tls, rest


def asks_for_tls(options: dict[str, Any]) -> bool:
    """True when the options name a CA, a client certificate or a check, and do not disable TLS."""
    if options.get("ssl_disabled"):
        return False
    return any(
        options.get(key)
        for key in ("ssl_ca", "ssl_cert", "ssl_key", "ssl_verify_cert", "ssl_verify_identity")
    )


def tls_context(options: dict[str, Any]) -> ssl.SSLContext:
    """The context for options that ask for TLS (``asks_for_tls``).

    The certificate is verified when ``ssl_verify_cert`` or ``ssl_verify_identity`` is true (the URL
    parser makes both true whenever a CA or certificate file is named, unless the URL says otherwise);
    the host name when ``ssl_verify_identity`` is true, with ``ssl_ca`` or the system's authorities.
    """
    context = ssl.create_default_context(cafile=options.get("ssl_ca"))
    # Python 3.13 makes X.509 checks strict by default, and the certificates MySQL and MariaDB generate
    # for themselves fail them; PyMySQL relaxes the same flag.
    context.verify_flags &= ~ssl.VERIFY_X509_STRICT
    verify_identity = bool(options.get("ssl_verify_identity"))
    context.check_hostname = verify_identity  # before verify_mode: CERT_NONE refuses a host-name check
    verify = verify_identity or bool(options.get("ssl_verify_cert"))
    context.verify_mode = ssl.CERT_REQUIRED if verify else ssl.CERT_NONE
    if options.get("ssl_cert"):
        context.load_cert_chain(
            options["ssl_cert"], keyfile=options.get("ssl_key"), password=options.get("ssl_key_password")
        )
    return context


def pymysql_tls_arguments(options: dict[str, Any]) -> dict[str, Any]:
    """PyMySQL's connect arguments for the TLS options: a context, or TLS switched off."""
    if not asks_for_tls(options):
        return {"ssl_disabled": True}
    return {"ssl": tls_context(options)}
