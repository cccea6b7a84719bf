"""What a project's build files say about C++ macros and the vendors it builds for.

Read from setup.py (CPython's `ast`), CMake files and Makefiles (line by line), never executed:
- **macros each build defines**: a `-DNAME` or `define_macros` entry in setup.py, `add_compile_definitions`,
  `add_definitions`, `target_compile_definitions` in CMake, a `-D` flag in a Makefile or make fragment, each with the
  vendor of the branch it sits in (a setup.py `if torch.version.hip:` / `if IS_HIP_EXTENSION:` arm, a CMake
  `if(USE_ROCM)` / `if(HIP_FOUND)` block, a CMake file that builds the HIP language, a `hip_64bit.mk` fragment or an
  `ifeq ($(ROCM), true)` block) or None when it is defined whatever the vendor;
- **sources each build compiles**, per vendor, and those a ROCm branch removes (`list(REMOVE_ITEM ...)`);
- **how the project builds**: torch extensions (`CUDAExtension`, hipified at build time on ROCm), CMake HIP
  (`enable_language(HIP)`, `hip_add_library`), CMake CUDA, nvcc.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import NamedTuple

from rocmlint.cuda.automake import automake_arm_vendors, distributed_only, is_automake_file
from rocmlint.cuda.cmake_filelists import bzl_list_read, bzl_strings, bzl_text
from rocmlint.cuda.cmake_projects import unadded_projects, unread_cmake_files
from rocmlint.cuda.cmake_unrun import RUNS_EVERYTHING, RunTracker, UnrunCmake, unrun_cmake
from rocmlint.cuda.make_variables import MAKE_ASSIGNMENT, vendors_reading

# Words in a build condition or a macro name that mean the ROCm side, the NVIDIA side, or another accelerator.
ROCM_WORDS = frozenset({"HIP", "ROCM", "HCC", "AMD", "AMDGPU", "HIPBLAS", "HIPBLASLT", "HIPCC", "HIPIFY", "ROCBLAS"})
NVIDIA_WORDS = frozenset(
    {
        "CUDA",
        "CUDATOOLKIT",  # CMake's `find_package(CUDAToolkit)`: `CUDAToolkit_FOUND`
        "NVCC",
        "NV",
        "NVIDIA",
        "NVGPU",  # the NVIDIA twin of AMDGPU: `#ifdef USE_NVGPU ... #elif defined USE_AMDGPU`
        "CUBLAS",
        "CUBLASLT",
        "CUDNN",
        "CUTLASS",
        "NVRTC",
        "CUSPARSE",
        "CUSOLVER",
        "CUFFT",
        "CURAND",
        "NVSHMEM",
        "NVTX",
        "OPTIX",  # NVIDIA's ray-tracing engine: no ROCm build (HIP RT is AMD's)
        "CUVS",  # NVIDIA's RAPIDS vector search (`if(XYZ_ENABLE_CUVS)`): CUDA-only, no ROCm build
    }
)
# NVIDIA-only libraries with no ROCm build of their own (ROCm's are rocprofiler/roctracer and amdsmi): a macro named
# for one switches on code using it (`NUMA_NVML`, `XYZ_USE_CUPTI`), while a build condition naming one
# (`if(NVML_LIB_PATH)`) may pick a file that serves both vendors.
NVIDIA_LIBRARY_WORDS = frozenset({"CUPTI", "NVML"})
OTHER_ACCELERATOR_WORDS = frozenset(
    {"MUSA", "SYCL", "XPU", "CPU", "METAL", "VULKAN", "OPENCL", "CANN", "NPU", "MPS", "KOMPUTE", "ONEAPI", "MLU"}
)
_WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")


def vendor_of_words(text: str) -> str | None:
    """ "rocm" or "nvidia" when the words of `text` (a macro name, a build condition) name one side only and no
    other accelerator; None otherwise. `GGML_USE_HIPBLAS` is ROCm's, `USE_CUDA` NVIDIA's, `USE_MUSA` neither; a HIP
    platform name is its platform's (`XYZ_HIP_PLATFORM_NVCC`, HIP on NVIDIA, is NVIDIA's)."""
    ordered = [word.upper() for word in _WORD_SPLIT.split(text) if word]
    words = set(ordered)
    if words & OTHER_ACCELERATOR_WORDS:
        return None
    if "PLATFORM" in ordered[:-1]:  # HIP's platform (`XYZ_HIP_PLATFORM_NVCC`: HIP on NVIDIA) is the word after
        platform = ordered[ordered.index("PLATFORM") + 1]
        if platform in NVIDIA_WORDS:
            return "nvidia"
        if platform in ROCM_WORDS:
            return "rocm"
    # HIP compiled for NVIDIA (`FF_USE_HIP_CUDA`, a `"hip_cuda"` backend) is NVIDIA's side, unless the text names
    # ROCm otherwise too (`"hip_cuda" OR "hip_rocm"`). A vendor word a negation switches off (`XYZ_NO_CUDA`) names
    # no build of that vendor: see `vendor_switched_off`.
    words = {
        word for i, word in enumerate(ordered) if not _hip_before_nvidia(ordered, i) and not _switched_off(ordered, i)
    }
    rocm = bool(words & ROCM_WORDS) or any(w.startswith(("HIP", "ROCM")) and len(w) > 3 for w in words)
    nvidia = bool(words & NVIDIA_WORDS)
    if rocm == nvidia:
        return None
    return "rocm" if rocm else "nvidia"


# Words that switch the vendor word right after them off (`XYZ_NO_CUDA`, `XYZ_DISABLE_HIP`, `WITHOUT_ROCM`).
_SWITCH_OFF_WORDS = frozenset({"NO", "DISABLE", "WITHOUT"})


def vendor_switched_off(name: str) -> str | None:
    """The vendor a macro's name switches off (`XYZ_NO_CUDA`: NVIDIA, `XYZ_DISABLE_HIP`: ROCm) when it switches off
    one vendor only and names no other accelerator; None otherwise. A build for that vendor leaves such a switch
    undefined (defining it would turn off what the build is for), so `!defined(XYZ_NO_CUDA)` holds there."""
    ordered = [word.upper() for word in _WORD_SPLIT.split(name) if word]
    if set(ordered) & OTHER_ACCELERATOR_WORDS:
        return None
    off = {_word_vendor(ordered[index]) for index in range(len(ordered)) if _switched_off(ordered, index)}
    return off.pop() if len(off) == 1 and None not in off else None


def _switched_off(ordered: list[str], index: int) -> bool:
    """Whether `ordered[index]` is a vendor word a negation switches off as a whole: `NO_CUDA`, `DISABLE_HIP_SUPPORT`;
    not one feature of it (`NO_CUDA_GRAPHS` leaves CUDA on). Another vendor may follow (`NO_CUDA_NO_HIP`)."""
    return (
        index > 0
        and ordered[index - 1] in _SWITCH_OFF_WORDS
        and _word_vendor(ordered[index]) is not None
        and all(w in _WHOLE_VENDOR_WORDS | _SWITCH_OFF_WORDS or _word_vendor(w) for w in ordered[index + 1 :])
    )


# Words after a vendor word that still name the whole vendor (`WITHOUT_ROCM_SUPPORT`, `NO_CUDA_BACKEND`).
_WHOLE_VENDOR_WORDS = frozenset({"SUPPORT", "BACKEND", "GPU", "BUILD"})


def _word_vendor(word: str) -> str | None:
    """The vendor a platform word names; a library's (`NO_HIPBLASLT`, `NO_CUDNN`: a build of that vendor without
    the library) names none here."""
    if word in _NVIDIA_PLATFORM_WORDS:
        return "nvidia"
    return "rocm" if word in _ROCM_PLATFORM_WORDS else None


_ROCM_PLATFORM_WORDS = frozenset({"HIP", "ROCM", "HCC", "AMD", "AMDGPU", "HIPCC"})


def names_another_accelerator(text: str) -> bool:
    """Whether the words of `text` (a macro name) name another accelerator's build (`XYZ_USE_SYCL`, `USE_MUSA`); a
    CPU feature switch does not (`USE_CPU_AVX2` holds in a ROCm build too)."""
    words = {word.upper() for word in _WORD_SPLIT.split(text) if word}
    return bool(words & (OTHER_ACCELERATOR_WORDS - {"CPU"}))


# The words after `HIP` that name NVIDIA as the platform HIP compiles for.
_NVIDIA_PLATFORM_WORDS = frozenset({"CUDA", "NVCC", "NVIDIA", "NV"})


def names_hip_on_nvidia(text: str) -> bool:
    """Whether `text` (a macro name, a build condition) names HIP compiled for NVIDIA by the word right after `HIP`:
    `FF_USE_HIP_CUDA`, a `"hip_cuda"` backend beside `"hip_rocm"`, `HIP_NVCC`. nvcc compiles that build."""
    ordered = [word.upper() for word in _WORD_SPLIT.split(text) if word]
    return any(_hip_before_nvidia(ordered, index) for index in range(len(ordered)))


def hip_on_nvidia_as_nvidia(define: BuildDefine) -> BuildDefine:
    """`define`, NVIDIA's when the ROCm side's flags hold it but its name says HIP compiled for NVIDIA
    (`-DFF_USE_HIP_CUDA` in `FF_HIPCC_FLAGS`, or under `ifeq ($(USE_HIP),1)`): nvcc compiles that build."""
    if define.vendor == "rocm" and names_hip_on_nvidia(define.name):
        return replace(define, vendor="nvidia")
    return define


def _hip_before_nvidia(ordered: list[str], index: int) -> bool:
    return ordered[index] == "HIP" and index + 1 < len(ordered) and ordered[index + 1] in _NVIDIA_PLATFORM_WORDS


# Words of a build condition that hold only where no ROCm build runs: another accelerator's build (a CPU feature
# switch is no such build: `USE_CPU_AVX2` holds in a ROCm build too) or a Windows toolchain.
_ELSEWHERE_WORDS = (OTHER_ACCELERATOR_WORDS - {"CPU"}) | {"WIN32", "MSVC", "WINDOWS"}


def runs_elsewhere(condition: str) -> bool:
    """Whether a build condition (a CMake `if()` argument, a setup.py test) holds only in builds for another
    accelerator or for Windows: `if(USE_SYCL)`, `if(WIN32)`, `if(USE_MUSA AND FOUND)`, `if(USE_XPU OR USE_NPU)`; not
    one negating it (`NOT WIN32`) nor one a disjunct of which may hold elsewhere (`USE_SYCL OR WITH_GPU`). The
    definitions made in such an arm are none of a (Linux) ROCm build's, nor of the NVIDIA build it is compared with."""
    disjuncts = re.split(r"\s+(?:OR|or)\s+", condition.strip())
    return all(any(_one_elsewhere(term) for term in re.split(r"\s+(?:AND|and)\s+", d)) for d in disjuncts)


def _one_elsewhere(term: str) -> bool:
    words = {word.upper() for word in _WORD_SPLIT.split(term) if word}
    if words & {"NOT", "ELSE"} or words & (ROCM_WORDS | NVIDIA_WORDS):
        return False
    return bool(words & _ELSEWHERE_WORDS)


def vendor_of_macro_name(name: str) -> str | None:
    """`vendor_of_words` for a macro's name, where an NVIDIA-only library's name (`NVIDIA_LIBRARY_WORDS`) says
    NVIDIA too."""
    vendor = vendor_of_words(name)
    if vendor is not None:
        return vendor
    words = {word.upper() for word in _WORD_SPLIT.split(name) if word}
    return "nvidia" if words & NVIDIA_LIBRARY_WORDS and not words & (OTHER_ACCELERATOR_WORDS | ROCM_WORDS) else None


def _other_vendor(vendor: str | None) -> str | None:
    """The vendor an `else` arm of a block testing `vendor` is written for (None when the test names none)."""
    return {"rocm": "nvidia", "nvidia": "rocm"}.get(vendor or "")


@dataclass(frozen=True)
class BuildDefine:
    """A macro a build file defines, and for which vendor's build (None: whatever the vendor)."""

    name: str
    value: str | None  # None for a bare `-DNAME` (1)
    vendor: str | None
    path: str
    line: int


@dataclass(frozen=True)
class SourceSet:
    """Sources a build file compiles (a path or glob relative to the build file's folder, `**` for any depth), and
    for which vendor's build (None: whatever the vendor)."""

    pattern: str
    vendor: str | None
    path: str
    line: int
    removed: bool = False  # `list(REMOVE_ITEM SOURCES ...)`: the build takes these out of a list it compiles
    variable: str = ""  # the list variable it sets, extends or removes from (`SOURCES`), "" for a target's own
    # Why no build compiles these ("" when one may): named in CMake code that never runs, or in a list nothing reads
    # (rocmlint/cuda/cmake_unrun.py).
    unbuilt: str = ""
    # Named by a CMake project of its own below the checked root that only nvcc builds (`_nested_cuda_alone_project`,
    # an example shipped beside the product): a build of its own, as a sample's script is.
    standalone: bool = False


@dataclass(frozen=True)
class NativeModule:
    """A Python extension module a build file builds (`CUDAExtension("pkg._C", ...)` in a setup.py,
    `pybind11_add_module(fused_ops ...)` in CMake), and for which vendor's build (None: whatever the vendor)."""

    name: str  # the module's import name as the build gives it (`pkg._C`; a CMake target's name has no package)
    vendor: str | None
    path: str
    line: int
    # The folders of its sources as the build file names them (beside the build file's folder: `csrc/fp4`), the
    # fixed part of a glob's; a source the file cannot place is left out.
    source_folders: tuple[str, ...] = ()
    # Declared by a CMake project of its own below the checked root that only nvcc builds
    # (`_nested_cuda_alone_project`): its folder holds the extension's package, tests and benchmarks.
    nested_project: bool = False


@dataclass(frozen=True)
class BuildFacts:
    defines: tuple[BuildDefine, ...] = ()
    sources: tuple[SourceSet, ...] = ()
    torch_extension: bool = False  # CUDAExtension / BuildExtension: hipified at build time on ROCm
    hipify: str = ""  # "path:line: why" when the build runs hipify over the sources (torch extensions do)
    hip_language: bool = False  # CMake builds HIP (enable_language(HIP), hip_add_library, LANGUAGES HIP)
    cuda_language: bool = False  # CMake or setup.py builds CUDA with nvcc
    files: tuple[str, ...] = ()  # the build files these facts were read from
    # Folders of the setup.py files that build torch CUDAExtensions: on ROCm, hipify rewrites every source and
    # header under them (a hipify run a CMake build makes covers the folders it names, not known here).
    extension_folders: tuple[str, ...] = ()
    # Build files that branch for ROCm without defining or listing anything there (a Bazel `select()` whose ROCm
    # key adds nothing): their build system builds ROCm too.
    rocm_branches: tuple[str, ...] = ()
    # "path:line: what it runs" of the first statement of each arm a Python build file runs only for ROCm (`if
    # torch.version.hip:`, `elif ROCM_VERSION:`; not one that refuses or only reports ROCm): its build has a ROCm
    # path already.
    rocm_arms: tuple[str, ...] = ()
    # Folders a CMake build puts on the include path (`target_include_directories`, `include_directories`), each
    # as a source set whose pattern is the folder, with the vendor of the block adding it.
    include_folders: tuple[SourceSet, ...] = ()
    native_modules: tuple[NativeModule, ...] = ()
    # (folder, why) of each nested CMake project the build never adds (rocmlint/cuda/cmake_projects.py): no build of
    # the project compiles its sources, and its CMake files were not read.
    unadded_projects: tuple[tuple[str, str], ...] = ()
    # "path:line" of a build file handing host-suffixed sources (`.cpp`) to a CUDA compiler, "" when none does
    # (see `host_sources_as_cuda`); a make file in a folder of its own naming no file outside it is not one: its folder
    # is one of `host_sources_as_cuda_in`.
    host_sources_as_cuda: str = ""
    host_sources_as_cuda_in: tuple[str, ...] = ()  # the folders whose `.cpp` sources such make files hand to nvcc
    # (folder, "path:line: why") per folder a build's own hipify step rewrites for ROCm (a Makefile pattern rule
    # `out_hip/%.cpp: src/%.cpp` running a hipify tool): the ROCm build compiles hipify's copies of its files, and
    # only of its files (the rest of the tree it compiles as written).
    hipify_folders: tuple[tuple[str, str], ...] = ()
    make_source_lists: tuple[MakeSourceList, ...] = ()
    # "path:line" of a build file naming a hipify tool it runs itself (`hipify_torch`, `hipify-perl`,
    # `hipify_python.hipify(...)`), "" when none does: such a run may pass maps of its own (a custom map renaming
    # `nvtx3/nvToolsExt.h`), so what it renames is the whole header table, not torch's extension build's.
    hipify_tool: str = ""
    # The modules CMake files read (`include(deps)`, `find_package(Nccl)`: the first argument as written, the
    # command as `variable`), each with the vendor of the code around it: a module read only in NVIDIA code is
    # NVIDIA's as a whole (`cmake_facts`'s `included_for`).
    module_uses: tuple[SourceSet, ...] = ()
    # File-name globs of every source a build file or Python module mentions, placed or not: each source name a
    # CMake file spells (in a generator expression, after a variable: `${PROJECT_SOURCE_DIR}/src/k.cu` is `k.cu`),
    # a variable in it a `*` (`${name}.cu`, `file(GLOB S ${DIR}/*.cu)`: `*.cu`; `aux_source_directory`: `*`); the
    # names a shell script compiles from wherever it runs (`g++ play.cpp`, not for NVIDIA only); a Python module's
    # quoted source names (a kernel it compiles at run time, `file="allreduce.cu"`); `*` for a build system the
    # model does not read (`meson.build`, a Buck `TARGETS`); the header names a CMake file spells, and every header
    # suffix for one installing headers. Any project file of such a name may be one a build compiles.
    mentioned_names: tuple[str, ...] = ()
    # Combinations of configure-header switches a CMake `message(FATAL_ERROR ...)` refuses with ROCm, each with
    # "path:line" of the refusal (rocmlint/cuda/cmake_refusals.py): no ROCm compile sees one.
    rocm_refused: tuple[tuple[frozenset[tuple[str, bool]], str], ...] = ()


@dataclass(frozen=True)
class MakeSourceList:
    """The file names of the sources a Makefile or make fragment names one by one (`$(cdir)/zgemm.cpp`, `k.cu`,
    wherever the variable before them points), and the folders its globs may take sources from, each with every
    folder below it (`$(wildcard src/*.cu)`: `src`; a glob through a variable or `$(shell find ...)`: the
    Makefile's own folder), absolute."""

    path: str
    line: int  # the first line naming a source
    names: frozenset[str]
    globbed: tuple[str, ...]
    objects: frozenset[str] = frozenset()  # the stems of the object files it names (`scan.o`: `scan`)


def nvidia_only_native_folders(build: BuildFacts) -> dict[str, str]:
    """The folders holding the sources of an extension module the build builds for NVIDIA only (see
    `nvidia_only_native_modules`) -> "path:line" of its declaration: the deepest folder holding all its sources,
    when it is below the declaring build file's folder and holds no source of another extension module; or the
    folder of the nested CUDA-only project declaring it. The scripts there (its benchmarks and tests, which nothing
    imports) need the module."""
    nvidia_only = nvidia_only_native_modules(build)
    others = [folder for m in build.native_modules if m.name not in nvidia_only for folder in m.source_folders]
    found: dict[str, str] = {}
    for module in build.native_modules:
        if module.name in nvidia_only and module.nested_project:
            found.setdefault(os.path.dirname(module.path) or os.curdir, nvidia_only[module.name])
            continue
        if module.name not in nvidia_only or not module.source_folders:
            continue
        folder = os.path.commonpath(module.source_folders)
        below_build_file = _is_below(folder, os.path.dirname(module.path) or os.curdir)
        if below_build_file and not any(other == folder or _is_below(other, folder) for other in others):
            found.setdefault(folder, nvidia_only[module.name])
    return found


def _is_below(path: str, folder: str) -> bool:
    """`path` sits strictly below `folder`."""
    relative = os.path.relpath(path, folder)
    return relative != os.curdir and relative != os.pardir and not relative.startswith(os.pardir + os.sep)


