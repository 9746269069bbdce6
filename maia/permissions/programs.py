"""What programs do with their arguments: the tables behind Bash decisions.

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

import functools
import os
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from maia.permissions import tables
from maia.permissions.options import OptionSpec, operand_suffixes, option_names, scan_options
from maia.permissions.parts import DYN, Part
from maia.permissions.tables import GIT_GLOBAL_OPTIONS
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


@dataclass(frozen=True, slots=True)
class _Wrapper:
    spec: OptionSpec
    positional: int = 0  # operands before the command (timeout's duration, chroot's root…)
    empty: str = "none"  # with no command: "none" (runs nothing) or "shell" (runs a shell on stdin)
    opaque: bool = False  # what runs is not the program its name says (chroot: another root)


_ANY = OptionSpec()
_WRAPPERS: dict[str, _Wrapper] = {
    "nohup": _Wrapper(OptionSpec(short_flags="", long_flags=frozenset({"--help", "--version"}))),
    "builtin": _Wrapper(OptionSpec(short_flags="")),
    "command": _Wrapper(OptionSpec(short_flags="pvV")),
    "exec": _Wrapper(OptionSpec(short_value="a", short_flags="cl")),
    "setsid": _Wrapper(OptionSpec(short_flags="cfw", long_flags=frozenset({"--ctty", "--fork", "--wait"}))),
    "time": _Wrapper(
        OptionSpec(
            short_value="fo",
            short_flags="apqv",
            long_value=frozenset({"--format", "--output"}),
            long_flags=frozenset({"--append", "--portability", "--verbose", "--quiet"}),
        )
    ),
    "nice": _Wrapper(
        OptionSpec(short_value="n", short_flags="", long_value=frozenset({"--adjustment"}), numeric_flags=True)
    ),
    "ionice": _Wrapper(
        OptionSpec(
            short_value="cnpPu",
            short_flags="t",
            long_value=frozenset({"--class", "--classdata", "--pid", "--pgid", "--uid"}),
            long_flags=frozenset({"--ignore"}),
        )
    ),
    "stdbuf": _Wrapper(
        OptionSpec(short_value="ioe", short_flags="", long_value=frozenset({"--input", "--output", "--error"}))
    ),
    "timeout": _Wrapper(
        OptionSpec(
            short_value="sk",
            short_flags="v",
            long_value=frozenset({"--signal", "--kill-after"}),
            long_flags=frozenset({"--preserve-status", "--foreground", "--verbose"}),
        ),
        positional=1,
    ),
    "doas": _Wrapper(OptionSpec(short_value="uC", short_flags="nLs"), empty="shell"),
    "sudo": _Wrapper(
        OptionSpec(
            short_value="ugCDhprtUTR",
            short_flags="AbEeHiKklnPSsVv",
            long_value=frozenset(
                {
                    "--user",
                    "--group",
                    "--close-from",
                    "--chdir",
                    "--host",
                    "--prompt",
                    "--role",
                    "--type",
                    "--other-user",
                    "--command-timeout",
                    "--chroot",
                }
            ),
            long_flags=frozenset(
                {
                    "--askpass",
                    "--background",
                    "--preserve-env",
                    "--edit",
                    "--set-home",
                    "--login",
                    "--remove-timestamp",
                    "--reset-timestamp",
                    "--list",
                    "--non-interactive",
                    "--preserve-groups",
                    "--stdin",
                    "--shell",
                    "--validate",
                    "--",
                }
            ),
        ),
        empty="shell",
    ),
    "chroot": _Wrapper(OptionSpec(long_value=frozenset({"--userspec", "--groups"})), positional=1, opaque=True),
    "taskset": _Wrapper(OptionSpec(short_value="", short_flags="acp", long_flags=frozenset({"--cpu-list"})), 1),
    "chrt": _Wrapper(OptionSpec(short_value="TPD", short_flags="abdfimoprRv"), positional=1),
    "unbuffer": _Wrapper(OptionSpec(short_flags="p")),
    "caffeinate": _Wrapper(OptionSpec(short_value="tw", short_flags="dimsu")),
    "strace": _Wrapper(
        OptionSpec(
            short_value="abeEIoOpPsSuUX",
            short_flags="cCdDfFhiknqrtTvVwxyzZ",
            long_value=frozenset({"--output", "--env", "--user", "--attach", "--trace", "--signal", "--string-limit"}),
        )
    ),
    "setarch": _Wrapper(
        OptionSpec(short_flags="3BFILRSTXZv", long_flags=None), positional=1, empty="shell", opaque=True
    ),
    "unshare": _Wrapper(
        OptionSpec(
            short_value="wRSG",
            short_flags="muinpUCTfrc",
            long_value=frozenset({"--wd", "--root", "--setuid", "--setgid", "--propagation", "--setgroups"}),
            long_flags=None,
        ),
        empty="shell",
    ),
    "setpriv": _Wrapper(
        OptionSpec(
            short_flags="d",
            long_value=frozenset(
                {
                    "--reuid",
                    "--regid",
                    "--ruid",
                    "--euid",
                    "--rgid",
                    "--egid",
                    "--groups",
                    "--inh-caps",
                    "--ambient-caps",
                    "--bounding-set",
                    "--securebits",
                    "--pdeathsig",
                    "--selinux-label",
                    "--apparmor-profile",
                    "--landlock-access",
                    "--landlock-rule",
                }
            ),
            long_flags=frozenset(
                {"--clear-groups", "--keep-groups", "--init-groups", "--nnp", "--no-new-privs", "--reset-env", "--dump"}
            ),
        )
    ),
    "prlimit": _Wrapper(OptionSpec(short_value="p", short_optional="cdefilmnqrstvxy", long_value=frozenset({"--pid"}))),
    "fakeroot": _Wrapper(
        OptionSpec(short_value="lsib", short_flags="uvh", long_value=frozenset({"--lib", "--faked"})), empty="shell"
    ),
    "dbus-run-session": _Wrapper(OptionSpec(short_flags="", long_flags=frozenset({"--help", "--version"}))),
    "busybox": _Wrapper(OptionSpec(short_flags="")),
    "flock": _Wrapper(
        OptionSpec(
            short_value="wEc",
            short_flags="sxunoFvh",
            long_value=frozenset({"--timeout", "--wait", "--conflict-exit-code", "--command"}),
            long_flags=None,
        ),
        positional=1,
    ),
    "pkexec": _Wrapper(OptionSpec(long_value=frozenset({"--user"}), long_flags=None)),
}

# setarch's other names: `x86_64 CMD` is `setarch x86_64 CMD` (a personality changed: never allowed)
for _alias in [
    "linux32",
    "linux64",
    "x86_64",
    "i386",
    "i486",
    "i586",
    "i686",
    "uname26",
    "ppc",
    "ppc32",
    "ppc64",
    "ppc64le",
    "sparc",
    "sparc32",
    "sparc64",
    "s390",
    "s390x",
    "mips",
    "mips32",
    "mips64",
    "parisc",
    "parisc32",
    "parisc64",
    "ia64",
    "arm",
    "armv7l",
    "armv8l",
    "aarch64",
    "arm64",
]:
    _WRAPPERS[_alias] = _Wrapper(
        OptionSpec(short_flags="3BFILRSTXZv", long_flags=None), positional=0, empty="shell", opaque=True
    )

# interpreters: the options that give them code to run (opaque), and their option grammar
_CODE_OPTIONS: dict[str, tuple[OptionSpec, frozenset[str]]] = {
    "python": (
        OptionSpec(short_value="cmWXQ", short_flags="bBdEhiIOPqRsSuvVx", stop=frozenset({"-c", "-m"})),
        frozenset({"-c"}),
    ),
    "perl": (
        OptionSpec(short_value="eEI", short_optional="0lixCdDFMmVWXt", short_flags="acnpsTuUvwhS"),
        frozenset({"-e", "-E", "-M", "-m", "-d"}),
    ),
    "ruby": (OptionSpec(short_value="eIrCEF", short_optional="i0xWTKl"), frozenset({"-e"})),
    "node": (
        OptionSpec(short_value="epr", long_value=frozenset({"--eval", "--print", "--require", "--import"})),
        frozenset({"-e", "-p", "--eval", "--print"}),
    ),
    "php": (OptionSpec(short_value="rBREFdcnz"), frozenset({"-r", "-B", "-R", "-E", "-F", "-d"})),
    "lua": (OptionSpec(short_value="el"), frozenset({"-e"})),
    "Rscript": (OptionSpec(short_value="e"), frozenset({"-e"})),
    "R": (OptionSpec(short_value="e"), frozenset({"-e"})),
    "osascript": (OptionSpec(short_value="el"), frozenset({"-e"})),
    "julia": (OptionSpec(short_value="eEL"), frozenset({"-e", "-E", "-L"})),
    "elixir": (OptionSpec(short_value="er"), frozenset({"-e"})),
    "expect": (OptionSpec(short_value="cf"), frozenset({"-c"})),
    "guile": (OptionSpec(short_value="cel"), frozenset({"-c", "-e"})),
    "psql": (OptionSpec(short_value="cfdhpUvL", long_value=frozenset({"--command", "--file"})), frozenset()),
    "mysql": (OptionSpec(short_value="eDhPuS", long_value=frozenset({"--execute"})), frozenset({"-e", "--execute"})),
}
_INTERPRETER_ALIASES = {
    "python2": "python",
    "python3": "python",
    "pypy": "python",
    "pypy3": "python",
    "nodejs": "node",
    "bun": "node",
    "luajit": "lua",
    "perl5": "perl",
}
# always opaque: they run commands in ways that cannot be read from their arguments
_ALWAYS_OPAQUE = {
    "gdb": "gdb runs commands of its own (-ex, shell)",
    "lldb": "lldb runs commands of its own",
    "parallel": "parallel builds the commands it runs",
    "tmux": "tmux runs commands in its sessions",
    "screen": "screen runs commands in its sessions",
    "byobu": "byobu runs commands in its sessions",
    "nsenter": "nsenter runs a command inside other namespaces",
    "systemd-run": "systemd-run runs a command as a service",
    "source": "source runs a file's commands in this shell",
    ".": ". runs a file's commands in this shell",
    "at": "at runs commands read from its input later",
    "batch": "batch runs commands read from its input later",
    "crontab": "crontab installs commands to run later",
    "sqlite3": "sqlite3 can run shell commands (.shell, .system)",
    "ex": "ex runs editor commands read from its input",
    "perf": "perf runs the command it measures, with its own options",
    "ssh-agent": "ssh-agent runs a command with an agent of its own",
    "valgrind": "valgrind runs a program under tools of its choosing",
    "run-parts": "run-parts runs every program of a folder",
    "hyperfine": "hyperfine runs its arguments as shell commands",
    "rlwrap": "rlwrap runs a command with its own options",
    "sshpass": "sshpass runs a command",
    "firejail": "firejail runs a command in a sandbox of its own",
    "bwrap": "bwrap runs a command in another file system view",
    "systemd-nspawn": "systemd-nspawn runs a command in a container",
    "flatpak-spawn": "flatpak-spawn runs a command outside the sandbox",
    "numactl": "numactl runs a command",
    "cgexec": "cgexec runs a command",
    "proxychains": "proxychains runs a command through a proxy",
    "proxychains4": "proxychains runs a command through a proxy",
    "torsocks": "torsocks runs a command",
    "faketime": "faketime runs a command with a false clock",
    "eatmydata": "eatmydata runs a command with libraries preloaded",
    "catchsegv": "catchsegv runs a command",
    "xvfb-run": "xvfb-run runs a command",
    "dbus-launch": "dbus-launch runs a command",
    "entr": "entr runs a command when files change",
    "cpulimit": "cpulimit runs a command",
    "chpst": "chpst runs a command",
    "daemonize": "daemonize runs a command in the background",
    "start-stop-daemon": "start-stop-daemon runs a program",
    "mpirun": "mpirun runs a program",
    "mpiexec": "mpiexec runs a program",
    "uftrace": "uftrace runs a program",
    "ltrace": "ltrace runs a program with its own options",
    "rr": "rr runs and records a program",
    "expect": "expect runs scripts that can run commands",
    "tclsh": "tclsh runs Tcl code that can run commands",
    "wish": "wish runs Tcl code that can run commands",
    "ed": "ed runs editor commands (! runs a shell)",
    "emacs": "emacs runs Lisp (--eval, -l) that can run commands",
    "sudoedit": "sudoedit edits files as another user",
}


_VERSIONED = re.compile(r"(python|pypy|perl|ruby|node|php|lua)[0-9.]*")


def _interpreter_key(name: str) -> str | None:
    base = _INTERPRETER_ALIASES.get(name, name)
    if base in _CODE_OPTIONS:
        return base
    if name[:1] not in "pnlr":
        return None
    match = _VERSIONED.fullmatch(name)
    return match.group(1).replace("pypy", "python") if match else None


def inner_commands(words: Sequence[str], stdin: Stdin = NO_STDIN) -> list[Inner]:
    """What a command runs besides itself: argv, shell text, or something opaque."""
    if not words or DYN in words[0]:
        return []
    name = program_name(words[0])
    if name not in _RUNNERS and _interpreter_key(name) is None and not _LOADER.fullmatch(name):
        return []
    args = list(words[1:])
    if name in SHELLS or name in OTHER_SHELLS:
        return _shell(name, args, stdin)
    if name in _ALWAYS_OPAQUE:
        texts = (stdin.text,) if stdin.kind == "text" else ()
        return [Opaque(_ALWAYS_OPAQUE[name], texts), *[Argv(tuple(t), (), False) for t in operand_suffixes(args)]]
    interpreter = _interpreter_key(name)
    if interpreter is not None:
        return _interpreter(interpreter, args, stdin)
    if _LOADER.fullmatch(name):
        return _loader(args, stdin)
    if name in ("awk", "gawk", "mawk", "nawk", "busybox-awk"):
        return _awk(args, stdin)
    handler = _SPECIAL.get(name)
    if handler is not None:
        return handler(args, stdin)
    wrapper = _WRAPPERS.get(name)
    if wrapper is None:
        return []
    return _wrapped(name, wrapper, args)


def _runners() -> frozenset[str]:
    """Every program name inner_commands has something to say about (interpreters aside)."""
    awk = {"awk", "gawk", "mawk", "nawk", "busybox-awk"}
    return frozenset({*SHELLS, *OTHER_SHELLS, *_ALWAYS_OPAQUE, *awk, *_SPECIAL_NAMES, *_WRAPPERS})


def _wrapped(name: str, wrapper: _Wrapper, args: list[str]) -> list[Inner]:
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


def _shell(name: str, args: list[str], stdin: Stdin) -> list[Inner]:
    exact = name in SHELLS
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
    spec, code_options = _CODE_OPTIONS[key]
    scan = scan_options(args, spec)
    names = option_names(scan)
    if key == "psql":
        return [Opaque("psql runs SQL that can run shell commands (\\!)")]
    code = names & code_options
    if code:
        return [Opaque(f"{key} {sorted(code)[0]} runs code given on the command line")]
    if "-m" in names and key == "python":
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


_LOADER = re.compile(r"ld(-linux[\w.-]*|-musl[\w.-]*|64)?\.so(\.[0-9]+)*|ld-[\w.-]*\.so[\w.]*")
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


def _git_runs(args: list[str], _stdin: Stdin) -> list[Inner]:
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


_GIT_PROGRAM_KEY = re.compile(
    r"command|cmd|helper|program|pager|editor|ssh|hook|textconv|driver|filter|tool|proxy|askpass|exec|fsmonitor"
    r"|include|pack|protocol|url|sendemail|shell|path|external|sequence"
)
_TAR_RUNNING = frozenset(
    {
        "--to-command",
        "--checkpoint-action",
        "--use-compress-program",
        "--info-script",
        "--new-volume-script",
        "--rsh-command",
        "--rmt-command",
    }
)


def _tar_runs(args: list[str], _stdin: Stdin) -> list[Inner]:
    args = list(args)
    if args and not args[0].startswith("-"):
        args[0] = "-" + args[0]
    table = tables.BY_NAME["tar"]
    reading = tables.read_long(args, table)
    found: list[Inner] = []
    for _arg, option in reading.dangerous:
        if option in _TAR_RUNNING:
            found.append(Opaque(f"tar {option} runs a program", (_arg.partition("=")[2].replace("exec=", ""),)))
    spec = OptionSpec(short_value="fCbgKLNTVXHIF", long_flags=None)
    for option, value in scan_options(reading.args, spec, stop_at_operand=False).options:
        if option in ("-I", "-F") and value:
            found.append(Opaque(f"tar {option} runs a program", (value,)))
    return found


def _compiler(args: list[str], _stdin: Stdin) -> list[Inner]:
    for index, arg in enumerate(args):
        if arg == "-wrapper" and index + 1 < len(args):
            return [Opaque("gcc -wrapper runs its programs through another", (args[index + 1].replace(",", " "),))]
        if arg.startswith(("-fplugin", "-B", "--plugin", "-specs", "--specs")):
            return [Opaque(f"{arg.split('=', 1)[0]} makes the compiler run other programs")]
    return []


def _npm_runs(args: list[str], _stdin: Stdin) -> list[Inner]:
    scan = scan_options(args, _GLOBALS["npm"].spec)
    if scan.rest[:1] and scan.rest[0] in ("exec", "x", "explore", "exe"):
        return [Opaque(f"npm {scan.rest[0]} runs a package's program"), *_uncertain_tails(scan.rest[1:])]
    return []


def _npx(args: list[str], _stdin: Stdin) -> list[Inner]:
    for index, arg in enumerate(args):
        if arg in ("-c", "--call") and index + 1 < len(args):
            return [Script(args[index + 1], exact=False), Opaque("npx -c runs a command line")]
        if arg.startswith("--call="):
            return [Script(arg.split("=", 1)[1], exact=False), Opaque("npx -c runs a command line")]
    return []


def _cmake(args: list[str], _stdin: Stdin) -> list[Inner]:
    if "-E" in args:
        tail = args[args.index("-E") + 1 :]
        if tail[:1] and tail[0] in ("env", "time", "chdir"):
            return [Opaque(f"cmake -E {tail[0]} runs a command"), *_uncertain_tails(tail[1:])]
    return []


def _uncertain_tails(args: Sequence[str]) -> list[Inner]:
    return [Argv(tuple(t), (), False) for t in operand_suffixes(args)]


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
    return [Argv(tuple(rest))] if rest else []


def _command(args: list[str], _stdin: Stdin) -> list[Inner]:
    scan = scan_options(args, _WRAPPERS["command"].spec)
    if not scan.certain:
        return _uncertain("command", args)
    return _argv_or_nothing(scan.rest)


_COMPILERS = frozenset({"gcc", "cc", "g++", "c++", "clang", "clang++", "cpp", "gfortran"})
_SPECIAL_NAMES = (
    frozenset({"env", "xargs", "find", "fd", "fdfind", "watch", "su", "runuser", "sg", "script", "ssh", "sudo", "doas"})
    | {"flock", "command", "eval", "capsh", "git", "tar", "gtar", "bsdtar", "npm", "pnpm", "npx", "cmake"}
    | _COMPILERS
)
_SPECIAL: dict[str, Callable[[list[str], Stdin], list[Inner]]] = {
    "env": _env,
    "xargs": _xargs,
    "find": _find,
    "fd": _fd,
    "fdfind": _fd,
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
    "git": _git_runs,
    "tar": _tar_runs,
    "gtar": _tar_runs,
    "bsdtar": _tar_runs,
    "npm": _npm_runs,
    "pnpm": _npm_runs,
    "npx": _npx,
    "cmake": _cmake,
    **dict.fromkeys(_COMPILERS, _compiler),
}


_RUNNERS = _runners()
assert set(_SPECIAL) == _SPECIAL_NAMES

# --- global options: finding the subcommand --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Globals:
    spec: OptionSpec
    harmless: frozenset[str]  # options that may be skipped for an allow (the others must be named)
    folder_options: frozenset[str] = frozenset()  # options naming the folder the program works in


_GIT_GLOBALS = _Globals(
    GIT_GLOBAL_OPTIONS,
    harmless=frozenset(
        {
            "-C",
            "--no-pager",
            "-P",
            "-p",
            "--paginate",
            "--no-replace-objects",
            "--literal-pathspecs",
            "--glob-pathspecs",
            "--noglob-pathspecs",
            "--icase-pathspecs",
            "--no-optional-locks",
            "--no-advice",
            "--namespace",
        }
    ),
    folder_options=frozenset({"-C"}),
)
_GLOBALS: dict[str, _Globals] = {
    "git": _GIT_GLOBALS,
    "kubectl": _Globals(
        OptionSpec(
            short_value="nsv",
            short_flags="",
            long_value=frozenset(
                {
                    "--namespace",
                    "--context",
                    "--kubeconfig",
                    "--cluster",
                    "--user",
                    "--server",
                    "--token",
                    "--as",
                    "--as-group",
                    "--as-uid",
                    "--request-timeout",
                    "--certificate-authority",
                    "--client-certificate",
                    "--client-key",
                    "--tls-server-name",
                    "--cache-dir",
                    "--v",
                    "--log-file",
                    "--profile",
                    "--profile-output",
                }
            ),
            long_flags=frozenset(
                {
                    "--insecure-skip-tls-verify",
                    "--match-server-version",
                    "--warnings-as-errors",
                    "--disable-compression",
                }
            ),
        ),
        harmless=frozenset(
            {
                "-n",
                "--namespace",
                "--context",
                "--cluster",
                "--user",
                "--request-timeout",
                "-v",
                "--v",
                "--match-server-version",
                "--warnings-as-errors",
                "--disable-compression",
            }
        ),
    ),
    "helm": _Globals(
        OptionSpec(
            short_value="n",
            long_value=frozenset({"--namespace", "--kube-context", "--kubeconfig", "--registry-config"}),
            long_flags=frozenset({"--debug"}),
        ),
        harmless=frozenset({"-n", "--namespace", "--kube-context", "--debug"}),
    ),
    "terraform": _Globals(
        OptionSpec(short_flags="", long_flags=frozenset(), single_dash_long=frozenset({"-chdir"})),
        harmless=frozenset({"-chdir"}),
        folder_options=frozenset({"-chdir"}),
    ),
    "npm": _Globals(
        OptionSpec(
            short_value="wC",
            short_flags="gsqd",
            long_value=frozenset(
                {"--registry", "--prefix", "--userconfig", "--globalconfig", "--cache", "--loglevel", "--workspace"}
            ),
            long_flags=frozenset({"--global", "--silent", "--quiet", "--workspaces", "--offline", "--no-color"}),
        ),
        harmless=frozenset(
            {"--registry", "--loglevel", "-w", "--workspace", "-s", "-q", "-d", "--silent", "--quiet", "--workspaces"}
        ),
        folder_options=frozenset({"--prefix", "-C"}),
    ),
    "docker": _Globals(
        OptionSpec(
            short_value="Hcl",
            short_flags="Dv",
            long_value=frozenset(
                {"--host", "--context", "--config", "--log-level", "--tlscacert", "--tlscert", "--tlskey"}
            ),
            long_flags=frozenset({"--debug", "--tls", "--tlsverify"}),
        ),
        harmless=frozenset({"-D", "--debug", "-l", "--log-level", "-H", "--host", "-c", "--context"}),
    ),
    "cargo": _Globals(
        OptionSpec(
            short_value="CZ",
            short_flags="vq",
            long_value=frozenset({"--config", "--color"}),
            long_flags=frozenset({"--frozen", "--locked", "--offline", "--verbose", "--quiet"}),
        ),
        harmless=frozenset({"-v", "-q", "--color", "--frozen", "--locked", "--offline", "--verbose", "--quiet"}),
        folder_options=frozenset({"-C"}),
    ),
    "aws": _Globals(
        OptionSpec(
            long_value=frozenset(
                {
                    "--profile",
                    "--region",
                    "--output",
                    "--endpoint-url",
                    "--query",
                    "--color",
                    "--ca-bundle",
                    "--cli-read-timeout",
                    "--cli-connect-timeout",
                }
            ),
            long_flags=frozenset({"--debug", "--no-paginate", "--no-verify-ssl", "--no-sign-request"}),
        ),
        harmless=frozenset({"--profile", "--region", "--output", "--query", "--color", "--debug", "--no-paginate"}),
    ),
}
_GLOBALS["podman"] = _GLOBALS["docker"]
_GLOBALS["pnpm"] = _GLOBALS["npm"]
_GLOBALS["yarn"] = _GLOBALS["npm"]


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
                        and not (name == "git" and other_repository(value, launch))
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


_GIT_LONG = frozenset(
    {
        "--output",
        "--ext-diff",
        "--textconv",
        "--upload-pack",
        "--receive-pack",
        "--exec",
        "--open-files-in-pager",
        "--extcmd",
        "--tool",
        "--config",
        "--template",
        "--separate-git-dir",
        "--exec-path",
        "--no-index",  # git diff --no-index compares any two files: it reads outside the repository
        "--pathspec-from-file",
        "--file",  # git commit --file, git config --file: another file read or written
    }
)
_GIT_SHORT = {
    "grep": "O",
    "difftool": "xt",
    "mergetool": "t",
    "rebase": "x",
    "clone": "uc",
    "ls-remote": "u",
    "commit": "F",
    "tag": "F",
}
_GIT_RUNNERS = frozenset({"difftool", "mergetool", "filter-branch", "filter-repo", "submodule", "bisect"})


def _git(words: Sequence[str], launch: Path | None) -> list[Danger]:
    args = list(words[1:])
    scan = scan_options(args, _GIT_GLOBALS.spec)
    found: list[Danger] = []
    for option, value in scan.options:
        if option in ("-c", "--config-env"):
            found.append(Danger(option, "git -c sets configuration, which can run commands (core.*, alias.*)"))
        elif option in ("--git-dir", "--work-tree", "--exec-path") or (option == "--exec-path" and value):
            found.append(Danger(option, f"git {option} points git at another repository or program", False))
        elif option == "-C" and (launch is None or not inside(value, launch)):
            found.append(Danger("-C", "git -C outside the launch folder runs with that repository's configuration"))
        elif option == "-C" and launch is not None and other_repository(value, launch):
            found.append(
                Danger("-C", "git -C names another repository inside the launch folder (its configuration runs)", False)
            )
    if not scan.certain:
        found.append(Danger("git", "git options that cannot be read for sure"))
    rest = scan.rest
    sub = rest[0] if rest else ""
    tail = rest[1:]
    found.extend(_long_dangers(tail, _GIT_LONG, f"git {sub} with this option writes files or runs commands"))
    letters = _GIT_SHORT.get(sub, "")
    if letters:
        found.extend(_short_dangers(tail, letters, "", f"git {sub} with this option runs commands"))
    if sub in _GIT_RUNNERS:
        found.append(Danger(sub, f"git {sub} can run commands"))
    changes = _GIT_CHANGING_OPTIONS.get(sub)
    if changes is not None:
        long_names, letters = changes
        found.extend(_long_dangers(tail, long_names, f"git {sub} with this option changes or deletes"))
        found.extend(_short_dangers(tail, letters, "", f"git {sub} with this option changes or deletes"))
    return found


# options that turn a listing subcommand into one that changes things: `git branch -d x` is no listing
_GIT_CHANGING_OPTIONS: dict[str, tuple[frozenset[str], str]] = {
    "branch": (
        frozenset(
            {
                "--delete",
                "--move",
                "--copy",
                "--force",
                "--set-upstream-to",
                "--unset-upstream",
                "--edit-description",
                "--track",
            }
        ),
        "dDmMcCfu",
    ),
    "tag": (frozenset({"--delete", "--force", "--annotate", "--sign"}), "dfasu"),
    "remote": (frozenset({"--delete"}), ""),
    "stash": (frozenset(), ""),
    "notes": (frozenset(), ""),
}


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


def _find_dangers(words: Sequence[str], _launch: Path | None) -> list[Danger]:
    bad = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
    return [Danger(w, f"find {w} runs commands, deletes or writes files") for w in words[1:] if w in bad]


_SED_SPEC = OptionSpec(
    short_value="efl",
    short_optional="i",
    long_value=frozenset({"--expression", "--file", "--line-length"}),
    long_flags=None,
)


def _sed(words: Sequence[str], _launch: Path | None) -> list[Danger]:
    scan = scan_options(list(words[1:]), _SED_SPEC, stop_at_operand=False)
    found: list[Danger] = []
    scripts: list[str] = []
    for option, value in scan.options:
        if option in ("-i", "--in-place") or option.startswith("--in-place"):
            found.append(Danger("-i", "sed -i rewrites files"))
        elif option in ("-f", "--file"):
            found.append(Danger(option, "sed -f runs a script file that can write files or run commands"))
        elif option in ("-e", "--expression") and value is not None:
            scripts.append(value)
    operands = scan.rest
    if not scripts and operands:
        scripts.append(operands[0])
    for script in scripts:
        if DYN in script or _sed_runs_or_writes(script):
            found.append(Danger(script, "this sed script runs commands or writes files (e, w)"))
    return found


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


def _zip(words: Sequence[str], _launch: Path | None) -> list[Danger]:
    found = [Danger(w, "zip -TT runs a program") for w in words[1:] if w == "-TT" or w.startswith("-TT")]
    return found + _long_dangers(words[1:], frozenset({"--unzip-command"}), "zip runs a program")


def _pager(words: Sequence[str], _launch: Path | None) -> list[Danger]:
    args = list(words[1:])
    found = [Danger(w, "a + command runs pager commands (! runs a shell)") for w in args if w.startswith("+")]
    found += _long_dangers(
        args,
        frozenset({"--log-file", "--LOG-FILE", "--lesskey-file", "--lesskey-src", "--lesskey-content"}),
        "less writes a file or reads key bindings that run commands",
    )
    found += _short_dangers(args, "oOk", "oOkbhjpPtTxyz#", "less writes a file or reads key bindings")
    return found


def _vim(words: Sequence[str], _launch: Path | None) -> list[Danger]:
    args = list(words[1:])
    found = [Danger(w, "a + command runs editor commands (! runs a shell)") for w in args if w.startswith("+")]
    found += _long_dangers(args, frozenset({"--cmd", "--startuptime"}), "vim runs commands or writes a file")
    found += _short_dangers(args, "cSsuUwWeE", "cSsuUwWTirtq", "vim runs commands or writes files with this option")
    return found


def _make(words: Sequence[str], _launch: Path | None) -> list[Danger]:
    args = list(words[1:])
    found = _long_dangers(args, frozenset({"--eval"}), "make --eval adds rules that run commands")
    found += _short_dangers(args, "E", "CfIoWE", "make -E adds rules that run commands")
    scan = scan_options(
        args,
        OptionSpec(
            short_value="CfIoWE", short_optional="jlO", long_value=frozenset({"--file", "--makefile", "--directory"})
        ),
        stop_at_operand=False,
    )
    for option, value in scan.options:
        if option in ("-f", "--file", "--makefile") and (value in _STDIN_FILES or value is None):
            found.append(Danger(option, "make -f - reads its rules from its input"))
        elif option in ("-f", "--file", "--makefile", "-C", "--directory", "-I") and (
            _launch is None or not inside(value, _launch)
        ):
            found.append(Danger(option, f"make {option} reads rules from outside the launch folder"))
    for operand in scan.rest:
        if re.match(r"[A-Za-z_][A-Za-z0-9_.]*\s*[:+?!]?=", operand):
            found.append(Danger(operand.split("=")[0].rstrip(":+?! "), "a make variable set on the command line"))
    return found


def _awk_dangers(words: Sequence[str], _launch: Path | None) -> list[Danger]:
    scan = scan_options(
        list(words[1:]), OptionSpec(short_value="fvFeilE", long_value=frozenset({"--file", "--source"}))
    )
    found: list[Danger] = []
    programs: list[str] = []
    for option, value in scan.options:
        if option in ("-f", "--file", "-E", "-i", "--include", "-l", "--load"):
            found.append(Danger(option, "awk runs a program file or loads an extension"))
        elif option in ("-e", "--source") and value is not None:
            programs.append(value)
    if not programs and not found and scan.rest:
        programs.append(scan.rest[0])
    for program in programs:
        if DYN in program or re.search(r"system|getline|[|>]|@load|@include|ENVIRON", program):
            found.append(Danger(program, "this awk program runs commands or writes files"))
    return found


def _go(words: Sequence[str], _launch: Path | None) -> list[Danger]:
    args = [w.replace("--", "-", 1) if w.startswith("--") else w for w in words[1:]]
    found = _long_dangers(args[1:], frozenset({"-exec", "-toolexec", "-overlay"}), "go runs a program with this option")
    found += _folder_options(args, ("-C", "-modfile"), "go", _launch)
    return found


def _folder_options(args: Sequence[str], options: Sequence[str], program: str, launch: Path | None) -> list[Danger]:
    """``-C dir`` / ``--opt=path`` options naming a place outside the launch folder (another project's
    configuration or scripts then run)."""
    found: list[Danger] = []
    for index, arg in enumerate(args):
        for option in options:
            value: str | None = None
            if arg == option and index + 1 < len(args):
                value = args[index + 1]
            elif arg.startswith(option + "="):
                value = arg.split("=", 1)[1]
            else:
                continue
            if launch is None or not inside(value, launch):
                found.append(Danger(option, f"{program} {option} points outside the launch folder"))
    return found


def _npm(words: Sequence[str], _launch: Path | None) -> list[Danger]:
    found = _long_dangers(
        words[1:],
        frozenset({"--script-shell", "--node-options", "--userconfig", "--globalconfig", "--call"}),
        "npm runs another program or reads a configuration that does",
    )
    return found + _folder_options(words[1:], ("--prefix", "-C"), "npm", _launch)


def _cargo(words: Sequence[str], _launch: Path | None) -> list[Danger]:
    found = _long_dangers(words[1:], frozenset({"--config"}), "cargo --config can set a program to run")
    return found + _folder_options(words[1:], ("--manifest-path", "-C"), "cargo", _launch)


def _terraform(words: Sequence[str], launch: Path | None) -> list[Danger]:
    for word in words[1:]:
        if word.startswith("-chdir="):
            if launch is None or not inside(word.split("=", 1)[1], launch):
                return [Danger("-chdir", "terraform -chdir outside the launch folder")]
        elif not word.startswith("-"):
            break
    return []


_DANGERS: dict[str, Callable[[Sequence[str], Path | None], list[Danger]]] = {
    "git": _git,
    "find": _find_dangers,
    "sed": _sed,
    "gsed": _sed,
    "zip": _zip,
    "less": _pager,
    "more": _pager,
    "most": _pager,
    "vim": _vim,
    "vi": _vim,
    "nvim": _vim,
    "view": _vim,
    "vimdiff": _vim,
    "gvim": _vim,
    "make": _make,
    "gmake": _make,
    "awk": _awk_dangers,
    "gawk": _awk_dangers,
    "mawk": _awk_dangers,
    "nawk": _awk_dangers,
    "go": _go,
    "npm": _npm,
    "pnpm": _npm,
    "yarn": _npm,
    "cargo": _cargo,
    "terraform": _terraform,
}

# run their project's code: in a folder nobody checked, they run anything (git's hooks and config too)
FOLDER_SENSITIVE = frozenset(
    {
        "git",
        "make",
        "gmake",
        "npm",
        "npx",
        "pnpm",
        "yarn",
        "bun",
        "cargo",
        "go",
        "mvn",
        "gradle",
        "gradlew",
        "pytest",
        "tox",
        "nox",
        "just",
        "rake",
        "bundle",
        "poetry",
        "uv",
        "pip",
        "pip3",
        "composer",
        "mix",
        "dotnet",
        "terraform",
        "direnv",
    }
)


def dangers(part: Part, launch: Path | None) -> list[Danger]:
    """What in a part makes a prefix rule insufficient: dangerous options, unknown arguments, a folder
    nobody checked."""
    if not part.words:
        return []
    name = program_name(part.program)
    check = _DANGERS.get(name)
    found: list[Danger] = []
    table = tables.BY_NAME.get(name)
    words = part.words
    if table is not None and (table.long or table.dangerous):
        # options as the program reads them: --o=x is --output=x for sort, --upload=… --upload-pack for git
        reading = tables.read_long(words[1:], table)
        words = (words[0], *reading.args)
        found.extend(
            Danger(arg, f"{name} reads {arg.split('=', 1)[0]} as an unknown or ambiguous option", False)
            for arg in reading.doubtful
        )
        found.extend(
            Danger(option, f"{arg.split('=', 1)[0]} is how {name} may read {option}, which writes or runs something")
            for arg, option in reading.dangerous
            if arg.split("=", 1)[0] != option
        )
    options = table.option_dangers if table is not None else None
    if check is not None or options is not None:
        if options is not None:
            found.extend(_option_dangers(words, options))
        if check is not None:
            found.extend(check(words, launch))
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
        found.append(
            Danger(name, f"{name} runs in a folder outside the launch folder (it reads its configuration there)", False)
        )
    return found


def _option_dangers(words: Sequence[str], options: tables.OptionDangers) -> list[Danger]:
    """A table's dangerous options, as written in ``words`` (long prefixes already spelled out)."""
    args = list(words[1:])
    if options.first_cluster and args and not args[0].startswith("-"):
        args[0] = "-" + args[0]  # old style: tar xzf … is a cluster of options
    found = _long_dangers(args, options.long, options.long_why) if options.long else []
    if options.short:
        found += _short_dangers(
            args[:1] if options.first_only else args, options.short, options.short_values, options.short_why
        )
    return found


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

