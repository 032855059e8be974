"""Play a deal against the bots in a terminal.

``python -m sichuan_env.play --opponents rules [--seat 0] [--seed S] [--rules mil]``

The human plays seat ``--seat`` (0 deals); the three other seats are played by
``--opponents`` (one spec for all three, or three comma-separated specs: ``random``,
``greedy``, ``rules``, ``fitted``, ``ppo``, ``best`` (shipped models), ``ppo:PATH``, an
import path ``package.module:ClassName`` or ``path/to/file.py:ClassName``, or
``exec:COMMAND``, a program in any language (docs/protocol.md); see
:func:`sichuan_env.seats.agent.make_agent`). Before each of your decisions the table is shown
from your seat (:func:`sichuan_env.records.render.render_text`) with the legal choices; type one
by name: ``discard 5m``, ``void 5m``, ``void s``, ``kong 5m``, ``kong``, ``pung``, ``hu``,
``pass`` (a bare tile such as ``5m`` means ``discard 5m``; ``?`` lists the choices again;
``quit`` leaves). An illegal choice is refused and the legal ones are printed.
``--auto-first`` plays the first legal choice for you (for tests and demos).

``python -m sichuan_env.play --web`` serves the same game as a page to play in a browser
(:mod:`sichuan_env.play.web.cli` lists its options).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

import numpy as np

from sichuan_env.core.actions import action_from_str, action_to_str
from sichuan_env.core.rules import get_rules
from sichuan_env.records.game import Game
from sichuan_env.records.public_log import public_moves
from sichuan_env.seats.agent import agents_help, seat_agents
from sichuan_env.seats.driver import choose
from sichuan_env.seats.view import seat_view

_ROW = np.zeros(1, np.intp)  # a game is one table


def _render(g: Game, seat: int) -> str:
    try:
        from sichuan_env.records.render import render_text

        return render_text(g.state, 0, viewer=seat, ascii=True)
    except Exception:  # a simple view of our own when the renderer is unavailable
        lines = [f"wall {g.wall_left}  phase {g.phase}  scores {g.scores}"]
        for s in range(4):
            who = "you" if s == seat else f"seat {s}"
            hand = g.hand(s) if s == seat else "?"
            lines.append(f"{who}: hand {hand}  melds {g.melds(s)}  discards "
                         f"{' '.join(g.discards(s))}")
        return "\n".join(lines)


def _parse(text: str) -> int:
    text = text.strip().lower()
    words = text.split()
    if len(words) == 1 and len(text) == 2 and text[0].isdigit():
        text = f"discard {text}"
    return action_from_str(text)


def play(opponents: list[Any], seat: int = 0, seed: int = 0, rules: str = "mil", *,
         auto_first: bool = False, stdin: TextIO | None = None,
         stdout: TextIO | None = None) -> list[int]:
    """Play one deal; returns the final scores (seat order). ``opponents``: one or three
    agents, as objects or spec strings (the seats after ``seat`` in seat order; built by
    :func:`sichuan_env.seats.agent.seat_agents` from ``seed``: equal specs are one agent)."""
    stdin = stdin or sys.stdin
    out = stdout or sys.stdout
    others = [s for s in range(4) if s != seat]
    specs = list(opponents) if len(opponents) == 3 else [opponents[0]] * 3
    built = seat_agents(specs, seed, get_rules(rules).preset)
    bots = {s: built.agents[k] for s, k in zip(others, built.seat_agent.tolist(), strict=True)}
    g = Game.new(seed, rules)
    print(f"Sichuan Bloody mahjong, seed {seed}, rules {rules}. You are seat {seat}"
          f"{' (dealer)' if seat == 0 else ''}.", file=out)
    while not g.done:
        cur = g.current_seat
        if cur != seat:
            a = int(choose(g.state, _ROW, [bots[cur]])[0])
            before, n = seat_view(g.state, seat, _ROW), len(g.events)
            g.play(a)
            # only what this seat may know: no pass, set-aside tile or unused claim
            for line in public_moves(g.events[n:], seat, before, seat_view(g.state, seat, _ROW)):
                print(line, file=out)
            continue
        legal = g.legal()
        print("", file=out)
        print(_render(g, seat), file=out)
        print(f"legal: {', '.join(legal)}", file=out)
        while True:
            if auto_first:
                choice = legal[0]
                print(f"> {choice}", file=out)
            else:
                print("> ", end="", file=out, flush=True)
                line = stdin.readline()
                if not line:
                    print("\n(end of input)", file=out)
                    return g.scores
                choice = line.strip()
                if choice in ("quit", "exit"):
                    return g.scores
                if choice in ("?", "help", ""):
                    print(f"legal: {', '.join(legal)}", file=out)
                    continue
            try:
                a = _parse(choice)
            except ValueError as err:
                print(f"not understood: {err}", file=out)
                print(f"legal: {', '.join(legal)}", file=out)
                continue
            if action_to_str(a) not in legal:
                print(f"illegal: {action_to_str(a)}; legal: {', '.join(legal)}", file=out)
                continue
            g.play(a)
            break
    rec = g.record()
    print("", file=out)
    print(f"deal over ({rec.get('end')}); scores {rec.get('scores')}; "
          f"you: {g.scores[seat]:+d}", file=out)
    for w in rec["wins"]:
        frm = "self-drawn" if w["from"] is None else f"from seat {w['from']}"
        print(f"  seat {w['seat']} Hu on {w['tile']} {frm}: {w['fans']} -> {w['value']}",
              file=out)
    return g.scores


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else list(argv)
    if "--web" in args_in:  # the browser version: sichuan_env/play/web/cli.py
        from sichuan_env.play.web.cli import main as web_main

        return web_main(args_in)
    p = argparse.ArgumentParser(prog="python -m sichuan_env.play",
                                description="Play a deal against the bots.")
    p.add_argument("--opponents", default="rules",
                   help=agents_help("one agent for all three, or three comma-separated "
                                    "(default rules)"))
    p.add_argument("--seat", type=int, default=0, choices=range(4))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rules", default="mil")
    p.add_argument("--auto-first", action="store_true",
                   help="play the first legal choice automatically")
    p.add_argument("--web", action="store_true",
                   help="play in a browser instead (options: --web --help)")
    args = p.parse_args(args_in)
    opp = [s.strip() for s in args.opponents.split(",")]
    if len(opp) not in (1, 3):
        p.error("--opponents takes one agent or three")
    try:
        play(opp, args.seat, args.seed, args.rules, auto_first=args.auto_first)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
