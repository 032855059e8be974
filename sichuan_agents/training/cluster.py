"""Reaching a Ray cluster for ``train.py --backend rllib --address ...``, before any work.

:func:`address_problem` checks an ``--address`` without importing Ray: ``auto`` and
``local`` are left to Ray; ``HOST:PORT`` (or ``ray://HOST:PORT``) must be a port number
that answers a TCP connection within a few seconds (Ray itself would wait minutes for a
cluster that is not there). :func:`connect` then joins the cluster, turning Ray's
connection errors into a :class:`ClusterError` that names the address and says how to
start or join a cluster (:data:`CLUSTER_HINT`).
"""

from __future__ import annotations

import socket
from typing import Any

CLUSTER_HINT = ("start a cluster on the head machine with `ray start --head` (then pass "
                "--address auto there, or --address HEAD_HOST:6379 elsewhere), or join this "
                "machine to a running one with `ray start --address=HEAD_HOST:6379`")
PROBE_SECONDS = 5.0


class ClusterError(ValueError):
    """No Ray cluster could be reached at the address given."""


def parse_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of ``HOST:PORT`` or ``ray://HOST:PORT``; None for ``auto`` and
    ``local``. ``ValueError`` for anything else."""
    if address in ("auto", "local"):
        return None
    rest = address.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    host = host.strip("[]")  # [::1]:6379
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--address must be auto, HOST:PORT or ray://HOST:PORT (e.g. "
                         f"10.0.0.5:6379), got {address!r}")
    return host, int(port)


def address_problem(address: str, timeout: float = PROBE_SECONDS) -> str | None:
    """What is wrong with ``--address`` (one line, with :data:`CLUSTER_HINT`), or None
    when it is ``auto``/``local`` or a port that answers."""
    try:
        hostport = parse_address(address)
    except ValueError as err:
        return str(err)
    if hostport is None:
        return None
    try:
        with socket.create_connection(hostport, timeout=timeout):
            return None
    except OSError as err:
        why = "timed out" if isinstance(err, TimeoutError) else (err.strerror or str(err))
        return f"--address {address}: no Ray cluster answers there ({why}); {CLUSTER_HINT}"


def connect(address: str, **init_kwargs: Any) -> None:
    """``ray.init(address=address, ...)``; :class:`ClusterError` (one line naming the
    address, with :data:`CLUSTER_HINT`) when no cluster can be reached there."""
    problem = address_problem(address)
    if problem is not None:
        raise ClusterError(problem)
    import ray

    try:
        ray.init(address=address, **init_kwargs)
    except (ConnectionError, TimeoutError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ClusterError(f"--address {address}: cannot join a Ray cluster there ({first}); "
                           f"{CLUSTER_HINT}") from None
