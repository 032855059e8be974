"""Deals written down and drawn.

Game records (:mod:`~sichuan_env.records.record`: build, replay, store), records of random
play (:mod:`~sichuan_env.records.selfplay`), one table stepped by hand
(:mod:`~sichuan_env.records.game`), the public log (:mod:`~sichuan_env.records.public_log`),
text, HTML and SVG pictures (:mod:`~sichuan_env.records.render`,
:mod:`~sichuan_env.records.svg`) and the replay viewer (:mod:`~sichuan_env.records.viewer`).
Imports :mod:`sichuan_env.core` and :mod:`sichuan_env.seats`.
"""