# builtins that evaluate their arguments as code or assign variables by name (array subscripts are
# evaluated: read 'a[$(cmd)]' runs cmd), or change how later commands are read
_EVAL_LIKE = frozenset(
    {
        "let",
        "declare",
        "typeset",
        "local",
        "export",
        "readonly",
        "unset",
        "read",
        "mapfile",
        "readarray",
        "getopts",
        "eval",
        "trap",
        "alias",
        "unalias",
        "enable",
        "hash",
        "shopt",
        "fc",
        "history",
        "bind",
        "complete",
        "compgen",
        "compopt",
        "caller",
        "coproc",
        "function",
        "select",
        "source",
        ".",
    }
)
_BUILTINS_TO_CHECK = _EVAL_LIKE | {"printf", "test", "[", "set", "wait"}
_SAFE_SET = re.compile(r"[-+][euxvoEhTB]+|pipefail|errexit|nounset|xtrace|verbose|errtrace|noclobber")


def not_plain_builtin(words: Sequence[str]) -> str | None:
    """Why a builtin's use is not plain (it evaluates or reconfigures), or None."""
    if not words or words[0] not in _BUILTINS_TO_CHECK:
        return None
    name = words[0]
    if name in _EVAL_LIKE:
        return f"{name} evaluates its arguments or changes how later commands run"
    if name == "printf" and len(words) > 1 and words[1].startswith("-v"):
        return "printf -v assigns a variable (array subscripts are evaluated)"
    if name in ("test", "[") and any(w in ("-v", "-R") for w in words[1:]):
        return "test -v evaluates array subscripts"
    if name == "set" and not all(_SAFE_SET.fullmatch(w) for w in words[1:]):
        return "set with these arguments changes how later commands run"
    if name == "wait" and "-p" in words[1:]:
        return "wait -p assigns a variable"
    return None


