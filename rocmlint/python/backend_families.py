"""Per-vendor backend packages loaded by a name built from the detected vendor.

A project that supports several accelerators may keep one package per vendor side by side and load only the
detected vendor's, by a computed name:

    backend/_amd/ops/...        backend/_nvidia/ops/...        backend/_othervendor/ops/...
    ops = importlib.import_module(f"_{vendor_name}.ops")

The packages whose names the computed load can build (the load's constant prefix, `_`, followed by a vendor's
name) form a family. When one member is named for ROCm (`_amd`, `_rocm`, `_hip`), that member is what a ROCm
machine loads; every other member's modules never run there: an NVIDIA-named member runs only on NVIDIA, the
rest on neither GPU vendor. A member that a module of the product (not a test) outside it imports by a written name (a fallback
`import_module("_nvidia.heuristics")`, a shared `_common` package) is loaded some other way and keeps its base,
and so does each member's own `__init__.py` (a project may import every vendor's package to list what it
supports). A load whose name has no constant prefix before the vendor part (`f"{vendor}.ops"`) is not read:
any subpackage of the folder could match it.

Sibling folders named for the vendors (`vendor_siblings`) are the same family chosen by written imports:

    kernels/nvidia/...   kernels/amd/...
    if is_cuda():
        from .nvidia.common_ops import wait_eq
    elif is_hip():
        from .amd.common_ops import wait_eq

A folder named for NVIDIA (`nvidia`, `cuda`, or a name with such a word: `cuda_impl`, `cuda_mla_impl`) beside one
named for ROCm (`amd`, `rocm`, `hip`, `rocm_impl`), each holding modules, under the same parent. When a module outside them imports a module of the ROCm folder under a ROCm-only gate
and one of the NVIDIA folder under an NVIDIA-only gate (rocmlint/python/importers.py decides that: it has the gates),
the project chooses the ROCm folder on ROCm, and every module of the NVIDIA folder is NVIDIA code, whoever else imports
it without a gate (a Hopper-only helper that uses it directly), and a test whose module-level statements import one
of its modules tests NVIDIA's code. Test folders beside each other that nothing imports (`test/nvidia/` and
`test/amd/`) are one test suite per vendor when both hold a test file of the same name at the same place
(`test_all_to_all.py` in each): every test of the NVIDIA folder is NVIDIA's (rocmlint/python/importers.py,
`ModuleReach._twin_tests`). Otherwise folders beside each other with no such dispatcher prove nothing.

A parent may also keep one folder per vendor that the project picks by the vendor's name, with no import to read
(`os.path.join(root, vendor, vendor + "_monitor.py")` run as a script on each host): each folder names its modules for
itself, the same role under each vendor's name (`vendor_role_twins`):

    vendors/nvidia/nvidia_monitor.py    vendors/iluvatar/iluvatar_monitor.py    vendors/amd/amd_monitor.py

A folder named `nvidia` (the vendor, not `cuda`: CUDA code is what a ROCm build of PyTorch runs too) beside a folder
named for ROCm or another accelerator that holds such a twin (`amd_monitor.py` for `nvidia_monitor.py`, at the same
place) is NVIDIA's copy of the per-vendor code, when no module outside it imports one of its modules
(rocmlint/python/importers.py, `ModuleReach._sibling_base`: an import by written name is a choice made some other way).

The dispatcher may also be a registry keyed by the vendor's name (`registered_by_vendor`): each folder registers its
code under keys that start with the folder's own name, the same entries for each vendor, and the project looks them
up by the target it detected:

    backend/cuda/target_def.py:   @registry.reg("cuda.create_target")
    backend/rocm/target_def.py:   @registry.reg("rocm.create_target")
    backend/codegen.py:           registry.get(target.name() + ".lib.var_decl")

Registering needs importing, so every module of both folders is imported on ROCm too and its module-level statements
run there; only the code inside its defs waits for a lookup of the NVIDIA key (rocmlint/python/importers.py,
`ImportIndex.definitions_base`). Not seen: a def that another module of the folder calls at import.

The same choice is made between two modules of one folder (`vendor_twin_modules`), each named for its vendor or the
vendor's GPU management library, the rest of the names alike, and written for the same role:

    core/gpu_nvidia.py:  class NvidiaGPUDevice(GPUDevice)      core/gpu_amd.py:  class AMDGPUDevice(GPUDevice)
    observers/nvml.py:   class NVMLObserver(BenchmarkObserver) observers/amd.py: class AMDSMIObserver(BenchmarkObserver)
    api/nvml.py:         def get_nvml()                        api/rocm_smi.py:  def get_rocm_smi()

The role is shown by a class of each deriving from the same base (a project's own, not a builtin or `Enum`), or by a
def of each named for its own vendor, alike once the vendor words are dropped (`nvml_is_available`,
`amdsmi_is_available`). The project keeps one implementation per vendor and uses the AMD one on ROCm, whoever imports
both (a dispatcher probing each library in turn, a user picking an observer): the code inside the NVIDIA module's defs
is NVIDIA code; its module-level statements run wherever it is imported (`ImportIndex.definitions_base`). Not "cuda"
beside "hip": CUDA-named code is what a ROCm build of PyTorch runs too.
"""

