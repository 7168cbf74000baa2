"""Reading the worker's answer the way the contract states it."""

from __future__ import annotations

from typing import Any

CONTRACT_KEYS = ("status", "processed", "succeeded", "failed")


def contract_counts(answer: Any) -> dict[str, Any]:
    """The contract's part of a ``processed`` answer (status and the three counts), without the fields
    that say what changed (``written``, ``archived``, ``unchanged``, ``failedPaths``), which the tests of
    those fields check exactly."""
    assert isinstance(answer, dict), answer
    if answer.get("status") != "processed":
        return answer
    assert {"written", "archived", "unchanged", "failedPaths"} <= answer.keys(), answer
    return {key: answer[key] for key in CONTRACT_KEYS if key in answer}
