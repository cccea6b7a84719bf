"""`rocmlint verify`: does a CUDA file compile for AMD GPUs with hipcc, and does NVIDIA still see the same code?

HIP compile: a temporary copy of the file is compiled with `hipcc -x hip --offload-arch=...` the way a
PyTorch extension build on ROCm compiles it (`-DUSE_ROCM=1 -D__HIP_PLATFORM_AMD__=1`, and CUDA API names
renamed to HIP ones by a force-included header generated from the same CUDA->HIP table ROC216 reads), so
what fails is what rocmlint's rules are about, not names hipify would rename. The user's file is never
touched. Compiler errors become ROC010 diagnostics at the user's file and line.

NVIDIA identity: `nvcc -E` of the original and of the fixed content must give the same token stream
(line markers, spacing and the values of `__LINE__`/`__FILE__` ignored); a difference is ROC011. Gated fixes only add `#if <ROCm> ... #else`
around the original text, so NVIDIA's preprocessor output stays the same.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from rocmlint.cuda.hip_gaps import cuda_to_hip_names
from rocmlint.diagnostics import Diagnostic, Location
from rocmlint.registry import rule_by_code

HIP_COMPILE_ERROR, NVIDIA_PATH_CHANGED = "ROC010", "ROC011"
DEFAULT_ARCHS = ("gfx90a",)
# What torch.utils.cpp_extension passes to hipcc for extension sources (COMMON_HIP_FLAGS).
TORCH_HIP_DEFINES = ("-DUSE_ROCM=1", "-D__HIP_PLATFORM_AMD__=1")
_COMPILER_MESSAGE = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<column>\d+): (?:fatal )?error: (?P<message>.*)$", re.M
)
_LINE_MARKER = re.compile(r"^\s*#.*$", re.M)
_TIMEOUT_SECONDS = 300
# A gated fix moves the original lines down by design: `__LINE__` (and the temporary copy's `__FILE__`)
# are pinned so that CHECK_CUDA-style macros expand alike, and only the code itself is compared.
_LINE_AGNOSTIC = ("-D__LINE__=0", '-D__FILE__="rocmlint-verify"', "-Xcompiler", "-Wno-builtin-macro-redefined")


@dataclass(frozen=True)
class Toolchain:
    hipcc: str | None
    nvcc: str | None
    archs: tuple[str, ...]

    @classmethod
    def detect(cls, archs: Sequence[str] = ()) -> Toolchain:
        return cls(shutil.which("hipcc"), shutil.which("nvcc"), tuple(archs) or detect_archs())


def detect_archs() -> tuple[str, ...]:
    """The GPUs of this machine (amdgpu-arch, else rocminfo), else gfx90a."""
    for command in (["amdgpu-arch"], ["rocminfo"]):
        if shutil.which(command[0]) is None:
            continue
        try:
            output = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        archs = tuple(dict.fromkeys(re.findall(r"\bgfx[0-9a-f]+\b", output)))
        if archs:
            return archs
    return DEFAULT_ARCHS


@dataclass
class FileVerdict:
    path: Path
    hip_errors: list[Diagnostic] = field(default_factory=list)
    hip_compiled: bool | None = None  # None: hipcc is not installed
    nvidia_identical: bool | None = None  # None: nvcc not installed, or no original to compare with
    notes: list[str] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        found = list(self.hip_errors)
        if self.nvidia_identical is False:
            found.append(
                _tool_diagnostic(
                    NVIDIA_PATH_CHANGED,
                    str(self.path),
                    1,
                    "nvcc -E of the fixed file differs from the original: the NVIDIA path changed",
                )
            )
        return found


@dataclass(frozen=True)
class VerifyOptions:
    include_dirs: tuple[Path, ...] = ()
    extra_flags: tuple[str, ...] = ()


def verify_file(
    path: Path, content: bytes, original: bytes | None, toolchain: Toolchain, options: VerifyOptions
) -> FileVerdict:
    """Compile `content` (the file as it is or as fixing would make it) for AMD, and compare NVIDIA's
    preprocessed view of it with that of `original` when given."""
    verdict = FileVerdict(path)
    if toolchain.hipcc is not None:
        verdict.hip_errors = hip_compile(path, content, toolchain, options)
        verdict.hip_compiled = not verdict.hip_errors
    if toolchain.nvcc is not None and original is not None:
        if original == content:
            verdict.nvidia_identical = True
        else:
            before, after = (nvidia_tokens(path, data, toolchain.nvcc, options) for data in (original, content))
            verdict.nvidia_identical = None if before is None or after is None else before == after
            if before is None or after is None:
                verdict.notes.append("nvcc -E failed on the file; NVIDIA identity not checked")
    return verdict


def verify_many(
    jobs: Iterable[tuple[Path, bytes, bytes | None]],
    toolchain: Toolchain,
    options: VerifyOptions,
    workers: int | None = None,
    flags_by_path: dict[Path, tuple[str, ...]] | None = None,
) -> list[FileVerdict]:
    """Files in parallel (the compilers do the work; threads only wait on them), results in input order."""
    items = list(jobs)
    flags_by_path = flags_by_path or {}

    def run(item: tuple[Path, bytes, bytes | None]) -> FileVerdict:
        path, content, original = item
        extra = flags_by_path.get(path, ())
        file_options = VerifyOptions(options.include_dirs, options.extra_flags + extra) if extra else options
        return verify_file(path, content, original, toolchain, file_options)

    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        return list(pool.map(run, items))


def verify_summary(verdicts: Sequence[FileVerdict], toolchain: Toolchain) -> str:
    compiled = sum(v.hip_compiled is True for v in verdicts)
    identical = sum(v.nvidia_identical is True for v in verdicts)
    changed = sum(v.nvidia_identical is False for v in verdicts)
    unchecked = len(verdicts) - identical - changed
    archs = ",".join(toolchain.archs)
    nvidia = (
        "nvcc not found"
        if toolchain.nvcc is None
        else f"{identical} identical, {changed} changed, {unchecked} not compared"
    )
    return f"hipcc ({archs}): {compiled} of {len(verdicts)} files compile. NVIDIA path (nvcc -E): {nvidia}.\n"


def git_original(path: Path, revision: str) -> bytes | None:
    """The file as `revision` has it (the original a fix started from), or None outside git / untracked."""
    try:
        result = subprocess.run(
            ["git", "-C", str(path.resolve().parent), "show", f"{revision}:./{path.name}"],
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 else None


_USEFUL_FLAG = re.compile(r"^(-I|-D|-U|-isystem|-std=|-include)")


def compile_flags(path: Path, compile_commands: Path) -> tuple[str, ...]:
    """The -I/-D/-U/-isystem/-std/-include flags a compile_commands.json gives for `path`."""
    try:
        entries = json.loads(compile_commands.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    target = path.resolve()
    for entry in entries if isinstance(entries, list) else ():
        folder = Path(entry.get("directory", "."))
        if (folder / entry.get("file", "")).resolve() != target:
            continue
        arguments = entry.get("arguments") or shlex.split(entry.get("command", ""))
        return tuple(_absolute_flags(arguments, folder))
    return ()


def _absolute_flags(arguments: Sequence[str], folder: Path) -> Iterable[str]:
    """The useful flags, with relative include folders made absolute (the compile runs elsewhere)."""
    pending: str | None = None  # a flag whose value is the next argument
    for argument in arguments:
        if pending is not None:
            yield _absolute(argument, folder) if pending in _PATH_FLAGS else argument
            pending = None
        elif argument in _PATH_FLAGS or argument in ("-D", "-U"):
            yield argument
            pending = argument
        elif argument.startswith("-I") and len(argument) > 2:
            yield "-I" + _absolute(argument[2:], folder)
        elif _USEFUL_FLAG.match(argument):
            yield argument


_PATH_FLAGS = ("-I", "-isystem", "-include")


def _absolute(value: str, folder: Path) -> str:
    return value if Path(value).is_absolute() else str((folder / value).resolve())


def hip_compile(path: Path, content: bytes, toolchain: Toolchain, options: VerifyOptions) -> list[Diagnostic]:
    assert toolchain.hipcc is not None
    with tempfile.TemporaryDirectory(prefix="rocmlint-verify-") as folder:
        copy = Path(folder) / path.name
        copy.write_bytes(content)
        compat = Path(folder) / "rocmlint_hip_compat.h"
        compat.write_text(compat_header(), encoding="utf-8")
        command = [
            toolchain.hipcc,
            "-x",
            "hip",
            "-c",
            str(copy),
            "-o",
            str(Path(folder) / "out.o"),
            *(f"--offload-arch={arch}" for arch in toolchain.archs),
            *TORCH_HIP_DEFINES,
            "-include",
            str(compat),
            *_include_flags(path, options),
            *options.extra_flags,
        ]
        environment = {**os.environ, "HIP_PLATFORM": "amd"}  # hipcc picks NVIDIA when nvcc is on PATH
        try:
            result = subprocess.run(
                command, capture_output=True, text=True, env=environment, timeout=_TIMEOUT_SECONDS, check=False
            )
        except subprocess.TimeoutExpired:
            return [
                _tool_diagnostic(HIP_COMPILE_ERROR, str(path), 1, f"hipcc did not finish within {_TIMEOUT_SECONDS} s")
            ]
        if result.returncode == 0:
            return []
        return _compiler_errors(result.stderr, copy, path) or [
            _tool_diagnostic(HIP_COMPILE_ERROR, str(path), 1, f"hipcc failed: {_last_line(result.stderr)}")
        ]


def nvidia_tokens(path: Path, content: bytes, nvcc: str, options: VerifyOptions) -> list[str] | None:
    """The tokens of `nvcc -E` for the content (line markers dropped); None when nvcc fails."""
    with tempfile.TemporaryDirectory(prefix="rocmlint-verify-") as folder:
        copy = Path(folder) / path.name
        copy.write_bytes(content)
        command = [
            nvcc,
            "-E",
            "-x",
            "cu",
            str(copy),
            *_LINE_AGNOSTIC,
            *_include_flags(path, options),
            *options.extra_flags,
        ]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            return None
        if result.returncode != 0:
            return None
        return _LINE_MARKER.sub("", result.stdout).split()


@cache
def compat_header() -> str:
    """`#define cudaMalloc hipMalloc`... for every mapped CUDA API name, after the HIP runtime header:
    the rename pass PyTorch's hipify does, done by the preprocessor in the temporary copy only."""
    lines = [
        "// Generated by rocmlint verify from rocmlint/data/cuda_api.toml.",
        "#pragma once",
        "#include <hip/hip_runtime.h>",
    ]
    lines += [f"#define {cuda} {hip}" for cuda, hip in sorted(cuda_to_hip_names().items())]
    return "\n".join(lines) + "\n"