def nvidia_only_native_modules(build: BuildFacts) -> dict[str, str]:
    """The extension modules the build builds for NVIDIA only -> "path:line" of the first declaration: every
    declaration of the name sits in an NVIDIA arm (`if(NOT USE_ROCM)`, `if not IS_HIP:`), so importing the
    module fails on a ROCm install."""
    declared: dict[str, list[NativeModule]] = {}
    for module in build.native_modules:
        declared.setdefault(module.name, []).append(module)
    return {
        name: f"{modules[0].path}:{modules[0].line}"
        for name, modules in sorted(declared.items())
        if all(module.vendor == "nvidia" for module in modules)
    }


# --- setup.py ---------------------------------------------------------------------------------------------------
_DASH_D = re.compile(r"^-D\s*([A-Za-z_]\w*)(?:=(.*))?$")


def setup_py_facts(path: str, text: str, root: str = "") -> BuildFacts:
    """The macros a setup.py defines per vendor, and whether it builds torch CUDA extensions. `root`: the checked
    root, below which a setup.py of its own may build an NVIDIA-only project (`_nested_nvidia_linked_project`)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return BuildFacts()
    nodes = list(_with_vendor(tree, None))  # walked once: each fact below reads every node with its arm's vendor
    assignments = _assignments(tree)
    through_a_name = _extension_through_a_name(tree, path)
    natives = _setup_native_modules(nodes, assignments, path)
    if _nested_nvidia_linked_project(path, root, nodes, text):
        natives = (replace(module, vendor="nvidia", nested_project=True) for module in natives)
    return BuildFacts(
        defines=tuple(_setup_defines(nodes, path)),
        sources=tuple(_setup_sources(nodes, assignments, path)),
        torch_extension=_TORCH_EXTENSION.search(text) is not None,
        hipify=_hipify_evidence(path, text) or through_a_name,
        hipify_tool=hipify_tool_run(path, text),
        cuda_language="nvcc" in text,
        extension_folders=(os.path.dirname(path),) if through_a_name or _EXTENSION_CALL.search(text) else (),
        native_modules=tuple(natives),
        rocm_arms=tuple(_rocm_arms(tree, path)),
    )


# A linker flag naming a library only NVIDIA's driver or toolkit installs (`-lcuda`, `-lcudart`, `-lcublasLt`,
# `-lnvrtc`): ROCm has none of them, so a ROCm build of an extension linking one fails at link time.
_NVIDIA_LIBRARY_FLAG = re.compile(
    r"^-l(?:cuda|cudart|cudart_static|nvrtc|nvidia-ml|cu(?:blas|fft|rand|sparse|solver|dnn)\w*)$"
)


def _nested_nvidia_linked_project(path: str, root: str, nodes: list[tuple[ast.AST, str | None]], text: str) -> bool:
    """A setup.py of its own below the checked root (a kernel package shipped beside the product) that links an
    NVIDIA-only library outside any vendor arm (`extra_link_args=["-lcuda"]`) and names no ROCm or HIP anywhere:
    its extensions cannot be built on ROCm, so they exist only in NVIDIA installs, as a nested CUDA-only CMake
    project's do (`_nested_cuda_alone_project`). Not the root's own setup.py: that is the project being ported."""
    if not root or os.path.dirname(os.path.abspath(path)) == os.path.abspath(root):
        return False
    if not ROCM_WORDS.isdisjoint(word.upper() for word in _WORD_SPLIT.split(text)):
        return False
    return any(
        vendor is None
        and isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _NVIDIA_LIBRARY_FLAG.match(node.value.strip()) is not None
        for node, vendor in nodes
    )


# What a ROCm arm may call without building anything for ROCm: report, warn, give up.
_NOT_BUILDING = frozenset({"print", "warn", "warning", "exit", "abort", "error"})


def _rocm_arms(tree: ast.Module, path: str) -> Iterator[str]:
    """ "path:line: `statement`" of the statements a setup.py runs only in an arm whose test names ROCm (`if
    torch.version.hip:`, `elif ROCM_VERSION:`, the `else` of `if not IS_HIP_EXTENSION:`) and that do something
    for the ROCm build (set a flag, a version, a source list): not `raise`, `pass`, nor a call that only prints,
    warns or exits (`if torch.version.hip: raise RuntimeError("ROCm is not supported")` is no ROCm build). The `else`
    of an NVIDIA test (`if CUDA_HOME is None:`) is no ROCm arm here: a build without a CUDA toolkit is as often
    a CPU build."""
    for node in ast.walk(tree):
        if isinstance(node, ast.IfExp) and _names_vendor(node.test, "rocm") and not _test_elsewhere(node.test):
            yield from _rocm_value_arm(node, path)
        if not isinstance(node, ast.If) or not _names_vendor(node.test, "rocm") or _test_elsewhere(node.test):
            continue
        body_vendor, else_vendor = _arm_vendors(node.test)
        arm: list[ast.AST] = list(node.body if body_vendor == "rocm" else node.orelse if else_vendor == "rocm" else [])
        if _tests_vendor(arm, "nvidia"):
            continue  # a GPU switch holding its own vendor tests (see `_with_vendor`)
        for statement in (inner for top in arm for inner in ast.walk(top)):
            if isinstance(statement, ast.stmt) and _builds(statement):
                test, text = ast.unparse(node.test)[:60], ast.unparse(statement).splitlines()[0][:60]
                yield f"{path}:{statement.lineno}: the ROCm arm of `if {test}:` runs `{text}`"
                break


def _rocm_value_arm(choice: ast.IfExp, path: str) -> Iterator[str]:
    """ "path:line: ..." when a conditional expression gives ROCm a flag list or text of its own (`flags +
    (["-DUSE_ROCM"] if torch.version.hip else [])`): the ROCm build is given something to build with."""
    body_vendor, else_vendor = _arm_vendors(choice.test)
    value = choice.body if body_vendor == "rocm" else choice.orelse if else_vendor == "rocm" else None
    if (isinstance(value, ast.List | ast.Tuple) and value.elts) or (isinstance(value, ast.Constant) and value.value):
        test, text = ast.unparse(choice.test)[:60], ast.unparse(value)[:60]
        yield f"{path}:{choice.lineno}: the ROCm arm of `... if {test} else ...` gives `{text}`"


def _names_vendor(test: ast.expr, vendor: str) -> bool:
    """Whether a setup.py test reads a name of `vendor` (`torch.version.hip`, `ROCM_HOME`, `os.getenv("ROCM_PATH")`),
    whichever way."""
    return any(
        isinstance(name, ast.Name | ast.Attribute | ast.Call)
        and vendor_of_words(ast.unparse(name).replace(".", "_")) == vendor
        for name in ast.walk(test)
    )


def _builds(statement: ast.stmt) -> bool:
    """Whether a statement may do something for the build (`flags.append("-DUSE_ROCM")`, `version += "+rocm"`),
    not only report."""
    if isinstance(statement, ast.Assign | ast.AugAssign | ast.AnnAssign):
        return True
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return False
    call = statement.value
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    return name not in _NOT_BUILDING


# torch's JIT builds: `torch.utils.cpp_extension.load(name, sources=[...])` and `load_inline(...)` hipify their
# sources on ROCm as a `CUDAExtension` does.
_JIT_LOADERS = frozenset({"load", "load_inline"})
_CPP_EXTENSION = "torch.utils.cpp_extension"
_LOADER_CALL = re.compile(rb"\bload(?:_inline)?\s*\(")


def quoted_sources(text: bytes) -> list[bytes]:
    """The quoted source paths of a Python module (`"csrc/k.cu"`, `file="allreduce.cu"`)."""
    return _QUOTED_SOURCE.findall(text)


def may_build_jit_extension(
    path: str,
    text: bytes,
    exists: Callable[[str], bool] = os.path.isfile,
    is_folder: Callable[[str], bool] = os.path.isdir,
) -> bool:
    """Whether a Python file may build a torch JIT extension (`jit_extension_facts` says): a cheap test on its
    bytes before any parse, which also wants a quoted source path beside the module that exists, or a quoted glob
    of sources whose folder does (`"csrc/*.cu"`): the folder the build hipifies is found from those; a module
    naming none, such as torch's own cpp_extension.py, builds none."""
    if b"cpp_extension" not in text or _LOADER_CALL.search(text) is None:
        return False
    folder = os.path.dirname(path)
    return any(
        _names_existing_source(
            os.path.normpath(os.path.join(folder, quoted.decode("utf-8", "replace"))), exists, is_folder
        )
        for quoted in quoted_sources(text)
    )


def _names_existing_source(source: str, exists: Callable[[str], bool], is_folder: Callable[[str], bool]) -> bool:
    """Whether a source path names a file that `exists`, or a glob (`csrc/*.cu`) a folder that `is_folder`."""
    if "*" not in source:
        return exists(source)
    return is_folder(os.path.dirname(source.split("*")[0]) or os.curdir)


def jit_extension_facts(
    path: str,
    text: str,
    exists: Callable[[str], bool] = os.path.isfile,
    is_folder: Callable[[str], bool] = os.path.isdir,
) -> BuildFacts:
    """What a Python module building a torch extension at run time (`from torch.utils.cpp_extension import load`;
    `load(name=..., sources=[...])`, `cpp_extension.load_inline(...)`) says: the folder holding the source files
    its calls name (beside the module, `os.path.join(here, "ext/k.cu")` too; those that `exists`) is hipified on
    ROCm, with the headers there; the `-D` flags of its calls are defined per the vendor of their arm. A call whose
    sources are no list written in it (`sources=params.sources`, a name) compiles the source lists the module builds
    (`sources = glob(os.path.join(here, "csrc/*.cu"))`, `sources += [...]`, `sources.append(...)`): a glob names
    its folder's sources (when `is_folder`). Empty facts for any other module, and no folder for a call naming no
    file (`load_inline` compiles strings)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return BuildFacts()
    # One walk for the imports naming the loaders and the calls that may be theirs (in the walk's order).
    walked = list(ast.walk(tree))
    loaders = _jit_loader_names(node for node in walked if isinstance(node, ast.Import | ast.ImportFrom))
    calls = [node for node in walked if isinstance(node, ast.Call) and _callee_name(node.func) in loaders]
    if not calls:
        return BuildFacts()
    nodes = [pair for call in calls for pair in _with_vendor(call, None)]
    module_lists: list[str] | None = None  # the module's own source lists, read for the first call needing them
    folders: dict[str, str] = {}
    for call in sorted(calls, key=lambda call: call.lineno):
        written = [
            node.value
            for node in ast.walk(call)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(_SOURCE_SUFFIXES)
        ]
        if _sources_built_elsewhere(call):
            if module_lists is None:
                module_lists = [
                    s.pattern for s in _setup_sources(list(_with_vendor(tree, None)), _assignments(tree), path)
                ]
            written += module_lists
        named = [
            os.path.normpath(os.path.join(os.path.dirname(path), source))
            for source in written
            if not source.startswith(ANYWHERE)
        ]
        found = [source for source in named if _names_existing_source(source, exists, is_folder)]
        if found:
            how = ast.unparse(call.func).rsplit(".", 1)[-1]
            why = f"{path}:{call.lineno}: builds a torch extension with cpp_extension.{how} (hipified on ROCm)"
            folders.setdefault(os.path.commonpath([os.path.dirname(source.split("*")[0]) for source in found]), why)
    if not folders:
        return BuildFacts(defines=tuple(_setup_defines(nodes, path)))
    return BuildFacts(
        defines=tuple(_setup_defines(nodes, path)),
        hipify_folders=tuple(folders.items()),
        rocm_arms=tuple(_rocm_arms(tree, path)),
    )


def _sources_built_elsewhere(call: ast.Call) -> bool:
    """Whether a JIT loader call takes its sources from a value built before it (`sources=params.sources`,
    `sources=srcs`, `load(name, get_sources())`), not a list written in the call (`load_inline` takes none)."""
    given = call.args[1:2] or [keyword.value for keyword in call.keywords if keyword.arg == "sources"]
    return bool(given) and not isinstance(given[0], ast.List | ast.Tuple | ast.Constant)


def _callee_name(func: ast.expr) -> str | None:
    """`a.b.c` of a callee written as a Name/Attribute chain, else None (cheaper than unparsing every callee)."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    parts.append(func.id)
    return ".".join(reversed(parts))


def _jit_loader_names(imports: Iterable[ast.Import | ast.ImportFrom]) -> frozenset[str]:
    """How a module spells torch's JIT loaders, from its `imports`: `load` after `from torch.utils.cpp_extension
    import load`, `cpp_extension.load` after `from torch.utils import cpp_extension`, the full dotted name after
    `import torch`."""
    names = {f"{_CPP_EXTENSION}.{loader}" for loader in _JIT_LOADERS}
    for node in imports:
        if isinstance(node, ast.ImportFrom) and node.module == _CPP_EXTENSION:
            names |= {alias.asname or alias.name for alias in node.names if alias.name in _JIT_LOADERS}
        elif isinstance(node, ast.ImportFrom) and node.module == "torch.utils":
            for alias in node.names:
                if alias.name == "cpp_extension":
                    names |= {f"{alias.asname or alias.name}.{loader}" for loader in _JIT_LOADERS}
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == _CPP_EXTENSION and alias.asname:
                    names |= {f"{alias.asname}.{loader}" for loader in _JIT_LOADERS}
    return frozenset(names)


def _setup_native_modules(
    nodes: list[tuple[ast.AST, str | None]], assignments: dict[str, list[ast.expr]], path: str
) -> Iterator[NativeModule]:
    """The extension modules a setup.py declares (`CUDAExtension(name="pkg._C", ...)`, `Extension("pkg._C", ...)`,
    a project's `CMakeExtension(name=...)`), each with the vendor of the arm declaring it and its sources' folders."""
    for node, vendor in nodes:
        if not isinstance(node, ast.Call):
            continue
        called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if not called.endswith("Extension") or called == "BuildExtension":
            continue
        named = node.args[:1] or [keyword.value for keyword in node.keywords if keyword.arg == "name"]
        if named and isinstance(named[0], ast.Constant) and isinstance(named[0].value, str):
            folders = _source_folders(path, _strings(node, assignments, _SOURCE_DEPTH))
            yield NativeModule(named[0].value, vendor, path, node.lineno, folders)


def _assignments(tree: ast.Module) -> dict[str, list[ast.expr]]:
    """The values assigned to each plain name of a setup.py, for following source lists through names."""
    assignments: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assignments.setdefault(target.id, []).append(node.value)
    return assignments


def _source_folders(build_file: str, patterns: Iterable[str]) -> tuple[str, ...]:
    """The folders of the sources `patterns` name beside `build_file` (a glob's fixed part), those of files it cannot
    place (under an unknown folder, `**/k.cu`; a CMake variable) left out."""
    folders: list[str] = []
    for pattern in patterns:
        if not pattern.endswith(_SOURCE_SUFFIXES) or pattern.startswith(ANYWHERE) or "$" in pattern:
            continue
        fixed = pattern.split("*", 1)[0]
        folder = os.path.dirname(fixed) if "*" not in pattern else fixed.rstrip("/")
        folders.append(os.path.normpath(os.path.join(os.path.dirname(build_file), folder)))
    return tuple(dict.fromkeys(folders))


def _setup_defines(nodes: list[tuple[ast.AST, str | None]], path: str) -> Iterator[BuildDefine]:
    for node, vendor in nodes:
        if vendor == _ELSEWHERE:
            continue  # `elif MUSA_HOME is not None: cmake_args += ["-DUSE_MUSA=ON"]`: no ROCm build defines it
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = _DASH_D.match(node.value.strip())
            if match is not None:
                yield BuildDefine(match.group(1), match.group(2), vendor, path, node.lineno)
        elif isinstance(node, ast.Tuple) and len(node.elts) == 2 and _is_define_macros_entry(node):
            name = node.elts[0]
            assert isinstance(name, ast.Constant)
            value = node.elts[1]
            text = value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None
            yield BuildDefine(str(name.value), text, vendor, path, node.lineno)


_SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c", ".hip")
# A quoted path with one of those suffixes: the sources `jit_extension_facts` finds a JIT build's folder from.
_QUOTED_SOURCE = re.compile(
    rb"[\"']([^\"'\n]+(?:" + b"|".join(re.escape(suffix.encode()) for suffix in _SOURCE_SUFFIXES) + rb"))[\"']"
)
# A path's folder the file cannot resolve (a helper's parameter, `csrc_dir / "userbuffers" / "k.cu"`): the path
# names the project file that ends with what follows it (see `ANYWHERE`).
_ANY_FOLDER = "**"
ANYWHERE = "**/"  # a source pattern starting so names files anywhere under the project root
_WRAPPERS = frozenset({"glob", "list", "sorted", "Path", "iglob", "str"})
_SOURCE_LIST = re.compile(r"(?i)sources|srcs|files")
# How many assignments a source list is followed through (`sources += cuda_sources`, `cuda_sources = glob(...)`).
_SOURCE_DEPTH = 4


def _setup_sources(
    nodes: list[tuple[ast.AST, str | None]], assignments: dict[str, list[ast.expr]], path: str
) -> Iterator[SourceSet]:
    """The source paths and globs each vendor's arm of a setup.py adds (`if use_cuda: sources += cuda_sources`),
    followed through assignments, `os.path.join`, `glob.glob` and list concatenation; names the file cannot
    resolve (`this_dir`, `os.getcwd()`) stand for the setup.py folder."""
    for node, arm_vendor in nodes:
        vendor = None if arm_vendor == _ELSEWHERE else arm_vendor
        added: ast.expr | None = None
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            added = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            added = node.args[0] if node.func.attr in ("append", "extend", "add") else None
        elif isinstance(node, ast.Assign) and vendor is None:
            # `sources = glob(...)` is the common list; `cuda_sources = ...` is NVIDIA's by its name.
            names = [t.id for t in node.targets if isinstance(t, ast.Name) and _SOURCE_LIST.search(t.id)]
            added = node.value if names else None
            vendor = vendor_of_words(names[0]) if names else None
        if added is None:
            continue
        line = getattr(node, "lineno", 0)
        for pattern in _strings(added, assignments, _SOURCE_DEPTH):
            # A file name alone under an unknown folder (`csrc / "common.cu"`) could be any of several files.
            unknown_folder_only = pattern.startswith(ANYWHERE) and "/" not in pattern[len(ANYWHERE) :]
            if pattern.endswith(_SOURCE_SUFFIXES) and not unknown_folder_only:
                yield SourceSet(os.path.normpath(pattern) if "*" not in pattern else pattern, vendor, path, line)


def _strings(node: ast.expr, assignments: dict[str, list[ast.expr]], depth: int) -> list[str]:
    if depth <= 0:
        return []
    deeper = depth  # only following a name costs a step
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name):
        values = assignments.get(node.id, ())
        return [text for value in values for text in _strings(value, assignments, depth - 1)]
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [text for element in node.elts for text in _strings(element, assignments, deeper)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _strings(node.left, assignments, deeper) + _strings(node.right, assignments, deeper)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # `csrc / "userbuffers" / "k.cu"` (pathlib)
        heads = _strings(node.left, assignments, deeper) or [_ANY_FOLDER]
        return [os.path.join(head, tail) for head in heads for tail in _strings(node.right, assignments, deeper)]
    if isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name.endswith("Extension"):  # `CUDAExtension(name, sources, ...)`, `Extension(name, sources=...)`
            listed = node.args[1:2] or [k.value for k in node.keywords if k.arg == "sources"]
            return _strings(listed[0], assignments, deeper) if listed else []
        if name == "join" and node.args:
            parts = [_strings(arg, assignments, deeper) or [""] for arg in node.args]
            joined = [""]
            for options in parts:
                joined = [os.path.join(head, option) if head else option for head in joined for option in options]
            return joined
        if name in _WRAPPERS and node.args:
            return _strings(node.args[0], assignments, deeper)
    return []


def _is_define_macros_entry(node: ast.Tuple) -> bool:
    """`("NAME", None)` / `("NAME", "1")`: the shape of a `define_macros` entry."""
    name, value = node.elts
    return (
        isinstance(name, ast.Constant)
        and isinstance(name.value, str)
        and re.fullmatch(r"[A-Za-z_]\w*", name.value) is not None
        and isinstance(value, ast.Constant)
        and (value.value is None or isinstance(value.value, str))
    )


def _with_vendor(node: ast.AST, vendor: str | None) -> Iterator[tuple[ast.AST, str | None]]:
    """Every node below `node` with the vendor whose build runs it: the arms of `if` statements and conditional
    expressions whose test is a vendor test (`torch.version.hip`, `IS_HIP_EXTENSION`, `not is_rocm`; `not
    ROCM_VERSION and COMPILE_MARLIN` for the body only, `is_rocm or USE_HIP` for the `else` only)."""
    if isinstance(node, ast.If | ast.IfExp):
        body_vendor, else_vendor = _ELSEWHERE if _test_elsewhere(node.test) else None, None
        if body_vendor is None:
            body_vendor, else_vendor = _arm_vendors(node.test)
        yield from _with_vendor(node.test, vendor)
        body: list[ast.AST] = list(node.body) if isinstance(node.body, list) else [node.body]
        orelse: list[ast.AST] = list(node.orelse) if isinstance(node.orelse, list) else [node.orelse]
        if _tests_vendor(body, _other_vendor(body_vendor)) or _tests_vendor(orelse, _other_vendor(else_vendor)):
            # `if BUILD_CUDA_EXT:` holding `if not ROCM_VERSION:`: a GPU switch named after CUDA, whose arm
            # the ROCm build reaches too.
            body_vendor = else_vendor = None
        for child in body:
            yield from _with_vendor(child, body_vendor or vendor)
        for child in orelse:
            yield from _with_vendor(child, else_vendor or vendor)
        return
    yield node, vendor
    for child in ast.iter_child_nodes(node):
        yield from _with_vendor(child, vendor)


# The vendor `_with_vendor` gives an arm that runs only in another accelerator's build (`runs_elsewhere`): an `elif
# MUSA_HOME:` after `if CUDA_HOME:` is not the ROCm arm the `else` of a CUDA test would be.
_ELSEWHERE = "elsewhere"


def _test_elsewhere(test: ast.expr) -> bool:
    """Whether a setup.py test holds only in another accelerator's build (`MUSA_HOME is not None`, `BUILD_XPU`)."""
    if isinstance(test, ast.BoolOp):
        found = [_test_elsewhere(value) for value in test.values]
        return any(found) if isinstance(test.op, ast.And) else all(found)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot):
        right = test.comparators[0]
        return isinstance(right, ast.Constant) and right.value is None and _test_elsewhere(test.left)
    if isinstance(test, ast.Name | ast.Attribute | ast.Call):
        return runs_elsewhere(ast.unparse(test).replace(".", "_"))
    return False


