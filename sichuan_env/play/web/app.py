"""The web server: a Starlette application that serves the play page and a small JSON API.

Routes (the browser session's game is found by the cookie ``sichuan_game``):

=======================  ==========================================================
``GET /``                the page (HTML, the tile pictures of :mod:`sichuan_env.records.svg`)
``GET /static/...``      its script and style sheet
``POST /api/new``        deal a new deal for this session (the first sets the cookie)
``GET /api/state``       the table from the human's seat, the log, the settlement
``POST /api/act``        ``{"deal": D, "step": N, "action": "discard 5m"}``: the human's
                         move at decision N of deal D
``GET /api/record``      the finished deal as a ``sichuan-record/1`` JSON Lines file
``GET /replay``          the finished deal in the replay viewer (every hand shown)
``POST /api/review``     review the human seat's decisions of the finished deal in the
                         background (:mod:`sichuan_env.play.web.review`); its progress
``GET /api/review``      the progress of that review: status, decisions done of total
``GET /review``          the finished deal in the replay viewer with the review
=======================  ==========================================================

Errors are JSON ``{"error": "..."}``: 400 malformed (bad JSON, wrong fields, an action
string that does not parse, a bad ``Host``), 404 no game for this session, 409 a stale
deal or step or a deal that is over (or not yet over, for the record), 413 a body over
:data:`MAX_BODY` bytes, 415 a POST that is not JSON, 422 an action not in the legal
mask, 429 this client address has its most games, 503 the server is full, 500 a fault
of the server (logged); and 404/405 for an unknown path or method. A refused request
changes nothing.

**Concurrency.** Requests are served by one asyncio event loop. A move of a game (the
engine steps and the bots' decisions up to the human's next decision) runs in a thread
of :data:`GAME_THREADS` while the game's own ``asyncio.Lock`` is held, so one game's
moves are applied one at a time and other games go on meanwhile; each bot decision runs
in a thread of :data:`sichuan_env.play.web.bots.BOT_THREADS` under a time limit
(:class:`~sichuan_env.play.web.bots.GameBots`). ``GET /api/state``, the page and the static
files never wait for a move: the state is the table published at the end of the game's
latest move. :func:`run_for_game` runs other work on one game the same way (a place for
a background job per game).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sichuan_env.core.rules import Rules
from sichuan_env.play.web.bots import BotSpec
from sichuan_env.play.web.guard import HostCheck, SecurityHeaders, inline_script_csp, read_json_body
from sichuan_env.play.web.review import Reviews
from sichuan_env.play.web.store import GameEntry, GameStore
from sichuan_env.play.web.table import MIN_CLAIM_WINDOW, DealSeeds, GameError, WebGame
from sichuan_env.play.web.workers import BotWorkers
from sichuan_env.records.record import RECORD_FORMAT
from sichuan_env.records.svg import tile_defs

__all__ = ["COOKIE", "GAME_THREADS", "MAX_BODY", "GameFactory", "WebConfig", "create_app",
           "default_game", "run_for_game"]

log = logging.getLogger("sichuan_env.play.web")

COOKIE = "sichuan_game"
MAX_BODY = 4096

#: The threads that play the games' moves (a move waits here only while every thread is
#: busy with another game's move).
GAME_THREADS = ThreadPoolExecutor(max_workers=64, thread_name_prefix="sichuan-game")


@dataclass
class WebConfig:
    """What every game of a server shares: the seats (``None`` the human's, else a
    :class:`~sichuan_env.play.web.bots.BotSpec`; each game builds its own bots from them), the
    rules, ``seed`` (None: every deal's seed drawn secretly; an int: deal n of every game
    is dealt from seed + n, reproducible and predictable), the limits of
    :class:`~sichuan_env.play.web.store.GameStore`, the bots' time limit per decision and
    fallback agent, the worker processes in which isolated bot seats think, and
    ``review_k`` samples per decision of a deal's review and ``max_reviews`` reviews
    queued at most (:class:`~sichuan_env.play.web.review.Reviews`), and the time every
    discard's claim window takes at least (``claim_window``, see
    :class:`~sichuan_env.play.web.table.WebGame`; the command line sets it from the bots'
    answers in a trial deal)."""

    seats: Sequence[BotSpec | None]
    rules: Rules
    seed: int | None = None
    max_games: int = 200
    per_client: int = 8
    idle_seconds: float = 3600.0
    time_limit: float = 10.0
    fallback: str = "rules"
    workers: BotWorkers | None = None  # the worker processes of isolated bot seats
    review_k: int = 256
    max_reviews: int = 16
    claim_window: float = MIN_CLAIM_WINDOW  # seconds every discard's claim window takes


def _error(message: str, status: int) -> JSONResponse:
    headers = {"Retry-After": "60"} if status in (429, 503) else None
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _page() -> str:
    text = resources.files("sichuan_env.play.web").joinpath("static/play.html").read_text("utf-8")
    return text.replace("<!--TILE-DEFS-->", tile_defs())


def _json(data: dict[str, Any]) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


async def run_for_game(entry: GameEntry, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in a thread of :data:`GAME_THREADS` while ``entry``'s lock is held
    (after the game's move in progress, before its next one); the entry is kept from
    expiring meanwhile."""
    entry.busy += 1
    try:
        async with entry.lock:
            return await asyncio.wrap_future(GAME_THREADS.submit(_with, entry, fn, *args))
    finally:
        entry.busy -= 1


