"""Play against the bots in a browser: ``python -m sichuan_env.play --web``.

:mod:`sichuan_env.play.web.table` holds one game and decides what the human may see;
:mod:`sichuan_env.play.web.bots` the bots of one game (their own objects, a time limit per
decision, a fallback); :mod:`sichuan_env.play.web.workers` the processes slow bots think in;
:mod:`sichuan_env.play.web.store` the games with their limits; :mod:`sichuan_env.play.web.guard` the
checks and headers of every request; :mod:`sichuan_env.play.web.app` the Starlette
application; :mod:`sichuan_env.play.web.server` its socket and uvicorn settings;
:mod:`sichuan_env.play.web.memory` what a game costs in memory; :mod:`sichuan_env.play.web.cli` the
command line. The server needs the ``web``
extra (``pip install -e ".[web]"``).
"""