def _arm_vendors(test: ast.expr) -> tuple[str | None, str | None]:
    """The vendors the body and the `else` of an `if test:` run for. A conjunction runs its body only where every
    operand holds (one vendor test among them decides it), a disjunction its `else` only where none does. A build
    target compared with a vendor's name (`get_target_device() == "cuda"`) decides the body only: the other targets
    include other accelerators'."""
    target = _target_vendor(test)
    if target is not None:
        return target, None
    if isinstance(test, ast.BoolOp):
        vendors = {_test_vendor(value) or _target_vendor(value) for value in test.values} - {None}
        decided = vendors.pop() if len(vendors) == 1 else None
        if isinstance(test.op, ast.And):
            return decided, None
        return None, _other_vendor(decided)
    tested = _test_vendor(test)
    return tested, _other_vendor(tested)


def _target_vendor(test: ast.expr) -> str | None:
    """The vendor a setup.py test of the build's target holds for: `TARGET_DEVICE == "cuda"`, `target() == "rocm"`;
    not a torch device's type, "cuda" on ROCm too (`x.device.type == "cuda"`, `torch.cuda...`)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    value = test.comparators[0]
    if not isinstance(value, ast.Constant) or not isinstance(value.value, str) or value.value.lower() != value.value:
        return None
    compared = ast.unparse(test.left)
    if compared.startswith("torch.") or compared.endswith(".type") or ".device" in compared:
        return None
    return vendor_of_words(value.value) if value.value in _TARGET_NAMES else None


# The build targets' names a setup.py compares with (`LMDEPLOY_TARGET_DEVICE`, `VLLM_TARGET_DEVICE` values).
_TARGET_NAMES = frozenset({"cuda", "rocm", "hip"})


def _tests_vendor(statements: list[ast.AST], vendor: str | None) -> bool:
    """Whether an `if` among `statements` (at any depth) tests a name of `vendor`, whichever way."""
    if vendor is None:
        return False
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.If | ast.IfExp) and any(
                isinstance(name, ast.Name | ast.Attribute) and vendor_of_words(ast.unparse(name)) == vendor
                for name in ast.walk(node.test)
            ):
                return True
    return False


def _test_vendor(test: ast.expr) -> str | None:
    """The vendor a setup.py `if` test holds for: the words of the names it reads, `not` flipping them. torch's
    `torch.cuda` API answers on ROCm too (`torch.cuda.is_available()`): no vendor test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _test_vendor(test.operand)
        return _other_vendor(inner)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant):
        if test.comparators[0].value is None:  # `torch.version.hip is None` / `is not None`
            inner = _test_vendor(test.left)
            if isinstance(test.ops[0], ast.Is):
                return _other_vendor(inner)
            return inner if isinstance(test.ops[0], ast.IsNot) else None
        return None
    if isinstance(test, ast.Name | ast.Attribute | ast.Call):
        text = ast.unparse(test)
        return None if text.startswith("torch.cuda.") else vendor_of_words(text.replace(".", "_"))
    return None


def _extension_through_a_name(tree: ast.Module, path: str) -> str:
    """Where a setup.py builds a torch `CUDAExtension` it picked into a variable (`extension = CUDAExtension` in
    the GPU arm, `CppExtension` in the others, then `extension(name, sources, ...)`): hipified on ROCm."""
    chosen: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _picks_class(node.value, "CUDAExtension"):
            chosen |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    if not chosen:
        return ""  # most setup.py files: no second walk
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in chosen:
            return f"{path}:{node.lineno}: builds a torch CUDAExtension through `{node.func.id}` (hipified on ROCm)"
    return ""


def _picks_class(node: ast.expr, name: str) -> bool:
    """Whether `node` is the class `name` or a conditional expression one of whose arms is (`Extension =
    CppExtension if suffix == "cpu" else CUDAExtension`): the GPU arm of the pick is what a ROCm build runs."""
    if isinstance(node, ast.IfExp):
        return _picks_class(node.body, name) or _picks_class(node.orelse, name)
    return _names_class(node, name)


def _names_class(node: ast.expr, name: str) -> bool:
    return (isinstance(node, ast.Name) and node.id == name) or (isinstance(node, ast.Attribute) and node.attr == name)


_EXTENSION_CALL = re.compile(r"\bCUDAExtension\s*\(")
# torch's classes by their own names: a project's `NinjaBuildExtension(build_ext)` is no torch extension.
_TORCH_EXTENSION = re.compile(r"\b(?:CUDAExtension|BuildExtension)\b")
_HIPIFY = re.compile(r"\bCUDAExtension\s*\(|hipify", re.IGNORECASE)


def hipify_tool_run(path: str, text: str) -> str:
    """ "path:line" where a build file names a hipify tool (`BuildFacts.hipify_tool`), "" when it names none."""
    match = _HIPIFY_TOOL.search(text)
    return f"{path}:{text.count(chr(10), 0, match.start()) + 1}" if match is not None else ""


_HIPIFY_TOOL = re.compile(r"hipify", re.IGNORECASE)


def _hipify_evidence(path: str, text: str) -> str:
    """Where a build file runs hipify: torch's `CUDAExtension` does on ROCm, other builds call a hipify tool."""
    match = _HIPIFY.search(text)
    if match is None:
        return ""
    line = text.count("\n", 0, match.start()) + 1
    how = "builds a torch CUDAExtension (hipified on ROCm)" if "(" in match.group() else "runs hipify for ROCm"
    return f"{path}:{line}: {how}"


# --- CMake ------------------------------------------------------------------------------------------------------
_CMAKE_COMMAND = re.compile(r"^\s*([A-Za-z_]\w*)\s*\(", re.MULTILINE)
# A quoted argument on one line (a `#` in a string went with the comments: an unclosed quote must not swallow the
# lines after it), whose parentheses are text; or a parenthesis.
_PARENTHESIS = re.compile(r'"(?:[^"\\\n]|\\.)*"|[()]')
_CMAKE_DEFINE_COMMANDS = frozenset({"add_compile_definitions", "add_definitions", "target_compile_definitions"})
_CMAKE_KEYWORDS = frozenset({"PRIVATE", "PUBLIC", "INTERFACE"})
# Commands whose arguments list sources (their file names are the ones with a source suffix).
_CMAKE_SOURCE_COMMANDS = frozenset(
    {"add_library", "add_executable", "target_sources", "set", "list", "cuda_add_library"}
)
# Commands building a Python extension module from their first argument (and the sources after it): CMake's
# FindPython, pybind11, nanobind, and `add_library(name MODULE ...)`.
_CMAKE_MODULE_COMMANDS = frozenset(
    {"python_add_library", "python3_add_library", "pybind11_add_module", "nanobind_add_module"}
)
_HIP_LANGUAGE = re.compile(r"enable_language\s*\(\s*HIP\b|\bhip_add_(?:library|executable)\b|LANGUAGES?[^)]*\bHIP\b")
# HIP's CMake package, which a ROCm build finds (`find_package(hip)`) and links (`hip::host`) to compile HIP sources
# with hipcc or HIP-Clang without CMake's HIP language.
_HIP_PACKAGE = re.compile(r"\bfind_package\s*\(\s*hip\b|\bhip::(?:host|device)\b", re.IGNORECASE)
_CUDA_LANGUAGE = re.compile(
    r"enable_language\s*\(\s*CUDA\b|\bcuda_add_(?:library|executable)\b|LANGUAGES?[^)]*\bCUDA\b"
)


class SourceFunctions(NamedTuple):
    """The project's CMake functions that list sources (`cmake_source_functions`), and those of them whose body
    places its arguments in a folder of its own (`list(APPEND XYZ_SOURCES "src/${NAME}/${ARGN}")`): a call's
    bare file name names a file of a folder the call does not spell."""

    names: frozenset[str] = frozenset()
    under_own_folder: frozenset[str] = frozenset()


NO_SOURCE_FUNCTIONS = SourceFunctions()


def cmake_facts(
    path: str,
    text: str,
    root: str = "",
    source_functions: SourceFunctions = NO_SOURCE_FUNCTIONS,
    glob_functions: frozenset[str] = frozenset(),
    off_on_rocm: frozenset[str] = frozenset(),
    unrun: UnrunCmake = RUNS_EVERYTHING,
    configured: frozenset[str] = frozenset(),
    filelists: Mapping[str, str] | None = None,
    included_for: str | None = None,
) -> BuildFacts:
    """The macros and sources a CMake file defines per vendor, and the languages it builds. A variable the project's
    configure headers `#cmakedefine` (`configured`, see `configure_header_macros`) that a block sets true
    (`set(XYZ_HAVE_HIP "1")` under `if(XYZ_ENABLE_HIP)`) is a macro that block's build defines. The vendor of a
    definition is the file's (one that builds only the HIP language, outside any ROCm block; or that sits in a folder named for a vendor:
    `hip/CMakeLists.txt`; not the project's `root` folder, whose name is the project's), else that of the
    outermost block around it that names one: an `if()` arm whose condition does (`if(USE_ROCM)`, its `else()`
    the other vendor's), a `function()`/`macro()` whose name does (`create_hip_test`). An option the ROCm build
    refuses (`if(WITH_FLASH_ATTN) message(FATAL_ERROR ...)` in its block), one whose block enables the CUDA
    language and never HIP (`if(USE_X) enable_language(CUDA)`), and one `off_on_rocm` (its default is off where
    the build targets HIP, see `cmake_switches_off_on_rocm`) open NVIDIA blocks too. A call of one of the project's
    `glob_functions` (`my_glob(GLOB VAR dir/*.cu)`, see `cmake_glob_functions`) globs as `file(GLOB ...)` does. A
    `.cmake` module's relative paths are relative to the folder of the file including it, and those a call hands a
    source function placing them in a folder of its own (`SourceFunctions.under_own_folder`) to that folder: neither
    is known here, so they name the project files ending so (`ANYWHERE`). Sources named in code that never runs, or in a list nothing that runs
    reads (`unrun`, see `cmake_unrun`), are `unbuilt`. A `.cmake` module the build reads only in one vendor's code
    (`include(xyz-cutlass)` inside `if(USE_CUTLASS)`, a CUDA switch) is that vendor's (`included_for`)."""
    hip, cuda = bool(_HIP_LANGUAGE.search(text)), bool(_CUDA_LANGUAGE.search(text))
    commands = list(cmake_commands(text))
    rocm_alone = hip and not cuda and _builds_hip_outside_rocm_blocks(commands)
    file_vendor = included_for or ("rocm" if rocm_alone else vendor_of_words(_folder_name(path, root)))
    module_vendor = "nvidia" if _nested_cuda_alone_project(path, root, cuda and not hip, text, commands) else None
    refused = _refused_on_rocm(commands, file_vendor) | _cuda_language_options(commands) | off_on_rocm
    included_module = path.endswith(".cmake")
    defines: list[BuildDefine] = []
    sources: list[SourceSet] = []
    include_folders: list[SourceSet] = []
    native_modules: list[NativeModule] = []
    blocks: list[list[str | None]] = []  # per open block: [vendor of its current arm, vendor its condition tests]
    platforms: list[list[str | None]] = []  # the same, of the HIP platform each block tests (None: tests none)
    elsewhere: list[bool] = []  # per open block: whether its current arm runs only elsewhere (`runs_elsewhere`)
    tracker = RunTracker(unrun)
    folder_variables: dict[str, str] = {}
    # The vendor of each arm of the open top-level `if()` (none in a function, whose `return()` leaves the function
    # only), and the indices of the arms that leave the file with `return()`.
    top_arms: list[str | None] = []
    leaving_arms: list[int] = []
    definition_lists = _definition_lists(commands)
    copied: list[BuildDefine] = []  # `set(VAR ${OTHER})` of configured variables, see `_copied_in_one_vendor`
    source_values: dict[str, str] = {}  # a variable set to one source file -> its path (see `_probe_sources`)
    mentioned: list[str] = []
    module_uses: list[SourceSet] = []
    loop_items = _literal_loop_items(commands)
    reads: dict[str, set[str | None]] = {}  # a word a command reads -> the vendors of the blocks reading it
    for index, (command, arguments, line) in enumerate(commands):
        name = command.lower()
        arguments = _folder_variables_expanded(name, arguments, folder_variables)
        _note_reads(reads, name, arguments, _block_vendor(blocks, file_vendor))
        mentioned += _cmake_mentions(name, _loop_variables_expanded(arguments, loop_items[index]), unrun)
        _track_elsewhere(elsewhere, name, arguments)
        never_runs = tracker.step(name, arguments)
        first_source = len(sources)
        _remember_source_value(name, arguments, source_values)
        keyword_definitions = _keyword_definitions(name, arguments)
        if keyword_definitions and not any(elsewhere):
            platform = next((arm for arm, _ in reversed(platforms) if arm is not None), None)
            vendor = platform or _block_vendor(blocks, file_vendor)
            defines += _cmake_defines("add_compile_definitions", keyword_definitions, vendor, path, line)
        module = _native_module(name, arguments)
        if module:
            sources_at = () if included_module else _source_folders(path, arguments.split()[1:])
            vendor = _block_vendor(blocks, file_vendor) or module_vendor
            native_modules.append(NativeModule(module, vendor, path, line, sources_at, module_vendor is not None))
        if name in ("if", "function", "macro"):
            tested = vendor_of_words(arguments.split()[0]) if name != "if" and arguments.split() else None
            tested = _condition_vendor(arguments) if name == "if" else tested
            if not blocks:
                top_arms = [tested] if name == "if" else []
                leaving_arms = []
            refused_arm = name == "if" and arguments.strip() in refused
            blocks.append(["nvidia", None] if refused_arm else [tested, tested])
            # A switch the ROCm build leaves off decides the definitions in its arm as a platform test does.
            platform = "nvidia" if refused_arm else _platform_tested(arguments) if name == "if" else None
            platforms.append([platform, None if refused_arm else platform])
        elif name == "elseif" and blocks:
            blocks[-1][0] = "nvidia" if arguments.strip() in refused else _condition_vendor(arguments)
            platforms[-1][0] = "nvidia" if arguments.strip() in refused else _platform_tested(arguments)
            top_arms += [blocks[0][0]] if len(blocks) == 1 and top_arms else []
        elif name == "else" and blocks:
            blocks[-1][0] = _other_vendor(blocks[-1][1])
            platforms[-1][0] = _other_vendor(platforms[-1][1])
            top_arms += [blocks[0][0]] if len(blocks) == 1 and top_arms else []
        elif name in ("endif", "endfunction", "endmacro") and blocks:
            blocks.pop()
            platforms.pop()
            if not blocks and len(top_arms) == 1 and leaving_arms == [0]:
                # `if(NOT CUDAToolkit_FOUND) return() endif()`: the rest of the file runs only for the other vendor.
                file_vendor = file_vendor or _other_vendor(top_arms[0])
        elif name == "return" and len(blocks) == 1 and top_arms:
            leaving_arms.append(len(top_arms) - 1)
        elif any(elsewhere) and (name in _CMAKE_DEFINE_COMMANDS or name in _PROPERTY_COMMANDS):
            continue  # defined only in another accelerator's or a Windows build
        elif name in _CMAKE_DEFINE_COMMANDS or (name in _PROPERTY_COMMANDS and "COMPILE_DEFINITIONS" in arguments):
            # A HIP platform test decides a definition's vendor inside a block named for HIP (HIP on NVIDIA too), and
            # so does a switch the ROCm build leaves off.
            platform = next((arm for arm, _ in reversed(platforms) if arm is not None), None)
            vendor = platform or _block_vendor(blocks, file_vendor)
            defines += _cmake_defines(name, _defined_values(name, arguments), vendor, path, line)
        elif name == "set" and arguments.split()[:1] and arguments.split()[0] in configured:
            platform = next((arm for arm, _ in reversed(platforms) if arm is not None), None)
            vendor = platform or _block_vendor(blocks, file_vendor)
            if _cmake_true(arguments.split()[1:2]):
                defines.append(BuildDefine(arguments.split()[0], None, vendor, path, line))
            elif _cmake_copied(arguments.split()[1:2]):
                copied.append(BuildDefine(arguments.split()[0], None, vendor, path, line))
        elif name in ("set", "list") and _listed_definitions(name, arguments, definition_lists):
            platform = next((arm for arm, _ in reversed(platforms) if arm is not None), None)
            vendor = platform or _block_vendor(blocks, file_vendor)
            definitions = _listed_definitions(name, arguments, definition_lists)
            defines += _cmake_defines("add_compile_definitions", definitions, vendor, path, line)
        elif name == "list" and _appended_flags(arguments):
            defines += _cmake_flag_defines(arguments, path, line)
        elif filelists and name in filelists and (quoted := _FIRST_QUOTED.match(arguments)) is not None:
            # `get_filelist("get_xyz_cuda_srcs()" XYZ_SRCS)`: the `.bzl` list's sources, relative to this folder.
            vendor = _block_vendor(blocks, file_vendor)
            listed = [
                SourceSet(source, vendor, path, line)
                for source in bzl_strings(filelists[name], quoted.group(1))
                if source.endswith(_SOURCE_SUFFIXES) and "$" not in source
            ]
            sources += [_anywhere(s) if included_module else s for s in listed]
        elif name in ("include_directories", "target_include_directories"):
            vendor = _block_vendor(blocks, file_vendor)
            folders = _include_folders(name, arguments, root, included_module)
            include_folders += [SourceSet(folder, vendor, path, line) for folder in folders]
        elif name in ("include", "find_package") and arguments.split():
            vendor = _block_vendor(blocks, file_vendor)
            module_uses.append(SourceSet(arguments.split()[0].strip('"'), vendor, path, line, variable=name))
        elif name == "add_subdirectory" and arguments.split() and "$" not in arguments.split()[0]:
            vendor = _block_vendor(blocks, file_vendor)
            sources.append(SourceSet(arguments.split()[0].strip('"') + "/**", vendor, path, line))
        elif name in glob_functions | {"file"} and arguments.split()[:1] in (["GLOB"], ["GLOB_RECURSE"]):
            globbed = _globbed_sources(arguments, _block_vendor(blocks, file_vendor), path, line, root)
            sources += [_anywhere(s) if included_module else s for s in globbed]
        elif name in ("try_run", "try_compile"):
            # A configure probe (a CUDA-backend module's `try_run` of a device query) compiles its sources for the
            # vendor of its block or file.
            vendor = _block_vendor(blocks, file_vendor)
            probes = [
                SourceSet(probe, vendor, path, line) for probe in _probe_sources(arguments, source_values, path, root)
            ]
            sources += [_anywhere(s) if included_module and not s.pattern.startswith("/") else s for s in probes]
        elif name in _CMAKE_SOURCE_COMMANDS | _CMAKE_MODULE_COMMANDS or name in source_functions.names:
            vendor = _block_vendor(blocks, file_vendor)
            words = [word.strip('"') for word in arguments.split()]
            if name != "set":
                # `set(FILE ${CMAKE_CURRENT_LIST_DIR}/k.cu)` may name a file only to set its flags (PyTorch's
                # `ROWWISE_SCALED_MM_FILE` under `if(USE_CUDA)`), not a source list the build compiles.
                words = [_in_build_folder(word, root) for word in words]
            removed = name == "list" and words[:1] == ["REMOVE_ITEM"]
            variable = (words[1:2] if name == "list" else words[:1] if name == "set" else [""])[0] if words else ""
            keyword_vendors = _keyword_vendors(words) if name in source_functions.names else [None] * len(words)
            listed = [
                SourceSet(w, vendor or keyword_vendor, path, line, removed, variable)
                for w, keyword_vendor in zip(words, keyword_vendors, strict=True)
                if w.endswith(_SOURCE_SUFFIXES) and "$" not in w
            ]
            listed += [
                SourceSet(source, vendor or switch_vendor, path, line, removed, variable)
                for source, switch_vendor in _vendor_switched_sources(words)
            ]
            # A function placing its arguments in a folder of its own names files whose folder the call leaves out.
            elsewhere_placed = included_module or name in source_functions.under_own_folder
            sources += [_anywhere(s) if elsewhere_placed else s for s in listed]
        sources[first_source:] = [_unbuilt(s, never_runs, unrun) for s in sources[first_source:]]
    sources = _lists_read_by_one_vendor(sources, reads)
    if module_vendor is not None:
        # A project declaring the CUDA language itself (`project(hh LANGUAGES Fortran CUDA)`) is a CUDA build
        # whatever its options: each source it names outside a vendor's block is NVIDIA's.
        cuda_project = any(c.lower() == "project" and "CUDA" in a.split() for c, a, _ in commands)
        sources = [
            replace(s, standalone=True, vendor=(s.vendor or module_vendor) if cuda_project else s.vendor)
            for s in sources
        ]
    defines += _copied_in_one_vendor(copied)
    defines += _hipconfig_defines(path, text)
    return BuildFacts(
        tuple(defines),
        tuple(sources),
        hip_language=hip,
        cuda_language=cuda,
        # A file finding or linking HIP's package (`find_package(hip)`, `hip::host`) builds for ROCm without CMake's
        # HIP language (hipcc as the C++ compiler).
        rocm_branches=(path,) if _HIP_PACKAGE.search(text) else (),
        hipify=_hipify_evidence(path, text),
        hipify_tool=hipify_tool_run(path, text),
        include_folders=tuple(include_folders),
        native_modules=tuple(native_modules),
        mentioned_names=tuple(dict.fromkeys(mentioned)),
        module_uses=tuple(module_uses),
    )


