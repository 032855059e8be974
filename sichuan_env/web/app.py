"""The web server: a Starlette application that serves the play page and a small JSON API.

Routes (the browser session's game is found by the cookie ``sichuan_game``):

=======================  ==========================================================
``GET /``                the page (HTML, the tile pictures of :mod:`sichuan_env.svg`)
``GET /static/...``      its script and style sheet
``POST /api/new``        deal a new deal for this session (the first sets the cookie)
``GET /api/state``       the table from the human's seat, the log, the settlement
``POST /api/act``        ``{"step": N, "action": "discard 5m"}``: play the human's move
``GET /api/record``      the finished deal as a ``sichuan-record/1`` JSON Lines file
``GET /replay``          the finished deal in the replay viewer (every hand shown)
=======================  ==========================================================

Errors are JSON ``{"error": "..."}`` with a 4xx status: 400 malformed (bad JSON, wrong
fields, an action string that does not parse), 404 no game for this session, 409 a
stale step or a deal that is over (or not yet over, for the record), 415 a POST that is
not JSON, 422 an action not in the legal mask (and 404/405 for an unknown path or
method). A refused request changes nothing.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sichuan_env.records import RECORD_FORMAT
from sichuan_env.rules import Rules
from sichuan_env.svg import tile_defs
from sichuan_env.web.table import GameError, SharedAgent, WebGame

__all__ = ["COOKIE", "GameStore", "WebConfig", "create_app"]

COOKIE = "sichuan_game"
MAX_BODY = 4096


@dataclass
class WebConfig:
    """What every game of a server shares: the seats (``None`` the human's, else a
    :class:`~sichuan_env.web.table.SharedAgent`), the rules, the first deal's seed (None:
    a fresh random seed per game) and how many games are kept at most."""

    agents: Sequence[SharedAgent | None]
    rules: Rules
    seed: int | None = None
    max_games: int = 200
    seed_source: Callable[[], int] = field(default=lambda: secrets.randbelow(2**31))


class GameStore:
    """The games by id, at most ``max_games`` (the least recently used go first)."""

    def __init__(self, max_games: int) -> None:
        self.max_games = max_games
        self.games: OrderedDict[str, WebGame] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, game_id: str | None) -> WebGame:
        with self.lock:
            game = self.games.get(game_id or "")
            if game is None:
                if not game_id:
                    raise GameError("no game in this browser session: start one with "
                                    "POST /api/new", 404)
                raise GameError("unknown game (the server was restarted or the game was "
                                "dropped): start a new deal", 404)
            self.games.move_to_end(game_id)
            return game

    def add(self, game: WebGame) -> str:
        game_id = secrets.token_urlsafe(18)
        with self.lock:
            self.games[game_id] = game
            while len(self.games) > self.max_games:
                self.games.popitem(last=False)
        return game_id


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _page() -> str:
    text = resources.files("sichuan_env.web").joinpath("static/play.html").read_text("utf-8")
    return text.replace("<!--TILE-DEFS-->", tile_defs())


async def _json_body(request: Request) -> dict[str, Any]:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise GameError(f"send JSON (Content-Type: application/json), got {kind or 'none'!r}",
                        415)
    body = await request.body()
    if len(body) > MAX_BODY:
        raise GameError(f"request body over {MAX_BODY} bytes", 400)
    if not body.strip():
        return {}
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as err:
        raise GameError(f"bad JSON: {err}", 400) from None
    if not isinstance(data, dict):
        raise GameError(f"the body must be a JSON object, got {type(data).__name__}", 400)
    return data


def create_app(config: WebConfig, *, allowed_hosts: Sequence[str] | None = None) -> Starlette:
    """The ASGI application. ``allowed_hosts``: Host header values accepted (None: any),
    so that a page on another site cannot reach a server on 127.0.0.1 by DNS rebinding."""
    store = GameStore(config.max_games)

    def new_game() -> WebGame:
        seed = config.seed if config.seed is not None else config.seed_source()
        return WebGame(config.agents, config.rules, seed)

    async def page(request: Request) -> Response:
        return HTMLResponse(_page(), headers={"Cache-Control": "no-store"})

    def api_state(request: Request) -> Response:
        try:
            game = store.get(request.cookies.get(COOKIE))
        except GameError as err:
            return _error(str(err), err.status)
        with game.lock:
            return JSONResponse(game.state())

    async def api_new(request: Request) -> Response:
        try:
            data = await _json_body(request)
            if data:
                raise GameError(f"POST /api/new takes no fields, got {sorted(data)}", 400)
        except GameError as err:
            return _error(str(err), err.status)
        game_id = request.cookies.get(COOKIE)
        try:
            game = store.get(game_id)
        except GameError:
            game = None
        if game is None:
            game = await run_in_threadpool(new_game)
            game_id = store.add(game)
            state = await run_in_threadpool(_locked, game, game.state, game.frames_at_start)
        else:
            state = await run_in_threadpool(_locked, game,
                                            lambda: game.state(game.new_deal()))
        resp = JSONResponse(state)
        resp.set_cookie(COOKIE, game_id, httponly=True, samesite="strict")
        return resp

    async def api_act(request: Request) -> Response:
        try:
            data = await _json_body(request)
            game = store.get(request.cookies.get(COOKIE))
            unknown = sorted(set(data) - {"step", "action"})
            if unknown or "step" not in data or "action" not in data:
                raise GameError('send {"step": N, "action": "discard 5m"}'
                                + (f"; unknown fields {unknown}" if unknown else ""), 400)
            state = await run_in_threadpool(
                _locked, game, lambda: game.state(game.act(data["step"], data["action"])))
        except GameError as err:
            return _error(str(err), err.status)
        return JSONResponse(state)

    def api_record(request: Request) -> Response:
        try:
            game = store.get(request.cookies.get(COOKIE))
            rec = _locked(game, game.record)
        except GameError as err:
            return _error(str(err), err.status)
        name = f"sichuan-seed{rec['seed']}.jsonl"
        return Response(json.dumps(rec, separators=(",", ":")) + "\n",
                        media_type="application/x-ndjson",
                        headers={"Content-Disposition": f'attachment; filename="{name}"',
                                 "X-Record-Format": RECORD_FORMAT})

    def replay(request: Request) -> Response:
        from sichuan_env.viewer import build_frames, render_page

        try:
            game = store.get(request.cookies.get(COOKIE))
            rec = _locked(game, game.record)
        except GameError as err:
            return _error(str(err), err.status)
        players = ", ".join(f"seat {s} {n}" for s, n in enumerate(rec["players"]))
        page = render_page(rec, build_frames(rec), title=f"Your deal (seed {rec['seed']}): "
                                                             f"{players}")
        return HTMLResponse(page)

    static = resources.files("sichuan_env.web").joinpath("static")
    routes = [
        Route("/", page),
        Route("/api/state", api_state),
        Route("/api/new", api_new, methods=["POST"]),
        Route("/api/act", api_act, methods=["POST"]),
        Route("/api/record", api_record),
        Route("/replay", replay),
        Mount("/static", app=StaticFiles(directory=str(static)), name="static"),
    ]
    middleware = []
    if allowed_hosts is not None:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)))
    async def http_error(request: Request, exc: Exception) -> Response:
        detail = getattr(exc, "detail", str(exc))
        return _error(f"{request.method} {request.url.path}: {detail}",
                      getattr(exc, "status_code", 400))

    app = Starlette(routes=routes, middleware=middleware,
                    exception_handlers={HTTPException: http_error})
    app.state.store = store
    return app


def _locked(game: WebGame, fn: Callable[..., Any], *args: Any) -> Any:
    with game.lock:
        return fn(*args)
