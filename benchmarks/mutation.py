"""Mutation testing of the rule code: how many generated changes to a rule the tests catch.

    python benchmarks/mutation.py --sample N --seed S [--out FILE] [--timeout SEC]
    python benchmarks/mutation.py --list            # every mutant, one line each

Mutants are made from ``sichuan_env/core/``'s ``engine_kernels.py``, ``hand_kernels.py``,
``tables.py``
(the builders of the lookup tables, not their file cache or command line) and ``rules.py``:
comparison operators (``<`` to ``<=``, ``==`` to ``!=``, ...), arithmetic and bit operators
(``+`` to ``-``, ``&`` to ``|``, ...), integer constants off by one (both ways), ``True`` /
``False`` swapped, ``and`` / ``or`` swapped, ``not`` dropped, the test of an ``if``,
``while`` or conditional expression negated and a statement replaced by ``pass``. A
mutant's id names its module, function, kind and the ordinal of its site in that function
(``engine_kernels._discard_hu:cmp#2``), so ids survive edits elsewhere in the file.

``--sample N --seed S`` draws N of them (``random.Random(S).sample`` over the full list in
its fixed order; ``--ids`` names them instead). Each is applied to a copy of the tree in a
temporary folder (never to the checkout) and the module's *kill set* -- a list of quick,
targeted test files (rule traces, golden records, the independent implementation's
records, hand tests) -- runs with ``pytest -x -m "not slow"``; the first failing test
kills it. With ``--full``, a mutant the kill set misses runs again with more test files
(every quick test of the engine, hands and rules); with ``--slow``, then with the slow
tests of :data:`SLOW_TESTS` (play under numba's bounds checking). ``stage`` in the
results says which killed it. A run over its time limit
(``--timeout``, the compile included) counts as ``timed_out``.

The compiled-code cache is isolated per mutant: each gets its own ``SICHUAN_ENV_CACHE``
(``NUMBA_CACHE_DIR`` removed from its environment) and Python bytecode folder in a
temporary folder deleted afterwards. To spare the compile of what the mutant cannot
change, the new cache starts with the baseline's compiled code of every module whose code
the mutant cannot reach (the kernels a changed module's code is linked into are those of
the modules importing it, transitively -- numba's own cache does not follow such links,
which is why they are dropped here); ``rules.py`` and the bodies of ``tables.py``'s
functions reach no compiled code at all (rule options and tables enter the kernels as
run-time arrays), so their mutants recompile nothing, while a module-level constant of
``tables.py`` recompiles every importer. The tables' ``.npz`` is shared unless the mutant
is in ``tables.py``, which rebuilds it. ``--jobs N`` runs N mutants at a time, each in its
own copy of the tree; numba files compiled code under a hash of the source folder's path,
so a copy's cache is seeded from the baseline's under the copy's folder names.

Mutants listed in ``benchmarks/mutation_equivalent.json`` (id, the source line it
changes, the argument why no test can tell it apart) are reported as ``equivalent``
without running; an entry whose line no longer matches the source is ignored (with a
warning), so a stale argument never hides a mutant.

Results: one JSON line per mutant appended to ``OUT.jsonl`` as it finishes (an interrupted
run started again with the same arguments resumes), then ``OUT`` (JSON: the counts
``killed``, ``survived``, ``timed_out``, ``equivalent``, then ``mutants``, one entry each)
and a table on stdout. Why a generator of our own rather than mutmut or cosmic-ray:
docs/testing.md.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import hashlib
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tokenize
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = "sichuan_env"
RULE_CODE = Path(PKG, "core")  # the folder of MODULES
MODULES = ("engine_kernels", "hand_kernels", "tables", "rules")
EQUIVALENT_FILE = ROOT / "benchmarks" / "mutation_equivalent.json"
# functions of tables.py that are not rule code: where the tables are cached, the CLI
NOT_RULES = {"tables": {"cache_dir", "cache_path", "_save", "_read", "load_tables", "main"}}
# Modules without compiled code. Nothing of rules.py reaches a kernel but as a run-time
# array of option values; tables.py's functions build arrays the kernels get at run time,
# its module-level constants (N_CODES, ...) are read by kernels as compile-time constants.
NO_COMPILED_CODE = {"rules": "all", "tables": "function bodies"}

_ENGINE_TESTS = [
    "tests/test_engine_golden.py",
    "tests/test_engine_traces.py",
    "tests/test_engine_waits.py",
    "tests/test_records_compat.py",
    "tests/test_engine_kernel_parts.py",
    "tests/test_engine_invariants.py",
    "tests/test_engine_validation.py",
    "tests/test_engine_api.py",
    "tests/test_step_info.py",
    "tests/test_rules_mutants.py",
]
_HAND_TESTS = [
    "tests/test_hand_kernels.py",
    "tests/test_hands_rules.py",
    "tests/test_hands_reference.py",
    "tests/test_hands_batched.py",
]
KILL_SETS = {
    "engine_kernels": _ENGINE_TESTS,
    "hand_kernels": _HAND_TESTS + _ENGINE_TESTS,
    "tables": _HAND_TESTS + _ENGINE_TESTS,
    "rules": ["tests/test_rules.py", "tests/test_rules_mutants.py", "tests/test_engine_golden.py",
              "tests/test_records_compat.py", "tests/test_engine_validation.py"],
}
FULL_TESTS = sorted(set(_ENGINE_TESTS + _HAND_TESTS + [
    "tests/test_rules.py",
    "tests/test_engine_basic.py",
    "tests/test_engine_api.py",
    "tests/test_engine_validation.py",
    "tests/test_engine_fast_call.py",
    "tests/test_plain_python_reference.py",
    "tests/test_hand_model.py",
    "tests/test_records.py",
    "tests/test_step_info.py",
    "tests/test_driver_golden.py",
    "tests/test_random_rounds.py",
]))

# slow tests (-m slow) run last with --slow: numba's bounds checking (a fresh compile)
SLOW_TESTS = ["tests/test_rules_mutants.py"]

CMP = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
       ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Is: ("is", "is not"),
       ast.IsNot: ("is not", "is"), ast.In: ("in", "not in"), ast.NotIn: ("not in", "in")}
ARITH = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "+"),
         ast.FloorDiv: ("//", "*"), ast.Div: ("/", "*"), ast.Mod: ("%", "//"),
         ast.Pow: ("**", "*"), ast.LShift: ("<<", ">>"), ast.RShift: (">>", "<<"),
         ast.BitAnd: ("&", "|"), ast.BitOr: ("|", "&"), ast.BitXor: ("^", "|")}


@dataclass
class Mutant:
    """One change to one module: ``edits`` are (line, col, end_line, end_col, text) in
    characters (lines from 1), applied to the original source."""

    id: str
    module: str
    function: str
    kind: str
    line: int
    source_line: str
    change: str
    module_level: bool
    edits: list[tuple[int, int, int, int, str]] = field(repr=False)


# ----------------------------------------------------------------------------- generating


class _Sites(ast.NodeVisitor):
    """Collects the mutants of one module, in source order."""

    def __init__(self, module: str, text: str) -> None:
        self.module = module
        self.lines = text.splitlines(keepends=True)
        self.tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                       if t.type in (tokenize.OP, tokenize.NAME)]
        self.starts = [t.start for t in self.tokens]
        self.scope: list[str] = []
        self.ordinals: dict[tuple[str, str], int] = {}
        self.mutants: list[Mutant] = []

    # positions: ast gives utf-8 byte columns, the edits use character columns
    def _col(self, line: int, byte_col: int) -> int:
        return len(self.lines[line - 1].encode()[:byte_col].decode())

    def _start(self, node: ast.AST) -> tuple[int, int]:
        return node.lineno, self._col(node.lineno, node.col_offset)

    def _end(self, node: ast.AST) -> tuple[int, int]:
        return node.end_lineno, self._col(node.end_lineno, node.end_col_offset)

    def _tokens_between(self, a: tuple[int, int], b: tuple[int, int]) -> list[tokenize.TokenInfo]:
        out = []
        for t in self.tokens[bisect.bisect_left(self.starts, a):]:
            if t.end > b:
                break
            out.append(t)
        return out

    def _add(self, node: ast.AST, kind: str, change: str,
             edits: list[tuple[int, int, int, int, str]]) -> None:
        func = ".".join(self.scope) or "<module>"
        key = (func, kind)
        self.ordinals[key] = self.ordinals.get(key, 0) + 1
        line = node.lineno
        self.mutants.append(Mutant(
            id=f"{self.module}.{func}:{kind}#{self.ordinals[key]}", module=self.module,
            function=func, kind=kind, line=line, source_line=self.lines[line - 1].strip(),
            change=change, module_level=not self.scope, edits=edits))

    # scopes and what is never mutated
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if not self.scope and node.name in NOT_RULES.get(self.module, ()):
            return
        self.scope.append(node.name)
        self._body(node.body)
        self.scope.pop()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.scope.append(node.name)
        self._body(node.body)
        self.scope.pop()

    def _body(self, body: list[ast.stmt]) -> None:
        for i, stmt in enumerate(body):
            if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue  # docstring
            self._statement_removal(stmt)
            self.visit(stmt)

    def visit_Module(self, node: ast.Module) -> None:
        self._body(node.body)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)  # not the annotation

    def visit_Assign(self, node: ast.Assign) -> None:
        if not self.scope and any(isinstance(t, ast.Name) and t.id == "__all__"
                                  for t in node.targets):
            return
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        return  # the messages of errors are not rules

    def visit_Import(self, node: ast.Import) -> None:
        return

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        return

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        return

    # statements replaced by ``pass``
    def _statement_removal(self, stmt: ast.stmt) -> None:
        if not self.scope:
            return  # a missing module-level name only breaks the import
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Break,
                             ast.Continue)):
            if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
                return
            (l0, c0), (l1, c1) = self._start(stmt), self._end(stmt)
            self._add(stmt, "remove", "statement -> pass", [(l0, c0, l1, c1, "pass")])

    # expressions
    def visit_Compare(self, node: ast.Compare) -> None:
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            old, new = CMP[type(op)]
            toks = self._tokens_between(self._end(left), self._start(right))
            words = old.split()
            ops = [t for t in toks if t.string in words]
            if len(ops) >= len(words):
                ops = ops[-len(words):]
                (l0, c0), (l1, c1) = ops[0].start, ops[-1].end
                self._add(node, "cmp", f"{old} -> {new}", [(l0, c0, l1, c1, new)])
            left = right
        self.generic_visit(node)

    def _binop(self, node: ast.AST, op: ast.operator, left: ast.AST, right: ast.AST,
               aug: bool) -> None:
        if type(op) not in ARITH:
            return
        old, new = ARITH[type(op)]
        old, new = (old + "=", new + "=") if aug else (old, new)
        toks = [t for t in self._tokens_between(self._end(left), self._start(right))
                if t.string == old]
        if toks:
            t = toks[-1]
            self._add(node, "arith", f"{old} -> {new}", [(*t.start, *t.end, new)])

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) and isinstance(
                node.left.value, str):
            return  # string formatting
        self._binop(node, node.op, node.left, node.right, aug=False)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._binop(node, node.op, node.target, node.value, aug=True)
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        edits = []
        for a, b in zip(node.values, node.values[1:], strict=False):
            for t in self._tokens_between(self._end(a), self._start(b)):
                if t.string == old:
                    edits.append((*t.start, *t.end, new))
        (l0, c0), (l1, c1) = self._start(node), self._end(node)
        edits = [(l1, c1, l1, c1, ")")] + edits[::-1] + [(l0, c0, l0, c0, "(")]
        self._add(node, "boolop", f"{old} -> {new}", edits)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            word = self._tokens_between(self._start(node), self._start(node.operand))[0]
            self._add(node, "not", "not x -> x", [(*word.start, *word.end, "")])
        self.generic_visit(node)

    def _negate(self, node: ast.AST, test: ast.expr) -> None:
        (l0, c0), (l1, c1) = self._start(test), self._end(test)
        self._add(test, "negate", "condition negated",
                  [(l1, c1, l1, c1, ")"), (l0, c0, l0, c0, "not (")])

    def visit_If(self, node: ast.If) -> None:
        self._negate(node, node.test)
        self.visit(node.test)
        self._body(node.body)
        self._body(node.orelse)

    def visit_While(self, node: ast.While) -> None:
        self._negate(node, node.test)
        self.visit(node.test)
        self._body(node.body)
        self._body(node.orelse)

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        self._body(node.body)
        self._body(node.orelse)

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            self.visit(item.context_expr)
        self._body(node.body)

    def visit_Try(self, node: ast.Try) -> None:
        self._body(node.body)
        for h in node.handlers:
            self._body(h.body)
        self._body(node.orelse)
        self._body(node.finalbody)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._negate(node, node.test)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        v = node.value
        (l0, c0), (l1, c1) = self._start(node), self._end(node)
        if isinstance(v, bool):
            self._add(node, "bool", f"{v} -> {not v}", [(l0, c0, l1, c1, str(not v))])
        elif isinstance(v, int):
            for d in (1, -1):
                self._add(node, "const", f"{v} -> {v + d}", [(l0, c0, l1, c1, str(v + d))])


def apply_edits(text: str, edits: list[tuple[int, int, int, int, str]]) -> str:
    """The source with the edits made (applied from the last position to the first)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))
    out = text
    for l0, c0, l1, c1, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        a, b = starts[l0 - 1] + c0, starts[l1 - 1] + c1
        out = out[:a] + new + out[b:]
    return out


