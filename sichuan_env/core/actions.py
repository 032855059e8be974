"""The one discrete action space shared by every decision.

=========  ===========  ===============================================================
index      string       meaning
=========  ===========  ===============================================================
0..26      discard 5m   discard one tile of kind ``a`` (the set-aside tile when one is
                        pending: then it is the only discard offered)
27..53     void 5m      forbidden-suit choice: set aside one tile of kind ``a - 27``
54..56     void s       forbidden-suit choice by indicator card for suit ``a - 54``
                        (m, p, s); only for a suit with no tile in the dealt hand
57..83     kong 5m      kong on one's own turn with kind ``a - 57``: concealed (four in
                        hand), promoted (tile just drawn added to a pung) or postponed
                        (tile held from before added to a pung) -- implied by the hand
84         pung         claim the current discard for a pung
85         kong         claim the current discard for a melded kong
86         hu           declare Hu: self-drawn on one's own turn, or on the current
                        discard, or by robbing a kong
87         pass         decline every claim offered on a discard or a kong
=========  ===========  ===============================================================

Strings follow the game-record format (``sichuan-record/1``).
"""

from __future__ import annotations

from sichuan_env.core.tiles import SUITS, parse_tile, tile_str

DISCARD = 0
VOID_TILE = 27
VOID_SUIT = 54
KONG = 57
PUNG = 84
MELDED_KONG = 85
HU = 86
PASS = 87
N_ACTIONS = 88

_NAMED = {PUNG: "pung", MELDED_KONG: "kong", HU: "hu", PASS: "pass"}
_BY_NAME = {v: k for k, v in _NAMED.items()}


def action_to_str(a: int) -> str:
    """``5`` -> ``"discard 6m"``; ``86`` -> ``"hu"``."""
    a = int(a)
    if not 0 <= a < N_ACTIONS:
        raise ValueError(f"action {a} out of range 0..{N_ACTIONS - 1}")
    if a < VOID_TILE:
        return f"discard {tile_str(a - DISCARD)}"
    if a < VOID_SUIT:
        return f"void {tile_str(a - VOID_TILE)}"
    if a < KONG:
        return f"void {SUITS[a - VOID_SUIT]}"
    if a < PUNG:
        return f"kong {tile_str(a - KONG)}"
    return _NAMED[a]


def action_from_str(text: str) -> int:
    """``"discard 5m"`` -> ``4``. Raises ``ValueError`` for anything else."""
    if not isinstance(text, str):
        raise ValueError(f"an action string is expected, got {text!r}")
    words = text.strip().lower().split()
    if len(words) == 1 and words[0] in _BY_NAME:
        return _BY_NAME[words[0]]
    if len(words) == 2:
        verb, arg = words
        if verb == "void" and len(arg) == 1 and arg in SUITS:  # "mp" is no suit
            return VOID_SUIT + SUITS.index(arg)
        if verb in ("discard", "void", "kong"):
            try:
                k = parse_tile(arg)
            except ValueError as err:
                raise ValueError(f"malformed action {text!r}: {err}") from None
            return {"discard": DISCARD, "void": VOID_TILE, "kong": KONG}[verb] + k
    raise ValueError(
        f"malformed action {text!r}: expected 'discard 5m', 'void 5m', 'void s', 'kong 5m', "
        "'kong', 'pung', 'hu' or 'pass'"
    )


ACTION_STRINGS: tuple[str, ...] = tuple(action_to_str(a) for a in range(N_ACTIONS))
