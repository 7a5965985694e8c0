"""``tocha.backends.cpu``: what the CPU offers, as ``torch.backends.cpu``."""

from __future__ import annotations

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """The widest vector instruction set the CPU has that PyTorch names: ``"AVX512"``,
    ``"AVX2"`` or ``"DEFAULT"`` on x86, ``"SVE256"``... or ``"DEFAULT"`` elsewhere (read from
    the kernel's CPU flags where it publishes them)."""
    flags = _cpu_flags()
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "AVX512"
    if "avx2" in flags:
        return "AVX2"
    return "DEFAULT"


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith(("flags", "Features")):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()
