"""ROC301 nvcc-only-flags."""

from __future__ import annotations

import ast
import re

from rocmlint.data import load
from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.python.commands import rewritten_arguments
from rocmlint.python.extensions import device_flags, flag_strings
from rocmlint.python.fixes import hip_extension_guard, keep_on_nvidia, wrap_in_if
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import literal_text
from rocmlint.python.values import argument_of
from rocmlint.rule import Invalid, Rule, Valid

# Option -> what to use on ROCm instead, `-U__CUDA_NO_HALF*` undefs -> their HIP spelling, and the
# options whose value may be the next list element (rocmlint/data/nvcc_flags.toml).
_TABLE = load("nvcc_flags")
_NVCC_ONLY_FLAGS: dict[str, str] = {
    option: group["advice"] for group in _TABLE["nvcc_only"] for option in group["options"]
}
_CUDA_NO_HALF_UNDEFS: dict[str, str] = _TABLE["half_undefs"]
_TAKES_VALUE = frozenset(_TABLE["takes_value"])
# Every reportable literal contains one of the flag spellings with a single leading dash.
_TRIGGERS = tuple(sorted({("-" + flag.lstrip("-")).encode() for flag in _NVCC_ONLY_FLAGS} | {b"__CUDA_NO_HALF"}))
# ... as a whole token of the literal's text (what `_message_for` splits on whitespace): not after a letter, `_` or `-`
# unless that is an escape (`"-O3\t-arch"`; `\x20`, `\u00a0` end in a digit), and not followed by a word character or
# `-` (never `--trust-remote-code` or a URL's `-archive`). The first dash leads, so the regex skips to dashes.
_FLAG_NAMES = sorted({re.escape(flag.lstrip("-")) for flag in _NVCC_ONLY_FLAGS}, key=len, reverse=True)
_TRIGGER_PATTERN = r"-(?:(?<![A-Za-z_-]-)|(?<=\\[ntrfv]-))-?(?:" + "|".join(_FLAG_NAMES) + r")(?![\w-])|__CUDA_NO_HALF"


