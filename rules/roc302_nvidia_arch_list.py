"""ROC302 nvidia-arch-list."""

from __future__ import annotations

import ast
import re

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import keeps_user_setting, subscript_key
from rocmlint.python.positions import CodeRange
from rocmlint.python.uses import is_string_value_use
from rocmlint.python.values import argument_of
from rocmlint.rule import Invalid, Rule, Valid

# Environment variables that select NVIDIA architectures only (CUDAARCHS is CMake's default for
# CMAKE_CUDA_ARCHITECTURES).
_ARCH_ENV_VARS = frozenset({"TORCH_CUDA_ARCH_LIST", "CUDAARCHS"})
# Any of these anywhere in the file means the build already has a ROCm arch path.
_ROCM_ARCH_TOKENS = (b"PYTORCH_ROCM_ARCH", b"GPU_TARGETS", b"HIP_ARCHITECTURES", b"offload-arch", b"gfx")
_CMAKE_CUDA_ARCHS = "-DCMAKE_CUDA_ARCHITECTURES"
# An nvcc arch spec: "arch=compute_80,code=sm_80", "-gencode=arch=compute_90a,code=sm_90a", "-arch=sm_90",
# "--gpu-architecture=compute_80", with `{}` for an f-string field. A bare "sm_100" (a CuTe DSL target,
# a dict key, a kernel variant name, "fmha_sm_80.cu") is not an arch selection for the build.
_SM_ARCH = re.compile(
    r"(?:^|[=,\s])(-{0,2}(?:arch|code|gpu-architecture|gpu-code)[=\s](?:sm|compute)_(?:\d{2,3}[a-z]?|\{\}))"
    r"(?=$|[,;\s])"
)
_ENV_WRITERS = frozenset({"setdefault", "putenv", "setenv"})
_SM_TRIGGERS = tuple(f"{prefix}_{digit}".encode() for prefix in ("sm", "compute") for digit in (*"123456789", "{"))


