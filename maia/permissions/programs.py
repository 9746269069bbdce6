"""What programs do with their arguments, read from the program tables (``tables.py``, the data).

This module is the code that reads them, and the few parsers a table names as hooks:

- **wrappers** run another command given as words (``sudo``, ``timeout``, ``env``…): what they run
  becomes a part of its own, found by reading the wrapper's options as the wrapper does;
- **shells and interpreters** run text (``sh -c``, ``python -c``, a script on stdin): shell text is
  read again; other code is *opaque*;
- **opaque programs** (``gdb``, ``parallel``, ``tmux``, ``source``…) run commands nobody can see;
- **global options** come before a subcommand (``git -C dir push``): rules match past them;
- **dangerous options** turn a reader into a writer or an executor (``git log --output``,
  ``find -exec``, ``sed -i``…): a prefix rule covers them only when it names them;
- **builtins that evaluate** their arguments (``printf -v``, ``read``, ``declare``…) are never plain.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from maia.permissions import tables
from maia.permissions.options import OptionSpec, operand_suffixes, option_names, scan_options
from maia.permissions.parts import DYN, Part
from maia.permissions.tables import OTHER_SHELLS as OTHER_SHELLS  # defined with the tables ("always" reads them)
from maia.permissions.tables import SHELLS as SHELLS

SYSTEM_DIRS = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"})
# where a stdin script is fed from: /dev/stdin and friends
_STDIN_FILES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


# kept here too: the engine and the plain reader read program names and git's subcommand through this module
program_name = tables.program_name
git_subcommand = tables.git_subcommand


# --- inert variables -----------------------------------------------------------------------------

DEFAULT_INERT = frozenset(
    {
        "LANG",
        "LANGUAGE",
        "LC_ALL",
        "LC_CTYPE",
        "LC_MESSAGES",
        "LC_COLLATE",
        "LC_NUMERIC",
        "LC_TIME",
        "LC_MONETARY",
        "TZ",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "COLUMNS",
        "LINES",
        "CI",
        "NODE_ENV",
        "RUST_BACKTRACE",
        "RUST_LOG",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
    }
)

# Variables that change what runs, where a program looks for code or configuration, or how the
# shell reads text: never inert, whatever the settings say.
_DANGEROUS_EXACT = frozenset(
    {
        "PATH",
        "ENV",
        "IFS",
        "PS1",
        "PS2",
        "PS3",
        "PS4",
        "SHELLOPTS",
        "BASHOPTS",
        "PROMPT_COMMAND",
        "CDPATH",
        "GLOBIGNORE",
        "EXECIGNORE",
        "FIGNORE",
        "HISTFILE",
        "INPUTRC",
        "HOME",
        "PWD",
        "OLDPWD",
        "SHELL",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "MANPAGER",
        "BROWSER",
        "TMPDIR",
        "POSIXLY_CORRECT",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PYTHONHOME",
        "PYTHONINSPECT",
        "PYTHONUSERBASE",
        "PYTHONEXECUTABLE",
        "PYTHONWARNINGS",
        "PYTHONBREAKPOINT",
        "PYTHONPLATLIBDIR",
        "PYTHONPYCACHEPREFIX",
        "PERLLIB",
        "GCONV_PATH",
        "LOCPATH",
        "NLSPATH",
        "HOSTALIASES",
        "MAKEFLAGS",
        "MAKEFILES",
        "MFLAGS",
        "GNUMAKEFLAGS",
        "GOFLAGS",
        "GOROOT",
        "GOPATH",
        "GOBIN",
        "GOTOOLCHAIN",
        "GOENV",
        "GOPROXY",
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "CC",
        "CXX",
        "CPP",
        "LD",
        "AR",
        "CFLAGS",
        "CXXFLAGS",
        "CPPFLAGS",
        "LDFLAGS",
        "TERMINFO",
        "TERMINFO_DIRS",
        "TERMCAP",
        "KUBECONFIG",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "MAVEN_OPTS",
    }
)
_DANGEROUS_PREFIXES: tuple[str, ...] = (
    "LD_",
    "DYLD_",
    "BASH",
    "GIT_",
    "XDG_",
    "LESS",
    "NPM_",
    "YARN_",
    "PNPM_",
    "BUNDLE_",
    "GEM_",
    "CARGO_",
    "PIP_",
    "PYTEST_",
    "PERL5",
    "RUBY",
    "NODE_OPTIONS",
    "NODE_PATH",
    "OPENSSL_",
    "SSL_",
    "CURL_",
    "WGET",
    "DOCKER_",
    "KUBE",
    "AWS_",
    "AZURE_",
    "GOOGLE_",
    "CLOUDSDK_",
    "TF_",
    "HELM_",
    "ANSIBLE_",
    "GRADLE_",
    "SSH_",
    "GNUPG",
    "GPG",
    "SUDO_",
    "PKG_CONFIG",
    "CMAKE_",
    "CONDA_",
    "POETRY_",
    "UV_",
    "TOX_",
    "COMPOSER_",
    "MAIA_",
    "LITELLM",
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# read by programs as extra options or commands: GZIP, BZIP2, ZIPOPT, TAR_OPTIONS, XZ_OPT, MANOPT…
_DANGEROUS_EXACT |= frozenset(
    {
        "GZIP",
        "BZIP",
        "BZIP2",
        "ZIP",
        "UNZIP",
        "ZIPOPT",
        "UNZIPOPT",
        "XZ_DEFAULTS",
        "ZSTD_NBTHREADS",
        "LZOP",
        "GREP_OPTIONS",
        "GREP_COLOR",
        "SYSTEMD_PAGER",
        "SYSTEMD_EDITOR",
        "SUDO_ASKPASS",
        "SSH_ASKPASS",
        "GIT_ASKPASS",
        "VIMINIT",
        "EXINIT",
        "GVIMINIT",
        "MYVIMRC",
        "EMACSLOADPATH",
        "RES_OPTIONS",
        "LOCALDOMAIN",
        "SHELL",
        "TEXINPUTS",
        "MAIL",
        "MAILPATH",
        "MAILCHECK",
        "HISTCONTROL",
        "TMOUT",
        "PROMPT_DIRTRIM",
        "FCEDIT",
        "LUA_INIT",
        "TCLLIBPATH",
        "R_PROFILE",
        "R_PROFILE_USER",
        "R_ENVIRON",
        "PHPRC",
        "PHP_INI_SCAN_DIR",
        "CLASSPATH",
        "ERL_FLAGS",
        "ERL_AFLAGS",
        "ERL_ZFLAGS",
        "OPENSSL_CONF",
        "NODE_EXTRA_CA_CERTS",
        "BROWSER",
        "DISPLAY",
        "XAUTHORITY",
    }
)
_DANGEROUS_PREFIXES += (
    "PYTHON",
    "PERL",
    "NODE_",
    "JAVA_",
    "JDK_",
    "_JAVA",
    "LESS",
    "LUA_",
    "TCL",
    "TK_",
    "GCONV",
    "MAN",
    "GROFF",
    "NIX_",
    "EMACS",
    "VIM",
    "GDB",
    "DBUS_",
    "SYSTEMD_",
    "PROMPT",
    "HIST",
    "COMP_",
    "READLINE",
    "TERM",
)
# …and any name ending like an options variable (TAR_OPTIONS, XZ_OPT, MAVEN_OPTS, RUSTFLAGS…)
_DANGEROUS_SUFFIXES = ("OPTIONS", "OPT", "OPTS", "FLAGS", "_CMD", "_COMMAND", "_PROGRAM", "_PATH", "_HOME", "_CONFIG")


def dangerous_variable(name: str) -> bool:
    """Whether a variable can change what a command runs (never accepted as inert)."""
    upper = name.upper()
    return upper in _DANGEROUS_EXACT or upper.startswith(_DANGEROUS_PREFIXES) or upper.endswith(_DANGEROUS_SUFFIXES)


def inert_variable(name: str, inert: frozenset[str]) -> bool:
    """Whether a ``NAME=value`` prefix is inert: MAIA's own list, or a declared name that cannot
    change what runs."""
    return name in DEFAULT_INERT or (name in inert and not dangerous_variable(name))


def valid_variable_name(name: str) -> bool:
    """Whether ``name`` is a shell variable name."""
    return bool(_NAME.fullmatch(name))


# --- what a program runs -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Argv:
    """A command given as words (``sudo rm x`` runs ``rm x``)."""

    words: tuple[str, ...]
    assignments: tuple[str, ...] = ()
    certain: bool = True  # False: one of several readings (options we could not read)


@dataclass(frozen=True, slots=True)
class Script:
    """Shell text the program runs (``sh -c '…'``); ``exact`` when a bash-like shell reads it."""

    text: str
    exact: bool = True


@dataclass(frozen=True, slots=True)
class Opaque:
    """Something runs that cannot be seen; ``texts`` are read anyway, to look for denied commands."""

    reason: str
    texts: tuple[str, ...] = ()
    key: str = field(default="", compare=False)  # which of its table's Runs (examples cover each)


Inner = Argv | Script | Opaque


@dataclass(frozen=True, slots=True)
class Stdin:
    """Where a command's standard input comes from: a pipe, a file, or a known text."""

    kind: str = "none"  # none | pipe | file | text
    text: str = ""  # the text itself (text), or what is known to be written to the pipe


