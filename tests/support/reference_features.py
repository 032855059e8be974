"""The numpy analysis planes of ``sichuan_agents.training.features`` as they were before the
compiled
kernels (commit 91128dd), kept as an independent reference for the differential tests.
Batched over rows through ``hands.batch_shanten`` / ``batch_wait_mask``; not used by the
package.
"""

from __future__ import annotations

import numpy as np

from sichuan_env.core import hands as hx
from sichuan_env.core.state import PHASE_NAMES
from sichuan_env.seats.observation import PLANES

N_FEATURE_PLANES = 4
_HAND0 = PLANES["hand"][0]
_PUNG0 = PLANES["pung"][0]
_CKONG0 = PLANES["concealed_kong"][0]
_EKONG0 = PLANES["exposed_kong"][0]
_VOID = PLANES["my_void"][0]
_VISIBLE = PLANES["visible"][0]
_EYE = np.eye(27, dtype=np.int8)
assert PHASE_NAMES[0] == "void"


def _own_tiles(obs: np.ndarray):
    """(N, 27) standing counts, meld kinds (0/1 pung/2 kong) and void (-1 none)."""
    counts = obs[:, _HAND0 : _HAND0 + 4].sum(1).round().astype(np.int8)
    kong = (obs[:, _CKONG0] + obs[:, _EKONG0]) > 0.5  # relative seat 0 rows of each group
    meld = np.where(kong, 2, np.where(obs[:, _PUNG0] > 0.5, 1, 0)).astype(np.int8)
    void_row = obs[:, _VOID]
    has_void = void_row.max(1) > 0.5
    void = np.where(has_void, void_row.argmax(1) // 9, -1).astype(np.int8)
    return counts, meld, void


def analysis_planes(obs: np.ndarray) -> np.ndarray:
    """(N, C, 27) observations -> (N, 4, 27) float32 analysis planes (table above)."""
    obs = np.asarray(obs, dtype=np.float32)
    n = obs.shape[0]
    out = np.zeros((n, N_FEATURE_PLANES, 27), np.float32)
    if n == 0:
        return out
    counts, meld, void = _own_tiles(obs)
    n_melds = (meld > 0).sum(1)
    total = counts.sum(1).astype(np.int64) + 3 * n_melds
    unseen = np.clip(4.0 - obs[:, _VISIBLE] * 4.0, 0.0, 4.0)
    # a hand of 14 (after a draw) ranks its discards; a hand of 13 looks at draws and waits
    full = np.flatnonzero(total == 14)
    if full.size:
        h = counts[full]
        cand = np.repeat(h[:, None, :], 27, axis=1) - _EYE[None]  # (m, 27, 27)
        held = h > 0
        cand = np.where(held[:, :, None], cand, h[:, None, :])
        sh = hx.batch_shanten(cand.reshape(-1, 27), np.repeat(meld[full], 27, axis=0),
                              np.repeat(void[full], 27)).reshape(-1, 27)
        out[full, 0] = np.where(held, (sh + 1) / 8.0, 0.0)
        out[full, 1] = ((sh.min(1) + 1) / 8.0)[:, None]
    short = np.flatnonzero(total == 13)
    if short.size:
        h = counts[short]
        m, v = meld[short], void[short]
        now = hx.batch_shanten(h, m, v)
        out[short, 1] = ((now + 1) / 8.0)[:, None]
        out[short, 2] = hx.batch_wait_mask(h, m, v)
        cand = np.minimum(h[:, None, :] + _EYE[None], 4)  # (m, 27, 27): draw one of each
        sh = hx.batch_shanten(cand.reshape(-1, 27), np.repeat(m, 27, axis=0),
                              np.repeat(v, 27)).reshape(-1, 27)
        better = (sh < now[:, None]) & (h < 4)
        out[short, 3] = better * unseen[short] / 4.0
    return out
