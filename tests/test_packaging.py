"""``pip install .`` (not editable) ships every package: setup.cfg lists each folder of maia/ explicitly."""

from __future__ import annotations

import configparser
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _listed() -> set[str]:
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg", encoding="utf-8")
    return {line.strip() for line in config["options"]["packages"].splitlines() if line.strip()}


def _folders() -> set[str]:
    found = {"maia", "maia.commands"}
    for folder in (REPO / "maia").rglob("*"):
        relative = folder.relative_to(REPO / "maia")
        # compiled catalogs ship as package data of maia (locale/*/LC_MESSAGES/*.mo), not as packages
        if not folder.is_dir() or "__pycache__" in relative.parts or relative.parts[0] == "locale":
            continue
        found.add(".".join(("maia", *relative.parts)))
    return found


def test_every_folder_of_the_package_is_installed() -> None:
    missing = _folders() - _listed()
    assert not missing, f"add to [options] packages in setup.cfg, or `pip install .` leaves them out: {missing}"


def test_setup_cfg_lists_no_folder_that_does_not_exist() -> None:
    assert not _listed() - _folders()


def test_the_json_schemas_are_package_data() -> None:
    """maia/data/schemas/*.schema.json ship in the wheel (MAIA validates with them; editors point at them)."""
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg", encoding="utf-8")
    patterns = config["options.package_data"]["maia.data.schemas"].split(",")
    shipped = {p.name for pattern in patterns for p in (REPO / "maia" / "data" / "schemas").glob(pattern.strip())}
    assert shipped == {"tool.schema.json", "mcp.schema.json", "agent-header.schema.json"}