def generate(root: Path = ROOT) -> list[Mutant]:
    """Every mutant of :data:`MODULES`, in a fixed order (module, then source order)."""
    out = []
    for module in MODULES:
        text = (root / RULE_CODE / f"{module}.py").read_text()
        sites = _Sites(module, text)
        sites.visit(ast.parse(text))
        out += sites.mutants
    return out


def valid(m: Mutant, root: Path = ROOT) -> bool:
    """Whether the mutated module still parses (an edit may not, e.g. ``pass`` in an
    expression position; such mutants are never drawn)."""
    try:
        ast.parse(apply_edits((root / RULE_CODE / f"{m.module}.py").read_text(), m.edits))
    except SyntaxError:
        return False
    return True


# ------------------------------------------------------------------- what a mutant recompiles


def _imports(root: Path) -> dict[str, set[str]]:
    """Module -> the package modules it imports (modules by their file's stem, which is
    also how numba names their cache files)."""
    graph: dict[str, set[str]] = {}
    for path in (root / PKG).rglob("*.py"):
        deps = set()
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.ImportFrom) and n.module and n.module.split(".")[0] == PKG:
                parts = n.module.split(".")  # from sichuan_env.core import x / ...core.x import
                deps |= {a.name for a in n.names} if len(parts) <= 2 else {parts[-1]}
            elif isinstance(n, ast.Import):
                deps |= {a.name.split(".")[-1] for a in n.names
                         if a.name.startswith(PKG + ".")}
        graph.setdefault(path.stem, set()).update(deps)
    return graph


