"""Learning which macros tell the vendors apart, from a project's build files and the facts of its C/C++ files
(rocmlint/cuda/project.py has the order of the evidence and what each kind means).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping

from rocmlint.cuda.build_files import (
    BuildDefine,
    BuildFacts,
    names_another_accelerator,
    vendor_of_macro_name,
    vendor_of_words,
    vendor_switched_off,
)
from rocmlint.cuda.file_facts import Definition, FileFacts
from rocmlint.cuda.preprocessor import LearnedMacro, MacroEvidence, MacroState, VendorMacros, parse_int, rocm_twins
from rocmlint.cuda.value_selectors import learn_value_selectors
from rocmlint.data import load
from rocmlint.vendor import Tri

_STANDARD_MACROS = frozenset({"NDEBUG", "DEBUG", "_DEBUG"})
_INCLUDE_GUARD_SUFFIX = re.compile(r"_(?:H|HH|HPP|CUH|INL|INCLUDED|H_|HPP_|CUH_)$")


def learn_from_build(build: BuildFacts) -> dict[str, LearnedMacro]:
    """Macros the build defines for one vendor only. One it defines for both, or whatever the vendor, is no
    vendor's (it is left out here and blocks the weaker evidence, see `_learn`). Nor is one rocmlint's tables
    already decide (`-DCUDA_VERSION=11000` in a ROCm build gives the toolkit's macro a value there, see
    `rocm_build_values`; it does not make it a ROCm-only gate)."""
    well_known = VendorMacros().well_known
    by_name: dict[str, list[BuildDefine]] = {}
    for define in build.defines:
        if define.name not in well_known:
            by_name.setdefault(define.name, []).append(define)
    learned: dict[str, LearnedMacro] = {}
    for name, defines in by_name.items():
        vendors = {d.vendor for d in defines}
        if vendors == {"rocm", "nvidia"}:
            learned.update(_learn_from_values(name, defines))
        if len(vendors) != 1 or None in vendors:
            continue
        vendor = vendors.pop()
        assert vendor is not None
        first = defines[0]
        value = parse_int(first.value) if first.value is not None else 1
        defined = MacroState(True, value)
        learned[name] = LearnedMacro(
            name,
            vendor,
            defined if vendor == "rocm" else MacroState(False, 0),
            defined if vendor == "nvidia" else MacroState(False, 0),
            MacroEvidence("build", first.path, first.line, f"the {_vendor_name(vendor)} build defines it"),
        )
    return learned


def _learn_from_values(name: str, defines: list[BuildDefine]) -> Iterator[tuple[str, LearnedMacro]]:
    """A macro each vendor's build defines with its own value, true on one only (`-DUSING_CUDA=1` in a Bazel
    `build:cuda` config, `-DUSING_CUDA=0` in `build:rocm`): a gate of the vendor whose value is true, defined on
    both (`#ifdef` takes both builds)."""
    values = {
        vendor: {parse_int(d.value or "1") for d in defines if d.vendor == vendor} for vendor in ("rocm", "nvidia")
    }
    if any(len(found) != 1 or None in found for found in values.values()):
        return
    rocm, nvidia = values["rocm"].pop(), values["nvidia"].pop()
    if (rocm == 0) == (nvidia == 0):
        return
    vendor = "rocm" if rocm else "nvidia"
    first = next(d for d in defines if d.vendor == vendor)
    why = f"the {_vendor_name(vendor)} build defines it {rocm or nvidia}, the other build 0"
    evidence = MacroEvidence("build", first.path, first.line, why)
    yield name, LearnedMacro(name, vendor, MacroState(True, rocm), MacroState(True, nvidia), evidence)


def learn(
    files: Mapping[str, FileFacts], build: BuildFacts, from_build: Mapping[str, LearnedMacro]
) -> dict[str, LearnedMacro]:
    compiled_on_rocm = rocm_compiled_under(files)
    learned: dict[str, LearnedMacro] = {}
    built_everywhere = {d.name for d in build.defines} - set(from_build)
    guards = {f.guard for f in files.values() if f.guard}
    decided = built_everywhere | guards
    # Each stage is read once the ones before it are learned (generators): the order of arms needs the ROCm
    # macros the build, the headers and the arms decided.
    headers = _learn_from_headers(files, guards)
    stages: list[Iterable[LearnedMacro]] = [
        from_build.values(),
        _learn_from_compile_options(files),
        headers,
        _learn_from_cuda_header_guards(files),
        _learn_from_arms(files),
        learn_value_selectors((path, vote) for path, facts in sorted(files.items()) for vote in facts.value_votes),
        _learn_from_order(files, learned),
        _learn_from_twins(files),
        _learn_from_names(files),
    ]
    for stage in stages:
        for macro in stage:
            if macro.name in decided or macro.name in learned:
                continue
            if macro.vendor == "nvidia" and macro.name in compiled_on_rocm:
                decided.add(macro.name)  # ROCm compiles code under it: no weaker evidence makes it NVIDIA's
            else:
                learned[macro.name] = macro
        decided |= set(learned) | (_defined_everywhere(files) if stage is headers else set())
    return {
        name: macro
        for name, macro in learned.items()
        if name in from_build or name in _CUDA_HEADER_GUARDS or not _reserved(name)
    }


# CUDA toolkit headers' include guards (rocmlint/data/cuda_header_guards.toml).
_CUDA_HEADER_GUARDS = frozenset(load("cuda_header_guards")["guards"].values())


def _learn_from_cuda_header_guards(files: Mapping[str, FileFacts]) -> Iterator[LearnedMacro]:
    """The include guards of CUDA toolkit headers the project's `#if`s test (`#ifdef __CUDA_RUNTIME_H__`) and no
    project file defines, a file's own guard included (a ROCm shim standing in for `cuda_runtime.h` would): defined
    only where the CUDA header was included, never on ROCm; on NVIDIA, wherever it was."""
    tested = {name for facts in files.values() for name in facts.tested} & _CUDA_HEADER_GUARDS
    defined = {d.name for facts in files.values() for d in facts.defines} | {f.guard for f in files.values()}
    for name in sorted(tested - defined):
        path = next(path for path, facts in files.items() if name in facts.tested)
        why = "a CUDA header's include guard, which no project file defines"
        evidence = MacroEvidence("header", path, None, why)
        yield LearnedMacro(name, "nvidia", MacroState(False, 0), MacroState(None, None), evidence)


def rocm_compiled_under(files: Mapping[str, FileFacts]) -> dict[str, tuple[str, int]]:
    """Macros under which some file tells ROCm apart (`#ifdef USE_CUDA` around `#ifdef __HIP_PLATFORM_AMD__`) ->
    (path, line) of the first such test: ROCm compiles code under them, so none is an NVIDIA-only macro, even when
    a build defines it only in its NVIDIA arm (PyTorch's build defines `USE_CUDA` for its CUDA library, and its
    ROCm build compiles the same sources hipified)."""
    found: dict[str, tuple[str, int]] = {}
    for path, facts in files.items():
        for name, line in facts.rocm_compiled_under:
            found.setdefault(name, (path, line))
    return found


# The macro hipify renames to a HIP spelling the ROCm compiler defines (torch/utils/hipify/cuda_to_hip_mappings.py:
# `__CUDACC__` -> `__HIPCC__`): in a hipified file, ROCm compiles what tests it as NVIDIA does. `CUDA_VERSION` becomes
# `TORCH_HIP_VERSION`, which no torch extension build defines (PyTorch's own: major * 100 + minor, e.g. 602), so
# `#if CUDA_VERSION >= 9000` keeps its non-CUDA arm on ROCm, as in a CMake HIP build: it needs no entry here. (Until
# late 2021, hipify_torch 2022, hipify wrote `HIP_VERSION`, about 4e7: the CUDA arm; ports of then added HIP tests.)
HIPIFY_RENAMED_MACROS = frozenset({"__CUDACC__"})


def rocm_build_values(build: BuildFacts) -> dict[str, str | None]:
    """Every macro the ROCm build defines -> its value text ("1" for a bare `-DNAME`; None when the definitions
    disagree or the value is the build's own variable, `-DVER=$(VER)`): what a ROCm compile of any file sees
    (the files hipify rewrites see `HIPIFY_RENAMED_MACROS` defined too, see CudaProject.view)."""
    values: dict[str, str | None] = {}
    for define in build.defines:
        if define.vendor != "rocm":
            continue
        text = define.value if define.value is not None else "1"
        value = None if "$" in text or values.get(define.name, text) != text else text
        values[define.name] = value
    return values


def rocm_build_decided(build: BuildFacts) -> frozenset[str]:
    """The macros of `rocm_build_values` no other build defines: a test of one is decided for ROCm by the
    project's own build (`-DCUDA_VERSION=11000`), not left to the compiler's defaults.
    `-DHAVE_CUDA=1` in every vendor's build decides nothing about ROCm."""
    elsewhere = {d.name for d in build.defines if d.vendor != "rocm"}
    return frozenset(name for name in rocm_build_values(build) if name not in elsewhere)


def _reserved(name: str) -> bool:
    """Names of the compiler and the standard library (`__CUDA_ARCH__`, `_WIN32`, `NDEBUG`): rocmlint knows
    the vendors' own (rocmlint/cuda/preprocessor.py); a header defining one, an `#if` testing one or its name
    does not make it a gate. The build defining one for one vendor does (`-D__IS_HIP_COMPILE__=1` in a ROCm
    make fragment)."""
    return name.startswith("__") or (name.startswith("_") and name[1:2].isupper()) or name in _STANDARD_MACROS


def _definitions_by_name(files: Mapping[str, FileFacts], guards: set[str]) -> dict[str, list[tuple[str, Definition]]]:
    found: dict[str, list[tuple[str, Definition]]] = {}
    for path, facts in files.items():
        for definition in facts.defines:
            if definition.name not in guards:
                found.setdefault(definition.name, []).append((path, definition))
    return found


def _defined_everywhere(files: Mapping[str, FileFacts]) -> set[str]:
    """Macros some file defines outside any vendor branch: a value, not a vendor test."""
    return {
        d.name
        for f in files.values()
        for d in f.defines
        if d.branch.on_rocm is not False and d.branch.on_nvidia is not False
    }


def _learn_from_headers(files: Mapping[str, FileFacts], guards: set[str]) -> Iterator[LearnedMacro]:
    """A macro every definition of which sits in vendor-decided branches: defined only for one vendor, or with a
    true value on one and a false value on the other."""
    tested = {name for facts in files.values() for name in facts.tested}
    for name, definitions in _definitions_by_name(files, guards).items():
        if name not in tested:
            continue  # a macro no `#if` tests gates nothing (a remap is an alias, see FileView.aliases)
        rocm = _state([d for _, d in definitions], "rocm")
        nvidia = _state([d for _, d in definitions], "nvidia")
        vendor = _deciding_vendor(rocm, nvidia)
        if vendor is None:
            continue
        path, definition = next(
            (
                (p, d)
                for p, d in definitions
                if (d.branch.on_rocm if vendor == "rocm" else d.branch.on_nvidia) is not False
            ),
            definitions[0],
        )
        condition = "ROCm" if vendor == "rocm" else "NVIDIA"
        own, other = (rocm, nvidia) if vendor == "rocm" else (nvidia, rocm)
        why = f"defined under a {condition}-only condition"
        if other.defined is True and own.value is None:  # a feature flag the other vendor defines as 0
            why += f", as 0 for {'NVIDIA' if vendor == 'rocm' else 'ROCm'}"
        on_vendor = [(d.branch.on_rocm if vendor == "rocm" else d.branch.on_nvidia, d) for _, d in definitions]
        deciding = [d for reached, d in on_vendor if reached is not False]
        through_compiler = bool(deciding) and all(d.compiler_decided for d in deciding)
        evidence = MacroEvidence("header", path, definition.line, why, through_compiler)
        yield LearnedMacro(name, vendor, rocm, nvidia, evidence)


def _learn_from_compile_options(files: Mapping[str, FileFacts]) -> Iterator[LearnedMacro]:
    """A macro `#if`s test that the program's own run-time compile commands define (`"--define-macro=XYZ_CUDA_ARCH="
    + cc` in the `#if defined(XYZ_CUDA)` arm of a JIT, `"...ROCM_ARCH="` in its `#elif defined(XYZ_ROCM)` arm) in
    one vendor's arms only: the kernel headers testing it are compiled by those commands, so its arms split by
    vendor as a build's `-D` would (`learn_from_build`). A command outside vendor arms decides nothing."""
    tested = {name for facts in files.values() for name in facts.tested}
    by_name: dict[str, list[tuple[str, Definition]]] = {}
    for path, facts in sorted(files.items()):
        for definition in facts.option_defines:
            if definition.name in tested:
                by_name.setdefault(definition.name, []).append((path, definition))
    for name, definitions in by_name.items():
        rocm = _state([d for _, d in definitions], "rocm")
        nvidia = _state([d for _, d in definitions], "nvidia")
        vendor = _deciding_vendor(rocm, nvidia)
        if vendor is None:
            continue
        path, definition = definitions[0]
        why = f"the program's {_vendor_name(vendor)} kernel compile command defines it"
        yield LearnedMacro(name, vendor, rocm, nvidia, MacroEvidence("build", path, definition.line, why))


def _state(definitions: list[Definition], vendor: str) -> MacroState:
    reached = [(d.branch.on_rocm if vendor == "rocm" else d.branch.on_nvidia, d) for d in definitions]
    seen = [d for r, d in reached if r is not False]
    if not seen:
        return MacroState(False, 0)
    values = {parse_int(d.value) if d.value is not None else None for d in seen}
    value = values.pop() if len(values) == 1 else None
    defined: Tri = True if any(r is True for r, _ in reached) else None
    return MacroState(defined, value)


def _deciding_vendor(rocm: MacroState, nvidia: MacroState) -> str | None:
    if rocm.defined is False and nvidia.defined is not False:
        return "nvidia"
    if nvidia.defined is False and rocm.defined is not False:
        return "rocm"
    if rocm.defined is True and nvidia.defined is True and rocm.value is not None and nvidia.value is not None:
        if bool(rocm.value) != bool(nvidia.value):
            return "rocm" if rocm.value else "nvidia"
    # A feature flag one vendor defines as 0 and the other as an expression (`#define NVLS_AVAILABLE
    # (CUDART_VERSION >= 12030)` beside `#define NVLS_AVAILABLE 0` for HIP): only the other can have the feature.
    if rocm.defined is True and nvidia.defined is True and (rocm.value == 0) != (nvidia.value == 0):
        if rocm.value is None or nvidia.value is None:
            return "nvidia" if rocm.value == 0 else "rocm"
    # A flag one vendor's build certainly defines as 0 while the other's may give it a true value (`#if
    # defined(__CUDA_ARCH__) #define XYZ_DEVICE_PASS_CUDA 1 #else #define XYZ_DEVICE_PASS_CUDA 0`): only the other
    # ever enters `#if XYZ_DEVICE_PASS_CUDA`, in every file, those that do not include the header too.
    if rocm.defined is True and rocm.value == 0 and nvidia.defined is not False and nvidia.value is None:
        return "nvidia"
    if nvidia.defined is True and nvidia.value == 0 and rocm.defined is not False and rocm.value is None:
        return "rocm"
    return None


def _learn_from_arms(files: Mapping[str, FileFacts]) -> Iterator[LearnedMacro]:
    votes: dict[str, dict[str, tuple[str, int]]] = {}
    for path, facts in files.items():
        for name, vendor, line in facts.arm_votes:
            votes.setdefault(name, {}).setdefault(vendor, (path, line))
    for name, by_vendor in votes.items():
        if len(by_vendor) != 1:
            continue  # arms disagree: not decided by its uses
        vendor, (path, line) = next(iter(by_vendor.items()))
        why = f"its #if arms are written for {_vendor_name(vendor)}"
        yield _flag(name, vendor, MacroEvidence("arms", path, line, why))


def _learn_from_order(files: Mapping[str, FileFacts], learned: Mapping[str, LearnedMacro]) -> Iterator[LearnedMacro]:
    """A macro whose name says NVIDIA, or another accelerator (`XYZ_USE_SYCL`), that a chain tests before a ROCm
    macro (`#if defined(XYZ_USE_CUDA) ... #elif defined(XYZ_USE_HIP)`, where `XYZ_USE_HIP` is ROCm's by stronger
    evidence than its name, or rocmlint's own): a ROCm build defining it would never compile its own arm, so the
    project's design leaves it undefined there. Stronger than the name alone (`decided_by_project_macros` trusts it).
    Another accelerator's macro is learned as that accelerator's (vendor "other"): undefined on ROCm, unknown on
    NVIDIA."""
    well_known = VendorMacros()
    found: dict[str, tuple[str, str, str, int]] = {}
    for path, facts in sorted(files.items()):
        for name, later, line in facts.tested_before:
            if name in found or not _may_be_a_flag(name):
                continue
            side = vendor_of_words(name) or ("other" if names_another_accelerator(name) else None)
            if side not in ("nvidia", "other"):
                continue
            macro = learned.get(later)
            rocm_by_evidence = macro is not None and macro.vendor == "rocm" and macro.evidence.kind != "name"
            if rocm_by_evidence or (macro is None and well_known.is_rocm_side(later)):
                found[name] = (str(side), later, path, line)
    for name, (side, later, path, line) in found.items():
        evidence = MacroEvidence("arms", path, line, f"an #if chain tests it before the ROCm macro {later}")
        if side == "nvidia":
            yield _flag(name, "nvidia", evidence)
        else:
            yield LearnedMacro(name, "other", MacroState(False, 0), MacroState(None), evidence)


def _learn_from_twins(files: Mapping[str, FileFacts]) -> Iterator[LearnedMacro]:
    """A macro whose name says NVIDIA by one backend word (`LIBX_ENABLE_CUDA`) while the project also tests its twin,
    the same name with a ROCm word there (`LIBX_ENABLE_HIP`): the pair selects a backend (the project's or a
    dependency's configuration header), so a ROCm build defines the twin and not the NVIDIA switch. Stronger than the
    name alone, which may mean "CUDA or HIP" (`USE_CUDA_GRAPHS`). Not when a chain tests the twin first (`#if
    X_USE_HIP ... #elif X_USE_CUDA`, as where a ROCm build defines both); a macro ROCm compiles code under is still
    not learned (`learn`)."""
    tested = {name for facts in files.values() for name in facts.tested}
    after_its_twin = {(later, first) for facts in files.values() for first, later, _ in facts.tested_before}
    first_use: dict[str, str] = {}
    for path, facts in sorted(files.items()):
        for name in facts.tested:
            first_use.setdefault(name, path)
    for name in sorted(tested):
        if not _may_be_a_flag(name) or vendor_of_words(name) != "nvidia":
            continue
        twins = [twin for twin in rocm_twins(name) if twin in tested]
        if any((name, twin) in after_its_twin for twin in twins):
            continue  # `#if X_USE_HIP ... #elif X_USE_CUDA`: a ROCm build may define both
        twin = twins[0] if twins else None
        if twin is not None:
            why = f"the project also tests its ROCm twin {twin}"
            yield _flag(name, "nvidia", MacroEvidence("arms", first_use[name], None, why))


def _may_be_a_flag(name: str) -> bool:
    """Whether a tested macro may be a vendor flag: not an include guard, a version or an architecture value."""
    return not (_INCLUDE_GUARD_SUFFIX.search(name) or "VERSION" in name.upper() or "ARCH" in name)


def _learn_from_names(files: Mapping[str, FileFacts]) -> Iterator[LearnedMacro]:
    tested = {name for facts in files.values() for name in facts.tested}
    first_use: dict[str, str] = {}
    for path, facts in files.items():
        for name in facts.tested:
            first_use.setdefault(name, path)
    for name in sorted(tested):
        if not _may_be_a_flag(name):
            continue  # version and arch macros are values, not vendor tests; guards are no gates
        vendor = vendor_of_macro_name(name)
        if vendor is not None:
            yield _flag(
                name, vendor, MacroEvidence("name", first_use[name], None, f"its name says {_vendor_name(vendor)}")
            )
        elif (off := vendor_switched_off(name)) is not None:
            yield _switch_off(name, off, first_use[name])


def _switch_off(name: str, off: str, path: str) -> LearnedMacro:
    """A switch whose name turns `off`'s build off (`XYZ_NO_CUDA`), read inverted: the other vendor's flag, so a
    test of it keeps its vendor (`!defined(XYZ_NO_CUDA)` is the NVIDIA side, `!defined(XYZ_NO_HIP)` the ROCm
    side), as `_flag` reads `USE_CUDA`."""
    why = f"its name switches {_vendor_name(off)} off"
    return _flag(name, "rocm" if off == "nvidia" else "nvidia", MacroEvidence("name", path, None, why))


def _flag(name: str, vendor: str, evidence: MacroEvidence) -> LearnedMacro:
    """A macro defined (as `-DNAME`, value 1) on `vendor`'s build only."""
    on = MacroState(True, 1)
    off = MacroState(False, 0)
    return LearnedMacro(name, vendor, on if vendor == "rocm" else off, on if vendor == "nvidia" else off, evidence)


def _vendor_name(vendor: str) -> str:
    return "ROCm" if vendor == "rocm" else "NVIDIA"
