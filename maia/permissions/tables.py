"""Program knowledge as data: each program's long options and the files it writes, with examples.

A :class:`Table` says, for one program (and its aliases):

- ``long``: its real long option names, so a prefix (``sort --o=x``, ``make --ev=…``,
  ``git fetch --upload=…``) is read as the option the program will take (GNU getopt_long, git's
  parse-options, npm and zip all accept any unambiguous prefix); with ``complete`` the list is
  every long option the program has, so an unknown or ambiguous one is a doubt;
- ``dangerous``: long options a prefix rule never covers (they write or run something), matched
  in every spelling: any prefix of one of them counts (a prefix the program refuses asks, at worst);
- ``option_dangers``: options a prefix rule covers only when it names them (``sort -o``, ``rg -z``,
  ``tar --to-command``), short ones found in clusters too;
- ``writes``: the files the program writes (operands, option values), judged as Write targets
  exactly like redirections, read by a reader it names (:class:`Written`, :data:`WRITERS`): a
  generic one given data, or the program's own; ``read_only`` says it writes nothing;
- ``always``: the narrowest rule the approval's "always" offers for the program (see
  :mod:`maia.permissions.always`): ``"word"`` (``Bash(prog *)``), ``"exact"`` (the exact command
  only), ``"reader"`` (the exact command, and only when it reads a file of the project), ``"never"``
  (no rule), or a :class:`Level` of subcommands (``Bash(git log *)``); None: a program whose
  subcommands are project targets (``make build``), the default for programs MAIA does not know;
  ``always_examples`` pairs a command with the rule it gets (None: none), checked on load too;
- ``option_dangers`` also holds whole words (``find -delete``), word prefixes (``less +cmd``),
  :class:`ValueCheck` s whose test is one of a fixed vocabulary (:data:`ValueTest`), and a parser
  ``hook`` when a list cannot say it (a sed script, an awk program);
- ``subcommands``: the dangers past the global options, in every subcommand and in each one
  (``git branch -d``); ``globals``: those options, which rules match past (``git -C dir push``);
- ``runs``: what it runs that its words do not show (``tar -I``, ``npx -c``, ``npm exec``);
  ``wrapper``: it runs the command its words give (``nohup``, ``sudo``), with ``runs_examples``;
  ``reader``: the parser that reads what it runs its own way (``env -S``, ``xargs``, ``find -exec``);
  ``interpreter``: it runs code (``python -c``); ``opaque``: it always runs something unseen (``gdb``);
- the facts the engine needs besides options: ``shell`` (its ``-c`` text is read again), ``pattern``
  (more names: the dynamic loader), ``changes_folder`` (``cd``), ``folder_sensitive`` (it runs the
  code of the folder it runs in: ``git``, ``make``), ``links`` (it may put symbolic links in place),
  ``builtin`` (a shell builtin that evaluates its arguments), each shown by ``fact_examples``;
- ``match`` / ``not_match``: example commands in which the table finds something (a written file,
  a dangerous or doubtful option, something opaque) or nothing; each danger the table declares
  must be found by one of its ``match`` examples. They are checked the first time the table is used
  (``programs.table_failures``); a table that fails does not load (its programs ask, from doubt).
  Adding a program is adding a table with its examples.
"""

from __future__ import annotations

import functools
import glob
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from maia.permissions.options import OptionSpec, scan_options
from maia.permissions.parts import DYN


def program_name(word: str) -> str:
    """The name a table knows a program by: its base name (``/usr/bin/git`` → ``git``)."""
    return word.rpartition("/")[2]


# git's own options before its subcommand (-C, -c, --git-dir…): programs.py judges them
GIT_GLOBAL_OPTIONS = OptionSpec(
    short_value="Cc",
    short_flags="pPvh",
    long_value=frozenset(
        {
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--super-prefix",
            "--config-env",
            "--list-cmds",
            "--attr-source",
        }
    ),
    long_flags=frozenset(
        {
            "--no-pager",
            "--paginate",
            "--bare",
            "--no-replace-objects",
            "--literal-pathspecs",
            "--glob-pathspecs",
            "--noglob-pathspecs",
            "--icase-pathspecs",
            "--no-optional-locks",
            "--no-advice",
            "--html-path",
            "--man-path",
            "--info-path",
            "--version",
            "--help",
            "--exec-path",
        }
    ),
)


def git_subcommand(args: Sequence[str]) -> tuple[str, list[str]]:
    """git's subcommand past its global options, and the words after it."""
    scan = scan_options(list(args), GIT_GLOBAL_OPTIONS)
    rest = scan.rest
    return (rest[0] if rest else ""), list(rest[1:])


@dataclass(frozen=True, slots=True)
class Target:
    """A file a program writes; ``tree``: files with names unknown until it runs, below ``path``."""

    path: str
    tree: bool = False


Writes = Callable[[Sequence[str], Path | None], list[Target]]


@dataclass(frozen=True, slots=True)
class Written:
    """The files a program writes, read by the reader ``reader`` names (:data:`WRITERS`): a generic one
    given the data here, or the program's own (``tar``, ``sed``, ``curl``…)."""

    # operands, option-values, nth-operand, copy, move, split, by-subcommand; or a program's own
    reader: str
    spec: OptionSpec = field(default_factory=OptionSpec)  # how the generic readers read its options
    options: tuple[str, ...] = ()  # option-values: the options whose value it writes; split: prefix options
    index: int = 0  # nth-operand: the operand it writes; operands: how many first operands it does not
    tree: bool = False  # the path is a folder where it writes files whose names are unknown until it runs
    default: str = ""  # split: the prefix of its pieces when no option names one
    every: Written | None = None  # by-subcommand: what any subcommand writes (read in its options)
    every_starts: tuple[str, ...] = ()  # … only when a word starts so (--o: --output and its prefixes)
    each: Mapping[str, Written] = field(default_factory=dict)  # by-subcommand: each subcommand's own


@dataclass(frozen=True, slots=True)
class Level:
    """One level of a program's subcommands: the words an "always" prefix rule may end on."""

    safe: frozenset[str] = frozenset()  # `prog … word *` is fine
    read_verbs: bool = False  # list, show, describe-…: fine at this level (cloud CLIs, management commands)
    scripts: frozenset[str] = frozenset()  # the next word names a project script: `npm run NAME *`
    groups: Mapping[str, Level] = field(default_factory=dict)  # words that lead to a next level
    any_group: Level | None = None  # any other plain word leads to this level (aws SERVICE …)
    targets: bool = False  # any plain word is a project-defined target (make build): fine unless risky
    nouns: frozenset[str] = frozenset()  # words that only look risky where they name things (gh run list)
    risky: frozenset[str] = frozenset()  # words risky for this program only (gh api)


Always = Literal["word", "exact", "reader", "never"] | Level
# a table for several programs may give each its own (npm, pnpm and yarn differ); None: the default
AlwaysField = Always | Mapping[str, Always | None] | None


# What makes an option's value (or an operand) dangerous: a small fixed vocabulary, each word one
# predicate of programs.py (``VALUE_TESTS`` there), so a table says *what* it checks, never *how*.
ValueTest = Literal[
    "present",  # the option is given at all (``git -c``, ``sed -f``)
    "stdin",  # its value is the standard input (``make -f -``): text nobody saw
    "outside",  # its value is a folder or file outside the launch folder (``npm --prefix /elsewhere``)
    "other-repository",  # a folder inside the launch folder that belongs to another git repository
    "assignment",  # an operand ``NAME=value`` (``make CC=x``): a variable the program's own files use
]
VALUE_TEST_NAMES: frozenset[str] = frozenset({"present", "stdin", "outside", "other-repository", "assignment"})


@dataclass(frozen=True, slots=True)
class ValueCheck:
    """Options whose value ``test`` judges (operands, for ``assignment``); ``token`` is what a rule must name
    (default: the option as found); ``nameable`` False: no rule can name it, it is always asked."""

    options: frozenset[str]
    test: ValueTest
    why: str
    token: str = ""
    nameable: bool = True


@dataclass(frozen=True, slots=True)
class OptionDangers:
    """Options that write a file or run a program, read as written (after long prefixes are spelled out).

    A ``why`` may hold ``{sub}``: the subcommand the danger was found under (git's tables).
    """

    long: frozenset[str] = frozenset()  # ``--name`` and ``--name=value``
    long_why: str = ""
    short: str = ""  # dangerous letters, in a cluster too (``-zo``)
    short_values: str = ""  # letters taking a value: the rest of the cluster, or the next word, is it
    short_why: str = ""
    first_cluster: bool = False  # tar's old style: a first word without a dash is a cluster of options
    first_only: bool = False  # short options are read in the first argument only (time -o FILE cmd)
    words: frozenset[str] = frozenset()  # whole arguments, anywhere (find's ``-exec``, ``-delete``)
    prefixes: tuple[str, ...] = ()  # arguments starting so, anywhere (a pager's ``+cmd``, zip's ``-TT…``)
    words_why: str = ""
    single_dash: bool = False  # Go's flag package: ``--exec`` is ``-exec`` (and ``--`` is no end)
    spec: OptionSpec | None = None  # how ``values`` are read (None: ``opt value`` / ``opt=value`` anywhere)
    anywhere: bool = False  # with ``spec``: options after operands count too (GNU getopt's permutation)
    values: tuple[ValueCheck, ...] = ()
    uncertain: str = ""  # with ``spec``: options ``spec`` cannot read for sure are a danger, this why
    itself: str = ""  # a subcommand dangerous whatever its options (``git difftool``): this why
    hook: str = ""  # a real parser in programs.py (``HOOKS``): ``sed-script``, ``awk-program``


@dataclass(frozen=True, slots=True)
class Runs:
    """What a program runs besides itself, which its words do not show as a command: opaque (no rule
    can allow it), its text read anyway for the words of deny rules. ``why`` may hold ``{option}``."""

    why: str
    spec: OptionSpec | None = None  # how options are read (None: ``opt value`` / ``opt=value`` anywhere)
    anywhere: bool = False  # with ``spec``: options after operands count too
    first_cluster: bool = False  # tar's old style: a first word without a dash is a cluster of options
    commands: frozenset[str] = frozenset()  # options whose value is a program or a command line (tar -I)
    shell: frozenset[str] = frozenset()  # options whose value is shell text, read for deny (npx -c)
    prefixes: tuple[str, ...] = ()  # arguments starting so make it run other programs (gcc -fplugin=…)
    # subcommands that run a program: one word, the first operand past ``spec``'s options (npm exec);
    # two words, found anywhere in a row (cmake -E env). The words after them may be what runs.
    subcommands: frozenset[str] = frozenset()
    hook: str = ""  # a real parser in programs.py (``RUN_HOOKS``): ``git-runs`` (git -c keys, rebase -x…)


@dataclass(frozen=True, slots=True)
class Wrapper:
    """A program that runs another command given as words (``sudo rm x`` runs ``rm x``)."""

    spec: OptionSpec  # its own options
    positional: int = 0  # operands before the command (timeout's duration, chroot's root…)
    empty: str = "none"  # with no command: "none" (runs nothing) or "shell" (runs a shell on stdin)
    opaque: bool = False  # what runs is not the program its name says (chroot: another root)


@dataclass(frozen=True, slots=True)
class Interpreter:
    """A program that runs code: how its options are read, and those that give it code to run
    (opaque: ``python -c``). Without code options or a script file, it reads code from its input."""

    spec: OptionSpec
    code: frozenset[str]
    module: frozenset[str] = frozenset()  # options naming a module it runs, which the part itself names (-m)
    versioned: tuple[str, ...] = ()  # names also written with a version number (python3.12, node18)
    opaque: str = ""  # whatever its options, what it runs can run commands (psql's \!): why


@dataclass(frozen=True, slots=True)
class Builtin:
    """A shell builtin that evaluates its arguments as code, assigns variables by name (array subscripts
    are evaluated: ``read 'a[$(cmd)]'`` runs cmd) or changes how later commands are read: a command using
    it is not plain (the tree-sitter reading judges it). With ``words``, ``first`` or ``safe``, only some
    of its uses are. ``why`` may hold ``{name}``."""

    why: str
    words: frozenset[str] = frozenset()  # only when one of its arguments is one of these (test -v)
    first: str = ""  # only when its first argument starts so (printf -v)
    safe: str = ""  # a regular expression: unless each of its arguments matches it (set -e, set -o pipefail)


@dataclass(frozen=True, slots=True)
class Links:
    """How a program may put symbolic links in place (make them, unpack or move them): a path after it
    may lead somewhere else. Any use ``may`` (later redirections are uncertain); it surely ``makes``
    them with ``always``, or with one of ``short``/``long`` (later written files are uncertain too)."""

    always: bool = False  # ln, tar, unzip…: it makes links (or unpacks files that may be links) whatever its options
    short: str = ""  # option letters that make it make links (``cp -s``), in a cluster too
    long: frozenset[str] = frozenset()  # long options that do (``cp --symbolic-link``)
    subcommands: frozenset[str] = frozenset()  # only these subcommands may (git checkout…); empty: any use
    # with ``subcommands``: the subcommands known never to; any other (an alias, an external command) may
    linkless: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Globals:
    """A program's options before its subcommand (``git -C dir push``): rules match past them."""

    spec: OptionSpec
    harmless: frozenset[str]  # options an allow may skip (the others must be named by the rule)
    folder_options: frozenset[str] = frozenset()  # options naming the folder it works in (harmless inside)
    repository: bool = False  # and not when that folder belongs to another git repository (git -C vendor/lib)


@dataclass(frozen=True, slots=True)
class Subcommands:
    """A program's subcommands past its global options (``spec``): the dangers in ``every`` subcommand's
    arguments, and each one's own (``each``)."""

    spec: OptionSpec
    every: OptionDangers = field(default_factory=OptionDangers)
    each: Mapping[str, OptionDangers] = field(default_factory=dict)
    # the subcommands take any unambiguous prefix of a long option (git's parse-options: ``git branch
    # --del`` is ``--delete``): a prefix of a dangerous option is read as it (Go's and clap's do not)
    abbreviated: bool = False


@dataclass(frozen=True, slots=True)
class Table:
    """What MAIA knows of one program (see the module's documentation)."""

    names: tuple[str, ...]
    long: frozenset[str] = frozenset()
    complete: bool = False
    dangerous: frozenset[str] = frozenset()
    spec: OptionSpec = field(default_factory=OptionSpec)
    writes: Written | None = None  # the files it writes, by a reader named in ``WRITERS``
    read_only: bool = False
    always: AlwaysField = None
    option_dangers: OptionDangers | None = None  # what a prefix rule never covers unless it names it
    subcommands: Subcommands | None = None  # dangers past the global options, per subcommand
    globals: Globals | None = None  # options before the subcommand, skipped by rules
    runs: Runs | None = None  # programs it runs that its words do not show
    opaque: str = ""  # it always runs something nobody can see (gdb, tmux, parallel…): why
    interpreter: Interpreter | None = None  # it runs code (python, perl, node…)
    wrapper: Wrapper | None = None  # it runs the command its words give (nohup, timeout, sudo…)
    # a parser in programs.py (``READERS``) reads what it runs: env -S, xargs, find -exec, sudo -s…
    reader: str = ""
    # (command, what it runs: the words, "opaque", or None for nothing), checked on load like match
    runs_examples: tuple[tuple[str, str | None], ...] = ()
    always_examples: tuple[tuple[str, str | None], ...] = ()
    match: tuple[str, ...] = ()
    not_match: tuple[str, ...] = ()
    # how a shell runs text (``sh -c``): "exact" (bash-like rules read it exactly), "other" (read for deny only)
    shell: Literal["", "exact", "other"] = ""
    pattern: str = ""  # a regular expression for more of its names (the dynamic loader: ld-linux-x86-64.so.2)
    # run in a folder nobody checked, it runs that folder's code and configuration (git hooks, Makefiles…)
    folder_sensitive: bool = False
    changes_folder: bool = False  # it changes the shell's folder (cd)
    links: Links | None = None  # it may put symbolic links in place
    builtin: Builtin | None = None  # a shell builtin that evaluates its arguments: never plain
    # (command, the facts found in it, space-separated: folder-sensitive, changes-folder, may-link,
    # makes-links, not-plain; "" for none), checked on load like match: each fact the table states is shown
    fact_examples: tuple[tuple[str, str], ...] = ()