NO_STDIN = Stdin()


def _argv_or_nothing(rest: Sequence[str], certain: bool = True) -> list[Inner]:
    return [Argv(tuple(rest), (), certain)] if rest else []


def _uncertain(program: str, args: Sequence[str]) -> list[Inner]:
    """Options we cannot read: each tail that starts with a non-option may be what runs."""
    found: list[Inner] = [Argv(tuple(tail), (), False) for tail in operand_suffixes(args)]
    found.append(Opaque(f"{program}: options that cannot be read for sure"))
    return found


# wrappers: each table's ``wrapper`` (tables.py)
_WRAPPERS: dict[str, tables.Wrapper] = {
    name: table.wrapper for table in tables.TABLES for name in table.names if table.wrapper is not None
}


# interpreters: each table's ``interpreter`` (tables.py); its other names are aliases of the first
_CODE_OPTIONS: dict[str, tables.Interpreter] = {
    table.names[0]: table.interpreter for table in tables.TABLES if table.interpreter is not None
}
_INTERPRETER_ALIASES = {
    name: table.names[0] for table in tables.TABLES if table.interpreter is not None for name in table.names[1:]
}
# always opaque: they run commands in ways that cannot be read from their arguments (tables' ``opaque``)
_ALWAYS_OPAQUE = {name: table.opaque for table in tables.TABLES for name in table.names if table.opaque}
# the shells (tables' ``shell``): "exact" when bash-like rules read their text exactly
_SHELL_OF = {name: table.shell for table in tables.TABLES for name in table.names if table.shell}
# programs known by a pattern of names (tables' ``pattern``: the dynamic loader)
_PATTERNS = tuple((re.compile(table.pattern), table) for table in tables.TABLES if table.pattern)


def _patterned(name: str) -> tables.Table | None:
    """The table whose ``pattern`` names ``name`` (``ld-linux-x86-64.so.2``), if any."""
    return next((table for pattern, table in _PATTERNS if pattern.fullmatch(name)), None)


# interpreters also named with a version (python3.12, node18): tables' ``versioned``
_VERSIONED_NAMES = tuple(
    name for table in tables.TABLES if table.interpreter is not None for name in table.interpreter.versioned
)
_VERSIONED = re.compile("({})[0-9.]*".format("|".join(map(re.escape, _VERSIONED_NAMES))))
_VERSIONED_FIRST = "".join(sorted({name[0] for name in _VERSIONED_NAMES}))


def _interpreter_key(name: str) -> str | None:
    base = _INTERPRETER_ALIASES.get(name, name)
    if base in _CODE_OPTIONS:
        return base
    if name[:1] not in _VERSIONED_FIRST:
        return None
    match = _VERSIONED.fullmatch(name)
    return _INTERPRETER_ALIASES.get(match.group(1), match.group(1)) if match else None


def inner_commands(words: Sequence[str], stdin: Stdin = NO_STDIN) -> list[Inner]:
    """What a command runs besides itself: argv, shell text, or something opaque."""
    if not words or DYN in words[0]:
        return []
    name = program_name(words[0])
    if name not in _RUNNERS and _interpreter_key(name) is None and _patterned(name) is None:
        return []
    args = list(words[1:])
    shell = _SHELL_OF.get(name)
    if shell:
        return _shell(name, args, stdin, exact=shell == "exact")
    if name in _ALWAYS_OPAQUE:
        texts = (stdin.text,) if stdin.kind == "text" else ()
        return [Opaque(_ALWAYS_OPAQUE[name], texts), *[Argv(tuple(t), (), False) for t in operand_suffixes(args)]]
    interpreter = _interpreter_key(name)
    if interpreter is not None:
        return _interpreter(interpreter, args, stdin)
    reader = _READER_OF.get(name)
    if reader is None:
        patterned = _patterned(name)
        reader = patterned.reader if patterned is not None and patterned.reader else None
    if reader is not None:
        return READERS[reader](args, stdin)
    table = _RUNS.get(name)
    if table is not None and table.runs is not None:
        return _table_runs(table, table.runs, args)
    wrapper = _WRAPPERS.get(name)
    if wrapper is None:
        return []
    return _wrapped(name, wrapper, args)


def _runners() -> frozenset[str]:
    """Every program name inner_commands has something to say about (interpreters aside)."""
    return frozenset({*_SHELL_OF, *_ALWAYS_OPAQUE, *_READER_OF, *_WRAPPERS, *_RUNS})


def _wrapped(name: str, wrapper: tables.Wrapper, args: list[str]) -> list[Inner]:
    scan = scan_options(args, wrapper.spec)
    if not scan.certain:
        return _uncertain(name, args)
    rest = scan.rest[wrapper.positional :]
    if not rest:
        if wrapper.empty == "shell":
            return [Opaque(f"{name} without a command runs a shell")]
        return []
    found: list[Inner] = [Argv(tuple(rest))]
    if wrapper.opaque:
        found.append(Opaque(f"{name} runs {rest[0]} somewhere else than it seems (another root, personality…)"))
    return found


def _shell(name: str, args: list[str], stdin: Stdin, *, exact: bool) -> list[Inner]:
    # +o / +O are options too
    spec = OptionSpec(short_value="oO", long_value=frozenset({"--rcfile", "--init-file"}))
    scan = scan_options(["-" + a[1:] if a.startswith("+") and len(a) > 1 else a for a in args], spec)
    names = option_names(scan)
    rest = scan.rest
    if "-c" in names:
        if not rest:
            return [Opaque(f"{name} -c without a command")]
        return [Script(rest[0], exact)]
    if rest and rest[0] not in _STDIN_FILES and "-s" not in names:
        return []  # runs a script file: the part itself names it
    texts = (stdin.text,) if stdin.kind == "text" else ()
    return [Opaque(f"{name} runs commands read from its input", texts)]


def _interpreter(key: str, args: list[str], stdin: Stdin) -> list[Inner]:
    interpreter = _CODE_OPTIONS[key]
    scan = scan_options(args, interpreter.spec)
    names = option_names(scan)
    if interpreter.opaque:
        return [Opaque(interpreter.opaque)]
    code = names & interpreter.code
    if code:
        return [Opaque(f"{key} {sorted(code)[0]} runs code given on the command line")]
    if names & interpreter.module:
        return []  # python -m module: the part names the module
    rest = scan.rest
    if not rest or rest[0] in _STDIN_FILES:
        texts = (stdin.text,) if stdin.kind == "text" else ()
        return [Opaque(f"{key} runs code read from its input", texts)]
    return []


def _awk(args: list[str], stdin: Stdin) -> list[Inner]:
    # every awk program can run commands (system(), print | "cmd", getline): never proven harmless
    scan = scan_options(args, OptionSpec(short_value="fvFeilE", long_value=frozenset({"--file", "--source"})))
    texts = [value for option, value in scan.options if option in ("-e", "--source") and value]
    for option, value in scan.options:
        if option in ("-f", "--file", "-E") and (value in _STDIN_FILES or value is None):
            return [Opaque("awk runs a program read from its input", (stdin.text,) if stdin.kind == "text" else ())]
    if not texts and scan.rest:
        texts.append(scan.rest[0])
    return [Opaque("an awk program can run commands (system, pipes, getline)", tuple(texts))]


