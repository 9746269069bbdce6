"""The translation catalogs: extract MAIA's messages, keep every ``.po`` in step, check them.

``python -m maia.i18n.tool update`` (after adding or changing a message) rewrites
``maia/locale/maia.pot`` from the sources and merges it into each ``maia/locale/<lang>/LC_MESSAGES/maia.po``
(new messages untranslated, a message whose English changed a little keeps its old translation marked
``fuzzy``); ``check`` exits 1 and says what is missing; ``extract`` only rewrites the ``.pot``;
``compile`` writes the ``.mo`` files. A source checkout is needed (the tool reads ``maia/`` and ``commands/``).

What counts as a message (found with ``ast``, never by running the code):

- the literal argument of ``_("…")`` and ``N_("…")`` and the two of ``ngettext("…", "…", n)`` in a module
  that imports them from ``maia.i18n`` (implicitly concatenated literals are one string);
- the docstring of each Click command in ``commands/`` without an explicit ``help=`` (Click shows it as
  the command's help; ``commands/__init__.py`` translates it when the command is loaded);
- the literals of :data:`OTHER_SOURCES` (text kept in a plain variable and translated where shown);
- :data:`CLICK_MESSAGES`, Click's own strings that a MAIA user sees (it looks them up in MAIA's domain).
"""

from __future__ import annotations

import ast
import difflib
import re
import string
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from maia.i18n import po

REPOSITORY = Path(__file__).resolve().parents[2]
SOURCE_FOLDERS = ("maia", "commands")
LOCALE = REPOSITORY / "maia" / "locale"
TEMPLATE = LOCALE / "maia.pot"
CLICK = "(click)"

# Strings a module keeps in a plain variable and translates where it shows them: (file, literal).
OTHER_SOURCES: tuple[tuple[str, str], ...] = (
    # TerminalUI's input box: the placeholder's default lives in the store, render.py calls _() on it
    ("maia/frontends/chat/store.py", "Your request — /help: help · @: files · Shift+Tab: mode · Ctrl+C: quit"),
)

# Calls of _() whose argument is not a literal, and where their messages come from.
DYNAMIC_CALLS: dict[tuple[str, str], str] = {
    ("commands/__init__.py", "_(SUBCOMMANDS[name][1])"): "the one-line helps in SUBCOMMANDS, marked with N_()",
    ("commands/__init__.py", "_(english)"): "the commands' docstrings, extracted from commands/",
    ("maia/frontends/chat/render.py", "_(store.placeholder)"): "OTHER_SOURCES (maia/frontends/chat/store.py)",
}

# Click's own messages that MAIA's users meet: help pages, usage errors, prompts. (msgid, plural)
CLICK_MESSAGES: tuple[tuple[str, str | None], ...] = (
    ("Usage:", None),
    ("Options", None),
    ("Commands", None),
    ("Show this message and exit.", None),
    ("Show the version and exit.", None),
    ("Error: {message}", None),
    ("Try '{command} {option}' for help.", None),
    ("Aborted!", None),
    ("Missing command.", None),
    ("Missing argument", None),
    ("Missing option", None),
    ("Missing parameter", None),
    ("Missing parameter: {param_name}", None),
    ("Missing {param_type}", None),
    ("Invalid value: {message}", None),
    ("Invalid value for {param_hint}: {message}", None),
    ("No such option {name!r}.", None),
    ("No such command {name!r}.", None),
    ("Did you mean {possibility}?", "(Did you mean one of: {possibilities}?)"),
    ("Got unexpected extra argument ({args})", "Got unexpected extra arguments ({args})"),
    ("Option {name!r} does not take a value.", None),
    ("Option {name!r} requires an argument.", "Option {name!r} requires {nargs} arguments."),
    ("Argument {name!r} takes {nargs} values.", None),
    ("{value!r} is not {choice}.", "{value!r} is not one of {choices}."),
    ("{value!r} is not a valid {number_type}.", None),
    ("{value} is not in the range {range}.", None),
    ("{value!r} is not a valid boolean. Recognized values: {states}", None),
    ("Choose from:\n\t{choices}", None),
    ("default: {default}", None),
    ("env var: {var}", None),
    ("{name} {filename!r} does not exist.", None),
    ("{name} {filename!r} is a file.", None),
    ("{name} {filename!r} is a directory.", None),
    ("{name} {filename!r} is not readable.", None),
    ("{name} {filename!r} is not writable.", None),
    ("file", None),
    ("directory", None),
    ("path", None),
    ("Could not open file {filename!r}: {message}", None),
    ("Do you want to continue?", None),
    ("Repeat for confirmation", None),
    ("Error: The two entered values do not match.", None),
    ("Error: invalid input", None),
    ("Shell completion is not supported for Bash versions older than 4.4.", None),
    ("Couldn't detect Bash version, shell completion is not supported.", None),
)

