"""Generate a synthetic project (Python + CUDA/C++, with and without hazards) for benchmarks and tests.

    python benchmarks/synthetic.py OUT [--scale N] [--seed S]

What it writes (deterministic for a given scale and seed):
- `examples/<code>/...`: every rule's own VALID and INVALID examples, one file each (so every rule,
  including those added later, fires somewhere and is also seen on code it must not report);
- `pkg/`: a package with a project-wide ROCm flag (`pkg/env.py`) imported by model modules, some of
  whose hazards are gated by it (cross-module gating) and some not;
- `pkg/filler_*.py`, `csrc/filler_*.cu`: larger files without any trigger (what most of a real tree is);
- `csrc/kernels_*.cu`: kernels mixing filler with hazards from the CUDA rules' examples;
- `setup.py`, `pyproject.toml`-free: the default configuration applies.
`--scale` multiplies the number of model, filler and kernel files (scale 1 is about 150 files).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

_PY_FILLER_FUNC = '''

def transform_{n}(values, factor={f}):
    """Scale and shift a list of numbers ({n})."""
    result = []
    for index, value in enumerate(values):
        if index % {m} == 0:
            result.append(value * factor + {n})
        else:
            result.append(value - factor)
    return result


class Block{n}:
    def __init__(self, width={f}):
        self.width = width
        self.cache = {{}}

    def forward(self, x):
        key = (len(x), self.width)
        if key not in self.cache:
            self.cache[key] = transform_{n}(x, self.width)
        return self.cache[key]
'''

_CU_FILLER_KERNEL = """
__global__ void saxpy_{n}(int n, float a, const float* __restrict__ x, float* __restrict__ y) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {{
    y[i] = a * x[i] + y[i] + {f}.0f;
  }}
}}

template <typename T>
__device__ T clamp_{n}(T v, T lo, T hi) {{
  return v < lo ? lo : (v > hi ? hi : v);
}}
"""

_ENV = """import torch

IS_ROCM = torch.version.hip is not None


def on_rocm():
    return IS_ROCM
"""

_MODEL_GATED = """import torch
from pkg.env import IS_ROCM


def build(model):
    if not IS_ROCM:
        return torch.compile(model, mode="reduce-overhead")
    return torch.compile(model)
"""

_MODEL_UNGATED = """import torch


def build(model):
    torch.backends.cuda.matmul.allow_tf32 = True
    return torch.compile(model, mode="reduce-overhead")
"""

_MODEL_NOQA = """import torch


def build(model):
    return torch.compile(model, mode="reduce-overhead")  # noqa: ROC101
"""

_SETUP = """from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="synthetic",
    ext_modules=[
        CUDAExtension(
            "synthetic_ext",
            ["csrc/filler_0.cu"],
            extra_compile_args={"nvcc": ["-O3", "--use_fast_math", "-gencode=arch=compute_80,code=sm_80"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
"""


def _example_name(rule_language: str, path: str | None) -> str:
    if path:
        return Path(path).name
    return "example.cu" if rule_language == "cuda" else "example.py"


def write_examples(out: Path) -> int:
    """Every rule's VALID/INVALID examples as files; returns how many were written."""
    from rocmlint.registry import all_rules

    count = 0
    for rule in all_rules():
        for kind, examples in (("valid", rule.valid), ("invalid", rule.invalid)):
            for index, example in enumerate(examples):
                name = _example_name(rule.language, example.path)
                if Path(name).suffix not in {".py", ".pyi", ".cu", ".cuh", ".cpp", ".cc", ".h", ".hpp", ".hip"}:
                    continue
                target = out / "examples" / rule.code.lower() / f"{kind}{index}" / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(example.code, encoding="utf-8")
                count += 1
    return count


def _python_filler(rng: random.Random, start: int, functions: int) -> str:
    parts = ['"""Generated filler: ordinary code without any rocmlint trigger."""\n']
    for n in range(start, start + functions):
        parts.append(_PY_FILLER_FUNC.format(n=n, f=rng.randint(2, 9), m=rng.randint(2, 5)))
    return "".join(parts)


def _cuda_filler(rng: random.Random, start: int, kernels: int) -> str:
    parts = ["// Generated filler: ordinary kernels without any rocmlint trigger.\n#include <cstdint>\n"]
    for n in range(start, start + kernels):
        parts.append(_CU_FILLER_KERNEL.format(n=n, f=rng.randint(1, 9)))
    return "".join(parts)


def _cuda_hazards() -> list[str]:
    from rocmlint.registry import all_rules

    return [
        example.code for rule in all_rules() if rule.language == "cuda" for example in rule.invalid if not example.path
    ]


def generate(out: Path, scale: int = 1, seed: int = 0) -> int:
    """Write the corpus below `out`; returns the number of files written."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    count = write_examples(out)
    pkg = out / "pkg"
    (pkg / "models").mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "models" / "__init__.py").write_text("")
    (pkg / "env.py").write_text(_ENV)
    (out / "setup.py").write_text(_SETUP)
    count += 4
    models = (_MODEL_GATED, _MODEL_UNGATED, _MODEL_NOQA)
    for i in range(12 * scale):
        (pkg / "models" / f"model_{i}.py").write_text(models[i % len(models)] + _python_filler(rng, i * 10, 3))
        count += 1
    for i in range(30 * scale):
        (pkg / f"filler_{i}.py").write_text(_python_filler(rng, i * 100, 20))
        count += 1
    csrc = out / "csrc"
    csrc.mkdir(exist_ok=True)
    hazards = _cuda_hazards()
    for i in range(20 * scale):
        (csrc / f"filler_{i}.cu").write_text(_cuda_filler(rng, i * 100, 20))
        count += 1
    for i in range(10 * scale):
        chosen = rng.sample(hazards, min(3, len(hazards))) if hazards else []
        body = _cuda_filler(rng, 5000 + i * 10, 4) + "\n" + "\n".join(chosen)
        (csrc / f"kernels_{i}.cu").write_text(body)
        count += 1
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    written = generate(args.out, args.scale, args.seed)
    print(f"wrote {written} files below {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
