"""The plain grammar: the only Bash text an allow rule can cover.

A command is *plain* when bash would run exactly the words written, nothing else:

- words are bare text (a backslash keeps the next character, ``\\<newline>`` joins lines),
  single-quoted strings, or double-quoted strings without ``$``, backquote or a backslash before
  ``$ ` " \\`` or a newline;
- they are joined by ``&&``, ``||``, ``;``, ``&``, ``|``, ``|&`` and new lines, and may be grouped
  with ``( … )``, ``{ …; }``, ``!``, ``if``/``then``/``elif``/``else``/``fi``,
  ``while``/``until``/``do``/``done``; redirections have plain targets;
- no expansion of any kind: ``$``, backquotes, ``~+``/``~user``, brace expansion, a glob in the
  program word (a glob among the arguments is allowed, and noted);
- no assignment, except ``NAME=value`` prefixes whose NAME is inert; no here-document whose
  delimiter is unquoted; no ``case``, ``for``, ``select``, ``function``, ``coproc``, ``[[``, ``((``;
  no builtin that evaluates its arguments (``read``, ``printf -v``, ``declare``, ``eval``…).

The reader is written for this grammar only and refuses everything else, so what it accepts it
reads exactly as bash does; every construct is tested against a real bash.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from maia.permissions import programs
from maia.permissions.parts import DYN, Part, Redirect
from maia.permissions.programs import Argv, Inner, Opaque, Script, Stdin

MAX_DEPTH = 8
MAX_WRAPPERS = 16
_BARE = re.compile(r"[^ \t\n|&;()<>'\"\\$`]+")
_DQ_CHUNK = re.compile(r"[^\"$`\\]+")
_OPERATORS = (
    ";;&",
    "&>>",
    "<<<",
    "<<-",
    ";;",
    ";&",
    "&&",
    "||",
    "|&",
    "&>",
    "<<",
    "<>",
    "<&",
    ">&",
    ">>",
    ">|",
    "<(",
    ">(",
    ";",
    "&",
    "|",
    "<",
    ">",
    "(",
    ")",
)
_BLANKS = re.compile(r"(?:[ \t]|\\\n)*")  # blanks and line continuations between words
_NOT_BLANK = re.compile(r"[^ \t]+")
_OPERATOR = re.compile("|".join(re.escape(op) for op in _OPERATORS))
# A bare word without { } * ? [ =, nor ~ at its start, needs none of the checks of _check_word, nor
# the assignment ones: only a keyword starting a command is looked at. (A ~ further in is expanded
# only after = or : in an assignment, and such a word has a =; a ] is a glob only after a [.)
_CLEAN = r"[^ \t\n|&;()<>'\"\\$`#~{}*?\[=][^ \t\n|&;()<>'\"\\$`{}*?\[=]*+"
_ENDS = r"(?=[ \t\n|&;()]|$)"  # what may follow a word read whole
# blanks, then: a run of such clean words (the first one apart) separated by blanks, each ended by a
# blank, an operator or the end, and the separator after the run if there is one; or a bare word
# ended the same way; or an operator; or a new line. Anything else (quotes, backslashes, $, #, a
# number before a redirection) goes the slow way. The quantifiers are possessive where giving text
# back could never lead to another match (a clean word is followed by a character it cannot hold):
# the engine keeps no backtracking points
_TOKEN = re.compile(
    r"(?:[ \t]|\\\n)*+(?:(?P<run>(?P<clean>" + _CLEAN + r")" + _ENDS + r"(?:[ \t]++" + _CLEAN + _ENDS + r")*+)"
    r"(?:[ \t]*+(?P<sep>\|\||&&|;(?![;&])|\|(?![|&])|\n))?"
    r"|(?P<word>[^ \t\n|&;()<>'\"\\$`#][^ \t\n|&;()<>'\"\\$`]*)(?=[ \t\n|&;()]|$)"
    r"|'(?P<quoted>[^']*)'(?=[ \t\n|&;()<>]|$)"  # a single-quoted word alone: what word() would read
    # an output redirection to a clean word: what operator() and word() would read
    r"|(?P<out>>>|>\||>)(?:[ \t]|\\\n)*+(?P<target>"
    + _CLEAN
    + r")"
    + _ENDS
    + r"|(?P<op>"
    + _OPERATOR.pattern
    + r")|(?P<newline>\n))?"
)
_REDIRECTS = frozenset({">", ">>", ">|", "<", "<>", "&>", "&>>", ">&", "<&", "<<", "<<-", "<<<"})
_OUTPUT = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_SEPARATORS = frozenset({"&&", "||", ";", "&", "|", "|&"})
_UNSUPPORTED_KEYWORDS = frozenset({"case", "esac", "for", "select", "function", "coproc", "in", "[[", "]]"})
_OPENERS = {"if": "if", "while": "loop", "until": "loop"}
_CLOSERS = {
    "}": ("{",),
    "then": ("if",),
    "elif": ("then",),
    "else": ("then",),
    "fi": ("then", "else"),
    "do": ("loop",),
    "done": ("do",),
}
_CONTINUES = {"then": "then", "elif": "if", "else": "else", "do": "do"}
# every word word_token treats specially when it starts a command
_KEYWORDS = _UNSUPPORTED_KEYWORDS | frozenset({"!", "{", *_OPENERS, *_CLOSERS})
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?=)")
_QUOTED = "\x01"
_ARRAY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[")
_NAMED_FD = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_TILDE_AFTER = re.compile(r"[=:]~")  # stands for a quoted character in the syntax view of a word
_PIPE = Stdin("pipe")  # (frozen: one for every command reading a pipe)
_FILE = Stdin("file")


class NotPlain(Exception):
    """The text is outside the plain grammar; ``reason`` says what was met."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(slots=True)
