"""exec: bots: programs speaking sichuan-bot/1 in the arena. The bot server plays exactly
as the agent in process; the C and JavaScript reference bots play; every kind of fault
is survived (fallback, record, restart, drop); a program that cannot start stops the
command with one line; no process outlives the command, also after Ctrl-C."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sichuan_agents.arena import main as arena_main
from sichuan_agents.arena import run_arena
from sichuan_env.seats.agent import AgentSpecError, make_agent
from sichuan_env.seats.bot_process import live_processes

ROOT = Path(__file__).resolve().parent.parent
FAULT_BOT = ROOT / "tests" / "support" / "fault_bot.py"
PY = sys.executable
SERVER = f"exec:{PY} -m sichuan_env.seats.bot_server"


def fault_spec(mode: str, n: int = 1, options: str = "timeout=5") -> str:
    return f"exec:{PY} {FAULT_BOT} {mode} {n}?{options}"


@pytest.fixture(autouse=True)
def _no_process_left():
    yield
    assert not live_processes(), "a bot process was left running"


def _pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie of ours counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1].startswith("Z")
    except OSError:
        return True


# ----------------------------------------------------------------------------- identity


def test_bot_server_plays_exactly_as_the_agent_in_process(tmp_path):
    spec = f"{SERVER} rules?tables=64"
    inproc = run_arena(["rules", "greedy", "rules", "random"], deals=16, seed=5, tables=16,
                       records=tmp_path / "a.jsonl")
    remote = run_arena([spec, "greedy", spec, "random"], deals=16, seed=5, tables=16,
                       records=tmp_path / "b.jsonl")
    assert np.array_equal(inproc.points, remote.points)
    assert inproc.stats["rules"] == remote.stats[spec]
    a = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    b = [json.loads(x) for x in (tmp_path / "b.jsonl").read_text().splitlines()]
    for ra, rb in zip(a, b, strict=True):
        ra.pop("arena"), rb.pop("arena")
        assert ra == rb
    bot = remote.bots[spec]
    assert bot["fault_count"] == 0 and bot["timing"]["decisions"] > 100
    assert bot["bot"] == "bot_server rules"


def test_bot_server_one_table_at_a_time_same_moves():
    spec = f"{SERVER} greedy?tables=1"
    a = run_arena(["greedy"] * 4, deals=4, seed=2, tables=4)
    b = run_arena([spec] * 4, deals=4, seed=2, tables=4)
    assert np.array_equal(a.points, b.points)


# ----------------------------------------------------------------------------- reference bots


def _play_reference(spec: str) -> None:
    res = run_arena([spec, "rules", "rules", "rules"], deals=16, seed=1, tables=16)
    rep = res.bots[spec]
    assert rep["fault_count"] == 0, rep["faults"]
    assert rep["timing"]["decisions"] > 50
    assert res.stats[spec]["seat_deals"] == 16
    assert res.stats[spec]["hu_rate"] > 0  # it declares Hu when it can


def test_c_reference_bot(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler (cc) on this machine: the C reference bot is not built")
    exe = tmp_path / "simple_bot"
    subprocess.run([cc, "-O2", "-o", str(exe), str(ROOT / "examples/bots/simple_bot.c")],
                   check=True)
    _play_reference(f"exec:{exe}?tables=64")


def test_javascript_reference_bot():
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on this machine: the JavaScript reference bot is not run")
    _play_reference(f"exec:{node} {ROOT / 'examples/bots/simple_bot.js'}?tables=64")


# ----------------------------------------------------------------------------- faults


@pytest.mark.parametrize("mode,kind", [
    ("timeout", "timeout"), ("crash", "crash"), ("not_json", "not_json"),
    ("unknown", "unknown_action"), ("illegal", "illegal_action"), ("bad_id", "bad_answer"),
    ("noise", "not_json"),
])
def test_each_fault_is_survived_and_written_down(tmp_path, mode, kind):
    spec = fault_spec(mode, 30, "timeout=1&first_timeout=20&tables=4")
    res = run_arena([spec, "rules", "rules", "rules"], deals=8, seed=1, tables=8,
                    records=tmp_path / "r.jsonl", record_deals=8)
    rep = res.bots[spec]
    assert rep["fault_count"] == 1, rep["faults"]
    f = rep["faults"][0]
    assert f["kind"] == kind and f["request"] == 29 and f["fallback"] == "rules"
    assert 0 <= f["deal"] < 8 and f["decision"] >= 0 and f["seat"] in range(4)
    said = "crashing at request 29" if mode == "crash" else f"at request {f['request']}"
    assert any(said in line for line in f["stderr"]), f  # the bot's last words, every kind
    assert rep["restarts"] == (1 if mode in ("timeout", "crash") else 0)
    assert rep["dropped"] is None
    assert res.deals == 8  # the run went on
    recs = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    marked = [r for r in recs if "faults" in r["arena"]]
    assert len(marked) == 1 and marked[0]["arena"]["deal"] == f["deal"]
    assert marked[0]["arena"]["faults"][0]["kind"] == kind


def test_past_the_fault_budget_the_bot_is_dropped(capsys):
    spec = fault_spec("every_not_json", 3, "faults=2")
    res = run_arena([spec, "rules", "rules", "rules"], deals=8, seed=1, tables=8)
    rep = res.bots[spec]
    assert rep["fault_count"] == 3 and rep["dropped"]
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if "dropped" in x]
    assert len(lines) == 1 and "after 3 faults (budget 2" in lines[0]
    assert "rules plays its remaining decisions" in lines[0]
    assert res.deals == 8


@pytest.mark.parametrize("mode,says", [
    ("hello_exit", "exited with status 1"), ("bad_hello", "not JSON"),
    ("no_hello", "no answer to hello within 1 s"),
])
def test_a_bot_that_fails_hello_stops_the_command(capsys, mode, says):
    spec = fault_spec(mode, 1, "first_timeout=1")
    code = arena_main(["--seats", f"{spec},rules,rules,rules", "--deals", "4", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert err[0].startswith("error: agent ") and str(FAULT_BOT) in err[0] and says in err[0]


def test_a_program_that_cannot_start_stops_the_command(capsys):
    code = arena_main(["--seats", "exec:./no/such/bot,rules,rules,rules", "--deals", "4"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "cannot start './no/such/bot'" in err[0] and "No such file" in err[0]


def test_bad_options_are_one_line_errors():
    with pytest.raises(AgentSpecError, match="unknown option 'speed'"):
        make_agent("exec:./bot?speed=3")
    with pytest.raises(AgentSpecError, match="timeout must be"):
        make_agent("exec:./bot?timeout=-1")
    with pytest.raises(AgentSpecError, match="exec: needs a command"):
        make_agent("exec:")


def test_every_process_is_gone_after_ctrl_c(tmp_path):
    pids = tmp_path / "pids"
    spec = f"exec:{PY} {FAULT_BOT} ok 1 {pids}"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        x for x in (str(ROOT), os.environ.get("PYTHONPATH")) if x))
    proc = subprocess.Popen(
        [PY, "-m", "sichuan_agents.arena", "--seats", f"{spec},{spec}?name=b,rules,rules",
         "--deals", "4000", "--no-progress"], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not pids.exists()
                                           or len(pids.read_text().split()) < 2):
        time.sleep(0.2)
    started = [int(x) for x in pids.read_text().split()]
    assert len(started) == 2
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-2000:]
    assert err.strip().splitlines()[-1] == "interrupted"
    for pid in started:
        assert _pid_gone(pid), f"bot process {pid} outlived the arena"


def test_the_bot_of_the_protocol_page_plays(tmp_path):
    """docs/protocol.md's twenty-line bot, copied from the page, plays without a fault."""
    page = (ROOT / "docs" / "protocol.md").read_text()
    section = page.split("## A bot in twenty lines", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    bot = tmp_path / "first_legal.py"
    bot.write_text(code)
    spec = f"exec:{PY} {bot}?tables=64"
    res = run_arena([spec, "rules", "rules", "rules"], deals=8, seed=4, tables=8)
    rep = res.bots[spec]
    assert rep["fault_count"] == 0 and rep["bot"] == "first-legal"
    assert rep["timing"]["decisions"] > 30


# ----------------------------------------------------------------------------- other commands


def test_exec_bots_in_the_ladder_terminal_and_web_play(tmp_path):
    import io

    from sichuan_agents.ladder import run_ladder
    from sichuan_env.core.rules import get_rules
    from sichuan_env.play.terminal import play
    from sichuan_env.play.web.bots import BotSpec
    from sichuan_env.play.web.table import DealSeeds, WebGame

    ok = f"exec:{PY} {FAULT_BOT} ok"
    ladder = run_ladder(["greedy", ok], deals=8, seed=2, tables=8)
    assert {r["agent"] for r in ladder["standings"]} == {"greedy", ok}
    out = io.StringIO()
    scores = play([ok], seat=0, seed=3, auto_first=True, stdout=out)
    assert sum(scores) <= 0 and "seat 1 discards" in out.getvalue()
    game = WebGame([None, BotSpec(ok), BotSpec(ok), BotSpec(ok)], get_rules("mil"),
                   DealSeeds(5), fallback=None)  # a bot that fails raises here
    try:
        while not game.done:  # the human's moves: the first legal ones
            game.act(game.step, game.legal()[0])
        agents = [a for a in game.bots.agents if a is not None]
        assert agents and all(a.timing()["decisions"] > 0 and a.fault_events == 0
                              for a in agents)
    finally:
        game.bots.close()
        from sichuan_env.seats.bot_process import close_all

        close_all()  # the web keeps one unused prototype per spec (sichuan_env.play.web.bots)
