"""A bot program run as a child process: JSON lines in and out, its stderr kept.

:class:`BotProcess` starts a command in its own process group (so a Ctrl-C typed at the
terminal reaches the arena, which then ends the bot, and not the bot first), writes to
its stdin without ever blocking (a bot that stops reading cannot hang the caller), reads
whole lines from its stdout up to a deadline, and keeps its stderr in a background
thread: the last lines in memory, and at most ``log_bytes`` in the optional log file.

Every process started here is registered and ended by :func:`close_all` (called at
interpreter exit, and by the commands when they stop, also after Ctrl-C);
:meth:`BotProcess.close` ends one: a ``bye`` line, end of input, a short wait, then
SIGKILL to its whole process group (a shell or ``node`` wrapper and its children too).
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import fcntl
import os
import select
import selectors
import shlex
import signal
import subprocess
import threading
import time
import weakref
from pathlib import Path

__all__ = ["BotProcess", "BotGoneError", "BotStartError", "close_all", "live_processes",
           "wait_lines"]

_LIVE: weakref.WeakSet[BotProcess] = weakref.WeakSet()


class BotStartError(ValueError):
    """A bot program that cannot be started (one line naming the program and the error)."""


class BotGoneError(RuntimeError):
    """The bot's stdout closed (it exited or crashed); ``str()`` says how."""


class BotProcess:
    """One running bot program (see the module docstring)."""

    def __init__(self, command: str, *, cwd: str | Path | None = None,
                 stderr_lines: int = 20, log: str | Path | None = None,
                 log_bytes: int = 1_000_000) -> None:
        try:
            self.argv = shlex.split(command)
        except ValueError as err:
            raise BotStartError(f"cannot parse the command {command!r}: {err}") from None
        if not self.argv:
            raise BotStartError("an empty command")
        self.command = command
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=cwd, start_new_session=True, bufsize=0)
        except OSError as err:
            raise BotStartError(f"cannot start {command!r}: {err.strerror or err}") from None
        _LIVE.add(self)
        self.pid = self.proc.pid
        for f in (self.proc.stdin, self.proc.stdout):  # room for 64 requests: fewer calls
            with contextlib.suppress(OSError, AttributeError):
                fcntl.fcntl(f.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)
        os.set_blocking(self.proc.stdin.fileno(), False)
        self._out = bytearray()  # written to stdin, not yet taken by the bot
        self._in = bytearray()  # read from stdout, not yet a whole line
        self._sel = selectors.DefaultSelector()
        self._sel.register(self.proc.stdout, selectors.EVENT_READ)
        self._stdin_registered = False
        self._stderr = collections.deque(maxlen=max(1, stderr_lines))
        self._log_path = None if log is None else Path(log)
        self._log_left = int(log_bytes)
        self._lock = threading.Lock()
        self._reading = False  # the stderr thread holds a line not yet kept
        self._reader = threading.Thread(target=self._drain_stderr, daemon=True,
                                        name=f"bot-stderr-{self.pid}")
        self._reader.start()
        self.closed = False

    # ------------------------------------------------------------------ stderr

    def _drain_stderr(self) -> None:
        log = None
        if self._log_path is not None:
            try:
                log = open(self._log_path, "ab")  # noqa: SIM115 - closed below
            except OSError:
                log = None
        try:
            for raw in iter(self.proc.stderr.readline, b""):
                self._reading = True
                with self._lock:
                    self._stderr.append(raw.decode(errors="replace").rstrip("\n")[:500])
                self._reading = False
                if log is not None and self._log_left > 0:
                    log.write(raw[: self._log_left])
                    self._log_left -= len(raw)
                    if self._log_left <= 0:
                        log.write(b"\n[log cut: size limit reached]\n")
                    log.flush()
        except (OSError, ValueError):
            pass
        finally:
            if log is not None:
                log.close()

    def stderr_tail(self, settle: float = 0.0) -> list[str]:
        """The bot's last stderr lines (at most ``stderr_lines``). ``settle`` > 0: first
        wait (at most that many seconds) until what the bot wrote to stderr so far is
        read, so that the lines it wrote before its last stdout line are in."""
        if settle > 0:
            end = time.monotonic() + settle
            fd = self.proc.stderr.fileno()
            quiet = 0
            while quiet < 2 and time.monotonic() < end:
                try:
                    ready = bool(select.select([fd], [], [], 0)[0])
                except (OSError, ValueError):
                    break
                if ready or self._reading:
                    quiet = 0
                else:
                    quiet += 1
                time.sleep(0.001)
        with self._lock:
            return list(self._stderr)

    # ------------------------------------------------------------------ lines

    def send(self, text: str) -> None:
        """Queue ``text`` (whole lines) for the bot's stdin; written by :meth:`lines`."""
        self._out += text.encode()
        self._flush()

    def _flush(self) -> None:
        if not self._out:
            return
        try:
            n = os.write(self.proc.stdin.fileno(), self._out)
        except BlockingIOError:
            n = 0
        except (BrokenPipeError, OSError):
            self._out.clear()  # the bot is gone; reading will say so
            return
        del self._out[:n]
        want = bool(self._out)
        if want != self._stdin_registered:
            if want:
                self._sel.register(self.proc.stdin, selectors.EVENT_WRITE)
            else:
                self._sel.unregister(self.proc.stdin)
            self._stdin_registered = want

    def _split(self) -> list[bytes]:
        if b"\n" not in self._in:
            return []
        *done, rest = bytes(self._in).split(b"\n")
        self._in = bytearray(rest)
        return done

    def read_ready(self) -> list[bytes]:
        """Read once what the bot wrote (call when its stdout is readable); the whole
        lines so far. Raises :class:`BotGoneError` when its stdout is closed."""
        chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
        if not chunk:
            raise BotGoneError(self._exit_text())
        self._in += chunk
        return self._split()

    def lines(self, deadline: float) -> list[bytes]:
        """Whole lines the bot wrote (without newlines), at least one, waiting until the
        ``time.monotonic()`` ``deadline``; [] when it passed. Raises :class:`BotGoneError`
        when the bot's stdout is closed."""
        while True:
            if b"\n" in self._in:
                *done, rest = bytes(self._in).split(b"\n")
                self._in = bytearray(rest)
                return done
            left = deadline - time.monotonic()
            if left <= 0:
                return []
            for _key, mask in self._sel.select(left):
                if mask & selectors.EVENT_WRITE:
                    self._flush()
                elif mask & selectors.EVENT_READ:
                    chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
                    if not chunk:
                        raise BotGoneError(self._exit_text())
                    self._in += chunk

    def _exit_text(self) -> str:
        try:
            code = self.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return "it closed its stdout"
        if code < 0:
            try:
                return f"it was killed by signal {signal.Signals(-code).name}"
            except ValueError:
                return f"it was killed by signal {-code}"
        return f"it exited with status {code}"

    # ------------------------------------------------------------------ end

    def close(self, grace: float = 0.5) -> None:
        """End the bot: ``bye``, end of input, ``grace`` seconds, then SIGKILL to its
        process group. Safe to call twice."""
        if self.closed:
            return
        self.closed = True
        try:
            if self.proc.poll() is None:
                with contextlib.suppress(OSError):
                    os.write(self.proc.stdin.fileno(), b'{"type":"bye"}\n')
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=grace)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)  # its children too
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
        finally:
            for f in (self.proc.stdin, self.proc.stdout):
                with contextlib.suppress(OSError):
                    f.close()
            self._sel.close()
            self._reader.join(timeout=1)
            with contextlib.suppress(OSError):
                self.proc.stderr.close()
            _LIVE.discard(self)