class NvidiaArchList(Rule):
    """
    ## What it does
    Flags NVIDIA-only GPU architecture selection in a Python build script that has no ROCm arch path
    anywhere in the file (no `PYTORCH_ROCM_ARCH`, `GPU_TARGETS`/`AMDGPU_TARGETS`,
    `CMAKE_HIP_ARCHITECTURES`, `--offload-arch`, or `gfx` target): writing `TORCH_CUDA_ARCH_LIST` or
    `CUDAARCHS` (`os.environ[...] = ...`, `setdefault`, `putenv`, an `env=` dict), passing
    `-DCMAKE_CUDA_ARCHITECTURES=...` to CMake, and nvcc arch specs with `sm_XX`/`compute_XX` such as
    `"arch=compute_80,code=sm_80"`, `"-gencode=arch=compute_90a,code=sm_90a"` or `"-arch=sm_90"`. Each
    occurrence is reported; reading these variables, clearing them (`= ""`), putting back the value the user
    set or amending it with a function of the file (`os.environ[VAR] = merge(saved)` after `saved =
    os.getenv(VAR)`), bare names such as a CuTe DSL `"sm_100a"` target, and arch specs in messages,
    comparisons and docstrings are not.

    Test files are not checked: they are no build scripts, and a test that sets `TORCH_CUDA_ARCH_LIST`
    or writes arch specs tests how the build handles them.

    ## Why is this bad on ROCm?
    ROCm extension builds take their targets from `PYTORCH_ROCM_ARCH` (or PyTorch's own build list)
    and emit `--offload-arch=gfx...`; `TORCH_CUDA_ARCH_LIST` is ignored (torch
    `cpp_extension._get_rocm_arch_flags`). CMake uses `CMAKE_HIP_ARCHITECTURES`/`GPU_TARGETS`, not
    `CMAKE_CUDA_ARCHITECTURES` (llama.cpp's `ggml-hip` forwards `GPU_TARGETS`). A build script that only
    knows NVIDIA architectures compiles for whatever default ROCm picks, which fails at run time with
    "no kernel image is available" / `hipErrorNoBinaryForGpu`, or wastes build time on every gfx target.
    ROCm/flash-attention reads a `GPU_ARCHS` list for its ROCm build next to the CUDA `-gencode` list.

    ## Example
    ```python
    import os

    os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;8.6;9.0"
    ```

    ## Fix
    ```python
    import os
    from torch.utils.cpp_extension import IS_HIP_EXTENSION

    if IS_HIP_EXTENSION:
        os.environ.setdefault("PYTORCH_ROCM_ARCH", "gfx90a;gfx942")
    else:
        os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;8.6;9.0"
    ```

    ## Fix safety
    No automatic fix: which gfx targets to build for is a project decision (the MI series and
    Radeon cards the project supports).
    """

    code = "ROC302"
    name = "nvidia-arch-list"
    severity = Severity.WARNING
    applies_to_tests = False
    fix_availability = FixAvailability.NONE
    triggers = (b"TORCH_CUDA_ARCH_LIST", b"CUDAARCHS", b"CMAKE_CUDA_ARCHITECTURES", *_SM_TRIGGERS)

    # --- environment writes --------------------------------------------------------------------------
    def visit_Assign(self, node: ast.Assign, ctx: PythonContext) -> None:
        """`os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;9.0"` (also a copied `env[...]`)."""
        for target in node.targets:
            key = subscript_key(target)
            if key is not None:
                self._check_env_write(key, node.value, ctx)

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        """`os.environ.setdefault(...)`, `os.putenv(...)`, `monkeypatch.setenv(...)`, `env.update(...)`."""
        if not isinstance(node.func, ast.Attribute):
            return
        method = node.func.attr
        positional = [arg for arg in node.args if not isinstance(arg, ast.Starred)]
        if method in _ENV_WRITERS and len(positional) >= 2:
            self._check_env_write(positional[0], positional[1], ctx)
        elif method == "update":
            for keyword in node.keywords:
                if keyword.arg in _ARCH_ENV_VARS:
                    self._report_env(keyword, keyword.arg, ctx, span=ctx.name_range(keyword))

    def visit_Dict(self, node: ast.Dict, ctx: PythonContext) -> None:
        """An environment dict: `subprocess.run(cmd, env={**os.environ, "TORCH_CUDA_ARCH_LIST": "9.0"})`
        or `os.environ.update({...})`; other dict keys are just keys."""
        if not _is_environment_dict(node, ctx):
            return
        for key, value in zip(node.keys, node.values, strict=True):
            if key is not None:  # None: a `**mapping` entry
                self._check_env_write(key, value, ctx)

    def _check_env_write(self, key: ast.expr, value: ast.expr, ctx: PythonContext) -> None:
        name = ctx.string_value(key)
        if name not in _ARCH_ENV_VARS or ctx.string_value(value) == "" or keeps_user_setting(ctx, name, value):
            return
        self._report_env(key, name, ctx)

    def _report_env(self, node: ast.AST, name: str, ctx: PythonContext, span: CodeRange | None = None) -> None:
        """Report the write of `name` at `node` (at `span` within it: a keyword's name)."""
        if _has_rocm_arch_path(ctx):
            return
        ctx.report(
            node,
            f"{name} only selects NVIDIA GPUs and ROCm builds ignore it; set PYTORCH_ROCM_ARCH "
            '(e.g. "gfx90a;gfx942") when torch.version.hip is set',
            span=span,
        )

    # --- CMake arguments and sm_/compute_ arch specs ------------------------------------------------------
    def visit_Constant(self, node: ast.Constant, ctx: PythonContext) -> None:
        # The text parts of an f-string are its own: the f-string is checked whole.
        if isinstance(node.value, str) and not isinstance(ctx.parent(node), ast.JoinedStr):
            self._check_string(node, node.value, ctx)

    def visit_JoinedStr(self, node: ast.JoinedStr, ctx: PythonContext) -> None:
        # A format spec (`{x:>10}`) is an f-string of its own in the tree, but part of the outer one.
        if not isinstance(ctx.parent(node), ast.FormattedValue):
            self._check_string(node, ctx.semantic.static_text(node, placeholder="{}"), ctx)

    def _check_string(self, node: ast.expr, text: str | None, ctx: PythonContext) -> None:
        if not text:
            return
        found = _CMAKE_CUDA_ARCHS if _CMAKE_CUDA_ARCHS in text else None
        if found is None:
            match = _SM_ARCH.search(text)
            found = match.group(1) if match else None
        if found is None or _has_rocm_arch_path(ctx) or not is_string_value_use(ctx, node):
            return
        if found == _CMAKE_CUDA_ARCHS:
            message = (
                "-DCMAKE_CUDA_ARCHITECTURES only selects NVIDIA GPUs; pass -DCMAKE_HIP_ARCHITECTURES "
                "(or GPU_TARGETS) with gfx targets when building for ROCm"
            )
        else:
            message = (
                f'"{found}" selects an NVIDIA GPU architecture and this file has no ROCm arch path; add '
                "--offload-arch=gfx... targets (or PYTORCH_ROCM_ARCH) for ROCm builds"
            )
        ctx.report(node, message)


