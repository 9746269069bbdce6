"""The root command: help, version, lazy subcommands, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from maia.commands import SUBCOMMANDS, cli


def test_bare_maia_starts_the_chat_which_needs_a_terminal() -> None:
    result = CliRunner().invoke(cli, [])
    assert result.exit_code == 1
    assert "maia chat needs a terminal (TTY). For scripts and pipes use `maia ask`." in result.output


def test_help_lists_every_subcommand_with_its_summary() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    rows = [line.split(None, 1) for line in result.output.splitlines() if line.startswith("  ") and line.strip()]
    listed = {row[0]: " ".join(row[1].split()) for row in rows if len(row) == 2}
    for name, (_target, summary) in SUBCOMMANDS.items():
        assert listed.get(name, "").startswith(" ".join(summary.split())[:40]), (name, result.output)


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_flags(flag: str) -> None:
    result = CliRunner().invoke(cli, [flag])
    assert result.exit_code == 0 and "Usage: maia [OPTIONS] COMMAND" in result.output.replace("[COMMAND]", "COMMAND")


def _all_commands() -> list[list[str]]:
    paths: list[list[str]] = []

    def walk(command: click.Command, path: list[str]) -> None:
        paths.append(path)
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                walk(sub, [*path, name])

    walk(cli, [])
    return paths


@pytest.mark.parametrize("path", _all_commands(), ids=lambda p: " ".join(p) or "maia")
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_every_subcommand_has_help(path: list[str], flag: str) -> None:
    result = CliRunner().invoke(cli, [*path, flag])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Usage: maia")


def test_version() -> None:
    from maia import __version__

    result = CliRunner().invoke(cli, ["--version"])
    assert result.output == f"maia {__version__}\n"


def test_a_mistyped_command_is_a_usage_error_with_a_suggestion() -> None:
    result = CliRunner().invoke(cli, ["sesions", "list"])
    assert result.exit_code == 2
    assert "No such command 'sesions'. Did you mean 'sessions'?" in result.output


def test_a_request_as_first_argument_starts_the_chat() -> None:
    # the chat needs a terminal: reaching that check proves the request went to `maia chat`
    result = CliRunner().invoke(cli, ["fix the failing test"])
    assert result.exit_code == 1 and "maia chat needs a terminal" in result.output
    result = CliRunner().invoke(cli, ["explain", "-m", "gpt"])
    assert result.exit_code == 1 and "maia chat needs a terminal" in result.output


@pytest.mark.parametrize("args", [["-m", "gpt"], ["--continue"], ["--resume", "old", "fix it"]])
def test_chat_options_without_the_chat_command_go_to_the_chat(args: list[str]) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1 and "maia chat needs a terminal" in result.output, result.output


def test_an_option_neither_knows_is_the_chats_usage_error() -> None:
    result = CliRunner().invoke(cli, ["--bogus"])
    assert result.exit_code == 2 and "No such option '--bogus'" in result.output


def test_help_imports_no_heavy_module() -> None:
    heavy = [
        "httpx",
        "tiktoken",
        "blessed",
        "rich",
        "jsonschema",
        "tree_sitter",
        "maia.provider.litellm",
        "mcp",
        "httpx2",
    ]
    code = (
        "import sys\n"
        "from maia.commands import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        f"print(__import__('json').dumps([m for m in {heavy!r} if m in sys.modules]))\n"
    )
    for argv in (["--help"], ["models", "--help"], ["mcp", "--help"]):
        script = code.replace("['--help']", repr(argv))
        out = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        assert json.loads(out.stdout.strip().splitlines()[-1]) == [], argv


def test_console_script_maps_errors_to_exit_codes(tmp_path: object) -> None:
    env = {**os.environ}
    done = subprocess.run([sys.executable, "-m", "maia", "models"], capture_output=True, text=True, env=env)
    assert done.returncode == 1
    assert done.stderr.startswith("Error: Settings file not found:")
    assert "Traceback" not in done.stderr
    usage = subprocess.run([sys.executable, "-m", "maia", "models", "--bogus"], capture_output=True, text=True)
    assert usage.returncode == 2 and "No such option '--bogus'" in usage.stderr