def recompiled(m: Mutant, graph: dict[str, set[str]]) -> set[str]:
    """The modules whose cached compiled code a mutant may change (they are recompiled)."""
    reach = NO_COMPILED_CODE.get(m.module)
    if reach == "all" or (reach == "function bodies" and not m.module_level):
        return set()
    out = {m.module}
    grew = True
    while grew:
        new = {k for k, deps in graph.items() if deps & out} - out
        out |= new
        grew = bool(new)
    return out


# ----------------------------------------------------------------------------- running


def _fingerprint(folder: Path) -> str:
    h = hashlib.sha256()  # the same as sichuan_env.core.jit.source_fingerprint
    for path in sorted(folder.rglob("*.py")):
        name = path.relative_to(folder).as_posix()
        h.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _env(cache: Path, pyc: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env.update(SICHUAN_ENV_CACHE=str(cache), PYTHONPYCACHEPREFIX=str(pyc),
               PYTHONHASHSEED="0")
    return env


def _pytest(tree: Path, files: list[str], env: dict[str, str], timeout: float,
            marks: str = "not slow") -> tuple[str, str | None, float, float]:
    """('passed' | 'failed' | 'timed_out', the first failing test, seconds, CPU seconds of
    the run and what it waited for -- its own, whatever else runs beside it)."""
    files = [f for f in files if (tree / f).exists()]
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-rfE", "-m", marks,
           "-p", "no:cacheprovider", "-p", "no:randomly", "--no-header", *files]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    late = threading.Timer(timeout, os.killpg, (proc.pid, signal.SIGKILL))
    late.start()
    try:
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        late.cancel()
        proc.stdout.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    dt, cpu = time.perf_counter() - t0, usage.ru_utime + usage.ru_stime
    if proc.returncode == -signal.SIGKILL and dt >= timeout:
        return "timed_out", None, dt, cpu
    if proc.returncode == 0:
        return "passed", None, dt, cpu
    hit = re.search(r"^(?:FAILED|ERROR) (\S+)", out, re.M)
    tail = out.strip().splitlines()[-1:] or [""]
    first = hit.group(1) if hit else f"exit {proc.returncode}: {tail[0][:200]}"
    return "failed", first, dt, cpu


