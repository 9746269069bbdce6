"""``maia setup`` (issue 28): asks or takes the proxy's address and key, tests them, writes settings.json."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

MODELS = {"data": [{"id": "alpha"}, {"id": "beta"}, {"id": "gamma"}]}


def maia(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``maia`` as a user would, in its own process (stdin a pipe, not a terminal)."""
    return subprocess.run(
        [sys.executable, "-m", "maia", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
        check=False,
    )


def serve(httpserver: HTTPServer, key: str = "sk-good") -> None:
    """A proxy that lists three models to the right key and refuses any other."""

    def models(request: Request) -> Response:
        if request.headers.get("Authorization") != f"Bearer {key}":
            body = json.dumps({"error": {"message": "Authentication Error, invalid key"}})
            return Response(body, status=401, content_type="application/json")
        return Response(json.dumps(MODELS), content_type="application/json")

    httpserver.expect_request("/v1/models").respond_with_handler(models)
    httpserver.expect_request("/model/info").respond_with_json({"data": []})


def test_options_write_a_private_file_and_keep_other_keys(httpserver: HTTPServer, home: Path) -> None:
    serve(httpserver)
    (home / "settings.json").write_text(json.dumps({"MaxIterations": 7, "LiteLLM_URL": "http://old"}))
    (home / "settings.json").chmod(0o644)
    result = maia("setup", "--url", httpserver.url_for(""), "--key", "sk-good", "--model", "beta")
    assert result.returncode == 0, result.stderr
    assert "✓ OK: the proxy accepted the key and offers 3 models." in result.stdout
    saved = json.loads((home / "settings.json").read_text())
    assert saved == {
        "MaxIterations": 7,
        "LiteLLM_URL": httpserver.url_for(""),
        "LiteLLM_API_Key": "sk-good",
        "DefaultModel": "beta",
    }
    assert stat.S_IMODE((home / "settings.json").stat().st_mode) == 0o600
    assert not [p.name for p in home.iterdir() if p.name.endswith(".tmp")]
    # the file it wrote is enough for every other command (no OpenAI_EndPoint nor LiteLLM_Models needed)
    listed = maia("models")
    assert listed.returncode == 0, listed.stderr
    assert "● beta" in listed.stdout


def test_key_from_a_variable(httpserver: HTTPServer, home: Path) -> None:
    serve(httpserver)
    result = maia(
        "setup", "--url", httpserver.url_for(""), "--key-env", "MY_PROXY_KEY", env={"MY_PROXY_KEY": "sk-good"}
    )
    assert result.returncode == 0, result.stderr
    assert json.loads((home / "settings.json").read_text())["LiteLLM_API_Key"] == "sk-good"
    unset = maia("setup", "--url", httpserver.url_for(""), "--key-env", "NOT_SET_ANYWHERE")
    assert unset.returncode == 2
    assert "NOT_SET_ANYWHERE is not set" in unset.stderr
    assert "Traceback" not in unset.stderr


def test_refused_key_is_said_and_nothing_is_saved(httpserver: HTTPServer, home: Path) -> None:
    serve(httpserver)
    result = maia("setup", "--url", httpserver.url_for(""), "--key", "sk-wrong")
    assert result.returncode == 1
    assert "✗ Key refused: the proxy answered HTTP 401" in result.stdout
    assert "Nothing saved." in result.stdout
    assert not (home / "settings.json").exists()


def test_unreachable_proxy_is_said(home: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = maia("setup", "--url", f"http://127.0.0.1:{port}")
    assert result.returncode == 1
    assert f"✗ Unreachable: nothing answers at http://127.0.0.1:{port}/v1/models" in result.stdout
    assert not (home / "settings.json").exists()
    saved = maia("setup", "--url", f"http://127.0.0.1:{port}", "--no-check")
    assert saved.returncode == 0
    assert json.loads((home / "settings.json").read_text()) == {"LiteLLM_URL": f"http://127.0.0.1:{port}"}


def test_questions_when_no_option_is_given(httpserver: HTTPServer, home: Path) -> None:
    serve(httpserver)
    result = maia("setup", stdin=f"{httpserver.url_for('')}\nsk-good\n3\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Proxy address [http://localhost:4000]:" in result.stdout
    assert "    2  beta" in result.stdout
    assert json.loads((home / "settings.json").read_text()) == {
        "LiteLLM_URL": httpserver.url_for(""),
        "LiteLLM_API_Key": "sk-good",
        "DefaultModel": "gamma",
    }


def test_bad_address_and_broken_file_are_clear_errors(home: Path) -> None:
    result = maia("setup", "--url", "localhost:4000")
    assert result.returncode == 2
    assert "must start with http:// or https://" in result.stderr
    (home / "settings.json").write_text("[1, 2]")
    broken = maia("setup", "--url", "http://127.0.0.1:9", "--no-check")
    assert broken.returncode == 1
    assert "must be a JSON object" in broken.stderr
    assert (home / "settings.json").read_text() == "[1, 2]"


def test_a_refused_key_is_asked_again(httpserver: HTTPServer, home: Path) -> None:
    serve(httpserver)
    url = httpserver.url_for("")
    result = maia("setup", stdin=f"{url}\nsk-wrong\ny\n\nsk-good\n1\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "✗ Key refused" in result.stdout and "Try another address or key? [Y/n]" in result.stdout
    assert f"Proxy address [{url}]" in result.stdout  # the address typed first is proposed again
    assert json.loads((home / "settings.json").read_text())["LiteLLM_API_Key"] == "sk-good"