FOLDER_CHANGERS = frozenset({"cd", "pushd", "popd"})
_LINK_MAKERS = frozenset({"ln", "link", "cp", "mv", "rsync", "tar", "gtar", "bsdtar", "unzip", "cpio", "install"})
_LINK_MAKERS |= frozenset({"patch", "7z", "svn", "hg", "busybox"})
_GIT_TREE_WRITERS = frozenset(
    {
        "clone",
        "checkout",
        "switch",
        "restore",
        "reset",
        "pull",
        "merge",
        "stash",
        "worktree",
        "am",
        "apply",
        "cherry-pick",
        "rebase",
        "revert",
        "submodule",
        "read-tree",
        "checkout-index",
        "sparse-checkout",
    }
)


def changes_folder(part: Part) -> bool:
    """Whether a part changes the shell's folder."""
    return program_name(part.program) in FOLDER_CHANGERS and part.via is None


def may_create_links(part: Part) -> bool:
    """Whether a part can create symbolic links (or move them into place)."""
    name = program_name(part.program)
    if name in _LINK_MAKERS:
        return True
    if name == "git":
        if _GIT_TREE_WRITERS.isdisjoint(part.words):
            return False  # (each form's second word is one of the part's words: none can be a writer)
        forms = subcommand_forms(part.words, for_allow=False) or [part.words]
        return any(len(form) > 1 and form[1] in _GIT_TREE_WRITERS for form in [part.words, *forms])
    return False


