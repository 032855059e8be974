"""``python -m sichuan_env.play``: the play command (:func:`sichuan_env.play.terminal.main`)."""

from sichuan_env.play.terminal import main

raise SystemExit(main())
