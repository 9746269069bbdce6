"""Walking a tree as ripgrep does: ``.gitignore`` / ``.ignore`` / ``.rgignore`` honoured, ignored
folders pruned instead of filtered, one combined regular expression per run of patterns."""

from __future__ import annotations

import operator
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

try:  # pathspec ≥ 1.0
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern as _Pattern
except ImportError:  # pragma: no cover - older pathspec
    from pathspec.patterns.gitwildmatch import GitWildMatchPattern as _Pattern

ALWAYS_SKIPPED = frozenset({".git", "node_modules"})
IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")  # later files take precedence


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    """The rules of one ignore file: runs of same-polarity patterns, each run one regex.

    ``base`` is the file's folder relative to the walk root (its patterns apply below it);
    ``prefix`` re-anchors a parent folder's file: the root seen from that folder.
    """

    base: str
    groups: tuple[tuple[re.Pattern[str], bool], ...]  # (combined regex, True = ignore / False = re-include)
    prefix: str = ""

    def decide(self, rel: str) -> bool | None:
        """True: ignored, False: re-included, None: no pattern of this file matches."""
        if self.prefix:
            rel = f"{self.prefix}/{rel}"
        if self.base:
            if not rel.startswith(self.base + "/"):
                return None
            rel = rel[len(self.base) + 1 :]
        for regex, ignore in reversed(self.groups):
            # the whole path must match (folders end with "/"), as ripgrep matches each path on its
            # own: a parent folder's pattern naming an ancestor of the walk root excludes nothing
            if regex.fullmatch(rel):
                return ignore
        return None


def compile_ignore(lines: list[str], base: str = "", prefix: str = "") -> IgnoreFile | None:
    """Compile the lines of an ignore file (comments, blank lines and bad lines skipped)."""
    groups: list[tuple[list[str], bool]] = []
    for raw in lines:
        line = raw.rstrip("\n").rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        try:
            regex, include = _Pattern.pattern_to_regex(line)
        except Exception:  # a malformed line is skipped, as git does
            continue
        if regex is None or include is None:
            continue
        # pathspec writes its regexes for re.match (from the start); here the whole path must match
        if regex == ".":  # "*", "**", "**/*", "/**": everything
            regex = ".+"
        elif regex == "(?P<ps_d>/)":  # "*/", "**/": every folder
            regex = ".+/"
        elif regex.endswith("/"):  # "a/**": everything in a
            regex += ".+"
        regex = regex.replace("(?P<ps_d>/)", "(?:/)")
        try:
            re.compile(regex)
        except re.error:  # a range such as [z-a]: skipped too, as ripgrep skips it
            continue
        if groups and groups[-1][1] == include:
            groups[-1][0].append(regex)
        else:
            groups.append(([regex], include))
    if not groups:
        return None
    compiled = tuple((re.compile("|".join(f"(?:{r})" for r in regexes)), include) for regexes, include in groups)
    return IgnoreFile(base, compiled, prefix)


def read_ignore_files(
    folder: Path | str, base: str = "", prefix: str = "", present: set[str] | None = None
) -> list[IgnoreFile]:
    """The ignore files of one folder, lowest precedence first (``present``: the folder's names, if known)."""
    found: list[IgnoreFile] = []
    for name in IGNORE_FILES:
        if present is not None and name not in present:
            continue
        try:
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
                compiled = compile_ignore(handle.readlines(), base, prefix)
        except OSError:
            continue
        if compiled is not None:
            found.append(compiled)
    return found


def is_ignored(rules: list[IgnoreFile], rel: str) -> bool:
    """Whether the last rule that has an opinion on ``rel`` ignores it (folders end with ``/``)."""
    for rule in reversed(rules):
        verdict = rule.decide(rel)
        if verdict is not None:
            return verdict
    return False


def ancestor_rules(root: Path) -> list[IgnoreFile]:
    """Ignore files of the folders above ``root`` (ripgrep reads them too), outermost first."""
    rules: list[IgnoreFile] = []
    for folder in reversed(root.parents):
        prefix = "/".join(root.parts[len(folder.parts) :])
        rules.extend(read_ignore_files(folder, "", prefix))
    return rules


def walk(root: Path, *, use_ignore: bool = True, max_depth: int = 0) -> Iterator[tuple[str, str, int]]:
    """Files under ``root`` in sorted depth-first order: (path relative to root, absolute path, depth).

    ``.git`` and ``node_modules`` are always skipped; ignored folders are pruned, never entered;
    symbolic links are skipped. ``max_depth`` (0 = no limit) counts levels as ripgrep does.
    """
    limit = max_depth or 1_000_000
    base_rules = ancestor_rules(root) if use_ignore else []
    # an explicit stack of (folder rel + "/", iterator over its sorted entries, its rules, its depth):
    # no recursion, so a file deep in the tree costs no more than one at the top; a folder's
    # iterator keeps its place while a sub-folder is walked
    stack: list[tuple[str, Iterator[os.DirEntry[str]], list[IgnoreFile], int]] = []

    def enter(prefix: str, abs_dir: str, inherited: list[IgnoreFile], depth: int) -> None:
        try:
            with os.scandir(abs_dir) as it:
                entries = sorted(it, key=_name)
        except OSError:
            return
        rules = inherited
        if use_ignore:
            names = {e.name for e in entries if e.name in IGNORE_FILES}
            if names:
                own = read_ignore_files(abs_dir, prefix[:-1], present=names)
                if own:
                    rules = [*inherited, *own]
        stack.append((prefix, iter(entries), rules, depth))

    enter("", str(root), base_rules, 1)
    while stack:
        prefix, entries, rules, depth = stack[-1]
        for entry in entries:
            name = entry.name
            rel = prefix + name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth < limit and name not in ALWAYS_SKIPPED and not (rules and is_ignored(rules, rel + "/")):
                        enter(rel + "/", entry.path, rules, depth + 1)
                        break  # depth-first: the sub-folder now, the rest of this one after it
                    continue
                if entry.is_symlink() or (rules and is_ignored(rules, rel)):
                    continue  # links are not followed, as ripgrep does by default
            except OSError:
                continue
            yield rel, entry.path, depth
        else:
            stack.pop()


_name = operator.attrgetter("name")