class _Word:
    value: str
    syntax: str  # the word with quoted characters replaced by _QUOTED
    start: int

    @property
    def quoted(self) -> bool:
        return _QUOTED in self.syntax


class _Command:
    # a long script has thousands: its words are kept as text, and what most commands lack costs
    # nothing (an empty tuple, shared), so the garbage collector has fewer objects to look at
    __slots__ = ("assignments", "group", "open_words", "redirects", "start", "stdin", "words")

    def __init__(self, start: int, group: int) -> None:
        self.start = start
        self.group = group
        self.words: list[str] = []  # their values
        self.assignments: tuple[str, ...] = ()
        self.redirects: tuple[tuple[str, _Word], ...] = ()
        self.stdin: Stdin = programs.NO_STDIN
        self.open_words: tuple[int, ...] = ()  # indexes of words that may expand to anything (see _open_word)


@dataclass(slots=True)
class PlainScript:
    """A plain command: every part it runs (wrappers looked through) and every file it writes."""

    parts: list[Part] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    inputs: list[Redirect] = field(default_factory=list)  # files read through `< file`: Read rules apply
    # texts something opaque will run (a here-document fed to a shell…): read for deny rules only
    hidden_texts: list[str] = field(default_factory=list)


class _Reader:
    """One pass over the text; raises NotPlain at the first construct outside the grammar."""

    __slots__ = (
        "after_compound",
        "commands",
        "cur",
        "group",
        "group_redirects",
        "heredocs",
        "i",
        "need_command",
        "pipe_next",
        "since_open",
        "stack",
        "text",
        "texts",
    )

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.commands: list[_Command] = []
        self.group_redirects: list[tuple[str, _Word, int]] = []
        self.cur: _Command | None = None
        self.stack: list[str] = []
        self.heredocs: list[tuple[str, bool, _Command]] = []
        self.group = 0
        self.after_compound = False  # just closed ) } fi done: only redirections and operators may follow
        self.need_command = False  # after && || | : a command must follow
        self.pipe_next = False  # the next command reads the previous one's output
        self.since_open = 0  # commands since the last opening word ({, if, then, do…)
        self.texts: list[str] = []  # here-document and here-string texts (what a shell might read)

    # --- words ------------------------------------------------------------------------------

    def word(self) -> _Word:
        text = self.text
        start = i = self.i
        # fast path: a word of bare characters only, ended by a blank, an operator or the end
        bare = _BARE.match(text, i)
        if bare is not None:
            end = bare.end()
            if end == len(text) or text[end] in " \t\n|&;()<>":
                self.i = end
                chunk = bare.group()
                return _Word(chunk, chunk, start)
        value: list[str] = []
        syntax: list[str] = []
        n = len(text)
        while i < n:
            ch = text[i]
            bare = _BARE.match(text, i)
            if bare is not None:
                chunk = bare.group()
                value.append(chunk)
                syntax.append(chunk)
                i = bare.end()
                continue
            if ch in " \t\n|&;()<>":
                break
            if ch == "'":
                end = text.find("'", i + 1)
                if end < 0:
                    raise NotPlain("an unclosed single quote")
                chunk = text[i + 1 : end]
                value.append(chunk)
                syntax.append(_QUOTED * len(chunk))
                i = end + 1
            elif ch == '"':
                i += 1
                while True:
                    piece = _DQ_CHUNK.match(text, i)
                    if piece is not None:
                        value.append(piece.group())
                        syntax.append(_QUOTED * len(piece.group()))
                        i = piece.end()
                    if i >= n:
                        raise NotPlain("an unclosed double quote")
                    ch = text[i]
                    if ch == '"':
                        i += 1
                        break
                    if ch == "$":
                        raise NotPlain("a $ expansion inside double quotes")
                    if ch == "`":
                        raise NotPlain("a command substitution (`…`)")
                    # a backslash
                    following = text[i + 1 : i + 2]
                    if following in ("$", "`", '"', "\\", "\n", ""):
                        raise NotPlain("a backslash escape inside double quotes")
                    value.append("\\" + following)
                    syntax.append(_QUOTED * 2)
                    i += 2
            elif ch == "\\":
                following = text[i + 1 : i + 2]
                if following == "":
                    raise NotPlain("a backslash at the end of the command")
                if following != "\n":  # \<newline> joins lines
                    value.append(following)
                    syntax.append(_QUOTED)
                i += 2
            elif ch == "$":
                raise NotPlain("a $ expansion")
            elif ch == "`":
                raise NotPlain("a command substitution (`…`)")
            else:  # pragma: no cover - every other character is matched by _BARE
                raise NotPlain(f"an unexpected character {ch!r}")
        self.i = i
        return _Word("".join(value), "".join(syntax), start)

    # --- structure --------------------------------------------------------------------------

    def skip_blanks(self) -> None:
        self.i = _BLANKS.match(self.text, self.i).end()  # type: ignore[union-attr]

    def finish(self) -> None:
        if self.cur is not None:
            if not self.cur.words and not self.cur.assignments and not self.cur.redirects:
                raise NotPlain("an empty command")
            self.commands.append(self.cur)
            self.cur = None
            self.need_command = False
            self.since_open += 1

    def command(self) -> _Command:
        if self.after_compound:
            raise NotPlain("a word after a closing ), }, fi or done")
        if self.cur is None:
            self.cur = _Command(self.i, self.group)
            if self.pipe_next and self.commands and self.commands[-1].group == self.group:
                self.cur.stdin = _PIPE
            self.pipe_next = False
        return self.cur

    def read(self) -> None:
        text = self.text
        n = len(text)
        token = _TOKEN.match
        not_blank = _NOT_BLANK.findall
        # the common tokens (a word of a command, a separator) are handled here rather than by the
        # methods: a long script has tens of thousands of them
        while True:
            # one match skips the blanks and reads the next token when it is a simple one
            found = token(text, self.i)
            assert found is not None  # every alternative can match the empty string
            kind = found.lastgroup
            if kind == "run" or kind == "sep":
                value, run, op = found.group("clean", "run", "sep")
                self.i = found.end("clean")
                cur = self.cur
                if cur is None or self.after_compound:
                    if cur is None and value in _KEYWORDS:
                        self.keyword(value)
                        continue  # the words after it are read again, next time round
                    if cur is None and not self.after_compound:  # what command() does, inlined
                        cur = self.cur = _Command(self.i, self.group)
                        if self.pipe_next:
                            if self.commands and self.commands[-1].group == self.group:
                                cur.stdin = _PIPE
                            self.pipe_next = False
                    else:
                        cur = self.command()
                if len(run) == len(value):  # (the run starts with the first word)
                    cur.words.append(value)
                elif "\t" in run or "  " in run:  # the other words of the run: arguments, nothing to check
                    cur.words.extend(not_blank(run))
                else:  # (words one blank apart: cut at the blanks)
                    cur.words.extend(run.split(" "))
                if op is None:
                    self.i = found.end("run")
                else:  # what separator() does after a command, inlined
                    self.i = found.end()
                    self.commands.append(cur)
                    self.cur = None
                    self.since_open += 1
                    self.after_compound = False
                    if op == "|":
                        self.pipe_next = True
                        self.need_command = True
                    else:
                        self.group += 1
                        self.pipe_next = False
                        self.need_command = op != ";" and op != "\n"
                        if op == "\n" and self.heredocs:
                            self.read_heredocs()
                continue
            if kind == "op":
                self.i = found.end()
                op = found.group("op")
                if op in _SEPARATORS:
                    self.separator(op)
                else:
                    self.operator(op)
                continue
            if kind == "target":
                op, value = found.group("out", "target")
                self.i = found.end()
                target = _Word(value, value, found.start("target"))
                if self.after_compound:
                    self.group_redirects.append((op, target, target.start))
                else:
                    command = self.command()
                    command.redirects += ((op, target),)
                continue
            if kind == "newline":
                self.i = found.end()
                self.separator("\n")
                if self.heredocs:
                    self.read_heredocs()
                continue
            if kind == "word":
                self.i = found.end()
                value = found.group("word")
                cur = self.cur
                if cur is not None and cur.words and not self.after_compound:
                    # an argument of bare characters: what word_token would do, without a _Word
                    _check_syntax(value)
                    if value[0] in "*?[" and _has_glob(value):
                        cur.open_words += (len(cur.words),)
                    cur.words.append(value)
                    continue
                self.word_token(_Word(value, value, found.start("word")))
                continue
            if kind == "quoted":
                self.i = found.end()
                value = found.group("quoted")
                cur = self.cur
                if cur is not None and cur.words and not self.after_compound:
                    cur.words.append(value)  # an argument all quoted: nothing in it to check
                    continue
                self.word_token(_Word(value, _QUOTED * len(value), found.start("quoted") - 1))
                continue
            self.i = found.start(kind) if kind else found.end()
            if self.i >= n:
                break
            ch = text[self.i]
            if ch == "#":
                end = text.find("\n", self.i)
                self.i = n if end < 0 else end
                continue
            if ch == "\n":
                self.i += 1
                self.separator("\n")
                self.read_heredocs()
                continue
            word = self.word()
            following = text[self.i : self.i + 1]
            if following in ("<", ">") and not word.quoted and (word.value.isdigit() or _is_named_fd(word)):
                if _is_named_fd(word):
                    raise NotPlain("a {name}> redirection assigns a variable")
                continue  # a file descriptor number: the operator follows
            self.word_token(word)
        self.finish()
        if self.heredocs:
            self.read_heredocs()
        if self.stack:
            raise NotPlain(f"an unclosed {self.stack[-1]}")
        if self.need_command:
            raise NotPlain("an operator without a command after it")

    def separator(self, operator: str) -> None:
        if self.cur is not None:
            self.finish()
        elif operator != "\n" and not self.after_compound:
            raise NotPlain(f"{operator} without a command before it")
        self.after_compound = False
        if operator in ("|", "|&"):
            self.pipe_next = True
        else:
            self.group += 1
            self.pipe_next = False
        self.need_command = operator in ("&&", "||", "|", "|&")

    def operator(self, op: str) -> None:
        if op in (";;", ";&", ";;&"):
            raise NotPlain("a case statement")
        if op in ("<(", ">("):
            raise NotPlain("a process substitution")
        if op in _SEPARATORS:
            self.separator(op)
            return
        if op == "(":
            if self.cur is not None or self.after_compound:
                raise NotPlain("( after a word (a function definition)")
            if self.text.startswith("(", self.i):
                raise NotPlain("an arithmetic command (( … ))")
            self.stack.append("(")
            self.need_command = False
            self.since_open = 0
            return
        if op == ")":
            self.finish()
            if not self.stack or self.stack[-1] != "(" or not self.since_open:
                raise NotPlain("an unmatched )")
            self.stack.pop()
            self.after_compound = True
            self.since_open = 1
            return
        # a redirection
        self.skip_blanks()
        if self.i >= len(self.text) or self.text[self.i] in "\n|&;()<>":
            raise NotPlain("a redirection without a target")
        target = self.word()
        _check_word(target)  # ~+, ~user and {a,b} expand in a target too
        if self.after_compound:
            self.group_redirects.append((op, target, target.start))
        else:
            command = self.command()
            command.redirects += ((op, target),)
        if op in ("<<", "<<-"):
            if not target.quoted:
                raise NotPlain("a here-document with an unquoted delimiter (its text is expanded)")
            holder = self.cur if self.cur is not None else _Command(target.start, self.group)
            self.heredocs.append((target.value, op == "<<-", holder))
        elif op == "<<<":
            self.texts.append(target.value)
            if self.cur is not None:
                self.cur.stdin = Stdin("text", target.value + "\n")
        elif op in ("<", "<>", "<&") and self.cur is not None and self.cur.stdin.kind != "text":
            self.cur.stdin = _FILE

    def keyword(self, keyword: str) -> bool:
        """Read a word starting a command, unquoted, as a keyword; False when it is none."""
        if keyword in _UNSUPPORTED_KEYWORDS:
            raise NotPlain(f"a {keyword} construct")
        if keyword == "!":
            if self.after_compound:
                raise NotPlain("! after a closing word")
            return True
        if keyword in ("{", "if", "while", "until"):
            if self.after_compound:
                raise NotPlain(f"{keyword} after a closing word")
            self.stack.append(_OPENERS.get(keyword, "{"))
            self.need_command = False
            self.since_open = 0
            return True
        if keyword in _CLOSERS:
            if not self.stack or self.stack[-1] not in _CLOSERS[keyword]:
                raise NotPlain(f"an unexpected {keyword}")
            if not self.since_open or self.need_command:
                raise NotPlain(f"{keyword} without a command before it")
            self.stack.pop()
            following = _CONTINUES.get(keyword)
            if following is not None:
                self.stack.append(following)
                self.since_open = 0
            else:
                self.after_compound = True
                self.since_open = 1
            return True
        return False

    def word_token(self, word: _Word) -> None:
        if self.cur is None and not word.quoted and self.keyword(word.value):
            return
        command = self.command()
        if not command.words:
            match = _ASSIGNMENT.match(word.syntax)
            if match is not None:
                name = match.group(1)
                value = word.value[match.end() :]
                _check_word(word, assignment_value=True)
                command.assignments += (f"{name}{match.group(2)}{value}",)
                return
            if "[" in word.syntax and _ARRAY.match(word.syntax) and "]" in word.value and "=" in word.value:
                raise NotPlain("an array assignment (its subscript is evaluated)")
            _check_word(word, program=True)
        else:
            _check_word(word)
            if _open_word(word):
                command.open_words += (len(command.words),)
        command.words.append(word.value)

    def read_heredocs(self) -> None:
        text = self.text
        n = len(text)
        for delimiter, strip_tabs, holder in self.heredocs:
            body: list[str] = []
            while self.i < n:
                end = text.find("\n", self.i)
                line = text[self.i : n if end < 0 else end]
                self.i = n if end < 0 else end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                body.append(line.lstrip("\t") if strip_tabs else line)
            holder.stdin = Stdin("text", "\n".join(body) + ("\n" if body else ""))
            self.texts.append(holder.stdin.text)
        self.heredocs = []