# git's subcommands that write the work tree: they may put symbolic links in place
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
        "mv",  # moves a link into place, like mv
        "bisect",  # checks out the commits it tries
    }
)

# git's own subcommands that never create a link in the work tree nor move one into place: any other
# word is a tree writer (above) or a subcommand MAIA does not know (the user's alias ``co = checkout``,
# an external git-lfs or git-subtree), which may make links
_GIT_LINKLESS = (
    "status log diff show grep ls-files ls-tree rev-parse describe merge-base count-objects version help "
    "whatchanged range-diff cherry add commit fetch push branch tag config remote init blame shortlog "
    "reflog notes gc fsck prune repack show-ref symbolic-ref update-ref rev-list cat-file hash-object "
    "for-each-ref name-rev format-patch archive bundle rm clean send-email request-pull verify-commit "
    "verify-tag check-ignore check-attr diff-tree diff-files diff-index ls-remote var maintenance"
)
GIT_LINKLESS_SUBCOMMANDS = frozenset(_GIT_LINKLESS.split())

# global options before a subcommand (``git -C dir push``): the rules match past them
GIT_GLOBALS = Globals(
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
    repository=True,
)

KUBECTL_GLOBALS = Globals(
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
)

HELM_GLOBALS = Globals(
    OptionSpec(
        short_value="n",
        long_value=frozenset({"--namespace", "--kube-context", "--kubeconfig", "--registry-config"}),
        long_flags=frozenset({"--debug"}),
    ),
    harmless=frozenset({"-n", "--namespace", "--kube-context", "--debug"}),
)

TERRAFORM_GLOBALS = Globals(
    OptionSpec(short_flags="", long_flags=frozenset(), single_dash_long=frozenset({"-chdir"})),
    harmless=frozenset({"-chdir"}),
    folder_options=frozenset({"-chdir"}),
)

NPM_GLOBALS = Globals(
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
)

DOCKER_GLOBALS = Globals(
    OptionSpec(
        short_value="Hcl",
        short_flags="Dv",
        long_value=frozenset(
            {"--host", "--context", "--config", "--log-level", "--tlscacert", "--tlscert", "--tlskey"}
        ),
        long_flags=frozenset({"--debug", "--tls", "--tlsverify"}),
    ),
    harmless=frozenset({"-D", "--debug", "-l", "--log-level", "-H", "--host", "-c", "--context"}),
)

CARGO_GLOBALS = Globals(
    OptionSpec(
        short_value="CZ",
        short_flags="vq",
        long_value=frozenset({"--config", "--color"}),
        long_flags=frozenset({"--frozen", "--locked", "--offline", "--verbose", "--quiet"}),
    ),
    harmless=frozenset({"-v", "-q", "--color", "--frozen", "--locked", "--offline", "--verbose", "--quiet"}),
    folder_options=frozenset({"-C"}),
)

AWS_GLOBALS = Globals(
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
)


# --- reading long options as the program does ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LongReading:
    """The arguments with every long option spelled out, and what could not be resolved."""

    args: list[str]
    doubtful: list[str]  # unknown or ambiguous options of a program whose list is complete
    dangerous: list[tuple[str, str]]  # (as written, the dangerous option it may stand for)


def read_long(args: Sequence[str], table: Table) -> LongReading:
    """Spell out long option prefixes (``--o=x`` → ``--output=x``) with the table's real names."""
    if not any(arg.startswith("--") for arg in args):
        return LongReading(list(args), [], [])
    out: list[str] = []
    doubtful: list[str] = []
    dangerous: list[tuple[str, str]] = []
    key = table.names[0]
    ended = False
    for arg in args:
        if ended or not arg.startswith("--") or arg == "--":
            ended = ended or arg == "--"
            out.append(arg)
            continue
        name, eq, value = arg.partition("=")
        resolved, unsure, risky = _resolve(key, name)
        out.append(arg if resolved is None else resolved + eq + value)
        if unsure:
            doubtful.append(arg)
        dangerous.extend((arg, option) for option in risky)
    return LongReading(out, doubtful, dangerous)


@functools.lru_cache(maxsize=4096)
def _resolve(program: str, name: str) -> tuple[str | None, bool, tuple[str, ...]]:
    """How ``program`` reads the long option ``name``: the full name (None: unresolved), whether
    that is a doubt, and the dangerous options it may stand for."""
    table = BY_NAME[program]
    names = table.long | table.dangerous
    if name in names:
        return name, False, (name,) if name in table.dangerous else ()
    if DYN in name:
        return None, True, ()
    risky = tuple(option for option in sorted(table.dangerous) if option.startswith(name))
    candidates = [n for n in names if n.startswith(name)]
    if len(candidates) == 1:
        return candidates[0], False, risky
    negated = name.startswith("--no-") and any(n.startswith("--" + name[5:]) for n in names)
    return None, table.complete and not negated, risky


# --- written operands -----------------------------------------------------------------------------------


def _operands(args: Sequence[str], spec: OptionSpec) -> tuple[dict[str, str | None], list[str]]:
    scan = scan_options(list(args), spec, stop_at_operand=False)
    options: dict[str, str | None] = {}
    for name, value in scan.options:
        options[name] = value
    return options, scan.rest


def _in(folder: str, name: str) -> str:
    return f"{folder.rstrip('/')}/{name}" if folder else name


def _is_folder(path: str, launch: Path | None) -> bool:
    if path.endswith("/") or path in (".", ".."):
        return True
    if launch is None or DYN in path:
        return False
    from maia.core.paths import resolve_user_path

    return os.path.isdir(resolve_user_path(path, launch))


def _basenames(source: str, launch: Path | None) -> list[str]:
    """The names ``source`` stands for: a glob is expanded the way bash will (files found now)."""
    base = source.rstrip("/").rpartition("/")[2] or source
    if launch is None or DYN in source or not any(c in source for c in "*?["):
        return [base]
    found = sorted(glob.glob(source, root_dir=str(launch)))[:200]
    return [f.rstrip("/").rpartition("/")[2] for f in found] or [base]


def _into(folder: str, sources: Sequence[str], launch: Path | None) -> list[Target]:
    return [Target(_in(folder, name)) for source in sources for name in _basenames(source, launch)]


# the long options of cp, mv, install and ln that name a file or a folder (prefixes are read as them)
_COPY_LONG = frozenset({"--target-directory", "--no-target-directory", "--suffix", "--symbolic", "--backup"})
_CP_SPEC = OptionSpec(
    short_value="tS",
    long_value=frozenset({"--target-directory", "--suffix"}),
    long_flags=None,
)


def _copy_like(*, removes_sources: bool) -> Writes:
    """cp and install (``copy``), mv (``move``): the destination, the files copied into a folder."""

    def writes(args: Sequence[str], launch: Path | None) -> list[Target]:
        options, operands = _operands(args, _CP_SPEC)
        directory = options.get("-t") or options.get("--target-directory")
        found: list[Target] = [Target(s) for s in operands] if removes_sources else []
        if "-d" in options or "--directory" in options:  # install -d: every operand is a folder made
            return [Target(o) for o in operands]
        if directory:
            return [*found, Target(directory), *_into(directory, operands, launch)]
        if len(operands) < 2:
            return found
        *sources, destination = operands
        if removes_sources:
            found = [Target(s) for s in sources]
        found.append(Target(destination))
        if (
            "-T" not in options
            and "--no-target-directory" not in options
            and (len(sources) > 1 or _is_folder(destination, launch))
        ):
            found.extend(_into(destination, sources, launch))
        return found

    return writes


def _ln(args: Sequence[str], launch: Path | None) -> list[Target]:
    options, operands = _operands(args, _CP_SPEC)
    directory = options.get("-t") or options.get("--target-directory")
    if directory:
        return [Target(directory), *_into(directory, operands, launch)]
    if len(operands) == 1:
        return _into(".", operands, launch)
    if not operands:
        return []
    *sources, destination = operands
    found = [Target(destination)]
    if len(sources) > 1 or _is_folder(destination, launch):
        found.extend(_into(destination, sources, launch))
    return found


def _all_operands(data: Written, args: Sequence[str], _launch: Path | None) -> list[Target]:
    """``operands``: every operand past the first ``index`` (rm, touch, chmod MODE FILE…)."""
    _options, operands = _operands(args, data.spec)
    return [Target(o) for o in operands[data.index :]]


def _option_values(data: Written, args: Sequence[str], _launch: Path | None) -> list[Target]:
    """``option-values``: the values of the options ``options`` (sort -o FILE)."""
    scan = scan_options(list(args), data.spec, stop_at_operand=False)
    return [Target(value, data.tree) for name, value in scan.options if name in data.options and value]


def _nth_operand(data: Written, args: Sequence[str], _launch: Path | None) -> list[Target]:
    """``nth-operand``: the operand ``index`` (uniq IN OUT), unless it is ``-``."""
    _options, operands = _operands(args, data.spec)
    index = data.index
    return [Target(operands[index], data.tree)] if len(operands) > index and operands[index] != "-" else []


def _dd(args: Sequence[str], _launch: Path | None) -> list[Target]:
    return [Target(a[3:]) for a in args if a.startswith("of=")]


_SED_SPEC = OptionSpec(
    short_value="efl", short_optional="i", long_value=frozenset({"--expression", "--file", "--line-length"})
)


# a w/W command or the w flag of s: the file name runs to the end of the line
_SED_WRITE = re.compile(r"(?:^|[;{}\s/0-9$!])(?:[gpIiMme0-9]*)[wW][ \t]*([^\n]+)")


def _sed(args: Sequence[str], _launch: Path | None) -> list[Target]:
    scan = scan_options(list(args), _SED_SPEC, stop_at_operand=False)
    names = {name.split("=", 1)[0] for name, _value in scan.options}
    scripts = [v for n, v in scan.options if n in ("-e", "--expression") and v is not None]
    given = bool(names & {"-e", "--expression", "-f", "--file"})
    if not given and scan.rest:
        scripts.append(scan.rest[0])
    found = [
        Target(m.group(1).strip())
        for script in scripts
        for m in _SED_WRITE.finditer(script)
        if m.group(1).strip() not in ("/dev/stdout", "/dev/stderr")
    ]
    if names & {"-i", "--in-place"}:
        found.extend(Target(o) for o in (scan.rest if given else scan.rest[1:]))
    return found


def _find(args: Sequence[str], _launch: Path | None) -> list[Target]:
    found: list[Target] = []
    roots: list[str] = []
    for arg in args:
        if arg.startswith(("-", "(", "!")) or arg == ",":
            break
        roots.append(arg)
    for index, arg in enumerate(args):
        if arg in ("-fprint", "-fprint0", "-fprintf", "-fls") and index + 1 < len(args):
            found.append(Target(args[index + 1]))
        elif arg == "-delete":
            found.extend(Target(root, tree=True) for root in roots or ["."])
    return found


def _split(data: Written, args: Sequence[str], _launch: Path | None) -> list[Target]:
    """``split``: the pieces, named by a prefix option (``options``), else (split) the second operand,
    else ``default``."""
    options, operands = _operands(args, data.spec)
    prefix = next((str(options[o]) for o in data.options if options.get(o)), None)
    if prefix is None:
        prefix = operands[1] if data.default == "x" and len(operands) > 1 else data.default
    return [Target(prefix + "aa"), Target(prefix + "00")]


_TAR_SPEC = OptionSpec(
    short_value="fCbgKLNTVXHIF",
    long_value=frozenset({"--file", "--directory"}),
)


def _tar(args: Sequence[str], _launch: Path | None) -> list[Target]:
    args = list(args)
    if args and not args[0].startswith("-"):
        args[0] = "-" + args[0]  # old style: tar xzf … is a cluster of options
    scan = scan_options(args, _TAR_SPEC, stop_at_operand=False)
    names = {n for n, _v in scan.options}
    values = dict(scan.options)
    if names & {"-x", "--extract", "--get"}:
        if names & {"-O", "--to-stdout"}:
            return []
        return [Target(str(values.get("-C") or values.get("--directory") or "."), tree=True)]
    if names & {"-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate", "--concatenate"}:
        archive = values.get("-f") or values.get("--file")
        return [Target(archive)] if archive and archive != "-" else []
    return []


def _unzip(args: Sequence[str], _launch: Path | None) -> list[Target]:
    options, _ignored = _operands(args, OptionSpec(short_value="dxP"))
    if "-l" in options or "-p" in options or "-t" in options or "-Z" in options or "-v" in options:
        return []
    return [Target(str(options.get("-d") or "."), tree=True)]


def _rsync(args: Sequence[str], _launch: Path | None) -> list[Target]:
    _options, operands = _operands(args, OptionSpec(short_value="eBTM", long_flags=None))
    if len(operands) < 2 or ":" in operands[-1]:
        return []
    return [Target(operands[-1], tree=True)]


def _patch(args: Sequence[str], _launch: Path | None) -> list[Target]:
    options, operands = _operands(
        args,
        OptionSpec(
            short_value="oidpDFBrVYzgiX",
            long_value=frozenset(
                {
                    "--output",
                    "--directory",
                    "--input",
                    "--strip",
                    "--fuzz",
                    "--suffix",
                    "--prefix",
                    "--basename-prefix",
                    "--reject-file",
                    "--ifdef",
                    "--get",
                    "--quoting-style",
                    "--version-control",
                    "--reject-format",
                    "--read-only",
                }
            ),
        ),
    )
    out = options.get("-o") or options.get("--output")
    if out:
        return [Target(out)] if out != "-" else []
    if "--dry-run" in options or "-C" in options:
        return []
    if operands:
        return [Target(operands[0])]
    return [Target(str(options.get("-d") or options.get("--directory") or "."), tree=True)]


# the files curl writes: -o, -D, -c and their long names, and the other files it may be told to keep
_CURL_FILES = frozenset(
    {
        "--output",
        "--dump-header",
        "--cookie-jar",
        "--trace",
        "--trace-ascii",
        "--stderr",
        "--libcurl",
        "--etag-save",
        "--hsts",
        "--alt-svc",
    }
)
_CURL_OUT = OptionSpec(
    short_value="odHXAeEuTwmxyzbcrCKFUQDhY",
    short_flags=None,
    long_value=_CURL_FILES | {"--output-dir", "--config"},
)


