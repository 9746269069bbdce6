"""Every relative link in docs/*.md and README.md points to a file that exists (and a heading, for #anchors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.markdown import REPO, headings, numbered_prose, pages, slug

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link outside code."""
    found = []
    for number, line in numbered_prose(path):
        without_code = re.sub(r"`[^`]*`", "", line)
        found.extend((number, target) for target in _LINK.findall(without_code))
    return found


@pytest.mark.parametrize("page", [*pages(), REPO / "README.md"], ids=lambda p: p.name)
def test_relative_links_point_to_files_and_headings(page: Path) -> None:
    problems = []
    for number, target in links(page):
        if re.match(r"^[a-z]+:", target):  # https:, mailto:
            continue
        file_part, _hash, anchor = target.partition("#")
        destination = (page.parent / file_part).resolve() if file_part else page
        where = f"{page.relative_to(REPO)}:{number}: {target}"
        is_page = destination.suffix == ".md" and destination.is_file()
        anchors = {slug(text) for _level, text in headings(destination)} if is_page else set()
        if not destination.exists():
            problems.append(f"{where}: no such file")
        elif anchor and is_page and anchor not in anchors:
            problems.append(f"{where}: no heading with that anchor")
    assert not problems, "\n".join(problems)


def test_the_checker_sees_links() -> None:
    found = [target for page in pages() for _n, target in links(page)]
    assert "permissions.md" in found and any("#" in t for t in found) and len(found) >= 40
    assert slug("3. Write `~/.maia/settings.json`") == "3-write-maiasettingsjson"