def _is_named_fd(word: _Word) -> bool:
    return word.syntax.startswith("{") and bool(_NAMED_FD.fullmatch(word.syntax))


def _check_word(word: _Word, *, program: bool = False, assignment_value: bool = False) -> None:
    """Refuse expansions the reader does not model: tildes other than ``~`` and ``~/``, braces, and a
    glob in the program word."""
    _check_syntax(word.syntax, program=program, assignment_value=assignment_value)


def _check_syntax(syntax: str, *, program: bool = False, assignment_value: bool = False) -> None:
    """:func:`_check_word` on a word's syntax view (a bare word's is its text)."""
    if syntax.startswith("~"):
        rest = syntax[1:]
        if rest and not rest.startswith("/"):
            raise NotPlain("a ~ expansion other than ~ or ~/")
    if "~" in syntax and _TILDE_AFTER.search(syntax) and (assignment_value or _ASSIGNMENT.match(syntax)):
        raise NotPlain("a ~ expansion inside an assignment")
    brace = syntax.find("{") if "}" in syntax else -1
    while brace >= 0:
        close = syntax.find("}", brace + 1)
        if close < 0:
            break
        inner = syntax[brace + 1 : close]
        if "," in inner or ".." in inner:
            raise NotPlain("a brace expansion {a,b}")
        brace = syntax.find("{", brace + 1)
    if program and syntax != "[" and _has_glob(syntax):
        raise NotPlain("a glob in the program word")