def _include_flags(path: Path, options: VerifyOptions) -> list[str]:
    # The copy lives elsewhere: its own folder first, as for `#include "..."` next to the original.
    return [
        "-I",
        str(path.resolve().parent),
        *(flag for folder in options.include_dirs for flag in ("-I", str(folder))),
    ]


def _compiler_errors(stderr: str, copy: Path, path: Path) -> list[Diagnostic]:
    """The errors hipcc reports in the file itself; an error only inside an included header is reported
    at line 1 with the header's position in the message."""
    found: list[Diagnostic] = []
    elsewhere: list[str] = []
    seen: set[tuple[int, str]] = set()
    for match in _COMPILER_MESSAGE.finditer(stderr):
        if Path(match["file"]) != copy:
            elsewhere.append(f"hipcc: {match['file']}:{match['line']}: {match['message']}")
            continue
        key = (int(match["line"]), match["message"])
        if key in seen:  # one error per offload arch
            continue
        seen.add(key)
        found.append(
            _tool_diagnostic(
                HIP_COMPILE_ERROR, str(path), int(match["line"]), f"hipcc: {match['message']}", int(match["column"])
            )
        )
    if not found and elsewhere:
        found.append(_tool_diagnostic(HIP_COMPILE_ERROR, str(path), 1, elsewhere[0]))
    return found


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _tool_diagnostic(code: str, path: str, line: int, message: str, column: int = 1) -> Diagnostic:
    rule = rule_by_code(code)
    assert rule is not None, code
    location = Location(line, column)
    return Diagnostic(path, rule.code, rule.name, message, rule.severity, location, location, None, rule.url(), line)
