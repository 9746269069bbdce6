"""Shared pieces of the sandbox tests: the kernel's Landlock level and a policy over test folders."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from maia.process.sandbox import namespaces
from maia.process.sandbox.policy import SandboxPolicy, landlock_abi

ABI = landlock_abi()[0]
needs_landlock = pytest.mark.skipif(ABI < 1, reason=f"no Landlock on this kernel: {landlock_abi()[1]}")
needs_network_rules = pytest.mark.skipif(ABI < 4, reason="TCP rules need Landlock ABI 4")
needs_scopes = pytest.mark.skipif(ABI < 6, reason="signal scoping needs Landlock ABI 6")

BWRAP, BWRAP_REASON = namespaces.check(remember=False)  # collection time: MAIA_HOME is the real one
# On CI (CI=true) bubblewrap is installed by .ci/run: a test that needs it fails there instead of skipping.
needs_bwrap = pytest.mark.skipif(
    BWRAP is None and os.environ.get("CI", "").lower() != "true",
    reason=f"the namespace sandbox is not available: {BWRAP_REASON} (apt install bubblewrap)",
)


@pytest.fixture
def landlock_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This test sees a machine without bubblewrap (MAIA_SANDBOX_NAMESPACES=off)."""
    monkeypatch.setenv(namespaces.DISABLE_VARIABLE, "off")
    namespaces.probe.cache_clear()
    yield
    monkeypatch.undo()
    namespaces.probe.cache_clear()


@dataclass(frozen=True)
class Areas:
    """A launch folder, a private temporary folder and a folder outside both (none under another)."""

    launch: Path
    temp: Path
    outside: Path

    def policy(self, **changes: Any) -> SandboxPolicy:
        """workspace-write over the launch folder and the private temporary folder, with ``changes``."""
        return replace(SandboxPolicy("workspace-write", self.launch, temp_dirs=(self.temp,)), **changes)


def make_areas(base: Path) -> Areas:
    """Three sibling folders under ``base`` (the system's /tmp is not writable in these policies)."""
    areas = Areas(base / "launch", base / "tmp", base / "outside")
    for path in (areas.launch, areas.temp, areas.outside):
        path.mkdir()
    return areas
