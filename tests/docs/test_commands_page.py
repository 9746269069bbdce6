"""docs/commands.md covers the Click tree exactly, and no page names a command or option that does not exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from maia.commands import cli
from maia.commands.manual import _walk
from tests.docs.markdown import DOCS, REPO, SHELLS, code_spans, fences, numbered_prose, pages, sections, tables

PAGE = DOCS / "commands.md"
TREE = {" ".join(path): command for path, command in _walk(cli, ["maia"])}
HELP = frozenset({"-h", "--help"})
_OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def options_of(command: click.Command) -> set[str]:
    """Every option name of a command (long, short, and the --no- forms), help and hidden ones left out."""
    ctx = click.Context(command, info_name="maia", **command.context_settings)
    names: set[str] = set()
    for param in command.get_params(ctx):
        if isinstance(param, click.Option) and not param.hidden:
            names.update(param.opts)
            names.update(param.secondary_opts)
    return names - HELP


def usage_of(path: str, command: click.Command) -> str:
    """``maia sessions show [OPTIONS] NAME`` as Click prints it."""
    ctx = click.Context(command, info_name=path, **command.context_settings)
    return f"{path} {' '.join(command.collect_usage_pieces(ctx))}"


def command_sections() -> dict[str, list[str]]:
    return {title: lines for title, lines in sections(PAGE, 3).items() if re.fullmatch(r"maia( [a-z-]+)*", title)}


def test_every_command_has_a_section_and_every_section_a_command() -> None:
    documented = set(command_sections())
    assert documented - set(TREE) == set(), "sections for commands that do not exist"
    assert set(TREE) - documented == set(), "commands without a section in docs/commands.md"


@pytest.mark.parametrize("path", sorted(TREE))
def test_the_section_gives_usage_options_and_exit_status(path: str) -> None:
    command = TREE[path]
    lines = command_sections()[path]
    text = "\n".join(lines)
    assert f"`{usage_of(path, command)}`" in text, f"{path}: write the usage line `{usage_of(path, command)}`"
    documented: set[str] = set()
    for table in tables(lines):
        if table[0][0] == "option":
            for row in table[1:]:
                documented.update(_OPTION.findall(row[0]))
    assert documented == options_of(command), f"{path}: the options table differs from the command's options"
    runs_itself = not isinstance(command, click.Group) or command.invoke_without_command
    if runs_itself and path != "maia":
        assert "Exit status" in text, f"{path}: say its exit status"


def test_the_chat_commands_are_those_the_chat_registers() -> None:
    from maia.frontends.chat.commands import default_registry

    registered = set()
    for command in default_registry():
        registered.add(command.name)
        registered.update(command.aliases)
    (table, *_rest) = tables(sections(PAGE, 2)["In the chat"])
    assert table[0][0] == "command"
    documented = {name for row in table[1:] for span in code_spans(row[0]) for name in re.findall(r"^/(\w+)", span)}
    assert documented == registered


# --- every `maia …` a page mentions exists, with options it has --------------------------------


def mentions(path: Path) -> list[tuple[int, str]]:
    """(line, text) of each `maia …` command a page shows: inline code and shell lines."""
    found: list[tuple[int, str]] = []
    for number, line in numbered_prose(path):
        found.extend((number, span.removeprefix("$ ")) for span in code_spans(line))
    for fence in fences(path):
        if fence.language in SHELLS:
            for offset, line in enumerate(fence.lines, 1):
                found.append((fence.line + offset, re.sub(r"\s#\s.*$", "", line)))
    return [(n, t) for n, t in found if re.match(r"^\s*(\$ )?maia( |$)", t) or " maia " in f" {t} "]


def _words(text: str) -> list[list[str]]:
    """The simple commands of a line whose first word (after NAME=value prefixes) is `maia`."""
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        tokens = text.split()
    commands: list[list[str]] = [[]]
    for token in tokens:
        if re.fullmatch(r"[;&|()<>]+", token):
            commands.append([])
        else:
            commands[-1].append(token)
    found = []
    for words in commands:
        while words and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]):
            words = words[1:]
        if words and words[0] == "maia":
            found.append(words)
    return found


def check(words: list[str]) -> str | None:
    """What is wrong with a `maia …` command line, or None."""
    command: click.Command = cli
    path = ["maia"]
    rest = words[1:]
    while isinstance(command, click.Group) and rest and rest[0] in command.list_commands(click.Context(command)):
        path.append(rest.pop(0))
        command = TREE[" ".join(path)]
    known = options_of(command) | HELP
    if command is cli:  # bare `maia` is the chat: `maia --model NAME` takes the chat's options
        known |= options_of(TREE["maia chat"])
    for word in rest:
        if word == "--":
            break
        for piece in re.split(r"[\[\]|]", word):
            if re.match(r"^--?[A-Za-z]", piece):
                name = piece.split("=")[0]
                if name not in known:
                    return f"`{' '.join(path)}` has no option {name}"
    return None


@pytest.mark.parametrize("page", [*pages(), REPO / "README.md"], ids=lambda p: p.name)
def test_every_command_a_page_shows_exists(page: Path) -> None:
    problems = []
    for number, text in mentions(page):
        for words in _words(text):
            problem = check(words)
            if problem:
                problems.append(f"{page.relative_to(REPO)}:{number}: {text.strip()}: {problem}")
    assert not problems, "\n".join(problems)


def test_the_pages_show_commands() -> None:
    found = [w for page in pages() for _n, text in mentions(page) for w in _words(text)]
    assert len(found) >= 100
    assert ["maia", "mcp", "add", "files", "-e", "ROOT=/data", "--", "npx"] in [w[:8] for w in found]


def test_the_checker_catches_a_wrong_option() -> None:
    assert check(["maia", "sessions", "list", "--all"]) == "`maia sessions list` has no option --all"
    assert check(["maia", "--continue"]) is None  # the chat's option: bare maia is the chat
    assert check(["maia", "--all"]) == "`maia` has no option --all"
    assert check(["maia", "mcp", "add", "x", "-e", "A=1", "--", "npx", "--weird"]) is None
    assert check(["maia", "ask", "-m", "gpt-4o", "--allow", "Bash(x)", "[--no-wait]"]) is None
