"""The C++ project model: what a project's own files say about its vendor gates, constants and build.

Built once per run for a project root, from every C/C++/CUDA file under it (their preprocessor directives only,
no tree-sitter: rocmlint/cuda/file_facts.py) and its build files (rocmlint/cuda/build_files.py); the vendor
macros are learned in rocmlint/cuda/learning.py:

- **Vendor macros, learned from evidence**, strongest first: the build defines the macro only for one vendor
  (setup.py `-D` in a `torch.version.hip` branch, CMake definitions under `if(USE_ROCM)` or in a HIP-language
  file, `-D` flags of a ROCm make fragment, Bazel `copts`/`defines` in a ROCm `select()` branch or a `.bazelrc`
  `build:rocm --copt=-D`, rocmlint/cuda/bazel_files.py; whatever the macro's spelling, `__IS_HIP_COMPILE__` too;
  `-DUSING_CUDA=1` for one vendor and `=0` for the other makes it the first one's gate; a configured variable,
  `#cmakedefine XYZ_HAS_CUTENSOR`, that one vendor's CMake block alone sets, even from another variable:
  `set(XYZ_HAS_CUTENSOR ${cuTENSOR_FOUND})`; autoconf's `AC_CONFIG_HEADERS` defines `HAVE_CONFIG_H` for both); the project's headers define it only under one vendor's condition (`#if defined(__HIP_PLATFORM_AMD__)
  #define XYZ_HIP 1 #else #define XYZ_HIP 0`), or as 0 for one vendor where the other's may give it a true value
  (`#if defined(__CUDA_ARCH__) #define XYZ_PASS_CUDA 1 #else #define XYZ_PASS_CUDA 0`); a header giving each compiler a
  flag of its own (`XYZ_COMPILE_CUDA` under `#if defined(__CUDACC__)` beside `XYZ_COMPILE_HIP` under `__HIPCC__`)
  means nvcc by `__CUDACC__`, which HIP-Clang never defines; the arms of `#if X` split by vendor (one includes HIP headers or
  calls `hip*`, the other the CUDA counterparts), and so do the arms of a selector compared by value (`#if (X == 1)`
  including CUDA's headers, `#elif (X == 2)` HIP's: X is 1 on NVIDIA's build and 2 on ROCm's, value_selectors.py); weakest, the macro's name carries one vendor's word (HIP, ROCM,
  AMD; CUDA, NVCC, NV) and no other accelerator's; a switch turning one vendor off (`XYZ_NO_CUDA`, `XYZ_DISABLE_HIP`)
  is read inverted, the other vendor's (`!defined(XYZ_NO_CUDA)` is the NVIDIA side). A macro the build defines for both vendors is no vendor's; nor
  is one under which a file tells ROCm apart (`#ifdef USE_CUDA` around `#ifdef __HIP_PLATFORM_AMD__`: ROCm compiles
  that code), whatever the build or its name say. A macro whose name says NVIDIA that an `#if` chain tests before a
  ROCm macro (`#if defined(XYZ_USE_CUDA) ... #elif defined(XYZ_USE_HIP)`) is NVIDIA's by more than its name, and so
  is one whose ROCm twin the project tests too (`DEP_ENABLE_CUDA` beside `DEP_ENABLE_HIP`) unless a chain tests the
  twin first; one whose name says another accelerator (`XYZ_USE_SYCL`, MUSA) is that accelerator's (vendor "other"), undefined on
  ROCm. A CMake file is ROCm's as a whole only when it builds HIP outside
  any ROCm block; one that builds HIP in `if(USE_ROCM)` has its `elseif(USE_CUDA)` arm NVIDIA's. In a project
  nothing of which builds or tells apart ROCm yet, a macro its build defines for NVIDIA only (`-DHAVE_CUDA=1` in
  `if(CUDA_FOUND)`) is its GPU build's, which a port reuses or mirrors: no vendor's (`_gpu_build_macros`).
- **Include graph**: quoted includes resolved next to the including file, then (as `-I` directories would) by
  the unique project file whose path ends with the included path; angle includes that name a folder too.
- **Per file** (`view`): the learned macros; what the headers it includes (transitively) define for ROCm
  (object-like macros and `constexpr` integer constants, for values such as `WARP_SIZE`); the CUDA names those
  headers or the file remap on ROCm only (`#define __shfl_xor_sync(m, v, l) __shfl_xor(v, l)` under
  `USE_ROCM`: uses of the name are portable); the project's vendor selector macros (`#define XYZ_HIP_OR_CUDA(h, c)
  h` for ROCm, `c` for NVIDIA: ROCm never compiles the NVIDIA argument of an invocation); and where the file is
  compiled at all (a header included only from NVIDIA-only `#if` arms is NVIDIA-only, as is one with an `#error`
  every ROCm build reaches, `#if !defined(XYZ_ENABLE_CUDA) #error`, and what only it includes). The files are read
  again while a reading learns more macros: a macro defined only under a learned NVIDIA one (`#if
  defined(XYZ_ENABLE_CUDA) && defined(__CUDACC__) #define XYZ_HAVE_CUDA_ATOMICS`) is NVIDIA's, and so are the
  `#include`s under it.
- **What the ROCm build defines** (`rocm_build_values`): `-DCUDA_VERSION=11000` in the ROCm build gives the
  toolkit's macro that value there; a hipified build (torch `CUDAExtension`) defines `__CUDACC__` (hipify renames
  it `__HIPCC__`); a file HIP-Clang compiles as written (a CMake HIP language build nothing hipifies, a `.hip`
  source: `FileView.hip_compiled`) has `__CUDACC__` undefined.
- **What ROCm compiles**: a source a ROCm branch removes from a source list, or that only NVIDIA's lists name
  (`list(APPEND ...)`, `set(X ${X} ...)`, `file(GLOB ...)`, `target_sources`, a project function appending its
  `ARGN`; a Bazel target's sources in an NVIDIA `select()` branch, or of targets only NVIDIA branches reach),
  is NVIDIA-only, unless its folder is `cuda/` beside a `hip/` whose globs hipify fills at build time; so is a
  source a Makefile lists in a variable only NVIDIA's conditional arms read (`cuda.c := $(wildcard cuda/*.c)`
  handed on inside `ifneq ($(CUDA_DIR),)`) where its ROCm arm hands on other sources
  (rocmlint/cuda/make_variables.py); so is a source no build names and nothing hipifies beside its hand-written
  HIP twin (`check_cuda_device.cu` beside `check_hip_device.cpp`, which includes the HIP runtime; `k.cu` beside
  `k.hip`); so is a file nothing ROCm compiles includes whose path with an NVIDIA word said the ROCm way names a
  project file or folder (`backends/cuda/` beside `backends/hip/`, `config/cublas.cc` beside `config/rocblas.cc`,
  `nvmon.c` beside `rocmon.c`: rocmlint/cuda/vendor_twins.py), in a project whose build has a ROCm path; so is a source a CMake file names but never hands to a target (in a loop
  over a list the project never sets, a function nothing calls, a list nothing that runs reads:
  rocmlint/cuda/cmake_unrun.py), which no build compiles; a nested CMake project the build never adds (a vendored library's own build, with its tests:
  rocmlint/cuda/cmake_projects.py) compiles nothing, and its CMake files are not read: its files nothing includes
  are compiled by no build (neither vendor's: not NVIDIA code); so is a source nothing includes in a folder whose
  Makefiles name its sources one by one and not it, when no other build names or globs it (`BuildFacts.
  make_source_lists`); so is a source nothing includes and no build names at all, where the CMake build builds ROCm
  and names its sources by path and nothing else may name it (`_named_by_no_build`; a setup.py or Bazel file
  speaks for its own folder only); so is a source only CMake files the build never reads name (an `attic/`
  folder's, which no `add_subdirectory` or `include()` reaches: rocmlint/cuda/cmake_projects.py), and a header
  only `#include`s the graph cannot resolve (several files end with the path) of such files may name; an option
  `cmake_dependent_option` leaves off unless the NVIDIA build is on is a CUDA switch, and a `.cmake` module only
  NVIDIA code `include()`s defines and lists for NVIDIA (`_modules_read_by_one_vendor`); a shell script running nvcc
  or linking a CUDA library and never ROCm's (a sample's own `build.sh`) compiles the sources it names for NVIDIA
  only, where no other build names them, and so does an example's own comment giving its nvcc command
  (`own_compile_command`); a Makefile whose recipes run nvcc, with no ROCm arm, over folders it computes (a program
  of its own beside its hipcc twin) compiles its whole tree for NVIDIA only, and a folder a Makefile's ROCm arm
  filters out of its own list (`$(filter-out CudaSupport,$(LIBNAMES))`) is NVIDIA's; a Rust crate's `build.rs`
  compiles each `cc::Build`'s `.file()`s for its compiler's vendor (rocmlint/cuda/cargo_build.py); an option whose CMake block only sets CUDA up is a CUDA switch in every
  CMake file (`cmake_cuda_only_options`);
  so is a header found only through an include folder the NVIDIA build alone adds (a CUDA target's
  `include/targets/cuda` beside the HIP target's own), a header only such files include, and a header nothing
  includes in a folder of NVIDIA-only headers.
- **Host-compiled headers** (`FileView.host_compiled_only`): a header only host compilers' sources (`.cpp`)
  include, through the project's headers, with no CUDA or HIP source, public header nothing includes or unfollowed
  `#include` reaching it, in a build handing no `.cpp` to nvcc: nvcc's macros are undefined there on NVIDIA too.
- **Code written for AMD** (`FileView.rocm_native`): a project whose build only targets HIP; a file that calls
  `__builtin_amdgcn_*` or defines a 64-lane warp size outside any vendor branch, or includes such a header
  there; a file whose `#if`s test AMD targets and never the vendor; a path naming a gfx target. Only the rules
  wrong on AMD hardware whoever wrote it apply there. **HIP code** (`FileView.hip_source`: the HIP runtime
  included outside vendor branches, directly or through project headers) may be ported CUDA: a ROCm source,
  where the wave-size rules apply.
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import NamedTuple, TypeVar, overload

from rocmlint.cuda.automake import automake_conditional_vendors, config_header_request, is_autoconf_file
from rocmlint.cuda.bazel_files import bazel_facts, is_bazel_file
from rocmlint.cuda.build_files import (
    ANYWHERE,
    BuildDefine,
    BuildFacts,
    MakeSourceList,
    SourceSet,
    automake_fragments,
    build_script_facts,
    cmake_cuda_only_options,
    cmake_dependent_cuda_options,
    cmake_facts,
    cmake_filelist_functions,
    cmake_glob_functions,
    cmake_source_functions,
    cmake_switches_off_on_rocm,
    cmake_unadded_projects,
    cmake_unread_files,
    cmake_unrun,
    compiles_only_its_folder,
    configure_header_macros,
    hip_on_nvidia_as_nvidia,
    host_sources_as_cuda,
    is_build_script,
    is_makefile,
    jit_extension_facts,
    makefile_compiles_sources,
    makefile_facts,
    makefiles_named_by_vendor,
    makefiles_run,
    may_build_jit_extension,
    mentioned_source_names,
    never_read,
    nvidia_only_native_folders,
    nvidia_only_native_modules,
    own_compile_command,
    preset_for_its_vendor,
    quoted_sources,
    runs_hipcc_alone,
    setup_py_facts,
    vendor_of_macro_name,
    vendor_of_words,
)
from rocmlint.cuda.cargo_build import cargo_build_facts, is_cargo_build_script
from rocmlint.cuda.cmake_projects import ModuleIndex
from rocmlint.cuda.cmake_refusals import Refusal, configure_header_switches, rocm_refusals
from rocmlint.cuda.declared_requirements import declared_requirements
from rocmlint.cuda.file_facts import Definition, FileFacts, IncludeFact, is_header, is_host_source, read_facts
from rocmlint.cuda.learning import (
    HIPIFY_RENAMED_MACROS,
    learn,
    learn_from_build,
    rocm_build_decided,
    rocm_build_values,
)
from rocmlint.cuda.make_variables import variables_read
from rocmlint.cuda.nvidia_only import (
    arm_around,
    code_words,
    declares,
    function_bodies,
    off_rocm_by_project,
    word_pattern,
)
from rocmlint.cuda.preprocessor import (
    WAVE_SIZE_MACROS,
    LearnedMacro,
    MacroShape,
    Preprocessor,
    VendorMacros,
    analyse,
    dropped_on_rocm,
    is_cuda_toolkit_header,
    names_nvcc_version,
)
from rocmlint.cuda.vendor_twins import rocm_names, says_rocm
from rocmlint.vendor import EVERYWHERE, NO_GPU, Branch, Tri, and3

SOURCE_SUFFIXES = frozenset(
    {".h", ".hh", ".hpp", ".hxx", ".cuh", ".hu", ".cu", ".cpp", ".cc", ".cxx", ".c", ".hip", ".inl"}
)
# How many included headers of its folder must all be NVIDIA-only for a header nothing includes to be.
_FOLDER_VOTERS = 2
# How many sources of its own folder a Makefile must name one by one for the folder's other sources to be unbuilt.
_MIN_MAKE_LISTED = 2
# Folders a project model never reads: version control, virtual environments, build output.
_SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox"})
_MAX_FILES = 50_000
# How far up from a file outside the configured root its project's root is looked for.
MAX_ROOT_LEVELS = 8
# A Bazel workspace's root file marks its project root as the others do (a pure Bazel tree has no other).
_BUILD_MARKERS = (
    "setup.py",
    "CMakeLists.txt",
    "pyproject.toml",
    "MODULE.bazel",
    "WORKSPACE",
    "WORKSPACE.bazel",
    "configure.ac",  # an autoconf project's root: its Makefile.am files below build with it
)
# HIP-Clang's own compiler macros, whose tests mark a header written for ROCm's compiler.
_HIP_COMPILER_TESTS = frozenset({"__HIPCC__", "__HIP__", "__HIP_DEVICE_COMPILE__"})
# Root build files of another build system beside autoconf's, whose compiles need not define `HAVE_CONFIG_H`.
_ROOT_BUILDS_BESIDE_AUTOCONF = ("CMakeLists.txt", "setup.py", "MODULE.bazel", "WORKSPACE", "WORKSPACE.bazel", "BUILD")
# Python build helpers setup.py imports live in folders named so (`install/`, `cupy_builder/`, `build_tools/`).
# An `#include` of a macro (`#include KERNEL_HEADER`), which the model cannot follow.
_MACRO_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]+[A-Za-z_]", re.MULTILINE)
_BUILD_FOLDER = re.compile(r"(?i)(?:^|[/\\_-])(?:build(?:er|ers|_tools)?|install|setup)(?:$|[/\\_-])")
_MAX_FILE_BYTES = 2_000_000
# The folder name hipify's copies of a CUDA folder's sources get (`c10/cuda/` -> `c10/hip/`), reversed.
_CUDA_TWIN = {"hip": "cuda", "HIP": "CUDA"}
# The word cuda in a file or folder name (`cuda/`, `k_cuda.cu`, `CudaOps.h`), which a hand-written ROCm twin's says as
# hip or rocm.
_CUDA_WORD = re.compile(r"(?<![A-Za-z])(?:cuda|CUDA|Cuda)(?![a-z])")
# A folder or file named for one AMD GPU target (`gfx1250/`, `*_gfx942.cuh`): code written for that target.
_AMD_TARGET_IN_PATH = re.compile(r"(?:^|[/\\_.-])(gfx\d[0-9a-f]*)(?=$|[/\\_.-])")

# --- the model --------------------------------------------------------------------------------------------------

Selector = tuple[str, int, frozenset[int]]


@dataclass(frozen=True)
class FileView:
    """What the project tells the check of one file."""

    learned: Mapping[str, LearnedMacro] = field(default_factory=dict)
    base: Branch = EVERYWHERE  # where the file is compiled at all (from the #ifs its includers put it in)
    base_evidence: str = ""
    defines: Mapping[str, str] = field(default_factory=dict)  # object-like macros of its headers, as ROCm sees them
    # Every macro its headers define where ROCm certainly compiles the definition -> its replacement text (a
    # function-like one's too: `#define __syncwarp()` -> ""), as `CudaContext.macro_replacement` reads them.
    macros: Mapping[str, str] = field(default_factory=dict)
    constants: Mapping[str, str] = field(default_factory=dict)  # constexpr/const integers of its headers
    # Object-like macros of its headers standing for nvcc's version, as NVIDIA sees them (`names_nvcc_version`).
    toolkit_versions: Mapping[str, str] = field(default_factory=dict)
    # Function-like macros of its headers that wrap one lane exchange, as ROCm sees them (`FileFacts.shuffle_wrappers`)
    shuffle_wrappers: Mapping[str, str] = field(default_factory=dict)
    # Macros its headers define, for ROCm, as the device pass's wave size (`#define WARP __AMDGCN_WAVEFRONT_SIZE`),
    # whichever other value another arm gives them: the host pass has no target, so host code reading them is wrong.
    device_wave_sizes: AbstractSet[str] = frozenset()
    # A name the project remaps for ROCm only -> ("path:line" of the remap, its parameter count if function-like)
    aliases: Mapping[str, tuple[str, int | None]] = field(default_factory=dict)
    # A vendor selector macro of the project (`#define XYZ_HIP_OR_CUDA(h, c) h` for ROCm, `... c` for NVIDIA) ->
    # ("path:line" of its ROCm definition, parameter count, positions of the arguments ROCm never compiles); see
    # `dropped_on_rocm`. Decided over every definition in the project, so it holds wherever the name is invoked,
    # whether or not the file's includes could be followed (`<Lib_Gpu.H>` found through a `-I` folder).
    selectors: Mapping[str, Selector] = field(default_factory=dict)
    rocm_native: str = ""  # why the file is written for AMD ("" when it is not)
    hip_source: str = ""  # why the file is HIP code, compiled by hipcc only ("" when it is not); maybe ported
    hipified: str = ""  # why the ROCm build renames CUDA names in the file (hipify), "" when it does not
    # "path:line" of a build file running a hipify tool itself (`BuildFacts.hipify_tool`), when the file is hipified:
    # its maps may rename more includes than torch's extension build does.
    hipify_tool: str = ""
    # Why the ROCm build compiles the file as written with HIP-Clang, no hipify step renaming its `__CUDACC__`
    # ("" when it may not): see `CudaProject._hip_compiled`.
    hip_compiled: str = ""
    # Why the project already builds this file for ROCm through that hipify, asked when a rule meets a rename ("" when
    # it does not, or nothing hipifies the file): the renames are then done, no note worth showing; before a first
    # port, or in a file the port left to NVIDIA (a HIP twin), they still mark what a port there touches. See
    # `CudaProject._hipify_ported`.
    hipify_ported: Callable[[], str] = lambda: ""
    # "path:line" of an object-like macro the file or its headers define, only for ROCm, as one of the given names
    # (`#define gpuFree hipFree` under `USE_HIP`, asked with HIP's API functions), "" when none.
    rocm_spelling: Callable[[frozenset[str]], str] = lambda names: ""
    # Why only sources a host compiler builds (`.cpp`) include the header, on either vendor, "" otherwise: nvcc's
    # macros (`__CUDACC__`, `__CUDA_ARCH__`) are then undefined wherever NVIDIA compiles it, as on ROCm.
    host_compiled_only: str = ""
    # (atomic, pointee type) of the device overloads of CUDA atomics its project files define where ROCm compiles them
    atomic_overloads: AbstractSet[tuple[str, str]] = frozenset()
    # Every macro the build defines for ROCm (`__HIP_*__` too) -> its value ("1" for `-DNAME`, None when unknown):
    # `-DCUDA_VERSION=11000` decides a version test on ROCm.
    rocm_build_values: Mapping[str, str | None] = field(default_factory=dict)
    rocm_build_decided: frozenset[str] = frozenset()  # those no other build defines (see learning.py)
    built_for_any_vendor: frozenset[str] = frozenset()  # what a build file defines whatever the vendor
    rocm_refused: tuple[Refusal, ...] = ()  # configurations the build refuses with ROCm, with where it does
    nvidia_build_defines: frozenset[str] = frozenset()  # every macro the build defines for NVIDIA only
    # Why only NVIDIA compiles the project's sources at run time ("" when ROCm may, or nothing does): its calls of
    # NVRTC (or hipRTC, jitify) all sit in files the ROCm build does not compile, so `__CUDACC_RTC__` is
    # undefined wherever ROCm compiles, as on NVIDIA's ahead-of-time builds.
    runtime_compiled_only_on_nvidia: str = ""
    dependencies: Sequence[str] = ()  # files the view was read from, the build files included
    # (header, system) of one of the file's `#include`s -> the includes ROCm reads through it: (included header as
    # written, "path:line" of that `#include`) for the project header it names and every one that header pulls in.
    includes_through: Mapping[tuple[str, bool], tuple[tuple[str, str], ...]] = field(default_factory=dict)
    # Whether a file around this one (its headers, the files including it and theirs: `dependencies`) names one of
    # the given identifiers where a ROCm build may compile it (True), only where it never does (False), or nowhere
    # (None); True when unknown (no project read).
    named_around: Callable[[frozenset[str]], Tri] = lambda names: True
    # One of the given identifiers the file and its headers declare only in `#if` arms a ROCm build skips by the
    # project's own macros (`nvidia_only.off_rocm_by_project`), and nowhere else (None: none): ROCm never declares it.
    declared_only_off_rocm: Callable[[frozenset[str]], str | None] = lambda names: None
    # Whether the files around this one (`named_around`'s, and those beside it in its folder: an include through a
    # `-I` folder, `<lib_Detail.H>`, may not be followed) name one of the given identifiers, and each time only in
    # such arms.
    named_only_off_rocm: Callable[[frozenset[str]], bool] = lambda names: False
    # Whether another source file of the project (any, included or not) names one of the given identifiers as a
    # word, in code or comments alike; True when unknown (no project read, or a file that cannot be read).
    named_in_other_files: Callable[[frozenset[str]], bool] = lambda names: True
    # Why the given code of this file (a condition, as written) is the file's own, written for AMD: the file is the
    # hand-written HIP twin of a CUDA file of the project (`hip/util.h` beside `cuda/util.h`), which spells no such
    # code; "" when the file is no such twin, or the CUDA file spells the code too (a hipified copy keeps its tests).
    apart_from_cuda_twin: Callable[[str], str] = lambda code: ""
    # Why the ROCm side of this header's tests of nvcc's compiler macro is written in its HIP twin, "" when it is not:
    # a header of the same name for ROCm (`impl/cuda.hpp`, `impl/rocm.hpp`) that tests HIP-Clang's own macros, and
    # which every file including this one includes too (`CudaProject._hip_twin_beside`).
    hip_twin_beside: Callable[[], str] = lambda: ""
    # Whether an `#include` (header as written, angle brackets) names a file of the project (`CudaProject.resolve`).
    names_project_file: Callable[[str, bool], bool] = lambda header, system: False


EMPTY_VIEW = FileView()


# name -> (file defining it, its value or "path:line", its parameter count) of every definition in the project
_Index = dict[str, list[tuple[str, str, int | None]]]
_Item = TypeVar("_Item")
_Built = TypeVar("_Built")


class _Files:
    """A set of project files worked out on first use: most views are never asked about most of their files. A
    file's include closure is asked only when a rule looks up a name some header defines, and the files around it
    (it, its closure, the files that include it and everything they include) only by a diagnostic's remap question
    (`FileView.aliases`) or a cache's dependencies, while the includers' closures are most of a view's cost: a
    widely included header has thousands of includers."""

    def __init__(self, work_out: Callable[[], frozenset[str]]) -> None:
        self._work_out = work_out

    @cached_property
    def files(self) -> frozenset[str]:
        return self._work_out()


class _LazySet(AbstractSet[_Item]):
    """A set of a view's worked out on first use: its answer needs the file's include closure or the files around
    it (see `_Files`), and only a rule that meets the question asks (host code reading a wave-size macro, an
    atomicAdd on a half pointer)."""

    def __init__(self, work_out: Callable[[], frozenset[_Item]]) -> None:
        self._work_out = work_out

    @classmethod
    def _from_iterable(cls, items: Iterable[_Built]) -> frozenset[_Built]:
        """What `|`, `&` and `-` build: a plain set of the items (the ABC's default would call the class with them)."""
        return frozenset(items)

    @cached_property
    def _items(self) -> frozenset[_Item]:
        return self._work_out()

    def __contains__(self, item: object) -> bool:
        return item in self._items

    def __iter__(self) -> Iterator[_Item]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


class _Dependencies(Sequence[str]):
    """The files a view was read from (sorted), then the build files, listed on first use (only a cache asks)."""

    def __init__(self, around: _Files, build_files: tuple[str, ...]) -> None:
        self._around = around
        self._build_files = build_files

    @cached_property
    def _files(self) -> tuple[str, ...]:
        return (*sorted(self._around.files), *self._build_files)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...

    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        return self._files[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


class _Visible(Mapping[str, str]):
    """The values some files (a file's include closure) give names, looked up in a project-wide index when asked:
    a name they give two different values is not there."""

    def __init__(self, index: _Index, files: _Files) -> None:
        self._index = index
        self._files = files

    def __getitem__(self, name: str) -> str:
        entries = self._index.get(name, ())
        files = self._files.files if entries else frozenset()
        values = {value for path, value, _ in entries if path in files}
        if len(values) != 1:
            raise KeyError(name)
        return values.pop()

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._index if name in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Remaps(Mapping[str, tuple[str, int | None]]):
    """Names some files define only for ROCm -> ("path:line", parameter count), from a project-wide index."""

    def __init__(self, index: _Index, files: _Files) -> None:
        self._index = index
        self._files = files

    def __getitem__(self, name: str) -> tuple[str, int | None]:
        entries = self._index.get(name, ())
        files = self._files.files if entries else frozenset()
        found = next(((where, count) for path, where, count in entries if path in files), None)
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._index if name in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _IncludesThrough(Mapping[tuple[str, bool], tuple[tuple[str, str], ...]]):
    """`FileView.includes_through`, worked out per `#include` when a rule asks (a library's header reached through
    the project's own)."""

    def __init__(self, project: CudaProject, path: str) -> None:
        self._project = project
        self._path = path

    def __getitem__(self, key: tuple[str, bool]) -> tuple[tuple[str, str], ...]:
        return self._project.includes_through(self._path, *key)

    def __iter__(self) -> Iterator[tuple[str, bool]]:
        return (
            ((i.header, i.system) for i in self._project.files[self._path].includes)
            if self._path in self._project.files
            else iter(())
        )

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass
class CudaProject:
    """The project model of one root folder (see the module's docstring)."""

    root: Path
    files: dict[str, FileFacts]  # by absolute path
    build_facts: BuildFacts
    learned: dict[str, LearnedMacro]
    _macros: VendorMacros = field(default_factory=VendorMacros)  # the macros the files were read with last
    _gpu_build_macros: frozenset[str] = frozenset()  # see `_gpu_build_macros`: no vendor's, though NVIDIA's build's
    _includers: dict[str, list[tuple[str, IncludeFact]]] = field(default_factory=dict)
    _resolved: dict[tuple[str, str, bool], str | None] = field(default_factory=dict)
    _bases: dict[str, tuple[Branch, str]] = field(default_factory=dict)
    _closures: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _by_name: dict[str, list[str]] = field(default_factory=dict)
    _by_folder: dict[str, list[str]] = field(default_factory=dict)
    _edges: dict[str, list[tuple[str, IncludeFact]]] = field(default_factory=dict)  # includer -> resolved includes
    # "defines" / "constants" / "shuffle_wrappers" / "remaps" / "macros" (every macro ROCm sees) / "wave sizes" (defines
    # giving the device wave size) -> index
    _values: dict[str, _Index] = field(default_factory=dict)
    _selectors: dict[str, Selector] = field(default_factory=dict)
    _set_vendors: dict[SourceSet, str | None] = field(default_factory=dict)
    _amd_evidence: dict[str, str] = field(default_factory=dict)  # path -> `_own_amd_evidence`
    # an include folder only the NVIDIA build adds -> `_found_without_nvidia_folder`
    _folder_reach: dict[str, frozenset[str]] = field(default_factory=dict)
    # a question about a file (a bound method) -> `_ungated_includers_of`
    _ungated_includers: dict[Callable[[str], bool], frozenset[str]] = field(default_factory=dict)
    _relatives: dict[str, str] = field(default_factory=dict)  # path -> `_relative`
    _left: dict[str, str] = field(default_factory=dict)  # path -> `_left_to_nvidia`
    _build_twins: dict[str, bool] = field(default_factory=dict)  # build file -> `_build_file_with_rocm_twin`
    _words: dict[str, frozenset[bytes]] = field(default_factory=dict)  # path -> `_has_any_word`'s word set
    # One copy of each word the sets hold: the files of a tree share most of their words (PyTorch: ~380,000 words
    # in the sets of 4,000 files, 15 MB of bytes objects when each set kept its own)
    _word_copies: dict[bytes, bytes] = field(default_factory=dict)
    _bodies: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # path -> `function_bodies`
    _declared: dict[str, dict[str, tuple[int, ...]]] = field(default_factory=dict)  # `_declarations_of`
    # path -> its directives under the model's macros (`_declared_off_rocm_in`: every arm asking about a header
    # analysed it again)
    _preprocessed: dict[str, Preprocessor] = field(default_factory=dict)
    # Whether a file of the tree `#include`s a macro (`#include KERNEL_HEADER`): it may name any header.
    includes_through_macros: bool = False

    # --- building ---------------------------------------------------------------------------------------------
    @classmethod
    def build(cls, root: Path, tree: _Tree | None = None) -> CudaProject:
        texts, build, _ = tree if tree is not None else _read_tree(root)
        learned = from_build = learn_from_build(build)
        build_values, decided = rocm_build_values(build), rocm_build_decided(build)
        anywhere = _built_for_any_vendor(build)
        refused = tuple(states for states, _ in build.rocm_refused)
        macros = VendorMacros().with_learned(
            learned,
            rocm_build_values=build_values,
            rocm_build_decided=decided,
            built_for_any_vendor=anywhere,
            rocm_refused=refused,
        )
        files = {path: read_facts(path, text, macros) for path, text in texts.items()}
        to_port = _gpu_build_macros(build, files, from_build)
        from_build = {name: macro for name, macro in from_build.items() if name not in to_port}
        anywhere |= to_port
        learned = learn(files, build, from_build)
        # Read again the files whose definitions and includes depend on branches, now that more macros are
        # known (`#if !defined(XYZ_HIP) && __CUDA_ARCH__ >= 700 #define MMA_AVAILABLE` needs XYZ_HIP first), and
        # again while a reading learns more: a macro defined only under that one (`#ifdef MMA_AVAILABLE #define
        # HAVE_MMA_ATOMICS`) gates the `#include`s of the files testing it in turn.
        # Only macros the well-known tables do not already decide change how a file reads; a build macro found
        # compiled on ROCm (see `rocm_compiled_under`), or one to port, changes it back.
        changed = (set(learned) | set(from_build) | to_port) - macros.well_known
        for _ in range(_MAX_READINGS):
            macros = VendorMacros().with_learned(
                learned,
                rocm_build_values=build_values,
                rocm_build_decided=decided,
                built_for_any_vendor=anywhere,
                rocm_refused=refused,
            )
            for path, facts in files.items():
                if facts.conditional and not facts.tested.isdisjoint(changed):
                    files[path] = read_facts(path, texts[path], macros)
            read_with, learned = learned, learn(files, build, from_build)
            changed = _changed_macros(read_with, learned) - macros.well_known
            if not changed:
                break
        through_macros = any(_MACRO_INCLUDE.search(text) for text in texts.values())
        project = cls(
            root,
            files,
            build,
            learned,
            _macros=macros,
            _gpu_build_macros=to_port,
            includes_through_macros=through_macros,
        )
        project.learned = {
            name: replace(m, evidence=replace(m.evidence, path=project._relative(m.evidence.path)))
            for name, m in learned.items()
        }
        project._index()
        return project

    def _index(self) -> None:
        for path in self.files:
            self._by_name.setdefault(os.path.basename(path), []).append(path)
            self._by_folder.setdefault(os.path.dirname(path), []).append(path)
        for path, facts in self.files.items():
            for include in facts.includes:
                target = self.resolve(path, include.header, include.system)
                if target is not None:
                    self._includers.setdefault(target, []).append((path, include))
                    self._edges.setdefault(path, []).append((target, include))
        for kind in ("defines", "constants", "shuffle_wrappers"):
            index: _Index = self._values.setdefault(kind, {})
            for path, facts in self.files.items():
                for definition in getattr(facts, kind):
                    if definition.value and definition.branch.on_rocm is not False:
                        index.setdefault(definition.name, []).append((path, definition.value, None))
        # Macros standing for nvcc's version (`#define XYZ_CUDA_VERSION (__CUDACC_VER_MAJOR__*100 + ...)`), wherever
        # NVIDIA compiles them: usually under `#ifdef __NVCC__`, so no ROCm view of the headers holds them.
        versions: _Index = self._values.setdefault("toolkit versions", {})
        for path, facts in self.files.items():
            for definition in facts.defines:
                if (
                    definition.value
                    and definition.branch.on_nvidia is not False
                    and names_nvcc_version(definition.value)
                ):
                    versions.setdefault(definition.name, []).append((path, definition.value, None))
        macros: _Index = self._values.setdefault("macros", {})
        for path, facts in self.files.items():
            for definition in facts.defines:
                if definition.branch.on_rocm is True:
                    macros.setdefault(definition.name, []).append((path, definition.replacement, definition.parameters))
        self._values["wave sizes"] = {
            name: wave_sizes
            for name, definitions in self._values["defines"].items()
            if (wave_sizes := [d for d in definitions if d[1].strip("() ") in WAVE_SIZE_MACROS])
        }
        remaps: _Index = self._values.setdefault("remaps", {})
        for path, facts in self.files.items():
            if not facts.defines and not facts.types:
                continue
            base, _ = self._base(path, frozenset())  # a header only ROCm includes (`vendors/hip.h`) is ROCm's
            for definition in (*facts.defines, *facts.types):
                only_rocm = definition.branch.on_nvidia is False or base.on_nvidia is False
                if only_rocm and definition.branch.on_rocm is not False and base.on_rocm is not False:
                    where = f"{self._relative(path)}:{definition.line}"
                    remaps.setdefault(definition.name, []).append((path, where, definition.parameters))
        self._index_selectors()

    def _index_selectors(self) -> None:
        """The vendor selector macros of the project (`FileView.selectors`), each decided over all its definitions, where
        their files are compiled (`_base`) taken in: one defined differently elsewhere is no selector."""
        candidates = {d.name for facts in self.files.values() for d in facts.defines if d.unused}
        if not candidates:
            return
        found: dict[str, list[tuple[str, Definition]]] = {}
        for path, facts in self.files.items():
            for definition in facts.defines:
                if definition.name in candidates:
                    found.setdefault(definition.name, []).append((path, definition))
        for name, definitions in found.items():
            shapes = [MacroShape(self._compiled_at(path, d.branch), d.parameters, d.unused) for path, d in definitions]
            dropped = dropped_on_rocm(shapes)
            if dropped is None:
                continue
            path, first = next(
                (p, d) for (p, d), shape in zip(definitions, shapes, strict=True) if shape.branch.on_rocm is not False
            )
            where = f"{self._relative(path)}:{first.line}"
            self._selectors[name] = (where, *dropped)

    def _named_where_rocm_compiles(self, paths: Iterable[str], names: frozenset[str]) -> Tri:
        """Whether one of the files at `paths` names one of `names` as a word (in code or comments alike) where a ROCm
        build may compile it (True; also for a file that cannot be read), only in files ROCm never compiles or in
        their NVIDIA-only `#if` arms (False), or nowhere (None)."""
        word = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names)) + rb")\b")
        named: Tri = None
        for path in sorted(paths):
            try:
                with open(path, "rb") as file:
                    data = file.read()
            except OSError:
                return True
            found = [match.start() for match in word.finditer(data)]
            if not found:
                continue
            named = False
            if self._base(path, frozenset())[0].on_rocm is False:
                continue
            preprocessor = analyse(data.decode("utf-8", "replace"), self._macros)
            if any(preprocessor.branch_at(offset).on_rocm is not False for offset in found):
                return True
        return named

    def _declared_only_off_rocm(self, paths: Sequence[str], names: frozenset[str], depth: int) -> str | None:
        """One of `names` the files at `paths` declare (`nvidia_only.declares`, outside function bodies) at least once,
        each time in an `#if` arm a ROCm build skips by the project's own macros (`nvidia_only.off_rocm_by_project`)
        or, `depth` arms deep, in an arm ROCm skips that itself names such a name (`_needs_nvidia_only`: a
        `__CUDA_ARCH__ >= 900` arm of helpers calling the project's NVIDIA-only multimem ones); None when none is, or a
        file cannot be read (its declarations are unknown). Names declared in the fewest files are tried first."""
        if not names:
            return None
        declarations: dict[str, tuple[bytes, dict[str, tuple[int, ...]]]] = {}  # path -> its bytes, declarations
        declaring: dict[str, list[str]] = {}  # name -> the paths declaring it
        for path, data in self._reading(paths):
            if data is None:
                return None
            if not self._has_any_word(path, data, names):
                continue
            found = {name: offsets for name, offsets in self._declarations_of(path, data, names).items() if offsets}
            if found:
                declarations[path] = (data, found)
                for name in found:
                    declaring.setdefault(name, []).append(path)
        views: dict[str, tuple[Preprocessor, dict[tuple[int, int] | None, bool]]] = {}
        for name in sorted(declaring, key=lambda name: (len(declaring[name]), name)):
            if all(
                self._declared_off_rocm_in(path, declarations[path], name, paths, depth, views)
                for path in declaring[name]
            ):
                return name
        return None

    def _declared_off_rocm_in(
        self,
        path: str,
        declarations: tuple[bytes, dict[str, tuple[int, ...]]],
        name: str,
        paths: Sequence[str],
        depth: int,
        views: dict[str, tuple[Preprocessor, dict[tuple[int, int] | None, bool]]],
    ) -> bool:
        """Whether each declaration of `name` in the file at `path` is off ROCm (see `_declared_only_off_rocm`);
        `views` keeps each file's preprocessor and its `_needs_nvidia_only` answers."""
        if self._base(path, frozenset())[0].on_rocm is False:
            return False  # a file ROCm never compiles, for reasons of its includers': not the project's design here
        data, found = declarations
        if path not in views:
            if path not in self._preprocessed:
                self._preprocessed[path] = analyse(data.decode("utf-8", "replace"), self._macros)
            views[path] = (self._preprocessed[path], {})
        preprocessor, needing = views[path]
        return all(
            off_rocm_by_project(preprocessor, offset)
            or (depth > 0 and self._needs_nvidia_only(paths, data, preprocessor, offset, depth, needing))
            for offset in found[name]
        )

    def _declarations_of(self, path: str, data: bytes, names: frozenset[str]) -> dict[str, tuple[int, ...]]:
        """Where the file at `path` declares each of `names` outside function bodies (`nvidia_only.declares`), kept
        per file and name: the arms of one file ask about the same files around it with overlapping names."""
        known = self._declared.setdefault(path, {})
        missing = sorted(name for name in names if name not in known)
        if missing:
            known.update(dict.fromkeys(missing, ()))
            # Only the names the file holds as a word (`_has_any_word`'s set; a name that is not ASCII is always
            # searched): the pattern of an arm's hundreds of words cost more to compile than to run.
            words = self._words.get(path)
            held = [name for name in missing if words is None or not name.isascii() or name.encode() in words]
            matches = word_pattern(held).finditer(data) if held else ()
            found = [m for m in matches if declares(data, m.start(), m.end())]
            if found and path not in self._bodies:
                self._bodies[path] = function_bodies(data)
            bodies = self._bodies.get(path, [])
            outside: dict[str, list[int]] = {}
            for match in found:
                if not any(start < match.start() < end for start, end in bodies):
                    outside.setdefault(match.group().decode(), []).append(match.start())
            known.update((name, tuple(offsets)) for name, offsets in outside.items())
        return {name: known[name] for name in names}

    def _needs_nvidia_only(
        self,
        paths: Sequence[str],
        data: bytes,
        preprocessor: Preprocessor,
        offset: int,
        depth: int,
        seen: dict[tuple[int, int] | None, bool],
    ) -> bool:
        """Whether the code at `offset` sits in an `#if` arm ROCm skips whose code names what the files at `paths`
        declare only where ROCm never compiles (`_declared_only_off_rocm`, one arm less deep); `seen` remembers the
        answer per arm."""
        if preprocessor.branch_at(offset).on_rocm is not False:
            return False
        arm = arm_around(preprocessor, offset)
        if arm not in seen:
            words = frozenset(code_words(data[arm[0] : arm[1]])) if arm is not None else frozenset()
            seen[arm] = bool(words) and self._declared_only_off_rocm(paths, words, depth - 1) is not None
        return seen[arm]

    def _named_only_off_rocm(self, paths: Iterable[str], names: frozenset[str]) -> bool:
        """Whether the files at `paths` name one of `names` as a word, and each time in an `#if` arm a ROCm build
        skips by the project's own macros (`nvidia_only.off_rocm_by_project`); False when one cannot be read."""
        if not names:
            return False
        word = word_pattern(names)
        named = False
        for path, data in self._reading(paths):
            if data is None:
                return False
            if not self._has_any_word(path, data, names):
                continue
            found = [match.start() for match in word.finditer(data)]
            if not found:
                continue
            preprocessor = analyse(data.decode("utf-8", "replace"), self._macros)
            if not all(off_rocm_by_project(preprocessor, offset) for offset in found):
                return False
            named = True
        return named

    def _named_in_any(self, paths: Iterable[str], names: frozenset[str]) -> bool:
        """Whether one of the files at `paths` names one of `names` as a word (True when one cannot be read), from
        the word sets `_has_any_word` keeps: a file read once answers every later question."""
        for path in sorted(paths):
            if path in self._words:
                if any(name.encode() in self._words[path] for name in names):
                    return True
                continue
            _, data = next(self._reading((path,)))
            if data is None or self._has_any_word(path, data, names):
                return True
        return False

    def _has_any_word(self, path: str, data: bytes, names: frozenset[str]) -> bool:
        """Whether the file at `path` (its bytes `data`) holds one of `names` as a whole word, from its set of words,
        built once: most files around a file hold none of an arm's names, and `word_pattern` would scan them all."""
        if path not in self._words:
            copies = self._word_copies
            self._words[path] = frozenset([copies.setdefault(word, word) for word in set(re.findall(rb"\w+", data))])
        return any(name.encode() in self._words[path] for name in names)

    @staticmethod
    def _reading(paths: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        """Each path, sorted, with its bytes (None when it cannot be read)."""
        for path in sorted(paths):
            try:
                with open(path, "rb") as file:
                    yield path, file.read()
            except OSError:
                yield path, None

    def _compiled_at(self, path: str, branch: Branch) -> Branch:
        """Where code in `branch` of the file at `path` is compiled, the file's own `_base` taken in."""
        base, _ = self._base(path, frozenset())
        return Branch(and3(base.on_rocm, branch.on_rocm), and3(base.on_nvidia, branch.on_nvidia))

    # --- queries ----------------------------------------------------------------------------------------------
    def resolve(self, includer: str, header: str, system: bool) -> str | None:
        """The project file an `#include` names: next to the includer (quoted), else the one project file whose
        path ends with the included path (as the build's `-I` folders would find it); None outside the tree."""
        key = (os.path.dirname(includer), header, system)
        if key in self._resolved:
            return self._resolved[key]
        found: str | None = None
        if not system:
            candidate = os.path.normpath(os.path.join(key[0], header))
            found = candidate if candidate in self.files else None
        if found is None and (not system or "/" in header):
            suffix = "/" + header.lstrip("./")
            matches = [p for p in self._by_name.get(os.path.basename(header), ()) if p.endswith(suffix)]
            found = matches[0] if len(matches) == 1 else None
        self._resolved[key] = found
        return found

    def view(self, path: str) -> FileView:
        path = os.path.abspath(path)
        closure = _Files(lambda: frozenset(self._closure(path)))
        around = _Files(lambda: frozenset((path, *closure.files, *self._includers_closures(path))))
        # The files around it and those beside it in its folder: what `named_only_off_rocm` reads.
        beside = _Files(lambda: around.files | frozenset(self._by_folder.get(os.path.dirname(path), ())))
        base, base_evidence = self._base(path, frozenset())
        hipify_evidence = self._hipify_evidence(path)
        in_hipified_folder = bool(hipify_evidence) and not self.build_facts.hipify
        hipified = in_hipified_folder or any(
            path.startswith(folder + os.sep) for folder in self.build_facts.extension_folders
        )
        hipify_renamed: dict[str, str | None] = dict.fromkeys(HIPIFY_RENAMED_MACROS, "1") if hipified else {}
        return FileView(
            learned=self.learned,
            base=base,
            base_evidence=base_evidence,
            defines=_Visible(self._values["defines"], closure),
            macros=_Visible(self._values["macros"], closure),
            constants=_Visible(self._values["constants"], closure),
            toolkit_versions=_Visible(self._values["toolkit versions"], closure),
            shuffle_wrappers=_Visible(self._values["shuffle_wrappers"], closure),
            device_wave_sizes=_LazySet(lambda: self._device_wave_sizes(path, closure.files)),
            aliases=_Remaps(self._values["remaps"], around),
            selectors=self._selectors,
            rocm_native=self._rocm_native(path),
            hip_source=self._hip_source(path),
            hipified=self._relative_evidence(hipify_evidence),
            hipify_tool=self._relative_evidence(self.build_facts.hipify_tool) if hipify_evidence else "",
            hip_compiled="" if hipified else self._hip_compiled(path),
            hipify_ported=lambda: self._hipify_ported(path),
            rocm_spelling=lambda names: self._rocm_spelling((path, *sorted(closure.files)), names),
            host_compiled_only=self._host_compiled_only(path),
            atomic_overloads=_LazySet(lambda: self._atomic_overloads(around.files)),
            rocm_build_values=self._rocm_build_values | hipify_renamed,
            rocm_build_decided=self._rocm_build_decided | frozenset(hipify_renamed),
            built_for_any_vendor=self._built_for_any_vendor,
            rocm_refused=self.build_facts.rocm_refused,
            nvidia_build_defines=self._nvidia_build_defines,
            runtime_compiled_only_on_nvidia=self._runtime_compiled_only_on_nvidia,
            # The build files too: what they define for ROCm and which sources they list decide every file.
            dependencies=_Dependencies(beside, self.build_facts.files),
            includes_through=_IncludesThrough(self, path),
            named_around=lambda names: self._named_where_rocm_compiles(around.files - {path}, names),
            declared_only_off_rocm=lambda names: self._declared_only_off_rocm((path, *closure.files), names, 1),
            named_only_off_rocm=lambda names: self._named_only_off_rocm(beside.files - {path}, names),
            named_in_other_files=lambda names: self._named_in_any(self.files.keys() - {path}, names),
            apart_from_cuda_twin=lambda code: self._apart_from_cuda_twin(path, code),
            hip_twin_beside=lambda: self._hip_twin_beside(path),
            names_project_file=lambda header, system: self.resolve(path, header, system) is not None,
        )

    def includes_through(self, includer: str, header: str, system: bool) -> tuple[tuple[str, str], ...]:
        """(header as written, "path:line") of every `#include` ROCm reads in the project header `includer`'s
        `#include` of `header` names, and in every header that one pulls in; () when it names no project file."""
        target = self.resolve(includer, header, system)
        if target is None:
            return ()
        return tuple(
            (include.header, f"{self._relative(path)}:{include.line}")
            for path in self._includes_from(target, lambda include: include.branch.on_rocm is not False)
            for include in self.files[path].includes
            if include.branch.on_rocm is not False
        )

    def _rocm_spelling(self, files: Iterable[str], names: frozenset[str]) -> str:
        """`FileView.rocm_spelling` over `files` (a file and its include closure)."""
        for path in files:
            facts = self.files.get(path)
            for definition in facts.defines if facts is not None else ():
                rocm_only = definition.branch.on_rocm is True and definition.branch.on_nvidia is False
                if rocm_only and definition.parameters is None and definition.replacement.strip() in names:
                    return f"{self._relative(path)}:{definition.line}"
        return ""

    def _atomic_overloads(self, around: frozenset[str]) -> frozenset[tuple[str, str]]:
        """(name, pointee) of the atomic overloads the files around a view define where ROCm compiles them."""
        return frozenset(
            (overload.name, overload.value or "")
            for file in around
            if file in self.files and self._base(file, frozenset())[0].on_rocm is not False
            for overload in self.files[file].atomic_overloads
        )

    def _device_wave_sizes(self, path: str, closure: frozenset[str]) -> frozenset[str]:
        """Macros the file's headers define, for ROCm, as the device pass's wave size; and those some project file
        defines so when neither the file nor its headers define the name at all (an include the model could not
        resolve, `#include <kernels.cuh>` found through the build's `-I`)."""
        defining = closure | {path}
        return frozenset(
            name
            for name, found in self._values["wave sizes"].items()
            if any(p in closure for p, _, _ in found)
            or not any(p in defining for p, _, _ in self._values["defines"].get(name, ()))
        )

    def _closure(self, path: str) -> tuple[str, ...]:
        """Every project header `path` includes, directly or through others (not `path` itself)."""
        if path in self._closures:
            return self._closures[path]
        # Not through an NVIDIA-only include: ROCm never sees what that header defines.
        reached = self._includes_from(path, lambda include: include.branch.on_rocm is not False)
        self._closures[path] = tuple(itertools.islice(reached, 1, None))
        return self._closures[path]

    def _includes_from(self, path: str, follows: Callable[[IncludeFact], bool]) -> Iterator[str]:
        """`path`, then each project file it includes through `#include`s `follows` accepts, transitively (depth
        first, each once)."""
        seen = {path}
        pending = [path]
        while pending:
            current = pending.pop()
            yield current
            for target, include in self._edges.get(current, ()):
                if follows(include) and target not in seen:
                    seen.add(target)
                    pending.append(target)

    def _base(self, path: str, visiting: frozenset[str]) -> tuple[Branch, str]:
        """Where a file is compiled at all: not on a vendor whose build reaches none of the `#include`s of it (they
        sit in that vendor's excluded branches, or in files it does not compile), nor on ROCm when the build lists
        it for NVIDIA only, or when it is a header nothing includes in a folder of headers only NVIDIA compiles;
        else wherever its own `#if`s say."""
        if path in self._bases:
            return self._bases[path]
        includers = self._includers.get(path, [])
        if path in visiting:
            return EVERYWHERE, ""
        only_nvidia_path = self._on_nvidia_include_path_only(path) or self._errors_on_rocm(path)
        if only_nvidia_path:
            self._bases[path] = Branch(False, None), only_nvidia_path
            return self._bases[path]
        if not includers or self._compiled_on_its_own(path):
            unadded = (
                self._in_unadded_project(path)
                or self._left_out_of_make_list(path)
                or self._named_by_no_build(path)
                or self._header_nothing_reaches(path)
            )
            if unadded:
                self._bases[path] = NO_GPU, unadded
                return self._bases[path]
            built_for = (
                self._built_only_for_nvidia(path)
                or self._beside_its_hip_twin(path)
                or self._beside_its_vendor_twin(path, visiting | {path})
                or self._in_nvidia_only_folder(path, visiting | {path})
                or self._included_by_name_only_where_rocm_does_not_compile(path, visiting | {path})
                or self._included_ambiguously_only_where_rocm_does_not_compile(path, visiting | {path})
            )
            self._bases[path] = (Branch(False, None), built_for) if built_for else (EVERYWHERE, "")
            return self._bases[path]
        tree = self._nvidia_source_tree(path)
        if tree and not self._certainly_reached_on_rocm(path, includers, visiting):
            self._bases[path] = Branch(False, None), tree
            return self._bases[path]
        reaches_rocm: list[Tri] = []
        reaches_nvidia: list[Tri] = []
        for includer, include in includers:
            outer, _ = self._base(includer, visiting | {path})
            reaches_rocm.append(False if outer.on_rocm is False else include.branch.on_rocm)
            reaches_nvidia.append(False if outer.on_nvidia is False else include.branch.on_nvidia)
        no_rocm = all(value is False for value in reaches_rocm)
        no_nvidia = all(value is False for value in reaches_nvidia)
        first = f"{self._relative(includers[0][0])}:{includers[0][1].line}"
        if no_rocm:
            result = Branch(False, False if no_nvidia else None), f"{first}: included only where ROCm does not compile"
        elif no_nvidia:
            result = Branch(None, False), f"{first}: included only where NVIDIA does not compile"
        else:
            result = EVERYWHERE, ""
        self._bases[path] = result
        return result

    def _errors_on_rocm(self, path: str) -> str:
        """A file whose `#error` every ROCm build reaches (`#if !defined(XYZ_ENABLE_CUDA) #error`): the code of
        that build option, which no ROCm build compiles, and neither do the headers only it includes."""
        line = self.files[path].rocm_error_line if path in self.files else 0
        return f"{self._relative(path)}:{line}: #error wherever ROCm compiles it" if line else ""

    def _compiled_on_its_own(self, path: str) -> bool:
        """Whether a source file (not a header) is a translation unit a build names by its path (`train: train.cu` in
        a Makefile, a CMake list) for more than NVIDIA, so that the files including it (a test that `#include`s the
        program it tests) do not decide where it is compiled."""
        if is_header(path):
            return False
        named = self._source_index[0].get(path, ())
        return any(not s.removed and not s.unbuilt and self._vendor_of(s) != "nvidia" for s in named)

    def _host_compiled_only(self, path: str) -> str:
        """See `FileView.host_compiled_only`: a header host sources (`.cpp`) ROCm compiles include, and that no CUDA
        or HIP source, no header nothing includes that may still be compiled (`_unincluded_header_maybe_compiled`)
        and no `#include` the model could not follow reaches, in a project whose build hands no `.cpp` to nvcc."""
        if not is_header(path) or self.build_facts.host_sources_as_cuda or path in self._reached_beyond_host_sources:
            return ""
        if path not in self._reached_from_host_sources:
            return ""  # no host source includes it either: nothing tells how it is compiled
        return "only sources a host compiler builds (.cpp) include it, through the project's headers"

    @cached_property
    def _reached_beyond_host_sources(self) -> frozenset[str]:
        """The files a translation unit other than a host compiler's `.cpp` may compile on ROCm: from every CUDA or
        HIP source (a `.cpp` a make file of its folder hands to nvcc too) and every header nothing in the tree
        includes that may be compiled so (public headers, under an `include/` folder, which a library's users may
        include from a `.cu` file; headers holding device code, which a source the build generates may include; not
        the other headers of the sources, which nothing compiles), down the `#include`s ROCm may read, and from an
        `#include` the model could not follow (`"config.h"` with several such files) to every project file it may
        name."""
        as_cuda_in = self.build_facts.host_sources_as_cuda_in
        return self._reached_from(
            lambda path: (
                self._unincluded_header_maybe_compiled(path)
                if is_header(path)
                else not is_host_source(path) or _inside(path, as_cuda_in)
            )
        )

    @cached_property
    def _reached_from_host_sources(self) -> frozenset[str]:
        return self._reached_from(lambda path: not is_header(path) and is_host_source(path))

    def _reached_from(self, starts: Callable[[str], bool]) -> frozenset[str]:
        """The files ROCm may compile from the files `starts` accepts (those ROCm compiles), down the `#include`s
        ROCm may read, and through the ones the model could not follow to every project file they may name."""
        pending = [
            path for path in self.files if starts(path) and self._base(path, frozenset())[0].on_rocm is not False
        ]
        reached = set(pending)
        while pending:
            current = pending.pop()
            targets = [
                target for target, include in self._edges.get(current, ()) if include.branch.on_rocm is not False
            ]
            for target in [*targets, *self._unfollowed_targets(current)]:
                if target not in reached:
                    reached.add(target)
                    pending.append(target)
        return frozenset(reached)

    def _unincluded_header_maybe_compiled(self, path: str) -> bool:
        """A header nothing in the tree includes that something may compile: a public one (under `include/`), which
        a library's users include, or one holding device code, which a source the build generates may include."""
        if path in self._includers:
            return False
        return self.files[path].device_code or "include" in self._relative(path).split(os.sep)[:-1]

    def _unfollowed_targets(self, path: str) -> Iterator[str]:
        """Every project file an `#include` of `path` that the model could not follow may name: one whose path ends
        with the included path (`../` steps dropped)."""
        for include in self.files[path].includes:
            if include.branch.on_rocm is False or self.resolve(path, include.header, include.system) is not None:
                continue
            named = os.sep + re.sub(r"^(?:\.\.?/)+", "", include.header)
            yield from (p for p in self._by_name.get(os.path.basename(named), ()) if p.endswith(named))

    def _in_unadded_project(self, path: str) -> str:
        """Why no build compiles a file nothing includes: it sits in a nested CMake project (a vendored library's
        own build, with its tests and examples) that the project's build never adds. "" otherwise."""
        return next((why for folder, why in self.build_facts.unadded_projects if _inside(path, (folder,))), "")

    def _left_out_of_make_list(self, path: str) -> str:
        """Why no build compiles a source file nothing includes: the Makefiles of its folder name the folder's sources
        one by one (at least two of them) and not it, no Makefile globs sources at or above its folder, none names it
        by its path or names a file of its name outside its own folder, and no other build file names or globs it (a file the build list left
        out: an old copy of a source another folder compiles, a sample the build never had). "" otherwise."""
        if is_header(path):
            return ""
        folder = os.path.dirname(path)
        listed = self._make_listed_folders.get(folder)
        if listed is None or path in self._make_folder_sources:
            return ""
        if os.path.basename(path) in self._make_named_files:
            return ""
        if _inside(path, self._make_globbing_folders) or self._sources_naming(path):
            return ""
        return (
            f"{self._relative(listed.path)}:{listed.line}: the Makefile naming this folder's sources does not name it"
        )

    def _named_by_no_build(self, path: str) -> str:
        """Why no build compiles a source file nothing includes, in a project whose CMake build builds ROCm and whose
        builds name their sources where the model reads them (CMake, make and shell scripts; a setup.py or Bazel
        `BUILD` file, whose lists may be computed, speaks for its own folder and below, where none is): no source set names or globs it, no build file, Python module or build
        system the model does not read may name it (`BuildFacts.mentioned_names`), and no Makefile names it, its
        object file or a glob over its folder (an old copy of a kernel kept beside the build, a folder of retired
        sources). "" otherwise."""
        if is_header(path) or not self._builds_name_their_sources or _inside(path, self._folders_computing_sources):
            return ""
        # A folder a CMake file adds (`add_subdirectory(SRC)`: `SRC/**`) compiles what its own CMake file lists.
        naming = [s for _, s in self._sources_naming(path) if not self._adds_a_read_cmake_file(s)]
        if naming or self._spelled_by_a_build(path):
            return ""
        return "no build file names it, and the CMake build names its sources one by one"

    def _header_nothing_reaches(self, path: str) -> str:
        """Why no build compiles a header, in a project whose builds name their sources one by one (see
        `_named_by_no_build`): no project file `#include`s a header of its name, none `#include`s a macro, no build
        file spells its name or installs headers (`BuildFacts.mentioned_names`), and it is no public header nor one
        holding device code (`_unincluded_header_maybe_compiled`): a retired header kept beside the sources. ""
        otherwise."""
        if not is_header(path) or path not in self.files or path in self._includers:
            return ""  # a file too large for the model is one it knows nothing of
        if not self._builds_name_their_sources or self.includes_through_macros:
            return ""
        if self._unincluded_header_maybe_compiled(path):
            return ""
        name = os.path.basename(path)
        if name in self._included_names or _inside(path, self._folders_computing_sources):
            return ""
        if any(fnmatch.fnmatchcase(name, p) for p in self.build_facts.mentioned_names):
            return ""
        return "nothing includes it, no build file names it, and the CMake build names its sources one by one"

    @cached_property
    def _included_names(self) -> frozenset[str]:
        """The file names every `#include` of the tree names, whatever it resolves to."""
        return frozenset(os.path.basename(i.header) for facts in self.files.values() for i in facts.includes)

    def _spelled_by_a_build(self, path: str) -> bool:
        """Whether a build may compile the source at `path` though no source set names it: a build file, Python module
        or build system the model does not read may spell its name (`BuildFacts.mentioned_names`), or a Makefile
        names it, its object file or a glob over its folder."""
        name = os.path.basename(path)
        if any(fnmatch.fnmatchcase(name, p) for p in self.build_facts.mentioned_names):
            return True
        if name in self._make_named_files or path in self._make_folder_sources:
            return True
        return os.path.splitext(name)[0] in self._make_objects or _inside(path, self._make_globbing_folders)

    def _adds_a_read_cmake_file(self, sources: SourceSet) -> bool:
        """Whether `sources` is a folder a CMake file adds (`add_subdirectory(SRC)`: `SRC/**`) whose own CMake file the
        model read: that file's lists say what the folder compiles."""
        if not sources.pattern.endswith("/**") or not _cmake(sources):
            return False
        return os.path.join(_named_path(sources)[:-3], "CMakeLists.txt") in self._build_file_set

    @cached_property
    def _build_file_set(self) -> frozenset[str]:
        return frozenset(self.build_facts.files)

    @cached_property
    def _builds_name_their_sources(self) -> bool:
        """Whether the project's CMake build builds ROCm and every build it has names its sources where the model reads
        them: CMake, make and shell scripts only (a Python or Bazel build may compute its lists), the CMake files naming
        at least two sources by their paths."""
        systems = {
            _build_system(path)
            for path in self.build_facts.files
            if not path.endswith(".in") and not _computes_its_folders_sources(path)
        }
        if "cmake" not in self._systems_building_rocm or not systems <= {"cmake", "make", "script"}:
            return False
        exact = self._source_index[0]
        return sum(any(_cmake(s) for s in sets) for sets in exact.values()) >= _MIN_MAKE_LISTED

    @cached_property
    def _folders_computing_sources(self) -> tuple[str, ...]:
        """The folders of the setup.py and Bazel files: the sources below them may be ones such a file's computed
        lists name (`glob("csrc/*.cu")`, a list a Python loop builds)."""
        return tuple(os.path.dirname(path) for path in self.build_facts.files if _computes_its_folders_sources(path))

    @cached_property
    def _make_objects(self) -> frozenset[str]:
        return frozenset(stem for listed in self.build_facts.make_source_lists for stem in listed.objects)

    @cached_property
    def _make_listed_folders(self) -> dict[str, MakeSourceList]:
        """The folders whose own Makefiles name at least two of their sources, each with its first such list."""
        found: dict[str, MakeSourceList] = {}
        for listed in self.build_facts.make_source_lists:
            folder = os.path.dirname(listed.path)
            own = [name for name in listed.names if os.path.join(folder, name) in self.files]
            if len(own) >= _MIN_MAKE_LISTED:
                found.setdefault(folder, listed)
        return found

    @cached_property
    def _make_folder_sources(self) -> frozenset[str]:
        """The sources of its own folder each Makefile names by file name (`$(cdir)/zgemm.cpp` beside it)."""
        return frozenset(
            os.path.join(os.path.dirname(listed.path), name)
            for listed in self.build_facts.make_source_lists
            for name in listed.names
        )

    @cached_property
    def _make_named_files(self) -> frozenset[str]:
        """The file names Makefiles name that are no source of the naming Makefile's own folder: sources of some other
        folder (`$(SRC)/k.cu`), wherever that is."""
        return frozenset(
            name
            for listed in self.build_facts.make_source_lists
            for name in listed.names
            if os.path.join(os.path.dirname(listed.path), name) not in self.files
        )

    @cached_property
    def _make_globbing_folders(self) -> tuple[str, ...]:
        return tuple(folder for listed in self.build_facts.make_source_lists for folder in listed.globbed)

    def _nvidia_source_tree(self, path: str) -> str:
        """Evidence that a header sits in a folder tree whose sources the build compiles for NVIDIA only: the most
        specific recursive globs or added folders covering it (`file(GLOB_RECURSE CUSOURCES cuda/*.cu)` inside
        `if(WITH_CUDA)`) are all NVIDIA's, and the ROCm build does not compile hipify's copy of it. "" otherwise."""
        if not is_header(path) or not self._systems_building_rocm:
            return ""
        if any(path.startswith(folder + os.sep) for folder in self._hipified_folders):
            return ""
        _, folders, _ = self._source_index
        covering = [(len(f), s) for f, sets in folders.items() if path.startswith(f + os.sep) for s in sets]
        covering += [(len(tree), s) for tree, s in self._recursive_glob_trees if path.startswith(tree + os.sep)]
        building_rocm = self._systems_building_rocm
        covering = [(n, s) for n, s in covering if _build_system(s.path) in building_rocm]
        if not covering:
            return ""
        most_specific = max(n for n, _ in covering)
        deciding = [s for n, s in covering if n == most_specific]
        if any(self._vendor_of(s) != "nvidia" for s in deciding):
            return ""
        first = deciding[0]
        return (
            f"{self._relative(first.path)}:{first.line}: in a folder whose sources the build compiles for NVIDIA only"
        )

    @cached_property
    def _recursive_glob_trees(self) -> list[tuple[str, SourceSet]]:
        """The fixed folder before `**` of each recursive glob of `_source_index` (`cuda/**/*.cu` -> `cuda`) and its
        set, in its order: worked out once, not for every header `_nvidia_source_tree` asks about."""
        trees = []
        for _, _, _, sources in self._source_index[2]:
            named = _named_path(sources)
            tree = os.path.dirname(named.split("**")[0]) if "**" in named else ""
            if tree and "*" not in tree:
                trees.append((tree, sources))
        return trees

    def _on_nvidia_include_path_only(self, path: str) -> str:
        """Evidence that a header is found only through an include folder the NVIDIA build alone puts on the include
        path (`target_include_directories(lib PRIVATE ${CMAKE_SOURCE_DIR}/include/targets/cuda)` in the CUDA
        target's CMake, while the HIP target adds `include/targets/hip`): the most specific include folders holding
        it are all NVIDIA's, the ROCm build adds include folders of its own, none of them inside this one, and no
        file outside it includes the header (or one including it) by a path found without it. "" otherwise."""
        if not is_header(path):
            return ""
        found = self._nvidia_include_folder(path)
        if found is None or path in self._found_without_nvidia_folder(found[0]):
            return ""
        folder, added_by = found
        where = f"{self._relative(added_by.path)}:{added_by.line}"
        return f"{where}: under {self._relative(folder)}/, which only the NVIDIA build puts on the include path"

    def _nvidia_include_folder(self, path: str) -> tuple[str, SourceSet] | None:
        """The most specific build include folder holding `path` and the set adding it, when every build file adding
        it is NVIDIA's and the ROCm build adds include folders of its own, none inside it (None otherwise)."""
        if not any(path.startswith(folder + os.sep) for folder, _ in self._nvidia_include_folders):
            return None  # most projects: no such folder at all
        if any(path.startswith(folder + os.sep) for folder in self._hipified_folders):
            return None
        covering = [(f, s) for f, s in self._cmake_include_folders if path.startswith(f + os.sep)]
        most_specific = max(len(f) for f, _ in covering)
        deciding = [(f, s) for f, s in covering if len(f) == most_specific]
        if any(self._vendor_of(s) != "nvidia" for _, s in deciding):
            return None
        folder = deciding[0][0]
        if any(f == folder or f.startswith(folder + os.sep) for f in self._rocm_include_folders):
            return None  # a general folder the NVIDIA build adds, the ROCm build a part of
        return deciding[0]

    @cached_property
    def _rocm_include_folders(self) -> list[str]:
        return [f for f, s in self._cmake_include_folders if self._vendor_of(s) == "rocm"]

    @cached_property
    def _cmake_include_folders(self) -> list[tuple[str, SourceSet]]:
        """The include folders of the CMake build: where one vendor's include path is told from the other's."""
        return [(f, s) for f, s in self._include_folders if _build_system(s.path) == "cmake"]

    @cached_property
    def _nvidia_include_folders(self) -> list[tuple[str, SourceSet]]:
        """The include folders NVIDIA's build adds, when the CMake build also builds ROCm with include folders of
        its own (none otherwise: a build with no ROCm include path says nothing of its NVIDIA one)."""
        if "cmake" not in self._systems_building_rocm or not self._rocm_include_folders:
            return []
        return [(f, s) for f, s in self._cmake_include_folders if self._vendor_of(s) == "nvidia"]

    def _included_by_name_only_where_rocm_does_not_compile(self, path: str, visiting: frozenset[str]) -> str:
        """Evidence that a header sitting right in a build include folder, which the include graph leaves unresolved
        when included by its bare name in angle brackets (`#include <inline_ptx.h>`), is included so only by files
        ROCm does not compile (the CUDA target's headers). Used for where the file is compiled only: the graph
        reads no definitions through such includes. "" otherwise."""
        if os.path.dirname(path) not in self._include_folder_paths or not is_header(path):
            return ""
        name = os.path.basename(path)
        if any(
            other != path and os.path.dirname(other) in self._include_folder_paths
            for other in self._by_name.get(name, ())
        ):
            return ""  # several files so named on the include path: which one an include finds is not known
        where = self._first_of_includers_rocm_never_compiles(self._bare_angle_includers.get(name, []), visiting)
        return f"{where}: included only where ROCm does not compile" if where else ""

    def _included_ambiguously_only_where_rocm_does_not_compile(self, path: str, visiting: frozenset[str]) -> str:
        """Evidence that a header nothing includes by a path the include graph resolves, but which `#include`s the
        graph leaves unresolved may name (`"cuda/props.hpp"`, with several files ending so: an old copy of a folder
        kept beside the build), is included so only by files ROCm does not compile. A public header (under
        `include/`), which a library's users include, is not. Used for where the file is compiled only. "" otherwise."""
        if not is_header(path) or path in self._includers or "include" in self._relative(path).split(os.sep)[:-1]:
            return ""
        where = self._first_of_includers_rocm_never_compiles(self._unresolved_includers.get(path, []), visiting)
        return f"{where}: included (by a path several files end with) only where ROCm does not compile" if where else ""

    def _first_of_includers_rocm_never_compiles(
        self, includers: list[tuple[str, IncludeFact]], visiting: frozenset[str]
    ) -> str:
        """ "path:line" of the first of `includers` (each with its `#include`) when ROCm compiles none of those includes
        (gated off, or in a file ROCm does not compile), "" otherwise or when there are none."""
        if not includers or any(
            include.branch.on_rocm is not False and self._base(includer, visiting)[0].on_rocm is not False
            for includer, include in includers
        ):
            return ""
        includer, include = includers[0]
        return f"{self._relative(includer)}:{include.line}"

    @cached_property
    def _unresolved_includers(self) -> dict[str, list[tuple[str, IncludeFact]]]:
        """Project file -> (includer, include) of each `#include` the graph leaves unresolved because several project
        files end with its path (`"cuda/props.hpp"` with an old copy in `attic/`), of a file other than it. An
        include only one file ends with is left out: unresolved, it names a header outside the tree (`<cuda_fp4.h>`
        in the project's own `cuda_fp4.h`)."""
        found: dict[str, list[tuple[str, IncludeFact]]] = {}
        for includer, facts in self.files.items():
            for include in facts.includes:
                if self.resolve(includer, include.header, include.system) is not None:
                    continue
                named = os.sep + re.sub(r"^(?:\.\.?/)+", "", include.header)
                targets = [t for t in self._by_name.get(os.path.basename(named), ()) if t.endswith(named)]
                for target in targets if len(targets) > 1 else ():
                    if target != includer:
                        found.setdefault(target, []).append((includer, include))
        return found

    @cached_property
    def _bare_angle_includers(self) -> dict[str, list[tuple[str, IncludeFact]]]:
        """Bare name -> (includer, include) of each `#include <name.h>` naming no folder."""
        found: dict[str, list[tuple[str, IncludeFact]]] = {}
        for includer, facts in self.files.items():
            for include in facts.includes:
                if include.system and "/" not in include.header:
                    found.setdefault(include.header, []).append((includer, include))
        return found

    @cached_property
    def _include_folder_paths(self) -> frozenset[str]:
        return frozenset(folder for folder, _ in self._include_folders)

    @cached_property
    def _include_folders(self) -> list[tuple[str, SourceSet]]:
        """(absolute folder, the build's set adding it) of every folder the CMake build or a make file (`-I` flags)
        puts on the include path."""
        return [(_named_path(s), s) for s in self.build_facts.include_folders]

    def _found_without_nvidia_folder(self, folder: str) -> frozenset[str]:
        """The headers under `folder` that a ROCm compile may still reach: those a file outside it includes by a path
        found without `folder` on the include path (next to the includer, or from a folder above it:
        `#include "targets/cuda/x.h"`), where ROCm may compile that include, and what they include in turn."""
        known = self._folder_reach.get(folder)
        if known is not None:
            return known
        inside = [p for p in self._by_folder_tree(folder)]
        found: set[str] = set()
        for header in inside:
            for includer, include in self._includers.get(header, ()):
                if includer.startswith(folder + os.sep) or include.branch.on_rocm is False:
                    continue
                if not self._found_through(folder, includer, include, header):
                    found.add(header)
        reached = {
            current
            for start in found
            for current in self._includes_from(start, lambda include: include.branch.on_rocm is not False)
            if current.startswith(folder + os.sep)
        }
        self._folder_reach[folder] = known = frozenset(reached)
        return known

    def _found_through(self, folder: str, includer: str, include: IncludeFact, header: str) -> bool:
        """Whether `#include` finds `header` only with `folder` (or a folder inside it) on the include path: the
        path it names is not next to the includer, and what is left of the header's path is inside `folder`."""
        if not include.system and os.path.normpath(os.path.join(os.path.dirname(includer), include.header)) == header:
            return False
        searched = header[: -len(include.header.lstrip("./"))].rstrip(os.sep)
        return searched == folder or searched.startswith(folder + os.sep)

    def _by_folder_tree(self, folder: str) -> list[str]:
        """The project files under `folder`, at any depth."""
        return [path for path in self.files if path.startswith(folder + os.sep)]

    def _certainly_reached_on_rocm(
        self, path: str, includers: list[tuple[str, IncludeFact]], visiting: frozenset[str]
    ) -> bool:
        """Whether code outside the NVIDIA-only tree holding `path` certainly includes it on ROCm (an include
        under a gate the ROCm build may leave closed, `#if MEGDNN_CC_CUDA`, does not count: the ROCm build builds)."""
        for includer, include in includers:
            if includer == path or self._nvidia_source_tree(includer):
                continue
            outer, _ = self._base(includer, visiting | {path})
            if outer.on_rocm is True and include.branch.on_rocm is True:
                return True
        return False

    def _in_nvidia_only_folder(self, path: str, visiting: frozenset[str]) -> str:
        """Evidence that a header nothing includes belongs to an NVIDIA-only component: at least
        `_FOLDER_VOTERS` other headers of its folder are included somewhere, and only where ROCm does not compile
        (a flash-attention folder whose kernels only the CUDA build lists). Those it includes itself do not vote:
        their includers are it. "" otherwise (a library's public header has includable siblings)."""
        if not is_header(path):
            return ""
        own = {target for target, _ in self._edges.get(path, ())}
        folder = os.path.dirname(path)
        voters = [
            other
            for other in self._by_folder.get(folder, ())
            if other not in own and other not in visiting and other in self._includers
        ]
        # The headers the rest of the project includes decide, when enough do: one only its folder's other
        # unincluded headers include (`old_blas.hpp` -> `cublasXt.hpp`) says nothing of how the build uses it.
        entered = [v for v in voters if any(os.path.dirname(i) != folder for i, _ in self._includers[v])]
        voters = entered if len(entered) >= _FOLDER_VOTERS else voters
        if len(voters) < _FOLDER_VOTERS or any(self._base(v, visiting)[0].on_rocm is not False for v in voters):
            return ""
        return (
            f"{self._relative(folder)}/: a header nothing includes, beside {len(voters)} headers only NVIDIA compiles"
        )

    @cached_property
    def _systems_building_rocm(self) -> frozenset[str]:
        """The build systems (see `_build_system`) that build for ROCm at all: a HIP language, hipify, a ROCm-only
        definition or source. A source list says what ROCm compiles only when its own build system builds ROCm: a
        project may build with make (a ROCm make fragment) and also with a CMake that knows only CUDA. A setup.py
        and a CMake build are one (setup.py often drives CMake, a ROCm arm in either speaks for both)."""
        facts = self.build_facts
        evidence = [
            *(d.path for d in facts.defines if d.vendor == "rocm"),
            *(s.path for s in facts.sources if s.vendor == "rocm"),
            *facts.rocm_branches,
        ]
        if facts.hipify:
            evidence.append(facts.hipify.partition(":")[0])
        systems = {_build_system(path) for path in evidence} | ({"cmake"} if facts.hip_language else set())
        return frozenset(systems | ({"cmake", "python"} if systems & {"cmake", "python"} else set()))

    @cached_property
    def _rocm_build_values(self) -> dict[str, str | None]:
        return rocm_build_values(self.build_facts)

    @cached_property
    def _nvidia_build_defines(self) -> frozenset[str]:
        defines = self.build_facts.defines
        return frozenset(
            {d.name for d in defines if d.vendor == "nvidia"}
            - {d.name for d in defines if d.vendor != "nvidia"}
            - self._gpu_build_macros
        )

    @cached_property
    def _runtime_compiled_only_on_nvidia(self) -> str:
        """See `FileView.runtime_compiled_only_on_nvidia`: the first file compiling at run time, when every such
        file is one the ROCm build does not compile."""
        compiling = sorted(path for path, facts in self.files.items() if facts.runtime_compiles)
        if not compiling or any(self._base(path, frozenset())[0].on_rocm is not False for path in compiling):
            return ""
        return f"{self._relative(compiling[0])} compiles at run time, and ROCm does not compile it"

    @cached_property
    def _built_for_any_vendor(self) -> frozenset[str]:
        return _built_for_any_vendor(self.build_facts)

    @cached_property
    def _rocm_build_decided(self) -> frozenset[str]:
        return rocm_build_decided(self.build_facts)

    def _built_only_for_nvidia(self, path: str) -> str:
        """Evidence that the build compiles `path` for NVIDIA only: the ROCm build removes it from a source list
        (`list(REMOVE_ITEM CUDA_SOURCES ...)` in `elseif(WITH_HIP)`), or the most specific source sets of the build
        files naming it (`add_subdirectory(cuda)` inside `if(BUILD_CUDA)`, `sources += cuda_sources` under
        `if use_cuda:`) are all NVIDIA's. "" otherwise."""
        removal = self._removed_for_rocm(path)
        if removal is not None:
            return f"{self._relative(removal.path)}:{removal.line}: the ROCm build removes it from its sources"
        if any(path.startswith(folder + os.sep) for folder in self._hipified_folders):
            return ""  # the ROCm build compiles its hipified copy
        # A build system with no ROCm build yet says nothing: every CUDA source it lists is one to port.
        building_rocm = self._systems_building_rocm
        matching = [(n, s) for n, s in self._sources_naming(path) if _build_system(s.path) in building_rocm]
        if building_rocm and not matching:
            # A script or Makefile compiling for NVIDIA only (a sample's `build.sh`, a tool's nvcc Makefile, make
            # building no ROCm anywhere in the project), or an example's own nvcc-only CMake project, decides where
            # no build of ROCm names the file.
            matching = [
                (n, s)
                for n, s in self._sources_naming(path)
                if _build_system(s.path) in _STANDALONE_BUILDS or s.standalone
            ]
        if not matching or all(self._vendor_of(s) != "nvidia" for _, s in matching):
            return ""
        most_specific = max(length for length, _ in matching)
        deciding = [s for length, s in matching if length == most_specific]
        if any(self._vendor_of(s) != "nvidia" for s in deciding):
            return ""
        if all(_build_system(s.path) == "cmake" for s in deciding) and self._extension_built_for_rocm(path):
            return ""  # the pip build compiles it for ROCm too, whatever the CMake build does
        first = deciding[0]
        if all(s.unbuilt for s in deciding):
            return f"{self._relative(first.path)}:{first.line}: no build compiles it ({first.unbuilt})"
        return f"{self._relative(first.path)}:{first.line}: the build compiles it for NVIDIA only"

    def _extension_built_for_rocm(self, path: str) -> bool:
        """Whether a setup.py building torch CUDAExtensions from a folder above `path` may compile it on ROCm: it
        computes its sources from globs (`glob(osp.join("csrc", "*.cpp"))`, then `osp.join(extensions_dir, "cuda",
        f"{name}_cuda.cu")` per match), which no source list here can follow, and torch's extension build hipifies
        and compiles every source it gets. A CMake build's NVIDIA-only source lists beside it (`csrc/cuda/*.cu`
        under `if(WITH_CUDA)`, for a libtorch install) do not speak for that build."""
        for folder in self.build_facts.extension_folders:
            if not path.startswith(folder + os.sep):
                continue
            own = [s for s in self.build_facts.sources if os.path.dirname(s.path) == folder and s.path.endswith(".py")]
            if own and all("*" in s.pattern for s in own):
                return True
        return False

    def _beside_its_hip_twin(self, path: str) -> str:
        """Evidence that ROCm compiles a hand-written HIP twin of a CUDA source instead of it: no build names, globs
        or spells the source (`_spelled_by_a_build`), nothing hipifies it, and beside it sits a HIP source (one
        including the HIP runtime outside vendor branches) named the same with its CUDA word made HIP's
        (`check_cuda_device.cu` and `check_hip_device.cpp`) or with the `.hip` suffix (`k.cu` and `k.hip`): a
        stand-alone program ported by hand, each vendor's copy compiled by hand with that vendor's compiler. ""
        otherwise."""
        if is_header(path) or self._hipify_evidence(path) or self.build_facts.torch_extension:
            return ""
        twin = self._hip_source_twin(path)
        if not twin or self._sources_naming(path) or self._spelled_by_a_build(path):
            return ""
        return f"{self._relative(twin)}: ROCm compiles its HIP twin beside it, and no build names this file"

    def _beside_its_vendor_twin(self, path: str, visiting: frozenset[str]) -> str:
        """Evidence that ROCm compiles a hand-written ROCm twin of a file nothing includes (a source, or a header no
        resolved `#include` names) instead of it: its path with an NVIDIA word of its name or of one of its folders
        said the ROCm way names a project file or a folder holding files (`_vendor_twin`: `backends/cuda/backend.h`
        and `backends/hip/backend.h`, `statevec_nvgpu_kernels.cuh` and `statevec_amdgpu_kernels.hpp`, `config/cublas.cc` and
        `config/rocblas.cc`, `cuda_kernels/` beside `hip_kernels/`), nothing in it is written for ROCm
        (`_written_for_rocm_too`), nothing hipifies it, no build that builds ROCm names it (`_named_by_a_rocm_build`), and no
        `#include` the graph leaves unresolved names it from a file ROCm may compile, unless the twin has its very
        name (ROCm's include path then finds the twin), in a project whose build has a ROCm path. "" otherwise."""
        if not self.rocm_build_path or self._hipify_evidence(path) or self.build_facts.torch_extension:
            return ""  # without a ROCm build, the NVIDIA copy is what a port starts from
        if self._written_for_rocm_too(path):
            return ""
        twin = self._vendor_twin(path)
        if not twin or self._named_by_a_rocm_build(path):
            return ""
        name = os.path.basename(path)
        by_name = self._unresolved_by_name.get(name, [])
        if (
            by_name
            and os.path.basename(twin) != name
            and not self._first_of_includers_rocm_never_compiles(by_name, visiting)
        ):
            return ""  # a file ROCm may compile includes one of its name, which only it may be
        return f"{self._relative(twin)} is its ROCm twin, and no file ROCm compiles includes it"

    def _written_for_rocm_too(self, path: str) -> bool:
        """Whether the file shows it is compiled on ROCm as well: it includes the HIP runtime (or a header that does)
        outside vendor branches, tells the vendors apart (`#ifdef __HIP_PLATFORM_AMD__`, a project vendor macro's
        arms), tests HIP-Clang's macros or has AMD's own code; a file too large for the model is taken as one."""
        facts = self.files.get(path)
        if facts is None:
            return True
        rocm_tests = self._macros.rocm | _HIP_COMPILER_TESTS
        return bool(
            facts.hip_runtime
            or facts.rocm_compiled_under
            or facts.arm_votes
            or not facts.tested.isdisjoint(rocm_tests)
            or self._has_own_amd_evidence(path)
            or self._hip_source(path)
        )

    def _vendor_twin(self, path: str) -> str:
        """The project file or folder hand-written for ROCm in place of the file at `path` (rocmlint/cuda/
        vendor_twins.py), "" when there is none: the file's name before its first dot said the ROCm way in its own
        folder (`nvmon.c`, `rocmon.c`), or one of its folders below the root said so with the file's own name or
        its name said so (`cuda/cuda_fft.h`, `hip/hip_fft.h`), else that folder when it holds project files."""
        folders = self._relative(path).split(os.sep)[:-1]
        folder, name = os.path.split(path)
        if any(says_rocm(part) for part in (*folders, name)):
            return ""  # the ROCm side itself (`hip/cuda_compat.h`)
        stem = name.split(".")[0]
        stems = [stem, *rocm_names(stem)]
        for rocm_stem in stems[1:]:
            twin = next((p for p in self._by_stem.get((folder, rocm_stem.lower()), ()) if p != path), "")
            if twin:
                return twin
        for index, part in enumerate(folders):
            for rocm_part in rocm_names(part):
                # Compared in lower case: `GPU/CUDA/` beside `GPU/ROCm/`.
                twin_folder = self._folders_by_lower.get(
                    os.path.join(str(self.root), *folders[:index], rocm_part).lower()
                )
                if twin_folder is None:
                    continue
                beside = os.path.join(twin_folder, *folders[index + 1 :])
                twin = next((p for s in stems for p in self._by_stem.get((beside, s.lower()), ())), "")
                return twin or twin_folder
        return ""

    @cached_property
    def _folders_by_lower(self) -> dict[str, str]:
        """Every folder holding a project file (`_populated_folders`) by its path in lower case."""
        return {folder.lower(): folder for folder in sorted(self._populated_folders)}

    @cached_property
    def _unresolved_by_name(self) -> dict[str, list[tuple[str, IncludeFact]]]:
        """File name -> (includer, include) of each `#include` naming a file so named that the graph leaves
        unresolved (`#include <nvmon_cupti.h>` found through an `-I` the model does not read)."""
        found: dict[str, list[tuple[str, IncludeFact]]] = {}
        for includer, facts in self.files.items():
            for include in facts.includes:
                if self.resolve(includer, include.header, include.system) is None:
                    found.setdefault(os.path.basename(include.header), []).append((includer, include))
        return found

    def _hip_source_twin(self, path: str) -> str:
        """The HIP source beside `path` named as its twin (see `_beside_its_hip_twin`), "" when there is none: stricter
        than `_hip_twin` (the same folder, and a source including HIP's runtime), for it decides that no build
        compiles the file at all."""
        folder, name = os.path.split(path)
        stem, suffix = os.path.splitext(name)
        hip_stem = _said_as(stem, "hip")
        for other in self._by_folder.get(folder, ()):
            other_stem, other_suffix = os.path.splitext(os.path.basename(other))
            renamed = hip_stem != stem and other_stem == hip_stem
            resuffixed = suffix == ".cu" and other_suffix == ".hip" and other_stem == stem
            if (renamed or resuffixed) and not is_header(other) and self._hip_source(other):
                return other
        return ""

    @cached_property
    def _hipified_folders(self) -> frozenset[str]:
        """Folders whose sources the ROCm build compiles as hipify's copies: `X/cuda/` beside an `X/hip/` whose own
        CMake file globs for ROCm sources that match no file of the tree (hipify writes them there at build time,
        PyTorch's `c10/hip/`); a folder a build's own hipify step rewrites (`BuildFacts.hipify_folders`)."""
        own = {os.path.abspath(folder) for folder, _ in self.build_facts.hipify_folders}
        globs: dict[str, list[re.Pattern[str]]] = {}  # a ROCm glob's fixed folder -> its patterns
        for sources in self.build_facts.sources:
            if sources.removed or "*" not in sources.pattern or self._vendor_of(sources) != "rocm":
                continue
            named = _named_path(sources)
            if not named.startswith(os.path.dirname(os.path.abspath(sources.path)) + os.sep) or named.endswith("/**"):
                continue  # only the globs a CMake file of the ROCm folder makes of its own files
            globs.setdefault(os.path.dirname(named.split("*")[0]), []).append(_pattern(named))
        found: set[str] = set()
        for folder, patterns in globs.items():
            parent, name = os.path.split(folder)
            twin = os.path.join(parent, _CUDA_TWIN.get(name, ""))
            if twin == os.path.join(parent, "") or twin not in self._by_folder:
                continue
            if not any(p.fullmatch(path) for path in self.files if path.startswith(folder + os.sep) for p in patterns):
                found.add(twin)
        return frozenset(found | own)

    def _hip_compiled(self, path: str) -> str:
        """Why the ROCm build compiles the file at `path` as written with HIP-Clang, "" when it may not: a `.hip`
        source, or any file of a project whose CMake build compiles the HIP language (`enable_language(HIP)`, a
        `LANGUAGE HIP` source property) and which nothing hipifies (no torch extension, hipify run or hipified
        folder): HIP-Clang defines `__HIPCC__`, never `__CUDACC__`, so its `#ifdef __CUDACC__` arms are NVIDIA's."""
        build = self.build_facts
        if self._hipify_evidence(path) or build.torch_extension or build.extension_folders or self._hipified_folders:
            return ""
        if path.endswith(".hip"):
            return f"{self._relative(path)} is a HIP source"
        return "a CMake file builds the HIP language, and no build step hipifies" if build.hip_language else ""

    def _hipify_evidence(self, path: str) -> str:
        """Why the ROCm build hipifies the file at `path`: the build hipifies the whole tree (torch extensions), or
        the folder holding it (`BuildFacts.hipify_folders`); "" when it compiles the file as written."""
        if self.build_facts.hipify:
            return self.build_facts.hipify
        return next(
            (why for f, why in self.build_facts.hipify_folders if path.startswith(os.path.abspath(f) + os.sep)), ""
        )

    def _vendor_of(self, sources: SourceSet, depth: int = 0) -> str | None:
        """The vendor a source set is built for: its own, else that of the `add_subdirectory` that brings its CMake
        file's folder into the build (`cuda/CMakeLists.txt` lists its files whatever the vendor, but the top
        file adds `cuda/` inside `if(BUILD_CUDA)`). A ROCm arm of a CMake file only NVIDIA builds reads is
        NVIDIA's (`if(ENABLE_HIP)` in a folder the top file adds under an option the HIP build leaves off). Sources
        no build compiles (`SourceSet.unbuilt`) are NVIDIA's too: what matters is that ROCm does not compile them."""
        if sources.unbuilt:
            return "nvidia"
        if sources.vendor == "nvidia" or not sources.path.endswith(("CMakeLists.txt", ".cmake")) or depth > 16:
            return sources.vendor
        if sources in self._set_vendors:
            return self._set_vendors[sources]
        inherited = self._inherited_vendor(sources, depth)
        self._set_vendors[sources] = "nvidia" if inherited == "nvidia" else sources.vendor or inherited
        return self._set_vendors[sources]

    def _inherited_vendor(self, sources: SourceSet, depth: int) -> str | None:
        folder = os.path.dirname(os.path.abspath(sources.path))
        adding = [
            (length, s)
            for length, s in self._sources_naming(os.path.join(folder, "CMakeLists.txt"))
            if s is not sources
        ]
        if not adding:
            return None
        most_specific = max(length for length, _ in adding)
        vendors = {self._vendor_of(s, depth + 1) for length, s in adding if length == most_specific}
        return vendors.pop() if len(vendors) == 1 else None

    def _sources_naming(self, path: str) -> list[tuple[int, SourceSet]]:
        """(specificity: the length of the named path before any wildcard, set) of every source set naming `path`."""
        exact, folders, globs = self._source_index
        found = [(len(path), s) for s in exact.get(path, ())]
        folder = os.path.dirname(path)
        while True:
            found += [(len(folder), s) for s in folders.get(folder, ())]
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        found += [
            (len(path) if prefix < 0 else prefix, s)
            for fixed, pattern, prefix, s in globs
            if path.startswith(fixed) and pattern.fullmatch(path)
        ]
        return found

    @cached_property
    def _source_index(
        self,
    ) -> tuple[
        dict[str, list[SourceSet]], dict[str, list[SourceSet]], list[tuple[str, re.Pattern[str], int, SourceSet]]
    ]:
        """The build's source sets by absolute path: exact files, whole folders (`dir/**`), other globs (each with the
        text before its first wildcard, which every path it matches starts with: a cheaper test than the pattern)."""
        exact: dict[str, list[SourceSet]] = {}
        folders: dict[str, list[SourceSet]] = {}
        globs: list[tuple[str, re.Pattern[str], int, SourceSet]] = []
        for sources in self.build_facts.sources:
            if sources.removed:
                continue
            named = _named_path(sources)
            if "*" not in named:
                exact.setdefault(named, []).append(sources)
            elif named.endswith(os.sep + "**") and "*" not in named[:-3]:
                folders.setdefault(named[:-3], []).append(sources)
            else:
                # A file named under an unknown folder names it as exactly as a full path would; a glob under one
                # (a `.cmake` module's `src/cuda/*.cc`) as specifically as if the folder were the project root.
                anywhere = sources.pattern.startswith(ANYWHERE)
                exact_file = anywhere and "*" not in sources.pattern[len(ANYWHERE) :]
                fixed = len(str(self.root)) + 1 + len(sources.pattern[len(ANYWHERE) :].split("*")[0])
                prefix = -1 if exact_file else fixed if anywhere else len(named.split("*")[0])
                globs.append((named.split("*")[0], _pattern(named), prefix, sources))
        return exact, folders, globs

    def _removed_for_rocm(self, path: str) -> SourceSet | None:
        """The `list(REMOVE_ITEM ...)` of a ROCm branch that takes `path` out of the lists naming it: every other
        list that names it is one the ROCm build removes it from, or NVIDIA's (a ROCm branch that moves a file
        from one list to another, `VLLM_ROCM_EXT_SRC` to `VLLM_SKINNY_SRC`, still compiles it)."""
        removals = [s for s in self._removed_sources.get(path, ()) if self._vendor_of(s) == "rocm"]
        if not removals:
            return None
        emptied = {s.variable for s in removals}
        naming = self._source_index[0].get(path, ())
        if any(s.variable not in emptied and self._vendor_of(s) != "nvidia" for s in naming):
            return None
        return removals[0]

    @cached_property
    def _removed_sources(self) -> dict[str, list[SourceSet]]:
        """The sets that take files out of a build's source list (`list(REMOVE_ITEM ...)`), by absolute path: in
        a ROCm branch (`elseif(WITH_HIP)`), the ROCm build never compiles those files."""
        removed: dict[str, list[SourceSet]] = {}
        for sources in self.build_facts.sources:
            if sources.removed and "*" not in sources.pattern:
                removed.setdefault(_named_path(sources), []).append(sources)
        return removed

    def _includers_closures(self, path: str) -> list[str]:
        """The files that include `path` and everything they include: a header's code is compiled after what its
        includers included before it (`compat.cuh` remapping `__stwb` for the `cache.cuh` a kernel includes
        next)."""
        found: list[str] = []
        for includer in self._includer_files(path):
            found += [includer, *self._closure(includer)]
        return found

    def _includer_files(self, path: str) -> list[str]:
        return [includer for includer, _ in self._includers.get(path, [])]

    def _rocm_native(self, path: str) -> str:
        if self.builds_hip_only():
            return "the project's build compiles HIP only"
        why = self._own_amd_evidence(path)
        if why:
            return why
        facts = self.files.get(path)
        if facts is not None and facts.amd_targets_only:
            return "the file's #ifs test AMD targets (__gfx*__, __GFX*__, the wave size) and never the vendor"
        # A header only AMD targets compile makes its includers AMD-only too (one whose #ifs merely test AMD
        # targets may still compile with nvcc: its arms drop out there).
        header = self._ungated_closure_find(path, self._has_own_amd_evidence)
        return f"it includes {self._relative(header)}, written for AMD, outside any vendor branch" if header else ""

    def _own_amd_evidence(self, path: str) -> str:
        """Why the file's own text or name shows code only AMD targets compile, "" when it does not (asked for every
        header of every file's include closure: remembered)."""
        if path in self._amd_evidence:
            return self._amd_evidence[path]
        facts = self.files.get(path)
        why = ""
        if facts is not None and facts.amd_builtins:
            why = "the file calls __builtin_amdgcn_* or defines a 64-lane warp size outside any vendor branch"
        elif facts is not None and (target := _AMD_TARGET_IN_PATH.search(self._relative(path))) is not None:
            why = f"its path names the AMD target {target.group(1)}"
        self._amd_evidence[path] = why
        return why

    def _hip_source(self, path: str) -> str:
        """Why the file is HIP code, compiled by hipcc only (it or a header it includes outside vendor branches
        includes the HIP runtime there too), "" when it is not. Ported CUDA code may be HIP code too."""
        found = self._ungated_closure_find(path, self._includes_hip_runtime)
        if not found or found == path:
            return "the file includes the HIP runtime outside any vendor branch" if found else ""
        return f"it includes {self._relative(found)}, which includes the HIP runtime, outside any vendor branch"

    def _has_own_amd_evidence(self, path: str) -> bool:
        return bool(self._own_amd_evidence(path))

    def _includes_hip_runtime(self, path: str) -> bool:
        return self.files[path].hip_runtime

    def _ungated_closure_find(self, path: str, wanted: Callable[[str], bool]) -> str:
        """The first of `path` and the project headers it includes outside vendor branches (transitively) that is
        `wanted`, "" when none is: a header included so is compiled wherever the file is."""
        if path not in self._ungated_includers_of(wanted):
            return ""  # no search: most files reach no such header
        reached = self._includes_from(path, lambda include: include.branch == EVERYWHERE)
        return next((current for current in reached if wanted(current)), "")

    def _ungated_includers_of(self, wanted: Callable[[str], bool]) -> frozenset[str]:
        """The project files that are `wanted` or include one outside vendor branches, transitively: found once per
        question, backwards from the wanted files, instead of searching every file's include closure (PyTorch's
        headers reach hundreds of others)."""
        known = self._ungated_includers.get(wanted)
        if known is not None:
            return known
        found = {path for path in self.files if wanted(path)}
        pending = list(found)
        while pending:
            for includer, include in self._includers.get(pending.pop(), ()):
                if include.branch == EVERYWHERE and includer not in found:
                    found.add(includer)
                    pending.append(includer)
        self._ungated_includers[wanted] = known = frozenset(found)
        return known

    def _relative_evidence(self, evidence: str) -> str:
        path, colon, rest = evidence.partition(":")
        return f"{self._relative(path)}{colon}{rest}" if colon else evidence

    def _relative(self, path: str) -> str:
        # Remembered: `includes_through` names the file of every `#include` in a header's closure (PyTorch's ROC206
        # asks 140,000 times, of a few thousand files), and `relpath` is pure Python.
        relative = self._relatives.get(path)
        if relative is None:
            try:
                relative = os.path.relpath(path, self.root)
            except ValueError:
                relative = path
            self._relatives[path] = relative
        return relative

    # --- queries for `rocmlint project` and the report (read-only, over the whole project) ---------------------
    def builds_hip_only(self) -> bool:
        """The build compiles the HIP language and neither CUDA nor torch extensions: a ROCm-native project."""
        build = self.build_facts
        return build.hip_language and not build.cuda_language and not build.torch_extension

    def _hipify_ported(self, path: str) -> str:
        """Evidence that the ROCm build already compiles `path` through the build's hipify ("" otherwise): the build
        hipifies the file and has a ROCm path (`rocm_build_path`), and nothing shows the port left the file to NVIDIA
        (`_left_to_nvidia`: a hand-written HIP twin). A file the build compiles for NVIDIA only is gated away before
        this is asked; any other file hipify reaches, ROCm compiles as hipify rewrites it."""
        if not self._hipify_evidence(path) or not self.rocm_build_path or self._left_to_nvidia(path):
            return ""
        return f"{self.rocm_build_path}; no HIP twin shows the port left it to NVIDIA"

    def _left_to_nvidia(self, path: str) -> str:
        """Why the ROCm port left the file at `path` to NVIDIA, "" when nothing shows it did: the ROCm build does not
        compile it (`_base`: built for NVIDIA only), it has a hand-written HIP twin (`_hip_twin`), no source list of
        the ROCm build names it (`_listed_for_rocm`) and no build step hipifies its folder, or it is a header
        and every file including it was left so (remembered; a header on an include cycle counts as not left while its
        own answer is being found)."""
        if path in self._left:
            return self._left[path]
        self._left[path] = ""
        base, why = self._base(path, frozenset())
        if base.on_rocm is not False and not self._listed_for_rocm(path) and not self._hipified_by_its_build(path):
            why = self._hip_twin_evidence(path)
        includers = self._includer_files(path)
        if not why and includers and all(self._left_to_nvidia(i) for i in includers):
            why = f"every file including it is left to NVIDIA ({self._relative(includers[0])}: {self._left[includers[0]]})"
        self._left[path] = why
        return why

    def _hipified_by_its_build(self, path: str) -> bool:
        """Whether a step of the build hipifies the folder holding `path` (`BuildFacts.hipify_folders`: a Makefile rule
        writing `hip/%.hip.cc` from `cuda/%.cu` with hipify-perl): a HIP copy of the file in the tree is what that
        step wrote and the project committed, not a hand-written twin; ROCm compiles the file as hipify rewrites it."""
        return any(path.startswith(os.path.abspath(folder) + os.sep) for folder, _ in self.build_facts.hipify_folders)

    def _listed_for_rocm(self, path: str) -> bool:
        """Whether a source list of a build system that builds ROCm names the file itself, for ROCm or whatever the
        vendor: the ROCm build compiles it, whatever ROCm-only file sits beside it (`csrc/rocm/torch_bindings.cpp`
        binding a ROCm-only module next to the `csrc/torch_bindings.cpp` both builds compile)."""
        building = self._systems_building_rocm
        return any(
            length == len(path)
            and not s.removed
            and _build_system(s.path) in building
            and self._vendor_of(s) != "nvidia"
            for length, s in self._sources_naming(path)
        )

    def _named_by_a_rocm_build(self, path: str) -> bool:
        """Whether a source list or glob of a build system that builds ROCm names the file, for ROCm or whatever the
        vendor, in a build file that is no NVIDIA twin of another (`_build_file_with_rocm_twin`): the ROCm build
        may compile it."""
        building = self._systems_building_rocm
        return any(
            not s.removed
            and _build_system(s.path) in building
            and self._vendor_of(s) != "nvidia"
            and not self._build_file_with_rocm_twin(s.path)
            for _, s in self._sources_naming(path)
        )

    def _build_file_with_rocm_twin(self, path: str) -> bool:
        """Whether the build file at `path` is NVIDIA's half of a pair: its name said the ROCm way names a build file
        beside it (`Makefile.cuda` beside `Makefile.hip`, `cuda.mk` beside `hip.mk`). Not a build file of a folder
        with a ROCm twin (`src/cuda/Makefile.mk` beside `src/hip/`): a build may include that one for every vendor."""
        if path not in self._build_twins:
            folder, name = os.path.split(os.path.abspath(path))
            self._build_twins[path] = any(os.path.isfile(os.path.join(folder, rocm)) for rocm in rocm_names(name))
        return self._build_twins[path]

    def _hip_twin_evidence(self, path: str) -> str:
        """Why the file at `path` has a hand-written HIP twin ("" when it has none): a twin file (`_hip_twin`), or a
        twin of a folder holding it (`_rocm_folder_twins`: `attention/cuda/fmha/`, `attention/hip_fmha/`, a CUTLASS
        kernel folder and its CK rewrite)."""
        twin = self._hip_twin(path)
        if twin:
            return f"{self._relative(twin)} is its HIP twin"
        folder = next((f for f in _rocm_folder_twins(os.path.dirname(path)) if f in self._populated_folders), "")
        return f"{self._relative(folder)}/ is the HIP twin of its folder" if folder else ""

    @cached_property
    def _populated_folders(self) -> frozenset[str]:
        """Every folder holding a project file, directly or in a folder under it."""
        found: set[str] = set()
        for folder in self._by_folder:
            while folder not in found and folder != os.path.dirname(folder):
                found.add(folder)
                folder = os.path.dirname(folder)
        return frozenset(found)

    def _hip_twin(self, path: str) -> str:
        """The project file hand-written for ROCm in place of the CUDA file at `path`, "" when there is none: a `.hip`
        file of the same name beside it (`k.cu`, `k.hip`), or a file whose folder or name says hip or rocm where the
        CUDA file's says cuda (`cuda/k.cu`, `hip/k.cpp`; `k_cuda.cu`, `k_hip.cpp`), or adds it (`k.cu`, `hip/k.cpp`,
        `k_hip.cpp`). Copies hipify writes at build time (`_hipified_folders`) are not in the tree."""
        folder, name = os.path.split(path)
        stem = name.split(".")[0]
        twin_stems = _rocm_stems(stem)
        for twin_folder in _rocm_folder_names(folder):
            for twin_stem in twin_stems if twin_folder == folder else (stem.lower(), *twin_stems):
                twin = next((p for p in self._by_stem.get((twin_folder, twin_stem), ()) if p != path), "")
                if twin:
                    return twin
        same_name = self._by_stem.get((folder, stem.lower()), ())
        return next((p for p in same_name if ".hip" in os.path.basename(p).lower() and p != path), "")

    @cached_property
    def _cuda_twins(self) -> dict[tuple[str, str], list[str]]:
        """(folder, name before its first dot, lower case) of each project file hand-written for ROCm in place of a
        CUDA file (`_hip_twin`: `hip/util.cpp` for `cuda/util.h`) -> the CUDA files of that folder and name (`util.h`,
        `util.cpp`); not those a build hipifies (its CUDA-isms are then renamed, not rewritten)."""
        found: dict[tuple[str, str], list[str]] = {}
        for path in sorted(self.files):
            twin = self._hip_twin(path)
            if twin and not self._hipify_evidence(twin):
                folder, name = os.path.split(twin)
                found.setdefault((folder, name.split(".")[0].lower()), []).append(path)
        return found

    def _apart_from_cuda_twin(self, path: str, code: str) -> str:
        """See `FileView.apart_from_cuda_twin`: no CUDA file the file stands in for spells `code` (spaces and the case
        of `cuda`/`hip` aside)."""
        folder, name = os.path.split(path)
        twins = self._cuda_twins.get((folder, name.split(".")[0].lower()), [])
        if not twins:
            return ""
        for _, data in self._reading(twins):
            if data is None or _compact(code) in _compact(data.decode("utf-8", "replace")):
                return ""
        shown = ", ".join(self._relative(twin) for twin in sorted(twins))
        return f"the file is the HIP twin of {shown}, which spells no `{' '.join(code.split())}`"

    def _hip_twin_beside(self, path: str) -> str:
        """See `FileView.hip_twin_beside`: the header's HIP twin (`_hip_twin`) tests HIP-Clang's compiler macros, and
        each file including the header includes the twin too: `#ifdef __CUDACC__` there is the NVIDIA half of a pair
        whose ROCm half the twin's `#ifdef __HIPCC__` arms are."""
        twin = self._hip_twin(path)
        if not twin or not is_header(path) or not is_header(twin) or twin not in self.files:
            return ""
        if self.files[twin].tested.isdisjoint(_HIP_COMPILER_TESTS):
            return ""
        includers = {includer for includer, _ in self._includers.get(path, [])}
        if not includers or any(twin not in {target for target, _ in self._edges.get(i, [])} for i in includers):
            return ""
        return f"{self._relative(twin)}, its HIP twin testing HIP-Clang's macros, is included wherever it is"

    @cached_property
    def _by_stem(self) -> dict[tuple[str, str], list[str]]:
        """(folder, file name before its first dot, lower case) -> the project files so named: `_hip_twin`'s index."""
        found: dict[tuple[str, str], list[str]] = {}
        for path in self.files:
            folder, name = os.path.split(path)
            found.setdefault((folder, name.split(".")[0].lower()), []).append(path)
        return found

    @cached_property
    def rocm_build_path(self) -> str:
        """Evidence that the project's build already has a ROCm path ("path:line: why"), "" when it has none: a
        build file defines a macro or lists sources for ROCm only, runs Python build steps only for ROCm (`elif
        ROCM_VERSION: version += "+rocm"`), branches for ROCm (a Bazel `select()`) or builds the HIP language.
        Hipify alone is none: torch's `CUDAExtension` hipifies a project that was never built for ROCm too."""
        build = self.build_facts
        # A Python build file's ROCm arms speak for it (`rocm_arms`): its vendor of an arm also reads the `else` of an
        # NVIDIA test (`if CUDA_HOME is None:`) as ROCm's, which before a port is the CPU build.
        define = next((d for d in build.defines if d.vendor == "rocm" and _build_system(d.path) != "python"), None)
        if define is not None:
            return f"{self._relative(define.path)}:{define.line}: the ROCm build defines {define.name}"
        listed = next((s for s in build.sources if s.vendor == "rocm" and _build_system(s.path) != "python"), None)
        if listed is not None:
            doing = "removes" if listed.removed else "compiles"
            return f"{self._relative(listed.path)}:{listed.line}: the ROCm build {doing} {listed.pattern}"
        if build.rocm_arms:
            return self._relative_evidence(build.rocm_arms[0])
        if build.rocm_branches:
            return f"{self._relative(build.rocm_branches[0])}: the build branches for ROCm"
        return "a CMake file builds the HIP language" if build.hip_language else ""

    def header_constants(self) -> Iterator[tuple[str, Definition, str]]:
        """(path, definition, "macro" or "constant") of each object-like macro and integer constant with a value
        that a header (a file some project file includes, and ROCm compiles) defines where ROCm compiles: what
        views offer as `defines` and `constants`."""
        for path in sorted(self._includers):
            if self._base(path, frozenset())[0].on_rocm is False:
                continue  # a header ROCm never compiles
            facts = self.files[path]
            for kind, definitions in (("macro", facts.defines), ("constant", facts.constants)):
                for definition in definitions:
                    if definition.value and definition.branch.on_rocm is not False:
                        yield path, definition, kind

    def rocm_remaps(self) -> dict[str, tuple[str, int | None]]:
        """The names the project defines only for ROCm (what views offer as `aliases`, over every file) and nowhere
        NVIDIA compiles -> ("path:line" of the first, parameter count). Neither a name with one value per vendor
        (`#if HIP #define WARP 64 #else #define WARP 32`) nor a learned vendor macro (a flag, not a spelling of a
        CUDA name) is one."""
        on_nvidia = {
            d.name for f in self.files.values() for d in (*f.defines, *f.types) if d.branch.on_nvidia is not False
        }
        return {
            name: (found[0][1], found[0][2])
            for name, found in sorted(self._values["remaps"].items())
            if name not in on_nvidia and name not in self.learned
        }

    def nvidia_only_files(self) -> dict[str, str]:
        """Files the ROCm build never compiles (included only from NVIDIA-only branches, or built for NVIDIA only)
        -> the evidence."""
        found: dict[str, str] = {}
        for path in sorted(self.files):
            base, evidence = self._base(path, frozenset())
            if base.on_rocm is False:
                found[path] = evidence
        return found

    @property
    def written_for_amd(self) -> str:
        """Why the project's own native code is written for AMD GPUs, "" when it is not: its build compiles HIP only,
        or files of it are written for AMD (`FileView.rocm_native`) outside vendor branches while the build defines
        nothing for NVIDIA only, no file is NVIDIA-only and no macro is learned as NVIDIA's. A project with any
        NVIDIA side (a CUB backend, `#ifdef USE_CUDA`, a CUDA-only kernel folder) is mixed, one whose AMD code is
        only the ROCm side of a vendor split (a compat header included under `USE_ROCM`) is ported CUDA, and one
        without AMD code is CUDA code to port."""
        return self._amd_verdict[0]

    @property
    def written_for_amd_evidence(self) -> tuple[str, ...]:
        """The files `written_for_amd` was decided from: the build files and the AMD file it names."""
        return self._amd_verdict[1]

    @cached_property
    def _amd_verdict(self) -> AmdVerdict:
        settled = build_verdict(self.build_facts, bool(self.files), self.root)
        if settled is not None:
            return settled
        build_files = self.build_facts.files
        if any(learned.vendor == "nvidia" for learned in self.learned.values()):
            return "", build_files
        if any(_nvidia_only(self._base(path, frozenset())[0]) for path in self.files):
            return "", build_files
        amd = next((path for path in sorted(self.files) if self._amd_code_everywhere(path)), None)
        if amd is None:
            return ("", build_files) if self._has_cuda_code() else _declared_verdict(self.root, build_files)
        why = (
            f"its C/C++ code is written for AMD ({self._relative(amd)}: {self._rocm_native(amd)}) and none is NVIDIA's"
        )
        return why, (*build_files, amd)

    def _has_cuda_code(self) -> bool:
        """Whether the project has CUDA code to port: a build compiling CUDA (nvcc, a torch `CUDAExtension`), a CUDA
        source or header, or a file including a header of the CUDA toolkit. Host C/C++ with none of these (an
        `LD_PRELOAD` shim) is written for no GPU vendor."""
        if self.build_facts.cuda_language or self.build_facts.torch_extension:
            return True
        if any(path.endswith((".cu", ".cuh", ".hu")) for path in self.files):
            return True
        return any(
            is_cuda_toolkit_header(include.header) for facts in self.files.values() for include in facts.includes
        )

    def _amd_code_everywhere(self, path: str) -> bool:
        """A file written for AMD that the project compiles outside vendor branches: a `hip_compat.cuh` included only
        under `#if defined(USE_ROCM)` is the ROCm side of a vendor split, which CUDA projects have too."""
        return self._base(path, frozenset())[0].on_nvidia is not False and bool(self._rocm_native(path))

    def rocm_native_files(self) -> dict[str, str]:
        """Files written for AMD -> why (see `FileView.rocm_native`)."""
        return {path: why for path in sorted(self.files) if (why := self._rocm_native(path))}


# --- reading the tree ---------------------------------------------------------------------------------------------


class _Tree(NamedTuple):
    texts: dict[str, str]  # C/C++ file -> text (none when read without them)
    build: BuildFacts
    sources: list[str]  # every C/C++ file


# How many times the files testing newly learned macros are read again: each reading may learn the macros defined
# under the last ones (a chain of derived macros is rarely longer than two).
_MAX_READINGS = 4


def _changed_macros(before: Mapping[str, LearnedMacro], after: Mapping[str, LearnedMacro]) -> set[str]:
    """The macros learned, dropped, or learned with another state on either vendor between two readings."""
    return {
        name
        for name in before.keys() | after.keys()
        if (old := before.get(name)) is None
        or (new := after.get(name)) is None
        or (old.vendor, old.on_rocm, old.on_nvidia) != (new.vendor, new.on_rocm, new.on_nvidia)
    }


def _read_tree(root: Path, texts: bool = True) -> _Tree:
    read: dict[str, str] = {}
    # A CMake file's or make file's path until every such file is known (see below).
    build_facts: list[BuildFacts | str] = []
    make_texts: dict[str, str] = {}
    build_files: list[str] = []
    cmake_texts: dict[str, str] = {}
    bazel_texts: dict[str, str] = {}
    sources: list[str] = []  # every C/C++ file, for the globs of Bazel files
    other_build_texts: list[str] = []  # setup.py and make files: a folder they name may be a CMake project they build
    build_texts: dict[str, str] = {}
    configured: frozenset[str] = frozenset()  # what the configure headers `#cmakedefine`
    switches: frozenset[str] = frozenset()  # those of them defined (as nothing) exactly when their option is on
    run_makefiles: list[str] = []  # makefiles the Makefiles run with `$(MAKE) -f FILE`, whatever their name
    modules: list[str] = []  # Python modules, which may build a torch JIT extension of the tree's sources
    mentioned: list[str] = []  # see `BuildFacts.mentioned_names`
    # `configure.ac` and autoconf macro files, which say what automake's conditionals test, by path
    autoconf: dict[str, str] = {}
    for path in _walk(root):
        name = os.path.basename(path)
        suffix = os.path.splitext(name)[1].lower()  # `.H` and `.C` are C++ files too
        if name in _UNREAD_BUILD_FILES or suffix in _UNREAD_BUILD_SUFFIXES:
            mentioned.append("*")  # a build the model does not read may compile any source
        python_build = name == "setup.py" or (
            suffix == ".py" and _BUILD_FOLDER.search(_folder_under(os.path.dirname(path), str(root)))
        )
        makefile = is_makefile(name)
        bazel = is_bazel_file(name)
        if is_autoconf_file(name):
            autoconf[path] = _build_file_text(path) or ""
            continue
        if name.endswith(_CONFIGURE_HEADER_SUFFIXES):
            header = _build_file_text(path) or ""
            configured |= configure_header_macros(header)
            switches |= configure_header_switches(header)
            build_files.append(path)
            continue
        is_build = bool(python_build) or makefile or bazel or name == "CMakeLists.txt" or suffix == ".cmake"
        if suffix == ".py" and not is_build:
            modules.append(path)
            continue
        if is_build_script(name):
            script = _build_script(path)
            if script is not None:
                build_files.append(path)
                build_facts.append(script)
            continue
        if is_cargo_build_script(name):
            cargo = _build_file_text(path)
            if cargo is not None:
                build_files.append(path)
                build_facts.append(cargo_build_facts(path, cargo))
            continue
        if suffix not in SOURCE_SUFFIXES and not is_build:
            continue
        if not is_build:
            sources.append(path)
            if not texts:
                continue
        try:
            if os.path.getsize(path) > _MAX_FILE_BYTES:
                continue
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        text = data.decode("utf-8", "replace")
        if is_build:
            build_files.append(path)
            build_texts[path] = text
        if python_build:
            # The sources it names by a quoted name it may compile wherever they are (`"../csrc/k.cu"`).
            mentioned += mentioned_source_names(" ".join(q.decode("utf-8", "replace") for q in quoted_sources(data)))
            build_facts.append(setup_py_facts(path, text, str(root)))
            other_build_texts.append(text)
        elif makefile:
            make_texts[path] = text
            build_facts.append(path)
            other_build_texts.append(text)
            run_makefiles.extend(makefiles_run(path, text))
        elif bazel:
            bazel_texts[path] = text
        elif is_build:
            cmake_texts[path] = text
            build_facts.append(path)
        else:
            read[path] = text.removeprefix("\ufeff")  # every file: one without directives is still included
            commented = own_compile_command(path, text) if b"nvcc" in data else None
            if commented is not None:
                build_facts.append(commented)
    # A JIT build compiles C/C++ files of the tree: a tree without any (pure Python) has no module to read for it.
    # A module naming a source may compile it at run time (`KernelBuilder(file="allreduce.cu")`).
    for path in modules if sources else ():
        module = _module_bytes(path)
        if module is None:
            continue
        mentioned += mentioned_source_names(" ".join(q.decode("utf-8", "replace") for q in quoted_sources(module)))
        jit = _jit_extension(path, module)
        if jit is not None:
            build_files.append(path)
            build_facts.append(jit)
    for path in dict.fromkeys(run_makefiles):
        run_text = _build_file_text(path) if path not in build_files and path.startswith(str(root) + os.sep) else None
        if run_text is not None:
            build_files.append(path)
            build_texts[path] = run_text
            other_build_texts.append(run_text)
            make_texts[path] = run_text
            build_facts.append(path)
    # A vendored library's own CMake build, which the project's build never adds, says nothing of what it compiles.
    unadded = cmake_unadded_projects(str(root), cmake_texts, "\n".join(other_build_texts))
    if unadded:
        cmake_texts = {path: text for path, text in cmake_texts.items() if not _inside(path, unadded)}
        build_facts = [f for f in build_facts if not isinstance(f, str) or f in cmake_texts or f in make_texts]
    as_cuda = {
        path: found
        for path, text in build_texts.items()
        if not _inside(path, unadded) and (found := host_sources_as_cuda(path, text))
    }
    as_cuda_in = {path for path in as_cuda if compiles_only_its_folder(path, build_texts[path], str(root))}
    # A `.cmake` module defines the source-adding functions the `CMakeLists.txt` files call.
    # (and the globbing functions, and the options a HIP build leaves off by default).
    functions = cmake_source_functions(cmake_texts.values())
    filelists = cmake_filelist_functions(
        cmake_texts.values(), {p: t for p, t in bazel_texts.items() if p.endswith(".bzl")}
    )
    globbing = cmake_glob_functions(cmake_texts.values())
    cuda_only = cmake_cuda_only_options(cmake_texts.values())
    off_on_rocm = cmake_switches_off_on_rocm(cmake_texts.values()) | cuda_only
    off_on_rocm |= cmake_dependent_cuda_options(cmake_texts.values(), cuda_only)
    unrun = cmake_unrun(cmake_texts.values())
    unread = cmake_unread_files(str(root), cmake_texts, "\n".join(other_build_texts))
    make_reads = _make_reads_elsewhere(make_texts)
    hip_twins = _with_hip_twin_program(make_texts)
    conditionals = automake_conditional_vendors(autoconf.values(), vendor_of_words)
    fragments = automake_fragments(make_texts, conditionals)
    named_by_vendor = makefiles_named_by_vendor(make_texts)
    merged = [
        f
        if isinstance(f, BuildFacts)
        else makefile_facts(
            f, make_texts[f], str(root), make_reads[f], conditionals, f in hip_twins, named_by_vendor, fragments.get(f)
        )
        if f in make_texts
        else cmake_facts(f, cmake_texts[f], str(root), functions, globbing, off_on_rocm, unrun, configured, filelists)
        for f in build_facts
    ]
    for path, vendor in _modules_read_by_one_vendor(str(root), build_facts, merged).items():
        at = build_facts.index(path)
        merged[at] = cmake_facts(
            path, cmake_texts[path], str(root), functions, globbing, off_on_rocm, unrun, configured, filelists, vendor
        )
    merged = [
        never_read(
            preset_for_its_vendor(f, path),
            f"{os.path.relpath(path, root)}: a CMake file no CMake file the build reads adds or includes",
        )
        if isinstance(path, str) and path in unread
        else f
        for path, f in zip(build_facts, merged, strict=True)
    ]
    if any(os.path.basename(path) in ("BUILD", "BUILD.bazel") for path in bazel_texts):
        merged.append(bazel_facts(str(root), bazel_texts, sources))
    facts = replace(
        _merge(merged),
        files=tuple(build_files),
        unadded_projects=tuple(sorted(unadded.items())),
        host_sources_as_cuda=next((found for path, found in as_cuda.items() if path not in as_cuda_in), ""),
        host_sources_as_cuda_in=tuple(sorted({os.path.dirname(path) for path in as_cuda_in})),
    )
    facts = replace(
        facts,
        mentioned_names=tuple(dict.fromkeys((*facts.mentioned_names, *mentioned))),
        rocm_refused=rocm_refusals(cmake_texts, switches, str(root)),
    )
    requested = config_header_request({p: t for p, t in autoconf.items() if os.path.dirname(p) == str(root)})
    if requested is not None and not any(os.path.exists(root / name) for name in _ROOT_BUILDS_BESIDE_AUTOCONF):
        # Autoconf's build is the project's build (a CMake file below the root is a nested project, an example
        # consuming the installed library): every vendor's compile defines `HAVE_CONFIG_H`, and a test of
        # `!defined(HAVE_CONFIG_H)` is a build without it.
        config_h = (BuildDefine("HAVE_CONFIG_H", None, vendor, *requested) for vendor in ("rocm", "nvidia"))
        facts = replace(facts, defines=(*facts.defines, *config_h))
    return _Tree(read, facts, sources)


def _modules_read_by_one_vendor(
    root: str, paths: Sequence[BuildFacts | str], facts: Sequence[BuildFacts]
) -> dict[str, str]:
    """The `.cmake` modules (among the CMake files `paths`, each with its `facts`) that CMake files read only in
    NVIDIA code (`include(xyz-cutlass)` inside `if(USE_CUTLASS)`, a CUDA switch), with that vendor. A module a
    variable may name (`include(${MODULE})`) may be read anywhere: then none is."""
    cmake = [path for path in paths if isinstance(path, str)]
    index = ModuleIndex(root, [path for path in cmake if path.endswith(".cmake")])
    vendors: dict[str, set[str | None]] = {}
    for use in (use for f in facts for use in f.module_uses):
        read = index.read_by(use.variable, use.pattern, use.path)
        if read is None:
            return {}
        for path in read:
            vendors.setdefault(path, set()).add(use.vendor)
    return {path: "nvidia" for path, found in vendors.items() if found == {"nvidia"}}


def _with_hip_twin_program(make_texts: Mapping[str, str]) -> frozenset[str]:
    """The make files beside whose folder a sibling folder's Makefile runs hipcc alone (`src/hip/Makefile` for
    `src/cuda/Makefile`): a program's build with a ROCm twin program."""
    hip_folders = {os.path.dirname(path) for path, text in make_texts.items() if runs_hipcc_alone(text)}
    return frozenset(
        path
        for path in make_texts
        if any(
            os.path.dirname(folder) == os.path.dirname(os.path.dirname(path)) and folder != os.path.dirname(path)
            for folder in hip_folders
        )
    )


def _make_reads_elsewhere(make_texts: Mapping[str, str]) -> dict[str, frozenset[str]]:
    """Per make file, the variables the project's other make files read: one may hand a list to what it compiles
    whatever the vendor (a fragment's sources, read by the Makefile including it)."""
    reads = {path: variables_read(text) for path, text in make_texts.items()}
    readers = Counter(name for names in reads.values() for name in names)
    return {path: frozenset(n for n, count in readers.items() if count > (n in names)) for path, names in reads.items()}


def _rocm_folder_names(folder: str) -> Iterator[str]:
    """The folder itself and where a hand-written ROCm twin of its files would sit: a `hip/` or `rocm/` folder in it,
    or the folder with one name saying cuda made to say hip or rocm (`ops/cuda/` -> `ops/hip/`, `ops/rocm/`)."""
    yield folder
    yield os.path.join(folder, "hip")
    yield os.path.join(folder, "rocm")
    parts = folder.split(os.sep)
    for index, part in enumerate(parts):
        for twin in _rocm_words(part):
            yield os.sep.join((*parts[:index], twin, *parts[index + 1 :]))


def _rocm_folder_twins(folder: str) -> Iterator[str]:
    """The folders a hand-written ROCm rewrite of `folder` would be: a `cuda/` folder of its path merged into the name
    under it (`ops/cuda/fmha` -> `ops/hip_fmha`, `ops/fmha_hip`). Not `ops/hip/fmha`: that is where hipify writes its
    copies (PyTorch's `ATen/hip/` holds them beside a few hand-written files)."""
    parts = folder.split(os.sep)
    for index, part in enumerate(parts):
        if part.lower() != "cuda" or index + 1 == len(parts):
            continue
        inner = parts[index + 1]
        for word in ("hip", "rocm"):
            for merged in (f"{word}_{inner}", f"{inner}_{word}"):
                yield os.sep.join((*parts[:index], merged, *parts[index + 2 :]))


def _rocm_stems(stem: str) -> list[str]:
    """The names (lower case, before the first dot) a hand-written ROCm twin of a file named `stem` would have."""
    lower = stem.lower()
    return [*(w.lower() for w in _rocm_words(stem)), f"{lower}_hip", f"{lower}_rocm", f"hip_{lower}", f"rocm_{lower}"]


def _rocm_words(name: str) -> list[str]:
    """`name` with its word cuda (any case) said as hip and as rocm (`flash_cuda` -> `flash_hip`, `flash_rocm`),
    [] when it has none."""
    if _CUDA_WORD.search(name) is None:
        return []
    return [_said_as(name, word) for word in ("hip", "rocm")]


def _compact(code: str) -> str:
    """`code` without white space, `cuda` read as `hip`, in lower case: how a twin's copy of a test is looked for."""
    return re.sub(r"\s+", "", code).lower().replace("cuda", "hip")


def _said_as(name: str, word: str) -> str:
    """`name` with its word cuda replaced by `word` in the same case."""
    return _CUDA_WORD.sub(lambda match: _same_case(word, match.group()), name)


def _same_case(word: str, like: str) -> str:
    if like.isupper():
        return word.upper()
    return word.capitalize() if like[0].isupper() else word


def _nvidia_only(branch: Branch) -> bool:
    """Code NVIDIA may compile and ROCm does not (not code no build compiles: a vendored library's own tests)."""
    return branch.on_rocm is False and branch.on_nvidia is not False


def _inside(path: str, folders: Iterable[str]) -> bool:
    return any(path.startswith(folder + os.sep) for folder in folders)


# Build files of build systems the model does not read (Meson, SCons, Buck, premake, xmake, GN, Visual Studio): any
# source may be one they compile.
_UNREAD_BUILD_FILES = frozenset(
    {"meson.build", "SConstruct", "SConscript", "BUCK", "TARGETS", "premake5.lua", "premake4.lua", "xmake.lua"}
)
_UNREAD_BUILD_SUFFIXES = frozenset({".vcxproj", ".gn", ".gyp"})
# Configure header templates CMake's `configure_file` writes the project's `config.h` from.
_CONFIGURE_HEADER_SUFFIXES = (".h.in", ".hh.in", ".hpp.in", ".hxx.in", ".cuh.in")


def _module_bytes(path: str) -> bytes | None:
    try:
        if os.path.getsize(path) > _MAX_FILE_BYTES:
            return None
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _jit_extension(path: str, data: bytes) -> BuildFacts | None:
    """The facts of a Python module (its bytes `data`) that builds a torch extension at run time
    (`cpp_extension.load`), None for any other."""
    if not may_build_jit_extension(path, data):
        return None
    facts = jit_extension_facts(path, data.decode("utf-8", "replace"))
    return facts if facts.hipify_folders else None


def _build_script(path: str) -> BuildFacts | None:
    """What a shell script compiles for NVIDIA only (`build_script_facts`), None when it compiles nothing so."""
    text = _build_file_text(path)
    return build_script_facts(path, text) if text is not None else None


def _build_file_text(path: str) -> str | None:
    """The text of a build file the walk did not read as one (a configure header template, a makefile run with
    `-f`); None when it is missing or too large."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > _MAX_FILE_BYTES:
            return None
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return None


def _folder_under(folder: str, root: str) -> str:
    """`os.path.relpath(folder, root)` for a folder the walk of `root` yielded, which starts with `root`: without the
    two `abspath`s relpath takes for every module of the tree."""
    if folder == root:
        return os.curdir
    prefix = root if root.endswith(os.sep) else root + os.sep
    return folder[len(prefix) :] if folder.startswith(prefix) else os.path.relpath(folder, root)


def _walk(root: Path) -> Iterator[str]:
    count = 0
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(s for s in subfolders if s not in _SKIPPED_FOLDERS and not s.startswith("."))
        for name in sorted(names):
            count += 1
            if count > _MAX_FILES:
                return
            yield os.path.join(folder, name)


# Build systems whose NVIDIA-only source lists decide a file no build of ROCm names: a sample's shell script, a
# tool's own Makefile.
_STANDALONE_BUILDS = frozenset({"script", "make"})


def _build_system(path: str) -> str:
    """Which build system a build file belongs to: "cmake", "python" (setup.py and its helpers), "bazel", "script"
    (a shell script, or a source giving its own compile command), "cargo" (a Rust crate's `build.rs`) or "make"."""
    if path.endswith(("CMakeLists.txt", ".cmake")):
        return "cmake"
    if is_bazel_file(path):
        return "bazel"
    if is_build_script(path) or os.path.splitext(path)[1] in SOURCE_SUFFIXES:
        return "script"  # a source's own commented compile command (`own_compile_command`) is a script of its own
    if is_cargo_build_script(path):
        return "cargo"
    return "python" if path.endswith(".py") else "make"


def _computes_its_folders_sources(path: str) -> bool:
    """A build file that may compute the lists of sources it compiles, from its own folder down: a setup.py, a Bazel
    file (a package's globs are its folder's; a `.bzl` macro globs in the package calling it). A Python build helper
    or a JIT-building module may name sources anywhere."""
    return os.path.basename(path) == "setup.py" or is_bazel_file(path)


def _cmake(sources: SourceSet) -> bool:
    return _build_system(sources.path) == "cmake"


def _named_path(sources: SourceSet) -> str:
    """The absolute path (or glob) a source set names: its pattern relative to its build file's folder, or any
    path ending with what follows `ANYWHERE` when the build file could not resolve its folder."""
    if sources.pattern.startswith(ANYWHERE):
        return os.sep + sources.pattern
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(sources.path)), sources.pattern))


