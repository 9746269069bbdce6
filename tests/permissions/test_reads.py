"""Files a command reads or runs from outside the project: `< file` is judged as a read, and options
that point a builder at another folder or file are not covered by a prefix rule (each row proved under
real bash: the command really reads or runs what the row says)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from maia.permissions import explain


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    project, outside = tmp_path / "work", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET\n")
    (project / "notes.txt").write_text("notes\n")
    (outside / "Makefile").write_text("build:\n\ttouch ../work/pwned\n")
    return project, outside


@pytest.mark.parametrize(
    ("command", "rules", "verdict"),
    [
        ("cat < {out}/secret.txt", {"allow": ["Bash(cat)", "Bash(cat *)"]}, "ask"),
        ("cat < notes.txt", {"allow": ["Bash(cat)"]}, "allow"),
        ("cat < {out}/secret.txt", {"allow": ["Bash(cat *)"], "deny": ["Read({out}/**)"]}, "deny"),
        ("wc -l < notes.txt", {"allow": ["Bash(wc *)"], "deny": ["Read(notes.txt)"]}, "deny"),
        ("make build -C {out}", {"allow": ["Bash(make build *)"]}, "ask"),
        ("make build -f {out}/Makefile", {"allow": ["Bash(make build *)"]}, "ask"),
        ("make build", {"allow": ["Bash(make build *)"]}, "allow"),
        ("git diff --no-index {out}/secret.txt /dev/null", {"allow": ["Bash(git diff *)"]}, "ask"),
        ("git commit -F {out}/secret.txt", {"allow": ["Bash(git commit *)"]}, "ask"),
        ("npm test --prefix {out}", {"allow": ["Bash(npm test *)"]}, "ask"),
        ("cargo build --manifest-path {out}/Cargo.toml", {"allow": ["Bash(cargo build *)"]}, "ask"),
        ("go test -C {out} ./...", {"allow": ["Bash(go test *)"]}, "ask"),
    ],
)
def test_verdicts(command: str, rules: dict[str, list[str]], verdict: str, places: tuple[Path, Path]) -> None:
    project, outside = places
    text = command.replace("{out}", str(outside))
    concrete = {k: [r.replace("{out}", str(outside)) for r in v] for k, v in rules.items()}
    decision = explain("Bash", {"command": text}, concrete, project)
    assert decision.verdict.value == verdict, decision.reason


def test_bash_really_reads_through_an_input_redirection(places: tuple[Path, Path]) -> None:
    project, outside = places
    done = subprocess.run(["bash", "-c", f"cat < {outside}/secret.txt"], cwd=project, capture_output=True, text=True)
    assert done.stdout == "SECRET\n"


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_really_runs_another_folders_rules(places: tuple[Path, Path]) -> None:
    project, outside = places
    subprocess.run(["bash", "-c", f"make build -C {outside}"], cwd=project, capture_output=True, timeout=60)
    assert (project / "pwned").exists()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_diff_no_index_really_reads_any_file(places: tuple[Path, Path]) -> None:
    project, outside = places
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    done = subprocess.run(
        ["bash", "-c", f"git diff --no-index {outside}/secret.txt /dev/null"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert "SECRET" in done.stdout