def wait_lines(procs: list[BotProcess], deadline: float
               ) -> dict[BotProcess, list[bytes] | BotGoneError]:
    """Wait until one of ``procs`` has written whole lines, or the ``time.monotonic()``
    ``deadline`` passed, writing their queued input meanwhile; the lines of each that
    wrote some (a :class:`BotGoneError` for one whose stdout closed). {} when the
    deadline passed."""
    out: dict[BotProcess, list[bytes] | BotGoneError] = {}
    if len(procs) == 1:  # the process's own selector: no new one per wait
        try:
            done = procs[0].lines(deadline)
        except BotGoneError as err:
            return {procs[0]: err}
        return {procs[0]: done} if done else out
    for p in procs:  # lines already read
        done = p._split()
        if done:
            out[p] = done
    if out:
        return out
    sel = selectors.DefaultSelector()
    try:
        while True:
            for p in procs:
                mask = selectors.EVENT_READ | (selectors.EVENT_WRITE if p._out else 0)
                with contextlib.suppress(KeyError):
                    sel.unregister(p.proc.stdout)
                with contextlib.suppress(KeyError):
                    sel.unregister(p.proc.stdin)
                sel.register(p.proc.stdout, selectors.EVENT_READ, (p, "r"))
                if mask & selectors.EVENT_WRITE and not p.proc.stdin.closed:
                    sel.register(p.proc.stdin, selectors.EVENT_WRITE, (p, "w"))
            left = deadline - time.monotonic()
            if left <= 0:
                return out
            for key, _mask in sel.select(left):
                p, what = key.data
                if what == "w":
                    p._flush()
                    continue
                try:
                    done = p.read_ready()
                except BotGoneError as err:
                    out[p] = err
                    continue
                if done:
                    out[p] = done
            if out:
                return out
    finally:
        sel.close()


def live_processes() -> list[BotProcess]:
    """The bot processes started here and not yet closed."""
    return list(_LIVE)


def close_all() -> None:
    """End every bot process started in this interpreter."""
    for p in list(_LIVE):
        p.close(grace=0.2)


atexit.register(close_all)
