"""Looking everywhere for what deny and ask rules name, with tree-sitter-bash (§9.4).

This reading is deliberately pessimistic and is used only to find reasons to deny or ask: every
simple command anywhere in the text becomes a part (pipelines, lists, subshells, groups,
substitutions, function and control-flow bodies, here-documents fed to a shell, commands run by
wrappers such as ``sudo`` or ``sh -c``). Anything the walker does not understand is recorded as
*uncertain*, and a rough lexical reading is added. Allowing is decided elsewhere, by the plain
grammar (:mod:`maia.permissions.plain`), never by this reading.

The walk uses an explicit stack (no recursion limit) and stops at a time budget.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Iterator
from typing import Any

from maia.permissions import programs
from maia.permissions.parts import DYN, Part, Reading, Redirect
from maia.permissions.programs import Argv, Script, Stdin

MAX_DEPTH = 8
BUDGET_SECONDS = 0.4
_OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_DUP_OPS = frozenset({">&", "<&"})

# Kept for callers of the previous module layout.
Analysis = Reading
__all__ = ["DYN", "Analysis", "Part", "Reading", "Redirect", "analyze"]

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


class _Budget:
    """A deadline shared by every nested reading of one command."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.exceeded = False

    def over(self) -> bool:
        if not self.exceeded and time.monotonic() > self.deadline:
            self.exceeded = True
        return self.exceeded


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


@functools.lru_cache(maxsize=256)
def analyze(command: str) -> Reading:
    """Read a command for deny and ask rules. Results are cached: treat them as read-only."""
    budget = _Budget(BUDGET_SECONDS)
    result = _analyze(command, 0, budget)
    if "\\\n" in command and not budget.over():
        # tree-sitter splits a word at a line continuation (``r\<newline>m``) where bash joins it:
        # the joined reading is added too.
        result.merge(_analyze(command.replace("\\\n", ""), 0, budget))
    if budget.exceeded:
        result.uncertain.append("the command is too long or too complex to read within the time budget")
        _lexical_fallback(command, result)
    return result


def _analyze(command: str, depth: int, budget: _Budget) -> Reading:
    reading = Reading()
    if depth > MAX_DEPTH:
        reading.uncertain.append("commands nested too deeply")
        _lexical_fallback(command, reading)
        return reading
    if "\x00" in command:
        reading.uncertain.append("NUL character in the command")
        _lexical_fallback(command.replace("\x00", " "), reading)
        return reading
    source = command.encode("utf-8", errors="surrogatepass")
    tree = _parser().parse(source)
    walker = _Walker(source, reading, depth, budget)
    walker.walk(tree.root_node)
    if tree.root_node.has_error:
        reading.uncertain.append("the command does not parse (unclosed quote or bracket, stray operator…)")
    if reading.uncertain:
        _lexical_fallback(command, reading)
    return reading


_ROUGH_SEPARATORS = re.compile(r"[;&|\n()`{}]+|\$\(|<\(|>\(")
_ROUGH_REDIRECT = re.compile(r"(?:\d+|&)?(?:>>|>\||<>|>&|&>>|&>|>)\s*(['\"]?)([^\s;&|<>()'\"`]+)\1")
_ROUGH_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")


def _lexical_fallback(command: str, reading: Reading) -> None:
    """A rough reading of text the parser could not follow, so deny and ask rules still see it."""
    for piece in _ROUGH_SEPARATORS.split(command):
        words = [w.strip("'\"\\") for w in piece.split()]
        words = [w for w in words if w]
        while words and _ROUGH_ASSIGNMENT.fullmatch(words[0]):
            words.pop(0)
        if words:
            reading.fallback_parts.append(Part(tuple(words)))
    for match in _ROUGH_REDIRECT.finditer(command):
        target = match.group(2)
        if not target.isdigit() and target != "-":
            reading.fallback_redirects.append(Redirect(target, ">"))


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
_ANSI_NUMBER = re.compile(r"x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})")


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
        match = _ANSI_NUMBER.match(body, i + 1)
        if match:
            digits = next(g for g in match.groups() if g)
            code = int(digits, 8 if match.group(4) else 16)
            out.append(chr(code) if code < 0x110000 else DYN)
            i = match.end()
            continue
        return DYN  # \cX and other rare forms: unknown
    return "".join(out)


def _unescape_word(text: str) -> str:
    if "\\" not in text:
        return text
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


_Feed = tuple[Stdin, tuple[Any, ...]] | None  # a node's input, and the pipeline elements before it
_NO_INPUT: tuple[Stdin, tuple[Any, ...]] = (Stdin(), ())


