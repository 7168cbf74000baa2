"""Metrics as CloudWatch embedded metric format: valid EMF lines from the routes and the sweep."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask

from function.aws.dispatch import dispatch
from function.observability.metrics import EmfMetrics, NullMetrics, count, emf_document, from_settings, ms
from function.settings import Settings
from shared import metric_names as names
from tests.kit.blog_fixtures import Blog, article
from tests.kit.deliveries import SECRET, delivery_uuid, github_headers, push_payload

# CloudWatch's accepted units (EMF specification, MetricDefinition.Unit).
UNITS = {
    "Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes", "Gigabytes", "Terabytes",
    "Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count", "Bytes/Second",
    "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second", "Bits/Second",
    "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second", "Count/Second", "None",
}  # fmt: skip


def assert_valid_emf(document: dict[str, Any]) -> None:
    """The rules of the EMF specification that CloudWatch enforces when it extracts metrics."""
    meta = document["_aws"]
    assert isinstance(meta["Timestamp"], int) and meta["Timestamp"] > 1_600_000_000_000
    directives = meta["CloudWatchMetrics"]
    assert isinstance(directives, list) and directives
    for directive in directives:
        assert isinstance(directive["Namespace"], str) and 1 <= len(directive["Namespace"]) <= 255
        for dimension_set in directive["Dimensions"]:
            assert 1 <= len(dimension_set) <= 30
            for key in dimension_set:
                assert isinstance(document[key], str), f"dimension {key} must be a top-level string"
        assert 1 <= len(directive["Metrics"]) <= 100
        for metric in directive["Metrics"]:
            assert metric["Unit"] in UNITS
            value = document[metric["Name"]]
            assert isinstance(value, int | float) and not isinstance(value, bool), metric["Name"]


def emf_lines(text: str) -> list[dict[str, Any]]:
    documents = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    return [d for d in documents if "_aws" in d]


def test_emf_document_has_the_aws_block_and_metrics_as_keys() -> None:
    document = emf_document(
        "blog-api",
        {"FunctionName": "d-st-blog-api"},
        {"AcceptLatency": ms(12.345), "ArticlesProcessed": count(3)},
        {"delivery": "d-1"},
        1_767_000_000_000,
    )

    assert_valid_emf(document)
    assert document["AcceptLatency"] == 12.35
    assert document["ArticlesProcessed"] == 3
    assert document["delivery"] == "d-1"
    assert document["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["FunctionName"]]


def test_emf_writer_writes_one_json_line_per_put() -> None:
    written: list[str] = []
    sink = EmfMetrics({"FunctionName": "f"}, write=written.append, clock=lambda: 1_767_000_000.5)

    sink.put({"Redeliveries": count(2)})
    sink.put({})

    [line] = written
    assert line.endswith("\n") and line.count("\n") == 1
    document = json.loads(line)
    assert_valid_emf(document)
    assert document["_aws"]["Timestamp"] == 1_767_000_000_500


def test_inline_mode_records_no_metrics() -> None:
    assert isinstance(from_settings(Settings(webhook_secret=SECRET)), NullMetrics)


def test_the_accept_path_writes_accept_latency(lambda_app: Flask, capsys: pytest.CaptureFixture[str]) -> None:
    body = json.dumps(push_payload()).encode()

    answer = lambda_app.test_client().post(
        "/webhooks/github", data=body, headers=github_headers(body, delivery="d-7")
    )

    assert answer.status_code == 202
    [document] = emf_lines(capsys.readouterr().out)
    assert_valid_emf(document)
    assert document["FunctionName"] == "d-st-blog-api"
    assert document["delivery"] == delivery_uuid("d-7")
    assert document[names.ACCEPT_LATENCY] >= 0


def test_processing_writes_duration_and_article_counts(
    blog: Blog, capsys: pytest.CaptureFixture[str]
) -> None:
    blog.commit(
        {"articles/a.md": article("A"), "articles/b.md": article("B"), "articles/bad.md": b"---\n: [\n"}
    )
    blog.deliver_via_lambda(delivery="d-1")
    blog.commit({"articles/a.md": None})
    capsys.readouterr()

    blog.deliver_via_lambda(delivery="d-2")

    documents = emf_lines(capsys.readouterr().out)
    [processing] = [d for d in documents if names.PROCESSING_DURATION in d]
    assert_valid_emf(processing)
    assert processing["delivery"] == delivery_uuid("d-2")
    assert (processing[names.ARTICLES_PROCESSED], processing[names.ARTICLES_FAILED]) == (2, 1)
    assert processing[names.ARTICLES_ARCHIVED] == 1


def test_a_failed_processing_writes_a_processing_error(
    blog: Blog, capsys: pytest.CaptureFixture[str]
) -> None:
    app = blog.lambda_app()
    body = json.dumps(push_payload(installation_id=999)).encode()
    app.test_client().post("/webhooks/github", data=body, headers=github_headers(body, delivery="d-x"))
    capsys.readouterr()

    answer = dispatch(app, json.loads(blog.invoker.payloads[-1]), None)

    assert answer["statusCode"] == 422
    [document] = [d for d in emf_lines(capsys.readouterr().out) if names.PROCESSING_ERRORS in d]
    assert_valid_emf(document)
    assert document["error_type"] == "UnknownInstallation"