@lru_cache(maxsize=4096)
def _pattern(glob: str) -> re.Pattern[str]:
    parts = re.split(r"(\*\*/|\*\*|\*)", glob.replace(os.sep, "/").removeprefix("./"))
    wildcards = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*"}
    return re.compile("".join(wildcards.get(part, re.escape(part)) for part in parts))


def _gpu_build_macros(
    build: BuildFacts, files: Mapping[str, FileFacts], from_build: Mapping[str, LearnedMacro]
) -> frozenset[str]:
    """The macros the build defines for NVIDIA only (`add_definitions(-DHAVE_CUDA=1)` in `if(CUDA_FOUND)`) in a project
    nothing of which builds or tells apart ROCm yet: no build file defines, lists, branches or runs anything for
    ROCm, builds the HIP language or runs a hipify step of its own (a torch extension's hipify alone is none, as in
    `CudaProject.rocm_build_path`), and no project file tests a ROCm macro, includes the HIP runtime, calls AMD
    builtins or is a `.hip` source. Such a macro is the project's GPU build's, which a port reuses (`-DHAVE_CUDA=1` in
    its HIP build too) or mirrors (`#if defined(USE_CUDA) || defined(USE_ROCM)`): the code under it is code to port,
    not NVIDIA's."""
    nvidia_only = frozenset(name for name, macro in from_build.items() if macro.vendor == "nvidia")
    if not nvidia_only or _builds_rocm(build):
        return frozenset()
    for path, facts in files.items():
        if facts.hip_runtime or facts.amd_builtins or facts.amd_targets_only or path.endswith(".hip"):
            return frozenset()
        if any(vendor_of_macro_name(name) == "rocm" for name in facts.tested):
            return frozenset()
    return nvidia_only