def _has_glob(syntax: str) -> bool:
    if "*" in syntax or "?" in syntax:
        return True
    open_at = syntax.find("[")
    return open_at >= 0 and syntax.find("]", open_at + 1) > 0


def _open_word(word: _Word) -> bool:
    """A glob word that could expand to a name starting with ``-`` (an option)."""
    return bool(word.syntax) and word.syntax[0] in "*?[" and _has_glob(word.syntax)


def parse_plain(
    text: str, inert: Iterable[str] = programs.DEFAULT_INERT, *, launch: Path | None = None, depth: int = 0
) -> PlainScript:
    """Read a plain command, wrappers and ``sh -c`` texts included; raise :class:`NotPlain` otherwise.

    ``launch`` is the folder the command starts in: a ``cd`` that stays inside it does not make
    later parts run in an unknown folder (it still makes relative redirection targets uncertain).
    """
    if "\x00" in text:
        raise NotPlain("a NUL character")
    inert_names = frozenset(inert)
    reader = _Reader(text)
    reader.read()
    script = PlainScript()
    moved_at: list[tuple[int, int]] = []  # (position, group) of parts changing folder
    away_at: list[tuple[int, int]] = []  # … to a folder not known to be inside the launch folder
    here: Path | None = launch  # the folder after the folder changes read so far (None: unknown)
    links_at: list[tuple[int, int]] = []
    top: list[Part] = []  # the parts of the text itself, in order
    acting: list[tuple[int, Stdin]] = []  # those that may act (see programs.may_act): index in top, input
    spoken: list[tuple[str, ...]] = []  # what echo and printf print (words): a shell reading a pipe may run it
    folder: Path | None = launch  # where top-level commands run, while it is known
    no_words: frozenset[int] = frozenset()
    may_act = programs.may_act
    folder_changers = programs.FOLDER_CHANGERS
    not_plain_builtin = programs.not_plain_builtin
    # every check on a command runs before any look inside one (the first reason found stays the same)
    for command in reader.commands:
        assignments = command.assignments
        if assignments:
            for assignment in assignments:
                name = assignment.split("=", 1)[0].rstrip("+")
                if not programs.inert_variable(name, inert_names):
                    raise NotPlain(f"{name}=… is not an inert variable (it could change what runs)")
            if not command.words:
                raise NotPlain("an assignment statement")
        words = tuple(command.words)
        reason = not_plain_builtin(words)
        if reason is not None:
            raise NotPlain(reason)
        if words:
            # (positional: keyword arguments cost more, and a long command has thousands of parts)
            top.append(
                Part(
                    words,
                    assignments,
                    False,
                    None,
                    None,
                    command.start,
                    command.group,
                    frozenset(command.open_words) if command.open_words else no_words,
                )
            )
            name = words[0].rpartition("/")[2]  # programs.program_name, inlined: thousands of parts
            if may_act(name):
                acting.append((len(top) - 1, command.stdin))
        if command.redirects:
            base = str(folder) if folder is not None and folder is not launch else None
            for op, target in command.redirects:
                _add_redirect(script, op, target, command.start, command.group, base)
        if words:
            if name in folder_changers:
                folder = _folder_after(Part(words), folder, launch)
            elif name == "echo" or name == "printf":
                spoken.append(words)  # (joined only if something opaque reads them)
    for op, target, position in reader.group_redirects:
        _add_redirect(script, op, target, position, -1)
    pending: deque[tuple[Part, Stdin, int, int]] = deque()  # parts run by others: part, input, depth, wrappers
    runs: dict[tuple[tuple[str, ...], str, str], list[Inner]] = {}  # inner_commands of the same words and input

    def look_inside(part: Part, stdin: Stdin, level: int, wrappers: int) -> None:
        """What a part that may act does: change folder, make links, run other commands."""
        nonlocal here
        if programs.changes_folder(part):
            moved_at.append((part.position, part.group))
            # past a few changes the folder is not followed any more (each check resolves links)
            here = _folder_after(part, here, launch) if len(moved_at) <= 32 else None
            if here is None:
                away_at.append((part.position, part.group))
        if programs.may_create_links(part):
            links_at.append((part.position, part.group))
        key = (part.words, stdin.kind, stdin.text)  # (the fields: a dataclass's hash is a Python call)
        inners = runs.get(key)
        if inners is None:
            inners = runs[key] = programs.inner_commands(part.words, stdin)
        for inner in inners:
            if isinstance(inner, Argv):
                for assignment in inner.assignments:
                    name = assignment.split("=", 1)[0]
                    if not programs.inert_variable(name, inert_names):
                        raise NotPlain(f"{name}=… is not an inert variable (it could change what runs)")
                if not inner.certain:
                    continue  # only an Opaque entry follows; deny rules read these through tree-sitter
                reason = programs.not_plain_builtin(inner.words)
                if reason is not None:
                    raise NotPlain(reason)
                if wrappers >= MAX_WRAPPERS:
                    raise NotPlain("wrappers nested too deeply")
                child = Part(inner.words, inner.assignments, via=part.program, position=part.position, group=part.group)
                pending.append((child, programs.NO_STDIN, level, wrappers + 1))
            elif isinstance(inner, Script):
                if DYN in inner.text:
                    script.parts.append(_opaque(part, f"{part.program} runs a command only known when it runs"))
                    continue
                if not inner.exact:
                    script.parts.append(_opaque(part, f"{part.program} runs text in a shell other than bash"))
                    script.hidden_texts.append(inner.text)
                    continue
                if level + 1 > MAX_DEPTH:
                    raise NotPlain("commands nested too deeply")
                try:
                    nested = parse_plain(inner.text, inert_names, depth=level + 1)  # its folder: unknown
                except NotPlain as error:
                    raise NotPlain(f"the text {part.program} runs is not plain: {error.reason}") from None
                for child in nested.parts:
                    script.parts.append(
                        Part(
                            child.words,
                            child.assignments,
                            child.opaque,
                            child.via or part.program,
                            child.why,
                            part.position,
                            part.group,
                            child.open_words,
                            child.folder_moved,
                        )
                    )
                    if programs.changes_folder(child):
                        moved_at.append((part.position, part.group))
                        away_at.append((part.position, part.group))
                    if programs.may_create_links(child):
                        links_at.append((part.position, part.group))
                for redirect in nested.redirects:
                    script.redirects.append(
                        Redirect(redirect.target, redirect.operator, part.position, part.group, redirect.certain)
                    )
                script.hidden_texts.extend(nested.hidden_texts)
            elif isinstance(inner, Opaque):
                script.parts.append(_opaque(part, inner.reason))
                script.hidden_texts.extend(inner.texts)

    # the parts in the order they were always listed: the text's own first, each followed by what
    # it adds at once (a shell's text, something opaque), then the commands wrappers run (breadth first)
    done = 0
    for index, stdin in acting:
        script.parts.extend(top[done : index + 1])
        done = index + 1
        look_inside(top[index], stdin, depth, 0)
    script.parts.extend(top[done:])
    while pending:
        part, stdin, level, wrappers = pending.popleft()
        script.parts.append(part)
        if programs.may_act(part.program.rpartition("/")[2]):  # (program_name, inlined)
            look_inside(part, stdin, level, wrappers)
    if any(p.opaque for p in script.parts):
        # something reads commands it was given: deny rules look at every text that could be it
        script.hidden_texts.extend([*reader.texts, *(" ".join(words[1:]) for words in spoken)])
    away, moved, links = _Events(away_at), _Events(moved_at), _Events(links_at)
    if away.first is not None:  # else nothing moved: every part stays as it is
        script.parts = [_mark_moved(p, away) for p in script.parts]
    if moved.first is not None or links.first is not None:  # else every redirection stays as it is
        script.redirects = [_judge_redirect(r, moved, links) for r in script.redirects]
    return script