from __future__ import annotations

import ast
import builtins
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from rocmlint.data import load
from rocmlint.vendor import NO_GPU, Branch

# `import_module(f"_{vendor}.ops")`, `__import__("_" + vendor)`: group 1 or 2 is the constant prefix.
# A decorator registering what follows under a dotted key (`@registry.reg("cuda.gemm_rcr.gen_function")`): group 1
# is the key's first part, group 2 the rest.
_KEYED_REGISTRATION = re.compile(rb"^[ \t]*@[\w.]+\(\s*[\"']([A-Za-z]\w*)\.([\w.]+)[\"']", re.MULTILINE)
_COMPUTED_LOAD = re.compile(rb"(?:import_module|__import__)\(\s*(?:f[\"']([\w.]*)\{|[\"']([\w.]*)[\"']\s*\+)")
_PACKAGE_FILE = "__init__.py"
_WORDS = load("vendor_packages")
_ROCM_WORDS = frozenset(_WORDS["rocm_backend_words"])
_NVIDIA_WORDS = frozenset(_WORDS["nvidia_backend_words"])
_NVIDIA_ONLY = Branch(False, True)
# The folder names of the vendors whose per-vendor twin makes a folder named `nvidia` NVIDIA's (`vendor_role_twins`).
_TWIN_VENDOR_WORDS = _ROCM_WORDS | frozenset(_WORDS["other_accelerator_words"])
_NVIDIA_VENDOR = "nvidia"
_NVIDIA_MODULE_WORDS = frozenset(_WORDS["nvidia_module_words"])
_ROCM_MODULE_WORDS = frozenset(_WORDS["rocm_module_words"])
_TOOL_WORDS = frozenset(_WORDS["management_tool_words"])
# Bases that say nothing of a role: every class may derive from them.
_GENERIC_BASES = frozenset(dir(builtins)) | frozenset(
    {"ABC", "Enum", "IntEnum", "Flag", "IntFlag", "StrEnum", "Protocol", "NamedTuple", "TypedDict", "Generic", "Module"}
)


def computed_load_prefixes(data: bytes) -> set[str]:
    """The constant prefixes of the module names a file loads by a computed name (`f"_{vendor}.ops"` gives
    `_`, `f"pkg.backends.be_{name}"` gives `pkg.backends.be_`); only those with a name part after the last dot."""
    if b"import_module" not in data and b"__import__" not in data:
        return set()
    prefixes = set()
    for match in _COMPUTED_LOAD.finditer(data):
        prefix = (match.group(1) if match.group(1) is not None else match.group(2)).decode("ascii")
        if prefix.rpartition(".")[2]:
            prefixes.add(prefix)
    return prefixes


