"""A naive plain-Python implementation of the deal, the yardstick of the AEC env's speed.

    python benchmarks/plain_python.py [--seconds 3] [--observe]

Written for this comparison only (no code shared with the package, no numpy, no tables,
no caching): hands are lists of 27 counts, a Hu is found by a recursive split, and every
decision builds its menu from scratch, as a straightforward first implementation of
docs/rules.md would. It follows the decision flow of the rule book (the hidden void
choice by set-aside tile or indicator, strict-void discards, the set-aside tile played
without asking as the first discard unless a concealed kong is possible, concealed,
promoted and postponed kongs with replacements from the back, self-drawn Hu, claims asked
counter-clockwise with several Hu on one discard, robbing a promoted kong, the wall end
with ready hands and flower pigs), and scores simply (Kong, All Pungs, Full Flush and
Seven Pairs fans, capped). Left out: the passed-Hu restriction, Shoot after Kong refunds
and the situational fans. A random player picks uniformly among each menu's options, as
the AEC benchmark's player does.

Two modes:

* rules only (the default): no observation, only the menus;
* ``observe=True`` (``--observe``): every decision also builds, in plain Python (lists of
  floats), what the AEC env hands the acting agent: the 78 x 27 planes of
  ``sichuan_env.seats.observation.encode`` (layout in docs/environments.md; the passed-Hu and
  match planes stay 0, as the reference has neither) and the 88-long action mask.
  ``tests/test_plain_python_reference.py`` checks these planes and masks against the
  engine's on positions the two reach together.

:func:`rate` is the "plain-Python reference" rate of ``benchmarks/envs.py``.
"""

from __future__ import annotations

import argparse
import random
import time

N_KINDS = 27
CAP = 3
WALL_SIZE = 55
VOID, TURN, CLAIM, ROB = 0, 1, 2, 3  # the phases an observation shows (4 = done)
N_PLANES = 78
N_ACTIONS = 88
# first plane of each feature (the layout of sichuan_env.seats.observation.encode)
HAND, SET_ASIDE, DRAWN, MY_VOID = 0, 4, 5, 6
PUNG_AT, CONCEALED_AT, EXPOSED_AT, DISCARDS, RECENT = 7, 11, 15, 19, 23
VOID_SHOWN, HU_TILE, CLAIM_TILE, LIVE, VISIBLE = 39, 43, 47, 48, 49
PHASE, WALL_LEFT, SCORES, DEALER, HU, CLAIM_FROM = 50, 55, 56, 64, 68, 72
# action ids (the layout of sichuan_env.core.actions)
ACTION_BASE = {"discard": 0, "tile": 27, "suit": 54, "kong": 57, "promote": 57}
CLAIM_ACTION = {"pung": 84, "kong": 85, "hu": 86, "pass": 87}


def _suit(k: int) -> int:
    return k // 9


def _sets(c: list[int], need: int) -> bool:
    """``c`` splits into ``need`` pungs or chows (recursive, lowest tile first)."""
    if need == 0:
        return not any(c)
    k = next((i for i in range(N_KINDS) if c[i]), None)
    if k is None:
        return False
    if c[k] >= 3:
        c[k] -= 3
        ok = _sets(c, need - 1)
        c[k] += 3
        if ok:
            return True
    if k % 9 <= 6 and c[k + 1] and c[k + 2]:
        c[k] -= 1
        c[k + 1] -= 1
        c[k + 2] -= 1
        ok = _sets(c, need - 1)
        c[k] += 1
        c[k + 1] += 1
        c[k + 2] += 1
        return ok
    return False


def complete(c: list[int], melds: int) -> bool:
    """A winning hand: seven pairs, or a pair and 4 - melds sets."""
    if melds == 0 and sum(c) == 14 and all(x % 2 == 0 for x in c):
        return True
    for k in range(N_KINDS):
        if c[k] >= 2:
            c[k] -= 2
            ok = _sets(c, 4 - melds)
            c[k] += 2
            if ok:
                return True
    return False