class _Walker:
    def __init__(self, source: bytes, reading: Reading, depth: int, budget: _Budget) -> None:
        self.source = source
        self.reading = reading
        self.depth = depth
        self.budget = budget
        self.stack: list[tuple[Any, _Feed]] = []

    def text(self, node: Any) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")

    # --- structure --------------------------------------------------------------------------

    def walk(self, root: Any) -> None:
        # each entry carries where the node's standard input comes from, so no node ever looks up
        # its parent (tree-sitter finds a parent by walking down from the root: quadratic)
        self.stack = [(root, _NO_INPUT)]
        count = 0
        while self.stack:
            count += 1
            if count % 512 == 0 and self.budget.over():
                return
            node, feed = self.stack.pop()
            self.visit(node, feed)

    def push_children(self, node: Any, feed: _Feed = None) -> None:
        # unnamed children are tokens (operators, quotes): a missing one is seen by has_error
        feed = feed if feed is not None else _NO_INPUT
        self.stack.extend([(child, feed) for child in reversed(node.named_children)])

    def schedule(self, node: Any) -> None:
        self.stack.append((node, _NO_INPUT))

    def visit(self, node: Any, feed: _Feed = None) -> None:
        feed = feed if feed is not None else _NO_INPUT
        kind = node.type
        if node.is_missing or kind == "ERROR":
            self.reading.uncertain.append(f"unparsable text: {self.text(node)[:40]!r}")
            self.push_children(node, feed)
            return
        if kind == "command":
            self.command(node, feed)
        elif kind in ("declaration_command", "unset_command"):
            words = [self.word(child) for child in node.named_children if child.type != "comment"]
            keyword = node.children[0].type if node.children else ""
            self.reading.parts.append(Part(tuple([keyword, *words]), position=node.start_byte))
        elif kind == "test_command":
            for child in node.named_children:
                self.word(child)  # schedules what substitutions inside the test would run
            self.reading.parts.append(Part(tuple(self.text(node).split()), position=node.start_byte))
        elif kind == "file_redirect":
            self.redirect(node)
        elif kind in ("command_substitution", "process_substitution"):
            self.reading.substitution = True
            self.push_children(node)
        elif kind == "pipeline":
            children = node.children
            upstream: list[Any] = []
            entries = []
            for child in children:
                if not child.is_named:
                    entries.append((child, _NO_INPUT))
                    continue
                entries.append((child, feed if not upstream else (Stdin("pipe"), tuple(upstream))))
                upstream.append(child)
            self.stack.extend(reversed(entries))
        elif kind == "redirected_statement":
            own = self.redirected_input(node)
            for child in reversed(node.children):
                is_body = node.field_name_for_child(node.children.index(child)) == "body"
                self.stack.append((child, own or feed if is_body else _NO_INPUT))
        elif kind in _CONTAINERS:
            self.push_children(node, feed)
        elif kind in _LEAVES or not node.is_named:
            return
        else:
            self.reading.uncertain.append(f"unsupported construct: {kind}")
            self.push_children(node, feed)

    def redirected_input(self, node: Any) -> _Feed:
        """A here-document, here-string or ``<`` among a statement's redirections."""
        for child in node.children:
            if child.type == "heredoc_redirect":
                body = next((c for c in _descendants(child) if c.type == "heredoc_body"), None)
                return Stdin("text", self.text(body) if body is not None else ""), ()
            if child.type == "herestring_redirect":
                value = " ".join(self.word(c) for c in child.named_children).replace(DYN, "")
                return Stdin("text", value), ()
            if child.type == "file_redirect" and self.text(child).lstrip("0").startswith("<"):
                return Stdin("file"), ()
        return None

    # --- words ------------------------------------------------------------------------------

    def word(self, node: Any) -> str:
        """The value bash gives a word, DYN for what only the run decides; substitutions are scheduled."""
        kind = node.type
        if kind == "word":
            return _unescape_word(self.text(node))
        if kind == "number":
            return self.text(node)
        if kind == "raw_string":
            return self.text(node)[1:-1]
        if kind == "ansi_c_string":
            return _decode_ansi_c(self.text(node)[2:-1])
        if kind in ("string", "translated_string", "concatenation"):
            # strings hold contents and expansions; concatenations hold words and strings: the
            # nesting is shallow, whatever the command (expansions are scheduled, not entered)
            pieces: list[str] = []
            for child in node.named_children:
                if child.type == "string_content":
                    pieces.append(_unescape_double_quoted(self.text(child)))
                elif child.type in ("string", "translated_string", "word", "raw_string", "number", "ansi_c_string"):
                    pieces.append(self.word(child))
                else:
                    self.schedule(child)
                    pieces.append(DYN)
            return "".join(pieces)
        if kind == "variable_assignment":
            return self.assignment(node)
        if kind == "variable_name":
            return self.text(node)
        self.schedule(node)  # expansions and substitutions: what they run is read later
        return DYN

    # --- commands ---------------------------------------------------------------------------

    def command(self, node: Any, feed: _Feed = None) -> None:
        assignments: list[str] = []
        words: list[str] = []
        for index, child in enumerate(node.children):
            if child.type == "variable_assignment":
                assignments.append(self.assignment(child))
            elif child.type == "command_name":
                words.append("".join(self.word(c) for c in child.named_children) or DYN)
            elif child.type == "file_redirect":
                self.redirect(child)
            elif child.type in ("herestring_redirect", "heredoc_redirect"):
                self.schedule(child)
            elif child.is_named or node.field_name_for_child(index) == "argument":
                if child.type == "comment":
                    continue
                words.append(self.word(child))
        if not words:
            if assignments:
                self.reading.parts.append(Part(tuple(assignments), position=node.start_byte))
            return
        own = self.redirected_input(node)
        self.add_part(Part(tuple(words), tuple(assignments), position=node.start_byte), own or feed or _NO_INPUT)

    def assignment(self, node: Any) -> str:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        name_text = self.text(name) if name is not None else ""
        if name is not None and name.type == "subscript":
            self.schedule(name)  # a[$(cmd)]=… runs cmd
        operator = "+=" if b"+=" in self.source[node.start_byte : node.end_byte][: len(name_text) + 2] else "="
        return name_text + operator + (self.word(value) if value is not None else "")

    def add_part(self, part: Part, feed: tuple[Stdin, tuple[Any, ...]]) -> None:
        """Add a part and what it runs in turn (wrappers, shells), without recursion."""
        stdin, upstream = feed
        todo: list[tuple[Part, Stdin]] = [(part, stdin)]
        steps = 0
        while todo:
            current, current_stdin = todo.pop()
            self.reading.parts.append(current)
            steps += 1
            if steps > 64:
                self.reading.uncertain.append("wrappers nested too deeply")
                return
            for inner in programs.inner_commands(current.words, current_stdin):
                if isinstance(inner, Argv):
                    todo.append(
                        (Part(inner.words, inner.assignments, via=current.program, position=part.position), Stdin())
                    )
                elif isinstance(inner, Script):
                    if DYN in inner.text:
                        self.reading.uncertain.append(f"{current.program} runs a command only known at run time")
                        self.opaque(current, f"{current.program} runs a command only known at run time")
                    else:
                        self.reading.merge(_analyze(inner.text, self.depth + 1, self.budget))
                else:
                    self.opaque(current, inner.reason)
                    self.reading.uncertain.append(inner.reason)
                    texts = list(inner.texts)
                    if current_stdin.kind == "pipe":
                        texts.extend(self.upstream_texts(upstream))
                    for text in texts:
                        self.reading.merge(_analyze(text, self.depth + 1, self.budget))

    def opaque(self, part: Part, why: str) -> None:
        self.reading.parts.append(Part((DYN,), opaque=True, via=part.program, why=why, position=part.position))

    def upstream_texts(self, upstream: tuple[Any, ...]) -> list[str]:
        """Best effort for deny: texts that feed a pipe (here-doc bodies, echo/printf words)."""
        found = []
        for top in upstream:
            for sub in _descendants(top):
                if sub.type == "heredoc_body":
                    found.append(self.text(sub))
                elif sub.type == "command":
                    name = sub.child_by_field_name("name")
                    if name is not None and self.text(name) in ("echo", "printf"):
                        found.append(" ".join(self.word(c) for c in sub.named_children[1:]).replace(DYN, ""))
        return found

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
        if operator in (">&-", "<&-"):
            return
        if destination is None:
            self.reading.uncertain.append(f"redirection without a target: {self.text(node)!r}")
            return
        target = self.word(destination)
        if operator in _DUP_OPS and (target.isdigit() or target == "-"):
            return  # 2>&1, >&2, <&3: duplicates a descriptor, writes no file
        if operator in _OUTPUT_OPS:
            self.reading.redirects.append(Redirect(target, operator, node.start_byte))


def _descendants(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))
