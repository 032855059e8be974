"""The machine a training run or a benchmark uses: its cores, the learner's device, and a
one-line description (CPU model, cores, GPU, library versions) for benchmark reports.

Imports torch only when asked about a GPU, so command-line checks stay fast.
"""

from __future__ import annotations

import os
import platform
from importlib import metadata

DEVICES = ("auto", "cpu", "cuda")


def machine_cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; ``cpu`` and ``cuda`` as
    given. ValueError (one line saying what would work) for ``cuda`` without a GPU or an
    unknown name."""
    if device not in DEVICES:
        raise ValueError(f"--device must be auto, cpu or cuda, got {device!r}")
    if device == "cpu":
        return "cpu"
    import torch

    has_gpu = torch.cuda.is_available()
    if device == "cuda" and not has_gpu:
        raise ValueError(f"--device cuda: torch {torch.__version__} sees no GPU on this "
                         "machine; use --device cpu or --device auto")
    return "cuda" if has_gpu else "cpu"


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; else what ``platform`` says)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:  # pragma: no cover - not on Linux
        pass
    return platform.processor() or platform.machine()


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def machine_info() -> dict[str, str | int]:
    """CPU model, cores, GPU (name or ``none``), Python and library versions."""
    import torch

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    info: dict[str, str | int] = {"cpu": cpu_model(), "cores": machine_cores(), "gpu": gpu,
                                  "python": platform.python_version()}
    for dist in ("torch", "numpy", "numba", "ray", "stable-baselines3", "sb3-contrib"):
        info[dist] = _version(dist)
    return info


def describe_machine() -> str:
    """:func:`machine_info` as one line."""
    info = machine_info()
    libs = ", ".join(f"{k} {v}" for k, v in info.items()
                     if k not in ("cpu", "cores", "gpu", "python"))
    return (f"{info['cpu']}, {info['cores']} cores, GPU {info['gpu']}; Python "
            f"{info['python']}, {libs}")
