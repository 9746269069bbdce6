"""Splitting a Bash command into everything it would run (§9.4), with tree-sitter-bash.

The analysis is deliberately pessimistic: every simple command anywhere in the text becomes a part
(pipelines, lists, subshells, groups, substitutions, function and control-flow bodies, here-docs fed
to a shell, commands run by wrappers such as ``sudo`` or ``sh -c``). Anything the walker does not
understand is recorded as *uncertain*, which the engine turns into ``ask``.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

# Stands for text only known when the command runs ($X, $(…), globs in a program word…).
# Rule patterns never contain it, so only a ``*`` can match it.
DYN = "\x00"

MAX_DEPTH = 8
SYSTEM_DIRS = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh"})
_OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_DUP_OPS = frozenset({">&", "<&"})
_GLOB_CHARS = re.compile(r"[*?\[\]{}]")

_CONTAINERS = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "subshell",
        "compound_statement",
        "redirected_statement",
        "negated_command",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "case_statement",
        "case_item",
        "do_group",
        "function_definition",
        "heredoc_redirect",
        "herestring_redirect",
        "heredoc_body",
        "command_substitution",
        "process_substitution",
        "expansion",
        "simple_expansion",
        "arithmetic_expansion",
        "string",
        "concatenation",
        "array",
        "variable_assignment",
        "variable_assignments",
        "binary_expression",
        "unary_expression",
        "postfix_expression",
        "parenthesized_expression",
        "ternary_expression",
        "subscript",
        "translated_string",
    }
)
_LEAVES = frozenset(
    {
        "word",
        "number",
        "raw_string",
        "string_content",
        "variable_name",
        "comment",
        "heredoc_start",
        "heredoc_end",
        "heredoc_content",
        "file_descriptor",
        "special_variable_name",
        "ansi_c_string",
        "test_operator",
        "extglob_pattern",
        "regex",
        "expansion_flags",
        "heredoc_body_beginning",
        "brace_expression",
    }
)


@dataclass(frozen=True, slots=True)
class Part:
    """One simple command: its words (program first) and its ``NAME=value`` prefix."""

    words: tuple[str, ...]
    assignments: tuple[str, ...] = ()
    opaque: bool = False  # runs something the analysis cannot see (a shell reading a pipe…)
    via: str | None = None  # the wrapper that runs it

    @property
    def program(self) -> str:
        """The program word as bash would look it up (may contain DYN)."""
        return self.words[0] if self.words else ""

    @property
    def program_dynamic(self) -> bool:
        """The program is only known at run time: such a part is never allowed."""
        if self.program in ("[", "[["):
            return False
        return not self.words or DYN in self.program or bool(_GLOB_CHARS.search(self.program))

    def texts(self, *, for_allow: bool) -> list[str]:
        """The text forms a rule pattern is matched against.

        For deny/ask, every plausible form (``/usr/bin/rm`` also as ``rm``, with and without the
        prefix); for allow, only forms that surely name the same program, prefix included.
        """
        words = list(self.words)
        if not words:
            return [" ".join(self.assignments)]
        program = words[0]
        programs = [program]
        directory, base = posixpath.split(program)
        if directory and base and (not for_allow or directory.rstrip("/") in SYSTEM_DIRS):
            programs.append(base)
        forms = []
        for prog in programs:
            text = " ".join([prog, *words[1:]])
            if self.assignments:
                forms.append(" ".join([*self.assignments, text]))
                if not for_allow:
                    forms.append(text)
            else:
                forms.append(text)
        return forms


@dataclass(frozen=True, slots=True)
class Redirect:
    """An output redirection to a file."""

    target: str
    operator: str

    @property
    def dynamic(self) -> bool:
        """The target is only known at run time (variables, globs, braces…)."""
        return DYN in self.target or bool(re.search(r"[$`*?\[\]{}]", self.target))


@dataclass(slots=True)
class Analysis:
    """Everything a command would run, write to, and what made the analysis unsure."""

    parts: list[Part] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    substitution: bool = False
    uncertain: list[str] = field(default_factory=list)
    # when the parse is unsure: a rough lexical reading, used only to find reasons to deny or ask
    fallback_parts: list[Part] = field(default_factory=list)
    fallback_redirects: list[Redirect] = field(default_factory=list)

    def merge(self, other: Analysis) -> None:
        """Add another analysis (an inner script) to this one."""
        self.parts.extend(other.parts)
        self.redirects.extend(other.redirects)
        self.substitution = self.substitution or other.substitution
        self.uncertain.extend(other.uncertain)
        self.fallback_parts.extend(other.fallback_parts)
        self.fallback_redirects.extend(other.fallback_redirects)


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


@functools.lru_cache(maxsize=512)
def analyze(command: str) -> Analysis:
    """Analyse a command. Results are cached: treat them as read-only."""
    result = _analyze(command, 0)
    if "\\\n" in command:
        # tree-sitter splits a word at a line continuation (``r\<newline>m``) where bash joins it:
        # the joined reading is analysed too, and both must pass.
        result.merge(_analyze(command.replace("\\\n", ""), 0))
    return result


def _analyze(command: str, depth: int) -> Analysis:
    analysis = Analysis()
    if depth > MAX_DEPTH:
        analysis.uncertain.append("nested too deeply")
        return analysis
    if "\x00" in command:
        analysis.uncertain.append("NUL character in the command")
        return analysis
    tree = _parser().parse(command.encode("utf-8"))
    walker = _Walker(command.encode("utf-8"), analysis, depth)
    walker.visit(tree.root_node)
    if tree.root_node.has_error:
        analysis.uncertain.append("the command does not parse (unclosed quote or bracket, stray operator…)")
    if analysis.uncertain:
        _lexical_fallback(command, analysis)
    return analysis


_ROUGH_SEPARATORS = re.compile(r"[;&|\n()`{}]+|\$\(|<\(|>\(")
_ROUGH_REDIRECT = re.compile(r"(?:\d+|&)?(?:>>|>\||<>|>&|&>>|&>|>)\s*(['\"]?)([^\s;&|<>()'\"`]+)\1")


def _lexical_fallback(command: str, analysis: Analysis) -> None:
    """A rough reading of text the parser could not follow, so deny and ask rules still see it."""
    for piece in _ROUGH_SEPARATORS.split(command):
        words = [w.strip("'\"\\") for w in piece.split()]
        words = [w for w in words if w]
        while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
            words.pop(0)
        if words:
            analysis.fallback_parts.append(Part(tuple(words)))
    for match in _ROUGH_REDIRECT.finditer(command):
        target = match.group(2)
        if not target.isdigit() and target != "-":
            analysis.fallback_redirects.append(Redirect(target, ">"))


_ANSI_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def _decode_ansi_c(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI_ESCAPES:
            out.append(_ANSI_ESCAPES[nxt])
            i += 2
            continue
        match = re.match(r"x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})", body[i + 1 :])
        if match:
            digits = next(g for g in match.groups() if g)
            out.append(chr(int(digits, 8 if match.group(4) else 16)))
            i += 1 + match.end()
            continue
        return DYN  # \cX and other rare forms: unknown
    return "".join(out)


def _unescape_word(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _unescape_double_quoted(text: str) -> str:
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


class _Walker:
    def __init__(self, source: bytes, analysis: Analysis, depth: int) -> None:
        self.source = source
        self.analysis = analysis
        self.depth = depth

    def text(self, node: Any) -> str:
        return str(self.source[node.start_byte : node.end_byte].decode("utf-8", errors="replace"))

    # --- structure --------------------------------------------------------------------------

    def visit(self, node: Any) -> None:
        kind = node.type
        if node.is_missing or kind == "ERROR":
            self.analysis.uncertain.append(f"unparsable text: {self.text(node)[:40]!r}")
            for child in node.children:
                self.visit(child)
            return
        if kind == "command":
            self.command(node)
        elif kind in ("declaration_command", "unset_command"):
            words = [self.word(child) for child in node.named_children if child.type != "comment"]
            keyword = node.children[0].type if node.children else ""
            self.analysis.parts.append(Part(tuple([keyword, *words])))
        elif kind == "test_command":
            for child in node.named_children:
                self.word(child)  # collects what substitutions inside the test would run
            self.analysis.parts.append(Part(tuple(self.text(node).split())))
        elif kind == "file_redirect":
            self.redirect(node)
        elif kind in ("command_substitution", "process_substitution"):
            self.analysis.substitution = True
            self.children(node)
        elif kind in _CONTAINERS:
            self.children(node)
        elif kind in _LEAVES or not node.is_named:
            return
        else:
            self.analysis.uncertain.append(f"unsupported construct: {kind}")
            self.children(node)

    def children(self, node: Any) -> None:
        for child in node.children:
            self.visit(child)

    # --- words ------------------------------------------------------------------------------

    def word(self, node: Any) -> str:
        """The value bash gives a word, with DYN for what only the run decides; visits substitutions."""
        kind = node.type
        if kind == "word":
            return _unescape_word(self.text(node))
        if kind == "number":
            return self.text(node)
        if kind == "raw_string":
            return self.text(node)[1:-1]
        if kind == "ansi_c_string":
            return _decode_ansi_c(self.text(node)[2:-1])
        if kind in ("string", "translated_string"):
            parts = []
            for child in node.named_children:
                if child.type == "string_content":
                    parts.append(_unescape_double_quoted(self.text(child)))
                else:
                    parts.append(self.word(child))
            return "".join(parts)
        if kind == "concatenation":
            return "".join(self.word(child) for child in node.named_children)
        if kind == "variable_assignment":
            return self.assignment(node)
        if kind == "variable_name":
            return self.text(node)
        self.visit(node)  # expansions and substitutions: collect what they run
        return DYN

    # --- commands ---------------------------------------------------------------------------

    def command(self, node: Any) -> None:
        assignments: list[str] = []
        words: list[str] = []
        for index, child in enumerate(node.children):
            field_name = node.field_name_for_child(index)
            if child.type == "variable_assignment":
                assignments.append(self.assignment(child))
            elif child.type == "command_name":
                words.append("".join(self.word(c) for c in child.named_children) or DYN)
            elif child.type == "file_redirect":
                self.redirect(child)
            elif child.type in ("herestring_redirect", "heredoc_redirect"):
                self.visit(child)
            elif field_name == "argument" or child.is_named:
                if child.type == "comment":
                    continue
                words.append(self.word(child))
        if not words:
            if assignments:
                self.analysis.parts.append(Part(tuple(assignments)))
            return
        self.add_part(Part(tuple(words), tuple(assignments)), node)

    def assignment(self, node: Any) -> str:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        name_text = self.text(name) if name is not None else ""
        operator = "+=" if b"+=" in self.source[node.start_byte : node.end_byte][: len(name_text) + 2] else "="
        return name_text + operator + (self.word(value) if value is not None else "")

    def add_part(self, part: Part, node: Any | None) -> None:
        self.analysis.parts.append(part)
        self.unwrap(part, node)

    def unwrap(self, part: Part, node: Any | None) -> None:
        """Add what a wrapper (sudo, sh -c, xargs, find -exec…) runs as parts of its own."""
        inner = _inner_of(list(part.words), node is not None and self.reads_stdin(node))
        for item in inner:
            if isinstance(item, _Script):
                if DYN in item.text:
                    self.analysis.uncertain.append(f"{part.program} runs a command only known at run time")
                    self.analysis.parts.append(Part((DYN,), opaque=True, via=part.program))
                else:
                    self.analysis.merge(_analyze(item.text, self.depth + 1))
            elif isinstance(item, _Argv):
                inner_part = Part(tuple(item.words), tuple(item.assignments), via=part.program)
                self.analysis.parts.append(inner_part)
                if self.depth < MAX_DEPTH:
                    self.depth += 1
                    self.unwrap(inner_part, None)
                    self.depth -= 1
                else:
                    self.analysis.uncertain.append("wrappers nested too deeply")
            else:
                self.analysis.parts.append(Part((DYN,), opaque=True, via=part.program))
                self.analysis.uncertain.append(item.reason)
                if node is not None:
                    for script in self.upstream_scripts(node):
                        self.analysis.merge(_analyze(script, self.depth + 1))

    def reads_stdin(self, node: Any) -> bool:
        """Whether the command's input comes from a here-doc, a here-string or a pipe."""
        parent = node.parent
        if parent is not None and parent.type == "redirected_statement":
            if any(c.type in ("heredoc_redirect", "herestring_redirect") for c in parent.children):
                return True
            if any(c.type == "file_redirect" and self.text(c).lstrip("0").startswith("<") for c in parent.children):
                return True
        if any(c.type in ("heredoc_redirect", "herestring_redirect") for c in node.children):
            return True
        while parent is not None and parent.type in ("redirected_statement", "heredoc_redirect"):
            node, parent = parent, parent.parent
        return parent is not None and parent.type == "pipeline" and parent.children[0] != node

    def upstream_scripts(self, node: Any) -> Iterator[str]:
        """Best effort for deny: texts that feed a shell's stdin (here-doc bodies, echo/printf words)."""
        top = node
        while top.parent is not None and top.parent.type not in ("program", "list"):
            top = top.parent
        for sub in _descendants(top):
            if sub.type == "heredoc_body":
                yield self.text(sub)
            elif sub.type == "herestring_redirect":
                yield " ".join(self.word(c) for c in sub.named_children).replace(DYN, "")
            elif sub.type == "command":
                name = sub.child_by_field_name("name")
                if name is not None and self.text(name) in ("echo", "printf"):
                    yield " ".join(self.word(c) for c in sub.named_children[1:]).replace(DYN, "")

    # --- redirections -----------------------------------------------------------------------

    def redirect(self, node: Any) -> None:
        operator = ""
        destination = None
        for index, child in enumerate(node.children):
            name = node.field_name_for_child(index)
            if name == "destination":
                destination = child
            elif not child.is_named:
                operator = child.type
        if operator == ">&-" or operator == "<&-":
            return
        if destination is None:
            self.analysis.uncertain.append(f"redirection without a target: {self.text(node)!r}")
            return
        target = self.word(destination)
        if operator in _DUP_OPS and (target.isdigit() or target == "-"):
            return  # 2>&1, >&2, <&3: duplicates a descriptor, writes no file
        if operator in _OUTPUT_OPS:
            self.analysis.redirects.append(Redirect(target, operator))


