"""ROC135 cuda-library-file."""

from __future__ import annotations

import ast
import re

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.commands import callers_handle
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import handled_by_try, last_name
from rocmlint.python.native import loaded_library
from rocmlint.python.scopes import argument_values
from rocmlint.python.values import Follow, Names
from rocmlint.rule import Invalid, Rule, Valid

# The file of a CUDA toolkit or driver library, as loaded or searched for: `libcudart.so.12`, `libcuda.so.1`,
# `cudart64*.dll`, `nvcuda*.dll`, `libcublasLt.so*`, `libnvrtc*.so*`; a `.so`/`.dll`/`.dylib` (or a glob of
# one). NVML (libnvidia-ml) is ROC117's.
_LIBRARY_STEMS = (
    "cudart", "cuda", "nvcuda", "nvrtc", "nvjitlink", "cublas", "cublaslt", "cufft", "curand", "cusparse", "cusolver",
    "cudnn", "nccl",
)  # fmt: skip
_CUDA_LIBRARY = re.compile(
    rf"(?i)(?:lib)?(?:{'|'.join(_LIBRARY_STEMS)})(?:64)?(?:[_.*\d-][^/\\]*)?\.(?:so|dll|dylib)\b[^/\\]*"
)
# Calls that search a directory for files by a glob pattern (the pattern first): `glob.glob`, `Path.glob`.
_GLOB_FUNCTIONS = frozenset({"glob.glob", "glob.iglob"})
_GLOB_METHODS = frozenset({"glob", "rglob"})
# A pattern is followed through every assignment, the elements of a written-out collection and the
# collection a loop iterates (`for pattern in PATTERNS: directory.glob(pattern)`).
_PATTERN_VALUES = Follow(names=Names.ALL, elements=True, loops=True)
# Caught around a load, these make a missing library a fallback.
_LOAD_FAILURES = frozenset({"OSError", "Exception", "BaseException"})


def _message(file: str) -> str:
    return (
        f"`{file}` is a CUDA library file, which ROCm systems do not have, so loading or searching for it fails "
        "(or finds nothing) there; look for the HIP library (libamdhip64.so, libhiprtc.so, librccl.so, "
        "libhipblas.so) when torch.version.hip is set"
    )


class CudaLibraryFile(Rule):
    """
    ## What it does
    Flags the file name of a CUDA toolkit or driver library (`libcudart.so*`, `libcuda.so.1`, `cudart64*.dll`,
    `nvcuda*.dll`, `libnvrtc*`, `libcublas*`, `libcudnn*`, `libnccl*`) that code ROCm runs loads with `ctypes`
    (`ctypes.CDLL`, `cdll.LoadLibrary`) or searches for (`glob.glob`, `Path.glob`/`rglob`), written in the
    call or reaching it through a variable, a collection of patterns or the loop that iterates it. The
    diagnostic points at the name. Not flagged: a name only NVIDIA reaches (a branch on `torch.version.hip`, a
    conditional expression choosing `libamdhip64.so` on ROCm), a load inside a `try:` that catches `OSError`
    (or in a module-level def whose every call is), NVML (ROC117).

    ## Why is this bad on ROCm?
    ROCm systems ship HIP's libraries (`libamdhip64.so`, `libhiprtc.so`, `librccl.so`, `libhipblas.so`), not
    CUDA's: loading `libcudart.so` raises `OSError`, and a search for the CUDA runtime finds nothing, so a
    setup check reports no GPU runtime. bitsandbytes' diagnostics search `libamdhip64.so*` instead when
    built for HIP.

    ## Example
    ```python
    CUDA_RUNTIME_LIB_PATTERNS = ("cudart64*.dll", "libcudart*.so*", "nvcuda*.dll")
    def find_cuda_libraries(directory):
        for pattern in CUDA_RUNTIME_LIB_PATTERNS:
            yield from directory.glob(pattern)
    ```

    ## Fix
    ```python
    CUDA_RUNTIME_LIB_PATTERNS = (
        ("libamdhip64.so*",) if torch.version.hip else ("cudart64*.dll", "libcudart*.so*", "nvcuda*.dll")
    )
    ```

    ## Fix safety
    No automatic fix: which HIP library stands for a CUDA one, and what the code does with it, depend on the
    caller.
    """

    code = "ROC135"
    name = "cuda-library-file"
    severity = Severity.WARNING
    applies_to_tests = True  # a suite loading the CUDA runtime through ctypes fails on ROCm as the library does
    fix_availability = FixAvailability.NONE
    triggers = (b".so", b".dll", b".dylib")
    # What every match of `_CUDA_LIBRARY` ends with: a literal first character lets the scan skip from dot to dot,
    # where the whole pattern, case-blind with no literal prefix, was tried at every byte of every file.
    trigger_pattern = r"\.(?i:so|dll|dylib)\b"
    # A reported name matches `_CUDA_LIBRARY`, so the literal it is read from spells one of its stems, in any case
    # (PyTorch: 21 files that name a `.so` but no CUDA library, such as `test/test_fx.py`, are not parsed for it).
    also_requires = tuple(stem.encode() for stem in _LIBRARY_STEMS)

    def __init__(self) -> None:
        # A pattern several searches read is reported once.
        self._reported: set[ast.AST] = set()

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        library = _searched_file(ctx, node)
        if library is None:
            return
        loaded = library is loaded_library(ctx, node)
        if loaded and (handled_by_try(ctx, node, _LOAD_FAILURES) or callers_handle(ctx, node, _LOAD_FAILURES)):
            return
        for file, literal in ctx.values.trace(library, lambda value: _file_step(ctx, value), _PATTERN_VALUES):
            if literal in self._reported or ctx.is_nvidia_gated(literal):
                continue
            if ctx.report(literal, _message(file), gate_on=(node,)):
                self._reported.add(literal)


