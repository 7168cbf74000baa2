"""A TCP relay on loopback that makes every database round trip cost what it costs in production.

Lambda → proxy → Tailnet → TiDB is tens of milliseconds per round trip; MariaDB on loopback is tens of
microseconds. The relay sits between the client and the server and holds every client→server chunk for
``delay_s`` before passing it on (answers go back at once), so each request/response turn costs one delay,
whatever the client does: queries, BEGIN/COMMIT, the handshake, ``SET autocommit``. Opening a connection
costs one more delay (TCP's own handshake).

Chunks are delayed from the moment they arrive, not one after another, so a client that pipelines is
charged like a pipe with latency, not per chunk. A *round trip* is counted when the server answers
after the client spoke (a query split over several TCP segments is one), plus one per connection opened.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from dataclasses import dataclass

_CHUNK = 64 * 1024


@dataclass
class RelayStats:
    """What crossed the relay since the last ``reset``."""

    round_trips: int = 0  # client turns (each charged one delay), connects included
    connections: int = 0
    bytes_up: int = 0
    bytes_down: int = 0


class _Turns:
    """Per connection: has the client spoken since the server last answered?"""

    def __init__(self) -> None:
        self.client_turn_open = False


class LatencyRelay:
    """``start()`` listens on 127.0.0.1 (a free port) and relays to ``upstream``; ``stop()`` ends it.

    Runs its own asyncio loop on a daemon thread, so synchronous clients (PyMySQL) in any thread can use
    it. ``stats`` and ``reset()`` are thread-safe."""

    def __init__(self, upstream_host: str, upstream_port: int, delay_s: float) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.delay_s = delay_s
        self._stats = RelayStats()
        self._guard = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> LatencyRelay:
        ready = threading.Event()
        loop = asyncio.new_event_loop()
        self._loop = loop

        def run() -> None:
            asyncio.set_event_loop(loop)
            self._server = loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
            self._port = int(self._server.sockets[0].getsockname()[1])
            ready.set()
            loop.run_forever()

        self._thread = threading.Thread(target=run, name="latency-relay", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the latency relay did not start")
        return self

    def stop(self) -> None:
        loop, server = self._loop, self._server
        if loop is None:
            return

        async def shut() -> None:
            if server is not None:
                server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(shut(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)
        loop.close()
        self._loop = self._server = self._thread = None

    def __enter__(self) -> LatencyRelay:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._port

    # -- records -----------------------------------------------------------------------------------

    @property
    def stats(self) -> RelayStats:
        """A copy of the counters."""
        with self._guard:
            return RelayStats(**vars(self._stats))

    def reset(self) -> None:
        with self._guard:
            self._stats = RelayStats()

    def _count(self, *, round_trips: int = 0, connections: int = 0, up: int = 0, down: int = 0) -> None:
        with self._guard:
            self._stats.round_trips += round_trips
            self._stats.connections += connections
            self._stats.bytes_up += up
            self._stats.bytes_down += down

    # -- relaying ----------------------------------------------------------------------------------

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        # The TCP handshake to a distant server is a round trip of its own.
        self._count(round_trips=1, connections=1)
        await asyncio.sleep(self.delay_s)
        try:
            server_r, server_w = await asyncio.open_connection(*self.upstream)
        except OSError:
            client_w.close()
            return
        turns = _Turns()
        up = asyncio.create_task(self._client_to_server(client_r, server_w, turns))
        down = asyncio.create_task(self._server_to_client(server_r, client_w, turns))
        try:
            await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (up, down):
                task.cancel()
            for writer in (client_w, server_w):
                with contextlib.suppress(Exception):
                    writer.close()

    async def _client_to_server(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, turns: _Turns
    ) -> None:
        """Read as fast as the client writes; deliver each chunk ``delay_s`` after it arrived."""
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                arrived, data = await queue.get()
                if not data:
                    writer.write_eof()
                    return
                wait = arrived + self.delay_s - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()

        sender = asyncio.create_task(deliver())
        try:
            while True:
                data = await reader.read(_CHUNK)
                if data:
                    turns.client_turn_open = True
                self._count(up=len(data))
                await queue.put((time.monotonic(), data))
                if not data:
                    break
            await sender
        finally:
            sender.cancel()

    async def _server_to_client(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, turns: _Turns
    ) -> None:
        while True:
            data = await reader.read(_CHUNK)
            if not data:
                return
            # The first answer to a client turn completes one round trip (a statement the client
            # sends without waiting for an answer, such as COM_QUIT, costs it nothing).
            self._count(round_trips=1 if turns.client_turn_open else 0, down=len(data))
            turns.client_turn_open = False
            writer.write(data)
            await writer.drain()
