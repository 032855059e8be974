"""Play against the bots in a browser: ``python -m sichuan_env.play --web``.

:mod:`sichuan_env.web.table` holds one game and decides what the human may see;
:mod:`sichuan_env.web.app` is the Starlette application; :mod:`sichuan_env.web.cli` the
command line. The server needs the ``web`` extra (``pip install -e ".[web]"``).
"""