def _builds_rocm(build: BuildFacts) -> bool:
    """Whether a build file does anything for ROCm (see `_gpu_build_macros`). A Python build file's ROCm defines and
    sources are not counted: it reads the `else` of an NVIDIA test (`if CUDA_HOME is None:`) as ROCm's, which before
    a port is the CPU build; its ROCm arms (`rocm_arms`) are."""
    return bool(
        any(d.vendor == "rocm" and _build_system(d.path) != "python" for d in build.defines)
        or any(s.vendor == "rocm" and _build_system(s.path) != "python" for s in build.sources)
        or build.rocm_arms
        or build.rocm_branches
        or build.hip_language
        or build.hipify_tool
        or build.hipify_folders
    )


def _built_for_any_vendor(build: BuildFacts) -> frozenset[str]:
    return frozenset(d.name for d in build.defines if d.vendor is None)


def _merge(facts: list[BuildFacts]) -> BuildFacts:
    return BuildFacts(
        defines=tuple(hip_on_nvidia_as_nvidia(d) for f in facts for d in f.defines),
        sources=tuple(s for f in facts for s in f.sources),
        torch_extension=any(f.torch_extension for f in facts),
        hipify=next((f.hipify for f in facts if f.hipify), ""),
        extension_folders=tuple(folder for f in facts for folder in f.extension_folders),
        rocm_branches=tuple(path for f in facts for path in f.rocm_branches),
        rocm_arms=tuple(arm for f in facts for arm in f.rocm_arms),
        hip_language=any(f.hip_language for f in facts),
        cuda_language=any(f.cuda_language for f in facts),
        include_folders=tuple(folder for f in facts for folder in f.include_folders),
        native_modules=tuple(module for f in facts for module in f.native_modules),
        hipify_folders=tuple(folder for f in facts for folder in f.hipify_folders),
        make_source_lists=tuple(listed for f in facts for listed in f.make_source_lists),
        hipify_tool=next((f.hipify_tool for f in facts if f.hipify_tool), ""),
        mentioned_names=tuple(name for f in facts for name in f.mentioned_names),
    )


