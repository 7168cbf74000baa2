"""What the renderer needs around it: the stylesheet route and the asset base URL setting."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from function.errors import ConfigError
from function.settings import Settings


def test_the_highlight_stylesheet_is_served(lambda_client: FlaskClient) -> None:
    response = lambda_client.get("/static/highlight.css")
    assert response.status_code == 200
    assert response.mimetype == "text/css"
    css = response.get_data(as_text=True)
    assert "pre.highlight .k " in css and "pre.highlight .diff-add" in css
    assert "max-age" in response.headers["Cache-Control"]


def test_another_static_path_is_a_json_404(lambda_client: FlaskClient) -> None:
    response = lambda_client.get("/static/other.css")
    assert response.status_code == 404
    assert response.get_json()["error"]


def _settings(**env: str) -> Settings:
    base: dict[str, Any] = {"GITHUB_WEBHOOK_SECRET": "s"}
    return Settings.from_env({**base, **env})


def test_asset_base_url_is_read_and_trimmed() -> None:
    assert _settings().asset_base_url is None
    settings = _settings(**{"ARTICLE_ASSET_BASE_URL": " https://cdn.example.com/blog/ "})
    assert settings.asset_base_url == "https://cdn.example.com/blog"


@pytest.mark.parametrize("value", ["ftp://x", "javascript:alert(1)", "https://x/a?b=1", 'https://x/"a'])
def test_a_bad_asset_base_url_is_refused_at_start(value: str) -> None:
    with pytest.raises(ConfigError, match="ARTICLE_ASSET_BASE_URL"):
        _settings(**{"ARTICLE_ASSET_BASE_URL": value})