def _with(entry: GameEntry, fn: Callable[..., Any], *args: Any) -> Any:
    # the thread holds the game's own thread lock too: a request cancelled while its
    # move runs (the client went away) releases the asyncio lock, not the game
    with entry.work_lock:
        return fn(*args)


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


class _App(Starlette):
    """Starlette with :class:`~sichuan_env.play.web.guard.SecurityHeaders` outside everything,
    the handler of server errors included (Starlette's own middleware list sits inside
    it, so its 500 answers went out without the headers)."""

    def build_middleware_stack(self) -> Any:
        return SecurityHeaders(_Answered(super().build_middleware_stack()))


class _Answered:
    """An error raised after its 500 answer went out (Starlette's handler of server
    errors answers, logs through ours, and raises again) ends here: uvicorn would log
    it a second time and drop the connection before the client read the answer."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        started = False

        async def send_noting(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, send_noting)
        except Exception:
            if not started:
                raise


GameFactory = Callable[[WebConfig, int], WebGame]


def default_game(config: WebConfig, number: int) -> WebGame:
    """Game ``number`` (1, 2, ...) of a server: the configured seats, secret or fixed
    seeds, the configured bots' limits."""
    return WebGame(config.seats, config.rules, DealSeeds(config.seed),
                   time_limit=config.time_limit, fallback=config.fallback,
                   label=f"#{number}", workers=config.workers,
                   claim_window=config.claim_window)


