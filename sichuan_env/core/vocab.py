"""The shared vocabulary: tile kinds, suits, ranks and meld codes, defined once.

A tile is a kind ``0..26``: ``kind = suit * 9 + rank - 1`` with suits ``m`` = 0, ``p`` = 1,
``s`` = 2. Melds appear in two codings:

* the **meld code** of the engine state (``State.meld``, per seat and kind):
  :data:`NO_MELD` .. :data:`POSTPONED_KONG`;
* the **meld kind** of the hand tables (:mod:`sichuan_env.core.hands`): 0 none, 1 pung,
  2 kong -- what a hand's shape and fans depend on. :data:`MELD_KIND_OF_CODE` maps codes
  to kinds.

This module imports only numpy; every layer may import it.
"""

from __future__ import annotations

import numpy as np

N_SUITS = 3
N_RANKS = 9
N_KINDS = N_SUITS * N_RANKS  # 27
COPIES = 4  # copies of each kind
N_TILES = N_KINDS * COPIES  # 108
SUITS = "mps"  # suit letters, by suit index
HAND_SIZE = 13  # tiles dealt to each seat; the dealer gets a 14th
WALL_SIZE = N_TILES - 4 * HAND_SIZE - 1  # 55: the wall left after the deal
SEAT_WINDS = ("E", "S", "W", "N")  # by seat relative to the dealer

#: (27,) int8: the suit 0..2 of each kind
SUIT_OF = np.repeat(np.arange(N_SUITS), N_RANKS).astype(np.int8)
#: (27,) int8: the rank of each kind, 0-based (0 = rank 1, 8 = rank 9)
RANK_OF = np.tile(np.arange(N_RANKS), N_SUITS).astype(np.int8)

# meld codes of the engine state
NO_MELD, PUNG, CONCEALED_KONG, MELDED_KONG, PROMOTED_KONG, POSTPONED_KONG = 0, 1, 2, 3, 4, 5
MELD_NAMES = ("", "pung", "concealed_kong", "melded_kong", "promoted_kong", "postponed_kong")
#: (6,) int8: tiles in a meld, by meld code
MELD_TILES = np.array([0, 3, 4, 4, 4, 4], np.int8)
#: (6,) int8: the hand tables' meld kind (0 none, 1 pung, 2 kong) of each meld code
MELD_KIND_OF_CODE = np.array([0, 1, 2, 2, 2, 2], np.int8)

# meld kinds of the hand tables
MELD_KIND_NONE, MELD_KIND_PUNG, MELD_KIND_KONG = 0, 1, 2
#: (3,) int8: tiles a meld kind stands for
MELD_KIND_TILES = np.array([0, 3, 4], np.int8)