def _curl(args: Sequence[str], _launch: Path | None) -> list[Target]:
    scan = scan_options(list(args), _CURL_OUT, stop_at_operand=False)
    found = []
    for name, value in scan.options:
        if (name in ("-o", "-D", "-c") or name in _CURL_FILES) and value:
            if value != "-":
                found.append(Target(value))
        elif name in ("-O", "--remote-name", "-J", "--remote-header-name", "--remote-name-all"):
            found.append(Target(".", tree=True))
        elif name in ("-K", "--config") and value:
            found.append(Target(".", tree=True))  # a configuration may name any file to write
    return found


def _wget(args: Sequence[str], _launch: Path | None) -> list[Target]:
    scan = scan_options(
        list(args),
        OptionSpec(
            short_value="OPoaeiDBTtUwQlAR",
            long_value=frozenset({"--output-document", "--directory-prefix", "--output-file", "--append-output"}),
        ),
        stop_at_operand=False,
    )
    options = dict(scan.options)
    document = options.get("-O") or options.get("--output-document")
    found = [Target(v) for n, v in scan.options if n in ("-o", "--output-file", "-a", "--append-output") and v]
    if document:
        return found + ([Target(document)] if document != "-" else [])
    folder = options.get("-P") or options.get("--directory-prefix") or "."
    return [*found, Target(str(folder), tree=True)]


_GIT_CONFIG_READS = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color", "--get-colorbool"}
)
_GIT_CONFIG_WRITES = frozenset(
    {
        "--add",
        "--unset",
        "--unset-all",
        "--replace-all",
        "--rename-section",
        "--remove-section",
        "--edit",
        "-e",
    }
)


def _git_config(args: Sequence[str], _launch: Path | None) -> list[Target]:
    scan = scan_options(
        list(args),
        OptionSpec(short_value="f", long_value=frozenset({"--file", "--blob", "--type", "--default", "--comment"})),
        stop_at_operand=False,
    )
    names = {n.split("=", 1)[0] for n, _v in scan.options}
    # git takes any unambiguous prefix of a long option: --unset-a is --unset-all (a doubt is a write)
    names |= {w for n in names if n.startswith("--") and len(n) > 2 for w in _GIT_CONFIG_WRITES if w.startswith(n)}
    values = dict(scan.options)
    operands = list(scan.rest)
    action = (
        operands[0]
        if operands and operands[0] in ("get", "list", "set", "unset", "rename-section", "remove-section", "edit")
        else None
    )
    if action is not None:
        operands = operands[1:]
    writes = action in ("set", "unset", "rename-section", "remove-section", "edit") or bool(names & _GIT_CONFIG_WRITES)
    if action is None and not names & _GIT_CONFIG_READS and len(operands) >= 2:
        writes = True
    if not writes:
        return []
    file = values.get("-f") or values.get("--file")
    if file:
        return [Target(file)]
    if "--global" in names:
        return [Target("~/.gitconfig")]
    if "--system" in names:
        return [Target("/etc/gitconfig")]
    return [Target(".git/config")]


def _git_paths(operands: Sequence[str], after_dash: Sequence[str] | None) -> list[Target]:
    return [Target(p) for p in (after_dash if after_dash is not None else operands)]


_GIT_SUB_SPEC = OptionSpec(
    short_value="bBsUpo",
    long_value=frozenset(
        {"--source", "--pathspec-from-file", "--directory", "--unidiff-zero", "--exclude", "--include"}
    ),
)


def _git_checkout(tail: Sequence[str], _launch: Path | None) -> list[Target]:
    """git checkout [BRANCH] [--] FILE…: the files after ``--``, else the operands after the first."""
    dash = list(tail).index("--") if "--" in tail else -1
    _options, operands = _operands(tail[:dash] if dash >= 0 else tail, _GIT_SUB_SPEC)
    if dash >= 0:
        return [Target(p) for p in tail[dash + 1 :]]
    return [Target(p) for p in operands[1:]]  # git checkout BRANCH FILE…


def _git_restore(tail: Sequence[str], _launch: Path | None) -> list[Target]:
    """git restore [--] FILE…: every path named."""
    dash = list(tail).index("--") if "--" in tail else -1
    after = list(tail[dash + 1 :]) if dash >= 0 else None
    _options, operands = _operands(tail[:dash] if dash >= 0 else tail, _GIT_SUB_SPEC)
    return _git_paths(operands, after) + ([Target(p) for p in after] if after is not None and operands else [])


def _git_apply(tail: Sequence[str], _launch: Path | None) -> list[Target]:
    """git apply: the work tree (or --directory), unless it only checks or reports."""
    options, _ops = _operands(tail, _GIT_SUB_SPEC)
    if set(options) & {"--check", "--stat", "--numstat", "--summary", "--cached"} and not set(options) & {
        "--index",
        "--apply",
    }:
        return []
    return [Target(str(options.get("--directory") or "."), tree=True)]


def _git_worktree(tail: Sequence[str], _launch: Path | None) -> list[Target]:
    """git worktree add PATH / move FROM TO: the new folder."""
    _options, operands = _operands(tail, OptionSpec(short_value="bB", long_value=frozenset({"--reason"})))
    if operands[:1] == ["add"] and len(operands) > 1:
        return [Target(operands[1], tree=True)]
    if operands[:1] == ["move"] and len(operands) > 2:
        return [Target(operands[2], tree=True)]
    return []


def _git_mv(tail: Sequence[str], launch: Path | None) -> list[Target]:
    """git mv SOURCE… DEST: every source (removed) and the destination, or the names moved into it."""
    _options, operands = _operands([a for a in tail if a != "--"], OptionSpec(long_flags=None))
    if len(operands) < 2:
        return [Target(p) for p in operands]
    *sources, dest = operands
    found = [Target(p) for p in operands]
    if len(sources) > 1 or _is_folder(dest, launch):
        found += _into(dest, sources, launch)
    return found


def _git_bundle(tail: Sequence[str], _launch: Path | None) -> list[Target]:
    """git bundle create FILE …: the bundle file."""
    _options, operands = _operands(tail, OptionSpec(long_flags=None))
    return [Target(operands[1])] if operands[:1] == ["create"] and len(operands) > 1 else []


def _git_clean(tail: Sequence[str], _launch: Path | None) -> list[Target]:
    """git clean: the paths it removes (every untracked file of the tree without a path)."""
    dash = list(tail).index("--") if "--" in tail else -1
    options, operands = _operands(
        tail[:dash] if dash >= 0 else tail, OptionSpec(short_value="e", long_value=frozenset({"--exclude"}))
    )
    if "-n" in options or "--dry-run" in options:
        return []
    paths = operands + (list(tail[dash + 1 :]) if dash >= 0 else [])
    return [Target(p, tree=True) for p in paths] or [Target(".", tree=True)]


def _by_subcommand(data: Written, args: Sequence[str], launch: Path | None) -> list[Target]:
    """``by-subcommand``: the files a program writes, per subcommand past its global options (``spec``):
    ``every`` reads any subcommand's arguments (words starting with ``every_starts``), ``each`` one's own."""
    rest = scan_options(list(args), data.spec).rest
    if not rest:
        return []
    tail = rest[1:]
    own = data.each.get(rest[0])
    if own is None and not any(word.startswith("-") for word in tail):
        return []  # ``every`` reads options only (the common case: git status, git log)
    found = read_written(data.every, tail, launch) if data.every is not None else []
    return found + read_written(own, tail, launch) if own is not None else found


def _may_write(data: Written, words: Sequence[str]) -> bool:
    """A quick look before ``by-subcommand`` reads (git status, git diff --stat): no subcommand or option
    that writes, False."""
    return any(word in data.each or word.startswith(data.every_starts) for word in words)


# git's written files: data per subcommand, each a generic reader given data or one of git's own
_GIT_WRITES = Written(
    "by-subcommand",
    GIT_GLOBAL_OPTIONS,
    every=Written("option-values", OptionSpec(long_value=frozenset({"--output"})), ("--output",)),
    every_starts=("--o",),  # --output and its prefixes
    each={
        "archive": Written("option-values", OptionSpec(short_value="o", long_value=frozenset({"--output"})), ("-o",)),
        "bundle": Written("git-bundle"),
        "mv": Written("git-mv"),
        "clean": Written("git-clean"),
        "config": Written("git-config"),
        "checkout": Written("git-checkout"),
        "restore": Written("git-restore"),
        "apply": Written("git-apply"),
        "worktree": Written("git-worktree"),
        "clone": Written(
            "nth-operand",
            OptionSpec(short_value="obucj", long_value=frozenset({"--origin", "--branch", "--depth"})),
            index=1,
            tree=True,
        ),
        "format-patch": Written(
            "option-values",
            OptionSpec(short_value="ov", long_value=frozenset({"--output-directory"})),
            ("-o", "--output-directory"),
            tree=True,
        ),
    },
)


_PLAIN = OptionSpec(long_flags=None)
_SED_DANGER_SPEC = OptionSpec(
    short_value="efl",
    short_optional="i",
    long_value=frozenset({"--expression", "--file", "--line-length"}),
    long_flags=None,
)


def _zip_archive(args: Sequence[str], _launch: Path | None) -> list[Target]:
    _options, operands = _operands(args, OptionSpec(short_value="bnOtTx", long_flags=None))
    if not operands:
        return []
    archive = operands[0]
    return [Target(archive), Target(archive + ".zip")]


def _unpack(args: Sequence[str], _launch: Path | None) -> list[Target]:
    """cpio -i, ar x, 7z x/e, unrar x/e, jar x: files named by the archive."""
    words = list(args)
    first = words[0] if words else ""
    if first in ("x", "e") or first.lstrip("-").startswith(("x", "i")) or "-i" in words or "--extract" in words:
        folder = next((w[2:] for w in words if w.startswith("-o") and len(w) > 2), ".")
        return [Target(folder, tree=True)]
    if first.startswith(("r", "q", "a", "c", "u", "-c", "-o")) and len(words) > 1:
        return [Target(words[1])]  # the archive made or changed
    return []


def _openssl(args: Sequence[str], _launch: Path | None) -> list[Target]:
    return [
        Target(args[i + 1]) for i, w in enumerate(args[:-1]) if w in ("-out", "-keyout", "-certout", "-outform_file")
    ]


def _scp(args: Sequence[str], _launch: Path | None) -> list[Target]:
    """scp/sftp: a local last operand receives what is copied (a file, or files in a folder)."""
    _options, operands = _operands(args, OptionSpec(short_value="cFiJlmoPSXDBbR"))
    if len(operands) < 2 or ":" in operands[-1]:
        return []
    return [Target(operands[-1], tree=True)]


def _yq(args: Sequence[str], _launch: Path | None) -> list[Target]:
    """yq -i EXPRESSION FILE…: the files it rewrites (the first operand is the expression)."""
    options, operands = _operands(args, OptionSpec(short_value="opIsf", long_flags=None))
    if not ({"-i", "--inplace"} & set(options)):
        return []
    if operands[:1] and operands[0] in ("e", "eval", "ea", "eval-all"):
        operands = operands[1:]
    return [Target(o) for o in operands[1:]] or [Target(o) for o in operands]


def _ssh_keygen(args: Sequence[str], _launch: Path | None) -> list[Target]:
    """ssh-keygen -f FILE makes FILE and FILE.pub, unless it only reads it (-l, -y, -B, -F, -R, -H…)."""
    options, _rest = _operands(args, OptionSpec(short_value="abCDEfFGIJjKmMNnOPrsSStVwYzZ"))
    if set(options) & {"-l", "-y", "-B", "-F", "-D", "-Q"}:
        return []
    file = options.get("-f")
    return [Target(file), Target(file + ".pub")] if file else []


def _gzip_like(args: Sequence[str], _launch: Path | None) -> list[Target]:
    options, operands = _operands(args, OptionSpec(short_value="S", long_value=frozenset({"--suffix"})))
    if set(options) & {"-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test"}:
        return []
    suffix = options.get("-S") or options.get("--suffix")
    suffixes = (*((str(suffix),) if suffix else ()), *_COMPRESSED_SUFFIXES)
    found = []
    for operand in operands:
        if operand == "-":
            continue
        found.append(Target(operand))  # compressed (then removed), or decompressed (then removed)
        # decompressing writes the name without its suffix (gzip -df .env.gz writes .env)
        found.extend(Target(operand[: -len(s)]) for s in suffixes if len(operand) > len(s) and operand.endswith(s))
    return found


_COMPRESSED_SUFFIXES = (".gz", ".z", "-gz", "-z", "_z", ".Z", ".bz2", ".bz", ".xz", ".lzma", ".zst", ".lz")


def _own(reader: Writes) -> Reader:
    return lambda _data, args, launch: reader(args, launch)


Reader = Callable[["Written", Sequence[str], Path | None], list[Target]]
# the readers a table's ``writes`` names: generic ones, given the data of its :class:`Written`, and
# programs' own (their syntax is not a list: tar's modes, sed's w command, curl's many files…)
WRITERS: dict[str, Reader] = {
    "operands": _all_operands,
    "option-values": _option_values,
    "nth-operand": _nth_operand,
    "copy": _own(_copy_like(removes_sources=False)),
    "move": _own(_copy_like(removes_sources=True)),
    "split": _split,
    "by-subcommand": _by_subcommand,
    **{
        name: _own(reader)
        for name, reader in {
            "ln": _ln,
            "dd": _dd,
            "sed": _sed,
            "find": _find,
            "tar": _tar,
            "unzip": _unzip,
            "rsync": _rsync,
            "patch": _patch,
            "curl": _curl,
            "wget": _wget,
            "git-config": _git_config,
            "git-mv": _git_mv,
            "git-bundle": _git_bundle,
            "git-clean": _git_clean,
            "git-checkout": _git_checkout,
            "git-restore": _git_restore,
            "git-apply": _git_apply,
            "git-worktree": _git_worktree,
            "zip-archive": _zip_archive,
            "unpack": _unpack,
            "openssl": _openssl,
            "scp": _scp,
            "yq": _yq,
            "ssh-keygen": _ssh_keygen,
            "gzip-like": _gzip_like,
        }.items()
    },
}


def read_written(data: Written, args: Sequence[str], launch: Path | None) -> list[Target]:
    """The files ``data``'s reader finds in ``args`` (a program's arguments)."""
    return WRITERS[data.reader](data, args, launch)


_KUBE_DANGERS = OptionDangers(
    frozenset({"--kubeconfig", "--profile-output", "--log-file"}), "a kubeconfig can run commands"
)

