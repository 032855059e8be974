"""Rule options and their named presets (docs/rules.md section 10).

``Rules`` is frozen: build a variant with :meth:`Rules.replace` or :func:`get_rules`
(``get_rules("mil", fan_cap=4)``). Every option is validated; an unknown name or an
out-of-range value raises ``ValueError`` naming it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Rules:
    """One complete set of rule options.

    preset: the name of the preset these options started from (informational).
    fan_cap: fans counted at most; hand value = 2 ** min(fans, fan_cap). 3 (MIL) or 4.
    strict_void: while the hand holds a forbidden-suit tile, only such tiles may be
        discarded (docs/rules.md section 3). Off in the MahjongSoft/Russian practice.
    self_draw_bonus: points added to the hand value paid by each opponent on a
        self-drawn Hu.
    flower_pig_penalty: points a flower pig pays at the wall end (received by nobody).
    deals_per_match: deals in one episode; the dealer rotates per docs/rules.md section 9.
    """

    preset: str = "mil"
    fan_cap: int = 3
    strict_void: bool = True
    self_draw_bonus: int = 1
    flower_pig_penalty: int = 48
    deals_per_match: int = 1

    def __post_init__(self) -> None:
        _check_int("fan_cap", self.fan_cap, 1, 12)
        _check_int("self_draw_bonus", self.self_draw_bonus, 0, 64)
        _check_int("flower_pig_penalty", self.flower_pig_penalty, 0, 1000)
        _check_int("deals_per_match", self.deals_per_match, 1, 10_000)
        if not isinstance(self.strict_void, bool):
            raise ValueError(
                f"rule option strict_void must be True or False, got {self.strict_void!r}"
            )
        if not isinstance(self.preset, str):
            raise ValueError(f"rule option preset must be a string, got {self.preset!r}")

    @property
    def max_value(self) -> int:
        """Largest hand value (points) under the fan cap."""
        return 2**self.fan_cap

    def replace(self, **changes: Any) -> Rules:
        _check_names(changes)
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, options: dict[str, Any]) -> Rules:
        _check_names(options)
        return cls(**options)


def _check_int(name: str, value: Any, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"rule option {name} must be an integer, got {value!r}")
    if not lo <= value <= hi:
        raise ValueError(f"rule option {name}={value} out of range {lo}..{hi}")


def _check_names(options: dict[str, Any]) -> None:
    known = {f.name for f in fields(Rules)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ValueError(
            f"unknown rule option(s) {', '.join(unknown)}; "
            f"known options: {', '.join(sorted(known))}"
        )


PRESETS: dict[str, Rules] = {
    "mil": Rules(preset="mil", fan_cap=3, strict_void=True),
    "mahjongsoft": Rules(preset="mahjongsoft", fan_cap=4, strict_void=False),
}

DEFAULT_RULES = PRESETS["mil"]


def get_rules(preset: str | Rules | None = "mil", **overrides: Any) -> Rules:
    """A preset by name (``"mil"``, ``"mahjongsoft"``), optionally with options changed."""
    if preset is None:
        base = DEFAULT_RULES
    elif isinstance(preset, Rules):
        base = preset
    elif preset in PRESETS:
        base = PRESETS[preset]
    else:
        raise ValueError(f"unknown rule preset {preset!r}; known presets: {', '.join(PRESETS)}")
    return base.replace(**overrides) if overrides else base
