"""What the C++ project model (rocmlint/cuda/project.py) learned about one project, as plain data: the build
mode, the vendor macros with their evidence, header constants, ROCm-only remaps, files ROCm does not compile and
files written for AMD. `rocmlint project` prints it (rocmlint/project_command.py) and `rocmlint report` shows it;
both serialize it with `to_data`, so the JSON keys are the field names below (listed in docs/report.md)."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocmlint.cuda.bazel_files import is_bazel_file
from rocmlint.cuda.build_files import is_makefile
from rocmlint.cuda.preprocessor import LearnedMacro, MacroState
from rocmlint.cuda.project import CudaProject

SCHEMA = "rocmlint-project/1"
# The kinds of evidence a learned macro carries, strongest first (rocmlint/cuda/project.py, `_learn`).
EVIDENCE_KINDS = ("build", "header", "arms", "name")
VENDORS = ("rocm", "nvidia", "other")
VENDOR_NAMES = {"rocm": "ROCm", "nvidia": "NVIDIA", "other": "another accelerator"}


@dataclass(frozen=True)
class BuildDefine:
    name: str
    value: str | None
    vendor: str | None  # None: defined whatever the vendor
    path: str
    line: int


@dataclass(frozen=True)
class Build:
    torch_extension: bool  # torch CUDAExtension: hipified at build time on ROCm
    hipify: str  # "path:line: why" when the build runs hipify over the sources, else ""
    # "path:line: why" when the build already has a ROCm path (`CudaProject.rocm_build_path`), else "": with `hipify`,
    # what hipify renames is left out unless `show-hipified` says otherwise
    rocm_build: str
    hip_language: bool  # CMake builds the HIP language
    cuda_language: bool  # CMake builds CUDA, or setup.py calls nvcc
    hip_only: bool  # HIP and nothing else: every file is ROCm-native
    defines: tuple[BuildDefine, ...]


@dataclass(frozen=True)
class Macro:
    """A macro that tells the vendors apart, its state on each vendor's build and the evidence that decided it."""

    name: str
    vendor: (
        str  # "rocm" or "nvidia": the build that defines it (or gives it a true value); "other": another accelerator
    )
    kind: str  # the evidence's kind: one of EVIDENCE_KINDS
    rocm: MacroState
    nvidia: MacroState
    path: str
    line: int | None
    why: str


@dataclass(frozen=True)
class Constant:
    name: str
    value: str
    kind: str  # "macro" (object-like #define) or "constant" (constexpr / const integer)
    rocm_only: bool  # defined only where NVIDIA does not compile
    path: str
    line: int


@dataclass(frozen=True)
class Remap:
    name: str
    parameters: int | None  # a function-like macro's parameter count; None for object-like macros and types
    path: str
    line: int


@dataclass(frozen=True)
class FileNote:
    path: str
    why: str


@dataclass(frozen=True)
class ProjectSummary:
    root: str
    files: int  # C/C++/CUDA files the model read
    build: Build
    macros: tuple[Macro, ...]  # ROCm's first, then NVIDIA's; strongest evidence first, then by name
    constants: tuple[Constant, ...]
    remaps: tuple[Remap, ...]
    nvidia_only_files: tuple[FileNote, ...]
    rocm_native_files: tuple[FileNote, ...]

    def macros_of(self, vendor: str) -> tuple[Macro, ...]:
        return tuple(m for m in self.macros if m.vendor == vendor)


def summarize(project: CudaProject, shown_root: str | None = None) -> ProjectSummary:
    """The summary of `project`; its paths are relative to the project's root, shown as `shown_root` (default:
    the absolute root)."""
    root = project.root

    def relative(path: str) -> str:
        return _relative(path, root)

    facts = project.build_facts
    build = Build(
        torch_extension=facts.torch_extension,
        hipify=_relative_evidence(facts.hipify, root),
        rocm_build=project.rocm_build_path,
        hip_language=facts.hip_language,
        cuda_language=facts.cuda_language,
        hip_only=project.builds_hip_only(),
        defines=tuple(BuildDefine(d.name, d.value, d.vendor, relative(d.path), d.line) for d in facts.defines),
    )
    return ProjectSummary(
        root=shown_root if shown_root is not None else str(root),
        files=len(project.files),
        build=build,
        macros=tuple(sorted((_macro(m, root) for m in project.learned.values()), key=_macro_order)),
        constants=tuple(
            Constant(d.name, d.value or "", kind, d.branch.on_nvidia is False, relative(path), d.line)
            for path, d, kind in project.header_constants()
        ),
        remaps=tuple(
            Remap(name, parameters, *_location(where))
            for name, (where, parameters) in sorted(project.rocm_remaps().items())
        ),
        nvidia_only_files=tuple(FileNote(relative(p), why) for p, why in project.nvidia_only_files().items()),
        rocm_native_files=tuple(FileNote(relative(p), why) for p, why in project.rocm_native_files().items()),
    )


def _relative(path: str, root: Path) -> str:
    """`path` relative to `root` in POSIX form when it is inside it, else as given."""
    absolute = Path(os.path.abspath(os.path.join(root, path)))
    return absolute.relative_to(root).as_posix() if absolute.is_relative_to(root) else path


def _relative_evidence(evidence: str, root: Path) -> str:
    """ "path:line: why" with its path relative to `root`."""
    path, colon, rest = evidence.partition(":")
    return f"{_relative(path, root)}{colon}{rest}" if colon else evidence


def _macro(macro: LearnedMacro, root: Path) -> Macro:
    evidence = macro.evidence
    return Macro(
        macro.name,
        macro.vendor,
        evidence.kind,
        macro.on_rocm,
        macro.on_nvidia,
        _relative(evidence.path, root),
        evidence.line,
        evidence.why,
    )


def _macro_order(macro: Macro) -> tuple[int, int, str]:
    strength = EVIDENCE_KINDS.index(macro.kind) if macro.kind in EVIDENCE_KINDS else len(EVIDENCE_KINDS)
    return VENDORS.index(macro.vendor) if macro.vendor in VENDORS else len(VENDORS), strength, macro.name


def _location(where: str) -> tuple[str, int]:
    """("path", line) of a "path:line" the model wrote."""
    path, _, line = where.rpartition(":")
    return path, int(line)


def build_mode(build: Build) -> str:
    """The ways the project builds, in words ("not found" without a build file rocmlint reads)."""
    modes = [
        *(["torch extension (hipified at build time on ROCm)"] if build.torch_extension else []),
        *(["CMake HIP"] if build.hip_language else []),
        *(["CUDA (CMake CUDA or nvcc)"] if build.cuda_language else []),
        *(["make with ROCm flags"] if any(d.vendor == "rocm" and is_makefile(d.path) for d in build.defines) else []),
        *(
            ["Bazel with ROCm configs"]
            if any(d.vendor == "rocm" and is_bazel_file(d.path) for d in build.defines)
            else []
        ),
    ]
    return ", ".join(modes) or "not found (no setup.py or CMake file builds CUDA or HIP)"


def state_text(state: MacroState) -> str:
    """How one vendor's build sees a macro: "undefined", its value, "defined" (value unknown) or "maybe"."""
    if state.defined is False:
        return "undefined"
    if state.defined is None:
        return "maybe defined" if state.value is None else f"maybe {state.value}"
    return "defined" if state.value is None else str(state.value)


def to_data(summary: ProjectSummary) -> dict[str, Any]:
    """The summary as JSON-ready data: every field by its name, nested the same way."""
    return dataclasses.asdict(summary)
