"""The self-invoke: hand a verified delivery to our own Lambda function, asynchronously."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from function.errors import PayloadTooLarge, Unavailable

log = logging.getLogger(__name__)


class SelfInvoker(Protocol):
    def invoke(self, payload: bytes) -> None:
        """Queue ``payload`` for asynchronous processing. Raises PayloadTooLarge or Unavailable."""
        ...


def lambda_client_factory(
    https_proxy: str | None = None, endpoint_url: str | None = None, no_proxy: Iterable[str] = ()
) -> Any:
    """A Lambda client tuned for the accept path.

    Every way the invoke can fail ends well inside GitHub's 10 s, so a throttled API, a hung endpoint
    or a dead proxy turns into a fast 503 GitHub can redeliver, never a timed-out delivery: at most 3
    attempts in all, each bounded by connect 1 s + read 2 s (a hung endpoint: ~6 s; an async Invoke
    normally answers in tens of milliseconds).
    """
    from function.aws import clients as aws_clients

    return aws_clients.client(
        "lambda",
        connect_timeout=1,
        read_timeout=2,
        attempts=3,
        https_proxy=https_proxy,
        no_proxy=no_proxy,
        endpoint_url=endpoint_url,
    )


class LambdaInvoker:
    """Invokes ``function_name`` (at ``qualifier``, an alias, when given) with ``InvocationType=Event``;
    the client is built once, on first use."""

    def __init__(
        self, function_name: str, client_factory: Callable[[], Any], *, qualifier: str | None = None
    ) -> None:
        self._function_name = function_name
        self._qualifier = {"Qualifier": qualifier} if qualifier else {}
        self._client_factory = client_factory
        self._client: Any = None

    def _get_client(self) -> Any:
        if self._client is None:
            self._client = self._client_factory()
        return self._client

    def invoke(self, payload: bytes) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            answer = self._get_client().invoke(
                FunctionName=self._function_name, InvocationType="Event", Payload=payload, **self._qualifier
            )
        except ClientError as exc:
            error = exc.response.get("Error", {})
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status == 413 or error.get("Code") == "RequestEntityTooLargeException":
                raise PayloadTooLarge(str(error.get("Message", "payload too large"))) from exc
            log.warning("Self-invoke failed", extra={"error_code": error.get("Code"), "status_code": status})
            raise Unavailable(f"could not queue the delivery ({error.get('Code', 'error')})") from exc
        except BotoCoreError as exc:
            log.warning("Self-invoke failed", extra={"error_type": type(exc).__name__})
            raise Unavailable(f"could not queue the delivery ({type(exc).__name__})") from exc
        status = answer.get("StatusCode")
        if status != 202:
            raise Unavailable(f"self-invoke answered {status}, expected 202")
