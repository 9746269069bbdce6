"""``maia models`` against a real HTTP server serving the captured proxy answers."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner
from pytest_httpserver import HTTPServer

from maia.commands import cli
from tests.conftest import fixture_bytes


def _serve_models(httpserver: HTTPServer, models: bytes | None = None) -> None:
    httpserver.expect_request("/v1/models", method="GET").respond_with_data(
        models or fixture_bytes("proxy-models.json"), content_type="application/json"
    )
    httpserver.expect_request("/model/info", method="GET").respond_with_data(
        fixture_bytes("proxy-model-info.json"), content_type="application/json"
    )


def test_text_output_whole(httpserver: HTTPServer, write_settings: Callable[..., Path], home: Path) -> None:
    _serve_models(httpserver)
    write_settings(httpserver.url_for(""))
    (home / "config.json").write_text('{"model": "litellm:scripted-anthropic"}')
    result = CliRunner().invoke(cli, ["models"])
    assert result.exit_code == 0, result.output
    url = httpserver.url_for("/v1/models")
    assert result.output == (
        f"Models from {url}:\n"
        "  mock-litellm        32,000 tokens of context\n"
        "● scripted-anthropic  200,000 tokens of context\n"
        "  scripted-openai     128,000 tokens of context\n"
    )


def test_json_output_whole(httpserver: HTTPServer, write_settings: Callable[..., Path], monkeypatch: object) -> None:
    _serve_models(httpserver)
    write_settings(httpserver.url_for(""))
    result = CliRunner().invoke(cli, ["models", "--json"], env={"MAIA_MODEL": "scripted-openai"})
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {
        "url": httpserver.url_for("/v1/models"),
        "current": "scripted-openai",
        "models": [
            {"name": "mock-litellm", "max_input_tokens": 32000, "current": False},
            {"name": "scripted-anthropic", "max_input_tokens": 200000, "current": False},
            {"name": "scripted-openai", "max_input_tokens": 128000, "current": True},
        ],
    }


def test_context_sizes_from_model_info_when_the_list_lacks_them(
    httpserver: HTTPServer, write_settings: Callable[..., Path]
) -> None:
    bare = json.dumps({"data": [{"id": "scripted-openai"}, {"id": "scripted-openai"}, {"id": "other"}]}).encode()
    _serve_models(httpserver, bare)
    write_settings(httpserver.url_for(""))
    result = CliRunner().invoke(cli, ["models", "--json"])
    assert json.loads(result.output)["models"] == [
        {"name": "other", "max_input_tokens": None, "current": False},
        {"name": "scripted-openai", "max_input_tokens": 128000, "current": False},
    ]
    text = CliRunner().invoke(cli, ["models"])
    assert text.output.splitlines()[1:] == ["  other", "  scripted-openai  128,000 tokens of context"]


def test_unreachable_server(write_settings: Callable[..., Path]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = write_settings(f"http://127.0.0.1:{port}")
    result = CliRunner().invoke(cli, ["models"])
    assert result.exit_code == 1
    url = f"http://127.0.0.1:{port}/v1/models"
    assert result.output.startswith(f"Error: LiteLLM is unreachable ({url}): ")
    assert f"URL: {url}\nSettings: {path}\n" in result.output
    assert "Traceback" not in result.output


def test_http_failure(httpserver: HTTPServer, write_settings: Callable[..., Path]) -> None:
    httpserver.expect_request("/v1/models").respond_with_data(
        fixture_bytes("proxy-auth-missing.json"), status=401, content_type="application/json"
    )
    path = write_settings(httpserver.url_for(""))
    result = CliRunner().invoke(cli, ["models"])
    assert result.exit_code == 1
    assert result.output == (
        "Error: LiteLLM answered HTTP 401: Authentication Error, No api key passed in.\n"
        f"URL: {httpserver.url_for('/v1/models')}\nSettings: {path}\n"
    )


def test_answer_without_a_list(httpserver: HTTPServer, write_settings: Callable[..., Path]) -> None:
    httpserver.expect_request("/v1/models").respond_with_json({"object": "list"})
    write_settings(httpserver.url_for(""))
    result = CliRunner().invoke(cli, ["models"])
    assert result.exit_code == 1
    assert 'answered without a model list (no "data" array)' in result.output


def test_settings_errors_reach_the_user(home: Path) -> None:
    (home / "settings.json").write_text('{"LiteLLM_URL": 4}')
    result = CliRunner().invoke(cli, ["models"])
    assert result.exit_code == 1
    assert '"LiteLLM_URL" must be a string, not a whole number' in result.output


def test_unknown_setting_warns_on_stderr_and_still_lists(
    httpserver: HTTPServer, write_settings: Callable[..., Path]
) -> None:
    _serve_models(httpserver)
    path = write_settings(httpserver.url_for(""), Extra=1)
    result = CliRunner().invoke(cli, ["models"])
    assert result.exit_code == 0
    assert f'Warning: {path}: unknown setting "Extra" ignored.' in result.stderr
    assert "scripted-openai" in result.stdout


def test_configured_model_not_offered_warns(httpserver: HTTPServer, write_settings: Callable[..., Path]) -> None:
    _serve_models(httpserver)
    write_settings(httpserver.url_for(""))
    result = CliRunner().invoke(cli, ["models"], env={"MAIA_MODEL": "gone"})
    assert result.exit_code == 0
    assert 'the configured model "gone" is not offered by this server.' in result.stderr
