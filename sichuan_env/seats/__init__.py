"""What a seat sees and how an agent sits down at a table.

The seat view (:mod:`~sichuan_env.seats.view`: the one place that decides what a seat may
know) and the observation planes built from it (:mod:`~sichuan_env.seats.observation`); the
agent interface and the resolver by name (:mod:`~sichuan_env.seats.agent`); the batched
driver that asks agents for their choices (:mod:`~sichuan_env.seats.driver`); bots in other
processes and languages: the ``sichuan-bot/1`` protocol (:mod:`~sichuan_env.seats.protocol`),
``exec:`` agents (:mod:`~sichuan_env.seats.exec_agent`,
:mod:`~sichuan_env.seats.bot_process`) and the server that seats a Python agent behind the
protocol (:mod:`~sichuan_env.seats.bot_server`). Imports only :mod:`sichuan_env.core`.
"""
