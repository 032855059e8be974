"""Play against the bots: in a terminal (:mod:`~sichuan_env.play.terminal`) or in the
browser (:mod:`sichuan_env.play.web`, the ``web`` extra). ``python -m sichuan_env.play``
runs the terminal command (``--web`` for the browser)."""
