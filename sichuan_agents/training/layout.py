"""The input layout of a policy network: which groups of planes it reads, in order.

A model's input is made of up to four groups of channels, always in this order:

============  =============================================================  ==========
group         what                                                           channels
============  =============================================================  ==========
``planes``    the seat's observation (:mod:`sichuan_env.seats.observation`)         78
``analysis``  the hand-analysis planes (:mod:`sichuan_agents.training.features`)      4 or 0
``advice``    the adviser bot's choice (:mod:`sichuan_agents.training.advice`)        7 or 0
``oracle``    hidden tiles, read by the critic only                           10 or 0
              (:mod:`sichuan_agents.training.oracle_critic`)
============  =============================================================  ==========

Models saved by ``train.py``, ``sichuan_agents.training.finetune`` and
``sichuan_agents.training.improve``
carry the layout as the attribute ``sichuan_input`` (a dict of these channel counts, plus
``"adviser"``: the bot whose choice the advice planes hold, or None), saved in the .zip.
The shipped models predate it; their metadata (``sichuan_agents/models/*.json``, key ``"input"``)
says it, and files with neither are read by :func:`inferred_layout`, the one place that
infers a layout from channel counts.
"""

from __future__ import annotations

from typing import Any

from sichuan_agents.training.advice import N_ADVICE_PLANES
from sichuan_agents.training.features import N_FEATURE_PLANES
from sichuan_env.seats.observation import N_CHANNELS, N_ORACLE_CHANNELS

#: The groups, in the order their channels come.
GROUPS = ("planes", "analysis", "advice", "oracle")
N_ADVICE = N_ADVICE_PLANES
N_HIDDEN = N_ORACLE_CHANNELS - N_CHANNELS


def make_layout(analysis: bool = True, adviser: str | None = None,
                oracle: bool = False) -> dict[str, Any]:
    """The layout of a network reading the observation planes, with the analysis planes,
    ``adviser``'s advice planes and the critic's hidden planes as asked."""
    return {"planes": N_CHANNELS, "analysis": N_FEATURE_PLANES if analysis else 0,
            "advice": N_ADVICE if adviser else 0, "oracle": N_HIDDEN if oracle else 0,
            "adviser": adviser or None}


def acting_channels(layout: dict[str, Any]) -> int:
    """Channels the actor reads (every group but ``oracle``)."""
    return int(layout["planes"] + layout["analysis"] + layout["advice"])


def check_layout(layout: Any, channels: int) -> dict[str, Any]:
    """``layout`` validated against a network with ``channels`` input channels; raises
    ValueError with one line when it is not a layout or does not add up."""
    if not isinstance(layout, dict) or any(
            not isinstance(layout.get(k), int) or layout[k] < 0 for k in GROUPS):
        raise ValueError(f"a model's input layout must give channel counts for {GROUPS}, "
                         f"got {layout!r}")
    total = sum(layout[k] for k in GROUPS)
    if total != channels:
        raise ValueError(f"the model's input layout adds up to {total} channels but its "
                         f"network reads {channels}")
    return {**{k: int(layout[k]) for k in GROUPS}, "adviser": layout.get("adviser")}


def inferred_layout(channels: int, acting: int) -> dict[str, Any]:
    """The layout of a model saved without one, from its input channels and the channels
    its actor reads (the inference every loader used before layouts were saved)."""
    advised = acting == N_CHANNELS + N_FEATURE_PLANES + N_ADVICE
    analysis = advised or acting == N_CHANNELS + N_FEATURE_PLANES
    return check_layout({"planes": N_CHANNELS, "analysis": N_FEATURE_PLANES if analysis else 0,
                         "advice": N_ADVICE if advised else 0, "oracle": channels - acting,
                         "adviser": "rules" if advised else None}, channels)


def input_layout(model: Any, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """The layout of a loaded MaskablePPO ``model``: its own ``sichuan_input``, else the
    ``"input"`` of its metadata ``meta``, else :func:`inferred_layout`."""
    channels = int(model.observation_space.shape[0])
    saved = getattr(model, "sichuan_input", None)
    if saved is None and meta is not None:
        saved = meta.get("input")
    if saved is not None:
        return check_layout(saved, channels)
    acting = int(getattr(model.policy, "policy_planes", channels))
    return inferred_layout(channels, acting)
