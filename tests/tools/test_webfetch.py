"""WebFetch against a real local HTTP server."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from maia.core.contracts import ToolContext
from maia.tools.base import ToolError
from maia.tools.webfetch import UNTRUSTED, WebFetchTool

PAGE = """<!doctype html><html><head><title>The  Title</title><style>body{color:red}</style>
<script>alert('x')</script></head><body><h1>Main</h1><h2>Sub</h2><p>Some <b>bold</b> and <a href="/x">a link</a>.</p>
<ul><li>one</li><li>two</li></ul><ol><li>first</li><li>second</li></ol>
<pre><code>def f():
    return 1</code></pre><noscript>enable js</noscript><iframe src="x"></iframe><svg><text>svg</text></svg>
<template><p>tpl</p></template></body></html>"""


async def fetch(url: str, **extra: object) -> str:
    return await WebFetchTool().execute({"url": url, **extra}, ToolContext(launch=Path(".")))


async def test_html_becomes_markdown_with_header(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/page").respond_with_data(PAGE, content_type="text/html; charset=utf-8")
    url = httpserver.url_for("/page")
    out = await fetch(url)
    assert out == (
        f"URL: {url}\nType: text/html\nTitle: The Title\n{UNTRUSTED}\n\n"
        "# Main\n\n## Sub\n\nSome **bold** and [a link](/x).\n\n- one\n- two\n\n1. first\n2. second\n\n"
        "```\ndef f():\n    return 1\n```"
    )


async def test_json_is_pretty_printed_and_text_kept(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/j").respond_with_json({"b": [1, 2], "a": "é"})
    httpserver.expect_request("/t").respond_with_data("plain\ntext", content_type="text/plain")
    out = await fetch(httpserver.url_for("/j"))
    assert out.endswith('\n\n{\n  "b": [\n    1,\n    2\n  ],\n  "a": "é"\n}')
    assert (await fetch(httpserver.url_for("/t"))).endswith("\n\nplain\ntext")


async def test_same_host_redirect_is_followed(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/old").respond_with_data("", status=301, headers={"Location": "/new"})
    httpserver.expect_request("/new").respond_with_data("arrived", content_type="text/plain")
    out = await fetch(httpserver.url_for("/old"))
    assert out.startswith(f"URL: {httpserver.url_for('/new')}\n") and out.endswith("arrived")


async def test_cross_host_redirect_is_returned_not_followed(httpserver: HTTPServer) -> None:
    assert "localhost" in httpserver.url_for("/")  # the target below is another host name
    target = f"http://127.0.0.1:{httpserver.port}/elsewhere"
    httpserver.expect_request("/go").respond_with_data("", status=302, headers={"Location": target})
    httpserver.expect_request("/elsewhere").respond_with_data("must not be fetched")
    out = await fetch(httpserver.url_for("/go"))
    assert out == (
        f"{httpserver.url_for('/go')} redirects to another host: {target}\nThe redirect was not "
        "followed. Call WebFetch with that URL if you want it."
    )
    assert [r.path for r, _ in httpserver.log] == ["/go"]


async def test_too_many_redirects(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/loop").respond_with_data("", status=302, headers={"Location": "/loop"})
    with pytest.raises(ToolError, match="more than 5 redirects"):
        await fetch(httpserver.url_for("/loop"))
    assert len(httpserver.log) == 6


async def test_size_cap_declared_and_streamed(httpserver: HTTPServer) -> None:
    big = b"x" * (5 * 1024 * 1024 + 1)
    httpserver.expect_request("/big").respond_with_data(big, content_type="text/plain")

    def chunked(_request: Request) -> Response:
        def body() -> Iterator[bytes]:
            for _ in range(6):
                yield b"y" * (1024 * 1024)

        return Response(body(), content_type="text/plain")

    httpserver.expect_request("/stream").respond_with_handler(chunked)
    with pytest.raises(ToolError, match="larger than 5 MB"):
        await fetch(httpserver.url_for("/big"))
    with pytest.raises(ToolError, match="larger than 5 MB: download stopped"):
        await fetch(httpserver.url_for("/stream"))


async def test_slow_server_times_out(httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("maia.tools.webfetch.TIMEOUT", 0.5)

    def slow(_request: Request) -> Response:
        time.sleep(2)
        return Response("late")

    httpserver.expect_request("/slow").respond_with_handler(slow)
    started = time.monotonic()
    with pytest.raises(ToolError, match=re.escape("did not answer within 0.5 s")):
        await fetch(httpserver.url_for("/slow"))
    assert time.monotonic() - started < 1.8


async def test_max_length_default_and_cap(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/long").respond_with_data("a" * 150_000, content_type="text/plain")
    default = await fetch(httpserver.url_for("/long"))
    assert default.endswith("a" * 20_000 + "\n[cut at 20000 of 150000 characters]")
    capped = await fetch(httpserver.url_for("/long"), max_length=1_000_000)
    assert capped.endswith("\n[cut at 100000 of 150000 characters]")


@pytest.mark.parametrize("url", ["ftp://example.org/x", "file:///etc/passwd", "example.org", "javascript:alert(1)"])
async def test_only_http(url: str) -> None:
    with pytest.raises(ToolError, match="Only http:// and https://"):
        await fetch(url)


async def test_unsupported_types_and_http_errors(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/doc.pdf").respond_with_data(b"%PDF-1.4", content_type="application/pdf")
    httpserver.expect_request("/gone").respond_with_data("no", status=404)
    with pytest.raises(ToolError, match="is application/pdf: only HTML, JSON and text can be read"):
        await fetch(httpserver.url_for("/doc.pdf"))
    with pytest.raises(ToolError, match="answered HTTP 404 NOT FOUND"):
        await fetch(httpserver.url_for("/gone"))


async def test_unreachable() -> None:
    with pytest.raises(ToolError, match=re.escape("Cannot fetch http://127.0.0.1:9/")):
        await fetch("http://127.0.0.1:9/")


def test_a_host_name_is_judged_by_the_addresses_it_resolves_to(tmp_path: Path) -> None:
    """A name that resolves to a local or private address asks under `domain:*` (issue 26)."""
    import ipaddress
    import socket

    from maia.permissions import explain
    from maia.permissions.web import special_address

    rules = {"allow": ["WebFetch(domain:*)"]}
    name = socket.gethostname().lower()
    addresses = {ipaddress.ip_address(i[4][0].split("%")[0]) for i in socket.getaddrinfo(name, 80)}
    decision = explain("WebFetch", {"url": f"http://{name}:8080/"}, rules, tmp_path)
    local = any(special_address(a) for a in addresses)
    assert (decision.verdict.value, decision.doubt) == (("ask", True) if local else ("allow", False)), decision.reason
    named = explain("WebFetch", {"url": f"http://{name}:8080/"}, {"allow": [f"WebFetch(domain:{name})"]}, tmp_path)
    assert named.verdict.value == "allow"


async def test_the_fetch_connects_to_the_address_that_was_judged(httpserver: HTTPServer) -> None:
    """The name was judged as 127.0.0.1: the fetch connects there, whatever the resolver says later
    (here it would say nothing: `.invalid` never resolves)."""
    import ipaddress
    import time as clock

    from maia.permissions import web

    httpserver.expect_request("/pinned").respond_with_data("pinned page", content_type="text/plain")
    web._JUDGED["judged.invalid"] = (clock.monotonic(), (ipaddress.ip_address("127.0.0.1"),))
    try:
        out = await fetch(f"http://judged.invalid:{httpserver.port}/pinned")
    finally:
        web._JUDGED.pop("judged.invalid", None)
    assert out.endswith("pinned page")
    assert httpserver.log[-1][0].headers["Host"] == f"judged.invalid:{httpserver.port}"