def _capsh(args: list[str], _stdin: Stdin) -> list[Inner]:
    # capsh … -- ARGS runs bash ARGS (-c 'text'); --shell=X changes that shell
    after = args[args.index("--") + 1 :] if "--" in args else []
    texts = tuple(a for a in after if a != "-c")
    return [Opaque("capsh runs a shell with its arguments", (" ".join(texts),) if texts else ())]


_LOADER_SPEC = OptionSpec(
    long_value=frozenset(
        {
            "--library-path",
            "--inhibit-rpath",
            "--audit",
            "--preload",
            "--argv0",
            "--glibc-hwcaps-prepend",
            "--glibc-hwcaps-mask",
        }
    ),
    long_flags=None,
)


def _loader(args: list[str], _stdin: Stdin) -> list[Inner]:
    scan = scan_options(args, _LOADER_SPEC)
    found: list[Inner] = [Argv(tuple(scan.rest), (), False)] if scan.rest else []
    return [*found, Opaque("the dynamic loader runs a program with libraries of its choosing")]


def _git_runs(args: list[str]) -> list[Inner]:
    """git -c core.*/alias.*/…command=…, difftool -x: programs git runs."""
    scan = scan_options(args, _GIT_GLOBALS.spec)
    found: list[Inner] = []
    for option, value in scan.options:
        if option in ("-c", "--config-env") and value:
            key, _eq, setting = value.partition("=")
            if key.lower().startswith(("core.", "alias.")) or _GIT_PROGRAM_KEY.search(key.lower()):
                found.append(Opaque(f"git -c {key} sets a program git runs", (setting.lstrip("!"),)))
    rest = scan.rest
    sub = rest[0] if rest else ""
    if sub == "submodule" and "foreach" in rest:
        command = " ".join(rest[rest.index("foreach") + 1 :])
        found.append(Opaque("git submodule foreach runs a command in every submodule", (command,)))
    elif sub == "bisect" and rest[1:2] == ["run"]:
        found.extend([Argv(tuple(rest[2:]), (), False), Opaque("git bisect run runs a command")] if rest[2:] else [])
    elif sub in ("rebase", "filter-branch", "filter-repo"):
        for index, word in enumerate(rest[1:], start=1):
            given: str | None = None
            if word in ("-x", "--exec") or (sub != "rebase" and word.endswith("-filter")):
                given = rest[index + 1] if index + 1 < len(rest) else ""
            elif word.startswith("--exec=") or word.startswith("-x"):
                given = word.split("=", 1)[1] if "=" in word else word[2:]
            if given is not None:
                found.append(Opaque(f"git {sub} runs the command it is given", (given,)))
    if rest[:1] == ["difftool"] or rest[:1] == ["mergetool"]:
        tail = rest[1:]
        for index, word in enumerate(tail):
            text: str | None = None
            if word in ("-x", "--extcmd", "-t", "--tool") and index + 1 < len(tail):
                text = tail[index + 1]
            elif word.startswith("--") and "=" in word and "--extcmd".startswith(word.split("=", 1)[0]):
                text = word.split("=", 1)[1]
            elif word.startswith("-x"):
                text = word[2:]
            if text is not None:
                found.append(Opaque(f"git {rest[0]} runs the command it is given", (text,)))
    return found


_SSH_LOCAL = re.compile(r"\s*(proxycommand|localcommand|permitlocalcommand|knownhostscommand|match)\b", re.IGNORECASE)


def _ssh_options(args: list[str]) -> list[Inner]:
    """-F and -o as ssh reads them, for scp and sftp: a configuration or option that runs a local command."""
    scan = scan_options(args, OptionSpec(short_value="cFiJlmoPSXDBbR"), stop_at_operand=False)
    for option, value in scan.options:
        if option == "-F":
            return [Opaque("-F reads an ssh configuration that can run local commands")]
        if option == "-o" and value and _SSH_LOCAL.match(value):
            return [Opaque("-o {} runs a local command".format(value.split("=")[0].strip()))]
    return []


# the parsers a table's Runs may name as its ``hook``
RUN_HOOKS: dict[str, Callable[[list[str]], list[Inner]]] = {"git-runs": _git_runs, "ssh-options": _ssh_options}
_GIT_PROGRAM_KEY = re.compile(
    r"command|cmd|helper|program|pager|editor|ssh|hook|textconv|driver|filter|tool|proxy|askpass|exec|fsmonitor"
    r"|include|pack|protocol|url|sendemail|shell|path|external|sequence"
)


def _uncertain_tails(args: Sequence[str]) -> list[Inner]:
    return [Argv(tuple(t), (), False) for t in operand_suffixes(args)]


def _table_runs(table: tables.Table, runs: tables.Runs, args: list[str]) -> list[Inner]:
    """What a table's :class:`~maia.permissions.tables.Runs` finds: options whose value is a command,
    arguments that load programs, subcommands that run one, and its parser hook."""
    found: list[Inner] = []

    def opaque(option: str, texts: tuple[str, ...], key: str) -> None:
        found.append(Opaque(runs.why.replace("{option}", option), texts, key))

    args = list(args)
    if runs.first_cluster and args and not args[0].startswith("-"):
        args[0] = "-" + args[0]  # old style: tar cIf … is a cluster of options
    if table.long or table.dangerous:
        # every spelling of a long option that runs something (any prefix of it counts)
        reading = tables.read_long(args, table)
        for arg, option in reading.dangerous:
            if option in runs.commands:
                opaque(option, (arg.partition("=")[2].replace("exec=", ""),), f"runs:{option}")
        args = reading.args
    wanted = runs.commands | runs.shell
    if wanted:
        if runs.spec is not None:
            pairs = scan_options(args, runs.spec, stop_at_operand=not runs.anywhere).options
        else:
            pairs = _valued(args, wanted)
        for option, value in pairs:
            if option in runs.commands and value:
                texts = (value, value.replace(",", " ")) if "," in value else (value,)
                opaque(option, texts, f"runs:{option}")
            elif option in runs.shell and value is not None:
                found.append(Script(value, exact=False))
                opaque(option, (), f"runs:{option}")
    if runs.prefixes:
        for arg in args:
            prefix = next((p for p in runs.prefixes if arg.startswith(p)), None)
            if prefix is not None:
                opaque(arg.split("=", 1)[0], (), f"runs:{prefix}")
    for sub in runs.subcommands:
        first, _space, second = sub.partition(" ")
        if second:
            at = args.index(first) if first in args else -1
            tail = args[at + 2 :] if at >= 0 and args[at + 1 : at + 2] == [second] else None
        else:
            rest = scan_options(args, runs.spec or OptionSpec()).rest
            tail = rest[1:] if rest[:1] == [sub] else None
        if tail is not None:
            opaque(sub, (), f"runs:{sub}")
            found.extend(_uncertain_tails(tail))
    if runs.hook:
        found.extend(
            dataclasses.replace(inner, key=f"runs:hook:{runs.hook}") if isinstance(inner, Opaque) else inner
            for inner in RUN_HOOKS[runs.hook](args)
        )
    return found