class NvccOnlyFlags(Rule):
    """
    ## What it does
    Flags nvcc-only options (`-gencode`, `-arch=sm_*`, `-code=`, `--use_fast_math`, `-Xptxas`,
    `--ptxas-options`, `-Xcompiler`, `--expt-relaxed-constexpr`, `--expt-extended-lambda`,
    `-maxrregcount`, `-lineinfo`, `--threads`, `-rdc=true`, ...) in flag lists that reach the device
    compiler without a ROCm gate: the `"nvcc"` entry of `extra_compile_args` (dict literal or
    `dict(nvcc=...)`), `extra_cuda_cflags=` of `torch.utils.cpp_extension.load`/`load_inline`, a plain
    list given to `CUDAExtension`, and variables or functions named like `nvcc_flags`, `NVCC_FLAGS`,
    `nvcc_args` or `cuda_flags`; `-U__CUDA_NO_HALF_OPERATORS__`-style undefs only where BuildExtension
    does not rewrite them (`extra_cuda_cflags`, a plain list). Lists are followed through names
    assigned in the same scope, `+`, `+=`, `.append`/`.extend`/`.insert`, conditional expressions and
    local helper calls; each offending string literal is reported once. A list that is only read
    in NVIDIA-only code (`nvcc_args if not IS_ROCM else hipcc_args`) is not reported, nor a module-level one
    nothing reads, there or in the project's modules importing it (a copy kept from another project).

    ## Why is this bad on ROCm?
    On ROCm, `torch.utils.cpp_extension` hands the `"nvcc"` flags and `extra_cuda_cflags` to hipcc
    (clang) as they are: it only prepends its HIP flags and `--offload-arch`, and BuildExtension's
    `_hipify_compile_flags` only renames `CUDA` to `HIP` inside `-U__CUDA_NO_*`-style flags of a
    dict's `"nvcc"` list. clang does not know nvcc's options, so `-Xcompiler -fPIC`,
    `--expt-relaxed-constexpr` or `-gencode` fail the build (kvcache-ai/ktransformers#948 shows a
    clang++ command line broken by `-Xcompiler`), or they are silently meaningless: HIP does not
    support `--maxrregcount` (HIP porting guide, "maxregcount"), hipcc turns `-use_fast_math` into a
    `-DHIP_FAST_MATH` define, and a `-U__CUDA_NO_HALF_OPERATORS__` passed through
    `load(extra_cuda_cflags=...)` cannot undo the `__HIP_NO_HALF_OPERATORS__` PyTorch defines for ROCm.
    Examples: NVIDIA/apex `setup.py` (`--use_fast_math`, `-maxrregcount=50`, `--expt-*`);
    ROCm/flash-attention `setup.py` and DeepSpeed `op_builder/builder.py` keep separate CUDA and ROCm
    flag lists.

    ## In code written for ROCm
    Still flagged in code only ROCm runs and in projects written for AMD: a flag hipcc rejects or ignores is wrong
    there whoever wrote it. A list only nvcc receives behind a vendor test is not flagged.

    ## Example
    ```python
    from torch.utils.cpp_extension import CUDAExtension

    ext = CUDAExtension(
        "fused_ops",
        ["fused_ops.cpp", "fused_ops_kernel.cu"],
        extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math", "-lineinfo"]},
    )
    ```

    ## Fix
    ```python
    from torch.utils.cpp_extension import CUDAExtension
    from torch.utils.cpp_extension import IS_HIP_EXTENSION

    ext = CUDAExtension(
        "fused_ops",
        ["fused_ops.cpp", "fused_ops_kernel.cu"],
        extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math", "-lineinfo"] if not IS_HIP_EXTENSION else ["-O3"]},
    )
    ```
    nvcc-only flags are dropped from the ROCm list (with their separate value: `"-gencode", "arch=..."`);
    `flags.append("--use_fast_math")` is wrapped in `if not IS_HIP_EXTENSION:`. No fix for a string
    holding several flags, or a script that does not import torch (the import would add a build
    dependency).

    ## Fix safety
    Safe: the fix keeps the original list verbatim for `not IS_HIP_EXTENSION` and gives ROCm a copy
    without the nvcc-only entries (`-U__CUDA_NO_HALF*` becomes `-U__HIP_NO_HALF*`), so NVIDIA builds
    with exactly the same flags. The ROCm list itself deserves a review (e.g. the `--offload-arch`
    targets).
    """

    code = "ROC301"
    name = "nvcc-only-flags"
    severity = Severity.ERROR
    applies_to_tests = True  # tests that build extensions pass the flags to hipcc too
    fix_availability = FixAvailability.SAFE
    triggers = _TRIGGERS
    trigger_pattern = _TRIGGER_PATTERN

    def __init__(self) -> None:
        self._reported: set[ast.AST] = set()  # the literals reported in this file (one instance per file)

    def _check(self, node: ast.AST, ctx: PythonContext) -> None:
        """Report the nvcc-only literals of the device-compiler flag lists `node` defines."""
        for flags in device_flags(ctx, node):
            for literal, path in flag_strings(ctx, flags):
                self._report(literal, path, ctx, flags.hipified)

    # The nodes that define flag lists (`device_flags`).
    visit_Dict = visit_Call = visit_Assign = visit_AugAssign = visit_AnnAssign = _check
    visit_FunctionDef = visit_AsyncFunctionDef = _check

    # --- reporting ----------------------------------------------------------------------------------
    def _report(self, literal: ast.expr, path: tuple[ast.AST, ...], ctx: PythonContext, hipified: bool) -> None:
        """Report a literal once, through the first of its paths that reaches ROCm."""
        text = literal_text(ctx, literal) if literal not in self._reported else None
        message = _message_for(text, ctx, hipified) if text is not None else None
        if message is not None and ctx.report(literal, message, gate_on=path, fix=_fix(literal, ctx, hipified)):
            self._reported.add(literal)


# --- the fix -------------------------------------------------------------------------------------------
_FIX = "Split the flags on IS_HIP_EXTENSION: the nvcc list as it is, a ROCm list without the nvcc-only flags"


