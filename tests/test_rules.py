"""Rule options and presets (docs/rules.md section 10)."""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sichuan_env.core import rules
from sichuan_env.core.rules import PRESETS, Rules, get_rules

# docs/rules.md section 10, column by column
SECTION_10 = {
    "mil": {"fan_cap": 3, "strict_void": True, "self_draw_bonus": 1, "flower_pig_penalty": 48},
    "mahjongsoft": {"fan_cap": 4, "strict_void": False, "self_draw_bonus": 1,
                    "flower_pig_penalty": 48},
}


@pytest.mark.parametrize("name", ["mil", "mahjongsoft"])
def test_preset_values_follow_section_10(name):
    r = get_rules(name)
    for option, expected in SECTION_10[name].items():
        assert getattr(r, option) == expected, option
    assert r.preset == name
    assert r.max_value == 2 ** SECTION_10[name]["fan_cap"]
    assert PRESETS[name] == r


def test_max_values_are_8_and_16():
    assert get_rules("mil").max_value == 8
    assert get_rules("mahjongsoft").max_value == 16


def test_default_is_mil():
    assert get_rules() == get_rules("mil") == get_rules(None) == rules.DEFAULT_RULES
    assert Rules().fan_cap == 3 and Rules().strict_void is True


def test_get_rules_overrides_only_the_named_option():
    r = get_rules("mil", fan_cap=4)
    assert r.fan_cap == 4
    assert r.strict_void is True and r.flower_pig_penalty == 48 and r.preset == "mil"
    s = get_rules("mahjongsoft", strict_void=True, flower_pig_penalty=24)
    assert (s.fan_cap, s.strict_void, s.flower_pig_penalty) == (4, True, 24)
    # the presets themselves are untouched
    assert PRESETS["mil"].fan_cap == 3 and PRESETS["mahjongsoft"].strict_void is False


def test_get_rules_accepts_a_rules_object():
    base = get_rules("mahjongsoft")
    assert get_rules(base) is base or get_rules(base) == base
    assert get_rules(base, deals_per_match=4).deals_per_match == 4


def test_replace_returns_a_new_object():
    r = get_rules("mil")
    r2 = r.replace(fan_cap=5, self_draw_bonus=0)
    assert (r2.fan_cap, r2.self_draw_bonus) == (5, 0)
    assert (r.fan_cap, r.self_draw_bonus) == (3, 1)
    assert r2.replace() == r2


def test_to_dict_from_dict_round_trip():
    for name in PRESETS:
        r = get_rules(name, deals_per_match=8)
        d = r.to_dict()
        assert d["fan_cap"] == r.fan_cap and d["deals_per_match"] == 8
        assert Rules.from_dict(d) == r


def test_frozen():
    r = get_rules("mil")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.fan_cap = 4
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.strict_void = False
    assert r.fan_cap == 3 and r.strict_void is True


def test_unknown_preset():
    with pytest.raises(ValueError, match="unknown rule preset 'hongkong'"):
        get_rules("hongkong")


@pytest.mark.parametrize("call", [
    lambda: get_rules("mil", fan_limit=4),
    lambda: get_rules("mil").replace(fan_limit=4),
    lambda: Rules.from_dict({"fan_cap": 3, "fan_limit": 4}),
])
def test_unknown_option_is_named(call):
    with pytest.raises(ValueError, match="unknown rule option.*fan_limit"):
        call()


@pytest.mark.parametrize("option, bad", [
    ("fan_cap", 0), ("fan_cap", 13), ("fan_cap", -3),
    ("self_draw_bonus", -1), ("self_draw_bonus", 65),
    ("flower_pig_penalty", -48), ("flower_pig_penalty", 1001),
    ("deals_per_match", 0),
])
def test_out_of_range_is_named(option, bad):
    with pytest.raises(ValueError, match=rf"{option}={bad} out of range"):
        get_rules("mil", **{option: bad})
    with pytest.raises(ValueError, match=option):
        Rules(**{option: bad})


@pytest.mark.parametrize("option, bad", [
    ("fan_cap", 3.0), ("fan_cap", "3"), ("fan_cap", True), ("fan_cap", None),
    ("strict_void", 1), ("strict_void", "yes"), ("strict_void", None),
    ("self_draw_bonus", 1.5), ("flower_pig_penalty", "48"), ("deals_per_match", [1]),
    ("preset", 3),
])
def test_wrong_type_is_named(option, bad):
    with pytest.raises(ValueError, match=f"rule option {option} must be"):
        get_rules("mil").replace(**{option: bad})
    with pytest.raises(ValueError, match=f"rule option {option} must be"):
        Rules(**{option: bad})


@settings(max_examples=60, deadline=None)
@given(cap=st.integers(1, 12), bonus=st.integers(0, 64), pig=st.integers(0, 1000),
       strict=st.booleans())
def test_any_in_range_value_is_accepted(cap, bonus, pig, strict):
    r = get_rules("mahjongsoft", fan_cap=cap, self_draw_bonus=bonus,
                  flower_pig_penalty=pig, strict_void=strict)
    assert (r.fan_cap, r.self_draw_bonus, r.flower_pig_penalty, r.strict_void) == (
        cap, bonus, pig, strict)
    assert r.max_value == 2**cap
    assert Rules.from_dict(r.to_dict()) == r