def _copy_tree(dst: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for name in (PKG, "tests", "sichuan_agents", "benchmarks"):
        shutil.copytree(ROOT / name, dst / name, ignore=ignore)
    for name in ("pyproject.toml", "train.py"):
        shutil.copy2(ROOT / name, dst / name)


def _prepare(tree: Path, base: Path) -> None:
    """Copy the tree (test files afresh each time); drop the baseline's cache unless it
    was compiled from the same package sources."""
    stamp = base / "sources"
    same = tree.exists() and stamp.exists() and stamp.read_text() == _fingerprint(ROOT / PKG)
    if not same:
        shutil.rmtree(tree, ignore_errors=True)
        shutil.rmtree(base, ignore_errors=True)
        _copy_tree(tree)
        base.mkdir(parents=True)
        stamp.write_text(_fingerprint(ROOT / PKG))
    else:
        for path in (ROOT / PKG).rglob("*.py"):  # a run killed mid-mutant left it applied
            copy = tree / path.relative_to(ROOT)
            if path.read_bytes() != copy.read_bytes():
                shutil.copy2(path, copy)
        tmp = tree.with_name("tree-new")
        shutil.rmtree(tmp, ignore_errors=True)
        _copy_tree(tmp)
        for name in ("tests", "sichuan_agents", "benchmarks"):  # the package keeps mtimes
            shutil.rmtree(tree / name)
            (tmp / name).rename(tree / name)
        shutil.rmtree(tmp)


def _numba_subpath(folder: Path) -> str:
    """The name numba gives the cache subfolder of the sources in ``folder``: the folder's
    name and a SHA-1 of its absolute path (``_CacheLocator.get_suitable_cache_subpath``)."""
    path = os.path.abspath(folder)
    return f"{os.path.basename(path)}_{hashlib.sha1(path.encode()).hexdigest()}"


def _subpath_map(compiled_in: Path, tree: Path) -> dict[str, str]:
    """Cache subfolder names of the baseline's tree -> those of ``tree`` (another copy at
    another path: its compiled code is the same, numba only files it under another name)."""
    return {_numba_subpath(d): _numba_subpath(tree / d.relative_to(compiled_in))
            for d in [compiled_in / PKG, *(compiled_in / PKG).rglob("*")] if d.is_dir()}


def _seed_cache(base: Path, cache: Path, tree: Path, drop: set[str], tables: bool,
                compiled_in: Path | None = None) -> None:
    """Fill a mutant's fresh cache folder from the baseline's: the compiled code of every
    package module but ``drop`` (under the mutant's fingerprint, and under ``tree``'s
    subfolder names where the baseline was compiled in the copy ``compiled_in``), and the
    tables' file unless they are rebuilt."""
    numba = cache / "numba"
    numba.mkdir(parents=True)
    (src,) = (base / "numba").glob(f"{PKG}-*")  # the baseline's only fingerprint
    dst = numba / f"{PKG}-{_fingerprint(tree / PKG)}"
    rename = _subpath_map(compiled_in, tree) if compiled_in and compiled_in != tree else {}
    for path in src.rglob("*"):
        if path.is_file() and path.name.split(".")[0] not in drop:
            rel = path.relative_to(src)
            target = dst / rename.get(rel.parts[0], rel.parts[0]) / Path(*rel.parts[1:])
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    if not tables:
        for npz in base.glob("*.npz"):
            os.symlink(npz, cache / npz.name)


def _load_equivalent() -> dict[str, dict[str, str]]:
    if not EQUIVALENT_FILE.exists():
        return {}
    return json.loads(EQUIVALENT_FILE.read_text())


def run_mutant(m: Mutant, tree: Path, base: Path, graph: dict[str, set[str]], timeout: float,
               full: bool, slow: bool, compiled_in: Path | None = None) -> dict:
    """Apply ``m`` to the tree copy, run its kill set (then the full set, the slow tests),
    restore. ``compiled_in``: the tree copy the baseline was compiled in, if not ``tree``."""
    path = tree / RULE_CODE / f"{m.module}.py"
    original = path.read_text()
    stat = path.stat()
    work = Path(tempfile.mkdtemp(prefix="mutant-", dir=tree.parent))
    result = asdict(m)
    del result["edits"]
    try:
        path.write_text(apply_edits(original, m.edits))
        cache = work / "cache"
        _seed_cache(base, cache, tree, recompiled(m, graph), m.module == "tables", compiled_in)
        env = _env(cache, work / "pyc")
        t0 = time.perf_counter()
        status, first, _, cpu = _pytest(tree, KILL_SETS[m.module], env, timeout)
        stage = "kill_set"
        if status == "passed" and full:
            left = timeout - (time.perf_counter() - t0)
            extra = [f for f in FULL_TESTS if f not in KILL_SETS[m.module]]
            status, first, _, more = _pytest(tree, extra, env, max(left, 1.0))
            cpu += more
            stage = "full"
        if status == "passed" and slow:
            left = timeout - (time.perf_counter() - t0)
            status, first, _, more = _pytest(tree, SLOW_TESTS, env, max(left, 1.0),
                                             marks="slow")
            cpu += more
            stage = "slow"
        result.update(status={"passed": "survived", "failed": "killed"}.get(status, status),
                      killed_by=first, stage=stage,
                      seconds=round(time.perf_counter() - t0, 1),
                      cpu_seconds=round(cpu, 1))
    finally:
        path.write_text(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        shutil.rmtree(work, ignore_errors=True)
    return result


def baseline(tree: Path, base: Path, modules: set[str], timeout: float) -> None:
    """Compile everything once and check the kill sets pass on the unchanged tree."""
    files = sorted({f for mod in modules for f in KILL_SETS[mod] if (tree / f).exists()})
    mark = base / "verified"  # test files that passed on these sources, by content
    shared = _fingerprint_tree(tree / "tests", skip="test_")
    known = json.loads(mark.read_text()) if mark.exists() else {}
    if known.get("shared") != shared:
        known = {"shared": shared, "files": {}}
    digest = {f: hashlib.sha256((tree / f).read_bytes()).hexdigest()[:16] for f in files}
    files = [f for f in files if known["files"].get(f) != digest[f]]
    if not files:
        return
    env = _env(base, base / "pyc")
    status, first, dt, _ = _pytest(tree, files, env, timeout * 4)
    if status != "passed":
        raise SystemExit(f"mutation: the unchanged tree fails its kill sets ({status}: {first})")
    known["files"].update({f: digest[f] for f in files})
    mark.write_text(json.dumps(known))
    print(f"baseline: {len(files)} test files pass in {dt:.0f} s", flush=True)


def _fingerprint_tree(folder: Path, skip: str = "") -> str:
    """A hash of the files under ``folder`` but the top-level ones named ``skip*``."""
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if skip and path.parent == folder and path.name.startswith(skip):
            continue
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def summary(results: list[dict]) -> dict:
    counts = {k: sum(r["status"] == k for r in results)
              for k in ("killed", "survived", "timed_out", "equivalent")}
    measured = counts["killed"] + counts["survived"] + counts["timed_out"]
    fast = sum(r["status"] == "killed" and r["stage"] != "slow" for r in results)
    return {
        **counts,
        # killed or timed out, over the mutants not shown equivalent
        "score": (counts["killed"] + counts["timed_out"]) / measured if measured else None,
        # killed by quick tests (pytest -m "not slow")
        "score_quick": (fast + counts["timed_out"]) / measured if measured else None,
        "mutants": results,
    }


def table(results: list[dict]) -> str:
    rows = ["| module | mutants | killed | survived | timed out | equivalent |",
            "|---|---:|---:|---:|---:|---:|"]
    for mod in [*MODULES, "all"]:
        rs = [r for r in results if mod in ("all", r["module"])]
        c = summary(rs)
        rows.append(f"| {mod} | {len(rs)} | {c['killed']} | {c['survived']} | "
                    f"{c['timed_out']} | {c['equivalent']} |")
    c = summary(results)
    if c["score"] is not None:
        rows.append(f"\nscore {c['score']:.1%} (quick tests alone {c['score_quick']:.1%}) of "
                    f"{c['killed'] + c['survived'] + c['timed_out']} non-equivalent mutants")
    for r in results:
        if r["status"] == "survived":
            rows.append(f"\nsurvived: {r['id']} (line {r['line']}: {r['change']}): "
                        f"{r['source_line']}")
    return "\n".join(rows)


def _copy_of(tree: Path, dst: Path) -> None:
    """A second tree copy beside ``tree``, with its files' times (numba checks them)."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(tree, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def _run_all(todo: list[Mutant], total: int, done: dict[str, dict],
             equivalent: dict[str, dict[str, str]], work: Path, log: Path,
             args: argparse.Namespace) -> None:
    """Run ``todo`` (``args.jobs`` at a time, each job in its own tree copy), appending each
    result to ``log`` as it finishes."""
    tree, base = work / "tree", work / "base"

    def record(m: Mutant, r: dict) -> None:
        done[m.id] = r
        with log.open("a") as f:
            f.write(json.dumps(r) + "\n")
        print(f"{len(done):4d}/{total} {r['status']:10s} {r['seconds']:6.1f}s "
              f"{m.id} ({m.change}) {r.get('killed_by') or ''}", flush=True)

    to_run = []
    for m in todo:
        eq = equivalent.get(m.id)
        if eq and eq.get("source_line") == m.source_line:
            r = asdict(m)
            del r["edits"]
            r.update(status="equivalent", reason=eq["reason"], killed_by=None, stage=None,
                     seconds=0.0)
            record(m, r)
            continue
        if eq:
            print(f"warning: {m.id}: its line changed; the equivalence argument is ignored",
                  file=sys.stderr)
        to_run.append(m)
    if args.limit is not None:
        to_run = to_run[:args.limit]
    if not to_run:
        return
    _prepare(tree, base)
    baseline(tree, base, {x.module for x in to_run}, args.timeout)
    graph = _imports(tree)
    trees = [tree] + [work / f"tree-{k}" for k in range(1, min(args.jobs, len(to_run)))]
    for extra in trees[1:]:
        _copy_of(tree, extra)
    free = list(trees)
    with ThreadPoolExecutor(max_workers=len(trees)) as pool:
        running: dict = {}
        queue = list(to_run)
        while queue or running:
            while queue and free:
                m, t = queue.pop(0), free.pop()
                running[pool.submit(run_mutant, m, t, base, graph, args.timeout, args.full,
                                    args.slow, tree)] = (m, t)
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                m, t = running.pop(fut)
                free.append(t)
                record(m, fut.result())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sample", type=int, help="mutants drawn at random (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ids", nargs="*", help="run these mutant ids instead of a sample")
    p.add_argument("--modules", nargs="*", choices=MODULES, default=list(MODULES))
    p.add_argument("--out", default="mutation.json", help="results file (and OUT.jsonl)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per mutant")
    p.add_argument("--full", action="store_true",
                   help="run the wider quick test set on what the kill set misses")
    p.add_argument("--slow", action="store_true",
                   help="then run the slow tests of SLOW_TESTS on what is left")
    p.add_argument("--work", help="keep the tree copy and the baseline's compiled code in "
                                  "this folder between runs (default: a temporary folder)")
    p.add_argument("--limit", type=int, help="stop after running this many mutants")
    p.add_argument("--jobs", type=int, default=1,
                   help="mutants run at a time, each in its own tree copy (default 1)")
    p.add_argument("--retry", action="store_true",
                   help="run again the mutants recorded as survived or timed out (after new "
                        "tests; the later result replaces the earlier)")
    p.add_argument("--list", action="store_true", help="print the mutants and exit")
    args = p.parse_args(argv)

    mutants = [m for m in generate() if m.module in args.modules]
    if args.ids:
        by_id = {m.id: m for m in mutants}
        unknown = [i for i in args.ids if i not in by_id]
        if unknown:
            print(f"mutation: unknown mutant id(s) {', '.join(unknown)}", file=sys.stderr)
            return 2
        chosen = [by_id[i] for i in args.ids]
    elif args.sample is not None:
        if not 0 < args.sample <= len(mutants):
            print(f"mutation: --sample must be in 1..{len(mutants)}", file=sys.stderr)
            return 2
        order = random.Random(args.seed).sample(mutants, len(mutants))
        chosen = []
        for m in order:
            if len(chosen) == args.sample:
                break
            if valid(m):
                chosen.append(m)
    else:
        chosen = [m for m in mutants if valid(m)]
    if args.list:
        for m in chosen:
            print(f"{m.id}\t{m.line}\t{m.change}\t{m.source_line}")
        print(f"{len(chosen)} mutants", file=sys.stderr)
        return 0

    out = Path(args.out)
    log = out.with_name(out.name + "l") if out.suffix == ".json" else out.with_suffix(".jsonl")
    done = {}
    if log.exists():
        for line in log.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                done[r["id"]] = r
    equivalent = _load_equivalent()
    again = {"survived", "timed_out"} if args.retry else set()
    todo = [m for m in chosen if m.id not in done or done[m.id]["status"] in again]
    with tempfile.TemporaryDirectory(prefix="sichuan-mutation-") as tmp:
        work = Path(args.work) if args.work else Path(tmp)
        _run_all(todo, len(chosen), done, equivalent, work, log, args)
    results = [done[m.id] for m in chosen if m.id in done]
    out.write_text(json.dumps(summary(results), indent=1) + "\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