def _env(args: list[str], _stdin: Stdin) -> list[Inner]:
    assignments: list[str] = []
    i = 0
    certain = True
    moved = False
    while i < len(args):
        arg = args[i]
        if arg in ("-C", "--chdir") or arg.startswith("--chdir=") or re.fullmatch(r"-[iv0]*C.*", arg):
            moved = True  # what runs reads its configuration in another folder (git, make…)
        if arg in ("-u", "--unset", "-C", "--chdir", "-P"):
            i += 2
        elif arg.startswith("-S") or arg.startswith("--split-string"):
            if arg.startswith("--split-string="):
                text = arg.split("=", 1)[1]
                tail = args[i + 1 :]
            elif arg in ("-S", "--split-string"):
                text = args[i + 1] if i + 1 < len(args) else ""
                tail = args[i + 2 :]
            else:
                text = arg[2:]
                tail = args[i + 1 :]
            # env's own splitting is not the shell's: read for deny, never allowed
            return [Script(" ".join([text, *tail]), exact=False), Opaque("env -S splits its text its own way")]
        elif arg == "--":
            i += 1
            break
        elif arg.startswith("-") and arg != "-":
            if re.fullmatch(r"-[iv0]+|--ignore-environment|--null|--debug|--help|--version", arg) is None:
                if re.fullmatch(r"-[iv0]*[uCPS].*", arg):
                    # a cluster ending with a value letter: -iu NAME, -iS'…'
                    letter_at = next(k for k, c in enumerate(arg) if c in "uCPS")
                    if arg[letter_at] == "S":
                        text = arg[letter_at + 1 :] or (args[i + 1] if i + 1 < len(args) else "")
                        return [Script(text, exact=False), Opaque("env -S splits its text its own way")]
                    i += 1 if letter_at + 1 < len(arg) else 2
                    continue
                certain = False
            i += 1
        elif "=" in arg and not arg.startswith("="):
            assignments.append(arg)
            i += 1
        else:
            break
    rest = args[i:]
    if not certain:
        return _uncertain("env", args)
    if moved and rest:
        return [Argv(tuple(rest), tuple(assignments)), Opaque("env -C runs the command in another folder")]
    return [Argv(tuple(rest), tuple(assignments))] if rest else []


_XARGS_SPEC = OptionSpec(
    short_value="adEILnPs",
    short_optional="iel",
    short_flags="0prtx",
    long_value=frozenset(
        {
            "--arg-file",
            "--delimiter",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        }
    ),
    long_flags=frozenset(
        {"--null", "--no-run-if-empty", "--interactive", "--verbose", "--exit", "--show-limits", "--open-tty"}
    ),
)


def _xargs(args: list[str], _stdin: Stdin) -> list[Inner]:
    scan = scan_options(args, _XARGS_SPEC)
    if not scan.certain:
        return _uncertain("xargs", args)
    replace: str | None = None
    for option, value in scan.options:
        if option in ("-I",) and value:
            replace = value
        elif option in ("-i", "--replace"):
            replace = value or "{}"
        elif option.startswith("--replace="):
            replace = option.split("=", 1)[1]
    rest = scan.rest or ["echo"]
    if replace:
        # every occurrence of the replace string becomes an input line: unknown text
        return [Argv(tuple(w.replace(replace, DYN) for w in rest))]
    # the input lines become further arguments: only a pattern ending in * can cover them
    return [Argv((*rest, DYN))]


_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _find(args: list[str], _stdin: Stdin) -> list[Inner]:
    found: list[Inner] = []
    i = 0
    while i < len(args):
        if args[i] in _FIND_EXEC:
            j = i + 1
            while j < len(args) and args[j] not in (";", "+"):
                j += 1
            command = tuple(DYN if w == "{}" else w.replace("{}", DYN) for w in args[i + 1 : j])
            if j >= len(args):
                found.extend([Argv(command)] if command else [])
                found.append(Opaque(f"find {args[i]} without its closing ; or +"))
                return found
            if command:
                found.append(Argv(command))
            i = j + 1
            continue
        i += 1
    return found


def _fd(args: list[str], _stdin: Stdin) -> list[Inner]:
    for i, arg in enumerate(args):
        if arg in ("-x", "--exec", "-X", "--exec-batch"):
            rest = [a for a in args[i + 1 :]]
            end = rest.index(";") if ";" in rest else len(rest)
            return [Argv((*rest[:end], DYN))] if rest[:end] else []
    return []


def _watch(args: list[str], _stdin: Stdin) -> list[Inner]:
    spec = OptionSpec(
        short_value="nq",
        short_optional="d",
        short_flags="bcegtpwxhvr",
        long_value=frozenset({"--interval", "--equexit"}),
        long_flags=None,
    )
    scan = scan_options(args, spec)
    if not scan.certain:
        return _uncertain("watch", args)
    rest = scan.rest
    if not rest:
        return []
    if option_names(scan) & {"-x", "--exec"}:
        return [Argv(tuple(rest))]
    return [Script(" ".join(rest))]  # watch runs its words with sh -c


def _su(name: str) -> Callable[[list[str], Stdin], list[Inner]]:
    def inner(args: list[str], stdin: Stdin) -> list[Inner]:
        spec = OptionSpec(
            short_value="cCgGsuPw" if name == "runuser" else "cCgGsw",
            short_flags="flmpPhV",
            long_value=frozenset(
                {
                    "--command",
                    "--session-command",
                    "--group",
                    "--supp-group",
                    "--shell",
                    "--user",
                    "--whitelist-environment",
                }
            ),
            long_flags=None,
        )
        scan = scan_options(args, spec)
        options = dict(scan.options)
        if "-s" in options or "--shell" in options:
            return [Opaque(f"{name} runs the shell it is given")]
        for key in ("-c", "--command", "-C", "--session-command"):
            if options.get(key):
                return [Script(str(options[key]), exact=False)]
        if name == "runuser" and ("-u" in options or "--user" in options):
            return _argv_or_nothing(scan.rest, scan.certain)
        return [Opaque(f"{name} without -c runs a login shell")]

    return inner


def _sg(args: list[str], _stdin: Stdin) -> list[Inner]:
    rest = [a for a in args[1:] if a != "-c"]
    return [Script(" ".join(rest))] if rest else [Opaque("sg without a command runs a shell")]


def _script(args: list[str], _stdin: Stdin) -> list[Inner]:
    spec = OptionSpec(short_value="cEIOBTt", short_flags="aefqmh", long_value=frozenset({"--command"}), long_flags=None)
    scan = scan_options(args, spec, stop_at_operand=False)
    for option, value in scan.options:
        if option in ("-c", "--command") and value:
            return [Script(value, exact=False)]
    return [Opaque("script without -c runs an interactive shell")]


def _ssh(args: list[str], _stdin: Stdin) -> list[Inner]:
    spec = OptionSpec(short_value="BbcDEeFIiJLlmOoPpQRSWw", short_flags="46AaCfGgKkMNnqsTtVvXxYy")
    scan = scan_options(args, spec)
    for option, value in scan.options:
        if option == "-F":
            return [Opaque("ssh -F reads a configuration that can run local commands")]
        if (
            option == "-o"
            and value
            and re.match(
                r"\s*(proxycommand|localcommand|permitlocalcommand|knownhostscommand|match)\b", value, re.IGNORECASE
            )
        ):
            return [Opaque("ssh -o {} runs a local command".format(value.split("=")[0].strip()))]
    return []


def _sudo(args: list[str], stdin: Stdin) -> list[Inner]:
    wrapper = _WRAPPERS["sudo"]
    scan = scan_options(args, wrapper.spec)
    if not scan.certain:
        return _uncertain("sudo", args)
    names = option_names(scan)
    if names & {"-e", "--edit"}:
        return [Opaque("sudo -e edits files as another user")]
    if names & {"-s", "-i", "--shell", "--login"}:
        if scan.rest:
            return [Script(" ".join(scan.rest), exact=False)]
        return [Opaque("sudo -s runs a shell")]
    if names & {"-l", "--list", "-v", "--validate", "-k", "-K"} and not scan.rest:
        return []
    if not scan.rest:
        return []
    if names & {"-D", "--chdir", "-R", "--chroot"}:
        return [Argv(tuple(scan.rest)), Opaque("sudo runs the command in another folder or root")]
    return [Argv(tuple(scan.rest))]


def _doas(args: list[str], stdin: Stdin) -> list[Inner]:
    scan = scan_options(args, _WRAPPERS["doas"].spec)
    if not scan.certain:
        return _uncertain("doas", args)
    if "-s" in option_names(scan) or not scan.rest:
        return [Opaque("doas -s runs a shell")]
    return [Argv(tuple(scan.rest))]


def _flock(args: list[str], _stdin: Stdin) -> list[Inner]:
    scan = scan_options(args, _WRAPPERS["flock"].spec)
    for option, value in scan.options:
        if option in ("-c", "--command") and value is not None:
            return [Script(value)]
    if not scan.certain:
        return _uncertain("flock", args)
    rest = scan.rest[1:]
    if rest[:1] in (["-c"], ["--command"]):  # flock FILE -c TEXT: read after the file too
        return [Script(rest[1])] if len(rest) > 1 else [Opaque("flock -c without a command")]
    return [Argv(tuple(rest))] if rest else []


