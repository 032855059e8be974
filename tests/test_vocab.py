"""The shared vocabulary (sichuan_env.core.vocab) is defined once and agrees with its users."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

from sichuan_env.core import hands, state, tiles, vocab

ROOT = Path(__file__).resolve().parent.parent

#: names defined in vocab that no other module of sichuan_env or agents may define again
#: (the meld codes are left out: ``actions.PUNG`` and ``actions.MELDED_KONG`` are action
#: numbers of the same names; test_meld_codes_and_tiles compares the state's codes)
SHARED = {"N_KINDS", "N_SUITS", "N_RANKS", "COPIES", "N_TILES", "SUITS", "SUIT_OF", "RANK_OF",
          "HAND_SIZE", "WALL_SIZE", "SEAT_WINDS", "MELD_NAMES", "MELD_TILES",
          "MELD_KIND_OF_CODE", "MELD_KIND_TILES", "MELD_COPIES"}
#: modules still defining some of them, being edited elsewhere at the time; each entry
#: lists what it defines (remove entries as they import from sichuan_env.core.vocab)
NOT_YET: dict[str, set[str]] = {}


def _defined_names(path: Path) -> set[str]:
    """Module-level names assigned in a file (leading underscores stripped)."""
    out = set()
    for node in ast.parse(path.read_text(), str(path)).body:
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    out.add(n.id.lstrip("_"))
    return out


def test_the_vocabulary_is_defined_once():
    files = sorted([*(ROOT / "sichuan_env").glob("*.py"), *(ROOT / "agents").glob("*.py")])
    found = {}
    for f in files:
        rel = f.relative_to(ROOT).as_posix()
        if rel == "sichuan_env/core/vocab.py":
            continue
        again = _defined_names(f) & SHARED
        if again - NOT_YET.get(rel, set()):
            found[rel] = sorted(again - NOT_YET.get(rel, set()))
    assert not found, f"defined again instead of imported from sichuan_env.core.vocab: {found}"


def test_the_scan_sees_a_redefinition(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import numpy as np\n_SUIT_OF = np.repeat(np.arange(3), 9)\nN_KINDS: int = 27\n"
                 "def g():\n    RANK_OF = 1\n")
    assert _defined_names(f) & SHARED == {"SUIT_OF", "N_KINDS"}


def test_tile_geometry():
    assert vocab.N_KINDS == 27 and vocab.N_TILES == 108
    for k in range(vocab.N_KINDS):
        assert vocab.SUIT_OF[k] == tiles.suit_of(k)
        assert vocab.RANK_OF[k] + 1 == tiles.rank_of(k)
        assert tiles.kind(int(vocab.RANK_OF[k]) + 1, vocab.SUITS[vocab.SUIT_OF[k]]) == k
    assert tiles.N_KINDS is vocab.N_KINDS and tiles.SUITS is vocab.SUITS


def test_meld_codes_and_tiles():
    # the remaining copies in the state module agree until they import from vocab
    assert tuple(range(6)) == (state.NO_MELD, state.PUNG, state.CONCEALED_KONG, state.MELDED_KONG,
            state.PROMOTED_KONG, state.POSTPONED_KONG)
    assert tuple(range(6)) == (vocab.NO_MELD, vocab.PUNG, vocab.CONCEALED_KONG, vocab.MELDED_KONG,
            vocab.PROMOTED_KONG, vocab.POSTPONED_KONG)
    assert state.MELD_NAMES == vocab.MELD_NAMES
    assert state.WALL_SIZE == vocab.WALL_SIZE
    assert np.array_equal(vocab.MELD_KIND_TILES[vocab.MELD_KIND_OF_CODE], vocab.MELD_TILES)
    assert vocab.MELD_NAMES[1:] == hands.MELD_KINDS


def test_meld_kinds_behave_in_the_hand_tables():
    # a single wait on 5p: a pung of 5p holds the other three copies (no wait left); a
    # meld of any code elsewhere leaves the wait
    base = "123m456m789m5p"
    assert hands.waits(base, [("pung", "5p")], "s") == []
    for name in vocab.MELD_NAMES[1:]:
        assert hands.waits(base, [(name, "9p")], "s") == ["5p"]


def test_a_new_deal_leaves_the_wall_size():
    from sichuan_env.core import engine

    st = engine.reset([0, 1], "mil")
    # 13 tiles a seat and the dealer's 14th are dealt; the wall holds the rest
    assert (st.wall_back - st.wall_front == vocab.WALL_SIZE).all()
    assert (st.hand.sum((1, 2)) == vocab.N_TILES - vocab.WALL_SIZE).all()
