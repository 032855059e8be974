"""The rule engine, the ground floor: it imports nothing above it.

Tiles and their names (:mod:`~sichuan_env.core.tiles`, :mod:`~sichuan_env.core.vocab`), the
rule options (:mod:`~sichuan_env.core.rules`), the action layout
(:mod:`~sichuan_env.core.actions`), per-table seeds (:mod:`~sichuan_env.core.seeding`), the
hand lookup tables and kernels (:mod:`~sichuan_env.core.tables`,
:mod:`~sichuan_env.core.hand_kernels`, :mod:`~sichuan_env.core.hands`), the batched state
(:mod:`~sichuan_env.core.state`), the compiled step (:mod:`~sichuan_env.core.engine_kernels`)
and its Python API (:mod:`~sichuan_env.core.engine`), with numba set up once in
:mod:`~sichuan_env.core.jit`.
"""
