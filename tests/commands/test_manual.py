"""Man pages: regenerated from the commands, they equal the committed ones, and agree with --help."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from maia.commands import cli
from maia.commands.manual import page_name, pages, stale

MAN = Path(__file__).resolve().parents[2] / "man"


def test_the_committed_pages_are_up_to_date() -> None:
    different = stale(MAN)
    assert different == [], f"stale man pages {different}: run python -m maia.commands.manual"


@pytest.mark.parametrize("name", sorted(pages()))
def test_each_page_agrees_with_the_help(name: str) -> None:
    path = name.removesuffix(".1").split("-")
    text = pages()[name]
    help_text = CliRunner().invoke(cli, [*path[1:], "--help"]).output
    options = re.findall(r"^\s+((?:-\w, )?--[\w-]+)", help_text, re.MULTILINE)
    assert options, help_text
    for option in options:
        assert option.replace("-", "\\-") in text, (name, option)
    assert text.startswith(f".TH {name.removesuffix('.1').upper().replace('-', chr(92) + '-')} 1")
    assert ".SH EXIT STATUS" in text and page_name(path) == name


@pytest.mark.skipif(shutil.which("groff") is None and shutil.which("man") is None, reason="no roff formatter")
def test_the_pages_format_without_warnings(tmp_path: Path) -> None:
    formatter = ["groff", "-man", "-Tutf8", "-ww", "-z"] if shutil.which("groff") else ["man", "-l", "-Tutf8"]
    for name in ("maia.1", "maia-chat.1", "maia-sessions-list.1"):
        done = subprocess.run([*formatter, str(MAN / name)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "warning" not in done.stderr.lower(), done.stderr