_POT_HEADER = (
    "Project-Id-Version: maia\n"
    "MIME-Version: 1.0\n"
    "Content-Type: text/plain; charset=UTF-8\n"
    "Content-Transfer-Encoding: 8bit\n"
    "Plural-Forms: nplurals=INTEGER; plural=EXPRESSION;\n"
)


@dataclass
class Message:
    """One message to translate, with the files that use it."""

    msgid: str
    plural: str | None = None
    references: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Extraction:
    """What the sources hold: the messages, and the ``_()`` calls whose argument is not a literal."""

    messages: list[Message]
    dynamic: list[tuple[str, int, str]]  # file, line, the call as written
    problems: list[str]


def _i18n_names(tree: ast.Module) -> dict[str, str]:
    """Local name → maia.i18n function, for ``from maia.i18n import _, ngettext`` (or relative)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "i18n":
            for alias in node.names:
                if alias.name in ("_", "N_", "ngettext"):
                    names[alias.asname or alias.name] = alias.name
    return names


def _literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is_click_command(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Decorated with ``@x.command(…)`` / ``@x.group(…)`` and no ``help=``: Click shows its docstring."""
    for decorator in function.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        target = call.func if call is not None else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in ("command", "group"):
            return call is None or not any(k.arg == "help" for k in call.keywords)
    return False


def _source_files(root: Path) -> list[Path]:
    files: list[Path] = []
    for folder in SOURCE_FOLDERS:
        files.extend(sorted((root / folder).rglob("*.py")))
    return files


def extract(root: Path = REPOSITORY) -> Extraction:
    """Every message of the sources under ``root``, in a stable order."""
    found: dict[tuple[str, str | None], Message] = {}
    dynamic: list[tuple[str, int, str]] = []
    problems: list[str] = []

    def add(msgid: str, plural: str | None, where: str, note: str | None = None) -> None:
        message = found.setdefault((msgid, plural), Message(msgid, plural))
        if where not in message.references:
            message.references.append(where)
        if note and note not in message.notes:
            message.notes.append(note)

    for path in _source_files(root):
        relative = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=relative)
        names = _i18n_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
                kind = names[node.func.id]
                needed = 2 if kind == "ngettext" else 1
                texts = [_literal(a) for a in node.args[:needed]]
                if len(node.args) < needed or any(t is None for t in texts):
                    dynamic.append((relative, node.lineno, ast.unparse(node)))
                    continue
                if kind == "ngettext":
                    add(str(texts[0]), texts[1], relative)
                else:
                    add(str(texts[0]), None, relative)
            elif (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and relative.startswith("commands/")
                and _is_click_command(node)
            ):
                doc = ast.get_docstring(node, clean=True)
                if doc:
                    add(doc, None, relative, "the help of a command (its docstring)")
    for relative, literal in OTHER_SOURCES:
        path = root / relative
        tree = ast.parse(path.read_text(encoding="utf-8")) if path.is_file() else ast.Module(body=[], type_ignores=[])
        if any(_literal(n) == literal for n in ast.walk(tree) if isinstance(n, ast.Constant)):
            add(literal, None, relative)
        else:
            problems.append(f"OTHER_SOURCES: {relative} no longer holds {literal!r} (update maia/i18n/tool.py)")
    for msgid, plural in CLICK_MESSAGES:
        add(msgid, plural, CLICK, "Click's own message")
    for where, line, call in dynamic:
        if (where, call) not in DYNAMIC_CALLS:
            problems.append(
                f"{where}:{line}: {call} translates a value the catalog cannot know: pass a literal, "
                "or mark the literal with N_() where it is written"
            )
    messages = sorted(found.values(), key=lambda m: (m.references[0] == CLICK, m.references[0], m.msgid))
    return Extraction(messages, dynamic, problems)


def _flags(message: Message) -> list[str]:
    texts = [message.msgid] + ([message.plural] if message.plural else [])
    return ["python-brace-format"] if any(placeholders(t) for t in texts) else []


def template_entries(extraction: Extraction) -> list[po.Entry]:
    """The ``.pot``: the header, then one untranslated entry per message."""
    note = "MAIA's messages. Generated: python -m maia.i18n.tool update"
    header = po.Entry(msgid="", msgstr=_POT_HEADER, comments=[note])
    entries = [header]
    for message in extraction.messages:
        entries.append(
            po.Entry(
                msgid=message.msgid,
                msgid_plural=message.plural,
                msgstr_plural=["", ""] if message.plural else [],
                extracted=list(message.notes),
                references=list(message.references),
                flags=_flags(message),
            )
        )
    return entries