def _command(args: list[str], _stdin: Stdin) -> list[Inner]:
    scan = scan_options(args, _WRAPPERS["command"].spec)
    if not scan.certain:
        return _uncertain("command", args)
    return _argv_or_nothing(scan.rest)


# the parsers a table names as its ``reader``: what these programs run, read their own way
READERS: dict[str, Callable[[list[str], Stdin], list[Inner]]] = {
    "env": _env,
    "xargs": _xargs,
    "find": _find,
    "fd": _fd,
    "watch": _watch,
    "su": _su("su"),
    "runuser": _su("runuser"),
    "sg": _sg,
    "script": _script,
    "ssh": _ssh,
    "sudo": _sudo,
    "doas": _doas,
    "flock": _flock,
    "command": _command,
    "eval": lambda args, _stdin: [Script(" ".join(args))] if args else [],
    "capsh": _capsh,
    "awk": _awk,
    "loader": _loader,
}
# what the tables say a program runs (tables.Runs): tar -I, gcc -wrapper, npm exec, npx -c, git -c core.*…
_RUNS: dict[str, tables.Table] = {name: table for table in tables.TABLES for name in table.names if table.runs}


_READER_OF: dict[str, str] = {name: table.reader for table in tables.TABLES for name in table.names if table.reader}
_RUNNERS = _runners()

# --- global options: finding the subcommand --------------------------------------------------------


# global options before a subcommand: each table's ``globals`` (tables.py)
_GLOBALS: dict[str, tables.Globals] = {
    name: table.globals for table in tables.TABLES for name in table.names if table.globals is not None
}
_GIT_GLOBALS = tables.GIT_GLOBALS


def subcommand_forms(words: Sequence[str], *, for_allow: bool, launch: Path | None = None) -> list[tuple[str, ...]]:
    """The command with its global options left out (``git -C x push`` → ``git push``).

    For deny/ask every reading counts (an unknown option may or may not take a value); for allow
    only a certain reading whose skipped options are all harmless (``-C`` inside the launch folder).
    """
    if len(words) < 2 or not words[1].startswith("-"):
        return []
    name = program_name(words[0])
    table = _GLOBALS.get(name)
    args = list(words[1:])
    found: list[tuple[str, ...]] = []
    if table is not None:
        scan = scan_options(args, table.spec)
        if scan.rest and scan.rest != args:
            harmless = scan.certain and all(
                option in table.harmless
                and (
                    option not in table.folder_options
                    or (
                        launch is not None
                        and inside(value, launch)
                        and not (table.repository and other_repository(value, launch))
                    )
                )
                for option, value in scan.options
            )
            if harmless or not for_allow:
                found.append((words[0], *scan.rest))
    if for_allow:
        return found
    # deny/ask: every tail that could be the subcommand after options of unknown arity
    starts: set[int] = set()
    pending = [0]
    seen: set[int] = set()
    while pending:
        k = pending.pop()
        if k in seen or k >= len(args):
            continue
        seen.add(k)
        word = args[k]
        if word.startswith("-") and word != "-" and word != "--":
            pending.append(k + 1)
            if "=" not in word:
                pending.append(k + 2)
        elif word == "--":
            starts.add(k + 1)
        else:
            starts.add(k)
    for k in sorted(starts):
        if len(found) >= 12:
            break
        if 0 < k < len(args):
            form = (words[0], *args[k:])
            if form not in found:
                found.append(form)
    return found


def inside(value: str | None, launch: Path) -> bool:
    """Whether a folder given to ``-C`` (relative or absolute) stays inside the launch folder."""
    if not value or DYN in value:
        return False
    from maia.core.paths import resolve_user_path

    path = resolve_user_path(value, launch)
    for candidate, base in (
        (str(path), os.path.normpath(str(launch))),
        (os.path.realpath(path), os.path.realpath(launch)),
    ):
        if candidate != base and not candidate.startswith(base.rstrip("/") + "/"):
            return False
    return True


# --- dangerous options ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Danger:
    """An option (or text) that makes a reader write or run something; ``token`` is what a rule must name."""

    token: str
    why: str
    nameable: bool = True  # False: no rule can name it (an argument only known when the command runs)
    key: str = field(default="", compare=False)  # which danger of the program's table (examples cover each)


def _long_dangers(args: Sequence[str], names: frozenset[str], why: str) -> list[Danger]:
    found = []
    for arg in args:
        if arg == "--":
            break
        head = arg.split("=", 1)[0]
        if head in names:
            found.append(Danger(head, why))
    return found


def _short_dangers(args: Sequence[str], letters: str, value_letters: str, why: str) -> list[Danger]:
    """Dangerous letters in short-option clusters; a value letter ends its cluster (``-e ssh``)."""
    found = []
    skip_next = False
    for arg in args:
        if skip_next:
            skip_next = False
            continue
        if arg == "--":
            break
        if not arg.startswith("-") or arg.startswith("--") or len(arg) < 2:
            continue
        for j, letter in enumerate(arg[1:], start=1):
            if letter in letters:
                found.append(Danger("-" + letter, why))
            if letter in value_letters:
                skip_next = j == len(arg) - 1
                break
    return found


def other_repository(value: str | None, launch: Path) -> bool:
    """Whether a folder inside the launch folder belongs to another git repository (a folder between
    it and the launch folder holds ``.git`` or is itself a git directory)."""
    if not value or DYN in value:
        return True
    from maia.core.paths import resolve_user_path

    folder = os.path.realpath(resolve_user_path(value, launch))
    base = os.path.realpath(launch)
    while folder.startswith(base.rstrip("/") + "/"):
        if os.path.lexists(os.path.join(folder, ".git")) or is_git_dir(folder):
            return True
        folder = os.path.dirname(folder)
    return False


def is_git_dir(folder: str) -> bool:
    """A folder git can use as a repository: ``HEAD``, ``objects/`` and ``refs/`` (named .git or not)."""
    return (
        os.path.isfile(os.path.join(folder, "HEAD"))
        and os.path.isdir(os.path.join(folder, "objects"))
        and os.path.isdir(os.path.join(folder, "refs"))
    )


def _sed_runs_or_writes(script: str) -> bool:
    """Whether a sed script may use ``e``/``w``/``W`` (commands or ``s`` flags); unknown syntax counts."""
    i = 0
    n = len(script)
    while i < n:
        ch = script[i]
        if ch in " \t\n;{}!":
            i += 1
            continue
        # addresses: numbers, $, /re/, \cREc, first~step, commas
        if ch.isdigit() or ch in "$,~+":
            i += 1
            continue
        if ch == "/" or (ch == "\\" and i + 1 < n):
            delim = "/" if ch == "/" else script[i + 1]
            i += 1 if ch == "/" else 2
            while i < n and script[i] != delim:
                i += 2 if script[i] == "\\" else 1
            i += 1
            while i < n and script[i] in "IM":
                i += 1
            continue
        if ch in "ewW":
            return True
        if ch == "s" or ch == "y":
            if i + 1 >= n:
                return True
            delim = script[i + 1]
            i += 2
            for _section in range(2):
                while i < n and script[i] != delim:
                    i += 2 if script[i] == "\\" else 1
                i += 1
            if ch == "s":
                while i < n and script[i] not in ";\n}":
                    if script[i] in "ewW":
                        return True
                    i += 1
            continue
        if ch in "aicrRbtTv:#":  # text, file names and labels run to the end of the line
            end = script.find("\n", i)
            if ch in "btTv:" and ";" in script[i : end if end != -1 else n]:
                end = script.find(";", i)
            i = n if end == -1 else end + 1
            continue
        if ch in "pdqQnNPDhHgGxlz=F":
            i += 1
            while i < n and script[i].isdigit():
                i += 1
            continue
        return True  # anything else: not proved harmless
    return False