def _searched_file(ctx: PythonContext, call: ast.Call) -> ast.expr | None:
    """The library a call loads (`ctypes.CDLL(name)`) or the pattern it searches a directory for."""
    loaded = loaded_library(ctx, call)
    if loaded is not None:
        return loaded
    arguments = argument_values(call)
    if not arguments:
        return None
    func = call.func
    glob_function = ctx.qualified_name(func) in _GLOB_FUNCTIONS
    glob_method = isinstance(func, ast.Attribute) and last_name(func) in _GLOB_METHODS
    return arguments[0] if glob_function or glob_method else None


def _file_step(ctx: PythonContext, value: ast.expr) -> list[tuple[str, ast.expr]] | None:
    """A string literal naming a CUDA library file, as (file name, literal); other literals name none."""
    if isinstance(value, ast.Name):
        return None
    text = ctx.semantic.static_text(value)
    if text is None:
        return None
    match = _CUDA_LIBRARY.search(re.split(r"[\\/]", text)[-1])
    return [(match.group(0), value)] if match is not None and match.start() == 0 else []


CudaLibraryFile.valid = (
    # A pattern chosen by platform; a CUDA-only branch.
    Valid(
        """
        import glob
        import torch
        PATTERNS = ("libamdhip64.so*",) if torch.version.hip else ("cudart64*.dll", "libcudart*.so*")
        def find_runtime(directory):
            for pattern in PATTERNS:
                yield from directory.glob(pattern)
        if torch.version.cuda:
            nvrtc = glob.glob("/usr/local/cuda/lib64/libnvrtc.so*")
        """,
    ),
    # A load that falls back when the library is missing, in the def or around its every call; HIP's own library.
    Valid(
        """
        import ctypes
        def load_cuda():
            try:
                return ctypes.CDLL("libcuda.so.1")
            except OSError:
                return None
        def _load_cudart():
            return ctypes.cdll.LoadLibrary("libcudart.so")
        def device_attribute(attribute):
            try:
                return _load_cudart().cudaDeviceGetAttribute(attribute)
            except Exception:
                return None
        hip = ctypes.CDLL("libamdhip64.so")
        """,
    ),
    # Library names that are not loaded or searched for: a message, a table of packages; NVML (ROC117).
    Valid(
        """
        import ctypes
        print("could not find libcudart.so; is the CUDA toolkit installed?")
        WHEEL_LIBRARIES = {"nvidia-cuda-runtime": "libcudart.so.12"}
        files = sorted(path.glob("*.txt"))
        """,
    ),
)
CudaLibraryFile.invalid = (
    Invalid(
        """
        from pathlib import Path
        CUDA_RUNTIME_LIB_PATTERNS = (
            "cudart64*.dll",
            "libcudart*.so*",
            "nvcuda*.dll",
        )
        def find_cuda_libraries(directory: Path):
            for lib_pattern in CUDA_RUNTIME_LIB_PATTERNS:
                for path in directory.glob(lib_pattern):
                    yield path
        """,
        expect=("3:5-3:20", "4:5-4:21", "5:5-5:18"),
        message="CUDA library file",
    ),
    # Loaded through ctypes, written in the call or through a variable.
    Invalid(
        """
        import ctypes
        cuda = ctypes.CDLL("libcuda.so.1")
        NVRTC = "libnvrtc.so.12"
        nvrtc = ctypes.cdll.LoadLibrary(NVRTC)
        """,
        expect=("2:20-2:34", "3:9-3:25"),
    ),
    # Searched for with glob, once however many searches read the pattern.
    Invalid(
        """
        import glob, os
        CUBLAS = "libcublas.so*"
        found = glob.glob(os.path.join("/usr/lib", CUBLAS)) or glob.glob(CUBLAS)
        """,
        expect=("2:10-2:25",),
    ),
)
