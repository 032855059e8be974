"""Helpers the tests share: reference implementations the compiled code is checked
against (``reference*``), seeded play policies (``policies``), engine invariants
(``invariants``), golden-record writers (``golden_play``, ``bot_golden``) and trace
utilities (``trace_helpers``). Imported as ``support.NAME`` (``tests/`` is on the path
when pytest runs)."""
