"""WebFetch: an address that is not globally reachable asks under a broad allow, the shared address space
(100.64.0.0/10: carrier NAT, VPNs, a cloud's metadata service) included (from the security review)."""

from __future__ import annotations

from pathlib import Path

from maia.permissions.engine import explain


def test_shared_address_space_asks_under_a_broad_allow(tmp_path: Path) -> None:
    rules = {"allow": ["WebFetch"]}
    for url in ("http://100.100.100.200/latest/meta-data", "http://100.64.0.1/", "http://192.0.2.1/"):
        assert explain("WebFetch", {"url": url}, rules, tmp_path).verdict.value == "ask", url
    assert explain("WebFetch", {"url": "http://8.8.8.8/"}, rules, tmp_path).verdict.value == "allow"