_ACTING = FOLDER_CHANGERS | _LINK_MAKERS | {"git"} | _RUNNERS


@functools.lru_cache(maxsize=1024)
def may_act(name: str) -> bool:
    """False when :func:`changes_folder`, :func:`may_create_links` and :func:`inner_commands` are sure
    to find nothing in a part whose program is named ``name`` (most programs: ``ls``, ``grep``…)."""
    return name in _ACTING or _interpreter_key(name) is not None or bool(_LOADER.fullmatch(name))


def check_examples() -> list[str]:
    """Every table's examples, checked: the failures, in words (empty when all hold)."""
    from maia.permissions.parts import Part

    failures: list[str] = []
    seen: set[str] = set()
    for table in tables.TABLES:
        failures.extend(f"{name}: more than one table" for name in table.names if name in seen)
        seen.update(table.names)
    launch = Path("/nonexistent-maia-launch")
    for table in tables.TABLES:
        for command in (*table.match, *table.not_match):
            words = tuple(shlex.split(command))
            if words[0] not in table.names:
                failures.append(f"{table.names[0]}: example {command!r} runs another program")
                continue
            part = Part(words)
            found = (
                bool(tables.written(words, launch))
                or bool(dangers(part, launch))
                or any(type(inner).__name__ == "Opaque" for inner in inner_commands(words))
            )
            if found != (command in table.match):
                failures.append(
                    f"{table.names[0]}: {command!r} should {'' if command in table.match else 'not '}be found"
                )
    from maia.permissions import always  # it reads the tables only: no cycle

    failures.extend(always.check_examples())
    return failures