TABLES: tuple[Table, ...] = (
    Table(
        ("sort",),
        option_dangers=OptionDangers(
            frozenset({"--output", "--compress-program"}),
            "sort writes a file or runs a program",
            "o",
            "kotTS",
            "sort -o writes a file",
        ),
        long=frozenset(
            [
                "--ignore-leading-blanks",
                "--dictionary-order",
                "--ignore-case",
                "--general-numeric-sort",
                "--ignore-nonprinting",
                "--month-sort",
                "--human-numeric-sort",
                "--numeric-sort",
                "--random-sort",
                "--random-source",
                "--reverse",
                "--sort",
                "--version-sort",
                "--batch-size",
                "--check",
                "--debug",
                "--files0-from",
                "--key",
                "--merge",
                "--stable",
                "--buffer-size",
                "--field-separator",
                "--temporary-directory",
                "--parallel",
                "--unique",
                "--zero-terminated",
                "--help",
                "--version",
            ]
        ),
        complete=True,
        dangerous=frozenset({"--output", "--compress-program"}),
        writes=Written(
            "option-values",
            OptionSpec(
                short_value="okStT",
                long_value=frozenset(
                    {"--output", "--key", "--buffer-size", "--field-separator", "--temporary-directory"}
                ),
            ),
            ("-o", "--output"),
        ),
        match=(
            "sort -o .env data.txt",
            "sort --o=.env data.txt",
            "sort --outp .env x",
            "sort --zz x",
            "sort --output=x data.txt",
            "sort --compress-program=gzip data.txt",
            "sort --compress=gzip data.txt",
        ),
        not_match=("sort -n data.txt", "sort --rev data.txt", "sort -k2 -t, data.txt"),
    ),
    Table(
        ("make", "gmake"),
        folder_sensitive=True,
        fact_examples=(("make build", "folder-sensitive"), ("gmake", "folder-sensitive")),
        long=frozenset(
            [
                "--always-make",
                "--directory",
                "--debug",
                "--environment-overrides",
                "--file",
                "--makefile",
                "--help",
                "--ignore-errors",
                "--include-dir",
                "--jobs",
                "--keep-going",
                "--load-average",
                "--check-symlink-times",
                "--just-print",
                "--dry-run",
                "--recon",
                "--output-sync",
                "--old-file",
                "--assume-old",
                "--print-data-base",
                "--question",
                "--no-builtin-rules",
                "--no-builtin-variables",
                "--silent",
                "--quiet",
                "--no-silent",
                "--stop",
                "--no-keep-going",
                "--touch",
                "--trace",
                "--version",
                "--print-directory",
                "--no-print-directory",
                "--what-if",
                "--new-file",
                "--assume-new",
                "--warn-undefined-variables",
                "--shuffle",
            ]
        ),
        complete=True,
        dangerous=frozenset({"--eval"}),
        option_dangers=OptionDangers(
            long=frozenset({"--eval"}),
            long_why="make --eval adds rules that run commands",
            short="E",
            short_values="CfIoWE",
            short_why="make -E adds rules that run commands",
            spec=OptionSpec(
                short_value="CfIoWE",
                short_optional="jlO",
                long_value=frozenset({"--file", "--makefile", "--directory"}),
            ),
            anywhere=True,
            values=(
                ValueCheck(
                    frozenset({"-f", "--file", "--makefile"}), "stdin", "make -f - reads its rules from its input"
                ),
                ValueCheck(
                    frozenset({"-f", "--file", "--makefile", "-C", "--directory", "-I"}),
                    "outside",
                    "make {option} reads rules from outside the launch folder",
                ),
                ValueCheck(frozenset(), "assignment", "a make variable set on the command line"),
            ),
        ),
        match=(
            "make --ev='x:; true' x",
            "make --eval=x",
            "make --nonsense",
            "make -E 'x:; true' x",
            "make -f -",
            "make -C /tmp",
            "make CC=x",
        ),
        not_match=("make", "make -j4 test", "make --keep-go test"),
    ),
    Table(
        ("git",),
        folder_sensitive=True,
        links=Links(subcommands=_GIT_TREE_WRITERS, linkless=GIT_LINKLESS_SUBCOMMANDS),
        fact_examples=(
            ("git status", "folder-sensitive"),
            ("git checkout main", "folder-sensitive may-link"),
            ("git -C sub switch x", "folder-sensitive may-link"),
            ("git mv a b", "folder-sensitive may-link"),
            ("git co main", "folder-sensitive may-link"),
            ("git -C sub log", "folder-sensitive"),
        ),
        globals=GIT_GLOBALS,
        dangerous=frozenset(
            {
                "--upload-pack",
                "--receive-pack",
                "--exec",
                "--output",
                "--ext-diff",
                "--textconv",
                "--open-files-in-pager",
                "--extcmd",
                "--template",
                "--separate-git-dir",
                "--config",
            }
        ),
        # real options that are also the start of a dangerous one
        long=frozenset({"--text", "--output-indicator-new", "--output-indicator-old", "--output-indicator-context"}),
        writes=_GIT_WRITES,
        runs=Runs("git runs a program", hook="git-runs"),  # -c core.*/alias.*…, rebase -x, difftool -x, bisect run
        option_dangers=OptionDangers(
            spec=GIT_GLOBAL_OPTIONS,
            values=(
                ValueCheck(
                    frozenset({"-c", "--config-env"}),
                    "present",
                    "git -c sets configuration, which can run commands (core.*, alias.*)",
                ),
                ValueCheck(
                    frozenset({"--git-dir", "--work-tree", "--exec-path"}),
                    "present",
                    "git {option} points git at another repository or program",
                    nameable=False,
                ),
                ValueCheck(
                    frozenset({"-C"}),
                    "outside",
                    "git -C outside the launch folder runs with that repository's configuration",
                ),
                ValueCheck(
                    frozenset({"-C"}),
                    "other-repository",
                    "git -C names another repository inside the launch folder (its configuration runs)",
                    nameable=False,
                ),
            ),
            uncertain="git options that cannot be read for sure",
        ),
        subcommands=Subcommands(
            GIT_GLOBAL_OPTIONS,
            every=OptionDangers(
                long=frozenset(
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
                ),
                long_why="git {sub} with this option writes files or runs commands",
            ),
            each={
                "grep": OptionDangers(short="O", short_why="git grep -O runs a pager of its choosing"),
                "difftool": OptionDangers(
                    short="xt",
                    short_why="git difftool runs the command it is given",
                    itself="git difftool can run commands",
                ),
                "mergetool": OptionDangers(
                    short="t",
                    short_why="git mergetool runs the tool it is given",
                    itself="git mergetool can run commands",
                ),
                "rebase": OptionDangers(short="x", short_why="git rebase -x runs a command"),
                "clone": OptionDangers(short="uc", short_why="git clone runs a program or sets configuration"),
                "ls-remote": OptionDangers(short="u", short_why="git ls-remote -u runs a program"),
                "commit": OptionDangers(short="F", short_why="git commit -F reads another file"),
                "tag": OptionDangers(
                    long=frozenset({"--delete", "--force", "--annotate", "--sign"}),
                    long_why="git tag with this option changes or deletes",
                    short="Fdfasu",
                    short_why="git tag with this option reads a file, changes or deletes",
                ),
                "branch": OptionDangers(
                    long=frozenset(
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
                    long_why="git branch with this option changes or deletes",
                    short="dDmMcCfu",
                    short_why="git branch with this option changes or deletes",
                ),
                "remote": OptionDangers(
                    long=frozenset({"--delete"}), long_why="git remote with this option changes or deletes"
                ),
                "filter-branch": OptionDangers(itself="git filter-branch runs the filters it is given"),
                "filter-repo": OptionDangers(itself="git filter-repo runs the callbacks it is given"),
                "submodule": OptionDangers(itself="git submodule can run commands (foreach, update hooks)"),
                "bisect": OptionDangers(itself="git bisect can run commands (bisect run)"),
                "instaweb": OptionDangers(itself="git instaweb starts a web server and a browser of its choosing"),
                "send-email": OptionDangers(
                    long=frozenset({"--smtp-server", "--sendmail-cmd"}),
                    long_why="git send-email runs the mail program it is given",
                ),
            },
            abbreviated=True,
        ),
        match=(
            "git log --output=.env -1",
            "git archive -o .env HEAD",
            "git fetch --upload='touch x;:' .",
            "git log --out=.env -1",
            "git config core.pager cat",
            "git checkout -- .env",
            "git restore .env",
            "git apply x.patch",
            "git worktree add ../w",
            # global options
            "git -c core.pager=x log",
            "git --config-env=core.pager=X log",
            "git --git-dir=elsewhere status",
            "git -C /tmp status",
            "git --bogus status",
            # every subcommand
            "git diff --ext-diff",
            "git log --textconv",
            "git push --receive-pack=x",
            "git rebase --exec x",
            "git grep --open-files-in-pager=x y",
            "git difftool --extcmd=x",
            "git difftool --tool=x",
            "git clone --config core.x=y z",
            "git clone --template=x y",
            "git clone --separate-git-dir=x y",
            "git log --exec-path=x",
            "git diff --no-index a b",
            "git add --pathspec-from-file=list",
            "git commit --file=msg",
            # each subcommand's own
            "git grep -O x",
            "git difftool -x x",
            "git difftool -t x",
            "git mergetool -t x",
            "git mergetool",
            "git rebase -x x",
            "git clone -u x y",
            "git clone -c core.x=y z",
            "git ls-remote -u x y",
            "git commit -F msg",
            "git tag -F msg t",
            "git tag -d t",
            "git tag -f t",
            "git tag -a t",
            "git tag -s t",
            "git tag -u key t",
            "git tag --delete t",
            "git tag --force t",
            "git tag --annotate t",
            "git tag --sign t",
            "git branch -d x",
            "git branch -D x",
            "git branch -m x",
            "git branch -M x",
            "git branch -c x",
            "git branch -C x",
            "git branch -f x",
            "git branch -u x",
            "git branch --delete x",
            "git branch --move x",
            "git branch --copy x",
            "git branch --force x",
            "git branch --set-upstream-to=x",
            "git branch --unset-upstream",
            "git branch --edit-description",
            "git branch --track x",
            "git remote --delete x",
            "git filter-branch --tree-filter x",
            "git filter-repo --force",
            "git submodule foreach x",
            "git bisect run x",
            "git -c core.editor=x commit",
            "git instaweb --browser=x",
            "git send-email --smtp-server=/tmp/x a.patch",
            "git send-email --sendmail-cmd=x a.patch",
            # long options in any unambiguous prefix (git's parse-options)
            "git branch --del x",
            "git branch --mov x y",
            "git tag --dele t",
            "git commit --fil=msg",
            "git config --unset-a x.y",
            # subcommands that write the files they name
            "git mv a b",
            "git bundle create out.bundle HEAD",
            "git clean -fx x",
        ),
        not_match=(
            "git status",
            "git log --oneline -5",
            "git diff --text",
            "git config --get user.name",
            "git branch -a",
            "git tag -l",
            "git -C . status",
            "git --no-pager log",
        ),
    ),
    Table(
        ("tar", "gtar", "bsdtar"),
        links=Links(always=True),
        fact_examples=(("tar xf a.tar", "may-link makes-links"),),
        option_dangers=OptionDangers(
            frozenset(
                {
                    "--to-command",
                    "--checkpoint-action",
                    "--use-compress-program",
                    "--info-script",
                    "--new-volume-script",
                    "--rsh-command",
                    "--rmt-command",
                }
            ),
            "tar runs a program with this option",
            "IF",
            "fbCgKLNTVXH",
            "tar runs a program with this option",
            first_cluster=True,
        ),
        dangerous=frozenset(
            {
                "--to-command",
                "--checkpoint-action",
                "--use-compress-program",
                "--info-script",
                "--new-volume-script",
                "--rsh-command",
                "--rmt-command",
            }
        ),
        long=frozenset(
            {"--to-stdout", "--checkpoint", "--directory", "--file", "--extract", "--get", "--create", "--append"}
        ),
        writes=Written("tar"),
        runs=Runs(
            "tar {option} runs a program",
            spec=OptionSpec(short_value="fCbgKLNTVXHIF", long_flags=None),
            anywhere=True,
            first_cluster=True,
            commands=frozenset(
                {
                    "-I",
                    "-F",
                    "--to-command",
                    "--checkpoint-action",
                    "--use-compress-program",
                    "--info-script",
                    "--new-volume-script",
                    "--rsh-command",
                    "--rmt-command",
                }
            ),
        ),
        match=(
            "tar -xf a.tar",
            "tar xzf a.tgz",
            "tar --to-com=sh -xf a.tar",
            "tar -cf out.tar src",
            "tar --to-command=sh -xf a.tar",
            "tar --checkpoint-action=exec=x -cf a.tar src",
            "tar --use-compress-program=x -tf a.tar",
            "tar --info-script=x -tf a.tar",
            "tar --new-volume-script=x -tf a.tar",
            "tar --rsh-command=x -tf h:a.tar",
            "tar --rmt-command=x -tf h:a.tar",
            "tar -I x -tf a.tar",
            "tar tFf x a.tar",
        ),
        not_match=("tar -tf a.tar", "tar -xOf a.tar f", "tar --to-stdout -xf a.tar"),
    ),
    Table(
        ("rg",),
        option_dangers=OptionDangers(
            frozenset({"--pre", "--hostname-bin", "--search-zip"}),
            "rg runs a program with this option",
            "z",
            "eEfgmAaBCjMrtTd",
            "rg -z runs decompression programs",
        ),
        dangerous=frozenset({"--pre", "--hostname-bin", "--search-zip"}),
        long=frozenset({"--pre-glob"}),
        match=("rg --pre cat x", "rg --search-zip x", "rg --hostname-bin=x y", "rg -z x", "rg -nz x"),
        not_match=("rg -n TODO src", "rg --pre-glob '*.gz' x"),
    ),
    Table(
        ("zip",),
        dangerous=frozenset({"--unzip-command", "--test"}),
        writes=Written("zip-archive"),
        option_dangers=OptionDangers(
            long=frozenset({"--unzip-command"}),
            long_why="zip runs a program",
            prefixes=("-TT",),
            words_why="zip -TT runs a program",
        ),
        match=(
            "zip --unzip-command='sh -c x' -T a.zip f",
            "zip .env data.txt",
            "zip -r a.zip src",
            "zip -TT 'sh -c x' -T",
            "zip --test a.zip",
        ),
        not_match=("zip",),
    ),
    Table(
        ("npm", "pnpm", "yarn"),
        folder_sensitive=True,
        fact_examples=(("npm test", "folder-sensitive"), ("yarn", "folder-sensitive")),
        globals=NPM_GLOBALS,
        runs=Runs(
            "npm {option} runs a package's program",
            spec=NPM_GLOBALS.spec,
            # pnpm dlx, yarn dlx: fetch a package and run its program, like npm exec
            subcommands=frozenset({"exec", "x", "explore", "exe", "dlx"}),
        ),
        dangerous=frozenset({"--script-shell", "--node-options", "--userconfig", "--globalconfig", "--call"}),
        option_dangers=OptionDangers(
            long=frozenset({"--script-shell", "--node-options", "--userconfig", "--globalconfig", "--call"}),
            long_why="npm runs another program or reads a configuration that does",
            values=(
                ValueCheck(frozenset({"--prefix", "-C"}), "outside", "npm {option} points outside the launch folder"),
            ),
        ),
        match=(
            "npm --script-sh=/bin/x run t",
            "npm --script-shell=/bin/x run t",
            "npm --node-options=x test",
            "npm --userconfig x test",
            "npm --globalconfig=x test",
            "npm exec --call x",
            "npm --prefix /tmp test",
            "npm exec cowsay",
            "npm x cowsay",
            "pnpm explore x",
            "npm exe x",
            "pnpm dlx create-vite",
            "yarn dlx cowsay",
        ),
        not_match=("npm test", "npm run build", "npm --prefix sub test"),
    ),
    Table(
        ("rsync",),
        links=Links(always=True),
        fact_examples=(("rsync -a src/ dst/", "may-link makes-links"),),
        option_dangers=OptionDangers(
            frozenset({"--rsh", "--rsync-path", "--write-batch", "--only-write-batch"}),
            "rsync runs a program",
            "e",
            "efBTM",
            "rsync -e runs a program",
        ),
        dangerous=frozenset({"--rsh", "--rsync-path", "--write-batch", "--only-write-batch"}),
        writes=Written("rsync"),
        match=(
            "rsync -a src/ dst/",
            "rsync --rsync-p='x' a b:c",
            "rsync --rsync-path=x a b:c",
            "rsync --rsh=x a b:c",
            "rsync -e x a b:c",
            "rsync --write-batch=x a b:c",
            "rsync --only-write-batch=x a b:c",
        ),
        not_match=("rsync -a src/ host:dst/",),
    ),
    Table(
        ("cp",),
        links=Links(short="s", long=frozenset({"--symbolic-link"})),
        fact_examples=(
            ("cp -s a b", "may-link makes-links"),
            ("cp --sym a b", "may-link makes-links"),
            ("cp a b", "may-link"),
        ),
        long=_COPY_LONG,
        writes=Written("copy"),
        match=("cp a .env", "cp -t out a b", "cp a b c/", "cp --target-d=out a"),
        not_match=("cp --help",),
    ),
    Table(
        ("mv",),
        links=Links(short="s", long=frozenset({"--symbolic-link"})),
        fact_examples=(("mv -fs a b", "may-link makes-links"), ("mv a b", "may-link")),
        long=_COPY_LONG,
        writes=Written("move"),
        match=("mv .env x", "mv a b"),
        not_match=("mv --version",),
    ),
    Table(
        ("install",),
        links=Links(short="s", long=frozenset({"--symbolic-link"})),
        fact_examples=(("install -s a b", "may-link makes-links"), ("install a b", "may-link")),
        long=_COPY_LONG | {"--directory"},
        writes=Written("copy"),
        match=("install -m 644 a .env", "install -d out"),
        not_match=("install --help",),
    ),
    Table(
        ("ln",),
        links=Links(always=True),
        fact_examples=(("ln -s a b", "may-link makes-links"),),
        long=_COPY_LONG,
        writes=Written("ln"),
        match=("ln .env notes.txt", "ln -s ../x link", "ln -s /etc/passwd"),
        not_match=(),
    ),
    Table(
        ("link",),
        writes=Written("nth-operand", _PLAIN, index=1),
        links=Links(always=True),
        fact_examples=(("link a b", "may-link makes-links"),),
        match=("link a b",),
        not_match=("link a",),
    ),
    Table(
        ("tee",),
        long=frozenset({"--append", "--ignore-interrupts", "--output-error", "--help", "--version"}),
        complete=True,
        writes=Written("operands", OptionSpec(short_flags="aip", long_flags=None)),
        match=("tee .maia/settings.local.json", "tee -a log", "tee --app log"),
        not_match=("tee", "tee --help"),
    ),
    Table(
        ("find",),
        writes=Written("find"),
        option_dangers=OptionDangers(
            words=frozenset(
                {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
            ),
            words_why="find with this action runs commands, deletes or writes files",
        ),
        match=(
            "find . -fprint .env",
            "find build -delete",
            "find . -exec ls {} ;",
            "find . -execdir ls {} +",
            "find . -ok ls {} ;",
            "find . -okdir ls {} ;",
            "find . -fprint0 x",
            "find . -fprintf x %p",
            "find . -fls x",
        ),
        not_match=("find . -name x", "find src -type f -print"),
    ),
    Table(("dd",), writes=Written("dd"), match=("dd if=a of=.env",), not_match=("dd if=a",)),
    Table(
        ("sed", "gsed"),
        writes=Written("sed"),
        option_dangers=OptionDangers(
            spec=_SED_DANGER_SPEC,
            anywhere=True,
            values=(
                ValueCheck(frozenset({"-i", "--in-place"}), "present", "sed -i rewrites files", token="-i"),
                ValueCheck(
                    frozenset({"-f", "--file"}),
                    "present",
                    "sed -f runs a script file that can write files or run commands",
                ),
            ),
            hook="sed-script",  # the script read as sed reads it: the e, w and W commands and flags
        ),
        long=frozenset(
            [
                "--quiet",
                "--silent",
                "--debug",
                "--expression",
                "--file",
                "--follow-symlinks",
                "--in-place",
                "--line-length",
                "--null-data",
                "--zero-terminated",
                "--posix",
                "--regexp-extended",
                "--separate",
                "--sandbox",
                "--unbuffered",
                "--help",
                "--version",
            ]
        ),
        complete=True,
        match=(
            "sed -i s/a/b/ .env",
            "sed --in-pl s/a/b/ f",
            "sed -n -e p -i f",
            "sed 'w .env' f",
            "sed -e 's/a/b/w .env' f",
            "sed -f script.sed f",
            "sed e f",
            "sed 's/a/b/e' f",
            "sed 'W x' f",
        ),
        not_match=("sed s/a/b/ f", "sed -n p f", "sed --quiet p f", "sed '1d;$d' f", "sed 'y/ab/cd/' f"),
    ),
    Table(
        ("uniq",),
        long=frozenset(
            [
                "--count",
                "--repeated",
                "--all-repeated",
                "--skip-fields",
                "--group",
                "--ignore-case",
                "--skip-chars",
                "--unique",
                "--zero-terminated",
                "--check-chars",
                "--help",
                "--version",
            ]
        ),
        complete=True,
        writes=Written(
            "nth-operand",
            OptionSpec(short_value="fsw", long_value=frozenset({"--skip-fields", "--skip-chars", "--check-chars"})),
            index=1,
        ),
        match=("uniq data.txt .env", "uniq -c a b", "uniq --skip-fields 1 a .env", "uniq --check-c 2 a .env"),
        not_match=("uniq data.txt", "uniq -c -"),
    ),
    Table(
        ("shuf",),
        long=frozenset(
            [
                "--echo",
                "--input-range",
                "--head-count",
                "--random-source",
                "--repeat",
                "--zero-terminated",
                "--help",
                "--version",
            ]
        ),
        complete=True,
        dangerous=frozenset({"--output"}),
        writes=Written(
            "option-values",
            # (-e is a flag: the operands are the lines to shuffle)
            OptionSpec(
                short_value="ino",
                long_value=frozenset({"--output", "--head-count", "--input-range", "--random-source"}),
            ),
            ("-o", "--output"),
        ),
        match=("shuf -o .env a", "shuf --out=x a", "shuf --output=x a", "shuf -e -o .env a", "shuf -eo .env a"),
        not_match=("shuf -n1 a",),
    ),
    Table(
        ("xxd",),
        writes=Written(
            "nth-operand", OptionSpec(short_value="cglosn", single_dash_long=frozenset({"-cols", "-len"})), index=1
        ),
        match=("xxd -r a .env",),
        not_match=("xxd a",),
    ),
    Table(
        ("iconv",),
        long=frozenset(
            ["--from-code", "--to-code", "--list", "--silent", "--verbose", "--help", "--usage", "--version"]
        ),
        complete=True,
        dangerous=frozenset({"--output"}),
        writes=Written(
            "option-values",
            OptionSpec(short_value="fto", long_value=frozenset({"--output", "--from-code", "--to-code"})),
            ("-o", "--output"),
        ),
        match=("iconv -f utf8 -t ascii -o .env a", "iconv --outp=x a", "iconv --output=x a"),
        not_match=("iconv -f utf8 -t ascii a", "iconv -l"),
    ),
    Table(
        ("split",),
        writes=Written("split", OptionSpec(short_value="abClnt", long_value=frozenset()), ("--prefix",), default="x"),
        match=("split -b1 data .env",),
        not_match=(),
    ),
    Table(
        ("csplit",),
        writes=Written(
            "split", OptionSpec(short_value="bfn", long_value=frozenset({"--prefix"})), ("-f", "--prefix"), default="xx"
        ),
        match=("csplit -f .e data 1",),
        not_match=(),
    ),
    Table(
        ("unzip",),
        writes=Written("unzip"),
        links=Links(always=True),
        fact_examples=(("unzip a.zip", "may-link makes-links"),),
        match=("unzip a.zip", "unzip a.zip -d out"),
        not_match=("unzip -l a.zip",),
    ),
    Table(
        ("sponge",),
        writes=Written("nth-operand", OptionSpec(short_flags="a"), index=0),
        match=("sponge .env",),
        not_match=("sponge",),
    ),
    Table(
        ("cpio", "ar", "7z", "7za", "7zr", "unrar", "jar"),
        links=Links(always=True),
        fact_examples=(("7z x a.7z", "may-link makes-links"),),
        writes=Written("unpack"),
        match=("cpio -id", "ar x lib.a", "7z x a.7z", "unrar x a.rar", "jar xf a.jar"),
        not_match=("ar t lib.a", "7z l a.7z"),
    ),
    Table(
        ("openssl",),
        writes=Written("openssl"),
        option_dangers=OptionDangers(
            words=frozenset({"-engine", "-provider", "-provider-path"}),
            words_why="openssl loads a library of code with this option",
        ),
        match=(
            "openssl enc -in a -out .env",
            "openssl genrsa -out key.pem",
            "openssl enc -engine x -in a",
            "openssl dgst -provider x a",
            "openssl dgst -provider-path . -provider x a",
        ),
        not_match=("openssl version", "openssl x509 -in cert.pem -noout -text"),
    ),
    Table(
        ("yq",),
        writes=Written("yq"),
        match=("yq -i '.a = 1' .env", "yq e -i '.a = 1' f.yaml", "yq --inplace '.a' f.yaml"),
        not_match=("yq '.a' f.yaml", "yq e '.a' f.yaml"),
    ),
    Table(
        ("less", "more", "most"),
        dangerous=frozenset({"--log-file", "--LOG-FILE", "--lesskey-file", "--lesskey-src", "--lesskey-content"}),
        option_dangers=OptionDangers(
            long=frozenset({"--log-file", "--LOG-FILE", "--lesskey-file", "--lesskey-src", "--lesskey-content"}),
            long_why="less writes a file or reads key bindings that run commands",
            short="oOk",
            short_values="oOkbhjpPtTxyz#",
            short_why="less writes a file or reads key bindings",
            prefixes=("+",),
            words_why="a + command runs pager commands (! runs a shell)",
        ),
        writes=Written(
            "option-values",
            OptionSpec(
                short_value="oOkbhjpPtTxyz#",
                long_value=frozenset({"--log-file", "--LOG-FILE", "--lesskey-file", "--lesskey-src"}),
            ),
            ("-o", "-O", "--log-file", "--LOG-FILE"),
        ),
        match=(
            "less --log=x f",
            "less --lesskey-s=k f",
            "less --log-file=x f",
            "less --LOG-FILE=x f",
            "less --lesskey-file=x f",
            "less --lesskey-content=x f",
            "less --lesskey-src=x f",
            "less +!x f",
            "less -o x f",
            "less -RO x f",
            "more -k x f",
        ),
        not_match=("less -R f", "more f", "most f", "less -p o f"),
    ),
    Table(
        ("vim", "vi", "nvim", "view", "vimdiff", "gvim"),
        option_dangers=OptionDangers(
            long=frozenset({"--cmd", "--startuptime"}),
            long_why="vim runs commands or writes a file",
            short="cSsuUwWeE",
            short_values="cSsuUwWTirtq",
            short_why="vim runs commands or writes files with this option",
            prefixes=("+",),
            words_why="a + command runs editor commands (! runs a shell)",
        ),
        match=(
            "vim +!x f",
            "vim --cmd x f",
            "nvim --startuptime x f",
            "vi -c x f",
            "vim -S x f",
            "vim -s x f",
            "vim -u x f",
            "vim -U x f",
            "vim -w x f",
            "vim -W x f",
            "vim -e f",
            "view -E f",
        ),
        not_match=("vim f", "view f", "vimdiff a b", "gvim -R f", "vim -t tag"),
    ),
    Table(
        ("awk", "gawk", "mawk", "nawk"),
        option_dangers=OptionDangers(
            spec=OptionSpec(short_value="fvFeilE", long_value=frozenset({"--file", "--source"})),
            values=(
                ValueCheck(
                    frozenset({"-f", "--file", "-E", "-i", "--include", "-l", "--load"}),
                    "present",
                    "awk runs a program file or loads an extension",
                ),
            ),
            hook="awk-program",  # its program text: system(), pipes, getline, @load…
        ),
        # every awk is opaque as well (programs.inner_commands): no awk command is ever proved harmless
        match=("awk -f x f", "awk 'BEGIN{system(\"x\")}'", "gawk '{print}' f"),
        not_match=(),
    ),
    Table(
        ("go",),
        folder_sensitive=True,
        fact_examples=(("go test ./...", "folder-sensitive"),),
        option_dangers=OptionDangers(
            long=frozenset({"-exec", "-toolexec", "-overlay"}),
            long_why="go runs a program with this option",
            single_dash=True,
            values=(
                ValueCheck(frozenset({"-C", "-modfile"}), "outside", "go {option} points outside the launch folder"),
            ),
        ),
        match=(
            "go test -exec x",
            "go test --exec=x",
            "go build -toolexec=x",
            "go build -overlay x",
            "go -C /tmp build",
            "go build -modfile=/tmp/go.mod",
        ),
        not_match=("go test ./...", "go vet", "go -C . build"),
    ),
    Table(
        ("cargo",),
        folder_sensitive=True,
        fact_examples=(("cargo build", "folder-sensitive"),),
        globals=CARGO_GLOBALS,
        option_dangers=OptionDangers(
            long=frozenset({"--config"}),
            long_why="cargo --config can set a program to run",
            values=(
                ValueCheck(
                    frozenset({"--manifest-path", "-C"}), "outside", "cargo {option} points outside the launch folder"
                ),
            ),
        ),
        match=("cargo --config x build", "cargo --manifest-path /tmp/x build"),
        not_match=("cargo build", "cargo test --release"),
    ),
    Table(
        ("npx",),
        folder_sensitive=True,
        fact_examples=(("npx eslint .", "folder-sensitive"),),
        runs=Runs("npx -c runs a command line", shell=frozenset({"-c", "--call"})),
        match=("npx -c 'eslint .'", "npx --call=x"),
        not_match=("npx eslint .",),
    ),
    Table(
        ("cmake",),
        runs=Runs("cmake {option} runs a command", subcommands=frozenset({"-E env", "-E time", "-E chdir"})),
        match=("cmake -E env X=1 make", "cmake -E time make", "cmake -E chdir build make"),
        not_match=("cmake -S . -B build", "cmake -E echo x"),
    ),
    Table(
        ("gcc", "cc", "g++", "c++", "clang", "clang++", "cpp", "gfortran"),
        runs=Runs(
            "{option} makes the compiler run other programs",
            commands=frozenset({"-wrapper"}),
            prefixes=("-fplugin", "-B", "--plugin", "-specs", "--specs"),
        ),
        match=(
            "gcc -wrapper gdb,--args a.c",
            "gcc -fplugin=x.so a.c",
            "cc -B/tmp a.c",
            "clang --plugin x a.c",
            "gcc -specs=x a.c",
            "gcc --specs=x a.c",
        ),
        not_match=("gcc -O2 -o a a.c", "cc -c a.c"),
    ),
    Table(
        ("terraform",),
        folder_sensitive=True,
        fact_examples=(("terraform plan", "folder-sensitive"),),
        globals=TERRAFORM_GLOBALS,
        option_dangers=OptionDangers(
            values=(ValueCheck(frozenset({"-chdir"}), "outside", "terraform -chdir outside the launch folder"),),
        ),
        match=("terraform -chdir=/tmp plan",),
        not_match=("terraform plan", "terraform -chdir=. plan"),
    ),
    Table(
        ("patch",),
        links=Links(always=True),
        fact_examples=(("patch -p1", "may-link makes-links"),),
        long=frozenset({"--output", "--directory", "--input", "--dry-run"}),
        writes=Written("patch"),
        match=("patch -p1", "patch f.txt", "patch -o out a"),
        not_match=("patch -o - a",),
    ),
    Table(
        ("rm", "unlink", "shred", "rmdir", "mkfifo", "mknod"),
        writes=Written("operands", OptionSpec(short_value="nsm", long_flags=None)),
        match=("rm .env", "rmdir build", "shred -u .env"),
        not_match=("rm --help",),
    ),
    Table(
        ("touch",),
        writes=Written("operands", OptionSpec(short_value="drt", long_value=frozenset({"--reference", "--date"}))),
        match=("touch .env", "touch -d now x"),
        not_match=("touch -r a",),
    ),
    Table(
        ("mkdir",),
        writes=Written("operands", OptionSpec(short_value="mZ", long_value=frozenset({"--mode", "--context"}))),
        match=("mkdir -p .git/hooks",),
        not_match=("mkdir --help",),
    ),
    Table(
        ("truncate",),
        writes=Written("operands", OptionSpec(short_value="rs", long_value=frozenset({"--reference", "--size"}))),
        match=("truncate -s0 .env",),
        not_match=(),
    ),
    Table(
        ("chmod", "chown", "chgrp"),
        writes=Written("operands", OptionSpec(long_value=frozenset({"--reference", "--from"})), index=1),
        match=("chmod +x .git/hooks/pre-commit", "chmod 600 .env"),
        not_match=("chmod 600",),
    ),
    Table(
        ("gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lzma", "unlzma", "compress"),
        writes=Written("gzip-like"),
        match=("gzip .env", "gunzip a.gz", "gzip -df .env.gz"),
        not_match=("gzip -c a", "gunzip -l a.gz", "zstd -c a"),
    ),
    Table(
        ("curl",),
        # curl reads an unambiguous prefix of a long option as that option (--outp is --output)
        long=_CURL_FILES | {"--output-dir", "--create-dirs", "--remote-name", "--remote-name-all", "--config"},
        writes=Written("curl"),
        match=(
            "curl -o .env https://x",
            "curl -O https://x/y",
            "curl --cookie-j .env https://x",
            "curl --cookie-jar .env https://x",
            "curl --stderr .env https://x",
            "curl --libcurl .env https://x",
            "curl --etag-save .env https://x",
            "curl --hsts .env https://x",
            "curl --alt-svc .env https://x",
        ),
        not_match=("curl -s https://x",),
    ),
    Table(
        ("man",),
        option_dangers=OptionDangers(
            frozenset({"--pager", "--html", "--config-file"}),
            "man runs the pager or browser it is given, or reads a configuration",
            "PHC",
            "CLmMSePrEpTX",
            "man runs the pager or browser it is given, or reads a configuration",
        ),
        long=frozenset({"--pager", "--html", "--config-file", "--prompt", "--preprocessor", "--path"}),
        match=(
            "man -P 'rm -rf x' ls",
            "man --pager=x ls",
            "man -Hfirefox ls",
            "man --html ls",
            "man -C x ls",
            "man --config-file=x ls",
        ),
        not_match=("man ls", "man 5 crontab", "man -k printf"),
    ),
    Table(
        ("scp", "sftp"),
        runs=Runs(
            "{option} runs a local program",
            spec=OptionSpec(short_value="cFiJlmoPSXDBbR"),
            anywhere=True,
            commands=frozenset({"-S", "-D"}),
            hook="ssh-options",  # -F and -o ProxyCommand… as ssh reads them
        ),
        writes=Written("scp"),
        match=(
            "scp -S x a h:b",
            "sftp -D /bin/x h",
            "scp -F cfg a h:b",
            "scp -o ProxyCommand=x a h:b",
            "scp h:secret .env",
        ),
        not_match=("scp a h:b", "scp -P 2222 a h:b", "scp -o StrictHostKeyChecking=no a h:b"),
    ),
    Table(
        ("pandoc",),
        long=frozenset({"--output", "--from", "--to", "--standalone", "--template", "--metadata"}),
        dangerous=frozenset({"--filter", "--lua-filter", "--defaults"}),
        runs=Runs(
            "pandoc {option} runs a program or Lua code",
            spec=OptionSpec(
                short_value="FLdofrtMVcHBAT",
                long_value=frozenset({"--filter", "--lua-filter", "--defaults", "--output", "--from", "--to"}),
            ),
            anywhere=True,
            commands=frozenset({"-F", "-L", "-d", "--filter", "--lua-filter", "--defaults"}),
        ),
        writes=Written(
            "option-values",
            OptionSpec(short_value="FLdofrtMVcHBAT", long_value=frozenset({"--output", "--from", "--to"})),
            ("-o", "--output"),
        ),
        match=(
            "pandoc -F x a.md",
            "pandoc --filter=x a.md",
            "pandoc --fil x a.md",
            "pandoc -L x.lua a.md",
            "pandoc --lua-filter=x.lua a.md",
            "pandoc -d x.yaml",
            "pandoc --defaults x.yaml",
            "pandoc -o .env a.md",
        ),
        not_match=("pandoc a.md", "pandoc -f markdown -t html a.md"),
    ),
    Table(
        ("wget",),
        long=frozenset({"--output-document", "--output-file", "--append-output", "--directory-prefix"}),
        dangerous=frozenset({"--execute", "--use-askpass", "--post-file", "--body-file"}),
        writes=Written("wget"),
        match=(
            "wget https://x/y",
            "wget -O .env https://x",
            "wget --execute=x -O - https://x",
            "wget --use-askpass=x -O - https://x",
            "wget --post-file=x -O - https://x",
            "wget --body-file=x -O - https://x",
        ),
        not_match=("wget -O - https://x",),
    ),
    Table(
        ("time",),
        option_dangers=OptionDangers(
            frozenset({"--output"}), "time -o writes a file", "o", "fo", "time -o writes a file", first_only=True
        ),
        writes=Written(
            "option-values",
            OptionSpec(short_value="fo", long_value=frozenset({"--output", "--format"})),
            ("-o", "--output"),
        ),
        match=("time -o .env ls", "time --output=x ls"),
        not_match=("time ls",),
    ),
    Table(
        ("docker", "podman"),
        globals=DOCKER_GLOBALS,
        option_dangers=OptionDangers(frozenset({"--config"}), "docker --config runs credential helpers"),
        match=("docker --config /tmp/x ps",),
        not_match=("docker ps -a",),
    ),
    Table(
        ("kubectl",),
        globals=KUBECTL_GLOBALS,
        option_dangers=_KUBE_DANGERS,
        match=(
            "kubectl --kubeconfig x get pods",
            "kubectl --log-file=x get pods",
            "kubectl --profile-output=x get pods",
        ),
        not_match=("kubectl get pods",),
    ),
    Table(
        ("helm",),
        globals=HELM_GLOBALS,
        option_dangers=_KUBE_DANGERS,
        match=("helm --kubeconfig x list", "helm list --log-file=x", "helm list --profile-output=x"),
        not_match=("helm list",),
    ),
    Table(("aws",), globals=AWS_GLOBALS),
    Table(
        ("strace",),
        option_dangers=OptionDangers(
            frozenset({"--output", "--env"}),
            "strace writes a file or sets the environment",
            "oE",
            "abeEIoOpPsSuUX",
            "strace writes a file or sets the environment",
        ),
        writes=Written(
            "option-values",
            OptionSpec(
                short_value="abeEIoOpPsSuUX",
                long_value=frozenset({"--output", "--env", "--user", "--attach", "--trace", "--signal"}),
            ),
            ("-o", "--output"),
        ),
        match=("strace -o log ls", "strace -fE X=1 ls", "strace --env=X=1 ls", "strace --output=x ls"),
        not_match=("strace -p 12",),
    ),
    Table(
        ("tcpdump",),
        writes=Written("option-values", OptionSpec(short_value="wrCcEFGiMsTVWyzZBjm", long_flags=None), ("-w",)),
        match=("tcpdump -w .env", "tcpdump -i lo -w cap.pcap"),
        not_match=("tcpdump -r cap.pcap",),
    ),
    Table(
        ("gpg", "gpg2"),
        long=frozenset({"--output", "--decrypt", "--encrypt", "--sign", "--armor", "--recipient"}),
        writes=Written(
            "option-values",
            OptionSpec(short_value="orulf", long_value=frozenset({"--output", "--recipient", "--local-user"})),
            ("-o", "--output"),
        ),
        match=("gpg -o .env -d secret.gpg", "gpg --output=.env -d x", "gpg --outp .env -d x"),
        not_match=("gpg -d secret.gpg", "gpg --list-keys"),
    ),
    Table(
        ("ssh-keygen",),
        writes=Written("ssh-keygen"),
        match=("ssh-keygen -t ed25519 -f .env", "ssh-keygen -f key -N ''"),
        not_match=("ssh-keygen -l -f key.pub", "ssh-keygen -y -f key"),
    ),
)


# interpreters: how their options are read, and the options that give them code to run (opaque)
_NODE = Interpreter(
    OptionSpec(short_value="epr", long_value=frozenset({"--eval", "--print", "--require", "--import"})),
    frozenset({"-e", "-p", "--eval", "--print"}),
    versioned=("node",),
)
_EVALUATES = Builtin("{name} evaluates its arguments or changes how later commands run")
_INTERPRETER_TABLES: tuple[Table, ...] = (
    Table(
        ("python", "python2", "python3", "pypy", "pypy3"),
        interpreter=Interpreter(
            OptionSpec(short_value="cmWXQ", short_flags="bBdEhiIOPqRsSuvVx", stop=frozenset({"-c", "-m"})),
            frozenset({"-c"}),
            module=frozenset({"-m"}),
            versioned=("python", "pypy"),
        ),
        match=("python -c 'print(1)'", "python3 -", "pypy3", "python3.12 -c 1", "pypy3.10"),
        not_match=("python script.py", "python3 -m pytest", "python3.12 -m pytest"),
    ),
    Table(
        ("perl", "perl5"),
        interpreter=Interpreter(
            OptionSpec(short_value="eEI", short_optional="0lixCdDFMmVWXt", short_flags="acnpsTuUvwhS"),
            frozenset({"-e", "-E", "-M", "-m", "-d"}),
            versioned=("perl",),
        ),
        match=("perl -e 'print 1'", "perl -E 'say 1'", "perl -Mstrict x.pl", "perl -mx x.pl", "perl -d x.pl"),
        not_match=("perl script.pl",),
    ),
    Table(
        ("ruby",),
        interpreter=Interpreter(
            OptionSpec(short_value="eIrCEF", short_optional="i0xWTKl"), frozenset({"-e"}), versioned=("ruby",)
        ),
        match=("ruby -e 'p 1'",),
        not_match=("ruby script.rb",),
    ),
    Table(
        ("node", "nodejs"),
        interpreter=_NODE,
        match=("node -e 1", "node -p 1", "nodejs --eval 1"),
        not_match=("node app.js",),
    ),
    Table(
        ("bun",),
        interpreter=_NODE,
        folder_sensitive=True,  # bun run, bun test: the project's scripts and configuration
        fact_examples=(("bun test", "folder-sensitive"),),
        match=("bun --print 1", "bun -e 1"),
        not_match=("bun app.js",),
    ),
    Table(
        ("php",),
        interpreter=Interpreter(
            OptionSpec(short_value="rBREFdcnz"), frozenset({"-r", "-B", "-R", "-E", "-F", "-d"}), versioned=("php",)
        ),
        match=("php -r 'echo 1;'", "php -B x -R y", "php -E x", "php -F x", "php -d x=1 a.php"),
        not_match=("php index.php",),
    ),
    Table(
        ("lua", "luajit"),
        interpreter=Interpreter(OptionSpec(short_value="el"), frozenset({"-e"}), versioned=("lua",)),
        match=("lua -e 'print(1)'", "luajit -e x"),
        not_match=("lua script.lua",),
    ),
    Table(
        ("Rscript",),
        interpreter=Interpreter(OptionSpec(short_value="e"), frozenset({"-e"})),
        match=("Rscript -e 1",),
        not_match=("Rscript a.R",),
    ),
    Table(
        ("R",),
        interpreter=Interpreter(OptionSpec(short_value="e"), frozenset({"-e"})),
        match=("R -e 1",),
        not_match=("R a.R",),
    ),
    Table(
        ("osascript",),
        interpreter=Interpreter(OptionSpec(short_value="el"), frozenset({"-e"})),
        match=("osascript -e x",),
        not_match=("osascript a.scpt",),
    ),
    Table(
        ("julia",),
        interpreter=Interpreter(OptionSpec(short_value="eEL"), frozenset({"-e", "-E", "-L"})),
        match=("julia -e 1", "julia -E 1", "julia -L x a.jl"),
        not_match=("julia a.jl",),
    ),
    Table(
        ("elixir",),
        interpreter=Interpreter(OptionSpec(short_value="er"), frozenset({"-e"})),
        match=("elixir -e 1",),
        not_match=("elixir a.exs",),
    ),
    Table(
        ("guile",),
        interpreter=Interpreter(OptionSpec(short_value="cel"), frozenset({"-c", "-e"})),
        match=("guile -c 1", "guile -e main a.scm"),
        not_match=("guile a.scm",),
    ),
    Table(
        ("psql",),  # always opaque: SQL can run shell commands (\!)
        interpreter=Interpreter(
            OptionSpec(short_value="cfdhpUvL", long_value=frozenset({"--command", "--file"})),
            frozenset(),
            opaque="psql runs SQL that can run shell commands (\\!)",
        ),
        match=("psql db", "psql -c 'select 1'"),
    ),
    Table(
        ("mysql",),
        interpreter=Interpreter(
            OptionSpec(short_value="eDhPuS", long_value=frozenset({"--execute"})), frozenset({"-e", "--execute"})
        ),
        match=("mysql -e 'select 1'", "mysql --execute 'select 1'"),
        not_match=("mysql db a",),
    ),
)


# programs that always run something nobody can see: opaque, whatever their arguments (their
# operands are still read as commands, for deny rules)
_OPAQUE_TABLES: tuple[Table, ...] = (
    Table(("gdb",), opaque="gdb runs commands of its own (-ex, shell)", match=("gdb x",)),
    Table(("lldb",), opaque="lldb runs commands of its own", match=("lldb x",)),
    Table(("parallel",), opaque="parallel builds the commands it runs", match=("parallel x",)),
    Table(("tmux",), opaque="tmux runs commands in its sessions", match=("tmux x",)),
    Table(("screen",), opaque="screen runs commands in its sessions", match=("screen x",)),
    Table(("byobu",), opaque="byobu runs commands in its sessions", match=("byobu x",)),
    Table(("nsenter",), opaque="nsenter runs a command inside other namespaces", match=("nsenter x",)),
    Table(("systemd-run",), opaque="systemd-run runs a command as a service", match=("systemd-run x",)),
    Table(
        ("source",),
        opaque="source runs a file's commands in this shell",
        builtin=_EVALUATES,
        fact_examples=(("source ./env.sh", "not-plain"),),
        match=("source ./env.sh",),
    ),
    Table(
        (".",),
        opaque=". runs a file's commands in this shell",
        builtin=_EVALUATES,
        fact_examples=((". ./env.sh", "not-plain"),),
        match=(". ./env.sh",),
    ),
    Table(("at",), opaque="at runs commands read from its input later", match=("at x",)),
    Table(("batch",), opaque="batch runs commands read from its input later", match=("batch x",)),
    Table(("crontab",), opaque="crontab installs commands to run later", match=("crontab x",)),
    Table(("sqlite3",), opaque="sqlite3 can run shell commands (.shell, .system)", match=("sqlite3 x",)),
    Table(("ex",), opaque="ex runs editor commands read from its input", match=("ex x",)),
    Table(("perf",), opaque="perf runs the command it measures, with its own options", match=("perf x",)),
    Table(("ssh-agent",), opaque="ssh-agent runs a command with an agent of its own", match=("ssh-agent x",)),
    Table(("valgrind",), opaque="valgrind runs a program under tools of its choosing", match=("valgrind x",)),
    Table(("run-parts",), opaque="run-parts runs every program of a folder", match=("run-parts x",)),
    Table(("hyperfine",), opaque="hyperfine runs its arguments as shell commands", match=("hyperfine x",)),
    Table(("rlwrap",), opaque="rlwrap runs a command with its own options", match=("rlwrap x",)),
    Table(("sshpass",), opaque="sshpass runs a command", match=("sshpass x",)),
    Table(("firejail",), opaque="firejail runs a command in a sandbox of its own", match=("firejail x",)),
    Table(("bwrap",), opaque="bwrap runs a command in another file system view", match=("bwrap x",)),
    Table(("systemd-nspawn",), opaque="systemd-nspawn runs a command in a container", match=("systemd-nspawn x",)),
    Table(("flatpak-spawn",), opaque="flatpak-spawn runs a command outside the sandbox", match=("flatpak-spawn x",)),
    Table(("numactl",), opaque="numactl runs a command", match=("numactl x",)),
    Table(("cgexec",), opaque="cgexec runs a command", match=("cgexec x",)),
    Table(("proxychains",), opaque="proxychains runs a command through a proxy", match=("proxychains x",)),
    Table(("proxychains4",), opaque="proxychains runs a command through a proxy", match=("proxychains4 x",)),
    Table(("torsocks",), opaque="torsocks runs a command", match=("torsocks x",)),
    Table(("faketime",), opaque="faketime runs a command with a false clock", match=("faketime x",)),
    Table(("eatmydata",), opaque="eatmydata runs a command with libraries preloaded", match=("eatmydata x",)),
    Table(("catchsegv",), opaque="catchsegv runs a command", match=("catchsegv x",)),
    Table(("xvfb-run",), opaque="xvfb-run runs a command", match=("xvfb-run x",)),
    Table(("dbus-launch",), opaque="dbus-launch runs a command", match=("dbus-launch x",)),
    Table(("entr",), opaque="entr runs a command when files change", match=("entr x",)),
    Table(("cpulimit",), opaque="cpulimit runs a command", match=("cpulimit x",)),
    Table(("chpst",), opaque="chpst runs a command", match=("chpst x",)),
    Table(("daemonize",), opaque="daemonize runs a command in the background", match=("daemonize x",)),
    Table(("start-stop-daemon",), opaque="start-stop-daemon runs a program", match=("start-stop-daemon x",)),
    Table(("mpirun",), opaque="mpirun runs a program", match=("mpirun x",)),
    Table(("mpiexec",), opaque="mpiexec runs a program", match=("mpiexec x",)),
    Table(("uftrace",), opaque="uftrace runs a program", match=("uftrace x",)),
    Table(("ltrace",), opaque="ltrace runs a program with its own options", match=("ltrace x",)),
    Table(("rr",), opaque="rr runs and records a program", match=("rr x",)),
    Table(("expect",), opaque="expect runs scripts that can run commands", match=("expect x",)),
    Table(("tclsh",), opaque="tclsh runs Tcl code that can run commands", match=("tclsh x",)),
    Table(("wish",), opaque="wish runs Tcl code that can run commands", match=("wish x",)),
    Table(("ed",), opaque="ed runs editor commands (! runs a shell)", match=("ed x",)),
    Table(("emacs",), opaque="emacs runs Lisp (--eval, -l) that can run commands", match=("emacs x",)),
    Table(("sudoedit",), opaque="sudoedit edits files as another user", match=("sudoedit x",)),
)

# what the engine must know of programs besides their options: the shells, the dynamic loader (a
# program by many names), what changes the folder, runs a project's code, or puts links in place,
# the builtins that evaluate their arguments
_FACT_TABLES: tuple[Table, ...] = (
    Table(
        (
            *("let", "declare", "typeset", "local", "export", "readonly", "unset", "read", "mapfile"),
            *("readarray", "getopts", "trap", "alias", "unalias", "enable", "hash", "shopt", "fc", "history"),
            *("bind", "complete", "compgen", "compopt", "caller", "coproc", "function", "select"),
        ),
        builtin=_EVALUATES,
        fact_examples=(("read -r line", "not-plain"), ("export X=1", "not-plain"), ("alias ll='ls -l'", "not-plain")),
    ),
    Table(("eval",), builtin=_EVALUATES, fact_examples=(("eval ls", "not-plain"),)),
    Table(
        ("printf",),
        builtin=Builtin("printf -v assigns a variable (array subscripts are evaluated)", first="-v"),
        fact_examples=(("printf -v x %s y", "not-plain"), ("printf '%s\\n' x", "")),
    ),
    Table(
        ("test", "["),
        builtin=Builtin("test -v evaluates array subscripts", words=frozenset({"-v", "-R"})),
        fact_examples=(("test -v 'a[0]'", "not-plain"), ("[ -R x ]", "not-plain"), ("[ -f x ]", "")),
    ),
    Table(
        ("set",),
        builtin=Builtin(
            "set with these arguments changes how later commands run",
            safe=r"[-+][euxvoEhTB]+|pipefail|errexit|nounset|xtrace|verbose|errtrace|noclobber",
        ),
        fact_examples=(("set -eu", ""), ("set -o pipefail", ""), ("set -- a b", "not-plain")),
    ),
    Table(
        ("wait",),
        builtin=Builtin("wait -p assigns a variable", words=frozenset({"-p"})),
        fact_examples=(("wait -p id", "not-plain"), ("wait", "")),
    ),
    Table(
        ("sh", "bash", "dash", "ash", "ksh", "mksh", "posh", "yash", "rbash"),
        shell="exact",
        runs_examples=(("bash -c 'ls -l'", "ls -l"), ("sh", "opaque"), ("dash -s x", "opaque"), ("bash b.sh", None)),
    ),
    Table(
        ("zsh", "fish", "csh", "tcsh", "ksh93", "pwsh", "xonsh", "elvish", "nu"),
        shell="other",
        runs_examples=(("zsh -c 'ls -l'", "ls -l"), ("fish", "opaque"), ("zsh b.zsh", None)),
    ),
    Table(
        ("ld.so",),
        # ld-linux-x86-64.so.2, ld-musl-x86_64.so.1, ld64.so.2…: it runs a program with libraries of its choosing
        pattern=r"ld(-linux[\w.-]*|-musl[\w.-]*|64)?\.so(\.[0-9]+)*|ld-[\w.-]*\.so[\w.]*",
        reader="loader",
        runs_examples=(
            ("ld-linux-x86-64.so.2 /bin/rm -rf build", "opaque"),
            ("ld.so --library-path /tmp /bin/ls", "opaque"),
            ("ld-musl-x86_64.so.1", "opaque"),
        ),
    ),
    Table(
        ("cd", "pushd", "popd"),
        changes_folder=True,
        fact_examples=(("cd src", "changes-folder"), ("pushd /tmp", "changes-folder"), ("popd", "changes-folder")),
    ),
    Table(("pytest",), folder_sensitive=True, fact_examples=(("pytest -x", "folder-sensitive"),)),
    Table(("tox",), folder_sensitive=True, fact_examples=(("tox -e py", "folder-sensitive"),)),
    Table(("nox",), folder_sensitive=True, fact_examples=(("nox -s lint", "folder-sensitive"),)),
    Table(("just",), folder_sensitive=True, fact_examples=(("just build", "folder-sensitive"),)),
    Table(("rake",), folder_sensitive=True, fact_examples=(("rake test", "folder-sensitive"),)),
    Table(("mix",), folder_sensitive=True, fact_examples=(("mix test", "folder-sensitive"),)),
    Table(("mvn",), folder_sensitive=True, fact_examples=(("mvn package", "folder-sensitive"),)),
    Table(("gradle", "gradlew"), folder_sensitive=True, fact_examples=(("gradlew build", "folder-sensitive"),)),
    Table(("direnv",), folder_sensitive=True, fact_examples=(("direnv allow", "folder-sensitive"),)),
    Table(("bundle",), folder_sensitive=True, fact_examples=(("bundle exec rake", "folder-sensitive"),)),
    Table(("composer",), folder_sensitive=True, fact_examples=(("composer install", "folder-sensitive"),)),
    Table(("dotnet",), folder_sensitive=True, fact_examples=(("dotnet build", "folder-sensitive"),)),
    Table(("pip", "pip3"), folder_sensitive=True, fact_examples=(("pip install -e .", "folder-sensitive"),)),
    Table(("poetry",), folder_sensitive=True, fact_examples=(("poetry install", "folder-sensitive"),)),
    Table(("uv",), folder_sensitive=True, fact_examples=(("uv sync", "folder-sensitive"),)),
    # they check out or unpack files that may be links
    Table(("svn",), links=Links(), fact_examples=(("svn update", "may-link"),)),
    Table(("hg",), links=Links(), fact_examples=(("hg update", "may-link"),)),
    Table(("busybox",), links=Links(), fact_examples=(("busybox tar xf a.tar", "may-link"),)),
)


# programs that run another command given as words, with how their own options are read; joined to
# the tables below (a table's ``wrapper``), each with an example of what it runs
_WRAPPERS: dict[str, Wrapper] = {
    "nohup": Wrapper(OptionSpec(short_flags="", long_flags=frozenset({"--help", "--version"}))),
    "builtin": Wrapper(OptionSpec(short_flags="")),
    "command": Wrapper(OptionSpec(short_flags="pvV")),
    "exec": Wrapper(OptionSpec(short_value="a", short_flags="cl")),
    "setsid": Wrapper(OptionSpec(short_flags="cfw", long_flags=frozenset({"--ctty", "--fork", "--wait"}))),
    "time": Wrapper(
        OptionSpec(
            short_value="fo",
            short_flags="apqv",
            long_value=frozenset({"--format", "--output"}),
            long_flags=frozenset({"--append", "--portability", "--verbose", "--quiet"}),
        )
    ),
    "nice": Wrapper(
        OptionSpec(short_value="n", short_flags="", long_value=frozenset({"--adjustment"}), numeric_flags=True)
    ),
    "ionice": Wrapper(
        OptionSpec(
            short_value="cnpPu",
            short_flags="t",
            long_value=frozenset({"--class", "--classdata", "--pid", "--pgid", "--uid"}),
            long_flags=frozenset({"--ignore"}),
        )
    ),
    "stdbuf": Wrapper(
        OptionSpec(short_value="ioe", short_flags="", long_value=frozenset({"--input", "--output", "--error"}))
    ),
    "timeout": Wrapper(
        OptionSpec(
            short_value="sk",
            short_flags="v",
            long_value=frozenset({"--signal", "--kill-after"}),
            long_flags=frozenset({"--preserve-status", "--foreground", "--verbose"}),
        ),
        positional=1,
    ),
    "doas": Wrapper(OptionSpec(short_value="uC", short_flags="nLs"), empty="shell"),
    "sudo": Wrapper(
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
    "chroot": Wrapper(OptionSpec(long_value=frozenset({"--userspec", "--groups"})), positional=1, opaque=True),
    "taskset": Wrapper(OptionSpec(short_value="", short_flags="acp", long_flags=frozenset({"--cpu-list"})), 1),
    "chrt": Wrapper(OptionSpec(short_value="TPD", short_flags="abdfimoprRv"), positional=1),
    "unbuffer": Wrapper(OptionSpec(short_flags="p")),
    "caffeinate": Wrapper(OptionSpec(short_value="tw", short_flags="dimsu")),
    "strace": Wrapper(
        OptionSpec(
            short_value="abeEIoOpPsSuUX",
            short_flags="cCdDfFhiknqrtTvVwxyzZ",
            long_value=frozenset({"--output", "--env", "--user", "--attach", "--trace", "--signal", "--string-limit"}),
        )
    ),
    "setarch": Wrapper(
        OptionSpec(short_flags="3BFILRSTXZv", long_flags=None), positional=1, empty="shell", opaque=True
    ),
    "unshare": Wrapper(
        OptionSpec(
            short_value="wRSG",
            short_flags="muinpUCTfrc",
            long_value=frozenset({"--wd", "--root", "--setuid", "--setgid", "--propagation", "--setgroups"}),
            long_flags=None,
        ),
        empty="shell",
    ),
    "setpriv": Wrapper(
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
    "prlimit": Wrapper(OptionSpec(short_value="p", short_optional="cdefilmnqrstvxy", long_value=frozenset({"--pid"}))),
    "fakeroot": Wrapper(
        OptionSpec(short_value="lsib", short_flags="uvh", long_value=frozenset({"--lib", "--faked"})), empty="shell"
    ),
    "dbus-run-session": Wrapper(OptionSpec(short_flags="", long_flags=frozenset({"--help", "--version"}))),
    "busybox": Wrapper(OptionSpec(short_flags="")),
    "flock": Wrapper(
        OptionSpec(
            short_value="wEc",
            short_flags="sxunoFvh",
            long_value=frozenset({"--timeout", "--wait", "--conflict-exit-code", "--command"}),
            long_flags=None,
        ),
        positional=1,
    ),
    "pkexec": Wrapper(OptionSpec(long_value=frozenset({"--user"}), long_flags=None)),
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
    _WRAPPERS[_alias] = Wrapper(
        OptionSpec(short_flags="3BFILRSTXZv", long_flags=None), positional=0, empty="shell", opaque=True
    )


# what each wrapper runs, checked on load: the words, "opaque", or None (nothing)
_RUNS_EXAMPLES: dict[str, tuple[tuple[str, str | None], ...]] = {
    "nohup": (("nohup rm -rf build", "rm -rf build"), ("nohup", None)),
    "builtin": (("builtin echo x", "echo x"),),
    "command": (("command ls -l", "ls -l"),),
    "exec": (("exec -a name ls", "ls"),),
    "setsid": (("setsid -f ls", "ls"),),
    "time": (("time -p ls", "ls"), ("time -o out ls", "ls")),
    "nice": (("nice -n 5 make", "make"), ("nice -10 make", "make")),
    "ionice": (("ionice -c 3 make", "make"),),
    "stdbuf": (("stdbuf -oL ls", "ls"),),
    "timeout": (("timeout 5 ls -l", "ls -l"), ("timeout -s KILL 5 ls", "ls")),
    "doas": (("doas -u x ls", "ls"), ("doas", "opaque")),
    "sudo": (("sudo -u x ls", "ls"), ("sudo -s", "opaque"), ("sudo", None)),
    "chroot": (("chroot /srv ls", "opaque"),),
    "taskset": (("taskset 0x1 ls", "ls"),),
    "chrt": (("chrt 10 ls", "ls"),),
    "unbuffer": (("unbuffer ls", "ls"),),
    "caffeinate": (("caffeinate -i make", "make"),),
    "strace": (("strace -f ls", "ls"),),
    "setarch": (("setarch x86_64 ls", "opaque"),),
    "unshare": (("unshare -r ls", "ls"), ("unshare", "opaque")),
    "setpriv": (("setpriv --nnp ls", "ls"),),
    "prlimit": (("prlimit -n10 ls", "ls"),),
    "fakeroot": (("fakeroot make", "make"), ("fakeroot", "opaque")),
    "dbus-run-session": (("dbus-run-session ls", "ls"),),
    "busybox": (("busybox ls", "ls"),),
    "flock": (("flock /tmp/l ls", "ls"), ("flock /tmp/l -c 'rm x'", "rm x")),
    "pkexec": (("pkexec ls", "ls"),),
    "linux32": (("x86_64 rm -rf build", "opaque"), ("linux32 ls", "opaque"), ("i386", "opaque")),
    # programs whose parser (``reader``) says what they run; … stands for words known when they run
    "env": (("env X=1 ls -l", "ls -l"), ("env -S 'ls -l'", "opaque"), ("env -C /tmp ls", "opaque")),
    "xargs": (("xargs ls -l", "ls -l …"), ("xargs -I{} cp {} out", "cp … out"), ("xargs", "echo …")),
    "find": (("find . -exec ls {} ;", "ls …"), ("find . -name x", None), ("find . -exec ls", "opaque")),
    "fd": (("fd -x ls", "ls …"), ("fdfind -e py", None)),
    "watch": (("watch ls -l", "ls -l"), ("watch -x ls -l", "ls -l")),
    "su": (("su -c ls", "ls"), ("su", "opaque"), ("su -s /bin/sh", "opaque")),
    "runuser": (("runuser -u x ls", "ls"), ("runuser -c ls", "ls")),
    "sg": (("sg grp -c ls", "ls"), ("sg grp", "opaque")),
    "script": (("script -c ls out", "ls"), ("script", "opaque")),
    "ssh": (("ssh -o ProxyCommand=x h", "opaque"), ("ssh -F cfg h", "opaque"), ("ssh h ls", None)),
    "eval": (("eval ls -l", "ls -l"), ("eval", None)),
    "capsh": (("capsh -- -c ls", "opaque"),),
    "awk": (("awk '{print $1}' f", "opaque"), ("gawk -f - f", "opaque")),
    "busybox-awk": (("busybox-awk 1 f", "opaque"),),
}
# the parser of each program that reads what it runs its own way (programs.READERS)
_READER_OF: dict[str, str] = {
    "env": "env",
    "xargs": "xargs",
    "find": "find",
    "fd": "fd",
    "fdfind": "fd",
    "watch": "watch",
    "su": "su",
    "runuser": "runuser",
    "sg": "sg",
    "script": "script",
    "ssh": "ssh",
    "sudo": "sudo",
    "doas": "doas",
    "flock": "flock",
    "command": "command",
    "eval": "eval",
    "capsh": "capsh",
    # every awk program can run commands (system, pipes, getline): never proven harmless
    "awk": "awk",
    "gawk": "awk",
    "mawk": "awk",
    "nawk": "awk",
    "busybox-awk": "awk",
}


def _with_wrappers(tables: tuple[Table, ...]) -> tuple[Table, ...]:
    """The tables with their ``wrapper`` or ``reader`` and examples of what they run; a table per
    program left (setarch's personality names share one)."""
    import dataclasses

    runners = set(_WRAPPERS) | set(_READER_OF)
    out: list[Table] = []
    covered: set[str] = set()
    for table in tables:
        names = [n for n in table.names if n in runners]
        if names:
            covered.update(names)
            examples = tuple(e for n in names for e in _RUNS_EXAMPLES.get(n, ()))
            wrapper = next((_WRAPPERS[n] for n in names if n in _WRAPPERS), None)
            reader = next((_READER_OF[n] for n in names if n in _READER_OF), "")
            table = dataclasses.replace(table, wrapper=wrapper, reader=reader, runs_examples=examples)
        out.append(table)
    groups: dict[tuple[Wrapper | None, str], list[str]] = {}
    for name in [*_WRAPPERS, *_READER_OF]:
        if name not in covered:
            covered.add(name)
            groups.setdefault((_WRAPPERS.get(name), _READER_OF.get(name, "")), []).append(name)
    for (wrapper, reader), names in groups.items():
        examples = tuple(e for n in names for e in _RUNS_EXAMPLES.get(n, ()))
        out.append(Table(tuple(names), wrapper=wrapper, reader=reader, runs_examples=examples))
    return tuple(out)


# --- what "always" suggests ------------------------------------------------------------------------------
# Kept beside the tables above and joined to them below: a program with a table gets its ``always`` and
# its examples there; the others get one table per kind. "Always" must never allow, without asking,
# something materially more dangerous than what the user saw: programs that run what they are given,
# destroy, read any file or unpack archives get the exact command or nothing.


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _level(safe: str = "", *, scripts: str = "", groups: Mapping[str, Level] | None = None) -> Level:
    return Level(_names(safe), False, _names(scripts), dict(groups or {}))


_READ = Level(read_verbs=True)
# gcloud and az nest nouns deeply: gcloud beta compute instances list
_CLOUD = Level(read_verbs=True, any_group=Level(read_verbs=True, any_group=Level(read_verbs=True, any_group=_READ)))
_DOCKER = _level(
    "ps images logs inspect version info stats top history diff port search events",
    groups=dict.fromkeys(
        _names(
            "compose image container volume network system context buildx builder plugin node service stack manifest "
            "machine trust"
        ),
        _READ,
    ),
)
_KUBECTL = _level(
    "get describe logs top explain api-resources api-versions version cluster-info events",
    groups={"rollout": _READ, "auth": _READ},
)
_TERRAFORM = _level(
    "plan validate fmt show version providers graph output", groups={"state": _READ, "workspace": _READ}
)
_PIP = _level("list show check help")  # not freeze: `pip freeze -r FILE` prints the file's lines
LEVELS: dict[str, Level] = {
    # not blame (--contents FILE), cat-file (--batch), name-rev, show-ref, check-ignore… (they print what
    # they read on their input, and the engine does not judge `< file`): exact
    "git": _level(
        "status log diff show grep ls-files ls-tree rev-parse describe merge-base count-objects version help "
        "whatchanged range-diff cherry add commit fetch",
        groups={
            "stash": _level("list show"),
            "remote": _level("show get-url"),
            "worktree": _level("list"),
            "notes": _level("list show"),
            "reflog": _level("show"),
            "lfs": _level("ls-files status"),
        },
    ),
    "npm": _level(
        "test t tst start ls list ll la outdated view v info show why explain help root prefix bin search fund",
        scripts="run run-script",
    ),
    "pnpm": _level("test t start ls list ll la outdated view info why help root bin", scripts="run run-script"),
    "yarn": _level("test list info why outdated help"),  # `yarn run X` also runs any installed binary
    "bun": _level("test outdated"),  # `bun run X` runs files and binaries too
    "deno": _level("test check lint fmt doc info bench", scripts="task"),
    "cargo": _level("build b test t check c clippy fmt doc d bench tree metadata version help search"),
    "go": _level("build test vet fmt list version doc help", groups={"mod": _level("graph why verify download tidy")}),
    "pip": _PIP,
    "pip3": _PIP,
    "uv": _level(
        "sync lock tree build venv help",
        groups={"pip": _level("list show check tree"), "python": _READ, "tool": _READ, "cache": _READ},
    ),
    "poetry": _level("show check lock build about help", groups={"env": _READ}),
    "pdm": _level("list show info lock build outdated"),
    "hatch": _level("test build fmt status", groups={"env": _READ}),
    "dotnet": _level("build test restore format list help"),
    "swift": _level("build test"),
    "rustup": _level("show which", groups={"toolchain": _READ, "target": _READ, "component": _READ}),
    "brew": _level("list ls info search outdated deps leaves doctor"),
    "apt": _level("list search show policy"),
    "apt-cache": _level("search show policy depends rdepends"),
    "composer": _level("show outdated validate diagnose licenses"),
    "bundle": _level("list outdated check info"),
    "docker": _DOCKER,
    "podman": _DOCKER,
    "docker-compose": _READ,
    "kubectl": _KUBECTL,
    "oc": _KUBECTL,
    "helm": _level(
        "list ls status get show template lint version search history env",
        groups={"repo": _READ, "plugin": _READ, "dependency": _READ},
    ),
    "terraform": _TERRAFORM,
    "tofu": _TERRAFORM,
    "gh": Level(
        read_verbs=True,
        any_group=_READ,
        nouns=frozenset({"run", "release"}),
        risky=frozenset({"api", "extension", "ext", "alias", "codespace", "cs"}),
    ),
    "aws": Level(any_group=_READ, nouns=frozenset({"deploy"})),
    "gcloud": _CLOUD,
    "az": _CLOUD,
}
# their arguments are never a subcommand, and every use does the same kind of thing
_WORD = _names(
    "ls dir echo printf pwd cd pushd popd cal which whereis type whoami id groups uname uptime df stat "
    "basename dirname realpath readlink true false sleep seq mkdir nproc locale "
    "pytest py.test mypy pyright flake8 pylint jest vitest mocha"
)
# they print any file they are given: a prefix rule would let the model read secrets anywhere (~/.ssh…)
_READERS = _names(
    "cat tac nl head tail less more most sort uniq cut paste rev fold fmt column expand unexpand pr shuf "
    "grep egrep fgrep rg ag ack sed gsed awk gawk mawk nawk jq yq base64 base32 xxd od hexdump strings iconv "
    "md5sum sha1sum sha224sum sha256sum sha384sum sha512sum shasum b2sum cksum sum diff cmp comm join zcat "
    "gzcat bzcat xzcat zstdcat zless zmore zgrep bat batcat view look wc"
)
# they copy their input to their output whatever their arguments (`tr a a < ~/.ssh/id_rsa`)
_NEVER = _names("tr tee")
# a prefix rule would make them too broad: "always" allows only the exact command
_EXACT = _names(
    "rm rmdir mv cp dd chmod chown chgrp ln link unlink truncate shred kill pkill killall fuser curl wget "
    "ssh scp sftp ftp rsync nc ncat netcat socat telnet http https xh sudo doas su env xargs eval exec "
    "source find install mkfs mount umount systemctl service launchctl reboot shutdown crontab patch "
    "open xdg-open npx bunx pnpx uvx pipx gcc cc clang g++ c++ java javac psql mysql mongo mongosh "
    "redis-cli sqlite3 vim vi nvim emacs nano ed gdb hostname "
    # they print the lines of a file they are pointed at in their messages (date -f, du --files0-from…)
    "date du tree file "
    # archivers
    "tar gtar bsdtar unzip zip 7z 7za 7zr unrar rar gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd cpio ar jar"
)
_KINDS: tuple[tuple[Always, frozenset[str]], ...] = (
    ("never", _NEVER),
    ("reader", _READERS),
    ("word", _WORD),
    ("exact", _EXACT),
)
# examples: a command and the rule "always" offers for it (None: none), checked with the tables
_ALWAYS_EXAMPLES: dict[str, tuple[tuple[str, str | None], ...]] = {
    "never": (("tr a b", None),),
    "tee": (("tee out.txt", None),),
    "reader": (("cat /nonexistent-maia-file", None), ("head -5 /nonexistent-maia-file", None)),
    "word": (("ls -la src", "ls *"), ("mypy src", "mypy *")),
    "pytest": (("pytest -x tests", "pytest *"),),
    "exact": (("kill 123", "kill 123"),),
    "ssh": (("ssh host uptime", "ssh host uptime"),),
    "rm": (("rm -rf build", "rm -rf build"), ("mkfifo pipe", "mkfifo pipe *")),
    "curl": (("curl https://example.org", "curl https://example.org"),),
    "git": (
        ("git log -3", "git log *"),
        ("git stash list", "git stash list *"),
        ("git push origin", "git push origin"),
    ),
    "npm": (("npm run build", "npm run build *"), ("npm install x", "npm install x"), ("yarn run x", "yarn run x")),
    "gh": (("gh pr list", "gh pr list *"), ("gh run list", "gh run list *"), ("gh api x", "gh api x")),
    "aws": (("aws s3 ls", "aws s3 ls *"), ("aws deploy list-apps", "aws deploy list-apps *")),
    "docker": (("docker ps -a", "docker ps *"), ("docker run img", "docker run img")),
    "make": (("make build", "make build *"), ("make clean", "make clean")),
}


def _with_always(tables: tuple[Table, ...]) -> tuple[Table, ...]:
    """The tables with their ``always`` and its examples; a table per kind for the programs left."""
    import dataclasses

    kind_of: dict[str, Always] = {name: kind for kind, names in _KINDS for name in names}
    kind_of.update(LEVELS)
    out: list[Table] = []
    covered: set[str] = set()
    for table in tables:
        kinds = {id(kind_of.get(n)): kind_of.get(n) for n in table.names if n in kind_of}
        covered.update(table.names)
        if not kinds:  # project targets (make build), the default
            out.append(dataclasses.replace(table, always_examples=_ALWAYS_EXAMPLES.get(table.names[0], ())))
            continue
        kind: AlwaysField = next(iter(kinds.values()))
        if len(kinds) > 1 or any(n not in kind_of for n in table.names):
            kind = {n: kind_of.get(n) for n in table.names}  # each its own
        examples = _ALWAYS_EXAMPLES.get(table.names[0], ())
        out.append(dataclasses.replace(table, always=kind, always_examples=examples))
    for kind, names in _KINDS:
        left = tuple(sorted(names - covered))
        out.append(Table(left, always=kind, always_examples=_ALWAYS_EXAMPLES.get(str(kind), ())))
        covered.update(left)
    for name, level in LEVELS.items():
        if name not in covered:
            out.append(Table((name,), always=level, always_examples=_ALWAYS_EXAMPLES.get(name, ())))
    return tuple(out)


TABLES = _with_always(_with_wrappers(TABLES + _INTERPRETER_TABLES + _OPAQUE_TABLES + _FACT_TABLES))

BY_NAME: dict[str, Table] = {name: table for table in TABLES for name in table.names}

# shells whose -c text bash-like rules read exactly; other shells' text is read for deny only
SHELLS = frozenset(name for table in TABLES if table.shell == "exact" for name in table.names)
OTHER_SHELLS = frozenset(name for table in TABLES if table.shell == "other" for name in table.names)


def written(words: Sequence[str], launch: Path | None) -> list[Target]:
    """The files a command writes, as its table reads them (long option prefixes spelled out)."""
    if not words:
        return []
    table = BY_NAME.get(program_name(words[0]))
    if table is None or table.writes is None:
        return []
    writes = table.writes
    if writes.reader == "by-subcommand" and not _may_write(writes, words):
        return []
    if not (table.long or table.dangerous):
        return read_written(writes, list(words[1:]), launch)
    reading = read_long(words[1:], table)
    args = reading.args
    for arg, option in reading.dangerous:
        if arg in args and arg.split("=", 1)[0] != option:
            # a prefix of a dangerous option that could not be resolved (``git log --out=x``): read
            # as that option too, so the file it may write is judged
            at = args.index(arg)
            args = [*args[: at + 1], option + arg[len(arg.split("=", 1)[0]) :], *args[at + 1 :]]
    return read_written(writes, args, launch)