def _fix(literal: ast.expr, ctx: PythonContext, hipified: bool) -> Fix | None:
    """`[<nvcc flags>] if not IS_HIP_EXTENSION else [<hipcc flags>]` around the list literal holding the
    flag (the original list untouched); `if not IS_HIP_EXTENSION:` around a `flags.append("-flag")`."""
    container = ctx.parent(literal)
    if isinstance(container, ast.List):
        rocm_list = _rocm_list(container, ctx, hipified)
        guard = hip_extension_guard(ctx, container) if rocm_list is not None else None
        if rocm_list is None or guard is None:
            return None
        return ctx.fix(_FIX, keep_on_nvidia(ctx, container, rocm_list, guard.name), *guard.edits)
    passed = argument_of(ctx.semantic, literal)
    call = passed[0] if passed is not None else None
    text = literal_text(ctx, literal) or ""
    if call is None or not isinstance(call.func, ast.Attribute) or call.func.attr != "append":
        return None
    if len(text.split()) != 1 or text in _TAKES_VALUE or text in _CUDA_NO_HALF_UNDEFS:
        return None  # its value (or the HIP spelling) belongs in another statement
    guard = hip_extension_guard(ctx, call)
    edit = wrap_in_if(ctx, call, f"not {guard.name}") if guard is not None else None
    return ctx.fix(_FIX, edit, *guard.edits) if guard is not None and edit is not None else None


def _rocm_list(flags: ast.List, ctx: PythonContext, hipified: bool) -> str | None:
    """The list's text for hipcc: nvcc-only flags (and their separate values) dropped, CUDA half undefs
    swapped for the HIP spelling; None when a string holds several flags (it cannot be split safely)."""

    def for_hipcc(text: str) -> str | None:
        return None if _message_for(text, ctx, hipified) is None else _CUDA_NO_HALF_UNDEFS.get(text, "")

    return rewritten_arguments(ctx, flags, for_hipcc, _TAKES_VALUE)


# --- helpers -------------------------------------------------------------------------------------------
def _message_for(text: str, ctx: PythonContext, hipified: bool) -> str | None:
    """The message for the first nvcc-only option in a flag string (None: it holds none)."""
    for token in text.split():
        if not token.startswith("-"):
            continue
        hip_undef = _CUDA_NO_HALF_UNDEFS.get(token)
        if hip_undef is not None:
            if hipified or ctx.contains(hip_undef.encode()):
                continue  # BuildExtension rewrites it, or the file already undefines the HIP spelling
            return (
                f'"{token}" reaches hipcc unchanged and has no effect on ROCm, where PyTorch defines '
                f"__HIP_NO_HALF_OPERATORS__/__HIP_NO_HALF_CONVERSIONS__; add {hip_undef} to the flags used "
                "when IS_HIP_EXTENSION"
            )
        advice = _NVCC_ONLY_FLAGS.get(token.split("=", 1)[0])
        if advice is not None:
            return (
                f'"{token}" is an nvcc-only flag that hipcc/clang rejects or ignores on ROCm; keep it out of '
                f"the flags used when IS_HIP_EXTENSION ({advice})"
            )
    return None


