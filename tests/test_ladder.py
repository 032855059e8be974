"""The ladder: pairs in both seatings, the least-squares rating, resume, Markdown."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import sichuan_agents.ladder as ladder_mod
from sichuan_agents.arena import Z95, run_arena
from sichuan_agents.ladder import (
    BEGIN,
    END,
    fit_ratings,
    flip_pair,
    load_resume,
    main,
    markdown,
    play_pair,
    run_ladder,
    standings,
    write_markdown,
)

MYBOT = str(Path(__file__).resolve().parent / "data" / "mybot.py") + ":MyBot"


def _pair(a, b, mean, half):
    return {"a": a, "b": b, "mean": mean, "ci_half_width": half,
            "ci_low": mean - half, "ci_high": mean + half}


def test_fit_recovers_consistent_differences_and_its_uncertainty():
    truth = {"x": 1.0, "y": 0.0, "z": -1.0}
    pairs = [_pair(a, b, truth[a] - truth[b], Z95) for a, b in
             (("x", "y"), ("x", "z"), ("y", "z"))]
    fit = fit_ratings(["x", "y", "z"], pairs)
    for n, r in truth.items():
        assert math.isclose(fit["rating"][n], r, abs_tol=1e-12)
    # unit standard errors, complete graph of 3: covariance pinv(3I - J) = (I - J/3) / 3
    for n in truth:
        assert math.isclose(fit["ci_half_width"][n], Z95 * math.sqrt(2 / 9))
    assert fit["chi2"] < 1e-20 and fit["dof"] == 1 and fit["pairs"] == 3
    assert fit["scale"] == 1.0


@pytest.mark.parametrize("seed", range(5))
def test_fit_matches_constrained_least_squares(seed):
    """Against an independent solution: the weighted normal equations with the
    sum-to-zero constraint by a Lagrange multiplier."""
    rng = np.random.default_rng(seed)
    names = [f"a{i}" for i in range(5)]
    pairs = []
    for i in range(5):
        for j in range(i + 1, 5):
            if rng.random() < 0.8 or j == i + 1:  # connected: the chain is always there
                pairs.append(_pair(names[i], names[j], rng.normal(0, 3), rng.uniform(0.1, 2)))
    fit = fit_ratings(names, pairs)
    X = np.zeros((len(pairs), 5))
    for k, p in enumerate(pairs):
        X[k, names.index(p["a"])], X[k, names.index(p["b"])] = 1, -1
    w = np.array([(Z95 / p["ci_half_width"]) ** 2 for p in pairs])
    d = np.array([p["mean"] for p in pairs])
    kkt = np.block([[X.T @ (w[:, None] * X), np.ones((5, 1))], [np.ones((1, 5)), np.zeros((1, 1))]])
    sol = np.linalg.solve(kkt, np.concatenate([X.T @ (w * d), [0.0]]))[:5]
    assert np.allclose([fit["rating"][n] for n in names], sol)
    assert math.isclose(fit["chi2"], float((w * (X @ sol - d) ** 2).sum()), rel_tol=1e-9)
    assert fit["dof"] == len(pairs) - 4
    # a flipped pair is the same information
    flipped = [flip_pair(p) if k % 2 else p for k, p in enumerate(pairs)]
    again = fit_ratings(names, flipped)
    assert np.allclose([again["rating"][n] for n in names], sol)


def test_lead_over_the_next_agent():
    truth = {"x": 1.0, "y": 0.0, "z": -1.5}
    pairs = [dict(_pair(a, b, truth[a] - truth[b], Z95), runs=[]) for a, b in
             (("x", "y"), ("z", "x"), ("y", "z"))]
    rows = standings(["z", "y", "x"], pairs)
    assert [r["agent"] for r in rows] == ["x", "y", "z"] and [r["rank"] for r in rows] == [1, 2, 3]
    assert math.isclose(rows[0]["lead"], 1.0) and math.isclose(rows[1]["lead"], 1.5)
    # var(r_i - r_j) = 2/9 + 2/9 + 2/9 with covariance (I - J/3) / 3
    for r in rows[:2]:
        assert math.isclose(r["lead_ci_half_width"], Z95 * math.sqrt(2 / 3))
    assert math.isnan(rows[2]["lead"]) and math.isnan(rows[0]["hu_rate"])


def test_misfit_widens_the_intervals():
    # x beats y by 1, y beats z by 1, but x beats z by 4: no one number per agent fits
    pairs = [_pair("x", "y", 1.0, Z95), _pair("y", "z", 1.0, Z95), _pair("x", "z", 4.0, Z95)]
    fit = fit_ratings(["x", "y", "z"], pairs)
    # equal weights: r = (sum of wins - sum of losses) / 3
    assert np.allclose([fit["rating"][n] for n in "xyz"], [5 / 3, 0.0, -5 / 3])
    resid = [1 - 5 / 3, 1 - 5 / 3, 4 - 10 / 3]
    chi2 = sum(r * r for r in resid)
    assert math.isclose(fit["chi2"], chi2) and fit["dof"] == 1
    assert math.isclose(fit["scale"], chi2)
    assert math.isclose(fit["ci_half_width"]["x"], Z95 * math.sqrt(2 / 9 * chi2))


def test_agent_without_pairs_has_no_rating():
    fit = fit_ratings(["x", "y", "z"], [_pair("x", "y", 2.0, 1.0)])
    assert math.isclose(fit["rating"]["x"], 1.0) and math.isclose(fit["rating"]["y"], -1.0)
    assert math.isnan(fit["rating"]["z"])


def test_pair_plays_both_seatings_on_the_same_walls():
    p = play_pair("greedy", "random", deals=32, seed=4, tables=16)
    assert [r["seats"] for r in p["runs"]] == [["greedy", "random", "random", "random"],
                                              ["random", "greedy", "greedy", "greedy"]]
    assert p["units"] == 4 and all(r["deals"] == 16 for r in p["runs"])
    # the per-wall average of the two seatings, recomputed from the arena
    one = run_arena(["greedy", "random", "random", "random"], 16, seed=4, tables=16)
    two = run_arena(["random", "greedy", "greedy", "greedy"], 16, seed=4, tables=16)
    assert np.array_equal(one.seeds, two.seeds)
    per_wall = ((one.unit_means("greedy") - one.unit_means("random"))
                + (two.unit_means("greedy") - two.unit_means("random"))) / 2
    assert math.isclose(p["mean"], per_wall.mean())
    assert math.isclose(p["ci_half_width"], Z95 * per_wall.std(ddof=1) / 2)
    # seen from the other side: the same walls, the opposite difference
    q = play_pair("random", "greedy", deals=32, seed=4, tables=16)
    assert math.isclose(q["mean"], -p["mean"]) and q["units"] == p["units"]
    assert p["mean"] > 0


class InterruptedRunError(Exception):
    """Stands for a run stopped in the middle (Ctrl-C, a crash)."""


def test_ladder_resume_skips_finished_pairs(tmp_path, monkeypatch):
    agents = ["random", "greedy", MYBOT]
    full = run_ladder(agents, 16, seed=2, tables=8)
    out = tmp_path / "ladder.json"
    calls = []
    real = ladder_mod.play_pair

    def interrupted(a, b, *args, **kw):
        if len(calls) == 1:
            raise InterruptedRunError
        calls.append((a, b))
        return real(a, b, *args, **kw)

    monkeypatch.setattr(ladder_mod, "play_pair", interrupted)
    with pytest.raises(InterruptedRunError):
        run_ladder(agents, 16, seed=2, tables=8, out=out)
    saved = json.loads(out.read_text())
    assert [(p["a"], p["b"]) for p in saved["pairs"]] == [("random", "greedy")]
    calls.clear()
    monkeypatch.setattr(ladder_mod, "play_pair",
                        lambda a, b, *args, **kw: calls.append((a, b)) or real(a, b, *args, **kw))
    done = load_resume(out, 16, 2, "mil")
    done[0] = flip_pair(done[0])  # stored either way round
    resumed = run_ladder(agents, 16, seed=2, tables=8, done=done, out=out)
    assert calls == [("random", MYBOT), ("greedy", MYBOT)]
    assert resumed["pairs_reused"] == 1
    for p, q in zip(full["pairs"], resumed["pairs"], strict=True):
        assert (p["a"], p["b"]) == (q["a"], q["b"]) and math.isclose(p["mean"], q["mean"])
    assert [r["agent"] for r in resumed["standings"]] == [r["agent"] for r in full["standings"]]
    assert json.loads(out.read_text())["pairs_reused"] == 1
    with pytest.raises(ValueError, match="deals 16 \\(asked 24\\)"):
        load_resume(out, 24, 2, "mil")
    with pytest.raises(ValueError, match="other rules"):
        load_resume(out, 16, 2, "mahjongsoft")
    assert load_resume(tmp_path / "not_yet.json", 16, 2, "mil") == []


def test_standings_sorted_with_rates():
    lad = run_ladder(["random", "greedy"], 32, seed=3, tables=16)
    rows = lad["standings"]
    assert [r["agent"] for r in rows] == ["greedy", "random"] and rows[0]["rank"] == 1
    assert rows[0]["rating"] > rows[1]["rating"]
    assert math.isclose(rows[0]["rating"], -rows[1]["rating"])
    assert math.isclose(rows[0]["rating"] - rows[1]["rating"], lad["pairs"][0]["mean"] * -1)
    for r in rows:
        assert 0 <= r["deal_in_rate"] <= 1 and 0 <= r["self_drawn_rate"] <= r["hu_rate"] <= 1
        assert r["seat_deals"] == 16 + 48
    with pytest.raises(ValueError, match="named twice"):
        run_ladder(["random", "random"], 16)


def test_markdown_section_is_replaced_and_the_rest_kept(tmp_path):
    lad = run_ladder(["random", "greedy"], 16, seed=1, tables=8)
    doc = tmp_path / "ladder.md"
    doc.write_text(f"# Title\n\nintro\n\n{BEGIN}\nold table\n{END}\n\n## Log\n\nkept\n")
    write_markdown(doc, lad)
    text = doc.read_text()
    assert text.startswith("# Title\n\nintro\n\n" + BEGIN) and text.endswith("## Log\n\nkept\n")
    assert "old table" not in text and "| 1 | `greedy` |" in text
    assert text.count(BEGIN) == 1 and markdown(lad) in text
    plain = tmp_path / "plain.md"
    plain.write_text("# Notes\n")
    write_markdown(plain, lad)
    assert plain.read_text().startswith("# Notes\n\n" + BEGIN)
    fresh = tmp_path / "new.md"
    write_markdown(fresh, lad)
    assert BEGIN in fresh.read_text()


def test_cli(tmp_path, capsys):
    out = tmp_path / "sub" / "l.json"
    md = tmp_path / "l.md"
    rc = main(["--agents", f"random,{MYBOT}", "--deals", "16", "--seed", "1", "--out", str(out),
               "--markdown", str(md), "--no-progress", "--tables", "8"])
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["format"] == "sichuan-ladder/1" and len(data["pairs"]) == 1
    assert BEGIN in md.read_text()
    capsys.readouterr()
    rc = main(["--agents", f"random,{MYBOT}", "--deals", "16", "--seed", "1",
               "--resume", str(out), "--no-progress"])
    assert rc == 0 and "1 pair(s) reused" in capsys.readouterr().out
    for agents, words in (("random,nobot", "unknown agent 'nobot'"),
                          ("random", "at least two"),
                          (MYBOT.replace("MyBot", "Illegal") + ",random", "failed validation")):
        rc = main(["--agents", agents, "--deals", "16", "--no-progress"])
        err = capsys.readouterr().err
        assert rc == 2 and words in err and len(err.strip().splitlines()) == 1
    rc = main(["--agents", "random,greedy", "--deals", "16", "--seed", "9", "--resume", str(out),
               "--no-progress"])
    assert rc == 2 and "seed 1 (asked 9)" in capsys.readouterr().err


@pytest.mark.slow  # a Ray instance starts (half a minute or more on a loaded machine)
def test_a_ladder_on_ray_is_the_local_ladder():
    """``address``: every arena run's walls as Ray tasks (a local Ray instance, joined once for
    the ladder); the pairs' figures are those of the local run with as many workers."""
    agents = ["greedy", "random", "rules"]
    local = ladder_mod.run_ladder(agents, 16, seed=2, tables=4, workers=2)
    ray = ladder_mod.run_ladder(agents, 16, seed=2, tables=4, workers=2, address="local")
    for a, b in zip(local["pairs"], ray["pairs"], strict=True):
        assert (a["a"], a["b"], a["mean"], a["ci_low"]) == (b["a"], b["b"], b["mean"],
                                                            b["ci_low"])