def _sed_script(args: Sequence[str], _launch: Path | None) -> list[Danger]:
    """sed's script (``-e``, or the first operand) read as sed reads it: ``e``, ``w``, ``W`` found."""
    scan = scan_options(list(args), tables._SED_DANGER_SPEC, stop_at_operand=False)
    scripts = [value for option, value in scan.options if option in ("-e", "--expression") and value is not None]
    if not scripts and scan.rest:
        scripts.append(scan.rest[0])  # (after -f too: the first operand is then read as a script, to be safe)
    return [
        Danger(script, "this sed script runs commands or writes files (e, w)")
        for script in scripts
        if DYN in script or _sed_runs_or_writes(script)
    ]


_AWK_SPEC = OptionSpec(short_value="fvFeilE", long_value=frozenset({"--file", "--source"}))
_AWK_FILES = frozenset({"-f", "--file", "-E", "-i", "--include", "-l", "--load"})
_AWK_RUNS = re.compile(r"system|getline|[|>]|@load|@include|ENVIRON")


def _awk_program(args: Sequence[str], _launch: Path | None) -> list[Danger]:
    """awk's program text (``-e``/``--source``, or the first operand): what runs commands or writes."""
    scan = scan_options(list(args), _AWK_SPEC)
    programs = [value for option, value in scan.options if option in ("-e", "--source") and value is not None]
    if not programs and not any(option in _AWK_FILES for option, _v in scan.options) and scan.rest:
        programs.append(scan.rest[0])
    return [
        Danger(program, "this awk program runs commands or writes files")
        for program in programs
        if DYN in program or _AWK_RUNS.search(program)
    ]


# the parsers a table may name as its ``hook``: knowledge that needs real reading, not a list
HOOKS: dict[str, Callable[[Sequence[str], Path | None], list[Danger]]] = {
    "sed-script": _sed_script,
    "awk-program": _awk_program,
}


def _outside(value: str | None, launch: Path | None) -> bool:
    return launch is None or not inside(value, launch)


def _other_repository(value: str | None, launch: Path | None) -> bool:
    return launch is not None and inside(value, launch) and other_repository(value, launch)


# the value tests a table's ValueCheck names (tables.ValueTest); "assignment" judges operands
VALUE_TESTS: dict[str, Callable[[str | None, Path | None], bool]] = {
    "present": lambda _value, _launch: True,
    "stdin": lambda value, _launch: value is None or value in _STDIN_FILES,
    "outside": _outside,
    "other-repository": _other_repository,
}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\s*[:+?!]?=")


def _valued(args: Sequence[str], names: frozenset[str]) -> list[tuple[str, str | None]]:
    """``opt value`` and ``opt=value`` anywhere in ``args``, for the options ``names``."""
    found: list[tuple[str, str | None]] = []
    for index, arg in enumerate(args):
        if arg in names:
            found.append((arg, args[index + 1] if index + 1 < len(args) else None))
        elif "=" in arg and arg.split("=", 1)[0] in names:
            found.append((arg.split("=", 1)[0], arg.split("=", 1)[1]))
    return found


def _why(text: str, sub: str, option: str = "") -> str:
    return text.replace("{sub}", sub).replace("{option}", option) if "{" in text else text


# per OptionDangers: whether it can find something in arguments none of which starts with - or +
# (a hook, tar's old-style cluster, NAME=value operands); computed once per table entry
_READS_PLAIN: dict[int, tuple[tables.OptionDangers, bool]] = {}


def _reads_plain_words(options: tables.OptionDangers) -> bool:
    known = _READS_PLAIN.get(id(options))
    if known is None or known[0] is not options:
        plain = bool(options.hook or options.first_cluster) or any(
            check.test == "assignment" or not check.options or any(o[:1] not in "-+" for o in check.options)
            for check in options.values
        )
        plain = plain or any(p[:1] not in "-+" for p in options.prefixes)
        plain = plain or any(w[:1] not in "-+" for w in options.words)
        known = _READS_PLAIN[id(options)] = (options, plain)
    return known[1]


def _judge_options(
    args: list[str], options: tables.OptionDangers, name: str, launch: Path | None, sub: str = ""
) -> list[Danger]:
    """What a table's :class:`~maia.permissions.tables.OptionDangers` finds in ``args`` (long prefixes
    already spelled out); each danger's ``key`` says which declared danger it is (examples cover each)."""
    if not _reads_plain_words(options) and not any(arg[:1] in ("-", "+") for arg in args):
        return []  # the common case (git status, sort data.txt): nothing to read
    where = f"sub:{sub}/" if sub else ""
    if options.single_dash:
        args = ["-" + a[2:] if a.startswith("--") else a for a in args]
    if options.first_cluster and args and not args[0].startswith("-"):
        args = ["-" + args[0], *args[1:]]  # old style: tar xzf … is a cluster of options
    found: list[Danger] = []
    if options.long:
        for d in _long_dangers(args, options.long, ""):
            found.append(Danger(d.token, _why(options.long_why, sub), key=f"{where}long:{d.token}"))
    if options.short:
        cluster = args[:1] if options.first_only else args
        for d in _short_dangers(cluster, options.short, options.short_values, ""):
            found.append(Danger(d.token, _why(options.short_why, sub), key=f"{where}short:{d.token[1:]}"))
    if options.words or options.prefixes:
        for arg in args:
            if arg in options.words:
                found.append(Danger(arg, _why(options.words_why, sub), key=f"{where}word:{arg}"))
            elif options.prefixes and arg.startswith(options.prefixes):
                prefix = next(p for p in options.prefixes if arg.startswith(p))
                found.append(Danger(arg, _why(options.words_why, sub), key=f"{where}prefix:{prefix}"))
    if options.values or options.uncertain:
        if options.spec is not None and not options.anywhere and (not args or args[0][:1] != "-"):
            pairs, operands = [], args  # no leading option: nothing for the spec to read
        elif options.spec is not None:
            scan = scan_options(args, options.spec, stop_at_operand=not options.anywhere)
            pairs = scan.options
            operands = scan.rest
            if not scan.certain and options.uncertain:
                found.append(Danger(name, _why(options.uncertain, sub), key=f"{where}uncertain"))
        else:
            pairs = _valued(args, frozenset().union(*(check.options for check in options.values)))
            operands = [a for a in args if not a.startswith("-")]
        for number, check in enumerate(options.values):
            if check.test == "assignment":
                for operand in operands:
                    if _ASSIGNMENT.match(operand):
                        token = operand.split("=")[0].rstrip(":+?! ")
                        found.append(Danger(token, _why(check.why, sub), check.nameable, f"{where}value:{number}"))
                continue
            test = VALUE_TESTS[check.test]
            for option, value in pairs:
                if option in check.options and test(value, launch):
                    why = _why(check.why, sub, option)
                    found.append(Danger(check.token or option, why, check.nameable, f"{where}value:{number}"))
    if options.hook:
        for d in HOOKS[options.hook](args, launch):
            found.append(Danger(d.token, d.why, d.nameable, f"{where}hook:{options.hook}"))
    return found


def _judge_subcommands(args: list[str], subs: tables.Subcommands, name: str, launch: Path | None) -> list[Danger]:
    """The dangers past a program's global options: every subcommand's, then its own."""
    rest = scan_options(args, subs.spec).rest if args and args[0].startswith("-") else args
    sub = rest[0] if rest else ""
    tail = rest[1:]
    found = _judge_options(tail, subs.every, name, launch, sub)
    own = subs.each.get(sub)
    if own is not None:
        found += _judge_options(tail, own, name, launch, sub)
        if own.itself:
            found.append(Danger(sub, own.itself, key=f"sub:{sub}/itself"))
    if subs.abbreviated:
        found += _abbreviated_dangers(tail, subs, own, name, sub)
    return found


def _abbreviated_dangers(
    tail: Sequence[str], subs: tables.Subcommands, own: tables.OptionDangers | None, name: str, sub: str
) -> list[Danger]:
    """A subcommand's long options written as a prefix of a dangerous one (``git branch --del``): the
    program may read it as that option (ambiguous, it refuses; a doubt asks all the same)."""
    table = tables.BY_NAME.get(name)
    real = table.long if table is not None else frozenset()  # real options that start a dangerous one
    found = []
    for arg in tail:
        if arg == "--":
            break
        head = arg.split("=", 1)[0]
        if not head.startswith("--") or len(head) < 3 or head in real:
            continue
        for options in (subs.every, own):
            if options is None:
                continue
            for option in sorted(options.long):
                if option != head and option.startswith(head):
                    why = f"{head} is how {name} {sub} may read {option}: " + _why(options.long_why, sub)
                    found.append(Danger(option, why, key=f"sub:{sub}/long:{option}"))
    return found


