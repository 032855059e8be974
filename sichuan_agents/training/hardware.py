"""The machine a training run or a benchmark uses: its cores, the learner's device, the
network's precision, and a one-line description (CPU model, cores, GPU, library versions)
for benchmark reports.

Imports torch only when asked about a GPU, so command-line checks stay fast.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Iterable
from importlib import metadata

DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("auto", "fp32", "bf16")
#: ``/proc/cpuinfo`` flags of CPUs that compute bfloat16 in hardware (AMX tiles or
#: AVX-512 BF16); elsewhere torch emulates bfloat16, slower than float32.
BF16_CPU_FLAGS = frozenset({"amx_bf16", "avx512_bf16"})


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


def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (the ``flags`` line of ``/proc/cpuinfo``; empty elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:  # pragma: no cover - not on Linux
        pass
    return frozenset()


def fast_bf16(device: str, flags: Iterable[str] | None = None,
              gpu_capability: tuple[int, int] | None = None) -> bool:
    """Whether ``device`` (``cpu`` or ``cuda``) computes bfloat16 in hardware: a CPU with
    one of :data:`BF16_CPU_FLAGS` (``flags``; default :func:`cpu_flags`), a GPU of compute
    capability 8.0 or later (``gpu_capability``; default torch's answer for GPU 0)."""
    if device == "cuda":
        if gpu_capability is None:
            import torch

            gpu_capability = torch.cuda.get_device_capability(0)
        return gpu_capability[0] >= 8
    return bool(BF16_CPU_FLAGS & frozenset(cpu_flags() if flags is None else flags))


def resolve_precision(precision: str, devices: Iterable[str], flags: Iterable[str] | None = None,
                      gpu_capability: tuple[int, int] | None = None) -> str:
    """``auto`` -> ``bf16`` when every device in ``devices`` (where the network computes:
    the learner's, and the CPU of RLlib's env runners) does bfloat16 in hardware
    (:func:`fast_bf16`), else ``fp32``; ``fp32`` and ``bf16`` as given. ValueError for an
    unknown name."""
    if precision not in PRECISIONS:
        raise ValueError(f"--precision must be auto, fp32 or bf16, got {precision!r}")
    if precision != "auto":
        return precision
    fast = all(fast_bf16(d, flags, gpu_capability) for d in set(devices))
    return "bf16" if fast else "fp32"


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
