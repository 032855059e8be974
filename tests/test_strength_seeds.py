"""benchmarks/strength.py: the evaluation seeds of ``best`` follow from the shipped model
files by a rule fixed in advance, and the pooled figure is the arena's CI over all walls
of all seeds (not a mean of the seeds' means)."""

import hashlib
import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from sichuan_agents.arena import Z95

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "strength"


def _strength():
    spec = importlib.util.spec_from_file_location("strength",
                                                  ROOT / "benchmarks" / "strength.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_seeds_are_the_hash_of_the_shipped_files():
    """Recomputed here from the files' bytes: the first four big-endian 32-bit words of
    sha256(boosted_mil.txt + fitted_mil.zip + b"eval")."""
    st = _strength()
    models = ROOT / "sichuan_agents" / "models"
    files = [models / "boosted_mil.txt", models / "fitted_mil.zip"]
    assert st.model_files("mil") == files
    digest = hashlib.sha256(files[0].read_bytes() + files[1].read_bytes() + b"eval").digest()
    want = [int.from_bytes(digest[i:i + 4], "big") for i in (0, 4, 8, 12)]
    assert st.eval_seeds(files) == want
    assert len(set(want)) == 4
    # none is a seed the models were measured or selected on before
    assert not set(want) & {1, 20261209, 20261214, 20261215, 20261216}


@pytest.mark.parametrize("preset", ["mil", "mahjongsoft"])
def test_the_committed_results_are_on_those_seeds(preset):
    """The committed pooled figures of each preset were measured on the seeds the rule
    gives for the files shipped now, each seed's file holds the walls pooled, and 20,000+
    deals in all."""
    st = _strength()
    seeds = st.eval_seeds(st.model_files(preset))
    pooled = sorted(RESULTS.glob(f"*-*_{preset}.json"))
    assert pooled, "no pooled figure committed under docs/strength/"
    for path in pooled:
        rep = json.loads(path.read_text())
        stale = (f"{path.name} was measured on other model files: a new model gets new "
                 "seeds; rerun benchmarks/strength.py (docs/ladder.md)")
        assert rep["seeds"] == seeds, stale
        assert len(rep["seeds"]) >= 3
        assert rep["files_sha256"] == hashlib.sha256(
            b"".join(f.read_bytes() for f in st.model_files(preset))).hexdigest(), stale
        runs = []
        for s, fig in zip(seeds, rep["per_seed"], strict=True):
            run = json.loads(st.seed_path(RESULTS, rep["a"], rep["b"], preset, s).read_text())
            assert run["seed"] == s and fig["seed"] == s
            assert len(run["unit_diff"]) == run["deals"] // 4 == fig["units"]
            runs.append({"seed": s, "deals": run["deals"], "unit_diff": run["unit_diff"]})
            # the per-wall differences are the arena's own pair figure
            pair = next(p for p in run["pairwise"] if {p["a"], p["b"]} == {rep["a"], rep["b"]})
            assert math.isclose(fig["mean"], pair["mean"] if pair["a"] == rep["a"]
                                else -pair["mean"], abs_tol=1e-9)
        assert st.pool(runs)["pooled"] == pytest.approx(rep["pooled"])
    assert json.loads((RESULTS / f"best-rules_{preset}.json").read_text())["deals"] >= 20_000


def test_pooling_is_over_the_walls_of_all_seeds():
    """Two seeds of unequal size: the pooled mean weighs every wall alike (not the seeds),
    and its CI is the arena's normal interval over all walls."""
    st = _strength()
    a = [1.0, 2.0, 3.0, 4.0]
    b = [0.0, 0.0]
    rep = st.pool([{"seed": 7, "deals": 16, "unit_diff": a},
                   {"seed": 9, "deals": 8, "unit_diff": b}])
    allw = np.array(a + b)
    assert rep["seeds"] == [7, 9] and rep["deals"] == 24
    assert rep["pooled"]["mean"] == pytest.approx(10 / 6)  # not (2.5 + 0) / 2
    half = Z95 * allw.std(ddof=1) / math.sqrt(6)
    assert rep["pooled"]["ci_low"] == pytest.approx(10 / 6 - half)
    assert rep["pooled"]["ci_high"] == pytest.approx(10 / 6 + half)
    assert rep["pooled"]["units"] == 6
    assert [s["mean"] for s in rep["per_seed"]] == pytest.approx([2.5, 0.0])
    assert rep["per_seed"][0]["ci_half_width"] == pytest.approx(
        Z95 * np.std(a, ddof=1) / 2)
    with pytest.raises(ValueError, match="nothing to pool"):
        st.pool([])
    with pytest.raises(ValueError, match="1..8"):
        st.eval_seeds(st.model_files("mil"), 9)


def test_a_seed_played_in_chunks_is_the_seed_played_at_once(tmp_path, capsys):
    """--chunk: the chunks' walls are the whole run's (same per-wall differences, same
    figures), each chunk is saved as it ends and a saved chunk is not played again; the
    merged seed file replaces them. A spec agent is saved under its label."""
    st = _strength()
    whole = json.loads(st.run_seed(5, 24, "greedy", "rules", "mil", tmp_path / "a")
                       .read_text())
    out = tmp_path / "b"
    # a chunk already saved (here: a marked copy of the real one) is kept, not replayed
    first = st._play(5, 8, "greedy", "gr", "rules", "mil", 1, first_wall=0)
    (out / "chunks").mkdir(parents=True)
    (out / "chunks" / "gr-rules_mil_seed5_walls0-1.json").write_text(
        json.dumps({**first, "first_wall": 0, "seconds": 123.0}))
    merged = json.loads(st.run_seed(5, 24, "greedy", "rules", "mil", out, label="gr",
                                    chunk=8).read_text())
    printed = capsys.readouterr().out
    assert "walls 0-1" not in printed and "walls 2-3" in printed and "walls 4-5" in printed
    assert [c["first_wall"] for c in merged["chunks"]] == [0, 2, 4]
    assert merged["chunks"][0]["seconds"] == 123.0
    assert not list((out / "chunks").iterdir())
    assert merged["unit_diff"] == whole["unit_diff"] and merged["deals"] == 24
    assert merged["pairwise"][0]["a"] == "gr"
    assert merged["pairwise"][0]["mean"] == pytest.approx(whole["pairwise"][0]["mean"])
    for key, want in whole["agents"]["greedy"].items():
        assert merged["agents"]["gr"][key] == pytest.approx(want), key
    for key, want in whole["agents"]["rules"].items():
        assert merged["agents"]["rules"][key] == pytest.approx(want), key
    assert merged["end_reasons"] == whole["end_reasons"]
    with pytest.raises(ValueError, match="consecutive walls"):
        st.merge_chunks([{**first, "first_wall": 4}, {**first, "first_wall": 0}], "gr",
                        "rules")


def test_versus_compares_two_agents_on_the_walls_both_played(tmp_path):
    """--versus: per wall (a - opponent) - (b - opponent) over the walls both played (the
    shorter run's), pooled over the seeds like any figure."""
    st = _strength()
    for label, seed, diffs in (("a", 1, [1.0, 2.0, 3.0]), ("b", 1, [0.5, 0.5]),
                               ("a", 2, [0.0, 4.0]), ("b", 2, [1.0, 1.0, 9.0])):
        path = st.seed_path(tmp_path, label, "rules", "mil", seed)
        path.write_text(json.dumps({"unit_diff": diffs}))
    rep = st.versus([1, 2], "a", "b", "rules", "mil", tmp_path)
    assert rep["deals"] == 16 and [s["units"] for s in rep["per_seed"]] == [2, 2]
    assert rep["pooled"]["mean"] == pytest.approx((0.5 + 1.5 - 1.0 + 3.0) / 4)
    assert [s["mean"] for s in rep["per_seed"]] == pytest.approx([1.0, 1.0])


def test_bad_arguments_print_one_line(capsys):
    st = _strength()
    assert st.main(["--seeds", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --seeds must be 3..8") and err.count("\n") == 1
    assert st.main(["--agent", "boosted:x.txt"]) == 2
    assert capsys.readouterr().err.startswith("error: agent names here are plain names")
    assert st.main(["--agent", "search?k=64", "--label", "s", "--chunk", "-4"]) == 2
    assert capsys.readouterr().err.startswith("error: --chunk must be >= 0")
    assert st.main(["--print-seeds"]) == 0
    assert capsys.readouterr().out.split() == [str(s) for s in
                                               st.eval_seeds(st.model_files("mil"))]


@pytest.mark.parametrize("preset", ["mil", "mahjongsoft"])
def test_the_card_and_best_cite_the_pooled_figure(preset):
    """The cards' ``strength`` rows are the committed pooled figures with each seed's
    beside them, and ``best``'s description cites its own; the other cards say they have
    none."""
    from sichuan_agents.models.best import BEST

    models = ROOT / "sichuan_agents" / "models"
    cards = {}
    for path in sorted(RESULTS.glob(f"*-*_{preset}.json")):
        rep = json.loads(path.read_text())
        name = "boosted" if rep["a"] == "best" else rep["a"]
        if name in ("rules", "greedy", "random") or "agent_spec" in rep:
            continue  # a rule bot or a search setting: no card (rows on the ladder page)
        card = json.loads((models / f"{name}_{preset}.json").read_text())["strength"]
        cards[name] = card
        row = card[f"{preset}/{rep['a']}-{rep['b']}"]
        assert row["seeds"] == rep["seeds"] and row["deals"] == rep["deals"]
        assert row["diff"] == pytest.approx(rep["pooled"]["mean"], abs=5e-5)
        assert row["ci95"] == pytest.approx([rep["pooled"]["ci_low"],
                                             rep["pooled"]["ci_high"]], abs=5e-5)
        assert [s["diff"] for s in row["per_seed"]] == pytest.approx(
            [s["mean"] for s in rep["per_seed"]], abs=5e-5)
        if rep["a"] == "best" and rep["b"] == "rules":
            lo, hi = rep["pooled"]["ci_low"], rep["pooled"]["ci_high"]
            assert (f"boosted - rules {rep['pooled']['mean']:+.3f} [{lo:+.3f}, {hi:+.3f}] "
                    "pooled") in BEST[preset][1]
    assert f"{preset}/best-rules" in cards["boosted"]
    for name in ("boosted_mil", "boosted_mahjongsoft", "fitted_mil", "fitted_mahjongsoft",
                 "ppo_mil"):
        assert "strength" in json.loads((models / f"{name}.json").read_text()), name