def placeholders(text: str) -> list[str]:
    """The ``.format`` fields of ``text`` as written (``{name}``, ``{name!r}``, ``{n:,}``), plus ``%`` ones, sorted."""
    fields: list[str] = []
    try:
        for _literal_text, name, spec, conversion in string.Formatter().parse(text):
            if name is not None:
                field_text = name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
                fields.append("{" + field_text + "}")
    except ValueError:
        fields.append("<unbalanced braces>")
    fields.extend(re.findall(r"%(?:\([\w]+\))?[-#0 +]*\d*(?:\.\d+)?[sdifr%]", text))
    return sorted(fields)


def _plural_count(header: str) -> int:
    match = re.search(r"nplurals\s*=\s*(\d+)", header)
    return int(match.group(1)) if match else 2


def catalogs(root: Path = REPOSITORY) -> list[Path]:
    """The ``.po`` file of each language."""
    return sorted((root / "maia" / "locale").glob("*/LC_MESSAGES/maia.po"))


def check_catalog(path: Path, template: list[po.Entry]) -> list[str]:
    """What is wrong with one ``.po`` against the template: missing, extra, untranslated, fuzzy, placeholders."""
    problems: list[str] = []
    name = "/".join(path.parts[-5:])  # maia/locale/<lang>/LC_MESSAGES/maia.po
    entries = po.parse(path.read_text(encoding="utf-8"))
    header = next((e for e in entries if e.msgid == ""), None)
    if header is None:
        return [f'{name}: no header entry (msgid "")']
    nplurals = _plural_count(header.msgstr)
    wanted = {(e.msgid, e.msgid_plural) for e in template if e.msgid}
    have = {(e.msgid, e.msgid_plural): e for e in entries if e.msgid}
    for key in sorted(wanted - have.keys()):
        problems.append(f"{name}: missing {key[0]!r} (run python -m maia.i18n.tool update)")
    for key in sorted(have.keys() - wanted):
        problems.append(f"{name}: {key[0]!r} is no longer used (run python -m maia.i18n.tool update)")
    for key in sorted(wanted & have.keys()):
        entry = have[key]
        problems.extend(f"{name}: {problem}" for problem in entry_problems(entry, nplurals))
    return problems


def entry_problems(entry: po.Entry, nplurals: int) -> list[str]:
    """Untranslated, fuzzy, incomplete plural or placeholders that differ from the English."""
    label = repr(entry.msgid if len(entry.msgid) < 70 else entry.msgid[:67] + "...")
    if entry.fuzzy:
        return [f"{label} is fuzzy: review the translation, then remove the fuzzy flag"]
    forms = entry.translations
    if entry.msgid_plural is not None and len(forms) != nplurals:
        return [f"{label} needs {nplurals} plural forms, has {len(forms)}"]
    if not forms or not all(form.strip() for form in forms):
        return [f"{label} has no translation"]
    problems: list[str] = []
    if entry.msgid_plural is None:
        if placeholders(forms[0]) != placeholders(entry.msgid):
            problems.append(
                f"{label}: placeholders {placeholders(forms[0])} differ from the English {placeholders(entry.msgid)}"
            )
    else:
        known = set(placeholders(entry.msgid)) | set(placeholders(entry.msgid_plural))
        for index, form in enumerate(forms):
            if not set(placeholders(form)) <= known:
                problems.append(f"{label}: form {index} has placeholders the English lacks: {placeholders(form)}")
        if placeholders(forms[-1]) != placeholders(entry.msgid_plural):
            problems.append(f"{label}: the last form's placeholders differ from the English plural's")
    for form in forms:
        if form.count("\b") != entry.msgid.count("\b"):
            problems.append(f"{label}: keep Click's \\b (do-not-rewrap) markers as in the English")
        # fragments are joined to other text: " (project)", "…\n" keep their spaces and line breaks
        for side, english, translated in (
            ("leading", _leading(entry.msgid), _leading(form)),
            ("trailing", _trailing(entry.msgid), _trailing(form)),
        ):
            french_space = side == "leading" and not english and translated == " " and form.lstrip()[:1] in ";:!?"
            if english != translated and not french_space:  # French puts a space before ; : ! ?
                problems.append(f"{label}: {side} whitespace {translated!r} differs from the English {english!r}")
    return problems


def _leading(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]


def _trailing(text: str) -> str:
    return text[len(text.rstrip()) :]