def _has_rocm_arch_path(ctx: PythonContext) -> bool:
    return any(ctx.contains(token) for token in _ROCM_ARCH_TOKENS)


def _is_environment_dict(node: ast.Dict, ctx: PythonContext) -> bool:
    """`env={...}`, an argument of `.update(...)`, or the value of a name that says `env`."""
    passed = argument_of(ctx.semantic, node)
    if passed is not None:
        call, argument = passed
        if isinstance(argument, ast.keyword) and argument.arg is not None:
            return argument.arg == "env"
        return isinstance(call.func, ast.Attribute) and call.func.attr == "update"
    parent = ctx.parent(node)
    if isinstance(parent, ast.Assign):
        return any(isinstance(t, ast.Name) and "env" in t.id.lower() for t in parent.targets)
    return False


NvidiaArchList.valid = (
    # The build knows ROCm: PYTORCH_ROCM_ARCH is handled in the same file.
    Valid(
        """
        import os
        from torch.utils.cpp_extension import IS_HIP_EXTENSION
        if IS_HIP_EXTENSION:
            os.environ.setdefault("PYTORCH_ROCM_ARCH", "gfx90a;gfx942")
        else:
            os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;9.0"
        """,
    ),
    # Gated by the front end: an `IS_ROCM` alias and an early exit on ROCm.
    Valid(
        """
        import os, torch
        IS_ROCM = torch.version.hip is not None
        def cuda_gencode_flags():
            if IS_ROCM:
                return []
            return ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"]
        if not IS_ROCM:
            os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;9.0+PTX")
        """,
    ),
    # Reading or clearing the variable, and arch specs in a docstring, a message and a comparison.
    Valid(
        """
        \"\"\"Builds with -gencode arch=compute_80,code=sm_80 by default.\"\"\"
        import os, torch
        arch_list = os.environ.get("TORCH_CUDA_ARCH_LIST", "")
        os.environ["TORCH_CUDA_ARCH_LIST"] = ""
        print("compiling with -arch=sm_80, set TORCH_CUDA_ARCH_LIST to override")
        if "arch=compute_90a" in os.environ.get("NVCC_GENCODE", ""):
            use_wgmma = True
        """,
    ),
    # Look-alikes: file names with an sm suffix, a CMake flag named in a warning, dict keys, a CuTe DSL
    # target name and an attribute lookup.
    Valid(
        """
        import warnings
        sources = ["csrc/fmha_fwd_sm_80.cu", "csrc/flash_fwd_hdim64_fp16_sm80.cu"]
        warnings.warn("ignoring -DCMAKE_CUDA_ARCHITECTURES from the environment")
        tile_config = {"arch=compute_80": 128, "sm_90": 256}
        class FmhaKernel:
            arch_str: str = "sm_100a"
        arch = getattr(Arch, "sm_107", None)
        """,
    ),
    # Arch flags read only after a support check that returns an error message on ROCm (true there).
    Valid(
        """
        from .env import IS_ROCM
        _ARCH_FLAGS = ("-gencode=arch=compute_100a,code=sm_100a",)
        def _support_error():
            if IS_ROCM:
                return "not supported on ROCm"
            return ""
        def extra_cuda_cflags():
            if _support_error():
                return []
            return [*_ARCH_FLAGS]
        """,
    ),
    # The user's own TORCH_CUDA_ARCH_LIST amended by a function of the file, then put back.
    Valid(
        """
        import os
        def add_visible(archs):
            return ";".join([archs, *visible_capabilities()])
        saved = os.getenv("TORCH_CUDA_ARCH_LIST")
        if saved:
            os.environ["TORCH_CUDA_ARCH_LIST"] = add_visible(saved)
            try:
                build()
            finally:
                os.environ["TORCH_CUDA_ARCH_LIST"] = saved
        """,
    ),
    # A conditional expression and an `and` short-circuit pick the NVIDIA arch only off ROCm.
    Valid(
        """
        import torch
        cmake_args = [] if torch.version.hip else ["-DCMAKE_CUDA_ARCHITECTURES=80;90"]
        gencode = torch.version.cuda is not None and ["-arch=sm_90a"]
        """,
    ),
    # A compiler that runs nvcc itself: the helper raises unless NVIDIA's compiler is on the path, so nothing after
    # its call runs on ROCm.
    Valid(
        """
        import shutil, subprocess
        def get_nvcc_path():
            nvcc = shutil.which("nvcc")
            if nvcc is None:
                raise RuntimeError("nvcc not found")
            return nvcc
        def compile_cubin(source, arch):
            nvcc = get_nvcc_path()
            cmd = [nvcc, "--cubin", "-gencode", f"arch=compute_{arch},code=sm_{arch}", source]
            subprocess.run(cmd, check=True)
        """,
    ),
    # A packaging script's flags set after a helper that raises unless the CUDA build variant is a `cuXXX` tag
    # (`CU_VERSION` is `cpu`, `cu121` or `rocm6.1`).
    Valid(
        """
        import os
        CU_VERSION = os.environ["CU_VERSION"]
        def cuda_major_minor():
            if CU_VERSION[:2] != "cu":
                raise ValueError(f"Bad CU_VERSION {CU_VERSION}")
            return CU_VERSION[2:4], CU_VERSION[4]
        def setup_cuda():
            major, minor = cuda_major_minor()
            os.environ["NVCC_FLAGS"] = "-gencode=arch=compute_80,code=sm_80"
        """,
    ),
)
NvidiaArchList.invalid = (
    Invalid(
        """
        import os
        os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;8.6;9.0"
        """,
        expect=("2:12-2:34",),
        message="PYTORCH_ROCM_ARCH",
    ),
    # apex style: an arch default set when no GPU is visible (`is_available` is not a vendor test).
    Invalid(
        """
        import os, torch
        if not torch.cuda.is_available():
            if os.environ.get("TORCH_CUDA_ARCH_LIST", None) is None:
                os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6")
        """,
        expect=("4:31-4:53",),
    ),
    # mamba / flash-attention style -gencode list.
    Invalid(
        """
        cc_flag = []
        cc_flag.append("-gencode")
        cc_flag.append("arch=compute_80,code=sm_80")
        for major in (9, 10):
            cc_flag += ["-gencode", f"arch=compute_{major}0,code=sm_{major}0"]
        """,
        expect=("3:16-3:44",),
        message='"arch=compute_80" selects an NVIDIA GPU architecture',
    ),
    # vLLM-style CMake build driven from setup.py.
    Invalid(
        """
        import subprocess
        def build_cmake(build_dir, archs):
            cmake_args = ["-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_CUDA_ARCHITECTURES={archs}"]
            subprocess.check_call(["cmake", "..", *cmake_args], cwd=build_dir)
        """,
        expect=("3:49-3:86",),
        message="CMAKE_HIP_ARCHITECTURES",
    ),
    # The same support check without a ROCm arm: on MI300 (capability 9.4) it returns "", the flags are used.
    Invalid(
        """
        import torch
        _ARCH_FLAGS = ("-gencode=arch=compute_90a,code=sm_90a",)
        def _support_error():
            if torch.cuda.get_device_capability()[0] < 9:
                return "needs sm90"
            return ""
        def extra_cuda_cflags():
            if _support_error():
                return []
            return [*_ARCH_FLAGS]
        """,
        expect=("2:16-2:55",),
    ),
    # A default of the script's own when the user set nothing.
    Invalid(
        """
        import os
        os.environ["TORCH_CUDA_ARCH_LIST"] = os.getenv("TORCH_CUDA_ARCH_LIST", "8.0;9.0")
        """,
        expect=("2:12-2:34",),
    ),
    # A subprocess environment.
    Invalid(
        """
        import os, subprocess
        subprocess.run(["python", "setup.py", "build_ext"], env={**os.environ, "TORCH_CUDA_ARCH_LIST": "9.0a"})
        """,
        expect=("2:72-2:94",),
    ),
)
