"""Whether this CPU runs the configured precision natively: a warning before a slow run."""

from __future__ import annotations

# CPU feature flags (Linux /proc/cpuinfo) that mean bfloat16 matmuls run natively.
_NATIVE_BFLOAT16_CPU_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})


def read_cpuinfo() -> str | None:
    """The text of ``/proc/cpuinfo``, or None where there is none (not Linux)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return None


def bfloat16_speed_warning(
    precision: str, cpuinfo: str | None, has_accelerator: bool
) -> str | None:
    """A warning when ``mixed_bfloat16`` would train on a CPU that emulates bfloat16, else None.

    Such CPUs (e.g. AMD Zen 2, Intel before Cooper Lake) train slower in bfloat16 than in float32
    (docs/PERFORMANCE.md), so a config tuned on a CPU with native bfloat16 would overrun its time
    budget. ``cpuinfo`` is the text of ``/proc/cpuinfo``; None (not Linux) gives no warning,
    since the CPU is unknown.

    Example:
        >>> bfloat16_speed_warning("mixed_bfloat16", "flags : avx2 fma", False)[:24]
        'train.precision is mixed'
    """
    if precision != "mixed_bfloat16" or has_accelerator or cpuinfo is None:
        return None
    flags = set()
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):  # x86, Arm
            flags.update(value.split())
    if flags & _NATIVE_BFLOAT16_CPU_FLAGS:
        return None
    return (
        "train.precision is mixed_bfloat16 but this CPU has no native bfloat16 "
        f"({'/'.join(sorted(_NATIVE_BFLOAT16_CPU_FLAGS))} not among its flags): bfloat16 is "
        "emulated and trains slower than float32. Pass --config.train.precision=float32 "
        "(and see the config's docstring for the steps that fit your time budget)."
    )
