"""How the play server listens: its socket and its uvicorn settings.

* :func:`listen_socket`: the listening socket, made so that every connection it accepts
  sends small replies at once (``TCP_NODELAY``). asyncio sets that option only on
  sockets whose protocol number says TCP, and :func:`socket.create_server` leaves the
  number 0: without it, the second request on a kept-alive connection waited for the
  client's delayed acknowledgement (about 40 ms on Linux) before its reply went out.
* :func:`uvicorn_config`: uvicorn's settings for the app: the client address of a
  request is the peer of the connection; ``X-Forwarded-For`` is read only from the
  addresses named in ``trusted_proxies`` (uvicorn's default trusts it from 127.0.0.1, so
  any local client could name itself a new address per game and pass the per-address
  limit).
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Any

__all__ = ["listen_socket", "uvicorn_config"]


def listen_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (``port`` 0: a free one) whose
    accepted connections have ``TCP_NODELAY`` set; raises ``OSError`` as
    :func:`socket.create_server` does."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # accepted sockets inherit it (Linux), and asyncio sets it again on each one,
        # since their protocol number now names TCP
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    return sock


def uvicorn_config(app: Any, trusted_proxies: Sequence[str] = (), **kwargs: Any) -> Any:
    """``uvicorn.Config`` for ``app``: proxy headers read only from ``trusted_proxies``
    (addresses or networks, as uvicorn's ``forwarded_allow_ips``; empty: never)."""
    import uvicorn

    kwargs.setdefault("log_level", "warning")
    if trusted_proxies:
        return uvicorn.Config(app, proxy_headers=True,
                              forwarded_allow_ips=list(trusted_proxies), **kwargs)
    return uvicorn.Config(app, proxy_headers=False, **kwargs)
