"""The compiled-code cache (sichuan_env/core/jit.py): one folder per version of a package's
sources, so that an index written by other sources (naming argument types that no longer
exist) is never read -- numba fails on such an index instead of recompiling."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import sichuan_env
from sichuan_env.core import engine_kernels
from sichuan_env.core.jit import kernel_cache_dir, numba_cache_dir, source_fingerprint

ROOT = Path(__file__).resolve().parents[1]

KERNELS_V1 = '''
import numpy as np
from numba.experimental import structref
from sichuan_env.core.jit import njit

@structref.register
class OldBagType(__import__("numba").types.StructRef):
    pass

class OldBag(structref.StructRefProxy):
    pass

structref.define_proxy(OldBag, OldBagType, ["x"])

@njit
def total(bag):
    return bag.x.sum()

def run():
    return total(OldBag(np.arange(4.0)))
'''

KERNELS_V2 = '''
import numpy as np
from numba.experimental import structref
from sichuan_env.core.jit import njit

@structref.register
class NewBagType(__import__("numba").types.StructRef):
    pass

class NewBag(structref.StructRefProxy):
    pass

structref.define_proxy(NewBag, NewBagType, ["x"])

@njit
def total(bag):
    return bag.x.sum()

def run():
    return total(NewBag(np.arange(4.0)))
'''


def _run(pkg: Path, cache: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, SICHUAN_ENV_CACHE=str(cache),
               PYTHONPATH=os.pathsep.join([str(pkg.parent), str(ROOT)]))
    env.pop("NUMBA_CACHE_DIR", None)
    return subprocess.run([sys.executable, "-c", "import kernels_pkg.k as k; print(k.run())"],
                          env=env, capture_output=True, text=True, timeout=300)


def test_kernels_cache_in_a_folder_named_by_their_sources():
    """Every kernel of the package, whichever room it is in, caches under one fingerprint of
    all the package's sources: an edit to the engine recompiles the seats' kernels that
    call it."""
    from sichuan_env.seats import observation

    package = Path(sichuan_env.__file__).resolve().parent
    want = os.path.join(numba_cache_dir(), f"sichuan_env-{source_fingerprint(package)}")
    assert kernel_cache_dir(engine_kernels.step_serial.py_func) == want
    assert engine_kernels.step_serial._cache._cache_path.startswith(want)
    kernel = next(f for f in vars(observation).values() if hasattr(f, "py_func"))
    assert kernel_cache_dir(kernel.py_func) == want


def test_the_fingerprint_reads_subfolders(tmp_path):
    (tmp_path / "room").mkdir()
    (tmp_path / "room" / "a.py").write_text("x = 1\n")
    first = source_fingerprint(tmp_path)
    edited = tmp_path / "edited"
    (edited / "room").mkdir(parents=True)
    (edited / "room" / "a.py").write_text("x = 2\n")
    assert source_fingerprint(edited) != first
    moved = tmp_path / "moved"
    (moved / "hall").mkdir(parents=True)
    (moved / "hall" / "a.py").write_text("x = 1\n")
    assert source_fingerprint(moved) != first


def test_the_fingerprint_follows_names_and_contents(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    first = source_fingerprint(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.py").write_text("x = 2\n")
    assert source_fingerprint(other) != first
    renamed = tmp_path / "renamed"
    renamed.mkdir()
    (renamed / "b.py").write_text("x = 1\n")
    assert source_fingerprint(renamed) != first
    same = tmp_path / "same"
    same.mkdir()
    (same / "a.py").write_text("x = 1\n")
    assert source_fingerprint(same) == first


@pytest.mark.slow
def test_new_sources_with_a_renamed_argument_type_compile_instead_of_failing(tmp_path):
    pkg = tmp_path / "kernels_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    cache = tmp_path / "cache"
    (pkg / "k.py").write_text(textwrap.dedent(KERNELS_V1))
    first = _run(pkg, cache)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "6.0"
    # the same file, edited: the old argument type is gone
    (pkg / "k.py").write_text(textwrap.dedent(KERNELS_V2))
    second = _run(pkg, cache)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "6.0"
    assert len(list(cache.glob("numba/kernels_pkg-*"))) == 2
