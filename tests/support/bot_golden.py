"""Golden actions of the rule bots over seeded play (for ``tests/test_bot_golden.py``).

Tables play one deal each (seats: rules, greedy, greedy, random) under both rule presets;
at every decision of every live table each configuration in :data:`CONFIGS` is asked for
its action on all live rows at once. The digest of those actions is stored in
``tests/data/bot_actions.json``; a change in any bot decision changes a digest.

Regenerate (only when a bot is *meant* to decide differently)::

    cd tests && PYTHONPATH=.. python -m support.bot_golden --write
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from sichuan_agents.bots.greedy import GreedyAgent
from sichuan_agents.bots.rules_bot import RulesAgent
from sichuan_env.core import engine
from sichuan_env.seats.agent import RandomAgent, agent_input

DATA = Path(__file__).resolve().parent.parent / "data" / "bot_actions.json"
PRESETS = ("mil", "mahjongsoft")
TABLES = 32
SEED = 20_000

#: name -> constructor; the default bots plus the RulesAgent options that are kept
CONFIGS = {
    "greedy": lambda: GreedyAgent(),
    "rules": lambda: RulesAgent(),
    "rules lookahead=False": lambda: RulesAgent(lookahead=False),
    "rules pung_look=False": lambda: RulesAgent(pung_look=False),
    "rules void_bonus=0,wait_value=0": lambda: RulesAgent(void_bonus=0.0, wait_value=0.0),
    "rules pung_margin=0": lambda: RulesAgent(pung_margin=0.0),
    "rules pass_hu=False": lambda: RulesAgent(pass_hu=False),
    "rules fish_live=4": lambda: RulesAgent(fish_live=4),
}


def play(preset: str) -> dict[str, np.ndarray]:
    """Every configuration's actions, in decision order, over the seeded deals."""
    bots = {name: make() for name, make in CONFIGS.items()}
    players = [bots["rules"], bots["greedy"], bots["greedy"], RandomAgent(SEED)]
    st = engine.reset(np.arange(SEED, SEED + TABLES), preset)
    chosen: dict[str, list[np.ndarray]] = {name: [] for name in bots}
    while True:
        live = np.flatnonzero(~st.done)
        if not live.size:
            break
        mask = st.legal_action_mask[live]
        seats = st.current[live].astype(np.intp)
        acts = {name: np.asarray(bot.act_batch(agent_input(bot, st, seats, live), mask))
                for name, bot in bots.items()}
        for name, a in acts.items():
            chosen[name].append(a.astype(np.int64))
        full = np.zeros(st.batch_size, np.int64)
        by_seat = [acts["rules"], acts["greedy"], acts["greedy"],
                   players[3].act_batch(None, mask)]
        for s in range(4):
            here = seats == s
            full[live[here]] = by_seat[s][here]
        st, _, _ = engine.step(st, full, inplace=True)
    return {name: np.concatenate(a) for name, a in chosen.items()}


def digests_for(preset: str) -> dict[str, object]:
    """{"decisions": n, config name: sha256 of its int64 actions} for one preset."""
    acts = play(preset)
    entry: dict[str, object] = {"decisions": int(acts["greedy"].size)}
    for name, a in acts.items():
        entry[name] = hashlib.sha256(a.astype("<i8").tobytes()).hexdigest()
    return entry


def digests() -> dict[str, dict[str, object]]:
    """preset -> :func:`digests_for` of it."""
    return {preset: digests_for(preset) for preset in PRESETS}


if __name__ == "__main__":
    got = digests()
    if "--write" in sys.argv:
        DATA.write_text(json.dumps(got, indent=1) + "\n")
    print(json.dumps(got, indent=1))
