"""Which ``Host`` headers the server answers. A page from anywhere that a local browser opens can rebind its own
name to 127.0.0.1 (DNS rebinding) and then read the reports as same-origin content: the only sign left is the
``Host`` header, which still names the attacker's domain. So a request is answered only when its Host is a name this
server is known by: the loopback names (``localhost``, any loopback address), the address it was bound to, with a
wildcard bind (``0.0.0.0``, ``::``) the machine's host name and any address (it listens on all of them), and the
names the operator adds (``--allow-host``). The port is not compared: a browser's Host carries the port of the URL,
which is ours anyway.

Any other address literal is refused too: no name is rebound through it, but no browser reaches a server bound
elsewhere by it either. A request without a Host is HTTP/1.0 or older (HTTP/1.1 requires one: 400 without); no
browser sends such a request, so no page can, and it is answered."""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable

LOOPBACK_NAMES = frozenset({"localhost"})
# A DNS name as the operator may give it: labels of letters, digits, '-' and '_' (a container's name), dots between.
NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*")
WILDCARDS = ("0.0.0.0", "::", "")


def host_name(value: str) -> str | None:
    """The name or address of a ``Host`` header (``name``, ``name:port``, ``[v6]``, ``[v6]:port``), lowercased, a
    trailing dot dropped; ``None`` when it is neither (spaces, a user part, a bad port, an unbracketed v6)."""
    value = value.strip().lower()
    if value.startswith("["):
        address, bracket, port = value[1:].partition("]")
        if not bracket or (port and not re.fullmatch(r":\d{1,5}", port)):
            return None
        try:
            return str(ipaddress.IPv6Address(address))
        except ValueError:
            return None
    name, colon, port = value.partition(":")
    if colon and not re.fullmatch(r"\d{1,5}", port):
        return None
    name = name[:-1] if name.endswith(".") else name
    return name if NAME.fullmatch(name) and len(name) <= 253 else None


def allowed_name(value: str) -> str:
    """An ``--allow-host`` value as compared: a bare host name or address, no scheme, port or path."""
    name = value.strip().lower()
    name = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        pass
    found = host_name(name)
    if found is None or ":" in name:
        raise ValueError(f"--allow-host {value!r}: expected a host name or address (no scheme, port or path), "
                         "e.g. --allow-host gpu-box.lan")
    return found


class HostCheck:
    """The ``Host`` values one server answers (see the module's docstring)."""

    def __init__(self, *, bound: Iterable[str], extra: Iterable[str] = ()) -> None:
        bound = {str(b).strip("[]").lower() for b in bound}
        self.names = set(LOOPBACK_NAMES) | {allowed_name(name) for name in extra}
        self.addresses: set[ipaddress.IPv4Address | ipaddress.IPv6Address] = set()
        self.any_address = bool(bound & set(WILDCARDS))
        for name in bound - set(WILDCARDS):
            try:
                self.addresses.add(ipaddress.ip_address(name))
            except ValueError:
                self.names.add(name.rstrip("."))
        if self.any_address:
            self.names.add(socket.gethostname().lower().rstrip("."))  # what ``url()`` prints for a wildcard bind

    def admits(self, header: str) -> bool:
        """Whether a request whose ``Host`` header is ``header`` is answered."""
        name = host_name(header)
        if name is None:
            return False
        if name in self.names:
            return True
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            return False  # a name nobody gave this server: the rebinding case
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
            address = address.ipv4_mapped
        return address.is_loopback or address in self.addresses or self.any_address
