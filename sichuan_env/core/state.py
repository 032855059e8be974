"""The batched game state: one NamedTuple of numpy arrays, batch axis first.

B tables, 4 seats, 27 tile kinds. Every field has a fixed shape and a small dtype.
Fields are grouped as hidden (the wall), private per seat (hands, set-aside tiles) and
public (everything a spectator sees). ``sichuan_env.seats.observation`` projects this onto what
one seat may know.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sichuan_env.core.actions import N_ACTIONS
from sichuan_env.core.rules import Rules
from sichuan_env.core.vocab import (  # noqa: F401 - the state's vocabulary, re-exported here
    CONCEALED_KONG,
    MELD_NAMES,
    MELDED_KONG,
    NO_MELD,
    POSTPONED_KONG,
    PROMOTED_KONG,
    PUNG,
    WALL_SIZE,
)

RIVER_SIZE = 60  # a seat discards at most once per draw or claim: <= 55 + 4 + 1

# phase
VOID, TURN, CLAIM, ROB, DONE = 0, 1, 2, 3, 4
PHASE_NAMES = ("void", "turn", "claim", "rob", "done")

# meld kinds per tile kind (state.meld): the codes NO_MELD .. POSTPONED_KONG and MELD_NAMES of
# sichuan_env.core.vocab, imported above

# claim options (state.claim_opts bits) and answers (state.claim_answer)
OPT_HU, OPT_PUNG, OPT_KONG = 1, 2, 4
ANS_NONE, ANS_PASS, ANS_PUNG, ANS_KONG, ANS_HU = 0, 1, 2, 3, 4

# end of a deal (state.end_reason)
END_NONE, END_THREE_HU, END_WALL = 0, 1, 2
END_NAMES = ("", "three_hu", "wall_exhausted")


class State(NamedTuple):
    # --- hidden ---
    wall: np.ndarray  # (B, 55) int8: wall tiles in draw order; -1 past a short custom wall
    wall_front: np.ndarray  # (B,) int16: index of the next normal draw
    wall_back: np.ndarray  # (B,) int16: one past the next replacement tile
    key: np.ndarray  # (B,) uint64: per-table key from SeedSequence; walls derive from it
    # --- private per seat ---
    hand: np.ndarray  # (B, 4, 27) int8: standing concealed tiles (set-aside tile excluded)
    set_aside: np.ndarray  # (B, 4) int8: set-aside (first-discard) tile kind, -1 none
    void: np.ndarray  # (B, 4) int8: forbidden suit 0..2, -1 before the choice (hidden
    #                   from others until void_revealed)
    waits: np.ndarray  # (B, 4) int32: bit k set when the seat's standing concealed hand
    #                    plus one tile of kind k is a winning hand (of its melds and void);
    #                    in its own turn, the hand without the tile drawn (a cache the
    #                    engine keeps, see sichuan_env.core.engine_kernels)
    # --- public ---
    void_revealed: np.ndarray  # (B, 4) bool: forbidden suit shown (after first discard)
    meld: np.ndarray  # (B, 4, 27) int8: meld kind per tile kind (NO_MELD .. POSTPONED_KONG)
    river: np.ndarray  # (B, 4, 60) int8: each seat's discards in order, -1 padding
    river_len: np.ndarray  # (B, 4) int8: number of discards per seat
    live_discards: np.ndarray  # (B, 27) int8: discards still on the table (not claimed)
    won_tiles: np.ndarray  # (B, 27) int8: tiles taken out of play by a Hu
    hu: np.ndarray  # (B, 4) bool: seat has declared Hu
    hu_tile: np.ndarray  # (B, 4) int8: the winning tile, -1
    hu_rank: np.ndarray  # (B, 4) int8: 0 for the first winner, 1, 2; -1 not won
    hu_from: np.ndarray  # (B, 4) int8: who paid the Hu (discarder or kong declarer); the
    #                      winner itself when self-drawn (its winning tile stays hidden); -1
    scores: np.ndarray  # (B, 4) int32: points this deal
    match_scores: np.ndarray  # (B, 4) int32: points of the finished deals of this match
    nonvoid_discard: np.ndarray  # (B, 4) bool: has discarded a tile not of its void suit
    kong_income: np.ndarray  # (B, 4, 4) int16: kong points paid [payer, receiver]
    turn_kong_paid: np.ndarray  # (B, 4) int16: kong points paid to the active seat this turn
    passed_hu: np.ndarray  # (B, 4) int16: highest Hu value declined since own last draw
    # --- flow ---
    phase: np.ndarray  # (B,) int8: VOID, TURN, CLAIM, ROB, DONE
    current: np.ndarray  # (B,) int8: the seat that decides now
    active: np.ndarray  # (B,) int8: turn owner (the discarder or kong declarer in a window)
    claim_tile: np.ndarray  # (B,) int8: tile under claim (discard or added kong tile), -1
    claim_opts: np.ndarray  # (B, 4) int8: OPT_* bits offered to each seat in this window
    claim_value: np.ndarray  # (B, 4) int16: value of the Hu offered in this window
    claim_answer: np.ndarray  # (B, 4) int8: ANS_* given so far in this window
    drawn_tile: np.ndarray  # (B,) int8: most recent draw of this turn, -1 none
    drawn_replacement: np.ndarray  # (B,) bool: that draw was a kong replacement
    after_pung: np.ndarray  # (B,) bool: this turn began with a pung (discard only)
    kong_this_turn: np.ndarray  # (B,) bool: the active seat declared a kong this turn
    shoot_flag: np.ndarray  # (B,) bool: the discard under claim follows a kong this turn
    dealer: np.ndarray  # (B,) int8
    next_dealer: np.ndarray  # (B,) int8: dealer of the next deal (docs/rules.md section 9)
    deal_index: np.ndarray  # (B,) int16: deal number within the match
    episode: np.ndarray  # (B,) int32: match number on this table (auto-reset counts up)
    end_reason: np.ndarray  # (B,) int8: END_* of the last finished deal
    done: np.ndarray  # (B,) bool: the match is over
    legal_action_mask: np.ndarray  # (B, 88) bool: the actions seat ``current`` may take
    #                   now (none on a finished table); kept up to date by the engine
    rules: Rules  # the rule options every table of this batch follows

    @property
    def batch_size(self) -> int:
        return int(self.phase.shape[0])

    @property
    def wall_left(self) -> np.ndarray:
        return (self.wall_back - self.wall_front).astype(np.int16)

    def arrays(self) -> tuple[np.ndarray, ...]:
        return tuple(self)[:-1]

    def copy(self) -> State:
        return State(*(a.copy() for a in self.arrays()), self.rules)

    def take(self, rows: np.ndarray | list[int]) -> State:
        """The tables ``rows`` as a smaller batch (a copy)."""
        rows = np.asarray(rows)
        if rows.ndim:  # an index array: numpy's advanced indexing already copies
            return State(*(a[rows] for a in self.arrays()), self.rules)
        return State(*(a[rows].copy() for a in self.arrays()), self.rules)

    def put_rows(self, rows: np.ndarray | list[int] | int, src: State) -> None:
        """Write the tables of ``src`` into tables ``rows`` of this state, in place (the
        inverse of :meth:`take`): table ``src[i]`` goes to ``rows[i]``. ``src`` must have
        one table per row and follow the same rules."""
        rows = np.atleast_1d(np.asarray(rows))
        if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
            raise ValueError(f"rows must be a 1-d array of table indices, got {rows!r}")
        if src.batch_size != rows.size:
            raise ValueError(f"put_rows: {rows.size} rows but {src.batch_size} tables given")
        if src.rules != self.rules:
            raise ValueError("put_rows: the tables follow other rules than this state")
        if rows.size and not (-self.batch_size <= rows.min() and rows.max() < self.batch_size):
            raise IndexError(f"rows must be table indices in [0, {self.batch_size}), got "
                             f"{rows.tolist()}")
        for dst, new in zip(self.arrays(), src.arrays(), strict=True):
            dst[rows] = new

    def nbytes_per_table(self) -> int:
        return sum(a.nbytes for a in self.arrays()) // max(1, self.batch_size)


def empty_state(B: int, rules: Rules) -> State:
    """A state of B tables with every field zeroed/defaulted (tables not yet dealt)."""
    i8 = np.int8
    return State(
        wall=np.full((B, WALL_SIZE), -1, i8),
        wall_front=np.zeros(B, np.int16),
        wall_back=np.zeros(B, np.int16),
        key=np.zeros(B, np.uint64),
        hand=np.zeros((B, 4, 27), i8),
        set_aside=np.full((B, 4), -1, i8),
        void=np.full((B, 4), -1, i8),
        waits=np.zeros((B, 4), np.int32),
        void_revealed=np.zeros((B, 4), bool),
        meld=np.zeros((B, 4, 27), i8),
        river=np.full((B, 4, RIVER_SIZE), -1, i8),
        river_len=np.zeros((B, 4), i8),
        live_discards=np.zeros((B, 27), i8),
        won_tiles=np.zeros((B, 27), i8),
        hu=np.zeros((B, 4), bool),
        hu_tile=np.full((B, 4), -1, i8),
        hu_rank=np.full((B, 4), -1, i8),
        hu_from=np.full((B, 4), -1, i8),
        scores=np.zeros((B, 4), np.int32),
        match_scores=np.zeros((B, 4), np.int32),
        nonvoid_discard=np.zeros((B, 4), bool),
        kong_income=np.zeros((B, 4, 4), np.int16),
        turn_kong_paid=np.zeros((B, 4), np.int16),
        passed_hu=np.zeros((B, 4), np.int16),
        phase=np.zeros(B, i8),
        current=np.zeros(B, i8),
        active=np.zeros(B, i8),
        claim_tile=np.full(B, -1, i8),
        claim_opts=np.zeros((B, 4), i8),
        claim_value=np.zeros((B, 4), np.int16),
        claim_answer=np.zeros((B, 4), i8),
        drawn_tile=np.full(B, -1, i8),
        drawn_replacement=np.zeros(B, bool),
        after_pung=np.zeros(B, bool),
        kong_this_turn=np.zeros(B, bool),
        shoot_flag=np.zeros(B, bool),
        dealer=np.zeros(B, i8),
        next_dealer=np.zeros(B, i8),
        deal_index=np.zeros(B, np.int16),
        episode=np.zeros(B, np.int32),
        end_reason=np.zeros(B, i8),
        done=np.zeros(B, bool),
        legal_action_mask=np.zeros((B, N_ACTIONS), bool),
        rules=rules,
    )