_CONDITION_COMMANDS = frozenset({"if", "elseif", "else", "endif"})
_LIST_WRITES = frozenset({"APPEND", "PREPEND", "INSERT", "REMOVE_ITEM", "REMOVE_AT", "REMOVE_DUPLICATES", "SORT"})


def _note_reads(reads: dict[str, set[str | None]], command: str, arguments: str, vendor: str | None) -> None:
    """Record the words `command` reads (`${XYZ_CUDA_SRC}`, `IN LISTS XYZ_CUDA_SRC`) with the vendor of the block
    holding it: not a condition's (it compiles nothing), nor the variable a `set()`/`list(APPEND)` writes, unless it
    hands it to other files (`PARENT_SCOPE`, `CACHE`). A file it adds or includes may read any variable (key "")."""
    if command in _CONDITION_COMMANDS:
        return
    if command in ("add_subdirectory", "include"):
        reads.setdefault("", set()).add(vendor)
    words = _WORD.findall(arguments)
    written = ""
    if command == "set" and words and not {"PARENT_SCOPE", "CACHE"} & set(words):
        written = words[0]
    elif command == "list" and len(words) > 1 and words[0] in _LIST_WRITES:
        written = words[1]
    for word in words:
        if word != written:
            reads.setdefault(word, set()).add(vendor)


def _lists_read_by_one_vendor(sources: list[SourceSet], reads: Mapping[str, set[str | None]]) -> list[SourceSet]:
    """`sources`, a list variable set outside any vendor's block (`set(XYZ_CUDA_SRC k.cu)`) that the file reads
    only in one vendor's blocks (`if(XYZ_USE_CUDA) list(APPEND XYZ_SRC ${XYZ_CUDA_SRC})`) naming that vendor's
    sources: no other build compiles them through it."""
    found: list[SourceSet] = []
    for listed in sources:
        vendors = reads.get(listed.variable, set()) if listed.variable and listed.vendor is None else set()
        vendors = vendors | reads.get("", set()) if vendors else vendors
        vendor = next(iter(vendors)) if len(vendors) == 1 else None
        found.append(replace(listed, vendor=vendor) if vendor is not None and not listed.removed else listed)
    return found


_WORD = re.compile(r"[A-Za-z_]\w*")


def _vendor_switched_sources(words: list[str]) -> Iterator[tuple[str, str]]:
    """(source, vendor) of each generator expression listing a source under a switch named for one vendor
    (`$<$<BOOL:${XYZ_ENABLE_CUDA}>:src/backend_cuda.cu>`, `$<${USE_HIP}:k.hip>`): the build compiles it for that
    vendor only; `$<IF:$<BOOL:${XYZ_ENABLE_CUDA}>, cuda_utils.cu,>` lists it so too."""
    switched_words = [(m.group(1), m.group(2)) for word in words if (m := _SWITCHED_SOURCE.fullmatch(word))]
    chosen = [(switch, then) for switch, then in _BOOL_IF.findall(" ".join(words))]
    for switch, then in switched_words + chosen:
        vendor = vendor_of_words(switch)
        for source in (_in_build_folder(word) for word in then.split()):
            if vendor is not None and source.endswith(_SOURCE_SUFFIXES) and "$" not in source:
                yield source, vendor


_BOOL_IF = re.compile(r"\$<IF:\$<BOOL:\$\{(\w+)\}>\s*,\s*([^,>]*),[^>]*>")
_SWITCHED_SOURCE = re.compile(r"\$<(?:\$<BOOL:)?\$\{(\w+)\}>?:([^<>$]+|\$\{CMAKE_CURRENT_\w+_DIR\}/[^<>$]+)>")


def _cmake_mentions(command: str, arguments: str, unrun: UnrunCmake) -> list[str]:
    """The source and header names a CMake command mentions (see `BuildFacts.mentioned_names`), but those it places
    exactly: a `file(GLOB ...)` pattern spelled without a variable names its folder's files (its `SourceSet`), and a
    `set()` of a list no CMake code that runs reads compiles nothing (`set(DOXYGEN_FILE_PATTERNS *.h *.cpp)`). An
    `install()` of headers (to an include folder, a target's public headers) hands every header to the library's
    users."""
    if command == "aux_source_directory":
        return ["*"]
    words = arguments.split()
    if command == "set" and words and unrun.unread(words[0]):
        return []
    if command == "install" and _INSTALLS_HEADERS.search(arguments):
        return [f"*{suffix}" for suffix in _HEADER_SUFFIXES]
    if command == "file" and words[:1] in (["GLOB"], ["GLOB_RECURSE"]):
        arguments = " ".join(word for word in words if "$" in word)
    headers = [_CMAKE_VARIABLE.sub("*", found) for found in _MENTIONED_HEADER.findall(arguments)]
    return mentioned_source_names(arguments) + headers


_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc", ".H")
_MENTIONED_HEADER = re.compile(r"([^\s/\\\"'<>:;()=,]*\.(?:h|hh|hpp|hxx|cuh|inl|inc|H))(?![\w.])")
_INSTALLS_HEADERS = re.compile(r"(?i)include|\bPUBLIC_HEADER\b|\bFILE_SET\b|\.(?:h|hh|hpp|hxx|cuh|inl)\b")


def _literal_loop_items(commands: list[tuple[str, str, int]]) -> list[dict[str, tuple[str, ...]]]:
    """Per command, the variables of the `foreach` loops around it whose items the file spells out: the loop's own
    words (`foreach(t a b)`, `IN ITEMS a b`), or a list the file sets once to plain words and writes nowhere else
    (`set(APPS a b)` then `foreach(p ${APPS})`, `IN LISTS APPS`). `add_executable(${p} ${p}.cpp)` in such a loop
    compiles `a.cpp` and `b.cpp`, not any `.cpp` file."""
    lists = _literal_lists(commands)
    around: list[dict[str, tuple[str, ...]]] = []
    open_loops: list[tuple[str, tuple[str, ...] | None]] = []
    for command, arguments, _ in commands:
        name = command.lower()
        if name == "endforeach" and open_loops:
            open_loops.pop()
        elif name == "foreach" and arguments.split():
            variable, *words = arguments.split()
            open_loops.append((variable, _loop_items(words, lists)))
        around.append({variable: items for variable, items in open_loops if items is not None})
    return around


def _literal_lists(commands: list[tuple[str, str, int]]) -> dict[str, tuple[str, ...]]:
    """The variables a CMake file sets once to plain words (no variable, no `CACHE` or `PARENT_SCOPE`) and names in
    no other command but as `${NAME}` (no `list(APPEND NAME ...)`, no helper handed its name)."""
    found: dict[str, tuple[str, ...]] = {}
    for command, arguments, _ in commands:
        words = [word.strip('"') for word in arguments.split()]
        if command.lower() == "set" and words:
            literal = not any("$" in word or word in _SET_KEYWORDS for word in words)
            found[words[0]] = tuple(words[1:]) if literal and words[0] not in found else ()
    for command, arguments, _ in commands:
        words = arguments.split()
        if command.lower() in _READING_COMMANDS or (command.lower() == "set" and words):
            continue
        for named in set(words) & found.keys():
            found[named] = ()
    return {name: items for name, items in found.items() if items}


_SET_KEYWORDS = frozenset({"CACHE", "PARENT_SCOPE", "FORCE"})
# Commands whose bare words only read variables (`foreach(p IN LISTS APPS)`, `if(APPS)`).
_READING_COMMANDS = frozenset({"if", "elseif", "while", "foreach", "message"})


