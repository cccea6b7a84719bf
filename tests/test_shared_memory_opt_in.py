"""An `#if` arm that only opts kernels in to more dynamic shared memory is needless on ROCm
(rocmlint/cuda/hip_gaps.py `shared_memory_opt_in`, conditions.py `arm_outcomes_agree`)."""

from __future__ import annotations

from pathlib import Path

from rocmlint.config import Settings
from rocmlint.engine import Engine

_OPT_IN = "cudaFuncSetAttribute(kernel<T, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, shmem);"
_CAP = "cudaDeviceGetAttribute(&cap, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);"


def _roc207(tmp_path: Path, arm: str, fallback: str | None = None) -> list[int]:
    text = "void launch(size_t shmem, int dev) {\n  int cap = 0;\n#if CUDA_VERSION >= 9000\n" + arm + "\n"
    text += (f"#else\n{fallback}\n" if fallback is not None else "") + "#endif\n  go(cap);\n}\n"
    path = tmp_path / f"k{len(list(tmp_path.iterdir()))}.cu"  # a file of its own per case
    path.write_text(text, encoding="utf-8")
    report = Engine().check_path(path, Settings(root=tmp_path, select=("ROC207",)))
    return [d.location.line for d in report.diagnostics]


def test_an_arm_only_opting_in_is_needless_on_rocm(tmp_path):
    assert _roc207(tmp_path, f"  {_OPT_IN}") == []
    assert _roc207(tmp_path, f"  if (shmem > 49152) {{\n    {_OPT_IN}\n  }}") == []
    # Reading the opt-in cap: ROCm's arm reads the per-block maximum, the same LDS on an AMD GPU.
    fallback = "  cudaDeviceGetAttribute(&cap, cudaDevAttrMaxSharedMemoryPerBlock, dev);"
    assert _roc207(tmp_path, f"  {_CAP}\n  if (shmem <= (size_t)cap) {{ {_OPT_IN} }}", fallback) == []


def test_an_arm_doing_more_than_opting_in_is_still_reported(tmp_path):
    # The cap is read with no arm of ROCm's setting it: ROCm's `cap` stays 0.
    assert _roc207(tmp_path, f"  {_CAP}\n  {_OPT_IN}") == [3]
    # ROCm's arm reads something else than the per-block maximum.
    assert _roc207(tmp_path, f"  {_CAP}\n  {_OPT_IN}", "  cap = 49152;") == [3]
    # The arm does something besides the opt-in.
    assert _roc207(tmp_path, f"  {_OPT_IN}\n  cap = 1;") == [3]
    # Another attribute: not the dynamic shared memory opt-in.
    assert _roc207(tmp_path, "  cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 50);") == [
        3
    ]