def _folder_after(part: Part, here: Path | None, launch: Path | None) -> Path | None:
    """The folder after ``cd X`` / ``pushd X`` when it is known and inside the launch folder, else None."""
    args = [w for w in part.words[1:] if w not in ("-L", "-P", "-e", "-@", "--")]
    if here is None or launch is None or programs.program_name(part.program) == "popd" or len(args) != 1:
        return None
    target = args[0]
    if target == "-" or target.startswith(("~", "+")) or DYN in target:
        return None
    from maia.core.paths import resolve_user_path

    folder = resolve_user_path(target, here)
    # another repository inside the launch folder is another program's configuration (git hooks…)
    inside = programs.inside(str(folder), launch) and not programs.other_repository(str(folder), launch)
    return folder if inside else None


def _opaque(part: Part, why: str) -> Part:
    return Part((DYN,), opaque=True, via=part.program, why=why, position=part.position, group=part.group)


def _add_redirect(
    script: PlainScript, op: str, target: _Word, position: int, group: int, base: str | None = None
) -> None:
    if op not in _OUTPUT and op != "<":
        return
    if op in (">&", "<&") and (target.value.isdigit() or target.value == "-"):
        return  # 2>&1, >&2, >&-: duplicates or closes a descriptor
    certain = True
    why = None
    if not target.quoted and _has_glob(target.syntax):
        certain, why = False, "the target is a glob, only known when it runs"
    (script.inputs if op == "<" else script.redirects).append(
        Redirect(target.value, op, position, group, certain, why, base)
    )