def check(root: Path = REPOSITORY) -> list[str]:
    """Every problem of the catalogs under ``root`` (empty: all messages translated, all files up to date)."""
    extraction = extract(root)
    problems = list(extraction.problems)
    template = template_entries(extraction)
    pot = root / "maia" / "locale" / "maia.pot"
    if not pot.is_file() or pot.read_text(encoding="utf-8") != po.dump(template):
        problems.append("maia/locale/maia.pot is not up to date (run python -m maia.i18n.tool update)")
    for path in catalogs(root):
        problems.extend(check_catalog(path, template))
    return problems


def merge(template: list[po.Entry], old: list[po.Entry]) -> tuple[list[po.Entry], int, int]:
    """The template's messages with the old translations: (entries, new untranslated, fuzzy guesses)."""
    header = next((e for e in old if e.msgid == ""), None)
    previous = {(e.msgid, e.msgid_plural): e for e in old if e.msgid}
    used = {(e.msgid, e.msgid_plural) for e in template if e.msgid}
    unused = {key: entry for key, entry in previous.items() if key not in used and any(entry.translations)}
    result = [header or template[0]]
    new = guessed = 0
    for entry in template[1:]:
        key = (entry.msgid, entry.msgid_plural)
        merged = po.Entry(
            msgid=entry.msgid,
            msgid_plural=entry.msgid_plural,
            extracted=list(entry.extracted),
            references=list(entry.references),
            flags=list(entry.flags),
        )
        source = previous.get(key)
        if source is None:
            close = difflib.get_close_matches(entry.msgid, [k[0] for k in unused], n=1, cutoff=0.8)
            if close:
                source = next(e for k, e in unused.items() if k[0] == close[0])
                merged.flags.insert(0, "fuzzy")
                guessed += 1
            else:
                new += 1
        elif source.fuzzy:
            merged.flags.insert(0, "fuzzy")
        if source is not None:
            merged.comments = list(source.comments)
            merged.msgstr = source.msgstr if entry.msgid_plural is None else ""
            if entry.msgid_plural is not None:
                merged.msgstr_plural = list(source.msgstr_plural) or [source.msgstr, source.msgstr]
        elif entry.msgid_plural is not None:
            merged.msgstr_plural = ["", ""]
        result.append(merged)
    return result, new, guessed


def compile_catalogs(root: Path = REPOSITORY) -> list[Path]:
    """Write the ``.mo`` beside each ``.po``; the files written."""
    written = []
    for path in catalogs(root):
        mo = path.with_suffix(".mo")
        mo.write_bytes(po.compile_mo(po.parse(path.read_text(encoding="utf-8"))))
        written.append(mo)
    return written


def update(root: Path = REPOSITORY) -> list[str]:
    """Rewrite the ``.pot``, merge it into every ``.po``, compile them; lines to print."""
    extraction = extract(root)
    template = template_entries(extraction)
    pot = root / "maia" / "locale" / "maia.pot"
    pot.parent.mkdir(parents=True, exist_ok=True)
    pot.write_text(po.dump(template), encoding="utf-8")
    lines = [f"{pot.relative_to(root)}: {len(template) - 1} messages"]
    for path in catalogs(root):
        entries, new, guessed = merge(template, po.parse(path.read_text(encoding="utf-8")))
        path.write_text(po.dump(entries), encoding="utf-8")
        todo = sum(1 for e in entries[1:] if e.fuzzy or not all(e.translations))
        lines.append(f"{path.relative_to(root)}: {new} new, {guessed} fuzzy guesses, {todo} to translate or review")
    compile_catalogs(root)
    lines.extend(extraction.problems)
    return lines


def _print(lines: Iterable[str], stream: object = sys.stdout) -> None:
    for line in lines:
        print(line, file=stream)  # type: ignore[call-overload]


def main(argv: list[str] | None = None) -> int:
    """``python -m maia.i18n.tool extract|update|check|compile``."""
    args = sys.argv[1:] if argv is None else argv
    command = args[0] if args else "check"
    if command == "extract":
        extraction = extract()
        TEMPLATE.parent.mkdir(parents=True, exist_ok=True)
        TEMPLATE.write_text(po.dump(template_entries(extraction)), encoding="utf-8")
        _print([f"{TEMPLATE.relative_to(REPOSITORY)}: {len(extraction.messages)} messages", *extraction.problems])
        return 1 if extraction.problems else 0
    if command == "update":
        _print(update())
        return 0
    if command == "compile":
        _print(str(p.relative_to(REPOSITORY)) for p in compile_catalogs())
        return 0
    if command == "check":
        problems = check()
        _print(problems, sys.stderr)
        return 1 if problems else 0
    print("usage: python -m maia.i18n.tool extract|update|check|compile", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