def family_bases(
    files: Iterable[str], prefixes: Iterable[str], imported_from_outside: Callable[[str], bool]
) -> dict[str, Branch]:
    """Where the members of each backend family can run, per member folder (absolute paths): only the members
    that cannot run on ROCm. `imported_from_outside(folder)`: a module outside the folder imports one of its
    modules by a written name."""
    packages: dict[str, list[str]] = {}  # folder -> the names of its subpackages
    for path in files:
        if os.path.basename(path) == _PACKAGE_FILE:
            package = os.path.dirname(path)
            packages.setdefault(os.path.dirname(package), []).append(os.path.basename(package))
    bases: dict[str, Branch] = {}
    for prefix in sorted(set(prefixes)):
        package_path, _, name_prefix = prefix.rpartition(".")
        for folder, names in sorted(packages.items()):
            if _is_package_path(folder, package_path):
                bases.update(_members_off_rocm(folder, names, name_prefix, imported_from_outside))
    return bases


def _is_package_path(folder: str, package_path: str) -> bool:
    """`folder` ends with the dotted package path of the load (any folder for a load with none)."""
    if not package_path:
        return True
    return folder.replace(os.sep, "/").endswith("/" + package_path.replace(".", "/"))


def _members_off_rocm(
    folder: str, names: list[str], name_prefix: str, imported_from_outside: Callable[[str], bool]
) -> dict[str, Branch]:
    """The members of the family `name_prefix` in `folder` that never run on ROCm, when one member is ROCm's."""
    vendors = {name: name[len(name_prefix) :].lower() for name in names if name.startswith(name_prefix)}
    if len(vendors) < 2 or not any(vendor in _ROCM_WORDS for vendor in vendors.values()):
        return {}
    bases = {}
    for name, vendor in sorted(vendors.items()):
        member = os.path.join(folder, name)
        if vendor in _ROCM_WORDS or imported_from_outside(member):
            continue
        bases[member] = _NVIDIA_ONLY if vendor in _NVIDIA_WORDS else NO_GPU
    return bases


def member_of(path: str, bases: dict[str, Branch]) -> str | None:
    """The family member folder `path` sits in (None for none, and for the member's own `__init__.py`)."""
    if not bases:
        return None
    folder = os.path.dirname(path)
    if os.path.basename(path) == _PACKAGE_FILE and folder in bases:
        return None
    while folder and folder != os.path.dirname(folder):
        if folder in bases:
            return folder
        folder = os.path.dirname(folder)
    return None


