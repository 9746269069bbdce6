"""Man pages generated from the Click command tree: ``maia.1``, ``maia-chat.1``, ``maia-sessions-list.1``…

``python -m maia.commands.manual [DIR]`` writes them (default: ``man/`` at the repository's top level);
``--check`` exits 1 when the committed pages differ from what the commands say. The pages hold no
date, so they only change when the commands do.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from maia import __version__

ENVIRONMENT = [
    ("MAIA_HOME", "MAIA's folder instead of ~/.maia (settings.json, mcp.json, agents/, skills/, tools/, workflows/)."),
    ("MAIA_CWD", "The launch folder: the base of every relative path (else INIT_CWD, else the current folder)."),
    ("INIT_CWD", "The launch folder when MAIA_CWD is not set (set by npm and pnpm)."),
    ("MAIA_MODEL", "The model, after --model and before ./.maia/config.json, ~/.maia/config.json and DefaultModel."),
    ("LITELLM_API_KEY", "The proxy's key when settings.json has no LiteLLM_API_Key (never passed to commands)."),
    ("MAIA_DEBUG_LLM", "1 records the raw stream in ~/.maia/maia-llm-debug.log (0600); a path chooses the file."),
    ("MAIA_NO_MARKDOWN", "1 shows answers as plain text instead of Markdown."),
    ("MAIA_RETRY_SCALE", "A factor on MAIA's own waits before a retry (0.5 halves them, 0: at once); 1 by default."),
    ("MAIA_QUEUE", "The Redis queue of the workflow commands, after --queue and before Workflows.queue."),
    ("MAIA_QUEUE_HEARTBEAT", "Seconds a worker's run lock lives without renewal (default 30)."),
    ("MAIA_JOBS_DIR", "Where maia worker clones --git workflows (default: maia-jobs-UID in the temporary folder)."),
    ("NO_COLOR", "No colours (any value)."),
    ("FORCE_COLOR", "Colours even where the terminal description has none."),
    ("TERM", "dumb: no colours and no redrawing in place."),
    ("TMPDIR", "The temporary folder sandboxed commands may write to (and /tmp) without bubblewrap."),
    ("MAIA_RG", "The ripgrep binary for Grep and Glob; none forces the Python engine."),
    ("MAIA_SEARCH_ENGINE", "python forces the pure-Python search engine."),
    (
        "MAIA_SANDBOX_NAMESPACES",
        'off runs commands under Landlock alone, without bubblewrap ("Sandbox": "strict" then refuses them).',
    ),
    ("LC_ALL", "The language of MAIA's messages (first of the three): fr_FR.UTF-8 speaks French."),
    ("LC_MESSAGES", "The language of MAIA's messages when LC_ALL is not set."),
    ("LANG", "The language of MAIA's messages when neither is set; English by default."),
    ("LANGUAGE", "A list of languages tried first (LANGUAGE=en forces English); ignored when the locale is C."),
]
FILES = [
    ("~/.maia/settings.json", "The proxy's address and key, limits, permission rules, sandbox policy."),
    ("./.maia/settings.json", "The project's permission rules (may be committed)."),
    ("./.maia/settings.local.json", 'Your rules for this project ("always" answers), ignored by git.'),
    ("./.maia/config.json, ~/.maia/config.json", 'The model: {"model": "NAME"}.'),
    ("./.maia/.sessions/", "Saved sessions (private, ignored by git)."),
    ("./.maia/.gitignore", "Written by MAIA: keeps .sessions/ and settings.local.json out of git."),
    ("~/.maia/mcp.json, ./.mcp.json", "MCP servers."),
    ("~/.maia/agents/, ./.maia/agents/", "Sub-agents (NAME/AGENT.md)."),
    ("~/.maia/skills/, ../.maia/skills/, ./.agents/skills/, ./.maia/skills/", "Skills (NAME/SKILL.md)."),
    ("~/.maia/tools/, ./.maia/tools/", "Custom tools (NAME/TOOL.json)."),
    ("~/.maia/workflows/", "Workflows started by maia run."),
    ("~/.maia/history/", "What you typed in the chat, per launch folder."),
    ("~/.maia/cache/", "The last model list (for completion)."),
    ("~/.maia/logs/", "MCP logs: the SDK's (mcp.log) and each local server's stderr (mcp/NAME.stderr.log)."),
    ("~/.maia/session.key", "The secret that seals the session files MAIA writes (0600): others are not carried on."),
    ("~/.maia/locks/", "Locks for writing settings.local.json."),
    ("~/.maia/maia-llm-debug.log", "The raw model stream, when MAIA_DEBUG_LLM=1 (0600)."),
    ("~/.maia/errors.log", "The traceback of each unexpected error (a bug), to attach to a report (0600)."),
    ("MAIA.md, CLAUDE.md, AGENTS.md", "Project instructions (the first found in the launch folder)."),
]
EXIT_STATUS = [
    ("0", "Done."),
    ("1", "An error (the message says which), a failed request or save, a timeout."),
    ("2", "Bad usage, or a name that refers to nothing (session, model, workflow, agent)."),
    ("3", "maia ask stopped by its iteration limit."),
    ("130", "Interrupted (Ctrl+C, SIGTERM, SIGHUP) or stopped."),
    ("141", "The reader of the output went away (maia sessions list | head): ended quietly, as on SIGPIPE."),
]


def _escape(text: str) -> str:
    """Text safe in roff: backslashes and leading dots or quotes neutralised, hyphens as minus signs."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    # every roff reads ASCII: other characters as their Unicode escapes (\[u00A7] for §…)
    text = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in text)
    return re.sub(r"^([.'])", r"\\&\1", text, flags=re.MULTILINE)


