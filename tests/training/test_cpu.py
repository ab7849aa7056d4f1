"""The warning before training in bfloat16 on a CPU that emulates it."""

from training.cpu import bfloat16_speed_warning

ZEN2_CPUINFO = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n"
ZEN5_CPUINFO = "processor\t: 0\nflags\t\t: fpu sse2 avx2 fma avx512f avx512_bf16\n"
ARM_CPUINFO = "processor\t: 0\nFeatures\t: fp asimd sve bf16\n"


def test_bfloat16_speed_warning_only_where_bfloat16_is_emulated():
    warning = bfloat16_speed_warning("mixed_bfloat16", ZEN2_CPUINFO, has_accelerator=False)
    assert "no native bfloat16" in warning
    assert "--config.train.precision=float32" in warning
    for cpuinfo in (ZEN5_CPUINFO, ARM_CPUINFO):
        assert bfloat16_speed_warning("mixed_bfloat16", cpuinfo, False) is None
    assert bfloat16_speed_warning("float32", ZEN2_CPUINFO, False) is None
    assert bfloat16_speed_warning("mixed_bfloat16", ZEN2_CPUINFO, True) is None
    assert bfloat16_speed_warning("mixed_bfloat16", None, False) is None