def project_root(path: Path, root: Path, *, configured: bool) -> Path:
    """The folder whose files make a file's project, when the file is inside `root`: `root` when a configuration
    file sets it (`configured`) or, as the working directory, it is in a project (it holds a build file, or a
    repository holds it: where a user works). Otherwise the repository holding the file (the closest folder with `.git`), else the outermost
    folder with a build file (setup.py, CMakeLists.txt, pyproject.toml, a Bazel workspace's root file) within MAX_ROOT_LEVELS, else the
    outermost folder with a Makefile compiling sources (a project built by make alone), else the working directory
    when it holds the file, else the file's own folder. A working directory that is no project makes
    none of everything below it: checking `corpora/a` from the folder holding `corpora/b` too must not read b's
    build files as a's."""
    absolute, start = os.path.abspath(path), os.path.abspath(root)
    # Compared as strings (both normalised): `Path.is_relative_to` costs more than the rest, for every file checked.
    inside = absolute == start or absolute.startswith(start.rstrip(os.sep) + os.sep)
    if inside and (configured or _in_project(start)):
        return Path(start)
    repository, outermost = _enclosing_project(Path(absolute).parent)
    if repository is not None:
        return repository
    if outermost is not None:
        return _with_rocm_twin(outermost, start) if inside else outermost
    return Path(start) if inside else Path(absolute).parent