def _loop_items(words: list[str], lists: Mapping[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    """The items of `foreach(VAR words...)` when every one is spelled out (see `_literal_loop_items`), else None."""
    if words[:1] == ["IN"]:
        if words[1:2] == ["ITEMS"]:
            words = words[2:]
        elif words[1:2] == ["LISTS"]:
            words = ["${" + word + "}" for word in words[2:]]
        else:
            return None
    items: list[str] = []
    for word in (word.strip('"') for word in words):
        listed = _VARIABLE_USE.fullmatch(word)
        if listed is not None and listed.group(1) in lists:
            items += lists[listed.group(1)]
        elif "$" in word or word in ("RANGE", "ZIP_LISTS"):
            return None
        else:
            items.append(word)
    return tuple(items)


def _loop_variables_expanded(text: str, items: Mapping[str, tuple[str, ...]]) -> str:
    """`text` once per item of each loop variable it uses whose items are known (`${p}.cpp` over `a b`: `a.cpp
    b.cpp`), joined by spaces; `text` itself when it uses none."""
    for variable, values in items.items():
        use = "${" + variable + "}"
        if use in text:
            text = " ".join(text.replace(use, value) for value in values)
    return text


def mentioned_source_names(text: str) -> list[str]:
    """The file names of the sources `text` mentions (`${DIR}/k.cu`, `$<$<BOOL:${X}>:src/k.cu>`: `k.cu`), each
    variable in one a `*` (`kernel_${t}.cu`: `kernel_*.cu`; see `BuildFacts.mentioned_names`)."""
    return [_CMAKE_VARIABLE.sub("*", found) for found in _MENTIONED_SOURCE.findall(text)]


_MENTIONED_SOURCE = re.compile(r"([^\s/\\\"'<>:;()=,]*\.(?:cu|cpp|cc|cxx|c|hip))(?![\w.])")
_CMAKE_VARIABLE = re.compile(r"\$\{[^}]*\}|\$\([^)]*\)")


# `#cmakedefine NAME` and `#cmakedefine01 NAME` (defined as 1 when the variable is true, else as 0: `#if NAME` tests
# it as `#ifdef` tests the other).
_CMAKEDEFINE = re.compile(r"^[ \t]*#[ \t]*cmakedefine(?:01)?[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
_CMAKE_FALSE = frozenset({"", "0", "OFF", "FALSE", "NO", "N", "IGNORE", "NOTFOUND"})


def _nested_cuda_alone_project(
    path: str, root: str, cuda_alone: bool, text: str, commands: list[tuple[str, str, int]]
) -> bool:
    """A CMake project of its own below the checked root (`project(kernels LANGUAGES CXX CUDA)` in a sub-folder: a
    kernel package shipped beside the product) that builds the CUDA language and never HIP, and names no ROCm or HIP
    anywhere: nvcc compiles all of it, so its extension modules exist only in NVIDIA installs. Not the root's own
    build: that is the project being ported, whose Python wrappers are part of the port."""
    if not cuda_alone or not root or os.path.dirname(os.path.abspath(path)) == os.path.abspath(root):
        return False
    if not ROCM_WORDS.isdisjoint(word.upper() for word in _WORD_SPLIT.split(text)):
        return False
    return any(command.lower() == "project" for command, _, _ in commands)


def configure_header_macros(text: str) -> frozenset[str]:
    """The macros a configure header template (`include/config.h.in`, written by CMake's `configure_file`)
    declares with `#cmakedefine NAME` (or `#cmakedefine01 NAME`): defined in the header (as 1) when the CMake
    variable NAME is true."""
    return frozenset(_CMAKEDEFINE.findall(text))


def _found_flag(values: list[str]) -> bool:
    """Whether `set(VAR <value>)` copies a package's found flag (`${cuTENSOR_FOUND}`): in one vendor's arm
    (`if(XYZ_HAS_CUDA) find_package(cuTENSOR) set(XYZ_HAS_CUTENSOR ${cuTENSOR_FOUND})`), VAR is true only where
    that vendor's build found the package, so `if(VAR)` blocks run in that build alone."""
    return bool(values) and _FOUND_FLAG.fullmatch(values[0]) is not None


_FOUND_FLAG = re.compile(r'"?\$\{\w+_FOUND\}"?')


def _cmake_true(values: list[str]) -> bool:
    """Whether `set(VAR <value>)` makes VAR true for `#cmakedefine VAR`: CMake's false constants are not."""
    if not values:
        return False
    value = values[0].strip('"').upper()
    # `set(XYZ_CUDA @XYZ_CUDA@)` in a package-config template copies what the build configured, defines nothing.
    copied = "$" in value or (value.startswith("@") and value.endswith("@"))
    return not copied and value not in _CMAKE_FALSE and not value.endswith("-NOTFOUND")


def _cmake_copied(values: list[str]) -> bool:
    """Whether `set(VAR <value>)` copies another variable (`${cuTENSOR_FOUND}`): true where that one is."""
    return bool(values) and values[0].strip('"').startswith("${")


def _copied_in_one_vendor(copied: list[BuildDefine]) -> Iterator[BuildDefine]:
    """The configured variables a file sets from other variables in one vendor's blocks only (`set(XYZ_HAS_CUTENSOR
    ${cuTENSOR_FOUND})` inside `if(XYZ_HAS_CUDA)`): `#cmakedefine` defines them, if at all, in that vendor's build.
    Not one it also copies outside them: that may run in any build."""
    by_name: dict[str, list[BuildDefine]] = {}
    for define in copied:
        by_name.setdefault(define.name, []).append(define)
    for found in by_name.values():
        vendors = {define.vendor for define in found}
        if len(vendors) == 1 and None not in vendors:
            yield found[0]


def _native_module(command: str, arguments: str) -> str:
    """The Python extension module a CMake command builds (`pybind11_add_module(fused_ops ...)`,
    `add_library(fused_ops MODULE ...)`), "" for any other command or a computed name."""
    words = arguments.split()
    if not words or "$" in words[0]:
        return ""
    if command in _CMAKE_MODULE_COMMANDS or (command == "add_library" and words[1:2] == ["MODULE"]):
        return words[0].strip('"')
    return ""


def _unbuilt(sources: SourceSet, never_runs: str, unrun: UnrunCmake) -> SourceSet:
    """`sources` marked unbuilt when the command naming them never runs, or they go to a list nothing reads."""
    if sources.removed:
        return sources
    if never_runs:
        return replace(sources, unbuilt=never_runs)
    if unrun.unread(sources.variable):
        return replace(sources, unbuilt=f"in `{sources.variable}`, which no CMake code that runs reads")
    return sources


def cmake_unrun(texts: Iterable[str]) -> UnrunCmake:
    """What the project's CMake files (all of them: one sets the list another iterates) leave unrun."""
    return unrun_cmake(list(cmake_commands(text)) for text in texts)


# A `.cpp` source compiled by nvcc: CMake's `LANGUAGE CUDA` source property, FindCUDA's
# `CUDA_SOURCE_PROPERTY_FORMAT`, `-x cu` on a compile line, a Bazel `cuda_library` (whose `.cc` sources nvcc builds).
_HOST_SOURCE_AS_CUDA = re.compile(
    r"\bLANGUAGE\s+CUDA\b|\bCUDA_SOURCE_PROPERTY_FORMAT\b|(?<![\w-])-x\s*cu\b|\bcuda_library\s*\("
)


def compiles_only_its_folder(path: str, text: str, root: str) -> bool:
    """Whether a make file (a Makefile, a make fragment) compiles only sources of its own folder, not the root's: it
    names no path going up (`../src/x.cpp`), so what it hands to a compiler lies under it (a tool's benchmark
    built with `nvcc -x cu` beside the library)."""
    folder = os.path.dirname(path)
    return is_makefile(path) and folder != root and not _PARENT_PATH.search(text)


_PARENT_PATH = re.compile(r"(?:^|[\s/=:\"'(])\.\.(?:[/\s\"')]|$)", re.MULTILINE)


def host_sources_as_cuda(path: str, text: str) -> str:
    """ "path:line" where a build file hands host-suffixed sources (`.cpp`) to a CUDA compiler, "" when it does not:
    then nvcc's macros may be defined in a `.cpp` translation unit on NVIDIA."""
    match = _HOST_SOURCE_AS_CUDA.search(text)
    return f"{path}:{text.count(chr(10), 0, match.start()) + 1}" if match else ""


def cmake_unadded_projects(root: str, texts: Mapping[str, str], other_build_texts: str) -> dict[str, str]:
    """Folder -> why, of the nested CMake projects the build under `root` never adds (see `unadded_projects`)."""
    return unadded_projects(root, {path: list(cmake_commands(text)) for path, text in texts.items()}, other_build_texts)


def cmake_unread_files(root: str, texts: Mapping[str, str], other_build_texts: str) -> frozenset[str]:
    """The CMake files the build under `root` never reads (see `unread_cmake_files`)."""
    return unread_cmake_files(
        root, {path: list(cmake_commands(text)) for path, text in texts.items()}, other_build_texts
    )


def never_read(facts: BuildFacts, why: str) -> BuildFacts:
    """The facts of a CMake file the build never reads: it names no source any build compiles (`SourceSet.unbuilt`,
    `why`), and mentions none (`BuildFacts.mentioned_names`). What it defines stays evidence of the vendor a macro
    is for."""
    return replace(facts, sources=tuple(replace(s, unbuilt=why) for s in facts.sources), mentioned_names=())


def preset_for_its_vendor(facts: BuildFacts, path: str) -> BuildFacts:
    """The facts of a CMake file the build never reads whose file name names one vendor (`gcc-cuda.cmake`,
    `clang-hip.cmake`): an initial-cache script (`cmake -C gcc-cuda.cmake`) presetting one vendor's configuration
    (`set(XYZ_USE_CUDA ON CACHE BOOL "")`). What it defines outside any vendor's block is that vendor's, not every
    build's: the HIP preset never loads it."""
    vendor = vendor_of_words(os.path.splitext(os.path.basename(path))[0])
    if vendor is None or not path.endswith(".cmake"):
        return facts
    return replace(facts, defines=tuple(d if d.vendor else replace(d, vendor=vendor) for d in facts.defines))


# Commands setting a COMPILE_DEFINITIONS property: `set_property(TARGET t APPEND PROPERTY COMPILE_DEFINITIONS A)`,
# `set_source_files_properties(k.cc PROPERTIES COMPILE_DEFINITIONS "SWITCH=1")`, `set_target_properties(...)`.
_FIRST_QUOTED = re.compile(r'\s*"([^"]*)"')
_PROPERTY_COMMANDS = frozenset({"set_property", "set_source_files_properties", "set_target_properties"})
_FIRST_VALUE = re.compile(r'\s*("[^"]*"|\S+)')


def _defined_values(command: str, arguments: str) -> str:
    """The definitions a define command's arguments hold: all of them, or a property command's after
    `COMPILE_DEFINITIONS` (`set_property(TARGET hip::host APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS NAME)`), of
    which `set_*_properties` take one value (a `;`-list), other properties following it."""
    if command not in _PROPERTY_COMMANDS:
        return arguments
    values = arguments.split("COMPILE_DEFINITIONS", 1)[1]
    if command == "set_property":
        return values
    first = _FIRST_VALUE.match(values)
    return first.group(1).replace(";", " ") if first else ""


def _keyword_definitions(command: str, arguments: str) -> str:
    """The definitions a project function's `COMPILE_DEFINITIONS` keyword passes (`xyz_add_library(k SOURCES k.cpp
    COMPILE_DEFINITIONS PRIVATE USE_CUDA ...)`, which the function hands to `target_compile_definitions`): the words
    after it on its line, where such a call puts each keyword's values. "" for CMake's own define and property
    commands, which `_defined_values` reads."""
    if command in _CMAKE_DEFINE_COMMANDS or command in _PROPERTY_COMMANDS:
        return ""
    found = _KEYWORD_DEFINITIONS.search(arguments)
    return found.group(1).replace('"', " ").replace(";", " ") if found else ""


# A `COMPILE_DEFINITIONS` keyword argument and the rest of its line.
_KEYWORD_DEFINITIONS = re.compile(r"(?<![\w$])COMPILE_DEFINITIONS[ \t]+([^\n]*)")
_KEYWORD = re.compile(r"[A-Z][A-Z0-9_]*")


def _keyword_vendors(words: list[str]) -> list[str | None]:
    """Per argument of a call of a project source function, the vendor the keyword before it names:
    `add_test(NAME CPP_SOURCE_FILES a.cpp CUDA_CU_SOURCE_FILES k.cu HIP_CPP_SOURCE_FILES k_hip.cpp)` hands `k.cu`
    to the NVIDIA build's list and `k_hip.cpp` to the ROCm build's (`cmake_parse_arguments` keywords)."""
    vendors: list[str | None] = []
    current: str | None = None
    for word in words:
        if _KEYWORD.fullmatch(word):
            current = vendor_of_words(word)
        vendors.append(current)
    return vendors


def _track_elsewhere(elsewhere: list[bool], command: str, arguments: str) -> None:
    """Keep `elsewhere` (per open CMake block, whether its current arm runs only elsewhere) up to date."""
    if command == "if":
        elsewhere.append(runs_elsewhere(arguments))
    elif command in ("function", "macro"):
        elsewhere.append(False)
    elif command in ("elseif", "else") and elsewhere:
        elsewhere[-1] = command == "elseif" and runs_elsewhere(arguments)
    elif command in ("endif", "endfunction", "endmacro") and elsewhere:
        elsewhere.pop()


_INCLUDE_KEYWORDS = frozenset({"SYSTEM", "BEFORE", "AFTER", "PRIVATE", "PUBLIC", "INTERFACE"})
_SOURCE_ROOT = re.compile(r"^\$\{(?:CMAKE_SOURCE_DIR|PROJECT_SOURCE_DIR|CMAKE_HOME_DIRECTORY)\}(?:/|$)")
# The folder of the file being read: a `.cmake` module's own is `CMAKE_CURRENT_LIST_DIR` only.
_FILE_FOLDER = re.compile(r"^\$\{CMAKE_CURRENT_(?:SOURCE|LIST)_DIR\}(?:/|$)")
_MODULE_FOLDER = re.compile(r"^\$\{CMAKE_CURRENT_LIST_DIR\}(?:/|$)")
_BUILD_INTERFACE = re.compile(r"^\$<BUILD_INTERFACE:([^<>]*)>$")


def _include_folders(command: str, arguments: str, root: str, included_module: bool) -> Iterator[str]:
    """The project folders an include-directories command names: relative to the build file's folder, or absolute
    (`${CMAKE_SOURCE_DIR}/include/targets/cuda` under the project `root`). A folder of the build tree, one named by
    another variable or a generator expression, and a `.cmake` module's relative one (relative to the folder of
    the file including it, not known here) are left out."""
    words = [word.strip('"') for word in arguments.split()]
    for word in words[1:] if command == "target_include_directories" else words:
        interface = _BUILD_INTERFACE.match(word)
        word = interface.group(1) if interface else word
        if word in _INCLUDE_KEYWORDS:
            continue
        own_folder = _MODULE_FOLDER if included_module else _FILE_FOLDER
        if root and _SOURCE_ROOT.match(word):
            word = os.path.join(root, _SOURCE_ROOT.sub("", word))
        elif own_folder.match(word):
            word = own_folder.sub("", word) or "."
        elif included_module and not os.path.isabs(word):
            continue
        if "$" not in word:
            yield os.path.normpath(word)


# `hipconfig --cpp_config` prints the platform macros HIP's own build defines; its ROCm output still names the old
# `__HIP_PLATFORM_HCC__` (`-D__HIP_PLATFORM_HCC__= -D__HIP_PLATFORM_AMD__=`).
# The option is hipconfig's own; the command may be run through a variable or a helper macro.
_HIPCONFIG_CPP_CONFIG = re.compile(r"(?<![\w-])--cpp_config\b")
_HIPCONFIG_PLATFORM_MACROS = ("__HIP_PLATFORM_HCC__", "__HIP_PLATFORM_AMD__")


def _hipconfig_defines(path: str, text: str) -> Iterator[BuildDefine]:
    """The ROCm platform macros a build file takes from `hipconfig --cpp_config` (and passes to its compiles or
    writes into a generated header): the ROCm build defines them, the old spelling too."""
    match = _HIPCONFIG_CPP_CONFIG.search(text)
    if match is None:
        return
    line = text.count("\n", 0, match.start()) + 1
    for name in _HIPCONFIG_PLATFORM_MACROS:
        yield BuildDefine(name, None, "rocm", path, line)


# Variables naming the folder of the CMake file being read: a source path under one is relative to that folder.
_CURRENT_FOLDER = re.compile(r"^\$\{CMAKE_CURRENT_(?:SOURCE|LIST)_DIR\}/")
_GLOB_OPTIONS = frozenset({"CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS"})
# A path in the build tree, where the build writes files (configured headers, generated sources).
_BUILD_TREE = re.compile(r"^\$\{\w+_BINARY_DIR\}")  # CMAKE_CURRENT_BINARY_DIR, PROJECT_BINARY_DIR, ...


def _in_build_folder(word: str, root: str = "") -> str:
    """A CMake path word relative to the build file's folder (`${CMAKE_CURRENT_SOURCE_DIR}/k.cu` is `k.cu`), or
    absolute when it starts at the project's `root` (`${PROJECT_SOURCE_DIR}/src/k.cc`)."""
    if root and _SOURCE_ROOT.match(word):
        return os.path.join(root, _SOURCE_ROOT.sub("", word))
    return _CURRENT_FOLDER.sub("", word)


def _anywhere(sources: SourceSet) -> SourceSet:
    """A `.cmake` module's relative source path as a pattern naming the project files that end so: the module is
    read in the folder of the file including it (`include(cmake/modules/X.cmake)` at the top, `src/a/*.cc`)."""
    if sources.pattern.startswith(("/", ANYWHERE)):
        return sources
    return replace(sources, pattern=ANYWHERE + os.path.normpath(sources.pattern).removeprefix(ANYWHERE))


def _cuda_language_options(commands: list[tuple[str, str, int]]) -> frozenset[str]:
    """The options whose `if(OPTION)` block enables the CUDA language and never HIP (`if(USE_X)
    enable_language(CUDA) ...`): a component only the NVIDIA build compiles."""
    found: set[str] = set()
    stack: list[tuple[str, bool]] = []  # per open `if`: (its condition when it is one option, first arm)
    languages: list[set[str]] = []  # per open `if`: the languages its first arm enables
    for command, arguments, _ in commands:
        name = command.lower()
        if name == "if":
            condition = arguments.strip()
            stack.append((condition if re.fullmatch(r"[A-Za-z_]\w*", condition) else "", True))
            languages.append(set())
        elif name in ("elseif", "else") and stack:
            stack[-1] = (stack[-1][0], False)
        elif name == "endif" and stack:
            option, _ = stack.pop()
            enabled = languages.pop()
            if option and enabled == {"CUDA"}:
                found.add(option)
        elif stack and stack[-1][1]:
            text = f"{command}({arguments})"
            languages[-1] |= {"CUDA"} if _CUDA_LANGUAGE.search(text) else set()
            languages[-1] |= {"HIP"} if _HIP_LANGUAGE.search(text) else set()
    return frozenset(found)


@dataclass
class _OptionArm:
    """An open CMake `if()` while `cmake_cuda_only_options` reads: the option it tests alone ("" for any other
    condition), the vendor its test names and that of its current arm, and what its first arm does."""

    option: str
    tested: str | None
    arm: str | None
    first: bool = True
    languages: set[str] = field(default_factory=set)  # enabled anywhere in the first arm
    probed: set[str] = field(default_factory=set)  # enabled there directly or inside arms of NVIDIA probes only
    direct: bool = False  # a language enabled as a command of the first arm itself
    cuda_alone: bool = True  # every command of the first arm names NVIDIA, reports, or opens an NVIDIA probe


def cmake_cuda_only_options(texts: Iterable[str]) -> frozenset[str]:
    """The options (`if(TPL_ENABLE_CUDALIB)`, tested alone) that switch on the CUDA build, in a project whose CMake
    files build HIP in blocks of their own: some block of the option enables the CUDA language as one of its own
    commands, or does nothing but set CUDA up (`check_language(CUDA)`, then `enable_language(CUDA)` inside
    `if(CMAKE_CUDA_COMPILER)`: every command of its first arm names NVIDIA or reports, every `if()` in it probes
    NVIDIA), and no block of the option, in any file, enables HIP (its language, or HIP's package a ROCm build finds
    without it: `find_package(hip)`, `hip::host`). A source list under the option in another CMake
    file (`if(TPL_ENABLE_CUDALIB) list(APPEND sources cuda/k.cu)`) is then NVIDIA's, as one in an `if(USE_CUDA)`
    block is. A block that also adds a folder or sets a neutral switch (`if(BUILD_TESTS) add_subdirectory(test)`,
    with a CUDA probe inside) is no CUDA switch."""
    texts = list(texts)
    if not any(_HIP_LANGUAGE.search(text) or _HIP_PACKAGE.search(text) for text in texts):
        return frozenset()
    cuda_blocks: set[str] = set()
    hip_blocks: set[str] = set()
    for text in texts:
        stack: list[_OptionArm] = []
        for command, arguments, _ in cmake_commands(text):
            name = command.lower()
            if stack and stack[-1].first and not _sets_up_cuda(name, arguments):
                stack[-1].cuda_alone = False
            if name == "if":
                condition = arguments.strip()
                tested = _condition_vendor(condition)
                alone = re.fullmatch(r"[A-Za-z_]\w*", condition) is not None and tested is None
                stack.append(_OptionArm(condition if alone else "", tested, tested))
            elif name in ("elseif", "else") and stack:
                stack[-1].first = False
                stack[-1].arm = _condition_vendor(arguments) if name == "elseif" else _other_vendor(stack[-1].tested)
            elif name == "endif" and stack:
                block = stack.pop()
                if block.option and "HIP" in block.languages:
                    hip_blocks.add(block.option)
                elif block.option and "CUDA" in block.probed and (block.direct or block.cuda_alone):
                    cuda_blocks.add(block.option)
            else:
                _note_languages(stack, f"{command}({arguments})")
    return frozenset(cuda_blocks - hip_blocks)


def cmake_dependent_cuda_options(texts: Iterable[str], cuda_options: frozenset[str] = frozenset()) -> frozenset[str]:
    """The options `cmake_dependent_option` makes available only where the NVIDIA build is on, and off elsewhere:
    one of its conditions (a `;`-list, all of which must hold) requires NVIDIA without `OR` (`USE_CUDA`, `USE_CUDA
    AND UNIX`, an option of `cuda_options` or another such dependent option), and the value it is forced to
    otherwise is off (`cmake_dependent_option(USE_NCCL "..." ON "USE_CUDA" OFF)`: off on ROCm). Its `if()` blocks are
    then NVIDIA's, as those of a CUDA switch are. So are the options a project's option function declares with a
    `DEPENDS_ON` list (`xyz_option(BUILD_X BOOL "..." ON DEPENDS_ON ENABLE_CUDA BUILD_Y ADVANCED)`), which such a
    function forces off unless every option listed is on: one of them requiring NVIDIA makes it NVIDIA's."""
    declared: list[tuple[str, list[str]]] = []
    for text in texts:
        for command, arguments, _ in cmake_commands(text):
            words = re.findall(r'"[^"]*"|\S+', arguments)
            if "DEPENDS_ON" in words[1:]:
                declared.append((words[0], words[words.index("DEPENDS_ON") + 1 :]))
                continue
            if command.lower() != "cmake_dependent_option" or len(words) < 5:
                continue
            if words[4].strip('"').upper() not in ("OFF", "FALSE", "NO", "0", "N", ""):
                continue
            declared.append((words[0], [c.strip() for c in words[3].strip('"').split(";") if c.strip()]))
    found: set[str] = set()
    while True:
        known = cuda_options | found
        more = {
            name
            for name, conditions in declared
            if name not in found and any(_requires_nvidia(condition, known) for condition in conditions)
        }
        if not more:
            return frozenset(found)
        found |= more


def _requires_nvidia(condition: str, cuda_options: AbstractSet[str]) -> bool:
    """Whether a CMake condition holds only where the NVIDIA build is on: it names no alternative (`OR`), and it
    tests NVIDIA (`USE_CUDA AND UNIX`) or one of `cuda_options` without `NOT`."""
    words = condition.replace("(", " ").replace(")", " ").split()
    if "OR" in words:
        return False
    if _condition_vendor(condition) == "nvidia":
        return True
    return any(word in cuda_options and (not index or words[index - 1] != "NOT") for index, word in enumerate(words))


def _sets_up_cuda(command: str, arguments: str) -> bool:
    """A command a block switching on the CUDA build alone may hold: one naming NVIDIA (`check_language(CUDA)`,
    `find_package(CUDAToolkit)`), a message, or an `if()` probing NVIDIA (`if(CMAKE_CUDA_COMPILER)`)."""
    if command in ("message", "elseif", "else", "endif"):
        return True
    if command == "if":
        return _condition_vendor(arguments) == "nvidia"
    return vendor_of_words(f"{command} {arguments}") == "nvidia"


def _note_languages(stack: list[_OptionArm], command: str) -> None:
    """Record the languages `command` enables in every open block whose first arm holds it: as enabled there, and as
    probed when every block between is in an NVIDIA arm."""
    languages = {"CUDA"} if _CUDA_LANGUAGE.search(command) else set()
    languages |= {"HIP"} if _HIP_LANGUAGE.search(command) or _HIP_PACKAGE.search(command) else set()
    if not languages:
        return
    for index, block in enumerate(stack):
        if not block.first:
            continue
        block.languages |= languages
        inner = stack[index + 1 :]
        if all(other.arm == "nvidia" for other in inner):
            block.probed |= languages
            block.direct = block.direct or not inner


def cmake_switches_off_on_rocm(texts: Iterable[str]) -> frozenset[str]:
    """The switches a ROCm build leaves off: options a project declares off by default where it builds HIP and
    on (or from another option) elsewhere (`if(GPU_PLATFORM STREQUAL "HIP") option(BUILD_X "..." off) else()
    option(BUILD_X "..." on)`), and variables it sets on, or to a package's found flag, only where it builds for
    NVIDIA (`if(HIP_PLATFORM STREQUAL "nvcc") set(SOLVER_AVAILABLE TRUE)`, `if(XYZ_HAS_CUDA) find_package(cuTENSOR)
    set(XYZ_HAS_CUTENSOR ${cuTENSOR_FOUND})`), never declared an option elsewhere."""
    defaults: dict[str, set[tuple[str | None, bool]]] = {}  # option -> (vendor of the arm declaring it, off)
    switched_on: dict[str, set[str | None]] = {}  # variable -> the vendors of the arms setting it on
    for text in texts:
        arms: list[list[str | None]] = []  # per open `if`: [vendor its current arm is for, vendor its test names]
        platforms: list[list[str | None]] = []  # the same, of the HIP platform each `if` compares (None: none)
        for command, arguments, _ in cmake_commands(text):
            name = command.lower()
            if name == "if":
                arms.append([vendor_of_words(_tested(arguments))] * 2)
                platforms.append([_platform_tested(arguments)] * 2)
            elif name == "elseif" and arms:
                arms[-1][0] = vendor_of_words(_tested(arguments))
                platforms[-1][0] = _platform_tested(arguments)
            elif name == "else" and arms:
                arms[-1][0] = _other_vendor(arms[-1][1])
                platforms[-1][0] = _other_vendor(platforms[-1][1])
            elif name == "endif" and arms:
                arms.pop()
                platforms.pop()
            elif name in ("option", "set"):
                words = re.findall(r'"[^"]*"|\S+', arguments)
                platform = next((arm for arm, _ in reversed(platforms) if arm is not None), None)
                vendor = platform or next((arm for arm, _ in arms if arm is not None), None)
                position = 2 if name == "option" else 1  # `option(NAME "help" DEFAULT)`, `set(NAME VALUE)`
                value = words[position].strip('"').upper() if len(words) > position else ""
                if name == "option" and len(words) >= 2:
                    defaults.setdefault(words[0], set()).add((vendor, value in ("", "OFF", "FALSE", "NO", "0")))
                elif (
                    name == "set"
                    and len(words) == 2
                    and (value in ("ON", "TRUE", "YES", "1") or _found_flag(words[1:]))
                ):
                    switched_on.setdefault(words[0], set()).add(vendor)
    off_by_default = {
        option
        for option, declared in defaults.items()
        if ("rocm", True) in declared and any(vendor != "rocm" and not off for vendor, off in declared)
    }
    nvidia_only = {variable for variable, vendors in switched_on.items() if vendors == {"nvidia"}} - set(defaults)
    return frozenset(off_by_default | nvidia_only)


_FILE_ARGUMENTS = re.compile(r"^\s*(?:GLOB\w*|\$\{\w+\})\s.*\$\{ARG(?:N|V)\}")


def cmake_glob_functions(texts: Iterable[str]) -> frozenset[str]:
    """The project's CMake functions and macros that run `file(GLOB ...)` on their arguments (`macro(my_glob glob
    variable) file(${glob} ${variable} ${ARGN})`): a call `my_glob(GLOB VAR dir/*.cu)` globs sources. Lowercase."""
    found: set[str] = set()
    for text in texts:
        current = ""
        for command, arguments, _ in cmake_commands(text):
            name = command.lower()
            if name in ("function", "macro") and arguments.split():
                current = arguments.split()[0].lower()
            elif name in ("endfunction", "endmacro"):
                current = ""
            elif current and name == "file" and _FILE_ARGUMENTS.search(arguments):
                found.add(current)
    return frozenset(found)


def _globbed_sources(arguments: str, vendor: str | None, path: str, line: int, root: str) -> Iterator[SourceSet]:
    """The source patterns of `file(GLOB VAR patterns...)` (`GLOB_RECURSE`: in the pattern's folder at any depth),
    for the list variable it sets; one starting at the project's `root` (`${CMAKE_SOURCE_DIR}/src/cuda/*.cu`) is
    absolute."""
    words = [word.strip('"') for word in arguments.split()]
    if len(words) < 3:
        return
    recurse, variable = words[0] == "GLOB_RECURSE", words[1]
    options = iter(words[2:])
    for word in options:
        if word in ("RELATIVE", "LIST_DIRECTORIES"):
            next(options, None)  # the option's value
            continue
        pattern = _in_build_folder(word, root)
        if word in _GLOB_OPTIONS or "$" in pattern or not pattern.endswith(_SOURCE_SUFFIXES):
            continue
        if recurse:
            folder, _, name = pattern.rpartition("/")
            pattern = f"{folder or '.'}/**/{name}"
        yield SourceSet(pattern, vendor, path, line, variable=variable)


_ARGUMENT_LIST = re.compile(r"\$\{ARG(?:N|V)\}")


def cmake_filelist_functions(texts: Iterable[str], bzl_texts: Mapping[str, str]) -> dict[str, str]:
    """The project's CMake functions that hand the caller a list of a `.bzl` file (lowercase name -> that file's
    text; see rocmlint/cuda/cmake_filelists.py): `function(get_filelist name outputvar)` running Python on
    `xyz_defs.bzl` to print the expression its first parameter names."""
    found: dict[str, str] = {}
    for text in texts:
        function, first, body = "", "", ""
        for command, arguments, _ in cmake_commands(text):
            name = command.lower()
            if name == "function" and arguments.split():
                function, first, body = arguments.split()[0], (arguments.split()[1:] or [""])[0], ""
            elif name == "endfunction" and function:
                read = bzl_list_read(body)
                source = bzl_text(read[0], bzl_texts) if read is not None and read[1] == first else None
                if source is not None:
                    found[function.lower()] = source
                function = ""
            elif function:
                body += f" {command}({arguments})"
    return found


def cmake_source_functions(texts: Iterable[str]) -> SourceFunctions:
    """The project's CMake functions and macros that pass their arguments to a source list or target
    (`function(my_add_sources)` whose body runs `list(APPEND SRCS ${ARGN})`, `macro(add_example target file)`
    whose body runs `add_executable(${target} ${file})`, loops over `${ARGN}` and appends each,
    appends them to a global property, or hands them to another such function): a call to one,
    `my_add_sources(a.cu b.cu)`, lists sources as `list(APPEND ...)` does. Lowercase (CMake command names are
    case-insensitive). Read over every CMake file: a `.cmake` module defines what the `CMakeLists.txt` files call."""
    passes_arguments_to: dict[str, set[str]] = {}  # function -> the commands its body hands its arguments to
    under_own_folder: set[str] = set()
    for text in texts:
        current, arguments_seen = "", _ARGUMENT_LIST
        for command, arguments, _ in cmake_commands(text):
            name = command.lower()
            if name in ("function", "macro") and arguments.split():
                current, *parameters = arguments.split()
                current, arguments_seen = current.lower(), _ARGUMENT_LIST
                if parameters:  # `macro(add_example target file)`: `${file}` is an argument too
                    named = "|".join(re.escape(parameter) for parameter in parameters)
                    arguments_seen = re.compile(rf"{_ARGUMENT_LIST.pattern}|\$\{{(?:{named})\}}")
                passes_arguments_to.setdefault(current, set())
            elif name in ("endfunction", "endmacro"):
                current = ""
            elif current and name == "cmake_parse_arguments" and _parsed_prefix(arguments):
                # `cmake_parse_arguments(ARG "" "" "CUDA_SOURCES" ${ARGN})`: `${ARG_CUDA_SOURCES}` are arguments too.
                prefix = re.escape(_parsed_prefix(arguments))
                arguments_seen = re.compile(rf"{arguments_seen.pattern}|\$\{{{prefix}_\w+\}}")
            elif current and name == "foreach" and _ARGUMENT_LIST.search(arguments) and arguments.split():
                loop = re.escape(arguments.split()[0])
                arguments_seen = re.compile(rf"{_ARGUMENT_LIST.pattern}|\$\{{{loop}\}}")
            elif current and arguments_seen.search(arguments) and _appends(name, arguments):
                passes_arguments_to[current].add(name)
                if _placed_in_a_folder(arguments, arguments_seen):
                    under_own_folder.add(current)
                if derived := _variable_derived(name, arguments):
                    # `get_filename_component(__name "${file}" ABSOLUTE)`: `${__name}` is the argument, made absolute.
                    arguments_seen = re.compile(rf"{arguments_seen.pattern}|\$\{{{re.escape(derived)}\}}")
    appending = _CMAKE_SOURCE_COMMANDS | {"set_property"}
    found = {function for function, commands in passes_arguments_to.items() if commands & appending}
    # A wrapper that hands its arguments to a source function is one too (to a fixed point: wrappers of wrappers).
    while wrappers := {f for f, commands in passes_arguments_to.items() if f not in found and commands & found}:
        found |= wrappers
    return SourceFunctions(frozenset(found), frozenset(under_own_folder & found))


def _variable_derived(command: str, arguments: str) -> str:
    """The variable a command of a function body sets from the arguments it reads (`get_filename_component(OUT
    ${file} ABSOLUTE)`, `set(OUT ${file})`, `list(APPEND OUT ${file})`): a name, "" when it sets none or one the
    caller names (`set(${VAR} ...)`)."""
    words = arguments.split()
    if command == "list":
        written = words[1] if len(words) > 1 and words[0] in ("APPEND", "PREPEND", "INSERT") else ""
    else:
        written = words[0] if command in ("set", "get_filename_component") and words else ""
    return written if re.fullmatch(r"\w+", written) else ""


def _placed_in_a_folder(arguments: str, arguments_seen: re.Pattern[str]) -> bool:
    """Whether a command of a function body spells an argument after a folder other than the calling file's own
    (`"src/${NAME}/${ARGN}"`, not `${CMAKE_CURRENT_SOURCE_DIR}/${ARGN}`). A path in the build tree
    (`${CMAKE_CURRENT_BINARY_DIR}/${target}_export.hpp`) names a file the build writes, not where a source is."""
    for word in arguments.split():
        argument = arguments_seen.search(word)
        if argument is None or not word[: argument.start()].strip('"').endswith("/"):
            continue
        if _BUILD_TREE.match(word.strip('"')):
            continue
        if not _CURRENT_FOLDER.fullmatch(word[: argument.start()].strip('"')):
            return True
    return False


def _parsed_prefix(arguments: str) -> str:
    """The prefix of the variables `cmake_parse_arguments(PREFIX ...)` (or `(PARSE_ARGV N PREFIX ...)`) sets."""
    words = arguments.split()
    prefix = words[2] if words[:1] == ["PARSE_ARGV"] and len(words) > 2 else words[0] if words else ""
    return prefix if re.fullmatch(r"\w+", prefix) else ""


def _appends(command: str, arguments: str) -> bool:
    """Whether a command in a function body may add its arguments to something a build compiles: the source
    commands, `set_property(... APPEND PROPERTY ...)` (a global source list), or any other command (a call of a
    project function, decided once every function is known)."""
    if command == "set_property":
        return "APPEND" in arguments.split()
    return command not in ("message", "if", "elseif", "else", "endif", "foreach", "endforeach", "return")


def _builds_hip_outside_rocm_blocks(commands: list[tuple[str, str, int]]) -> bool:
    """Whether a command that builds the HIP language (`enable_language(HIP)`, `hip_add_library`, `LANGUAGES HIP`)
    sits outside every block testing a ROCm condition: the file is the ROCm build's alone. One that builds HIP only
    in an `if(USE_ROCM)` arm (PyTorch's `caffe2/CMakeLists.txt`, whose `elseif(USE_CUDA)` builds the CUDA library)
    is shared, and only that arm is ROCm's."""
    arms: list[str | None] = []  # per open `if`: the vendor its current arm tests
    for command, arguments, _ in commands:
        name = command.lower()
        if name == "if":
            arms.append(vendor_of_words(_tested(arguments)))
        elif name in ("elseif", "else") and arms:
            arms[-1] = vendor_of_words(_tested(arguments)) if name == "elseif" else None
        elif name == "endif" and arms:
            arms.pop()
        elif "rocm" not in arms and _HIP_LANGUAGE.search(f"{command}({arguments})"):
            return True
    return False


def _refused_on_rocm(commands: list[tuple[str, str, int]], file_vendor: str | None) -> frozenset[str]:
    """The options a ROCm build of this CMake file refuses: the `if(OPTION)` (or `if(WITH_HIP AND OPTION)`) arm
    of a `message(FATAL_ERROR ...)` inside ROCm code (`elseif(WITH_HIP) ... if(WITH_FLASH_ATTN)
    message(FATAL_ERROR "WITH_HIP=ON incompatible with WITH_FLASH_ATTN=ON")`). A block testing one alone is
    never ROCm's."""
    refused: set[str] = set()
    stack: list[tuple[str, str | None, bool]] = []  # per open `if`: (condition of its arm, vendor, first arm)
    for command, arguments, _ in commands:
        name = command.lower()
        if name == "if":
            stack.append((arguments, vendor_of_words(_tested(arguments)), True))
        elif name in ("elseif", "else") and stack:
            stack[-1] = (arguments, vendor_of_words(_tested(arguments)) if name == "elseif" else None, name == "elseif")
        elif name == "endif" and stack:
            stack.pop()
        elif name == "message" and arguments.split()[:1] == ["FATAL_ERROR"] and stack and stack[-1][2]:
            terms = [term.strip() for term in re.split(r"\s+AND\s+", stack[-1][0].strip())]
            in_rocm = file_vendor == "rocm" or any(vendor == "rocm" for _, vendor, _ in stack[:-1])
            testing_rocm = any(vendor_of_words(term) == "rocm" for term in terms)
            if in_rocm or testing_rocm:
                refused |= {t for t in terms if re.fullmatch(r"[A-Za-z_]\w*", t) and vendor_of_words(t) is None}
            if testing_rocm:
                refused |= _options_around(stack[:-1])
    return frozenset(refused)


def _options_around(stack: list[tuple[str, str | None, bool]]) -> set[str]:
    """The options tested alone by the first arms around a refusal of ROCm (`if(WITH_CVODE) ... if(XYZ_HIP_ENABLED)
    message(FATAL_ERROR "CVODE + HIP is not supported")`): the ROCm build refuses each, as it does one tested beside
    the ROCm switch. Only when every arm around it is such a first arm: under any other condition, the options are
    refused only together with it."""
    options = {condition.strip() for condition, _, _ in stack}
    if not all(first for _, _, first in stack) or not all(
        re.fullmatch(r"[A-Za-z_]\w*", option) and vendor_of_words(option) is None for option in options
    ):
        return set()
    return options


def _folder_name(path: str, root: str) -> str:
    """The name of the folder of a build file, which may name the vendor it builds for (`hip/CMakeLists.txt`);
    "" for the project's `root` folder, whose name is the project's."""
    folder = os.path.dirname(path)
    at_root = bool(root) and os.path.normpath(folder) == os.path.normpath(root)
    return "" if at_root else os.path.basename(folder)


def _block_vendor(blocks: list[list[str | None]], file_vendor: str | None) -> str | None:
    """The vendor of the code at this point: the file's, else the outermost block that names one. An inner
    `if(GGML_CUDA_FORCE_MMQ)` in a HIP-only file, or inside `if(USE_ROCM)`, is an option named after CUDA,
    not a switch to the NVIDIA build."""
    return file_vendor or next((arm for arm, _ in blocks if arm is not None), None)


def _condition_vendor(condition: str) -> str | None:
    """The vendor a CMake `if()` arm is written for: the one its words name (`USE_ROCM`, `CUDA_FOUND`); the other
    one for a vendor named only after `NOT` (`NOT USE_ROCM` is NVIDIA's arm, as the `else()` of `USE_ROCM` is). A
    conjunction needing one vendor's switch is that vendor's whatever else it negates (`XYZ_ENABLE_CUDA AND NOT
    CUDA_ARCH_GIVEN`)."""
    tested = _tested(condition)
    words = tested.replace("(", " ").replace(")", " ").split()
    if "NOT" not in words:
        return vendor_of_words(tested)
    needed = {
        vendor_of_words(word)
        for index, word in enumerate(words)
        if word not in _CMAKE_LOGIC_WORDS and not (index and words[index - 1] == "NOT")
    } - {None}
    if "OR" not in words and len(needed) == 1:
        return needed.pop()
    implied = set()
    for index, word in enumerate(words):
        named = vendor_of_words(word) if word not in _CMAKE_LOGIC_WORDS else None
        if named is not None:
            implied.add(_other_vendor(named) if index and words[index - 1] == "NOT" else named)
    return implied.pop() if len(implied) == 1 else None


_CMAKE_LOGIC_WORDS = frozenset({"NOT", "AND", "OR"})


def _tested(condition: str) -> str:
    """A CMake condition without the patterns it matches text against: `${out} MATCHES ".*GL_NV_coop.*"` tests no
    vendor, `LANG STREQUAL "CUDA"` does, and so does a pattern that is a vendor's plain word (`backend MATCHES
    "CUDA"`)."""
    condition = re.sub(r'\bMATCHES\s+(?:"[^"]*"|\S+)', _vendor_word_matched, condition)
    condition = _NOT_FOUND_COMPARISON.sub(lambda m: m.group(2) if m.group(1) else f"NOT {m.group(2)}", condition)
    return _PLATFORM_COMPARISON.sub(lambda m: m.group(1) if vendor_of_words(m.group(1)) else m.group(), condition)


def _platform_tested(condition: str) -> str | None:
    """The vendor of the HIP platform a CMake condition compares (`${HIP_PLATFORM} STREQUAL "nvcc"`,
    `CMAKE_HIP_COMPILER_ID STREQUAL "NVIDIA"`, also within `ENABLE_GPU AND ...`), else None (a negated test, `NOT`,
    too)."""
    match = _PLATFORM_COMPARISON.search(condition)
    if match is None or "NOT" in condition.split():
        return None
    return vendor_of_words(match.group(1))


def _vendor_word_matched(match: re.Match[str]) -> str:
    """A `MATCHES PATTERN` as the word it matches when the pattern is a plain word naming a vendor (`"CUDA"`), else
    nothing."""
    pattern = match.group().split(None, 1)[1].strip('"')
    return f" {pattern} " if re.fullmatch(r"\w+", pattern) and vendor_of_words(pattern) else " "


# `X STREQUAL "NOTFOUND"` (`X-NOTFOUND`) holds where X is not found: `NOT X`; `NOT X STREQUAL "NOTFOUND"` (CMake
# compares before it negates) where it is found, `X`.
_NOT_FOUND_COMPARISON = re.compile(r'(NOT\s+)?(\S+)\s+STREQUAL\s+"?[\w$]*-?NOTFOUND"?')
# `${HIP_PLATFORM} STREQUAL "nvcc"`, `CMAKE_HIP_COMPILER_ID STREQUAL "NVIDIA"` (HIP compiled by nvcc): a platform
# or HIP compiler variable compared with a value naming a vendor tests that vendor.
_PLATFORM_COMPARISON = re.compile(r'\S*(?:PLATFORM|HIP_COMPILER_ID)\S*\s+STREQUAL\s+"?([\w-]+)"?', re.IGNORECASE)


# Reading a tree asks for the commands of each CMake file about ten times (its facts, the unrun and unread files, the
# CUDA options, the project's functions, ...): they are split once per text. Bounded, so that a long-running server
# that reads many trees keeps only the last ones' texts.
@lru_cache(maxsize=1024)
def cmake_commands(text: str) -> tuple[tuple[str, str, int], ...]:
    """(command, its argument text, line) for each CMake command, comments removed, remembered per text."""
    return tuple(_split_cmake_commands(text))


def _split_cmake_commands(text: str) -> Iterator[tuple[str, str, int]]:
    """`cmake_commands`. The closing parenthesis is found by a regex jumping from parenthesis to parenthesis, and
    lines are counted on from the previous command (counting from the top each time was quadratic in a long
    CMakeLists.txt)."""
    text = re.sub(r"#[^\n]*", "", text)
    line, counted = 1, 0
    for match in _CMAKE_COMMAND.finditer(text):
        depth, position = 1, len(text)  # an unclosed command's arguments run to the end, less one character
        for parenthesis in _PARENTHESIS.finditer(text, match.end()):
            if parenthesis.group() not in "()":
                continue  # a quoted argument: `"(Both ROCm and SYCL"` opens nothing
            depth += 1 if parenthesis.group() == "(" else -1
            if not depth:
                position = parenthesis.end()
                break
        # From the command's name: the match starts with the blank lines before it.
        line += text.count("\n", counted, match.start(1))
        counted = match.start(1)
        yield match.group(1), text[match.end() : position - 1], line


def _cmake_defines(command: str, arguments: str, vendor: str | None, path: str, line: int) -> Iterator[BuildDefine]:
    words = arguments.replace('"', " ").split()
    if command == "target_compile_definitions":
        words = words[1:]  # the target
    joined = " ".join(words)
    for switch, then in _BOOL_SWITCHED.findall(joined):
        # `$<IF:$<BOOL:${XYZ_ENABLE_CUDA}>, XYZ_ENABLE_CUDA=1,>`: defined only where the option named for NVIDIA is on.
        yield from _cmake_defines("add_compile_definitions", then, vendor or vendor_of_words(switch), path, line)
    for word in _BOOL_SWITCHED.sub(" ", joined).split():
        if word in _CMAKE_KEYWORDS or "$" in word:
            continue
        name, _, value = word.removeprefix("-D").partition("=")
        if command == "add_definitions" and not word.startswith("-D"):
            continue
        if re.fullmatch(r"[A-Za-z_]\w*", name):
            yield BuildDefine(name, value or None, vendor, path, line)


# A generator expression giving its words only where a CMake option is on: `$<IF:$<BOOL:${OPT}>, WORDS, ELSE>` or
# `$<$<BOOL:${OPT}>:WORDS>` (the option, then its words; what the other arm gives is left out).
_BOOL_SWITCHED = re.compile(r"\$<(?:IF:)?\$<BOOL:\$\{(\w+)\}>\s*[,:]\s*([^,>]*)(?:,[^>]*)?>")


# A variable set to a project folder (`set(PROJECT_ROOT ${CMAKE_CURRENT_LIST_DIR})`, `.../src`) and its value.
_FOLDER_VALUE = re.compile(
    r"^\s*([A-Za-z_]\w*)\s+\"?(\$\{(?:CMAKE_CURRENT_(?:SOURCE|LIST)_DIR|CMAKE_SOURCE_DIR|PROJECT_SOURCE_DIR)\}"
    r"(?:/[\w./-]*)?)\"?\s*$"
)
_VARIABLE_USE = re.compile(r"\$\{([A-Za-z_]\w*)\}")


def _folder_variables_expanded(command: str, arguments: str, folder_variables: dict[str, str]) -> str:
    """`arguments` with the file's own variables naming a project folder replaced by their value (`${ROOT}/src/*.cu`
    after `set(ROOT ${CMAKE_CURRENT_LIST_DIR})` globs `${CMAKE_CURRENT_LIST_DIR}/src/*.cu`), and such a `set`
    remembered in `folder_variables`; a variable set to anything else is forgotten."""
    expanded = _VARIABLE_USE.sub(lambda m: folder_variables.get(m.group(1), m.group()), arguments)
    if command == "set" and arguments.split():
        folder = _FOLDER_VALUE.match(expanded)
        if folder is None:
            folder_variables.pop(arguments.split()[0], None)
        else:
            folder_variables[folder.group(1)] = folder.group(2)
    return expanded


def _remember_source_value(command: str, arguments: str, values: dict[str, str]) -> None:
    """Remember `set(VAR "${CMAKE_CURRENT_LIST_DIR}/probe.cpp")` or `set(VAR probe.cpp)` in `values`; a variable set
    to anything else is forgotten."""
    words = [word.strip('"') for word in arguments.split()]
    if command != "set" or not words:
        return
    values.pop(words[0], None)
    if len(words) == 2 and words[1].endswith(_SOURCE_SUFFIXES):
        values[words[0]] = words[1]


def _probe_sources(arguments: str, values: dict[str, str], path: str, root: str = "") -> list[str]:
    """The source files a `try_run`/`try_compile` compiles: its words naming one, directly or through a variable
    the file set to one (`_remember_source_value`); `${CMAKE_CURRENT_LIST_DIR}` is the folder of the file at
    `path`, `${CMAKE_CURRENT_SOURCE_DIR}` the folder it is read in, `${PROJECT_SOURCE_DIR}` the project's `root`
    (`_in_build_folder`)."""
    folder = os.path.dirname(os.path.abspath(path))
    found = []
    for word in arguments.split():
        source = _VARIABLE_USE.sub(lambda m: values.get(m.group(1), m.group()), word.strip('"'))
        source = _in_build_folder(source.replace("${CMAKE_CURRENT_LIST_DIR}", folder), root)
        if source.endswith(_SOURCE_SUFFIXES) and "$" not in source:
            found.append(source)
    return found


def _definition_lists(commands: list[tuple[str, str, int]]) -> frozenset[str]:
    """The variables a CMake file hands to a define command whole (`target_compile_definitions(t PUBLIC
    "${XYZ_DEFINITIONS}")`, a project function's `COMPILE_DEFINITIONS ${XYZ_DEFINITIONS}`): what it sets or appends to them are definitions, in the vendor of the block doing so."""
    found: set[str] = set()
    for command, arguments, _ in commands:
        name = command.lower()
        if name in _CMAKE_DEFINE_COMMANDS or (name in _PROPERTY_COMMANDS and "COMPILE_DEFINITIONS" in arguments):
            found.update(re.findall(r'(?:^|[\s"])\$\{([A-Za-z_]\w*)\}(?=[\s"]|$)', arguments))
        else:
            found.update(re.findall(r"\$\{([A-Za-z_]\w*)\}", _keyword_definitions(name, arguments)))
    return frozenset(found)


def _listed_definitions(command: str, arguments: str, lists: frozenset[str]) -> str:
    """The definitions `set(XYZ_DEFINITIONS A B=1)` or `list(APPEND XYZ_DEFINITIONS A)` puts in one of `lists`, ""
    when it sets another variable."""
    words = arguments.split()
    if command == "list":
        return " ".join(words[2:]) if words[:1] == ["APPEND"] and words[1:2] and words[1] in lists else ""
    return (
        " ".join(word for word in words[1:] if word not in ("PARENT_SCOPE", "CACHE"))
        if words[:1] and words[0] in lists
        else ""
    )


def _appended_flags(arguments: str) -> bool:
    """`list(APPEND HIP_CXX_FLAGS -DHIPBLAS_V2)`: compiler flags appended to a flags variable."""
    words = arguments.split()
    return len(words) > 2 and words[0] == "APPEND" and _FLAGS_SUFFIX.search(words[1]) is not None


def _cmake_flag_defines(arguments: str, path: str, line: int) -> Iterator[BuildDefine]:
    """The `-D` flags of `list(APPEND <flags variable> ...)` when the variable's name says the ROCm compiler gets
    them (PyTorch's `HIP_CXX_FLAGS` with `-DHIPBLAS_V2`): ROCm build defines. A generic or NVIDIA variable's flags
    (`VLLM_GPU_FLAGS`, `CUDA_NVCC_FLAGS`) are left to the commands that define macros outright."""
    words = arguments.replace('"', " ").split()
    if vendor_of_words(_FLAGS_SUFFIX.sub("", words[1])) != "rocm":
        return
    for word in words[2:]:
        match = _DASH_D.match(word)
        if match is not None and "$" not in word:
            yield BuildDefine(match.group(1), match.group(2) or None, "rocm", path, line)


# --- Makefiles ----------------------------------------------------------------------------------------------------
_MAKEFILE_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile"})


def is_makefile(path: str) -> bool:
    """A Makefile (also one named for what it builds, `makefile.hip`, which `make -f` runs), or a make fragment
    (`*.mk`) one includes: what `makefile_facts` reads."""
    stem, _, suffix = os.path.basename(path).partition(".")
    if stem in _MAKEFILE_NAMES:
        return suffix.lower() not in _NOT_MAKE_SUFFIXES
    return path.endswith(".mk")


# What a file named `Makefile.<suffix>` holds when it is not make's: documentation, a script.
_NOT_MAKE_SUFFIXES = frozenset({"md", "txt", "rst", "py", "sh", "bak", "orig"})


def _named_vendor(path: str) -> str | None:
    """The vendor a Makefile's name says it builds for (`Makefile.hip`, `makefile.cuda`; not `rocm.mk`'s fragment
    name, which `makefile_facts` reads as the file's vendor anyway)."""
    stem, _, suffix = os.path.basename(path).partition(".")
    return vendor_of_words(suffix) if stem in _MAKEFILE_NAMES and suffix else None


def makefiles_named_by_vendor(paths: Iterable[str]) -> bool:
    """Whether a project's Makefiles are named after the vendor each builds for, both vendors (`Makefile.cuda`
    beside `Makefile.hip`, `make -f Makefile.hip`): the project keeps one build per vendor, each defining its own
    vendor's macros."""
    return {_named_vendor(path) for path in paths} >= {"rocm", "nvidia"}


_MAKE_CONDITIONAL = re.compile(r"^\s*(?:else\s+)?(ifeq|ifneq|ifdef|ifndef)\b(.*)$")
_MAKE_DEFINE = re.compile(r"(?:^|\s)-D\s*([A-Za-z_]\w*)(?:=(\S*))?")
# A variable's name without the kind of flags it holds: `HIPCCFLAGS` names hipcc, `ROCM_FLAGS` ROCm.
_FLAGS_SUFFIX = re.compile(r"(?i)_?(?:FLAGS|OPTS|OPTIONS|DEFINES|DEFS)$")
# The compilers, by name or through a variable naming them (`$(HIPCC)`, `$(ROCM_HIPCC)`, `$(CUDA_NVCC)`).
_HIPCC = re.compile(r"\bhipcc\b|\$[({](?:\w+_)?HIPCC[)}]", re.IGNORECASE)
_NVCC = re.compile(r"\bnvcc\b|\$[({](?:\w+_)?NVCC[)}]", re.IGNORECASE)


def makefile_facts(
    path: str,
    text: str,
    root: str = "",
    read_elsewhere: frozenset[str] = frozenset(),
    automake_conditionals: Mapping[str, str] | None = None,
    hip_twin: bool = False,
    builds_named_by_vendor: bool = False,
    fragment: AutomakeFragment | None = None,
) -> BuildFacts:
    """The macros a Makefile or make fragment (`*.mk`) defines per vendor: the `-D` flags of its variable
    assignments (`CXXFLAGS += -DUSE_ROCM -DCUDA_VERSION=11000`) and recipes. Their vendor is the file's (a
    fragment named for one, `hip_64bit.mk`; a Makefile in a folder named for one, not the project's `root`; a file
    that runs hipcc and never nvcc), else that of the outermost `ifeq`/`ifdef` block naming one (`ifeq ($(ROCM),
    true)`, its `else` the other vendor's), else the variable's (`ROCM_FLAGS`, `HIPCCFLAGS`, `NVCC_FLAGS`) or the
    compiler a recipe runs. `read_elsewhere`: the variables other make files of the project read (see
    `_make_source_sets`). An automake input's `if NAME` blocks are read as make's are, each with the vendor
    `rocmlint/cuda/automake.py` finds (`automake_conditionals`: the vendors of configure's `AM_CONDITIONAL`s).
    `hip_twin`: a Makefile of a sibling folder compiles with hipcc alone (`src/hip/Makefile` beside `src/cuda/`), the
    twin program a Makefile running nvcc alone over its folder's tree is ported to (`_nvcc_program_recipe`).
    `builds_named_by_vendor`: the project names its Makefiles after the vendor each builds for, both vendors
    (`makefiles_named_by_vendor`), so that the `-D` flags of `Makefile.cuda` are NVIDIA's even where it is the
    only Makefile of its folder: the ROCm build of that folder, where there is one, is a `Makefile.hip`.
    `fragment`: an automake input includes this fragment (`automake_fragments`), which is then automake's too."""
    stem, suffix = os.path.splitext(os.path.basename(path))
    named = stem if suffix == ".mk" else _folder_name(path, root)
    lines = list(_make_lines(text))
    hip = any(_HIPCC.search(logical) for _, logical in lines)
    nvcc = any(_NVCC.search(logical) for _, logical in lines)
    inherited = fragment.vendor if fragment is not None else None
    file_vendor = inherited or vendor_of_words(named) or ("rocm" if hip and not nvcc else None)
    # The vendor of the definitions; the sources keep the file's (a program only a `Makefile.cuda` builds is for
    # the build readers of programs to place, `_nvcc_only`).
    defines_vendor = file_vendor or (_named_vendor(path) if builds_named_by_vendor else None)
    raw = text.splitlines()
    recipes = frozenset(line for line, _ in lines if raw[line - 1].startswith("\t"))
    defines: list[BuildDefine] = []
    hipified: dict[str, str] = {}  # folder -> evidence
    rule_sources: tuple[str, ...] = ()  # the source folders of the pattern rule whose recipe follows
    static_sources: dict[str, str] = {}  # a target of a static pattern rule -> the folder it is made from
    blocks: list[list[str | None]] = []  # per open block: [vendor of its current arm, vendor of its `else`]
    blocks_by_line: dict[int, str | None] = {}  # line -> the vendor of the blocks around it
    automake = (
        {
            line: (kind, arms)
            for line, kind, arms in automake_arm_vendors(lines, automake_conditionals or {}, vendor_of_words)
        }
        if is_automake_file(path) or fragment is not None
        else {}
    )
    for line, logical in lines:
        blocks_by_line[line] = _block_vendor(blocks, None)
        if line in automake:
            _enter_automake_line(blocks, *automake[line])
            continue
        if line in recipes:  # a recipe: the shell gets its `#`, no comment to make
            defines += _configured_by_sed(raw[line - 1], _block_vendor(blocks, defines_vendor), path, line)
            for source in rule_sources if _HIPIFY_RUN.search(logical) else ():
                folder = os.path.normpath(os.path.join(os.path.dirname(path), source))
                hipified.setdefault(folder, f"{path}:{line}: hipifies {source}/ for ROCm")
        elif logical.strip():
            rule_sources = _rule_sources(logical, static_sources)
        conditional = _MAKE_CONDITIONAL.match(logical)
        stripped = logical.strip()
        if conditional is not None:
            arms = _make_arm_vendors(conditional)
            if stripped.startswith("else") and blocks:
                blocks[-1][:] = arms
            else:
                blocks.append(list(arms))
        elif stripped == "else" and blocks:
            blocks[-1][0] = blocks[-1][1]
        elif stripped == "endif" and blocks:
            blocks.pop()
        elif "-D" in logical:
            assignment = MAKE_ASSIGNMENT.match(logical)
            own = vendor_of_words(_FLAGS_SUFFIX.sub("", assignment.group(1))) if assignment else _recipe_vendor(logical)
            vendor = _block_vendor(blocks, defines_vendor) or own
            flags = _FILTER_CALL.sub(" ", assignment.group(2) if assignment else logical)
            defines += [BuildDefine(m.group(1), m.group(2), vendor, path, line) for m in _MAKE_DEFINE.finditer(flags)]
    defines += _hipconfig_defines(path, text)
    variable_vendors = vendors_reading(lines, recipes, blocks_by_line, read_elsewhere)
    make_vendor = file_vendor or _nvcc_only(hip, nvcc, hipified)
    sources = _make_source_sets(path, lines, blocks_by_line, variable_vendors, make_vendor)
    if fragment is not None:  # automake reads a fragment's paths from the including `Makefile.am`'s folder
        sources = tuple(_from_folder(s, fragment.srcdir) for s in sources)
    program = _nvcc_program_recipe(lines, recipes, blocks_by_line) if hip_twin and make_vendor == "nvidia" else 0
    if program:
        sources += (SourceSet("**", "nvidia", path, program),)
    sources = _compiled_by_one_vendors_rules(sources, _pattern_rule_vendors(lines, recipes))
    sources += _folders_dropped_for_rocm(path, lines, blocks_by_line)
    folders = _make_include_folders(path, lines, fragment.srcdir if fragment else os.path.dirname(path))
    return BuildFacts(
        tuple(defines),
        include_folders=tuple(SourceSet(f, file_vendor or blocks_by_line[line], path, line) for line, f in folders),
        sources=sources + _automake_folder(path, lines, automake, blocks_by_line),
        cuda_language=nvcc,
        hipify_folders=tuple(hipified.items()),
        make_source_lists=_make_source_list(path, lines),
        hipify_tool=hipify_tool_run(path, text),
    )


class AutomakeFragment(NamedTuple):
    """A make fragment an automake input includes: the folder its paths are relative to (the including
    `Makefile.am`'s) and the vendor of the conditional arms its `include` sits in (None: any vendor's build)."""

    srcdir: str
    vendor: str | None


def automake_fragments(make_texts: Mapping[str, str], conditionals: Mapping[str, str]) -> dict[str, AutomakeFragment]:
    """The make fragments (`src/backend/cuda/Makefile.mk`) the automake inputs among `make_texts` include, directly
    or through other such fragments (`include $(top_srcdir)/src/backend/cuda/Makefile.mk`): automake pastes them in
    place, so their `if NAME` lines are automake's, their paths are relative to the including `Makefile.am`'s folder,
    and an `include` inside one vendor's conditional arm (`if BUILD_CUDA_BACKEND`, from configure's
    `AM_CONDITIONAL`s: `conditionals`) makes what the fragment lists that vendor's, as a CMake folder added only
    under `if(USE_CUDA)` is."""
    found: dict[str, AutomakeFragment] = {}
    pending = [(path, AutomakeFragment(os.path.dirname(path), None)) for path in make_texts if is_automake_file(path)]
    while pending:
        path, outer = pending.pop()
        lines = list(_make_lines(make_texts[path]))
        arms = {line: (kind, a) for line, kind, a in automake_arm_vendors(lines, conditionals, vendor_of_words)}
        blocks: list[list[str | None]] = []
        for line, logical in lines:
            if line in arms:
                _enter_automake_line(blocks, *arms[line])
                continue
            included = _MAKE_INCLUDE.match(logical)
            target = _included_fragment(included.group(1), path, outer.srcdir, make_texts) if included else None
            if target is None or target in found or is_automake_file(target):
                continue
            found[target] = AutomakeFragment(outer.srcdir, outer.vendor or _block_vendor(blocks, None))
            pending.append((target, found[target]))
    return found


def _included_fragment(named: str, includer: str, srcdir: str, make_texts: Mapping[str, str]) -> str | None:
    """The make file an automake `include` names: `$(srcdir)/x.mk` from the including `Makefile.am`'s folder,
    `$(top_srcdir)/x.mk` from the package's top folder (the closest folder above holding the file), a plain path
    from the including file's folder. None when it is no make file of the project."""
    top = _TOP_SRCDIR.match(named)
    if top is None:
        plain = _SRCDIR.sub(srcdir, named) if _SRCDIR.match(named) else os.path.join(os.path.dirname(includer), named)
        target = os.path.normpath(plain)
        return target if target in make_texts else None
    rest = named[top.end() :].lstrip("/")
    folder = srcdir
    while True:
        target = os.path.normpath(os.path.join(folder, rest))
        if target in make_texts:
            return target
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


# `include FILE` (automake's, and GNU make's), and the directory variables automake's includes start with.
_MAKE_INCLUDE = re.compile(r"^include\s+(\S+)\s*$")
_TOP_SRCDIR = re.compile(r"^\$[({]top_srcdir[)}]")
_SRCDIR = re.compile(r"^\$[({]srcdir[)}]")


def _make_include_folders(path: str, lines: list[tuple[int, str]], srcdir: str) -> list[tuple[int, str]]:
    """(line, folder relative to the make file's folder) of each include folder its `-I` flags name by a plain path
    or from automake's source folder (`AM_CPPFLAGS += -I$(top_srcdir)/src/backend/cuda/include`, `srcdir`: the
    including `Makefile.am`'s folder); a folder named through another variable is left out."""
    own = os.path.dirname(os.path.abspath(path))
    found = []
    for line, logical in lines:
        for named in _INCLUDE_FLAG.findall(logical):
            named = _SRCDIR.sub(srcdir, _TOP_SRCDIR.sub(srcdir, named.strip("\"'")))
            if "$" not in named:
                found.append((line, os.path.relpath(os.path.join(os.path.abspath(srcdir), named), own)))
    return found


# An include folder a compiler flag names: `-Iinclude`, `-I $(top_srcdir)/src/include`.
_INCLUDE_FLAG = re.compile(r"(?<![\w-])-I\s*(\S+)")


def _from_folder(sources: SourceSet, folder: str) -> SourceSet:
    """`sources` with its pattern, written relative to `folder`, made relative to its build file's folder."""
    own = os.path.dirname(os.path.abspath(sources.path))
    pattern = os.path.relpath(os.path.join(os.path.abspath(folder), sources.pattern), own)
    return replace(sources, pattern=pattern)


def _folders_dropped_for_rocm(
    path: str, lines: list[tuple[int, str]], vendors: Mapping[int, str | None]
) -> tuple[SourceSet, ...]:
    """The folders beside a Makefile that its ROCm arm takes out of a list (`LIBNAMES := $(filter-out
    CudaSupport,$(LIBNAMES))` inside `ifneq ($(BACKEND),CUDA)`, the list of library folders it builds) as NVIDIA's
    (`CudaSupport/**`): the ROCm build compiles no library of them. So are the sources of the object files it takes
    out of a list (`OBJ := $(filter-out $(BUILD_DIR)/nvmon.o,$(OBJ))` inside `ifneq ($(NVIDIA_INTERFACE),true)`:
    `nvmon.c`, wherever the list's wildcard found it)."""
    found: list[SourceSet] = []
    for line, logical in lines:
        assignment = MAKE_ASSIGNMENT.match(logical)
        if vendors.get(line) != "rocm" or assignment is None:
            continue
        own = re.escape(assignment.group(1))
        for dropped in re.findall(rf"\$[({{]filter-out\s+([^,]*),\s*\$[({{]{own}[)}}][)}}]", assignment.group(2)):
            for word in dropped.split():
                if _FOLDER_WORD.match(word) and not word.endswith(".o"):
                    found.append(SourceSet(f"{word}/**", "nvidia", path, line))
                elif (stem := _OBJECT_WORD.fullmatch(word)) is not None:
                    found += [
                        SourceSet(f"**/{stem.group(1)}{suffix}", "nvidia", path, line) for suffix in _OBJECT_SOURCES
                    ]
    return tuple(found)


# A plain folder name (no variable, pattern or path).
_FOLDER_WORD = re.compile(r"^[A-Za-z_][\w.-]*$")
# An object file, maybe in a folder a variable names (`$(BUILD_DIR)/nvmon.o`): its stem.
_OBJECT_WORD = re.compile(r"(?:\$[({]\w+[)}]/|[\w./-]*/)?([A-Za-z_][\w-]*)\.o")
# The sources an object file of that stem is compiled from.
_OBJECT_SOURCES = (".c", ".cc", ".cpp", ".cxx", ".cu")


def _automake_folder(
    path: str,
    lines: list[tuple[int, str]],
    automake: Mapping[int, tuple[str, tuple[str | None, str | None]]],
    vendors: Mapping[int, str | None],
) -> tuple[SourceSet, ...]:
    """The folder of an automake input whose every statement sits in one vendor's conditional arms (`if HAVE_CUDA`
    around the whole `Makefile.am`: a module built only where configure found CUDA), as that vendor's folder
    (`**`): its sources, the headers it installs and its `SUBDIRS` are built only there, as a CMake folder added only
    under `if(USE_CUDA)` is."""
    statements = [(line, logical) for line, logical in lines if logical.strip() and line not in automake]
    found = {vendors.get(line) for line, _ in statements}
    if not statements or len(found) != 1 or None in found:
        return ()
    return (SourceSet("**", found.pop(), path, statements[0][0]),)


def _enter_automake_line(blocks: list[list[str | None]], kind: str, arms: tuple[str | None, str | None]) -> None:
    """Open, switch or close the block of an automake `if NAME`, `else` or `endif` line."""
    if kind == "if":
        blocks.append(list(arms))
    elif kind == "else" and blocks:
        blocks[-1][0] = blocks[-1][1]
    elif kind == "endif" and blocks:
        blocks.pop()


def _nvcc_only(hip: bool, nvcc: bool, hipified: dict[str, str]) -> str | None:
    """ "nvidia" for a Makefile that runs nvcc and never hipcc nor hipify (a folder of CUDA experiments with its own
    Makefile): what it compiles, it compiles for NVIDIA only. Its definitions keep their own vendors: before a port,
    such a Makefile is the only build."""
    return "nvidia" if nvcc and not hip and not hipified else None


def _make_source_sets(
    path: str,
    lines: list[tuple[int, str]],
    vendors: dict[int, str | None],
    variable_vendors: dict[str, str],
    make_vendor: str | None,
) -> tuple[SourceSet, ...]:
    """The sources a Makefile compiles, each with the vendor of the block naming it, else that of the variable it
    assigns when only one vendor's blocks read that (`cuda.c := $(wildcard cuda/*.c)` read only inside `ifneq
    ($(CUDA_DIR),)`: rocmlint/cuda/make_variables.py), else the Makefile's: the `$(wildcard main/*.cu)` patterns of
    its source lists, the source files it names (not those a `$(filter-out ...)` takes out), and for a Makefile
    compiling for NVIDIA only the CUDA sources beside it (its pattern rules, `%: %.cu`). A variable read only in
    NVIDIA's blocks is NVIDIA's only where the Makefile lists sources for ROCm too: its ROCm build picks other
    sources. They say what ROCm does not compile only where make also builds ROCm elsewhere in the project (see
    `CudaProject._systems_building_rocm`)."""
    found: list[tuple[SourceSet, str | None]] = []  # each with the vendor of the variable it assigns
    for line, logical in lines:
        assignment = MAKE_ASSIGNMENT.match(logical)
        variable_vendor = variable_vendors.get(assignment.group(1)) if assignment is not None else None
        vendor = vendors.get(line) or make_vendor
        for pattern in [*_MAKE_WILDCARD.findall(logical), *_found_by_shell(logical)]:
            found += [
                (SourceSet(word, vendor, path, line), variable_vendor) for word in pattern.split() if "$" not in word
            ]
        named = _MAKE_SOURCE_WORD.findall(_FILTER_OUT_CALL.sub(" ", logical))
        unbuilt = distributed_only(path, assignment.group(1)) if assignment is not None else ""
        found += [(SourceSet(word, vendor, path, line, unbuilt=unbuilt), variable_vendor) for word in named]
    lists_rocm = any((s.vendor or v) == "rocm" for s, v in found)
    sets = [
        replace(s, vendor=v) if s.vendor is None and v is not None and (v != "nvidia" or lists_rocm) else s
        for s, v in found
    ]
    compiling = next((line for line, logical in lines if _NVCC.search(logical)), 0) if make_vendor == "nvidia" else 0
    if compiling:
        sets.append(SourceSet("*.cu", "nvidia", path, compiling))
    return tuple(sets)


def runs_hipcc_alone(text: str) -> bool:
    """Whether a Makefile runs hipcc and never nvcc: a ROCm program's build."""
    lines = [logical for _, logical in _make_lines(text)]
    return any(_HIPCC.search(logical) for logical in lines) and not any(_NVCC.search(logical) for logical in lines)


def _nvcc_program_recipe(
    lines: list[tuple[int, str]], recipes: frozenset[int], vendors: Mapping[int, str | None]
) -> int:
    """The first recipe running nvcc of a Makefile that builds a program of its folder's tree for NVIDIA only, 0 when
    it does not: its recipes run nvcc, it has no ROCm arm and never runs hipcc, and it finds its sources by wildcards
    over folders it computes (`$(wildcard $(TARGET_DIR)/plugin-$(1)/*.cu)`, one per library folder), so that every
    source below it is one it may compile, for NVIDIA only."""
    if "rocm" in vendors.values() or any(_HIPCC.search(logical) for _, logical in lines):
        return 0
    if not any("$" in pattern for _, logical in lines for pattern in _MAKE_WILDCARD.findall(logical)):
        return 0
    return next(
        (
            line
            for line, logical in lines
            if line in recipes and MAKE_ASSIGNMENT.match(logical) is None and _NVCC.search(logical)
        ),
        0,
    )


def _pattern_rule_vendors(lines: list[tuple[int, str]], recipes: frozenset[int]) -> list[tuple[str, str | None]]:
    """(prerequisite glob, vendor of the compilers its recipe runs) of each pattern rule making a target from a source
    (`%vendorlib_test.x: %vendorlib_test.cu` then `$(NVCC) -o $@ $<`: `*vendorlib_test.cu`, NVIDIA), its `%`
    as `*`; the vendor None when the recipe runs a host compiler, both vendors' or none."""
    rules: list[tuple[list[str], set[str | None]]] = []  # per pattern rule: its prerequisite globs, its compilers
    for line, logical in lines:
        if line in recipes and rules:
            if _HIPCC.search(logical) or _NVCC.search(logical):
                rules[-1][1].add(_recipe_vendor(logical))
            elif _HOST_COMPILER.search(logical):
                rules[-1][1].add(None)
        elif logical.strip() and line not in recipes:
            match = _PATTERN_PREREQUISITES.match(logical)
            words = match.group(1).split() if match is not None and MAKE_ASSIGNMENT.match(logical) is None else []
            globs = [w.replace("%", "*").removeprefix("./") for w in words if "%" in w and "$" not in w]
            rules.append(([glob for glob in globs if glob.endswith(_SOURCE_SUFFIXES)], set()))
    return [(glob, next(iter(vendors)) if len(vendors) == 1 else None) for globs, vendors in rules for glob in globs]


# A recipe running a host C or C++ compiler (`$(CXX) -o $@ $<`, `g++`).
_HOST_COMPILER = re.compile(r"\$[({](?:CXX|CC)[)}]|\b(?:g\+\+|gcc|clang\+\+|clang|c\+\+)\b")
# A pattern rule's prerequisites: `%.x: %.cu`, `out/%.o: src/%.cc | dir` (what follows `|` is order-only).
_PATTERN_PREREQUISITES = re.compile(r"^[^\s:=#]*%[^\s:=]*\s*:(?![:=])([^|;]*)")


def _compiled_by_one_vendors_rules(
    sources: tuple[SourceSet, ...], rules: list[tuple[str, str | None]]
) -> tuple[SourceSet, ...]:
    """`sources`, those of no vendor yet that the Makefile's pattern rules compile only with one vendor's compiler
    (`$(wildcard *vendorlib_test.cu)`, which only `%vendorlib_test.x: %vendorlib_test.cu` and its nvcc recipe may
    compile) that vendor's: every rule whose prerequisite glob may match a file of theirs runs it."""
    if not rules:
        return sources
    found: list[SourceSet] = []
    for listed in sources:
        vendors = {vendor for glob, vendor in rules if _globs_may_meet(listed.pattern.removeprefix("./"), glob)}
        only = next(iter(vendors)) if len(vendors) == 1 else None
        found.append(replace(listed, vendor=only) if listed.vendor is None and only is not None else listed)
    return tuple(found)


def _globs_may_meet(first: str, second: str) -> bool:
    """Whether some path may match both globs (`*` anywhere, make's `%` as `*`): a plain path matching the other,
    or two single-`*` globs whose fixed starts and ends agree (`*vendorlib_test.cu` and `*cuda_test.cu` do not).
    Globs with several `*` may always meet."""
    if first.count("*") > 1 or second.count("*") > 1:
        return True
    if "*" not in first and "*" not in second:
        return first == second
    if "*" not in first or "*" not in second:
        plain, glob = (first, second) if "*" not in first else (second, first)
        head, _, tail = glob.partition("*")
        return len(plain) >= len(head) + len(tail) and plain.startswith(head) and plain.endswith(tail)
    head1, _, tail1 = first.partition("*")
    head2, _, tail2 = second.partition("*")
    heads = head1.startswith(head2) or head2.startswith(head1)
    return heads and (tail1.endswith(tail2) or tail2.endswith(tail1))


def _found_by_shell(logical: str) -> Iterator[str]:
    """The source globs a `$(shell find DIR -name 'PAT')` lists (`DIR/**/PAT`; `DIR/PAT` with `-maxdepth 1`)."""
    for folder, options in _MAKE_FIND.findall(logical):
        name = _FIND_NAME.search(options)
        if name is None or not name.group(1).endswith(_SOURCE_SUFFIXES):
            continue
        folder = "" if folder.strip("./") == "" else folder.rstrip("/") + "/"
        yield folder + ("" if _FIND_ONE_LEVEL.search(options) else "**/") + name.group(1)


_MAKE_FIND = re.compile(r"\$[({]shell\s+find\s+([^\s)}]+)([^)}]*)[)}]")
_FIND_NAME = re.compile(r"""-name\s+["']?([^\s"')]+)""")
_FIND_ONE_LEVEL = re.compile(r"-maxdepth\s+1\b")


# The patterns of make's `$(filter-out PATTERNS,TEXT)`: the files a list takes out, not ones it compiles.
_FILTER_OUT_CALL = re.compile(r"\$[({]filter-out\s[^,]*,")


_MAKE_WILDCARD = re.compile(r"\$[({]wildcard\s+([^)}]*)[)}]")


# A word of a Makefile naming a CUDA, HIP or host source file (no variable, wildcard or pattern in it).
_MAKE_SOURCE_WORD = re.compile(r"(?<![\w$%(./-])([\w./-]+\.(?:cu|hip|cpp|cc|cxx|c))(?![\w.])")


def is_build_script(path: str) -> bool:
    """A shell script, which may be a folder's whole build (`nvcc -c k.cu && g++ main.cpp k.o -lcudart`)."""
    return path.endswith(".sh")


def build_script_facts(path: str, text: str) -> BuildFacts | None:
    """The sources a shell script compiles for NVIDIA only (a sample's own `build.sh`, beside the project's real
    build): one running nvcc or linking a CUDA library (`g++ main.cpp -lcudart`), never hipcc nor hipify nor a ROCm
    library; those it names, each NVIDIA's. Any other script naming sources (one building ROCm too, or compiling
    for no GPU) may compile them from wherever it runs: their file names are `mentioned_names`. None for a script
    naming no source (a test runner, an installer)."""
    lines = list(_make_lines(text))
    named = [(line, word) for line, logical in lines for word in _MAKE_SOURCE_WORD.findall(logical)]
    if not named:
        return None
    nvidia = any(_NVCC.search(logical) or _CUDA_LIBRARY_LINK.search(logical) for _, logical in lines)
    rocm = any(
        _HIPCC.search(logical) or _HIPIFY_RUN.search(logical) or _ROCM_LINK.search(logical) for _, logical in lines
    )
    if not nvidia or rocm:
        return BuildFacts(mentioned_names=tuple(dict.fromkeys(os.path.basename(word) for _, word in named)))
    return BuildFacts(sources=tuple(SourceSet(word, "nvidia", path, line) for line, word in named))


def own_compile_command(path: str, text: str) -> BuildFacts | None:
    """The source itself, NVIDIA's, when its own comments give the command compiling it with nvcc (`// nvcc -O3 -I
    ../include ./k.cu -o k`, an example built by hand) and none with hipcc: a build of its own, as a sample's script
    is. None otherwise."""
    name = os.path.basename(path)
    commands = [(text.count("\n", 0, found.start()) + 1, found.group(1)) for found in _COMMENTED_COMMAND.finditer(text)]
    own = [line for line, command in commands if _NVCC.search(command) and _names_file(command, name)]
    if not own or any(_HIPCC.search(command) for _, command in commands):
        return None
    return BuildFacts(sources=(SourceSet(name, "nvidia", path, own[0]),))


def _names_file(command: str, name: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.])", command) is not None


# A comment line opening with a GPU compiler's command (`// nvcc -O3 k.cu`, ` * hipcc k.hip`).
_COMMENTED_COMMAND = re.compile(r"^[ \t]*(?://+|/?\*+)[ \t]*((?:nvcc|hipcc)\b[^\n]*)", re.MULTILINE)


# Linking the CUDA runtime, driver or a CUDA library (`-lcudart`, `-lcublasLt`), which only an NVIDIA build does; and
# a ROCm runtime or library, or ROCm's install folder.
_CUDA_LIBRARY_LINK = re.compile(
    r"(?<![\w-])-l(?:cuda|cudart|cudart_static|cupti|nvrtc|cublas\w*|cufft|curand|cusparse|cusolver)\b"
)
_ROCM_LINK = re.compile(r"(?i)(?<![\w-])-l(?:amdhip64|hip\w*|roc\w*)\b|/opt/rocm|\bROCM_PATH\b")


def makefile_compiles_sources(path: str, text: str) -> bool:
    """Whether a Makefile names, globs or lists the objects of any C, C++, CUDA or HIP source: a build of its own
    (a documentation Makefile running sphinx is none)."""
    return bool(_make_source_list(path, list(_make_lines(text))))


def _make_source_list(path: str, lines: list[tuple[int, str]]) -> tuple[MakeSourceList, ...]:
    """The `MakeSourceList` of a Makefile naming or globbing any source, else none."""
    names: set[str] = set()
    objects: set[str] = set()
    globbed: set[str] = set()
    first = 0
    folder = os.path.dirname(os.path.abspath(path))
    for line, logical in lines:
        found = _MAKE_NAMED_FILE.findall(logical)
        if found and not first:
            first = line
        names.update(found)
        objects.update(_MAKE_OBJECT.findall(logical))
        if _MAKE_SHELL_LISTING.search(logical):
            globbed.add(folder)
        for fixed in _MAKE_GLOB.findall(logical):
            globbed.add(folder if "$" in fixed else os.path.normpath(os.path.join(folder, os.path.dirname(fixed))))
    listed = MakeSourceList(path, first, frozenset(names), tuple(sorted(globbed)), frozenset(objects))
    return (listed,) if names or globbed or objects else ()


# The file name of a source a Makefile names, whatever folder or variable comes before it (`$(cdir)/zgemm.cpp`); the
# text before the `*` of a word globbing sources (`$(wildcard src/*.cu)`: `src/`; not a pattern rule's `%.cpp`,
# which says how a listed source is compiled); a shell command listing files (`$(shell find . -name '*.cpp')`).
_MAKE_NAMED_FILE = re.compile(r"(?<![\w.*%-])([\w.-]*\w\.(?:cu|hip|cpp|cc|cxx|c))(?![\w.])")
_MAKE_GLOB = re.compile(r"((?:\$[({][^)}]*[)}]|[^\s,()=*$])*)\*[\w*]*\.(?:cu|hip|cpp|cc|cxx|c)\b")
_MAKE_OBJECT = re.compile(r"(?<![\w.*%$-])([\w-]+)\.o(?![\w.])")
_MAKE_SHELL_LISTING = re.compile(r"\$[({]shell\s+(?:find|ls)\b")


def _make_arm_vendors(conditional: re.Match[str]) -> tuple[str | None, str | None]:
    """The vendors a make conditional's arm and its `else` are written for: `ifeq ($(ROCM),true)` ROCm's then NVIDIA's,
    `ifndef ROCM` the reverse; a test of a variable's absence (`ifeq ($(HIPCC),)`: no hipcc found) says nothing of
    its own arm, its `else` is the named vendor's."""
    named = vendor_of_words(conditional.group(2).replace("$", " "))
    operands = _make_operands(conditional.group(2)) if conditional.group(1) in ("ifeq", "ifneq") else None
    if operands is not None and any(_MAKE_OFF_VALUE.fullmatch(operand) for operand in operands):
        return (named, None) if conditional.group(1) == "ifneq" else (None, named)
    if conditional.group(1) in ("ifneq", "ifndef"):
        return _other_vendor(named), named
    return named, _other_vendor(named)


def _rule_sources(logical: str, static_sources: dict[str, str]) -> tuple[str, ...]:
    """The folders whose same-stemmed files the rule starting at `logical` makes its targets from (() for any other
    line): a pattern rule's (`out_hip/%.cpp: src/%.cpp`), a static pattern rule's (`$(HIP_SRC): hip/%.cc: cuda/%.cu`,
    remembered in `static_sources` per target), or those of the static pattern rules that made every target of a
    rule giving their recipe apart (`$(HIP_SRC) $(HIP_HDR):` and a recipe): make runs it for each of them."""
    rule = _PATTERN_RULE.match(logical)
    if rule is not None:
        return (rule.group(1),)
    static = _STATIC_PATTERN_RULE.match(logical)
    if static is not None:
        static_sources.update(dict.fromkeys(static.group(1).split(), static.group(2)))
        return (static.group(2),)
    explicit = _EXPLICIT_RULE.match(logical)
    targets = explicit.group(1).split() if explicit is not None else []
    if not targets or any(target not in static_sources for target in targets):
        return ()
    return tuple(dict.fromkeys(static_sources[target] for target in targets))


# A pattern rule making a file of one folder from the same-stemmed file of another (`out_hip/%.cpp: src/%.cpp`), a
# static pattern rule doing so for the targets it names first (`$(HIP_SRC): out_hip/%.cc: src/%.cu`), any other rule
# (`targets: prerequisites`, not an assignment), and a recipe line running a hipify tool (`$(HIPIFY) $< > $@`,
# `hipify-perl`, `hipify-clang`).
_PATTERN_RULE = re.compile(r"^\s*[^\s:=#]*%[^\s:=]*\s*:\s*([^\s%:=$]+)/%")
_STATIC_PATTERN_RULE = re.compile(r"^\s*([^:=#%]+?)\s*:\s*[^\s:=]*%[^\s:=]*\s*:\s*([^\s%:=$|]+)/%")
_EXPLICIT_RULE = re.compile(r"^\s*([^:=#%]+?)\s*:(?![:=])")
_HIPIFY_RUN = re.compile(r"(?i)hipify")


# A make value that reads as "off" when a conditional compares a switch with it: `ifneq ($(NVCC),)` holds when
# nvcc was found, `ifneq ($(USE_HIP),0)` when HIP is on.
_MAKE_OFF_VALUE = re.compile(r"(?i)\s*(?:0|false|no|off|n)?\s*")


def _make_operands(arguments: str) -> tuple[str, str] | None:
    """The two operands of `ifeq (A,B)` / `ifeq "A" "B"`, None when they cannot be told apart (a comma inside a
    function call of the first one is skipped: `$(filter-out 0,$(X))`)."""
    text = arguments.strip()
    quoted = re.fullmatch(r"""(["'])(.*?)\1\s+(["'])(.*?)\3""", text)
    if quoted is not None:
        return quoted.group(2), quoted.group(4)
    if not (text.startswith("(") and text.endswith(")")):
        return None
    depth = 0
    for index, char in enumerate(text[1:-1], 1):
        depth += {"(": 1, "{": 1, ")": -1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            return text[1:index], text[index + 1 : -1]
    return None


def makefiles_run(path: str, text: str) -> Iterator[str]:
    """The makefiles a Makefile's recipes or `$(shell ...)` run with `$(MAKE) -f FILE` (`-f make.gen.hip`), as
    paths beside it: make reads them as it reads this one, whatever their name."""
    for match in _MAKE_F.finditer(text):
        yield os.path.normpath(os.path.join(os.path.dirname(path), match.group(1)))


_MAKE_F = re.compile(r"\$[({]MAKE[)}][^\n]*?\s-f\s*([\w./-]+)")


# The patterns of make's `$(filter-out PATTERNS,TEXT)` / `$(filter ...)`: `-DNAME` words matched against flags
# (taking a build's own macros out of the flags a pkg-config file gets), not definitions.
_FILTER_CALL = re.compile(r"\$[({]filter(?:-out)?\s[^,]*,")
# A recipe's sed turning a CMake configure header's `#cmakedefine NAME` into `#define NAME [VALUE]` (a Makefile
# build writing the header CMake's `configure_file` would): the build defines NAME, in the arm's vendor.
_SED_CONFIGURED = re.compile(r"#cmakedefine\s+(\w+)\b[^/]*/#define\s+(\w+)(?:[ \t]+([^/]*?))?\s*/")


def _configured_by_sed(recipe: str, vendor: str | None, path: str, line: int) -> Iterator[BuildDefine]:
    """The macros a recipe's `sed 's/#cmakedefine X/#define X/'` defines in the configure header it writes; one
    it rewrites to `#undef X` it leaves undefined."""
    for match in _SED_CONFIGURED.finditer(recipe):
        name, defined, value = match.groups()
        if name == defined:
            yield BuildDefine(name, value or None, vendor, path, line)


def _make_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line, text) of each logical line of a Makefile: continuations joined, comments removed."""
    start = 1
    parts: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        if not parts:
            start = number
        content = re.sub(r"(?<!\\)#.*", "", raw)
        if content.endswith("\\") and not raw.lstrip().startswith("#"):
            parts.append(content[:-1])
            continue
        parts.append(content)
        yield start, " ".join(parts)
        parts = []
    if parts:
        yield start, " ".join(parts)


def _recipe_vendor(line: str) -> str | None:
    """The vendor of the compiler a recipe line runs (`$(HIPCC) -c -DX ...`)."""
    if _HIPCC.search(line):
        return None if _NVCC.search(line) else "rocm"
    return "nvidia" if _NVCC.search(line) else None