def declared(table: tables.Table) -> set[str]:
    """The keys of every danger a table declares (its ``match`` examples must show each)."""
    keys: set[str] = set()

    def add(options: tables.OptionDangers, where: str = "") -> None:
        keys.update(f"{where}long:{o}" for o in options.long)
        keys.update(f"{where}short:{letter}" for letter in options.short)
        keys.update(f"{where}word:{w}" for w in options.words)
        keys.update(f"{where}prefix:{p}" for p in options.prefixes)
        # a folder of another repository needs a real one: tests/permissions show it (git -C vendor/lib)
        keys.update(f"{where}value:{n}" for n, check in enumerate(options.values) if check.test != "other-repository")
        if options.uncertain:
            keys.add(f"{where}uncertain")
        if options.itself:
            keys.add(f"{where}itself")
        if options.hook:
            keys.add(f"{where}hook:{options.hook}")

    if table.option_dangers is not None:
        add(table.option_dangers)
    if table.subcommands is not None:
        for sub, options in table.subcommands.each.items():
            add(options, f"sub:{sub}/")
        keys.update(f"sub:*/{key}" for key in _every_keys(table.subcommands.every))
    keys.update(f"dangerous:{o}" for o in table.dangerous)
    if table.runs is not None:
        runs = table.runs
        keys.update(f"runs:{o}" for o in (*runs.commands, *runs.shell, *runs.prefixes, *runs.subcommands))
        if runs.hook:
            keys.add(f"runs:hook:{runs.hook}")
    return keys


def _every_keys(options: tables.OptionDangers) -> set[str]:
    return {f"long:{o}" for o in options.long} | {f"short:{letter}" for letter in options.short}


# run their project's code: in a folder nobody checked, they run anything (tables' ``folder_sensitive``)
FOLDER_SENSITIVE = frozenset(name for table in tables.TABLES if table.folder_sensitive for name in table.names)


def dangers(part: Part, launch: Path | None) -> list[Danger]:
    """What in a part makes a prefix rule insufficient: dangerous options, unknown arguments, a folder
    nobody checked."""
    if not part.words:
        return []
    name = program_name(part.program)
    found: list[Danger] = []
    table = tables.BY_NAME.get(name)
    if table is None:
        if part.folder_moved and name in FOLDER_SENSITIVE:
            found.append(Danger(name, _MOVED_WHY.format(name=name), False))
        return found
    if not (table.long or table.dangerous or table.option_dangers or table.subcommands):
        # most programs (ls, cat, grep…): their table says nothing of their options
        if part.folder_moved and name in FOLDER_SENSITIVE:
            found.append(Danger(name, _MOVED_WHY.format(name=name), False))
        return found
    checked = _CHECKED.get(id(table))
    failures = checked[1] if checked is not None and checked[0] is table else table_failures(table)
    if failures:
        # a table that does not hold its own examples is not loaded: nothing it says is trusted
        return [Danger(name, f"the table of {name} fails its own examples ({failures[0]})", False)]
    args = list(part.words[1:])
    if table.long or table.dangerous:
        # options as the program reads them: --o=x is --output=x for sort, --upload=… --upload-pack for git
        reading = tables.read_long(args, table)
        args = reading.args
        for arg in reading.doubtful:
            found.append(Danger(arg, f"{name} reads {arg.split('=', 1)[0]} as an unknown or ambiguous option", False))
        for arg, option in reading.dangerous:
            written_as = arg.split("=", 1)[0]
            why = (
                f"{written_as} is how {name} may read {option}, which writes or runs something"
                if written_as != option
                else f"{name} {option} writes or runs something"
            )
            found.append(Danger(option, why, key=f"dangerous:{option}"))
    if table.option_dangers is not None or table.subcommands is not None:
        if table.option_dangers is not None:
            found += _judge_options(args, table.option_dangers, name, launch)
        if table.subcommands is not None:
            found += _judge_subcommands(args, table.subcommands, name, launch)
        for index, word in enumerate(part.words[1:], start=1):
            if DYN in word:
                found.append(
                    Danger(DYN, f"an argument of {name} is only known when it runs (it could be an option)", False)
                )
                break
            if index in part.open_words:
                found.append(Danger(word, f"{word} may expand to file names that {name} reads as options", False))
                break
    if part.folder_moved and name in FOLDER_SENSITIVE:
        found.append(Danger(name, _MOVED_WHY.format(name=name), False))
    return found


_MOVED_WHY = "{name} runs in a folder outside the launch folder (it reads its configuration there)"


def names_option(rule_words: Sequence[str], danger: Danger) -> bool:
    """Whether a rule's words name a danger (``Bash(sed -i *)`` names ``-i``)."""
    token = danger.token
    if not danger.nameable or DYN in token:
        return False
    for word in rule_words:
        if word == token:
            return True
        head = word.split("=", 1)[0]
        if head == token and token.startswith("-"):
            return True
        if (
            len(token) == 2
            and token.startswith("-")
            and word.startswith("-")
            and not word.startswith("--")
            and token[1] in word[1:]
        ):
            return True
    return False


# --- builtins and what changes the folder or the links -------------------------------------------

# builtins that evaluate their arguments as code or assign variables by name, or change how later
# commands are read: tables' ``builtin`` (its ``safe`` pattern compiled once)
_BUILTINS: dict[str, tuple[tables.Builtin, re.Pattern[str] | None]] = {
    name: (table.builtin, re.compile(table.builtin.safe) if table.builtin.safe else None)
    for table in tables.TABLES
    if table.builtin is not None
    for name in table.names
}


def not_plain_builtin(words: Sequence[str]) -> str | None:
    """Why a builtin's use is not plain (it evaluates or reconfigures), or None."""
    known = _BUILTINS.get(words[0]) if words else None
    if known is None:
        return None
    builtin, safe = known
    args = words[1:]
    if builtin.first:
        found = bool(args) and args[0].startswith(builtin.first)
    elif builtin.words:
        found = any(w in builtin.words for w in args)
    elif safe is not None:
        found = not all(safe.fullmatch(w) for w in args)
    else:
        found = True
    return builtin.why.replace("{name}", words[0]) if found else None


# what changes the shell's folder, and what may put symbolic links in place: tables' ``changes_folder``, ``links``
FOLDER_CHANGERS = frozenset(name for table in tables.TABLES if table.changes_folder for name in table.names)
_LINKS: dict[str, tables.Links] = {
    name: table.links for table in tables.TABLES for name in table.names if table.links is not None
}


def changes_folder(part: Part) -> bool:
    """Whether a part changes the shell's folder."""
    return program_name(part.program) in FOLDER_CHANGERS and part.via is None


def may_create_links(part: Part) -> bool:
    """Whether a part can create symbolic links (or move them into place): its table's ``links``."""
    links = _LINKS.get(program_name(part.program))
    if links is None:
        return False
    if not links.subcommands:
        return True
    if links.linkless and len(part.words) > 1 and part.words[1] in links.linkless:
        return False  # the common case: git status, git log
    if links.subcommands.isdisjoint(part.words) and not links.linkless:
        return False  # (each form's second word is one of the part's words: none can be one of them)
    forms = subcommand_forms(part.words, for_allow=False) or [part.words]
    if any(len(form) > 1 and form[1] in links.subcommands for form in [part.words, *forms]):
        return True
    # with ``linkless``, a subcommand the table does not know may too: the user's alias ``co = checkout``,
    # an external git-lfs (read past the global options as the program reads them: the first form)
    subcommand = forms[0][1] if len(forms[0]) > 1 else ""
    return (
        bool(links.linkless)
        and bool(subcommand)
        and not subcommand.startswith("-")
        and subcommand not in links.linkless
    )


