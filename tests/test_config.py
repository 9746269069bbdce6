"""Settings validation (§7.3), launch folder (§5.2) and model resolution (§5.3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maia.core.errors import ConfigError
from maia.core.paths import launch_dir, maia_home
from maia.core.settings import join_url, load_settings, parse_model_spec, resolve_model

REPO = Path(__file__).resolve().parents[1]


def _write(home: Path, text: str) -> Path:
    path = home / "settings.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_missing_settings_gives_the_path_and_a_complete_example(home: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(home)
    message = str(info.value)
    assert str(home / "settings.json") in message
    example = message[message.index("{") :]
    assert set(json.loads(example)) >= {"LiteLLM_URL", "OpenAI_EndPoint", "LiteLLM_Models"}


def test_example_in_repo_is_the_packaged_one_and_valid(home: Path) -> None:
    packaged = (REPO / "maia" / "data" / "settings.example.json").read_text()
    assert (REPO / "settings.example.json").read_text() == packaged
    _write(home, packaged)
    settings = load_settings(home, env={})
    assert settings.warnings == []
    assert settings.chat_url == "http://localhost:4000/v1/chat/completions"


def test_invalid_json_names_line_and_column(home: Path) -> None:
    path = _write(home, '{\n  "LiteLLM_URL": "http://x",\n  "OpenAI_EndPoint": oops\n}')
    with pytest.raises(ConfigError) as info:
        load_settings(home)
    assert str(info.value).startswith(f"{path}: invalid JSON at line 3, column 22:")


def test_wrong_type_names_field_expected_type_and_fix(home: Path) -> None:
    _write(
        home,
        json.dumps(
            {"LiteLLM_URL": "http://x", "OpenAI_EndPoint": "/c", "LiteLLM_Models": "/m", "MaxIterations": "fifty"}
        ),
    )
    with pytest.raises(ConfigError) as info:
        load_settings(home)
    assert str(info.value) == (
        f'{home / "settings.json"}: "MaxIterations" must be a whole number, not a string; '
        "fix: a whole number of at least 1, e.g. 50."
    )


def test_nested_wrong_type_names_the_nested_field(home: Path) -> None:
    _write(
        home,
        json.dumps(
            {
                "LiteLLM_URL": "http://x",
                "OpenAI_EndPoint": "/c",
                "LiteLLM_Models": "/m",
                "permissions": {"allow": ["Read", 3]},
            }
        ),
    )
    with pytest.raises(ConfigError) as info:
        load_settings(home)
    assert '"permissions.allow[1]" must be a string, not a whole number' in str(info.value)


def test_missing_required_key_is_named(home: Path) -> None:
    _write(home, json.dumps({"OpenAI_EndPoint": "/c"}))
    with pytest.raises(ConfigError) as info:
        load_settings(home)
    assert '"LiteLLM_URL" is missing' in str(info.value)
    assert "http://localhost:4000" in str(info.value)


def test_endpoints_are_optional_with_the_usual_paths(home: Path) -> None:
    _write(home, json.dumps({"LiteLLM_URL": "http://x:4000/"}))
    settings = load_settings(home)
    assert settings.chat_url == "http://x:4000/v1/chat/completions"
    assert settings.models_url == "http://x:4000/v1/models"


def test_url_without_scheme_is_refused(home: Path) -> None:
    _write(home, json.dumps({"LiteLLM_URL": "localhost:4000", "OpenAI_EndPoint": "/c", "LiteLLM_Models": "/m"}))
    with pytest.raises(ConfigError) as info:
        load_settings(home)
    assert "must start with http:// or https://" in str(info.value)


def test_non_positive_numbers_are_refused(home: Path) -> None:
    _write(
        home,
        json.dumps({"LiteLLM_URL": "http://x", "OpenAI_EndPoint": "/c", "LiteLLM_Models": "/m", "MaxOutputTokens": 0}),
    )
    with pytest.raises(ConfigError) as info:
        load_settings(home)
    assert '"MaxOutputTokens" must be at least 1, not 0' in str(info.value)


def test_top_level_not_an_object(home: Path) -> None:
    _write(home, "[1, 2]")
    with pytest.raises(ConfigError) as info:
        load_settings(home)
    assert "must be a JSON object" in str(info.value)


def test_unknown_key_is_a_warning_not_a_failure(home: Path) -> None:
    _write(
        home, json.dumps({"LiteLLM_URL": "http://x", "OpenAI_EndPoint": "/c", "LiteLLM_Models": "/m", "Colour": "blue"})
    )
    settings = load_settings(home, env={})
    assert settings.warnings == [f'{home / "settings.json"}: unknown setting "Colour" ignored.']


def test_key_from_settings_wins_over_environment(home: Path) -> None:
    _write(
        home,
        json.dumps(
            {"LiteLLM_URL": "http://x", "OpenAI_EndPoint": "/c", "LiteLLM_Models": "/m", "LiteLLM_API_Key": "sk-file"}
        ),
    )
    assert load_settings(home, env={"LITELLM_API_KEY": "sk-env"}).api_key == "sk-file"
    _write(home, json.dumps({"LiteLLM_URL": "http://x", "OpenAI_EndPoint": "/c", "LiteLLM_Models": "/m"}))
    assert load_settings(home, env={"LITELLM_API_KEY": "sk-env"}).api_key == "sk-env"
    assert load_settings(home, env={}).api_key is None


def test_defaults(home: Path) -> None:
    _write(home, json.dumps({"LiteLLM_URL": "http://x/", "OpenAI_EndPoint": "v1/chat", "LiteLLM_Models": "/m"}))
    settings = load_settings(home, env={})
    assert settings.max_iterations == 50 and settings.max_output_tokens is None
    assert settings.chat_url == "http://x/v1/chat"


@pytest.mark.parametrize(
    ("base", "suffix", "joined"),
    [
        ("http://h:4000", "/v1/models", "http://h:4000/v1/models"),
        ("http://h/", "/v1", "http://h/v1"),
        ("http://h", "v1", "http://h/v1"),
        ("http://h/", "v1", "http://h/v1"),
    ],
)
def test_join_url(base: str, suffix: str, joined: str) -> None:
    assert join_url(base, suffix) == joined


def test_launch_dir_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    monkeypatch.chdir(tmp_path)
    assert launch_dir({"MAIA_CWD": str(a), "INIT_CWD": str(b)}) == a
    assert launch_dir({"INIT_CWD": str(b)}) == b
    assert launch_dir({}) == tmp_path.resolve()
    with pytest.raises(ConfigError, match="MAIA_CWD points to a folder that does not exist"):
        launch_dir({"MAIA_CWD": str(tmp_path / "missing")})


def test_maia_home_override(tmp_path: Path) -> None:
    assert maia_home({"MAIA_HOME": str(tmp_path)}) == tmp_path.resolve()
    assert maia_home({}) == Path.home() / ".maia"


def test_model_resolution_order(project: Path, home: Path) -> None:
    (project / ".maia").mkdir()
    (project / ".maia" / "config.json").write_text('{"model": "litellm:project-model"}')
    (home / "config.json").write_text('{"model": "home-model"}')
    env = {"MAIA_MODEL": "env-model"}
    assert resolve_model("litellm:cli/model:v1", project, home, env).name == "cli/model:v1"  # type: ignore[union-attr]
    assert resolve_model(None, project, home, env).name == "env-model"  # type: ignore[union-attr]
    choice = resolve_model(None, project, home, {})
    assert choice is not None and (choice.name, choice.source) == (
        "project-model",
        str(project / ".maia" / "config.json"),
    )
    (project / ".maia" / "config.json").unlink()
    assert resolve_model(None, project, home, {}).name == "home-model"  # type: ignore[union-attr]
    (home / "config.json").unlink()
    assert resolve_model(None, project, home, {}) is None


def test_broken_config_json_is_a_clear_error(project: Path, home: Path) -> None:
    (home / "config.json").write_text('{"model": 42}')
    with pytest.raises(ConfigError, match='"model" must be a non-empty string'):
        resolve_model(None, project, home, {})
    (home / "config.json").write_text("{model}")
    with pytest.raises(ConfigError, match="invalid JSON at line 1, column 2"):
        resolve_model(None, project, home, {})


@pytest.mark.parametrize(
    ("spec", "name"), [("litellm:gpt-4o", "gpt-4o"), ("gpt-4o", "gpt-4o"), ("litellm:a/b:c", "a/b:c"), (" x ", "x")]
)
def test_parse_model_spec(spec: str, name: str) -> None:
    assert parse_model_spec(spec) == name


def test_empty_model_spec_is_refused() -> None:
    with pytest.raises(ConfigError):
        parse_model_spec("litellm:")


def test_theme_setting(home: Path) -> None:
    base = {"LiteLLM_URL": "http://x", "OpenAI_EndPoint": "/c", "LiteLLM_Models": "/m"}
    _write(home, json.dumps(base))
    assert load_settings(home, env={}).theme == "auto"
    _write(home, json.dumps({**base, "Theme": "light"}))
    assert load_settings(home, env={}).theme == "light"
    _write(home, json.dumps({**base, "Theme": "solarized"}))
    with pytest.raises(ConfigError) as info:
        load_settings(home, env={})
    assert str(info.value) == (
        f'{home / "settings.json"}: "Theme" must be one of "auto", "dark", "light", not "solarized"; '
        'fix: "auto" (follow the terminal\'s background), "dark" or "light".'
    )


SURELY_CASES = [
    {"LiteLLM_URL": "http://x"},
    {"LiteLLM_URL": "ftp://x"},
    {"LiteLLM_URL": 3},
    {},
    {"LiteLLM_URL": "https://x", "MaxIterations": 0},
    {"LiteLLM_URL": "https://x", "MaxIterations": True},
    {"LiteLLM_URL": "https://x", "MaxIterations": 2.0},
    {"LiteLLM_URL": "https://x", "MaxIterations": 2.5},
    {"LiteLLM_URL": "https://x", "MaxContextTokens": 999},
    {"LiteLLM_URL": "https://x", "MaxContextTokens": {"m": 128000, "n": 5}},
    {"LiteLLM_URL": "https://x", "MaxContextTokens": {"m": 128000}},
    {"LiteLLM_URL": "https://x", "MaxContextTokens": "128000"},
    {"LiteLLM_URL": "https://x", "ReadTimeout": 0},
    {"LiteLLM_URL": "https://x", "ReadTimeout": 0.5, "OutageRetrySeconds": 0},
    {"LiteLLM_URL": "https://x", "RateLimitBackoff": []},
    {"LiteLLM_URL": "https://x", "RateLimitBackoff": [1, 2.5, False]},
    {"LiteLLM_URL": "https://x", "RateLimitPatterns": [""]},
    {"LiteLLM_URL": "https://x", "Theme": "dark", "Sandbox": "strict", "SandboxNetwork": "on", "Mode": "plan"},
    {"LiteLLM_URL": "https://x", "Theme": 1},
    {"LiteLLM_URL": "https://x", "Mode": "yolo"},
    {"LiteLLM_URL": "https://x", "permissions": {"allow": ["Read"], "deny": [3]}},
    {"LiteLLM_URL": "https://x", "permissions": {"allow": ["Read"], "other": 3}},
    {"LiteLLM_URL": "https://x", "Workflows": {"queue": "redis://h:6379/0"}},
    {"LiteLLM_URL": "https://x", "Workflows": {"queue": "http://h"}},
    {"LiteLLM_URL": "https://x", "hooks": [], "Unknown": 1},
    {"LiteLLM_URL": "https://x", "DefaultModel": "", "SandboxHiddenPaths": ["~/.ssh"]},
    {"LiteLLM_URL": "https://x", "SandboxWritableRoots": "~/.cache"},
]


@pytest.mark.parametrize("data", SURELY_CASES)
def test_the_quick_reader_never_passes_what_jsonschema_refuses(data: dict[str, object]) -> None:
    """The reader that spares the jsonschema import agrees with jsonschema whenever it is sure."""
    import jsonschema

    from maia.core.settings import SETTINGS_SCHEMA, surely_valid

    valid = jsonschema.Draft202012Validator(SETTINGS_SCHEMA).is_valid(data)
    assert surely_valid(SETTINGS_SCHEMA, data) in (valid, None)
    if valid:
        assert surely_valid(SETTINGS_SCHEMA, data) is True  # the files of nearly every start: no jsonschema needed


def test_valid_settings_load_without_jsonschema(home: Path) -> None:
    """A valid settings file is read without importing jsonschema (its import is most of a short run's start)."""
    import subprocess
    import sys

    (home / "settings.json").write_text(
        json.dumps({"LiteLLM_URL": "http://x", "MaxContextTokens": {"m": 128000}, "permissions": {"allow": ["Read"]}})
    )
    code = (
        "import sys; from pathlib import Path; from maia.core.settings import load_settings; "
        f"load_settings(Path({str(home)!r})); print('jsonschema' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


HEADER_CASES = [
    {"description": "Reviews things."},
    {"description": "Reviews things.", "name": "rev", "model": 4, "tools": "Read, Grep", "skills": []},
    {"description": "   "},
    {"name": "rev"},
    {"description": "x", "name": "bad name"},
    {"description": "x", "tools": ["Read", 3, None]},
    {"description": "x", "permissions": {"allow": ["Read"], "deny": "Bash"}},
    {"description": "x", "permissions": {"allow": ["Read"], "other": []}},
    {"description": "x", "effort": "high"},
    {"description": "x", "effort": "max"},
    {"description": "x", "unknownKey": 1},
    {"description": "x", "model": True},
]


@pytest.mark.parametrize("data", HEADER_CASES)
def test_the_quick_reader_agrees_with_jsonschema_on_agent_headers(data: dict[str, object]) -> None:
    """The same reader spares jsonschema when an AGENT.md header is valid (a workflow worker reads several)."""
    import jsonschema

    from maia.core.schemas import load_schema, schema_errors
    from maia.core.settings import surely_valid

    schema = load_schema("agent-header")
    valid = jsonschema.Draft202012Validator(schema).is_valid(data)
    assert surely_valid(schema, data) in (valid, None)
    assert (schema_errors(data, "agent-header", {}) == []) == valid