def _with_rocm_twin(project: Path, start: str) -> Path:
    """The folder holding `project` and its ROCm twin when both are build projects of their own side by side below
    the working directory `start` (`bench-cuda/` and `bench-hip/`, each with its CMakeLists.txt): one product built
    per vendor, whose CUDA build only the ROCm twin in view tells apart as NVIDIA's. Else `project`."""
    parent = project.parent
    if str(parent) != start and not str(parent).startswith(start.rstrip(os.sep) + os.sep):
        return project
    twins = (os.path.join(parent, twin) for twin in _rocm_words(project.name))
    return parent if any(_holds_build_file(twin) or _holds_make_build(twin) for twin in twins) else project


@lru_cache(maxsize=1024)
def _enclosing_project(folder: Path) -> tuple[Path | None, Path | None]:
    """The closest folder with `.git` and the outermost folder with a build file, each within MAX_ROOT_LEVELS of
    `folder` (remembered: every file of a folder asks, and each answer costs up to 7 x MAX_ROOT_LEVELS stats). A
    Makefile compiling sources marks a root only where no other build file does: a project built by make alone
    (`src/makefile`, `src/makefile.hip`) is one project, not one per folder of its sources, while a CMake or
    setup.py project keeps its root when a Makefile sits above or beside it."""
    outermost = outermost_make = None
    for level, parent in enumerate((folder, *folder.parents)):
        if level >= MAX_ROOT_LEVELS:
            break
        if (parent / ".git").exists():
            return parent, outermost or outermost_make
        if _holds_build_file(str(parent)):
            outermost = parent
        elif _holds_make_build(str(parent)):
            outermost_make = parent
    return None, outermost or outermost_make