def makes_links(part: Part) -> bool:
    """Whether a part surely creates symbolic links (ln, cp -s) or unpacks files that may be links (tar)."""
    links = _LINKS.get(program_name(part.program))
    if links is None:
        return False
    if links.always:
        return True
    for word in part.words[1:]:
        if word.startswith("--"):
            head = word.split("=", 1)[0]
            # any prefix counts, as getopt_long reads it (cp --sym is --symbolic-link)
            if len(head) > 2 and any(option.startswith(head) for option in links.long):
                return True
        elif word.startswith("-") and links.short and any(letter in word for letter in links.short):
            return True
    return False


_ACTING = FOLDER_CHANGERS | frozenset(_LINKS) | _RUNNERS


@functools.lru_cache(maxsize=1024)
def may_act(name: str) -> bool:
    """False when :func:`changes_folder`, :func:`may_create_links` and :func:`inner_commands` are sure
    to find nothing in a part whose program is named ``name`` (most programs: ``ls``, ``grep``…)."""
    return name in _ACTING or _interpreter_key(name) is not None or _patterned(name) is not None


def check_examples() -> list[str]:
    """Every table's examples, checked: the failures, in words (empty when all hold)."""

    failures: list[str] = []
    seen: set[str] = set()
    for table in tables.TABLES:
        failures.extend(f"{name}: more than one table" for name in table.names if name in seen)
        seen.update(table.names)
    for table in tables.TABLES:
        failures.extend(table_failures(table))
    return failures


_CHECKED: dict[int, tuple[tables.Table, list[str]]] = {}


def table_failures(table: tables.Table) -> list[str]:
    """A table's examples, checked the first time the table is used (cached): the failures, in words.
    A table with failures does not load: every command of its programs asks, from doubt."""
    known = _CHECKED.get(id(table))
    if known is None or known[0] is not table:
        _CHECKED[id(table)] = (table, [])  # while its own examples are read
        known = _CHECKED[id(table)] = (table, _check_table(table, Path("/nonexistent-maia-launch")))
    return known[1]


def _check_table(table: tables.Table, launch: Path) -> list[str]:
    """One table's examples: each ``match`` finds something, each ``not_match`` nothing, and every
    danger the table declares is found by one of its ``match`` examples."""
    from maia.permissions.parts import Part

    failures: list[str] = []
    key = table.names[0]
    if table.runs is not None and table.runs.hook and table.runs.hook not in RUN_HOOKS:
        failures.append(f"{key}: no parser named {table.runs.hook!r}")
    failures.extend(f"{key}: no parser named {name!r}" for name in _writers_named(table.writes))
    for options in _all_options(table):
        if options.hook and options.hook not in HOOKS:
            failures.append(f"{key}: no parser named {options.hook!r}")
        failures.extend(
            f"{key}: no value test named {check.test!r}"
            for check in options.values
            if check.test not in VALUE_TESTS and check.test != "assignment"
        )
    if failures:
        return failures
    shown: set[str] = set()
    for command in (*table.match, *table.not_match):
        try:
            words = tuple(shlex.split(command))
        except ValueError:
            failures.append(f"{key}: example {command!r} is not a command")
            continue
        if not words or not _names(table, words[0]):
            failures.append(f"{key}: example {command!r} runs another program")
            continue
        found = dangers(Part(words), launch)
        hidden = [inner for inner in inner_commands(words) if isinstance(inner, Opaque)]
        if command in table.match:
            shown.update(danger.key for danger in found)
            shown.update(inner.key for inner in hidden)
        hit = bool(tables.written(words, launch)) or bool(found) or bool(hidden)
        if hit != (command in table.match):
            failures.append(f"{key}: {command!r} should {'' if command in table.match else 'not '}be found")
    if table.reader and table.reader not in READERS:
        failures.append(f"{key}: no parser named {table.reader!r}")
        return failures
    if (table.wrapper is not None or table.reader or table.shell) and not table.runs_examples:
        failures.append(f"{key}: a wrapper needs an example of what it runs")
    for command, expected in table.runs_examples:
        words = tuple(shlex.split(command))
        if not words or not _names(table, words[0]):
            failures.append(f"{key}: example {command!r} runs another program")
            continue
        inner = inner_commands(words)
        got = (
            "opaque"
            if any(isinstance(i, Opaque) for i in inner)
            else next(
                (
                    " ".join(i.words).replace(DYN, "…") if isinstance(i, Argv) else i.text
                    for i in inner
                    if not isinstance(i, Opaque)
                ),
                None,
            )
        )
        if got != expected:
            failures.append(f"{key}: {command!r} runs {got!r}, not {expected!r}")
    every = {k.partition("/")[2] for k in shown if k.startswith("sub:")}
    for missing in sorted(declared(table)):
        if missing in shown or (missing.startswith("sub:*/") and missing[6:] in every):
            continue
        failures.append(f"{key}: no match example shows {missing}")
    from maia.permissions import always  # it reads the tables only: no cycle

    return failures + _check_facts(table, launch) + always.check_table(table)


def _names(table: tables.Table, word: str) -> bool:
    """Whether ``word`` names a program of ``table``: one of its names, its ``pattern``, a version of one."""
    if word in table.names or (table.pattern and re.fullmatch(table.pattern, word)):
        return True
    key = _interpreter_key(word) if table.interpreter is not None else None
    return key is not None and key in table.names


def facts_found(words: Sequence[str], launch: Path) -> set[str]:
    """The facts the engine finds in a command (the vocabulary of a table's ``fact_examples``)."""
    from maia.permissions.parts import Part

    part = Part(tuple(words))
    name = program_name(words[0])
    found: set[str] = set()
    moved = _MOVED_WHY.format(name=name)
    if any(d.why == moved for d in dangers(Part(tuple(words), folder_moved=True), launch)):
        found.add("folder-sensitive")
    if changes_folder(part):
        found.add("changes-folder")
    if may_create_links(part):
        found.add("may-link")
    if makes_links(part):
        found.add("makes-links")
    if not_plain_builtin(words) is not None:
        found.add("not-plain")
    return found


def _check_facts(table: tables.Table, launch: Path) -> list[str]:
    """A table's ``fact_examples``: each finds exactly the facts it says, each fact the table states is
    shown, and a fact that depends on the words (``cp -s``, ``git checkout``) is shown missing too."""
    key = table.names[0]
    failures: list[str] = []
    stated: set[str] = set()
    if table.folder_sensitive:
        stated.add("folder-sensitive")
    if table.changes_folder:
        stated.add("changes-folder")
    if table.links is not None:
        stated.add("may-link")
        if table.links.always or table.links.short or table.links.long:
            stated.add("makes-links")
    builtin = table.builtin
    if builtin is not None:
        stated.add("not-plain")
    shown: set[str] = set()
    absent: set[str] = set()
    for command, expected in table.fact_examples:
        words = shlex.split(command)
        if not words or not _names(table, words[0]):
            failures.append(f"{key}: example {command!r} runs another program")
            continue
        got = facts_found(words, launch)
        if got != set(expected.split()):
            failures.append(f"{key}: {command!r} shows {' '.join(sorted(got)) or 'no fact'}, not {expected or 'none'}")
        shown |= got
        absent |= stated - got
    failures.extend(f"{key}: no fact example shows {fact}" for fact in sorted(stated - shown))
    links = table.links
    if links is not None and links.subcommands and "may-link" not in absent:
        failures.append(f"{key}: no fact example shows a subcommand that makes no link")
    if links is not None and not links.always and (links.short or links.long) and "makes-links" not in absent:
        failures.append(f"{key}: no fact example shows a use that makes no link")
    if builtin is not None and (builtin.words or builtin.first or builtin.safe) and "not-plain" not in absent:
        failures.append(f"{key}: no fact example shows a use that is plain")
    return failures


def _writers_named(data: tables.Written | None) -> list[str]:
    """The readers a table's ``writes`` names (nested ones too) that ``tables.WRITERS`` does not hold."""
    if data is None:
        return []
    missing = [] if data.reader in tables.WRITERS else [data.reader]
    for inner in (data.every, *data.each.values()):
        missing += _writers_named(inner)
    return missing


def _all_options(table: tables.Table) -> list[tables.OptionDangers]:
    found = [table.option_dangers] if table.option_dangers is not None else []
    if table.subcommands is not None:
        found += [table.subcommands.every, *table.subcommands.each.values()]
    return found
