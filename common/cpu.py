"""What this CPU can do that decides a precision: native bfloat16 matrix products.

Training warns before a bfloat16 run on a CPU that emulates it (``training.cpu``), and
inference before bfloat16 decoding (``inference.loading``): such CPUs (AMD Zen 2 and 3, Intel
before Cooper Lake) compute bfloat16 slower than float32.
"""

from __future__ import annotations

# CPU feature flags (Linux /proc/cpuinfo) that mean bfloat16 matmuls run natively.
NATIVE_BFLOAT16_CPU_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})


def read_cpuinfo() -> str | None:
    """The text of ``/proc/cpuinfo``, or None where there is none (not Linux)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return None


def emulates_bfloat16(cpuinfo: str | None) -> bool:
    """Whether the CPU described by ``cpuinfo`` (``/proc/cpuinfo``'s text) lacks native
    bfloat16; False when unknown (None: not Linux).

    Example:
        >>> emulates_bfloat16("flags : avx2 fma"), emulates_bfloat16("flags : avx512_bf16")
        (True, False)
    """
    if cpuinfo is None:
        return False
    flags = set()
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):  # x86, Arm
            flags.update(value.split())
    return not flags & NATIVE_BFLOAT16_CPU_FLAGS
