"""Metrics as CloudWatch embedded metric format (EMF): one JSON object per line on stdout.

Lambda ships every stdout line to CloudWatch Logs, and CloudWatch turns a line carrying an ``_aws``
block into metrics without a single API call (nothing to wait for, nothing to fail in the request).
Written by hand rather than with Powertools Metrics: the format is a small documented JSON shape,
Powertools is not a dependency of the function, and adding it for one writer would grow the package.

Only Lambda mode writes lines; local development (inline mode) gets a sink that does nothing, so the
Flask dev server's output stays readable.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from shared import metric_names as names

# name -> (value, unit)
Measurements = Mapping[str, tuple[float, str]]


class MetricsSink(Protocol):
    def put(self, measurements: Measurements, **properties: Any) -> None:
        """Record ``measurements`` at once; ``properties`` (e.g. ``delivery``) are searchable context."""


class NullMetrics:
    """Records nothing (inline mode, the CLI)."""

    def put(self, measurements: Measurements, **properties: Any) -> None:
        return None


def emf_document(
    namespace: str,
    dimensions: Mapping[str, str],
    measurements: Measurements,
    properties: Mapping[str, Any],
    timestamp_ms: int,
) -> dict[str, Any]:
    """The EMF object: the ``_aws`` metadata plus every dimension, metric and property as a top-level key."""
    document: dict[str, Any] = {**properties, **dimensions}
    document["_aws"] = {
        "Timestamp": timestamp_ms,
        "CloudWatchMetrics": [
            {
                "Namespace": namespace,
                "Dimensions": [sorted(dimensions)],
                "Metrics": [{"Name": name, "Unit": unit} for name, (_, unit) in measurements.items()],
            }
        ],
    }
    for name, (value, _) in measurements.items():
        document[name] = value
    return document


class EmfMetrics:
    """Writes one EMF line per ``put``. ``write`` defaults to stdout, looked up at call time."""

    def __init__(
        self,
        dimensions: Mapping[str, str],
        *,
        namespace: str = names.NAMESPACE,
        write: Callable[[str], Any] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.namespace = namespace
        self.dimensions = dict(dimensions)
        self._write = write
        self._clock = clock

    def put(self, measurements: Measurements, **properties: Any) -> None:
        if not measurements:
            return
        document = emf_document(
            self.namespace, self.dimensions, measurements, properties, int(self._clock() * 1000)
        )
        line = json.dumps(document, default=str, separators=(",", ":")) + "\n"
        if self._write is not None:
            self._write(line)
        else:
            sys.stdout.write(line)
            sys.stdout.flush()


def from_settings(settings: Any) -> MetricsSink:
    """EMF on Lambda, dimensioned by the function's name; nothing in inline mode."""
    if not settings.lambda_mode:
        return NullMetrics()
    return EmfMetrics({names.DIMENSION_FUNCTION: settings.lambda_function_name})


def ms(value: float) -> tuple[float, str]:
    return (round(value, 2), names.UNIT_MILLISECONDS)


def count(value: int) -> tuple[float, str]:
    return (value, names.UNIT_COUNT)


def record_accept(sink: MetricsSink, accept_ms: float, delivery: str) -> None:
    """The webhook route queued a delivery ``accept_ms`` after the request started."""
    sink.put({names.ACCEPT_LATENCY: ms(accept_ms)}, delivery=delivery)


def record_processing(sink: MetricsSink, summary: Any, duration_ms: float, delivery: str) -> None:
    """A push ran to the end: its duration and article counts (nothing for a skipped repeat)."""
    if getattr(summary, "skipped_reason", None):
        return
    sink.put(
        {
            names.PROCESSING_DURATION: ms(duration_ms),
            names.ARTICLES_PROCESSED: count(summary.processed),
            names.ARTICLES_FAILED: count(summary.failed),
            names.ARTICLES_ARCHIVED: count(summary.archived),
        },
        delivery=delivery,
    )


def record_processing_error(sink: MetricsSink, delivery: str, error_type: str) -> None:
    """A push's processing raised."""
    sink.put({names.PROCESSING_ERRORS: count(1)}, delivery=delivery, error_type=error_type)
