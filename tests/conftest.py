"""Shared fixtures: every test runs with its own MAIA home and launch folder."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

# The suite checks English messages whatever the developer's locale: set before MAIA is imported (the
# language is chosen once per process) and inherited by the processes the tests start. The tests of
# the French catalog (tests/test_i18n.py) set their own environment.
os.environ["LANGUAGE"] = "en"

FIXTURES = Path(__file__).parent / "fixtures" / "litellm"


@pytest.fixture(scope="session")
def make_httpserver() -> Iterator[HTTPServer]:
    """pytest-httpserver's server, threaded: a slow handler left over by one test never delays the next."""
    server = HTTPServer(host=HTTPServer.DEFAULT_LISTEN_HOST, port=HTTPServer.DEFAULT_LISTEN_PORT, threaded=True)
    server.start()
    yield server
    server.clear()
    if server.is_running():
        server.stop()


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Point MAIA_HOME and MAIA_CWD at fresh folders and clear MAIA's variables."""
    home = tmp_path / "maia-home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("MAIA_HOME", str(home))
    monkeypatch.setenv("MAIA_CWD", str(project))
    for var in ("MAIA_MODEL", "LITELLM_API_KEY", "INIT_CWD", "MAIA_DEBUG_LLM", "MAIA_NO_MARKDOWN", "MAIA_RETRY_SCALE"):
        monkeypatch.delenv(var, raising=False)
    return {"home": home, "project": project}


@pytest.fixture
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> float:
    """MAIA's own waits before a retry made a thousandth of the real ones, through ``MAIA_RETRY_SCALE`` (read by
    this process and inherited by the sub-agents and workers it starts); a delay the server states is kept."""
    monkeypatch.setenv("MAIA_RETRY_SCALE", "0.001")
    return 0.001


@pytest.fixture
def home(isolated_env: dict[str, Path]) -> Path:
    """The test's MAIA home."""
    return isolated_env["home"]


@pytest.fixture
def project(isolated_env: dict[str, Path]) -> Path:
    """The test's launch folder."""
    return isolated_env["project"]


@pytest.fixture
def write_settings(home: Path) -> Callable[..., Path]:
    """Write ``settings.json`` pointing at ``url`` with extra keys."""

    def write(url: str = "http://127.0.0.1:9", **extra: Any) -> Path:
        data = {"LiteLLM_URL": url, "OpenAI_EndPoint": "/v1/chat/completions", "LiteLLM_Models": "/v1/models"}
        data.update(extra)
        path = home / "settings.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        return path

    return write


@pytest.fixture
def server(httpserver: HTTPServer, write_settings: Callable[..., Path]) -> HTTPServer:
    """A LiteLLM-format server on loopback: settings point at it, /v1/models answers the captured list."""
    write_settings(httpserver.url_for(""))
    httpserver.expect_request("/v1/models").respond_with_data(
        fixture_bytes("proxy-models.json"), content_type="application/json"
    )
    return httpserver


def trust_project(folder: Path | None = None) -> None:
    """The user trusts the folder (default: the test's launch folder) with what its files grant now
    (issue 25: a project's allow rules, servers, tools and agents' grants count only once trusted)."""
    from maia.core.trust import trust_folder

    trust_folder(folder or Path(os.environ["MAIA_CWD"]), Path(os.environ["MAIA_HOME"]))


def fixture_bytes(name: str) -> bytes:
    """The raw bytes of a capture."""
    return (FIXTURES / name).read_bytes()


def fixture_meta(name: str) -> dict[str, Any]:
    """The metadata of a capture (request, status, headers, scripted upstream turn)."""
    meta: dict[str, Any] = json.loads((FIXTURES / f"{name}.meta.json").read_text(encoding="utf-8"))
    return meta