def create_app(config: WebConfig, *, allowed_hosts: Sequence[str] | None = None,
               ip_hosts: bool = False, game_factory: GameFactory = default_game) -> Starlette:
    """The ASGI application. ``allowed_hosts``: ``Host`` names accepted (None: any), and
    with ``ip_hosts`` any IP address too (see :class:`~sichuan_env.play.web.guard.HostCheck`);
    ``game_factory`` makes each new game (default :func:`default_game`)."""
    store = GameStore(config.max_games, config.per_client, config.idle_seconds)
    reviews = Reviews(k=config.review_k, max_queued=config.max_reviews)
    counter = iter(range(1, 2**62))

    def new_game() -> tuple[WebGame, list[dict[str, Any]]]:
        game = game_factory(config, next(counter))
        return game, game.frames_at_start

    def reply(entry: GameEntry, frames: list[dict[str, Any]]) -> Response:
        """The game's state with ``frames``; publishes it (without frames) for reads."""
        data = entry.game.state()
        entry.published = _json(data)
        data["frames"] = frames
        return Response(_json(data), media_type="application/json")

    def move(entry: GameEntry, play: Callable[[], list[dict[str, Any]]]) -> Response:
        """:func:`reply` after ``play()``; when that fails on a server error, the game's
        state as it is (with the notice that the deal stopped) is published first, so
        that the page shows it, and the error is raised (500)."""
        try:
            return reply(entry, play())
        except GameError:
            raise
        except Exception:
            try:
                entry.published = _json(entry.game.state())
            except Exception:
                log.exception("game %s: its state after an error", entry.game_id[:6])
            raise

    async def page(request: Request) -> Response:
        return HTMLResponse(_page(), headers={"Cache-Control": "no-store"})

    async def api_state(request: Request) -> Response:
        try:
            entry = store.get(request.cookies.get(COOKIE))
        except GameError as err:
            return _error(str(err), err.status)
        return Response(entry.published, media_type="application/json",
                        headers={"Cache-Control": "no-store"})

    async def api_new(request: Request) -> Response:
        try:
            data = await read_json_body(request, MAX_BODY)
            if data:
                raise GameError(f"POST /api/new takes no fields, got {sorted(data)}", 400)
            try:
                entry = store.get(request.cookies.get(COOKIE))
            except GameError:
                entry = None
            if entry is None:
                client = _client(request)
                store.check_room(client)
                game, frames = await asyncio.wrap_future(GAME_THREADS.submit(new_game))
                entry = store.add(game, client)
                resp = reply(entry, frames)
            else:
                g = entry.game
                resp = await run_for_game(entry, lambda: move(entry, g.new_deal))
        except GameError as err:
            return _error(str(err), err.status)
        resp.set_cookie(COOKIE, entry.game_id, httponly=True, samesite="strict")
        return resp

    async def api_act(request: Request) -> Response:
        try:
            data = await read_json_body(request, MAX_BODY)
            entry = store.get(request.cookies.get(COOKIE))
            unknown = sorted(set(data) - {"deal", "step", "action"})
            if unknown or not {"deal", "step", "action"} <= set(data):
                raise GameError('send {"deal": D, "step": N, "action": "discard 5m"}'
                                + (f"; unknown fields {unknown}" if unknown else ""), 400)
            g = entry.game
            return await run_for_game(
                entry, lambda: move(entry, lambda: g.act(data["step"], data["action"],
                                                         deal=data["deal"])))
        except GameError as err:
            return _error(str(err), err.status)

    async def finished(request: Request) -> dict[str, Any]:
        entry = store.get(request.cookies.get(COOKIE))
        return await run_for_game(entry, entry.game.record)

    async def api_record(request: Request) -> Response:
        try:
            rec = await finished(request)
        except GameError as err:
            return _error(str(err), err.status)
        name = f"sichuan-seed{rec['seed']}.jsonl"
        return Response(json.dumps(rec, separators=(",", ":")) + "\n",
                        media_type="application/x-ndjson",
                        headers={"Content-Disposition": f'attachment; filename="{name}"',
                                 "X-Record-Format": RECORD_FORMAT})

    async def replay(request: Request) -> Response:
        from sichuan_env.records.viewer import build_frames, render_page

        try:
            rec = await finished(request)
        except GameError as err:
            return _error(str(err), err.status)
        players = ", ".join(f"seat {s} {n}" for s, n in enumerate(rec["players"]))
        page = await asyncio.wrap_future(GAME_THREADS.submit(
            lambda: render_page(rec, build_frames(rec), title=f"Your deal (seed "
                                                              f"{rec['seed']}): {players}")))
        return HTMLResponse(page, headers={"Content-Security-Policy": inline_script_csp(page)})

    async def api_review(request: Request) -> Response:
        try:
            if request.method == "POST":
                data = await read_json_body(request, MAX_BODY)
                if data:
                    raise GameError(f"POST /api/review takes no fields, got {sorted(data)}",
                                    400)
            entry = store.get(request.cookies.get(COOKIE))
            game = entry.game
            if request.method == "POST":
                rec = await run_for_game(entry, game.record)
                reviews.forget(set(store.games))
                job = reviews.start(entry.game_id, game.deal_number, game.human, rec)
            else:
                job = reviews.job(entry.game_id, game.deal_number)
        except GameError as err:
            return _error(str(err), err.status)
        if job is None:
            return JSONResponse({"deal": game.deal_number, "status": "none", "done": 0,
                                 "total": None}, headers={"Cache-Control": "no-store"})
        return JSONResponse(job.public(), headers={"Cache-Control": "no-store"})

    async def review_page(request: Request) -> Response:
        from sichuan_env.records.viewer import build_frames, render_page

        try:
            rec = await finished(request)
            entry = store.get(request.cookies.get(COOKIE))
            job = reviews.job(entry.game_id, entry.game.deal_number)
            if job is None or job.status != "done":
                raise GameError("this deal has no finished review: POST /api/review first, "
                                "then wait for GET /api/review to say done", 409)
        except GameError as err:
            return _error(str(err), err.status)
        players = ", ".join(f"seat {s} {n}" for s, n in enumerate(rec["players"]))
        doc = job.document()
        page = await asyncio.wrap_future(GAME_THREADS.submit(
            lambda: render_page(rec, build_frames(rec), review=doc,
                                title=f"Review of your deal (seed {rec['seed']}): {players}")))
        return HTMLResponse(page, headers={"Content-Security-Policy": inline_script_csp(page)})

    static = resources.files("sichuan_env.play.web").joinpath("static")
    routes = [
        Route("/", page),
        Route("/api/state", api_state),
        Route("/api/new", api_new, methods=["POST"]),
        Route("/api/act", api_act, methods=["POST"]),
        Route("/api/record", api_record),
        Route("/replay", replay),
        Route("/api/review", api_review, methods=["GET", "POST"]),
        Route("/review", review_page),
        Mount("/static", app=StaticFiles(directory=str(static)), name="static"),
    ]
    middleware = []
    if allowed_hosts is not None:
        middleware.append(Middleware(HostCheck, names=list(allowed_hosts),
                                     ip_literals=ip_hosts))

    async def http_error(request: Request, exc: Exception) -> Response:
        detail = getattr(exc, "detail", str(exc))
        return _error(f"{request.method} {request.url.path}: {detail}",
                      getattr(exc, "status_code", 400))

    async def server_error(request: Request, exc: Exception) -> Response:
        log.error("%s %s failed: %s: %s", request.method, request.url.path,
                  type(exc).__name__, exc, exc_info=exc)
        return _error("the server failed on this request (the error is logged); if the game "
                      "stays stuck, start a new deal", 500)

    app = _App(routes=routes, middleware=middleware,
               exception_handlers={HTTPException: http_error, Exception: server_error})
    app.state.store = store
    app.state.config = config
    app.state.reviews = reviews
    return app
