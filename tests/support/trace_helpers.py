"""Helpers for the scripted game traces in ``test_engine_traces.py``.

Everything here is written from docs/rules.md alone (no engine code): a tiny winning-hand
checker used to validate hand-built deals, a deal builder that checks tile copies and fills
the seats a trace does not care about with harmless hands, and small drivers that play a
decision while asserting who decides and what is offered.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from sichuan_env.core.tiles import N_KINDS, SUITS, parse_kinds, tile_str

# --------------------------------------------------------------------------- tiles


def kinds(text: str) -> list[int]:
    return parse_kinds(text)


def counts(text: str) -> list[int]:
    c = [0] * N_KINDS
    for k in parse_kinds(text):
        c[k] += 1
    return c


def compact(text: str) -> str:
    """Any tile string -> the compact form ``"123m55p"`` (suit order m, p, s)."""
    c = counts(text)
    out = []
    for s, letter in enumerate(SUITS):
        digits = "".join(str(r + 1) * c[s * 9 + r] for r in range(9))
        if digits:
            out.append(digits + letter)
    return "".join(out)


def tiles_list(text: str) -> list[str]:
    return [tile_str(k) for k in parse_kinds(text)]


# ------------------------------------------------------------------ hand checking


def _regular(c: list[int], need_pair: bool) -> bool:
    """Can the count vector be split into sets (chows, pungs) plus one pair if need_pair?"""
    i = next((k for k in range(N_KINDS) if c[k]), None)
    if i is None:
        return not need_pair
    if need_pair and c[i] >= 2:
        c[i] -= 2
        ok = _regular(c, False)
        c[i] += 2
        if ok:
            return True
    if c[i] >= 3:
        c[i] -= 3
        ok = _regular(c, need_pair)
        c[i] += 3
        if ok:
            return True
    if i % 9 <= 6 and c[i + 1] and c[i + 2]:
        c[i] -= 1
        c[i + 1] -= 1
        c[i + 2] -= 1
        ok = _regular(c, need_pair)
        c[i] += 1
        c[i + 1] += 1
        c[i + 2] += 1
        if ok:
            return True
    if need_pair:
        # the pair may be a kind that is not the lowest one
        for k in range(i + 1, N_KINDS):
            if c[k] >= 2:
                c[k] -= 2
                ok = _regular(c, False)
                c[k] += 2
                if ok:
                    return True
        return False
    return False


def is_complete(standing: str | list[int], concealed: bool = True) -> bool:
    """Standing tiles (3n+2 of them) form sets + a pair, or seven pairs (14, concealed)."""
    c = counts(standing) if isinstance(standing, str) else list(standing)
    n = sum(c)
    if n % 3 != 2:
        return False
    if concealed and n == 14 and all(x in (0, 2, 4) for x in c):
        return True
    return _regular(c, True)


def waits(standing: str, concealed: bool = True) -> list[str]:
    """Tile kinds that would complete a standing hand of 3n+1 tiles (suits ignored)."""
    c = counts(standing)
    out = []
    for k in range(N_KINDS):
        if c[k] >= 4:
            continue
        c[k] += 1
        if is_complete(c, concealed):
            out.append(tile_str(k))
        c[k] -= 1
    return out


# ------------------------------------------------------------------- deal building


def check_copies(*strings: str) -> None:
    """At most four copies of each kind over all the given tile strings."""
    total: Counter[int] = Counter()
    for s in strings:
        total.update(parse_kinds(s))
    bad = {tile_str(k): n for k, n in total.items() if n > 4}
    assert not bad, f"more than four copies in the deal: {bad}"


def filler_hand(used: Sequence[int], suits: str, n: int = 13) -> str:
    """A harmless hand: ``n`` different kinds from two suits, not one tile from Hu.

    Different kinds: it can never pung or kong; not ready: it can never claim Hu on a
    discard, and (discarding what it draws) never self-draw Hu. It holds no tile of the
    third suit, so it declares that suit with an indicator and has no forced discard.
    """
    pool = [k for k in range(N_KINDS) if SUITS[k // 9] in suits and used[k] < 4]
    for combo in itertools.combinations(pool, n):
        text = " ".join(tile_str(k) for k in combo)
        if n % 3 == 1 and waits(text):
            continue
        if n % 3 == 2 and is_complete(text):
            continue
        return compact(text)
    raise AssertionError(f"no filler hand left in suits {suits!r}")


def build_hands(
    hands: dict[int, str], wall: str, *, dealer: int = 0, filler_suits: str = "mp"
) -> list[str]:
    """Four hands: the given ones plus harmless fillers; checks copies and sizes."""
    used = [0] * N_KINDS
    for text in [*hands.values(), wall]:
        for k in parse_kinds(text):
            used[k] += 1
    out: list[str] = []
    for seat in range(4):
        if seat in hands:
            out.append(hands[seat])
        else:
            text = filler_hand(used, filler_suits, 14 if seat == dealer else 13)
            for k in parse_kinds(text):
                used[k] += 1
            out.append(text)
    for seat, text in enumerate(out):
        size = len(parse_kinds(text))
        assert size == (14 if seat == dealer else 13), f"seat {seat} has {size} tiles"
    check_copies(*out, wall)
    return out


def missing_suit(hand: str) -> str:
    held = {k // 9 for k in parse_kinds(hand)}
    return next(SUITS[s] for s in range(3) if s not in held)


# ------------------------------------------------------------------------ driving


def start(
    hands: dict[int, str],
    wall: str,
    voids: dict[int, str],
    *,
    rules: Any = "mil",
    dealer: int = 0,
    filler_suits: str = "mp",
):
    """Build the deal and play the four void choices (seats 0..3 in order).

    ``voids`` maps a seat to its choice (``"void 9m"`` or ``"void s"``); a filler seat
    declares its missing suit with an indicator.
    """
    from sichuan_env.records.game import Game

    full = build_hands(hands, wall, dealer=dealer, filler_suits=filler_suits)
    g = Game.from_deal(hands=full, wall=wall, dealer=dealer, rules=rules)
    for seat in range(4):
        assert g.phase == "void", (seat, g.phase)
        assert g.current_seat == seat, (seat, g.current_seat)
        choice = voids[seat] if seat in voids else f"void {missing_suit(full[seat])}"
        assert choice in g.legal(), (seat, choice, g.legal())
        g.play(choice)
    return g


def act(g, seat: int, action: str, legal: Iterable[str] | None = None, phase: str | None = None):
    """Assert that ``seat`` decides now (optionally with exactly ``legal``), then play."""
    assert g.current_seat == seat, f"expected seat {seat} to decide, got {g.current_seat}"
    if phase is not None:
        assert g.phase == phase, (g.phase, phase)
    offered = g.legal()
    if legal is not None:
        assert offered == sorted(legal), f"seat {seat}: offered {offered}, expected {sorted(legal)}"
    assert action in offered, f"seat {seat}: {action!r} not in {offered}"
    g.play(action)


def discards_of(tiles: str) -> list[str]:
    """``"1p 3s"`` -> ``["discard 1p", "discard 3s"]`` (one option per kind)."""
    return [f"discard {t}" for t in sorted(set(tiles_list(tiles)))]


def pay(g, start_index: int = 0) -> list[tuple[Any, Any, int, str]]:
    """Payments from index ``start_index`` on as (from, to, points, reason) tuples."""
    return [(p["from"], p["to"], p["points"], p["reason"]) for p in g.payments[start_index:]]


def fans(win: dict[str, Any]) -> dict[str, int]:
    return {name: n for name, n in win["fans"].items() if n}


def last_event(g) -> dict[str, Any]:
    return g.events[-1]


def event_like(event: dict[str, Any], **expected: Any) -> bool:
    return all(event.get(key) == value for key, value in expected.items())


def seat_totals(payments: list[dict[str, Any]]) -> list[int]:
    totals = [0, 0, 0, 0]
    for p in payments:
        if p["from"] is not None:
            totals[p["from"]] -= p["points"]
        if p["to"] is not None:
            totals[p["to"]] += p["points"]
    return totals
