"""The agent name ``best``: the strongest shipped agent for each rule preset."""

from __future__ import annotations

from sichuan_agents.models.boosted import BoostedAgent
from sichuan_agents.models.ppo import PPOAgent
from sichuan_env.core.rules import get_rules
from sichuan_env.seats.agent import BaseAgent

#: The strongest shipped agent per preset, by the ladder rows that measured them (the
#: figures: points per deal against ``rules``, duplicate arena; source: the ``strength``
#: and ``results`` of each model's metadata and docs/models.md). ``boosted``: the ``fitted``
#: network with trees re-ranking its own-turn candidates (:mod:`sichuan_agents.models.boosted`).
BEST: dict[str, tuple[str, str]] = {
    "mil": ("boosted", "boosted - rules +0.281 [+0.221, +0.342] pooled over four seeds fixed "
                       "from the model files' sha256, 24,000 deals (benchmarks/strength.py; "
                       "the card's strength); single seeds measured before: boosted - rules "
                       "+0.349 [+0.282, +0.417], seed 20261215 (fitted +0.210 on the same "
                       "walls; +0.305 [+0.237, +0.372] on seed 20261214, where fitted scored "
                       "+0.175)"),
    "mahjongsoft": ("boosted", "boosted - rules +0.335 [+0.267, +0.403] pooled over four "
                               "seeds fixed from the model files' sha256, 24,000 deals "
                               "(benchmarks/strength.py; the card's strength); one seed "
                               "measured before: boosted - rules +0.339 [+0.269, +0.408], "
                               "seed 20261216 "
                               "(fitted +0.141 on the same walls)"),
}


def best_agent(rules: str | None = None, deterministic: bool = True,
               device: str = "cpu") -> BaseAgent:
    """The agent name ``best``: the strongest shipped agent for the preset (:data:`BEST`);
    it is named for what it plays (e.g. ``boosted`` or ``fitted``)."""
    preset = get_rules(rules or "mil").preset
    kind = BEST.get(preset, BEST["mil"])[0]
    if kind == "boosted":
        return BoostedAgent(rules=preset)
    return PPOAgent(None, deterministic, device, rules, kind=kind)