class Seat:
    def __init__(self, tiles: list[int]) -> None:
        self.c = [0] * N_KINDS
        for t in tiles:
            self.c[t] += 1
        self.melds: dict[int, str] = {}  # kind -> "pung", "concealed" or "exposed" (kong)
        self.void = -1
        self.aside = -1
        self.hu = False
        self.hu_tile = -1
        self.self_drawn = False
        self.river: list[int] = []  # discards in order, claimed ones included
        self.void_shown = False  # shown with the first discard

    def has_void(self) -> bool:
        return any(self.c[self.void * 9:self.void * 9 + 9])

    def can_win(self, tile: int | None = None) -> bool:
        if self.aside >= 0 or self.has_void() or (tile is not None and
                                                  _suit(tile) == self.void):
            return False
        if tile is not None:
            self.c[tile] += 1
        ok = complete(self.c, len(self.melds))
        if tile is not None:
            self.c[tile] -= 1
        return ok

    def value(self) -> int:
        fans = sum(how != "pung" for how in self.melds.values())
        kinds = [k for k in range(N_KINDS) if self.c[k]] + list(self.melds)
        if len({_suit(k) for k in kinds}) == 1:
            fans += 2
        if not self.melds and all(x % 2 == 0 for x in self.c):
            fans += 2
        elif all(x in (0, 2, 3) for x in self.c) and sum(x == 2 for x in self.c) == 1:
            fans += 1
        return 2 ** min(fans, CAP)


