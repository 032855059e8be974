import pytest

from sichuan_env.core.actions import (
    ACTION_STRINGS,
    HU,
    KONG,
    MELDED_KONG,
    N_ACTIONS,
    PASS,
    PUNG,
    VOID_SUIT,
    VOID_TILE,
    action_from_str,
    action_to_str,
)


def test_every_action_round_trips_through_its_string():
    assert len(set(ACTION_STRINGS)) == N_ACTIONS
    for a in range(N_ACTIONS):
        assert action_from_str(action_to_str(a)) == a


def test_record_format_strings():
    assert action_to_str(4) == "discard 5m"
    assert action_to_str(VOID_TILE + 13) == "void 5p"
    assert action_to_str(VOID_SUIT + 2) == "void s"
    assert action_to_str(KONG + 26) == "kong 9s"
    assert [action_to_str(a) for a in (PUNG, MELDED_KONG, HU, PASS)] == [
        "pung", "kong", "hu", "pass"]


@pytest.mark.parametrize("bad", ["discard", "discard 0m", "chow", "void x", "kong 5q", "", 5,
                                 "void mp", "void ps", "void mps"])  # not one suit
def test_malformed_action_strings_raise(bad):
    with pytest.raises(ValueError, match="malformed|expected"):
        action_from_str(bad)


def test_out_of_range_action_raises():
    with pytest.raises(ValueError, match="out of range"):
        action_to_str(N_ACTIONS)