def _descendants(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


# --- wrappers -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Argv:
    words: list[str]
    assignments: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Script:
    text: str


@dataclass(frozen=True, slots=True)
class _Unknown:
    reason: str


_Inner = _Argv | _Script | _Unknown


@dataclass(frozen=True, slots=True)
class _Options:
    with_value: frozenset[str] = frozenset()
    positional: int = 0  # operands before the command (timeout's duration, chroot's root…)


_OPTION_SPECS: dict[str, _Options] = {
    "nohup": _Options(),
    "builtin": _Options(),
    "command": _Options(),
    "exec": _Options(frozenset({"-a"})),
    "setsid": _Options(),
    "time": _Options(frozenset({"-f", "-o", "--format", "--output"})),
    "nice": _Options(frozenset({"-n", "--adjustment"})),
    "ionice": _Options(frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"})),
    "stdbuf": _Options(frozenset({"-i", "-o", "-e", "--input", "--output", "--error"})),
    "timeout": _Options(frozenset({"-s", "-k", "--signal", "--kill-after"}), positional=1),
    "doas": _Options(frozenset({"-u", "-C"})),
    "chroot": _Options(frozenset({"--userspec", "--groups"}), positional=1),
    "flock": _Options(frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}), positional=1),
    "taskset": _Options(frozenset({"-p"}), positional=1),
    "chrt": _Options(frozenset(), positional=1),
    "unbuffer": _Options(),
    "caffeinate": _Options(frozenset({"-t", "-w"})),
    "busybox": _Options(),
    "sudo": _Options(
        frozenset(
            {
                "-u",
                "-g",
                "-C",
                "-D",
                "-h",
                "-p",
                "-r",
                "-t",
                "-U",
                "-T",
                "-R",
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
        )
    ),
}
_XARGS_VALUE = frozenset(
    {
        "-a",
        "-d",
        "-E",
        "-I",
        "-L",
        "-n",
        "-P",
        "-s",
        "--arg-file",
        "--delimiter",
        "--eof",
        "--replace",
        "--max-lines",
        "--max-args",
        "--max-procs",
        "--max-chars",
        "--process-slot-var",
    }
)
_SHELL_VALUE = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _skip_options(args: Sequence[str], spec: _Options) -> list[str]:
    """The argv left once a wrapper's own options and operands are skipped."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if not arg.startswith("-") or arg == "-":
            break
        if arg in spec.with_value:
            i += 2
            continue
        i += 1
    return list(args[i + spec.positional :])


def _inner_of(words: list[str], reads_stdin: bool) -> list[_Inner]:
    if not words or DYN in words[0]:
        return []
    program = posixpath.basename(words[0])
    args = words[1:]
    if program in SHELLS:
        return _shell_inner(args, reads_stdin)
    if program == "eval":
        return [_Script(" ".join(args))] if args else []
    if program == "env":
        return _env_inner(args)
    if program == "xargs":
        return _xargs_inner(args)
    if program == "find":
        return _find_inner(args)
    if program == "watch":
        return _watch_inner(args)
    if program in ("su", "runuser", "script"):
        for i, arg in enumerate(args):
            if arg in ("-c", "--command") and i + 1 < len(args):
                return [_Script(args[i + 1])]
            if arg.startswith("--command="):
                return [_Script(arg.split("=", 1)[1])]
        return []
    if program == "sudo" and any(a in ("-s", "-i", "--shell", "--login") for a in args):
        rest = _skip_options([a for a in args if a not in ("-s", "-i", "--shell", "--login")], _OPTION_SPECS["sudo"])
        return [_Script(" ".join(rest))] if rest else []
    if program == "flock":
        for i, arg in enumerate(args):
            if arg in ("-c", "--command") and i + 1 < len(args):
                return [_Script(args[i + 1])]
    if program == "command" and any(a in ("-v", "-V") for a in args):
        rest = [a for a in args if not a.startswith("-")]
        return [_Argv(rest)] if rest else []
    spec = _OPTION_SPECS.get(program)
    if spec is None:
        return []
    rest = _skip_options(args, spec)
    return [_Argv(rest)] if rest else []


def _shell_inner(args: list[str], reads_stdin: bool) -> list[_Inner]:
    i = 0
    has_c = False
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if arg in _SHELL_VALUE:
            i += 2
            continue
        if arg.startswith(("-", "+")) and len(arg) > 1:
            if not arg.startswith("--") and "c" in arg[1:]:
                has_c = True
            i += 1
            continue
        break
    rest = args[i:]
    if has_c:
        return [_Script(rest[0])] if rest else [_Unknown("a shell -c without a command")]
    if rest:
        return []  # runs a script file: the part itself names it
    if reads_stdin:
        return [_Unknown("a shell runs commands read from its input")]
    return []


def _env_inner(args: list[str]) -> list[_Inner]:
    assignments: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-u", "--unset", "-C", "--chdir"):
            i += 2
        elif arg in ("-S", "--split-string"):
            return [_Script(" ".join(args[i + 1 :]))]
        elif arg.startswith("--split-string="):
            return [_Script(" ".join([arg.split("=", 1)[1], *args[i + 1 :]]))]
        elif arg == "--":
            i += 1
            break
        elif arg.startswith("-") and arg != "-":
            i += 1
        elif "=" in arg and not arg.startswith("="):
            assignments.append(arg)
            i += 1
        else:
            break
    rest = args[i:]
    return [_Argv(rest, assignments)] if rest else []


def _xargs_inner(args: list[str]) -> list[_Inner]:
    rest = _skip_options(args, _Options(_XARGS_VALUE)) or ["echo"]
    # the input lines become further arguments: only a pattern ending in * can cover them
    return [_Argv([*rest, DYN])]


def _find_inner(args: list[str]) -> list[_Inner]:
    found: list[_Inner] = []
    i = 0
    while i < len(args):
        if args[i] in _FIND_EXEC:
            j = i + 1
            while j < len(args) and args[j] not in (";", "+"):
                j += 1
            if j >= len(args):
                rest = [DYN if w == "{}" else w for w in args[i + 1 :]]
                return [
                    *found,
                    *([_Argv(rest)] if rest else []),
                    _Unknown(f"find {args[i]} without its closing ; or +"),
                ]
            command = [DYN if w == "{}" else w.replace("{}", DYN) for w in args[i + 1 : j]]
            if command:
                found.append(_Argv(command))
            i = j + 1
            continue
        i += 1
    return found


def _watch_inner(args: list[str]) -> list[_Inner]:
    value = frozenset({"-n", "--interval", "-q", "--equexit", "--differences"})
    exec_direct = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-x", "--exec"):
            exec_direct = True
            i += 1
        elif arg in value:
            i += 2
        elif arg.startswith("-") and arg != "-":
            i += 1
        else:
            break
    rest = args[i:]
    if not rest:
        return []
    return [_Argv(rest)] if exec_direct else [_Script(" ".join(rest))]
