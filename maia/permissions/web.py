"""WebFetch hosts judged as the HTTP client will connect to them.

httpx parses the URL (user info, IDNA) and hands the ASCII host to the system resolver, which reads
``0x7f.1``, ``2130706433`` or ``017700000001`` as 127.0.0.1 (inet_aton). The engine does the same,
so a rule sees one spelling per address. Loopback, link-local, private and other special
addresses (and ``localhost``) ask unless a rule names them.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import time
from dataclasses import dataclass

from maia.permissions.match import wildcard

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_DEFAULT_PORTS = {"http": 80, "https": 443}
_LEGACY_IPV4 = re.compile(r"[0-9a-fA-FxX.]+")


@dataclass(frozen=True, slots=True)
class Host:
    """Where a URL connects: the host in canonical form, the port, the address when it is one."""

    name: str
    port: int | None
    address: IPAddress | None

    @property
    def special(self) -> bool:
        """Loopback, link-local, private, unspecified, reserved or multicast (or ``localhost``)."""
        if self.address is None:
            return self.name == "localhost" or self.name.endswith(".localhost")
        return special_address(self.address)


def special_address(address: IPAddress) -> bool:
    """Loopback, link-local, private, unspecified, reserved, multicast, or any other address that is not
    globally reachable (shared address space 100.64.0.0/10: carrier NAT, VPNs, cloud metadata services)."""
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour
        if mapped is not None:
            address = mapped
    return bool(
        address.is_loopback
        or address.is_link_local
        or address.is_private
        or address.is_unspecified
        or address.is_reserved
        or address.is_multicast
        or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local)
        or not address.is_global
    )


# the addresses each host name was judged with: WebFetch connects to these, never to a later answer
# of the resolver (a name that resolved to a public address when judged and to 127.0.0.1 when fetched)
_JUDGED: dict[str, tuple[float, tuple[IPAddress, ...]]] = {}
JUDGED_FOR = 300.0  # seconds a judged resolution is used by the fetch that follows


def resolve(name: str, port: int | None) -> tuple[IPAddress, ...]:
    """Every address the system resolver gives for ``name`` (empty when it gives none), remembered as
    the addresses the call is judged with."""
    try:
        infos = socket.getaddrinfo(name, port or 80, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError):
        return ()
    found: list[IPAddress] = []
    for info in infos:
        try:
            address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        except ValueError:
            continue
        if address not in found:
            found.append(address)
    _JUDGED[name] = (time.monotonic(), tuple(found))
    return tuple(found)


def judged_addresses(name: str) -> tuple[IPAddress, ...] | None:
    """The addresses ``name`` was judged with lately, or None."""
    entry = _JUDGED.get(name.lower().rstrip("."))
    if entry is None or time.monotonic() - entry[0] > JUDGED_FOR:
        return None
    return entry[1]


def _address(host: str) -> IPAddress | None:
    text = host.split("%", 1)[0]  # an IPv6 zone
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    if _LEGACY_IPV4.fullmatch(text) and re.search(r"\d", text):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(text))
        except OSError:
            return None
    return None


def canonical_host(host: str) -> tuple[str, IPAddress | None]:
    """A host (already ASCII) in the one form rules compare: lower case, no final dot, IPs canonical."""
    name = host.strip().lower().rstrip(".")
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    address = _address(name)
    return (str(address) if address is not None else name), address


def host_of(url: str) -> Host | None:
    """The host a URL connects to, or None when the client could not use it."""
    import httpx

    try:
        parsed = httpx.URL(url.strip())
        raw = parsed.raw_host.decode("ascii")
    except (httpx.InvalidURL, UnicodeError, ValueError):
        return None
    if not raw:
        return None
    name, address = canonical_host(raw)
    port = parsed.port if parsed.port is not None else _DEFAULT_PORTS.get(parsed.scheme)
    return Host(name, port, address)


def _encode_label(label: str) -> str:
    if "*" in label or label.isascii():
        return label.lower()
    try:
        import idna

        return str(idna.encode(label.lower()).decode("ascii"))
    except (ImportError, UnicodeError, ValueError):  # idna.IDNAError is a UnicodeError
        return label.lower()


def domain_matches(pattern: str, host: Host) -> bool:
    """Whether ``domain:pattern`` (``example.com``, ``*.example.org``, ``10.0.0.5``, ``host:8080``) covers a host."""
    text = pattern.strip()
    port: int | None = None
    match = re.fullmatch(r"(.*?):(\d+)", text)
    if match and not text.startswith("["):
        text, port = match.group(1), int(match.group(2))
    elif text.startswith("[") and "]:" in text:
        text, _sep, number = text.rpartition(":")
        port = int(number) if number.isdigit() else None
    if port is not None and port != host.port:
        return False
    if "*" not in text:
        name, _address = canonical_host(".".join(_encode_label(label) for label in text.split(".")))
        return name == host.name
    wanted = ".".join(_encode_label(label) for label in text.lower().rstrip(".").split("."))
    return wildcard(wanted).fullmatch(host.name)


def names_host(pattern: str, host: Host) -> bool:
    """Whether a rule names a special host itself (``domain:localhost``, ``domain:10.0.*``), not ``domain:*``."""
    literal = pattern.strip().split("*", 1)[0]
    return bool(literal.strip(".")) and domain_matches(pattern, host)
