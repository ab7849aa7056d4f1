"""Whether this CPU runs the configured precision natively: a warning before a slow run."""

from __future__ import annotations

from common.cpu import NATIVE_BFLOAT16_CPU_FLAGS, emulates_bfloat16


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
    if precision != "mixed_bfloat16" or has_accelerator or not emulates_bfloat16(cpuinfo):
        return None
    return (
        "train.precision is mixed_bfloat16 but this CPU has no native bfloat16 "
        f"({'/'.join(sorted(NATIVE_BFLOAT16_CPU_FLAGS))} not among its flags): bfloat16 is "
        "emulated and trains slower than float32. Pass --config.train.precision=float32 "
        "(and see the config's docstring for the steps that fit your time budget)."
    )
