"""The mutant generator of ``benchmarks/mutation.py`` (no mutant is run here): its edits
make the intended change and nothing else, ids are unique and stable, the modules a
mutant recompiles follow the imports, the committed equivalence arguments name existing
mutants, and bad arguments give one line and exit 2."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "mutation.py"


@pytest.fixture(scope="module")
def mutation():
    spec = importlib.util.spec_from_file_location("mutation_tool", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["mutation_tool"] = mod
    spec.loader.exec_module(mod)
    yield mod
    del sys.modules["mutation_tool"]


@pytest.fixture(scope="module")
def mutants(mutation):
    return mutation.generate()


def _sites(mutation, text: str):
    sites = mutation._Sites("m", text)
    sites.visit(ast.parse(text))
    return {m.change: mutation.apply_edits(text, m.edits) for m in sites.mutants}, sites


def test_each_operator_changes_exactly_its_token(mutation):
    text = ("def f(a, b):\n"
            "    '''doc 1'''\n"
            "    if (a) < b and not a:\n"
            "        a += 2\n"
            "    return a - b if a else a | b\n")
    got, _ = _sites(mutation, text)
    assert got["< -> <="] == text.replace("(a) < b", "(a) <= b")
    assert got["and -> or"] == text.replace("(a) < b and not a", "((a) < b or not a)")
    assert got["not x -> x"] == text.replace("and not a", "and  a")
    assert got["+= -> -="] == text.replace("a += 2", "a -= 2")
    assert got["2 -> 3"] == text.replace("+= 2", "+= 3")
    assert got["2 -> 1"] == text.replace("+= 2", "+= 1")
    assert got["- -> +"] == text.replace("a - b", "a + b")
    assert got["| -> &"] == text.replace("a | b", "a & b")
    assert got["statement -> pass"] == text.replace("a += 2", "pass")
    assert "1" not in "".join(k.split(" ->")[0] for k in got)  # the docstring is left alone


def test_conditions_are_negated_whole(mutation):
    text = "def f(a, b):\n    while a or (b\n            and a):\n        a = 0\n"
    _, sites = _sites(mutation, text)
    (neg,) = [m for m in sites.mutants if m.kind == "negate"]
    assert mutation.apply_edits(text, neg.edits) == text.replace(
        "while a or (b\n            and a):", "while not (a or (b\n            and a)):")


def test_the_rule_modules_give_unique_ids_and_every_kind(mutation, mutants):
    ids = [m.id for m in mutants]
    assert len(ids) == len(set(ids)) > 1000
    assert {m.module for m in mutants} == set(mutation.MODULES)
    assert {m.kind for m in mutants} == {"cmp", "arith", "const", "bool", "boolop", "not",
                                         "negate", "remove"}
    # the file cache and command line of tables.py are not rule code
    assert not [m for m in mutants if m.module == "tables"
                and m.function.split(".")[0] in mutation.NOT_RULES["tables"]]


def test_ids_do_not_depend_on_code_elsewhere_in_the_file(mutation):
    text = "def f(a):\n    return a < 1\n\n\ndef g(a):\n    return a > 2\n"
    _, before = _sites(mutation, text)
    _, after = _sites(mutation, "X = 5\n\n\n" + text.replace("a < 1", "a < 1 + a"))
    want = {m.id: m.change for m in before.mutants if m.function == "g"}
    assert {m.id: m.change for m in after.mutants if m.function == "g"} == want


def test_what_a_mutant_recompiles_follows_the_imports(mutation, mutants):
    graph = mutation._imports(ROOT)
    first = {}
    for m in mutants:
        first.setdefault((m.module, m.module_level), m)
    rules = mutation.recompiled(first["rules", False], graph)
    assert rules == set()  # rule options reach the kernels as a run-time array
    assert mutation.recompiled(first["tables", False], graph) == set()
    hand = mutation.recompiled(first["hand_kernels", False], graph)
    assert {"hand_kernels", "engine_kernels", "engine", "hands"} <= hand
    assert "observation" not in hand and "view" not in hand
    assert {"hand_kernels", "engine_kernels", "jit"} <= mutation.recompiled(
        first["tables", True], graph)


def test_a_second_tree_copy_reuses_the_baselines_compiled_code_under_numbas_names(
        mutation, tmp_path):
    from numba.core.caching import _CacheLocator

    for folder in (tmp_path / "tree" / "sichuan_env" / "core", tmp_path / "tree-1" / "x"):
        expected = _CacheLocator.get_suitable_cache_subpath(str(folder / "kernels.py"))
        assert mutation._numba_subpath(folder) == expected
    a, b = tmp_path / "tree", tmp_path / "tree-1"
    for t in (a, b):
        (t / "sichuan_env" / "core").mkdir(parents=True)
    rename = mutation._subpath_map(a, b)
    assert rename == {mutation._numba_subpath(a / "sichuan_env" / sub):
                      mutation._numba_subpath(b / "sichuan_env" / sub) for sub in ("", "core")}
    # filled from a baseline compiled in ``a``: the files land under b's names, but the
    # dropped module's
    base = tmp_path / "base"
    src = base / "numba" / f"sichuan_env-{mutation._fingerprint(a / 'sichuan_env')}"
    for name in ("hand_kernels.f-1.py311.nbi", "rules.g-2.py311.nbi"):
        path = src / mutation._numba_subpath(a / "sichuan_env" / "core") / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)
    cache = tmp_path / "cache"
    mutation._seed_cache(base, cache, b, {"hand_kernels"}, tables=True, compiled_in=a)
    got = [p.relative_to(cache).as_posix() for p in cache.rglob("*") if p.is_file()]
    fingerprint = mutation._fingerprint(b / "sichuan_env")
    assert got == [f"numba/sichuan_env-{fingerprint}/"
                   f"{mutation._numba_subpath(b / 'sichuan_env' / 'core')}/rules.g-2.py311.nbi"]


def test_the_equivalence_arguments_name_existing_mutants(mutation, mutants):
    by_id = {m.id: m for m in mutants}
    known = json.loads(mutation.EQUIVALENT_FILE.read_text())
    for mid, entry in known.items():
        assert mid in by_id, mid
        assert entry["source_line"] == by_id[mid].source_line, mid
        assert entry["change"] == by_id[mid].change, mid
        assert len(entry["reason"]) > 40, mid


@pytest.mark.parametrize("args", [["--sample", "0"], ["--ids", "rules.nothing:cmp#1"]])
def test_bad_arguments_give_one_line_and_exit_2(args):
    r = subprocess.run([sys.executable, str(SCRIPT), *args, "--list"], capture_output=True,
                       text=True, cwd=ROOT)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "mutation:" in r.stderr