class Deal:
    """One deal between four random players; :meth:`play` returns its decision count.

    ``tiles`` (default: shuffled by ``seed``) are the 108 tiles in dealing order: the
    dealer's (seat 0's) 14, the other seats' 13 each, then the wall in drawing order
    (replacements come from its back). With ``observe``, each decision first builds the
    acting seat's observation and action mask (:meth:`observe`, :meth:`mask`)."""

    def __init__(self, seed: int, observe: bool = False,
                 tiles: list[int] | None = None) -> None:
        self.rng = random.Random(seed)
        if tiles is None:
            tiles = [k for k in range(N_KINDS) for _ in range(4)]
            self.rng.shuffle(tiles)
        self.seats = [Seat(tiles[0:14])] + [Seat(tiles[14 + 13 * i:27 + 13 * i])
                                           for i in range(3)]
        self.wall = list(tiles[53:])
        self.scores = [0, 0, 0, 0]
        self.decisions = 0
        self.winners = 0
        self.observing = observe
        self.dealer = 0
        self.phase = VOID
        self.active = 0  # the seat on turn, or the discarder (or kong declarer) in a window
        self.drawn = -1  # the tile the seat on turn drew this turn
        self.claim_tile = -1
        self.live = [0] * N_KINDS  # discards still on the table
        self.won = [0] * N_KINDS  # tiles taken by a Hu

    def choose(self, seat: int, options: list) -> object:
        """``seat`` picks one of ``options`` (tuples on its turn and in the void choice,
        words in a claim window)."""
        self.decisions += 1
        if self.observing:
            self.last_seen = (self.observe(seat), self.mask(options))
        return options[self.rng.randrange(len(options))]

    def pay(self, frm: int, to: int, points: int) -> None:
        self.scores[frm] -= points
        self.scores[to] += points

    # ------------------------------------------------------------------ what a seat sees
    def mask(self, options: list) -> list[int]:
        """The 88 action ids: 1 for each option of the menu."""
        m = [0] * N_ACTIONS
        for o in options:
            if type(o) is tuple:
                m[ACTION_BASE[o[0]] + o[1] if o[0] != "hu" else 86] = 1
            else:
                m[CLAIM_ACTION[o]] = 1
        return m

    def observe(self, seat: int) -> list[list[float]]:
        """The 78 planes of 27 floats that ``seat`` sees (the AEC env's observation)."""
        p = [[0.0] * N_KINDS for _ in range(N_PLANES)]
        me = self.seats[seat]
        visible = p[VISIBLE]
        for k in range(N_KINDS):
            for j in range(min(me.c[k], 4)):
                p[HAND + j][k] = 1.0
            p[LIVE][k] = self.live[k] / 4
            visible[k] = (me.c[k] + self.live[k] + self.won[k]) / 4
        if me.aside >= 0:
            p[SET_ASIDE][me.aside] = 1.0
            visible[me.aside] += 0.25
        if self.phase == TURN and self.active == seat and self.drawn >= 0:
            p[DRAWN][self.drawn] = 1.0
        if self.phase in (CLAIM, ROB):
            p[CLAIM_TILE][self.claim_tile] = 1.0
        if me.void >= 0:
            for k in range(9 * me.void, 9 * me.void + 9):
                p[MY_VOID][k] = 1.0
        for r in range(4):
            s = self.seats[(seat + r) % 4]
            for k, how in s.melds.items():
                if how == "pung":
                    p[PUNG_AT + r][k] = 1.0
                    visible[k] += 0.75
                else:
                    p[(CONCEALED_AT if how == "concealed" else EXPOSED_AT) + r][k] = 1.0
                    visible[k] += 1.0
            for k in s.river:
                p[DISCARDS + r][k] += 0.25
            for j, k in enumerate(reversed(s.river[-4:])):
                p[RECENT + 4 * r + j][k] = 1.0
            if s.void_shown:
                for k in range(9 * s.void, 9 * s.void + 9):
                    p[VOID_SHOWN + r][k] = 1.0
            if s.hu_tile >= 0:
                if r > 0 and s.self_drawn:  # another seat's self-drawn tile lies face down
                    visible[s.hu_tile] -= 0.25
                else:
                    p[HU_TILE + r][s.hu_tile] = 1.0
            score = max(-16.0, min(16.0, self.scores[(seat + r) % 4] / 64))
            p[SCORES + r] = [score] * N_KINDS
            if s.hu:
                p[HU + r] = [1.0] * N_KINDS
        p[PHASE + self.phase] = [1.0] * N_KINDS
        p[WALL_LEFT] = [len(self.wall) / WALL_SIZE] * N_KINDS
        p[DEALER + (self.dealer - seat) % 4] = [1.0] * N_KINDS
        if self.phase in (CLAIM, ROB):
            p[CLAIM_FROM + (self.active - seat) % 4] = [1.0] * N_KINDS
        return p

    # ------------------------------------------------------------------ the deal
    def play(self) -> int:
        for i, s in enumerate(self.seats):  # the hidden void choice, dealer first
            opts = [("tile", k) for k in range(N_KINDS) if s.c[k]]
            opts += [("suit", u) for u in range(3) if not any(s.c[u * 9:u * 9 + 9])]
            how, x = self.choose(i, opts)
            if how == "tile":
                s.c[x] -= 1
                s.aside, s.void = x, _suit(x)
            else:
                s.void = x
        seat, after_pung = 0, False
        while True:
            nxt = self.turn(seat, after_pung)
            if nxt is None:
                return self.decisions
            seat, after_pung = nxt

    def next_live(self, seat: int) -> int:
        for d in range(1, 5):
            if not self.seats[(seat + d) % 4].hu:
                return (seat + d) % 4
        return seat

    def turn(self, seat: int, after_pung: bool) -> tuple[int, bool] | None:
        """The seat on turn decides (after its draw, a pung or a kong) until it discards
        or wins; returns who moves next (and whether by a pung), or None at the end."""
        s = self.seats[seat]
        while True:
            self.phase, self.active = TURN, seat
            kongs = []
            if self.wall and not after_pung:
                kongs = [("kong", k) for k in range(N_KINDS)
                         if s.c[k] == 4 and _suit(k) != s.void]
                kongs += [("promote", k) for k, how in s.melds.items()
                          if how == "pung" and s.c[k]]
            if s.aside >= 0:  # its only discard; played without asking unless a
                opts = [("discard", s.aside)] + [o for o in kongs if o[0] == "kong"]
                act, k = opts[0] if len(opts) == 1 else self.choose(seat, opts)  # kong
            else:
                opts = [("hu", -1)] if not after_pung and s.can_win() else []
                held = [k for k in range(N_KINDS) if s.c[k]]
                if s.has_void():  # strict void: forbidden tiles first
                    held = [k for k in held if _suit(k) == s.void]
                opts += kongs + [("discard", k) for k in held]
                act, k = self.choose(seat, opts)
            if act == "hu":
                v = s.value() + 1
                k = self.drawn if self.drawn >= 0 else max(range(N_KINDS),
                                                           key=lambda x: s.c[x])
                s.c[k] -= 1
                self.won[k] += 1
                s.hu, s.hu_tile, s.self_drawn = True, k, True
                self.winners += 1
                for o in range(4):
                    if o != seat and not self.seats[o].hu:
                        self.pay(o, seat, v)
                if self.winners == 3 or not self.wall:
                    return self.end()
                return self.draw(self.next_live(seat))
            if act == "discard":
                if k == s.aside:
                    s.aside = -1
                else:
                    s.c[k] -= 1
                s.river.append(k)
                s.void_shown = True
                self.live[k] += 1
                return self.claims(seat, k)
            if act == "promote":
                s.c[k] -= 1
                robbers = self.window(seat, k, rob=True)
                if robbers:
                    return self.wins(seat, robbers, k, robbed=True)
                s.melds[k] = "exposed"
                points = 1 if k == self.drawn else 0  # a postponed kong earns nothing
            else:
                s.c[k] -= 4
                s.melds[k] = "concealed"
                points = 2
            for o in range(4):
                if o != seat and not self.seats[o].hu:
                    self.pay(o, seat, points)
            self.drawn = self.wall.pop()  # replacement from the back
            s.c[self.drawn] += 1
            after_pung = False

    def window(self, discarder: int, tile: int, rob: bool = False) -> list[int]:
        """Ask every seat that may claim ``tile``, counter-clockwise; the Hu answers."""
        self.phase, self.active, self.claim_tile = (ROB if rob else CLAIM), discarder, tile
        hus, claim = [], None
        for d in range(1, 4):
            o = (discarder + d) % 4
            t = self.seats[o]
            if t.hu:
                continue
            opts = ["hu"] if t.can_win(tile) else []
            if not rob and _suit(tile) != t.void:
                if t.c[tile] >= 2:
                    opts.append("pung")
                if t.c[tile] == 3 and self.wall:
                    opts.append("kong")
            if not opts:
                continue
            answer = self.choose(o, opts + ["pass"])
            if answer == "hu":
                hus.append(o)
            elif answer != "pass" and claim is None:
                claim = (o, answer)
        self.claim = claim
        return hus

    def wins(self, discarder: int, hus: list[int], tile: int,
             robbed: bool = False) -> tuple[int, bool] | None:
        for o in hus:
            t = self.seats[o]
            t.c[tile] += 1
            v = t.value()
            t.c[tile] -= 1
            t.hu, t.hu_tile = True, tile
            self.winners += 1
            self.pay(discarder, o, v)
        if not robbed:
            self.live[tile] -= 1
        self.won[tile] += 1
        if self.winners >= 3 or not self.wall:
            return self.end()
        last = max(hus, key=lambda o: (o - discarder) % 4)
        return self.draw(self.next_live(last))

    def claims(self, discarder: int, tile: int) -> tuple[int, bool] | None:
        hus = self.window(discarder, tile)
        if hus:
            return self.wins(discarder, hus, tile)
        if self.claim is not None:
            o, how = self.claim
            t = self.seats[o]
            self.live[tile] -= 1
            if how == "pung":
                t.c[tile] -= 2
                t.melds[tile] = "pung"
                self.drawn = -1
                return o, True
            t.c[tile] -= 3
            t.melds[tile] = "exposed"
            self.pay(discarder, o, 2)
            self.drawn = self.wall.pop()
            t.c[self.drawn] += 1
            return o, False
        if not self.wall:
            return self.end()
        return self.draw(self.next_live(discarder))

    def draw(self, seat: int) -> tuple[int, bool] | None:
        if not self.wall:
            return self.end()
        self.drawn = self.wall.pop(0)
        self.seats[seat].c[self.drawn] += 1
        return seat, False

    def end(self) -> None:
        """Wall end: ready seats collect their best value from the not-ready ones; flower
        pigs pay the penalty."""
        if self.winners >= 3:
            return None
        ready = {}
        for i, s in enumerate(self.seats):
            if s.hu or s.aside >= 0 or s.has_void():
                continue
            best = 0
            for k in range(N_KINDS):
                if _suit(k) != s.void and s.c[k] < 4 and s.can_win(k):
                    s.c[k] += 1
                    best = max(best, s.value())
                    s.c[k] -= 1
            if best:
                ready[i] = best
        for i, s in enumerate(self.seats):
            if s.hu or i in ready:
                continue
            for r, v in ready.items():
                self.pay(i, r, v)
            if (s.aside >= 0 or s.has_void()) and s.river:
                self.scores[i] -= 48
        return None


def rate(seconds: float, clock=time.perf_counter,
         observe: bool = False) -> tuple[float, float]:
    """(decisions per second, decisions per deal) of random play over ``seconds``, with
    each decision's observation and mask built when ``observe``."""
    t0 = clock()
    decisions = deals = 0
    while clock() - t0 < seconds:
        decisions += Deal(deals, observe=observe).play()
        deals += 1
    return decisions / (clock() - t0), decisions / max(1, deals)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--observe", action="store_true",
                    help="build each decision's observation and action mask too")
    args = ap.parse_args()
    if not args.seconds > 0:
        ap.error("--seconds must be > 0")
    r, per_deal = rate(args.seconds, observe=args.observe)
    what = "rules and observations" if args.observe else "rules only"
    print(f"plain Python ({what}): {r:,.0f} decisions/s ({per_deal:.1f} decisions per deal)")


if __name__ == "__main__":
    main()