@lru_cache(maxsize=64)
def _holds_build_file(folder: str) -> bool:
    return any(os.path.exists(os.path.join(folder, marker)) for marker in _BUILD_MARKERS)


@lru_cache(maxsize=64)
def _holds_make_build(folder: str) -> bool:
    """Whether `folder` holds a Makefile (`Makefile`, `GNUmakefile`, one named for what it builds, `makefile.hip`;
    not a fragment, `*.mk`, which another includes) that compiles sources."""
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    for name in names:
        path = os.path.join(folder, name)
        if name.endswith(".mk") or not is_makefile(path):
            continue
        text = _build_file_text(path)
        if text is not None and makefile_compiles_sources(path, text):
            return True
    return False


@lru_cache(maxsize=64)
def _in_project(folder: str) -> bool:
    return _holds_build_file(folder) or _enclosing_project(Path(folder))[0] is not None


# --- whether a project is written for AMD, from its build files when they settle it -----------------------------
AmdVerdict = tuple[str, tuple[str, ...]]  # `CudaProject.written_for_amd` and its evidence


def build_verdict(build: BuildFacts, has_sources: bool, root: Path) -> AmdVerdict | None:
    """`CudaProject.written_for_amd` when the build files settle it, None when only the project's files can: a
    build defining a macro for NVIDIA only (`-DUSE_CUDA` in the CUDA arm, nvcc's `-DCUTLASS_...`) has an NVIDIA
    side; a project without C/C++ sources has no native code written for anyone, and is written for AMD when its
    declared requirements are (`_declared_verdict`, as is one whose native code is no CUDA: `_has_cuda_code`); a
    HIP-only build is AMD's."""
    if any(macro.vendor == "nvidia" for macro in learn_from_build(build).values()):
        return "", build.files
    if not has_sources:
        return _declared_verdict(root, build.files)
    if build.hip_language and not build.cuda_language and not build.torch_extension:
        return "the project's build compiles HIP only", build.files
    return None