NvccOnlyFlags.valid = (
    # Gated on IS_HIP_EXTENSION: the CUDA list only runs on NVIDIA; an early return on ROCm before `.extend`.
    Valid(
        """
        from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION
        if IS_HIP_EXTENSION:
            nvcc_flags = ["-O3", "--offload-arch=gfx942", "-U__HIP_NO_HALF_OPERATORS__"]
        else:
            nvcc_flags = ["-O3", "--use_fast_math", "-lineinfo", "--expt-relaxed-constexpr"]
        ext = CUDAExtension("fused_adam", ["fused_adam.cu"], extra_compile_args={"nvcc": nvcc_flags})
        import torch
        IS_ROCM = torch.version.hip is not None
        class FusedAdamBuilder:
            def nvcc_args(self):
                nvcc_flags = ['-O3']
                if IS_ROCM:
                    return nvcc_flags + ['-fgpu-flush-denormals-to-zero']
                nvcc_flags.extend(['-lineinfo', '--use_fast_math'])
                return nvcc_flags
        """,
    ),
    # apex style: the nvcc list is assigned unconditionally but only ever chosen when not on ROCm.
    Valid(
        """
        import torch
        from torch.utils.cpp_extension import CUDAExtension
        IS_ROCM_PYTORCH = torch.version.hip is not None
        nvcc_args_layer_norm = ['-maxrregcount=50', '-O3', '--use_fast_math']
        hipcc_args_layer_norm = ['-O3']
        ext = CUDAExtension(
            name='fused_layer_norm_cuda',
            sources=['csrc/layer_norm_cuda.cpp', 'csrc/layer_norm_cuda_kernel.cu'],
            extra_compile_args={
                'cxx': ['-O3'],
                'nvcc': nvcc_args_layer_norm if not IS_ROCM_PYTORCH else hipcc_args_layer_norm,
            },
        )
        """,
    ),
    # flash-attention style BUILD_TARGET switch, and a ROCm override of the default list; TransformerEngine style:
    # a build helper true when the project's ROCm switch (named like `USE_ROCM`) is set, the nvcc flags in its else.
    Valid(
        """
        import os, shutil
        from torch.utils.cpp_extension import load
        BUILD_TARGET = os.environ.get("BUILD_TARGET", "auto")
        cuda_flags = ["-O3", "-Xptxas=-v", "-gencode", "arch=compute_90a,code=sm_90a"]
        if BUILD_TARGET == "rocm":
            cuda_flags = ["-O3", "--offload-arch=gfx942"]
        ops = load(name="paged_attn", sources=["paged_attn.cu"], extra_cuda_cflags=cuda_flags)
        def rocm_build():
            if bool(int(os.getenv("PROJ_USE_ROCM", "0"))):
                return True
            return shutil.which("nvcc") is None and shutil.which("hipcc") is not None
        nvcc_flags = ["-O3"] if rocm_build() else ["-O3", "--expt-relaxed-constexpr"]
        te = load(name="te", sources=["te.cu"], extra_cuda_cflags=nvcc_flags)
        """,
    ),
    # Look-alikes: hipcc-compatible flags, a cxx-only list, a log message, a docstring and a comment.
    Valid(
        """
        \"\"\"Build notes: nvcc needs --expt-relaxed-constexpr, hipcc does not.\"\"\"
        from setuptools import Extension
        from torch.utils.cpp_extension import CUDAExtension
        print("pass --use_fast_math to nvcc for the fast path")
        # extra_compile_args={"nvcc": ["-lineinfo"]}
        cpu_ext = Extension("cpu_ops", ["cpu_ops.cpp"], extra_compile_args=["-O3", "-lineinfo"])
        gpu_ext = CUDAExtension("gpu_ops", ["gpu_ops.cu"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "-std=c++17", "-DNDEBUG", "-fgpu-flush-denormals-to-zero"]})
        """,
    ),
    # DeepSpeed style `self.is_rocm_pytorch()` gate, and xformers style: the CUDA arm of an if/elif
    # chain whose next arm is the ROCm one (it reaches ROCm only through FORCE_CUDA).
    Valid(
        """
        import os, torch
        from torch.utils.cpp_extension import CUDA_HOME
        class CUDAOpBuilder:
            def nvcc_args(self):
                args = ["-O3"]
                if not self.is_rocm_pytorch():
                    args += ["-lineinfo", "--use_fast_math"]
                return args
        extra_compile_args = {"cxx": ["-O3"]}
        if (torch.version.cuda is not None and CUDA_HOME is not None) or os.getenv("FORCE_CUDA") == "1":
            nvcc_flags = ["--use_fast_math", "--extended-lambda", "--ptxas-options=-v"]
            extra_compile_args["nvcc"] = nvcc_flags
        elif torch.version.hip:
            extra_compile_args["nvcc"] = ["-O3", "-DCK_FMHA_FWD_FAST_EXP2=1"]
        """,
    ),
    # A conditional expression choosing the flag itself, `and` short-circuit; flags only a Windows build adds
    # (Instinct GPUs run Linux) or only a set NVIDIA toolchain variable does.
    Valid(
        """
        import os, torch
        from torch.utils.cpp_extension import load_inline
        fast = "-ffast-math" if torch.version.hip else "--use_fast_math"
        extra = torch.version.cuda is not None and ["-lineinfo"] or []
        if windows := os.name == "nt":
            extra += ["-Xcompiler=/Zc:preprocessor"]
        if host_cxx := os.environ.get("CUDAHOSTCXX"):
            extra += ["-ccbin", host_cxx]
        mod = load_inline("k", cpp_sources=[src], cuda_sources=[cu], extra_cuda_cflags=["-O3", fast] + extra)
        """,
    ),
)
NvccOnlyFlags.invalid = (
    Invalid(
        """
        from torch.utils.cpp_extension import CUDAExtension
        ext = CUDAExtension(
            "fused_ops",
            ["fused_ops.cpp", "fused_ops_kernel.cu"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math", "-lineinfo"]},
        )
        """,
        expect=("5:57-5:74", "5:76-5:87"),
        message='"--use_fast_math" is an nvcc-only flag',
        fixed="""
        from torch.utils.cpp_extension import CUDAExtension
        from torch.utils.cpp_extension import IS_HIP_EXTENSION
        ext = CUDAExtension(
            "fused_ops",
            ["fused_ops.cpp", "fused_ops_kernel.cu"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math", "-lineinfo"] if not IS_HIP_EXTENSION else ["-O3"]},
        )
        """,
    ),
    # flash-attention style: the list built up, then passed through a local helper; `ROCM_PATH` is no vendor switch.
    Invalid(
        """
        import os
        from torch.utils.cpp_extension import CUDAExtension
        def append_nvcc_threads(nvcc_extra_args):
            return nvcc_extra_args + ["--threads", "4"]
        cc_flag = []
        cc_flag.append("-gencode")
        cc_flag.append("arch=compute_80,code=sm_80")
        nvcc_flags = ["-O3", "-std=c++17"]
        ext = CUDAExtension(
            name="flash_attn_2_cuda",
            sources=["csrc/flash_api.cpp"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": append_nvcc_threads(nvcc_flags + cc_flag)},
        )
        fast = ["-O3"] if os.getenv("ROCM_PATH") else ["--use_fast_math"]
        te = CUDAExtension("te", ["te.cu"], extra_compile_args={"nvcc": fast})
        """,
        expect=("4:31-4:42", "6:16-6:26", "14:48-14:65"),
        message='"--threads"',
    ),
    Invalid(
        """
        import torch.utils.cpp_extension as cpp_ext
        module = cpp_ext.load(
            name="quant_kernels",
            sources=["quant.cpp", "quant_kernels.cu"],
            extra_cuda_cflags=["-O3", "-Xcompiler", "-fPIC", "--expt-relaxed-constexpr"],
        )
        """,
        expect=("5:31-5:43", "5:54-5:80"),
        message="-Xcompiler",
    ),
    # A module-level NVCC_FLAGS list, extended and exported for the op builders.
    Invalid(
        """
        NVCC_FLAGS = [
            "-O3",
            "-U__CUDA_NO_HALF_OPERATORS__",
            "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
        ]
        NVCC_FLAGS += ["--expt-extended-lambda", "-Xptxas=-v"]
        """,
        expect=("6:16-6:40", "6:42-6:54"),
        message='"--expt-extended-lambda"',
    ),
    # The JIT path hands extra_cuda_cflags to hipcc as they are: the half undef is not rewritten.
    Invalid(
        """
        from torch.utils.cpp_extension import load
        def build_rope_kernels(verbose=False):
            cflags = ["-O3", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__"]
            return load("rope", ["rope.cu"], extra_cuda_cflags=cflags, verbose=verbose)
        """,
        expect=("3:22-3:52", "3:54-3:86"),
        message="-U__HIP_NO_HALF_OPERATORS__",
        fixed="""
        from torch.utils.cpp_extension import load
        from torch.utils.cpp_extension import IS_HIP_EXTENSION
        def build_rope_kernels(verbose=False):
            cflags = ["-O3", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__"] if not IS_HIP_EXTENSION else ["-O3", "-U__HIP_NO_HALF_OPERATORS__", "-U__HIP_NO_HALF_CONVERSIONS__"]
            return load("rope", ["rope.cu"], extra_cuda_cflags=cflags, verbose=verbose)
        """,
    ),
    # `torch.cuda.is_available()` is true on ROCm: not a gate.
    Invalid(
        """
        import torch
        from torch.utils.cpp_extension import CUDAExtension
        compile_args = dict(cxx=['-O3'], nvcc=['-O3'])
        if torch.cuda.is_available():
            compile_args['nvcc'].append('-maxrregcount=64')
        ext = CUDAExtension('rms_norm', ['rms_norm.cu'], extra_compile_args=compile_args)
        """,
        expect=("5:33-5:51",),
    ),
)
