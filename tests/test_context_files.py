"""Starting context (§11.1) and the system prompt."""

from __future__ import annotations

from pathlib import Path

from maia.context.memory import find_context_file
from maia.context.prompt import build_system_prompt


def test_maia_then_claude_then_agents(tmp_path: Path) -> None:
    assert find_context_file(tmp_path) is None
    (tmp_path / "AGENTS.md").write_text("agents")
    assert find_context_file(tmp_path).text == "agents"  # type: ignore[union-attr]
    (tmp_path / "CLAUDE.md").write_text("claude")
    assert find_context_file(tmp_path).text == "claude"  # type: ignore[union-attr]
    (tmp_path / "MAIA.md").write_text("maia")
    found = find_context_file(tmp_path)
    assert found is not None and (found.path, found.text) == (tmp_path / "MAIA.md", "maia")


def test_parent_folder_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "MAIA.md").write_text("parent")
    child = tmp_path / "child"
    child.mkdir()
    assert find_context_file(child) is None


def test_prompt_sections(tmp_path: Path) -> None:
    (tmp_path / "MAIA.md").write_text("Use tabs.")
    prompt = build_system_prompt(tmp_path, context=find_context_file(tmp_path), skills=[("pdf", "Fill forms")])
    assert prompt.startswith("You are MAIA")
    assert f"Working folder: {tmp_path}" in prompt
    assert "answer" in prompt.lower() and "language the user writes in" in prompt
    assert f"# Instructions ({tmp_path / 'MAIA.md'})\n\nUse tabs." in prompt
    assert prompt.index("# Instructions") < prompt.index("# Skills")
    assert "- pdf: Fill forms" in prompt


def test_summary_replaces_the_project_file(tmp_path: Path) -> None:
    (tmp_path / "MAIA.md").write_text("Use tabs.")
    prompt = build_system_prompt(tmp_path, context=find_context_file(tmp_path), start_context="## Summary\n- x")
    assert "Use tabs." not in prompt
    assert "# Starting context: compacted summary of the previous conversation\n\n## Summary\n- x" in prompt
