"""gettext catalogs in pure Python: read and write ``.po`` files, compile them into ``.mo`` bytes.

Standard library only and free of other ``maia`` imports: ``setup.py`` loads this file by path to
compile the catalogs while building a wheel, before MAIA or its dependencies are installed.
"""

from __future__ import annotations

import ast
import re
import struct
from dataclasses import dataclass, field

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f", "\v": "\\v"}
_KEYWORD = re.compile(r"^(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+(\".*\")\s*$")


class PoError(ValueError):
    """A catalog that cannot be read: the message names the line."""


@dataclass
class Entry:
    """One message of a catalog: its English text (and plural), its translation(s) and comments."""

    msgid: str
    msgid_plural: str | None = None
    msgstr: str = ""
    msgstr_plural: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)  # "# " lines: the translator's own notes
    extracted: list[str] = field(default_factory=list)  # "#. " lines: notes from the extractor
    references: list[str] = field(default_factory=list)  # "#: " where the message is used
    flags: list[str] = field(default_factory=list)  # "#, " e.g. fuzzy, python-brace-format

    @property
    def fuzzy(self) -> bool:
        """Marked as a guess that still needs review (never compiled)."""
        return "fuzzy" in self.flags

    @property
    def translations(self) -> list[str]:
        """The translated forms: one, or one per plural form."""
        return self.msgstr_plural if self.msgid_plural is not None else [self.msgstr]


def escape(text: str) -> str:
    """``text`` as the inside of a C string literal."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 32 or ord(char) == 127:
            out.append(f"\\{ord(char):03o}")
        else:
            out.append(char)
    return "".join(out)


def _unquote(literal: str, line_number: int) -> str:
    if not (len(literal) >= 2 and literal[0] == literal[-1] == '"'):
        raise PoError(f"line {line_number}: expected a quoted string")
    inside = literal[1:-1]
    if "\\" not in inside and '"' not in inside:
        return inside  # the usual line: no escape to read
    try:
        # a C string literal and a Python one agree on every escape a catalog may hold
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError) as error:
        raise PoError(f"line {line_number}: bad string {literal}: {error}") from None
    assert isinstance(value, str)
    return value


def parse(text: str) -> list[Entry]:
    """The entries of a ``.po`` file, the header (``msgid ""``) included; obsolete ``#~`` entries are dropped."""
    entries: list[Entry] = []
    current: Entry | None = None
    comments: dict[str, list[str]] = {"#": [], "#.": [], "#:": [], "#,": []}
    target: tuple[str, int | None] | None = None  # the field that a continuation line extends
    started = False  # the current entry has its msgid

    def finish() -> None:
        nonlocal current
        if current is not None:
            entries.append(current)
        current = None

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if line.startswith("#~"):
                continue
            if started:
                finish()
                started = False
                target = None
            kind = line[:2] if line[:2] in ("#.", "#:", "#,") else "#"
            content = line[len(kind) :].strip()
            if kind == "#:":
                comments[kind].extend(content.split())
            elif kind == "#,":
                comments[kind].extend(flag.strip() for flag in content.split(",") if flag.strip())
            else:
                comments[kind].append(content)
            continue
        if line.startswith('"'):
            if current is None or target is None:
                raise PoError(f"line {number}: a string outside any entry")
            value = _unquote(line, number)
            name, index = target
            if name == "msgid":
                current.msgid += value
            elif name == "msgid_plural":
                current.msgid_plural = (current.msgid_plural or "") + value
            elif index is None:
                current.msgstr += value
            else:
                current.msgstr_plural[index] += value
            continue
        match = _KEYWORD.match(line)
        if match is None:
            raise PoError(f"line {number}: cannot read {line[:60]!r}")
        keyword, index_text, literal = match.groups()
        value = _unquote(literal, number)
        if keyword == "msgctxt":
            raise PoError(f"line {number}: msgctxt is not used by MAIA")
        if keyword == "msgid":
            if started:
                finish()
            current = Entry(
                msgid=value,
                comments=comments["#"],
                extracted=comments["#."],
                references=comments["#:"],
                flags=comments["#,"],
            )
            comments = {"#": [], "#.": [], "#:": [], "#,": []}
            started = True
            target = ("msgid", None)
        elif current is None:
            raise PoError(f"line {number}: {keyword} before msgid")
        elif keyword == "msgid_plural":
            current.msgid_plural = value
            target = ("msgid_plural", None)
        elif index_text is None:
            current.msgstr = value
            target = ("msgstr", None)
        else:
            index = int(index_text)
            if index != len(current.msgstr_plural):
                raise PoError(f"line {number}: msgstr[{index}] out of order")
            current.msgstr_plural.append(value)
            target = ("msgstr", index)
    finish()
    return entries


def _quoted(keyword: str, text: str) -> list[str]:
    """``keyword "text"``, split after each newline the way xgettext writes long strings."""
    pieces = [escape(piece) for piece in re.split(r"(?<=\n)", text) if piece]
    if len(pieces) <= 1:
        return [f'{keyword} "{pieces[0] if pieces else ""}"']
    return [f'{keyword} ""', *(f'"{piece}"' for piece in pieces)]


def dump(entries: list[Entry]) -> str:
    """The ``.po`` text of ``entries`` (deterministic: the same entries always give the same bytes)."""
    blocks = []
    for entry in entries:
        lines = [f"# {c}".rstrip() for c in entry.comments]
        lines += [f"#. {c}".rstrip() for c in entry.extracted]
        lines += [f"#: {r}" for r in entry.references]
        if entry.flags:
            lines.append("#, " + ", ".join(entry.flags))
        lines += _quoted("msgid", entry.msgid)
        if entry.msgid_plural is not None:
            lines += _quoted("msgid_plural", entry.msgid_plural)
            forms = entry.msgstr_plural or ["", ""]
            for index, form in enumerate(forms):
                lines += _quoted(f"msgstr[{index}]", form)
        else:
            lines += _quoted("msgstr", entry.msgstr)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def compile_mo(entries: list[Entry]) -> bytes:
    """The ``.mo`` bytes of ``entries``: translated, non-fuzzy entries only (as msgfmt does), keys sorted."""
    catalog: dict[bytes, bytes] = {}
    for entry in entries:
        if entry.fuzzy and entry.msgid:
            continue
        forms = entry.translations
        if not forms or not all(forms):
            continue
        msgid = entry.msgid if entry.msgid_plural is None else f"{entry.msgid}\0{entry.msgid_plural}"
        catalog[msgid.encode("utf-8")] = "\0".join(forms).encode("utf-8")
    keys = sorted(catalog)
    ids = b"".join(k + b"\0" for k in keys)
    strs = b"".join(catalog[k] + b"\0" for k in keys)
    header_size = 7 * 4
    originals_at = header_size
    translations_at = originals_at + len(keys) * 8
    ids_at = translations_at + len(keys) * 8
    strs_at = ids_at + len(ids)
    originals: list[int] = []
    translations: list[int] = []
    id_offset = str_offset = 0
    for key in keys:
        originals += [len(key), ids_at + id_offset]
        translations += [len(catalog[key]), strs_at + str_offset]
        id_offset += len(key) + 1
        str_offset += len(catalog[key]) + 1
    header = struct.pack("<7I", 0x950412DE, 0, len(keys), originals_at, translations_at, 0, 0)
    table = struct.pack(f"<{len(originals)}I", *originals) + struct.pack(f"<{len(translations)}I", *translations)
    return header + table + ids + strs
