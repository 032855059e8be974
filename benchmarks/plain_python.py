"""A naive plain-Python implementation of the deal, the yardstick of the AEC env's speed.

    python benchmarks/plain_python.py [--seconds 3]

Written for this comparison only (no code shared with the package, no numpy, no tables,
no caching): hands are lists of 27 counts, a Hu is found by a recursive split, and every
decision builds its menu from scratch, as a straightforward first implementation of
docs/rules.md would. It follows the decision flow of the rule book (the hidden void
choice by set-aside tile or indicator, strict-void discards, the forced discard of the
set-aside tile, concealed, promoted and melded kongs with replacements from the back,
self-drawn Hu, claims asked counter-clockwise with several Hu on one discard, robbing a
promoted kong, the wall end with ready hands and flower pigs), and scores simply (Kong,
All Pungs, Full Flush and Seven Pairs fans, capped). Left out: the passed-Hu restriction,
postponed kongs, Shoot after Kong refunds and the situational fans. A random player picks
uniformly among each menu's options, as the AEC benchmark's player does.

:func:`rate` is the "plain-Python reference" rate of ``benchmarks/envs.py``.
"""

from __future__ import annotations

import argparse
import random
import time

N_KINDS = 27
CAP = 3


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
        self.melds: list[tuple[int, bool]] = []  # (kind, is_kong)
        self.void = -1
        self.aside = -1
        self.hu = False
        self.discards = 0

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
        fans = sum(k for _, k in self.melds)
        kinds = [k for k in range(N_KINDS) if self.c[k]] + [k for k, _ in self.melds]
        if len({_suit(k) for k in kinds}) == 1:
            fans += 2
        if not self.melds and all(x % 2 == 0 for x in self.c):
            fans += 2
        elif all(x in (0, 2, 3) for x in self.c) and sum(x == 2 for x in self.c) == 1:
            fans += 1
        return 2 ** min(fans, CAP)


class Deal:
    """One deal between four random players; :meth:`play` returns its decision count."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        tiles = [k for k in range(N_KINDS) for _ in range(4)]
        self.rng.shuffle(tiles)
        self.seats = [Seat(tiles[0:14])] + [Seat(tiles[14 + 13 * i:27 + 13 * i])
                                           for i in range(3)]
        self.wall = tiles[53:]
        self.scores = [0, 0, 0, 0]
        self.decisions = 0
        self.winners = 0

    def choose(self, options: list) -> object:
        self.decisions += 1
        return options[self.rng.randrange(len(options))]

    def pay(self, frm: int, to: int, points: int) -> None:
        self.scores[frm] -= points
        self.scores[to] += points

    def play(self) -> int:
        for s in self.seats:  # the hidden void choice
            opts = [("tile", k) for k in range(N_KINDS) if s.c[k]]
            opts += [("suit", u) for u in range(3) if not any(s.c[u * 9:u * 9 + 9])]
            how, x = self.choose(opts)
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
            kongs = []
            if self.wall and not after_pung:
                kongs = [("kong", k) for k in range(N_KINDS)
                         if s.c[k] == 4 and _suit(k) != s.void]
                kongs += [("promote", k) for k, kong in s.melds if not kong and s.c[k]]
            if s.aside >= 0:
                opts = [("discard", s.aside)] + kongs
                act, k = opts[0] if len(opts) == 1 else self.choose(opts)  # forced: auto
            else:
                opts = [("hu", -1)] if not after_pung and s.can_win() else []
                held = [k for k in range(N_KINDS) if s.c[k]]
                if s.has_void():  # strict void: forbidden tiles first
                    held = [k for k in held if _suit(k) == s.void]
                opts += kongs + [("discard", k) for k in held]
                act, k = self.choose(opts)
            if act == "hu":
                s.hu = True
                self.winners += 1
                v = s.value() + 1
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
                s.discards += 1
                return self.claims(seat, k)
            if act == "promote":
                robbers = self.window(seat, k, rob=True)
                if robbers:
                    s.c[k] -= 1
                    return self.wins(seat, robbers, k)
                s.c[k] -= 1
                s.melds[s.melds.index((k, False))] = (k, True)
                points = 1
            else:
                s.c[k] -= 4
                s.melds.append((k, True))
                points = 2
            for o in range(4):
                if o != seat and not self.seats[o].hu:
                    self.pay(o, seat, points)
            s.c[self.wall.pop()] += 1  # replacement from the back
            after_pung = False

    def window(self, discarder: int, tile: int, rob: bool = False) -> list[int]:
        """Ask every seat that may claim ``tile``, counter-clockwise; the Hu answers."""
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
            answer = self.choose(opts + ["pass"])
            if answer == "hu":
                hus.append(o)
            elif answer != "pass":
                claim = (o, answer)
        self.claim = claim
        return hus

    def wins(self, discarder: int, hus: list[int], tile: int) -> tuple[int, bool] | None:
        for o in hus:
            t = self.seats[o]
            t.c[tile] += 1
            t.hu = True
            self.winners += 1
            self.pay(discarder, o, t.value())
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
            if how == "pung":
                t.c[tile] -= 2
                t.melds.append((tile, False))
                return o, True
            t.c[tile] -= 3
            t.melds.append((tile, True))
            self.pay(discarder, o, 2)
            t.c[self.wall.pop()] += 1
            return o, False
        if not self.wall:
            return self.end()
        return self.draw(self.next_live(discarder))

    def draw(self, seat: int) -> tuple[int, bool] | None:
        if not self.wall:
            return self.end()
        self.seats[seat].c[self.wall.pop(0)] += 1
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
            if (s.aside >= 0 or s.has_void()) and s.discards:
                self.scores[i] -= 48
        return None


def rate(seconds: float, clock=time.perf_counter) -> tuple[float, float]:
    """(decisions per second, decisions per deal) of random play over ``seconds``."""
    t0 = clock()
    decisions = deals = 0
    while clock() - t0 < seconds:
        decisions += Deal(deals).play()
        deals += 1
    return decisions / (clock() - t0), decisions / max(1, deals)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args()
    if not args.seconds > 0:
        ap.error("--seconds must be > 0")
    r, per_deal = rate(args.seconds)
    print(f"plain Python: {r:,.0f} decisions/s ({per_deal:.1f} decisions per deal)")


if __name__ == "__main__":
    main()