def vendor_siblings(files: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Each folder named for NVIDIA that has siblings named for ROCm, every one holding modules (at any depth: a
    namespace package's subpackages) (absolute paths) -> those siblings."""
    children: dict[str, set[str]] = {}
    for path in files:
        folder = os.path.dirname(path)
        while folder != os.path.dirname(folder):
            parent = os.path.dirname(folder)
            names = children.setdefault(parent, set())
            if os.path.basename(folder) in names:
                break  # this folder's ancestors are recorded already
            names.add(os.path.basename(folder))
            folder = parent
    siblings: dict[str, tuple[str, ...]] = {}
    for parent, names in sorted(children.items()):
        rocm = tuple(os.path.join(parent, name) for name in sorted(names) if _named_for(name) == "rocm")
        if rocm:
            for name in sorted(names):
                if _named_for(name) == "nvidia":
                    siblings[os.path.join(parent, name)] = rocm
    return siblings


def vendor_role_twins(files: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Each folder named `nvidia` with a sibling named for ROCm or another accelerator holding a module of the same
    role, each named for its own folder (`nvidia/nvidia_monitor.py`, `iluvatar/iluvatar_monitor.py`) at the same place
    below it (absolute paths) -> the pair of modules."""
    by_parent: dict[str, dict[str, dict[str, str]]] = {}  # parent -> vendor folder -> role -> module
    for path in files:
        found = _vendor_role(path)
        if found is not None:
            folder, role = found
            by_parent.setdefault(os.path.dirname(folder), {}).setdefault(folder, {}).setdefault(role, path)
    twins: dict[str, tuple[str, str]] = {}
    for folders in by_parent.values():
        for nvidia, nvidia_roles in sorted(folders.items()):
            if os.path.basename(nvidia).lower() == _NVIDIA_VENDOR:
                pair = _role_twin(nvidia_roles, folders)
                if pair:
                    twins[nvidia] = pair
    return twins


def _role_twin(nvidia_roles: Mapping[str, str], folders: Mapping[str, Mapping[str, str]]) -> tuple[str, str] | None:
    """NVIDIA's module and its twin in a sibling named for ROCm or another accelerator, the first by path."""
    for folder, roles in sorted(folders.items()):
        if os.path.basename(folder).lower() not in _TWIN_VENDOR_WORDS:
            continue
        shared = sorted(set(roles) & set(nvidia_roles))
        if shared:
            return nvidia_roles[shared[0]], roles[shared[0]]
    return None


def _vendor_role(path: str) -> tuple[str, str] | None:
    """The nearest folder above a module whose name the module's name starts with (`vendors/amd/x/amd_monitor.py`:
    `vendors/amd`), and the module's role below it (`x/monitor.py`); None for none."""
    name = os.path.basename(path).lower()
    folder = os.path.dirname(path)
    below: list[str] = []
    while folder != os.path.dirname(folder):
        vendor = os.path.basename(folder).lower()
        if name.startswith(vendor + "_") and len(name) > len(vendor) + 1:
            return folder, os.path.join(*below, name[len(vendor) + 1 :])
        below.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    return None


def _named_for(folder: str) -> str | None:
    """ "rocm" or "nvidia" when the words of a folder's name (`cuda`, `cuda_mla_impl`, `rocm_impl`) name exactly that
    vendor, else None."""
    words = set(re.split(r"[^a-z0-9]+", folder.lower()))
    rocm, nvidia = bool(words & _ROCM_WORDS), bool(words & _NVIDIA_WORDS)
    if rocm == nvidia:
        return None
    return "rocm" if rocm else "nvidia"


def sibling_of(path: str, siblings: Mapping[str, tuple[str, ...]]) -> str | None:
    """The NVIDIA-named folder of `vendor_siblings` that `path` sits in, at any depth (None for none)."""
    if not siblings:
        return None  # most trees: no folder up the path is worth a look
    folder = os.path.dirname(path)
    while folder and folder != os.path.dirname(folder):
        if folder in siblings:
            return folder
        folder = os.path.dirname(folder)
    return None


def registered_by_vendor(
    nvidia: str, rocm: Sequence[str], files: Iterable[str], read: Callable[[str], bytes | None]
) -> tuple[str, ...]:
    """A module of the NVIDIA-named folder `nvidia` and one of a ROCm-named sibling of `rocm` that register the same
    entry, each under a key starting with its own folder's name (`"cuda.create_target"`, `"rocm.create_target"`): the
    project chooses between the folders by the vendor's name. Empty when no entry is registered for both.
    `read(path)`: the file's bytes."""
    nvidia_entries = _entries_registered(nvidia, files, read)
    if not nvidia_entries:
        return ()
    for folder in rocm:
        for entry, path in sorted(_entries_registered(folder, files, read).items()):
            if entry in nvidia_entries:
                return nvidia_entries[entry], path
    return ()


def _entries_registered(folder: str, files: Iterable[str], read: Callable[[str], bytes | None]) -> dict[str, str]:
    """The keys the modules of `folder` (at any depth) register under the folder's own name, without that first part
    -> the first module registering each."""
    vendor = os.path.basename(folder).lower()
    inside = folder + os.sep
    entries: dict[str, str] = {}
    for path in files:
        data = read(path) if path.startswith(inside) else None
        if not data or b"@" not in data:
            continue
        for match in _KEYED_REGISTRATION.finditer(data):
            if match.group(1).decode("ascii").lower() == vendor:
                entries.setdefault(match.group(2).decode("ascii"), path)
    return entries


def vendor_twin_modules(files: Iterable[str], parse: Callable[[str], ast.Module | None]) -> dict[str, str]:
    """Each module named for NVIDIA or NVML with a twin in its folder named for AMD or its SMI, the rest of the names
    alike, that is written for the same role (a shared base class, defs alike but for the vendor): NVIDIA's module ->
    its twin (absolute paths). `parse(path)`: the module's tree, None when it cannot be read."""
    by_folder: dict[str, dict[str, list[str]]] = {}  # folder -> "nvidia"/"rocm" -> modules
    for path in files:
        vendor = _module_vendor(path)
        if vendor is not None:
            by_folder.setdefault(os.path.dirname(path), {}).setdefault(vendor, []).append(path)
    twins: dict[str, str] = {}
    for modules in by_folder.values():
        for nvidia in sorted(modules.get("nvidia", ())):
            for rocm in sorted(modules.get("rocm", ())):
                if _role_words(nvidia) == _role_words(rocm) and _same_role(parse(nvidia), parse(rocm)):
                    twins[nvidia] = rocm
                    break
    return twins


def _name_words(name: str) -> list[str]:
    return [word for word in re.split(r"[^a-z0-9]+", name.lower()) if word]


def _module_vendor(path: str) -> str | None:
    """ "nvidia" or "rocm" when the words of a module's file name (`gpu_nvidia.py`, `rocm_smi.py`) name exactly that
    vendor or its management library; None otherwise (a package's `__init__.py` too)."""
    name, extension = os.path.splitext(os.path.basename(path))
    if extension != ".py":
        return None
    words = set(_name_words(name))
    nvidia, rocm = bool(words & _NVIDIA_MODULE_WORDS), bool(words & _ROCM_MODULE_WORDS)
    if nvidia == rocm:
        return None
    return "nvidia" if nvidia else "rocm"


def _role_words(name: str) -> tuple[str, ...]:
    """The words of a module's or def's name that are neither a vendor's nor a management tool's."""
    base = os.path.splitext(os.path.basename(name))[0]
    vendor_words = _NVIDIA_MODULE_WORDS | _ROCM_MODULE_WORDS | _TOOL_WORDS
    return tuple(word for word in _name_words(base) if word not in vendor_words)


def _same_role(nvidia: ast.Module | None, rocm: ast.Module | None) -> bool:
    """A class of each derives from the same base, or a def of each is named for its own vendor and alike but for it."""
    if nvidia is None or rocm is None:
        return False
    if _role_bases(nvidia) & _role_bases(rocm):
        return True
    return bool(_vendor_named_defs(nvidia, _NVIDIA_MODULE_WORDS) & _vendor_named_defs(rocm, _ROCM_MODULE_WORDS))


def _role_bases(tree: ast.Module) -> set[str]:
    """The last parts of the bases of the module's top-level classes (`gpu_common.GPU`: `GPU`), generic ones aside."""
    bases = set()
    for statement in tree.body:
        if isinstance(statement, ast.ClassDef):
            for base in statement.bases:
                name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else None
                if name is not None and name not in _GENERIC_BASES:
                    bases.add(name)
    return bases


def _vendor_named_defs(tree: ast.Module, vendor_words: frozenset[str]) -> set[tuple[str, ...]]:
    """The role words of the module's top-level defs whose names hold one of `vendor_words` (`nvml_is_available`)."""
    return {
        _role_words(statement.name)
        for statement in tree.body
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
        and set(_name_words(statement.name)) & vendor_words
    }