def test_a_pair_with_a_dropped_bot_is_not_measured():
    """An ``exec:`` bot dropped past its fault budget (its fallback played its seats) is not
    credited with the fallback's points: the pair is NaN, says why, and is left out of the
    rating fit."""
    import sys

    root = Path(__file__).resolve().parent.parent
    spec = f"exec:{sys.executable} {root / 'tests' / 'support' / 'fault_bot.py'} every_not_json 1"
    p = play_pair(f"{spec}?faults=0&tables=8", "rules", deals=8, seed=1, tables=8)
    assert math.isnan(p["mean"]) and math.isnan(p["ci_half_width"])
    assert "dropped" in p and spec in p["dropped"]
    fit = fit_ratings([p["a"], "rules", "greedy"], [p, _pair("rules", "greedy", 0.3, 0.1)])
    assert math.isnan(fit["rating"][p["a"]]) and math.isfinite(fit["rating"]["rules"])
    ladder = ladder_mod._ladder_dict([p["a"], "rules"], [p], 8, 1, "mil", "cmd", 1.0, 0)
    text = ladder_mod.summary(ladder)
    assert "not measured (dropped" in text and "+0.000" not in text
    assert "not measured (dropped)" in ladder_mod.markdown(ladder)
    json.dumps(ladder_mod.jsonable(ladder), allow_nan=False)  # NaN is written as null