def _declared_verdict(root: Path, build_files: tuple[str, ...]) -> AmdVerdict:
    """A project without C/C++ sources whose declared runtime requirements (`[project] dependencies`, the root
    requirements.txt) name a package that exists for ROCm only and none that exists for NVIDIA only installs where
    ROCm is: its Python is written for AMD GPUs. Those files join the evidence whatever they say. For a project
    whose native code is CUDA's, its C/C++ decides (it has an NVIDIA side, or CUDA code to port)."""
    declared = declared_requirements(str(root))
    evidence = (*build_files, *declared.files)
    if not declared.rocm_only or declared.nvidia_only:
        return "", evidence
    return f"its declared requirements need ROCm ({declared.rocm_only} exists for ROCm only) and none NVIDIA", evidence


_VERDICTS: dict[Path, AmdVerdict] = {}


def amd_verdict_for(root: Path) -> AmdVerdict:
    """`CudaProject.written_for_amd` of `root` and its evidence (remembered per process): from the model or tree
    this process has, else from the build files alone (a walk reading no C/C++ file) when they settle it, else from
    the model, built here. A mixed project's Python workers never build the C++ model for it."""
    root = Path(os.path.abspath(root))
    verdict = _VERDICTS.get(root)
    if verdict is not None:
        return verdict
    if root not in _MODELS:
        build, sources = _build_of(root)
        verdict = build_verdict(build, bool(sources), root)
    if verdict is None:
        model = project_for(root)
        verdict = model.written_for_amd, model.written_for_amd_evidence
    _VERDICTS[root] = verdict
    return verdict