def _paragraphs(text: str) -> list[str]:
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.splitlines()
        if lines and lines[0].strip() == "\b":  # click's "do not rewrap" marker: keep the lines
            out.append(".nf\n" + "\n".join(_escape(line) for line in lines[1:]) + "\n.fi")
        else:
            out.append(_escape(" ".join(line.strip() for line in lines)))
    return out


def _walk(command: click.Command, path: list[str]) -> list[tuple[list[str], click.Command]]:
    found = [(path, command)]
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name=" ".join(path), **command.context_settings)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                found.extend(_walk(sub, [*path, name]))
    return found


def page_name(path: list[str]) -> str:
    """``maia sessions list`` → ``maia-sessions-list.1``."""
    return "-".join(path) + ".1"


def render(path: list[str], command: click.Command, children: list[list[str]]) -> str:
    """One man page."""
    title = "-".join(path).upper()
    ctx = click.Context(command, info_name=" ".join(path), **command.context_settings)
    short = command.get_short_help_str(limit=200) if path[1:] else "a command-line AI coding assistant"
    lines = [
        f'.TH {_escape(title)} 1 "" "maia {__version__}" "MAIA Manual"',
        ".SH NAME",
        f"{_escape('-'.join(path))} \\- {_escape(short.rstrip('.'))}",
        ".SH SYNOPSIS",
        f".B {_escape(' '.join(path))}",
        _escape(" ".join(command.collect_usage_pieces(ctx))),
        ".SH DESCRIPTION",
    ]
    for paragraph in _paragraphs(command.help or ""):
        lines.extend([paragraph, ".PP"])
    if lines[-1] == ".PP":
        lines.pop()
    options = [p for p in command.get_params(ctx) if isinstance(p, click.Option) and not p.hidden]
    if options:
        lines.append(".SH OPTIONS")
        for option in options:
            record = option.get_help_record(ctx)
            if record is None:
                continue
            names, help_text = record
            lines.extend([".TP", f".B {_escape(names)}", _escape(help_text) or "\\&"])
    if children:
        lines.append(".SH COMMANDS")
        for child in children:
            sub = _command_at(child)
            lines.extend(
                [".TP", f".B {_escape(' '.join(child[len(path) :]))}", _escape(sub.get_short_help_str(limit=200))]
            )
    if len(path) == 1:
        lines.append(".SH ENVIRONMENT")
        for name, meaning in ENVIRONMENT:
            lines.extend([".TP", f".B {name}", _escape(meaning)])
        lines.append(".SH FILES")
        for name, meaning in FILES:
            lines.extend([".TP", f".I {_escape(name)}", _escape(meaning)])
    lines.append(".SH EXIT STATUS")
    for code, meaning in EXIT_STATUS:
        lines.extend([".TP", f".B {code}", _escape(meaning)])
    related = ["maia"] if len(path) > 1 else []
    related += ["-".join(child) for child in children]
    if related:
        lines.append(".SH SEE ALSO")
        lines.append(",\n".join(f".BR {_escape(name)} (1)" for name in related))
    return "\n".join(lines) + "\n"


def _command_at(path: list[str]) -> click.Command:
    from . import cli

    command: click.Command = cli
    for name in path[1:]:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None
        command = found
    return command


def pages() -> dict[str, str]:
    """Every page, by file name (in English: a process speaking another language is refused)."""
    from maia.i18n import language

    from . import cli

    if language() is not None:
        raise RuntimeError(f"the man pages are written in English; this process speaks {language()!r}")

    tree = _walk(cli, ["maia"])
    result: dict[str, str] = {}
    for path, command in tree:
        children = [p for p, _c in tree if len(p) == len(path) + 1 and p[: len(path)] == path]
        result[page_name(path)] = render(path, command, children)
    return result


def write(folder: Path) -> list[str]:
    """Write the pages into ``folder`` (stale pages of removed commands deleted); the names written."""
    folder.mkdir(parents=True, exist_ok=True)
    generated = pages()
    for stale in folder.glob("maia*.1"):
        if stale.name not in generated:
            stale.unlink()
    for name, text in generated.items():
        (folder / name).write_text(text, encoding="utf-8")
    return sorted(generated)


def stale(folder: Path) -> list[str]:
    """The pages of ``folder`` that differ from what the commands say (missing and extra ones included)."""
    generated = pages()
    present = {p.name: p.read_text(encoding="utf-8") for p in folder.glob("maia*.1")}
    names = set(generated) | set(present)
    return sorted(n for n in names if generated.get(n) != present.get(n))


def main(argv: list[str] | None = None) -> int:
    """``python -m maia.commands.manual [--check] [DIR]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    from maia.i18n import language

    if language() is not None:
        # the pages are English whatever the locale: help texts are translated when the commands are
        # imported, so a process that speaks another language runs the generator again in English
        import os
        import subprocess

        english = {**os.environ, "LANGUAGE": "en"}
        return subprocess.run([sys.executable, "-m", "maia.commands.manual", *args], env=english).returncode
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    folder = Path(args[0]) if args else Path(__file__).resolve().parents[1] / "man"
    if check:
        different = stale(folder)
        for name in different:
            print(f"stale: {folder / name}", file=sys.stderr)
        return 1 if different else 0
    for name in write(folder):
        print(folder / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