class _Events:
    """Where parts that change folder or create links are: is there one before a position?"""

    def __init__(self, events: list[tuple[int, int]]) -> None:
        self.first = min((at for at, _group in events), default=None)
        self.by_group: dict[int, set[int]] = {}
        for at, group in events:
            if group >= 0:
                self.by_group.setdefault(group, set()).add(at)

    def before(self, position: int, group: int) -> bool:
        """An event earlier in the text, or in the same pipeline (it runs at the same time)."""
        if self.first is None:
            return False
        if self.first < position:
            return True
        same = self.by_group.get(group, ())
        return bool(same) and (len(same) > 1 or position not in same)


def _mark_moved(part: Part, moved: _Events) -> Part:
    if moved.first is None or programs.changes_folder(part) or not moved.before(part.position, part.group):
        return part
    return Part(
        part.words,
        part.assignments,
        part.opaque,
        part.via,
        part.why,
        part.position,
        part.group,
        part.open_words,
        folder_moved=True,
    )


def _judge_redirect(redirect: Redirect, moved: _Events, links: _Events) -> Redirect:
    if not redirect.certain:
        return redirect
    why = None
    if links.before(redirect.position, redirect.group):
        why = "a part before it may create links, so the target may point elsewhere"
    elif not redirect.target.startswith(("/", "~")) and moved.before(redirect.position, redirect.group):
        why = "the folder changed earlier in the command, so the relative target is uncertain"
    if why is None:
        return redirect
    return Redirect(redirect.target, redirect.operator, redirect.position, redirect.group, False, why, redirect.base)
