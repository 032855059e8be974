#!/usr/bin/env bash
# Set up sichuan-env from this checkout: `bash scripts/install.sh [EXTRAS]` (default: train).
# The README's set-up lines and CI's `.ci/run` both run this script, so CI fails where the
# README's lines would.
#
# 1. torch 2.13.0: the CPU build from PyTorch's own index when that index answers; otherwise
#    PyPI (or the mirror set in PIP_INDEX_URL / pip.conf). The index is only ever added with
#    --extra-index-url, never used in place of the configured one.
# 2. The package in editable mode with EXTRAS (comma-separated: train, rllib, web, dev, viewer).
# 3. As root on Debian/Ubuntu, the OpenMP runtime that LightGBM (the boosted agent) loads.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-train}"
python="${PYTHON:-python}"
torch_index="https://download.pytorch.org/whl/cpu"

if [ "$(uname -s)" = Linux ] && "$python" - "$torch_index" <<'PY' 2>/dev/null; then
import sys, urllib.request
urllib.request.urlopen(sys.argv[1] + "/torch/", timeout=10).close()
PY
    echo "install: torch from PyTorch's CPU index ($torch_index), PyPI as fallback"
    "$python" -m pip install torch==2.13.0 --extra-index-url "$torch_index"
else
    echo "install: PyTorch's index not reachable (or not Linux): torch from the configured index"
    "$python" -m pip install torch==2.13.0
fi

"$python" -m pip install -e ".[$extras]"

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
        && ! ldconfig -p 2>/dev/null | grep -q "libgomp.so.1"; then
    (apt-get update -qq && apt-get install -y -qq libgomp1 >/dev/null) \
        || echo "install: warning: no libgomp1: LightGBM (the boosted agent) will not load" >&2
fi
