"""One measured run: wall time, GitHub requests, database round trips, and (optionally) peak memory."""

from __future__ import annotations

import contextlib
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass, field

from bench.rig import Rig


@dataclass
class Measured:
    wall_ms: float = 0.0
    github_requests: int = 0  # every HTTP request the stand-in received (redirect targets included)
    github_max_in_flight: int = 0
    db_round_trips: int = 0  # client turns through the relay, connection set-up included
    db_connections: int = 0
    peak_bytes: int | None = None  # tracemalloc peak, when traced
    notes: dict[str, int] = field(default_factory=dict)  # what the run reported (fetched, written...)


@contextlib.contextmanager
def measuring(rig: Rig, *, trace_memory: bool = False) -> Iterator[Measured]:
    """Measure the block. With ``trace_memory``, the Python heap's peak above its level at the start
    (tracemalloc slows allocation down, so traced runs are never the timed ones)."""
    result = Measured()
    rig.github.reset_records()
    rig.relay.reset()
    if trace_memory:
        tracemalloc.start()
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
    started = time.perf_counter()
    try:
        yield result
    finally:
        result.wall_ms = (time.perf_counter() - started) * 1000
        if trace_memory:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            result.peak_bytes = peak - base
        stats = rig.relay.stats
        result.github_requests = rig.github.count()
        result.github_max_in_flight = rig.github.max_in_flight
        result.db_round_trips = stats.round_trips
        result.db_connections = stats.connections