# A root with no model, read without its sources' texts: its build facts, and its sources, whose texts are all a model
# of it needs more (a one-process run checks Python files asking for its build before its C/C++ files).
_BUILDS: dict[Path, _Tree] = {}


def _build_of(root: Path) -> tuple[BuildFacts, bool]:
    """The build facts of `root` and whether it has C/C++ sources: from its model or tree when this process has
    one, else from a walk reading only the build files (remembered)."""
    if root in _MODELS:
        model = _MODELS[root]
        return model.build_facts, bool(model.files)
    if root in _TREES:
        _, build, sources = _TREES[root]
        return build, bool(sources)
    if root not in _BUILDS:
        _BUILDS[root] = _read_tree(root, texts=False)
    _, build, sources = _BUILDS[root]
    return build, bool(sources)


def _with_texts(tree: _Tree | None) -> _Tree | None:
    """A tree read without its sources' texts (`_build_of`) as `_read_tree` reads it with them."""
    if tree is None:
        return None
    texts: dict[str, str] = {}
    for path in tree.sources:
        data = _module_bytes(path)  # None when too large or unreadable, as `_read_tree` skips it
        if data is not None:
            texts[path] = data.decode("utf-8", "replace").removeprefix("\ufeff")
    return _Tree(texts, tree.build, tree.sources)


# The Python extension modules a build builds for NVIDIA only, and the folders of their sources, each -> "path:line"
# of the build file declaring the module.
NvidiaOnlyNatives = tuple[dict[str, str], dict[str, str]]
_NATIVES: dict[Path, NvidiaOnlyNatives] = {}


def nvidia_only_natives_for(root: Path) -> NvidiaOnlyNatives:
    """The Python extension modules the build of `root` builds for NVIDIA only (`nvidia_only_native_modules`: a
    module importing one cannot be imported on ROCm) and their source folders (`nvidia_only_native_folders`: the
    scripts there need one), remembered per process."""
    root = Path(os.path.abspath(root))
    if root not in _NATIVES:
        build = _build_of(root)[0]
        _NATIVES[root] = nvidia_only_native_modules(build), nvidia_only_native_folders(build)
    return _NATIVES[root]


# What the process building the C++ models tells the one checking Python of each project root: `amd_verdict_for`
# and `nvidia_only_natives_for`, so that the latter reads no build file again.
ProjectVerdict = tuple[AmdVerdict, NvidiaOnlyNatives]


def remember_amd_verdicts(verdicts: Mapping[Path, ProjectVerdict]) -> None:
    """Verdicts another process decided (the one building the C++ models sends them to the one checking Python)."""
    for root, (verdict, natives) in verdicts.items():
        _VERDICTS[root] = verdict
        _NATIVES[root] = natives


def build_models_telling_verdicts(roots: Iterable[Path], tell: Callable[[dict[Path, ProjectVerdict]], None]) -> None:
    """Build the models of `roots`, handing their `amd_verdict_for` and `nvidia_only_natives_for` to `tell` as soon
    as all are known: after reading their trees when their build files settle them (a mixed project's), before
    building the other models."""
    roots = [Path(os.path.abspath(root)) for root in roots]
    for root in roots:
        if root not in _MODELS and root not in _TREES:
            _TREES[root] = _read_tree(root)
    tell({root: (amd_verdict_for(root), nvidia_only_natives_for(root)) for root in roots})
    for root in roots:
        project_for(root)


# --- one model per root per process ---------------------------------------------------------------------------------
_MODELS: dict[Path, CudaProject] = {}
_TREES: dict[Path, _Tree] = {}  # read for a model not built yet


def project_for(root: Path) -> CudaProject:
    """The model of `root`, built on first use in this process (a pool's forked workers inherit the parent's)."""
    root = Path(os.path.abspath(root))
    model = _MODELS.get(root)
    if model is None:
        model = _MODELS[root] = CudaProject.build(root, _TREES.pop(root, None) or _with_texts(_BUILDS.get(root)))
    return model


def forget_projects() -> None:
    """Drop every model built so far, and where project roots were found (a long-running server does when files
    are saved)."""
    _MODELS.clear()
    _VERDICTS.clear()
    _TREES.clear()
    _BUILDS.clear()
    _NATIVES.clear()
    _enclosing_project.cache_clear()
