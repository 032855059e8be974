"""What the server checks of every request before a game sees it, and adds to every reply.

* :class:`HostCheck`: the ``Host`` header must name the server (a page on another site
  that reaches a server on this machine by DNS rebinding sends its own name). Accepted:
  the names given, and, with ``ip_literals``, any IP address (a rebinding attack needs a
  DNS name). IPv6 literals are read in their ``[addr]:port`` form.
* :class:`SecurityHeaders`: ``Content-Security-Policy`` (scripts and styles of this
  server only, no framing: ``frame-ancestors 'none'``), ``X-Content-Type-Options:
  nosniff``, ``X-Frame-Options: DENY``, ``Referrer-Policy: no-referrer``; a route that
  sets its own policy keeps it.
* :func:`read_json_body`: the body is read as it streams in and refused once it passes
  the limit (a declared ``Content-Length`` over it is refused before reading).
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import re
from collections.abc import Iterable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sichuan_env.play.web.table import GameError

__all__ = ["CSP", "HostCheck", "SecurityHeaders", "host_name", "inline_script_csp",
           "read_json_body"]

CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
       "frame-ancestors 'none'")


def host_name(header: str) -> str:
    """The host of a ``Host`` header without its port, lower case (``[::1]:80`` ->
    ``::1``)."""
    h = header.strip().lower()
    if h.startswith("["):
        return h[1:h.index("]")] if "]" in h else h
    if h.count(":") == 1:
        return h.split(":", 1)[0]
    return h


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostCheck:
    """Refuse (400, JSON) a request whose ``Host`` is not one of ``names`` (nor an IP
    address, with ``ip_literals``)."""

    def __init__(self, app: ASGIApp, names: Iterable[str], ip_literals: bool = False) -> None:
        self.app = app
        self.names = {host_name(n) for n in names}
        self.ip_literals = ip_literals

    def allowed(self, header: str) -> bool:
        name = host_name(header)
        return name in self.names or (self.ip_literals and _is_ip(name))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            header = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"),
                          "")
            if not self.allowed(header):
                resp = JSONResponse({"error": f"Invalid host header {header[:80]!r}: this "
                                              "server answers to its own address only"},
                                    status_code=400)
                await resp(scope, receive, send)
                return
        await self.app(scope, receive, send)


class SecurityHeaders:
    """Add the security headers of the module docstring to every HTTP reply."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.headers = [(b"x-content-type-options", b"nosniff"),
                        (b"x-frame-options", b"DENY"),
                        (b"referrer-policy", b"no-referrer")]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                have = {k.lower() for k, _ in headers}
                headers += [h for h in self.headers if h[0] not in have]
                if b"content-security-policy" not in have:
                    headers.append((b"content-security-policy", CSP.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with)


_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def inline_script_csp(page: str) -> str:
    """:data:`CSP` that also allows exactly the inline ``<script>`` blocks of ``page`` (by
    their SHA-256), for a self-contained page such as the replay viewer's."""
    hashes = " ".join("'sha256-" + base64.b64encode(hashlib.sha256(m.encode()).digest())
                      .decode() + "'" for m in _SCRIPT.findall(page))
    return CSP.replace("script-src 'self'", f"script-src 'self' {hashes}")


async def read_json_body(request: Request, limit: int) -> dict[str, Any]:
    """The request's JSON object body, read at most ``limit`` bytes far:
    :class:`GameError` 415 for a body that is not JSON, 413 for one over the limit, 400
    for bad JSON or a JSON value that is not an object."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise GameError(f"send JSON (Content-Type: application/json), got {kind or 'none'!r}",
                        415)
    declared = request.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise GameError(f"request body over {limit} bytes", 413)
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise GameError(f"request body over {limit} bytes", 413)
        chunks.append(chunk)
    body = b"".join(chunks)
    if not body.strip():
        return {}
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as err:
        raise GameError(f"bad JSON: {err}", 400) from None
    if not isinstance(data, dict):
        raise GameError(f"the body must be a JSON object, got {type(data).__name__}", 400)
    return data
