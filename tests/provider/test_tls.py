"""The one TLS context: it verifies as httpx's default one and loads its certificate store only when a
TLS connection starts (an ``http://`` proxy on loopback never pays for it)."""

from __future__ import annotations

import ssl

import certifi
import pytest

from maia.provider.litellm import tls_context


def fresh_context() -> ssl.SSLContext:
    tls_context.cache_clear()
    try:
        return tls_context()
    finally:
        tls_context.cache_clear()


def test_it_verifies_like_the_default_context() -> None:
    context = fresh_context()
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname
    assert context.protocol is ssl.PROTOCOL_TLS_CLIENT


def test_the_store_loads_at_the_first_tls_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    context = fresh_context()
    assert context.cert_store_stats()["x509_ca"] == 0  # nothing read at start-up
    context.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="example.org")  # asyncio's and anyio's way
    expected = ssl.create_default_context(cafile=certifi.where()).cert_store_stats()["x509_ca"]
    assert context.cert_store_stats()["x509_ca"] == expected > 0
    context.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="example.org")
    assert context.cert_store_stats()["x509_ca"] == expected  # once


def test_ssl_cert_file_is_honoured_as_httpx_would(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", "/nonexistent/ca.pem")
    context = fresh_context()
    with pytest.raises(OSError):  # a store that cannot be read fails the connection: nothing goes unverified
        context.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="example.org")
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    context.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="example.org")
    assert context.cert_store_stats()["x509_ca"] > 0
