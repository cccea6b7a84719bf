"""Which vendor a piece of Python can run on, from the ROCm/NVIDIA tests around it.

Every expression gets a `Vendor` value: what it evaluates to (truthiness, three-valued) on a ROCm build
and on an NVIDIA build. `torch.version.hip` is (True, False); `torch.version.cuda` is (False, True);
`torch.cuda.is_available()` is (unknown, unknown) because it is true on both; `PLATFORM == "cuda"` is
(False, True) after `PLATFORM = "rocm" if torch.version.hip else "cuda"` (vendor_values.py: the strings a
name holds per vendor). A node's `Branch` combines
the values of every condition it sits under: the branch of `if`/`elif`/`else`, conditional expressions,
`and`/`or` short-circuits, comprehension filters, early `return`/`raise`/`continue`/`break`/skip after a
test, `assert`, test-skip decorators, and the value of a variable only read where ROCm ignores it. In a test
suite, which runs on AMD's CDNA GPUs, a capability comparison with one value on all of them (`major in (10, 12)`)
is valued there (capability_values.py). A def of the file that the file asks about each runtime by name
(`_device_usable("cuda")` beside `_device_usable("rocm")`, a compiler's device probes) keeps them apart: its "cuda"
call is never true on ROCm. The forms recognised are those of RULES.md, "What gated means"; tests of a gfx
architecture name are valued in arch_tests.py.
"""

from __future__ import annotations

import ast
import operator as op
import re
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Protocol

from rocmlint.data import load
from rocmlint.python.arch_tests import arch_name_truth, gfx_name_test
from rocmlint.python.capability_values import on_every_cdna_gpu
from rocmlint.python.device_names import names_nvidia_in_device_name
from rocmlint.python.references import References
from rocmlint.python.scopes import (
    COMPOUND_STATEMENTS,
    DEFS,
    FUNCTION_DEFS,
    FunctionNode,
    argument_values,
    dotted_name,
    is_none,
    last_line,
    own_returns,
    tests_main_module,
    tests_membership_of_its_parameter,
    unstarred,
)
from rocmlint.python.semantic import Binding, Semantic
from rocmlint.python.tree import child_nodes
from rocmlint.python.values import Values
from rocmlint.python.vendor_records import nvidia_records_after_rocm
from rocmlint.python.vendor_values import Possible, VendorStrings, VendorValues, Within
from rocmlint.vendor import (
    CONSTANT_FALSE,
    CONSTANT_TRUE,
    EVERYWHERE,
    NEITHER,
    NVIDIA,
    OFF_NVIDIA,
    OFF_ROCM,
    ROCM,
    UNKNOWN,
    Branch,
    Vendor,
)

# Qualified names whose value is the vendor test itself.
_ROCM_NAMES = frozenset(
    {
        "torch.version.hip",
        "torch.utils.cpp_extension.IS_HIP_EXTENSION",
        "torch.testing._internal.common_utils.TEST_WITH_ROCM",
        "torch.cuda._is_hip",
    }
)
_NVIDIA_NAMES = frozenset({"torch.version.cuda"})
# Triton's target helpers, evaluated for the compile target: false for every non-CUDA target (HIP included), and on
# NVIDIA true or false by the architecture (`cuda_capability_geq(10, 0)` around PTX only Blackwell has). JAX's test
# helpers (jax/_src/test_util.py) likewise return False unless `is_device_cuda()`: the device's platform is CUDA's.
# True wherever a GPU of either vendor is present (HIP builds answer through torch.cuda).
_GPU_PRESENCE_TESTS = frozenset({"torch.cuda.is_available"})
_FALSE_ON_ROCM_CALLS = frozenset(
    {
        "triton.language.target_info.cuda_capability_geq",
        "triton.language.target_info.is_cuda",
        "jax._src.test_util.is_device_cuda",
        "jax._src.test_util.is_cuda_compute_capability_at_least",
        "jax._src.test_util.is_cuda_compute_capability_equal",
    }
)
# Project flags named by convention (`IS_ROCM`, `_is_hip`, `on_amd`, vLLM's `on_gfx9()`, `on_mi3xx()`).
_ROCM_CONVENTION = re.compile(
    r"^_*(?:(?:is|on|use|using|with|has|running_on|test_with|build_for)_*(?:rocm|hip|amd|amdgpu|hip_extension)"
    r"(?:_*(?:gpu|platform|build|backend|device|pytorch|torch))?|on_(?:gfx|mi)\w*)$",
    re.IGNORECASE,
)
# An environment variable holding the ROCm version a build is for (`ROCM_VERSION=6.1 pip install .`); unlike
# an installation path (`ROCM_PATH`), which a machine with both toolkits sets, it is set to build for ROCm.
_ROCM_VERSION_SWITCH = re.compile(r"^(?:rocm|hip)_?version$", re.IGNORECASE)
_NVIDIA_CONVENTION = re.compile(r"^_*(?:is|on|using|running_on)_*nvidia(?:_*gpu)?$", re.IGNORECASE)
# `current_platform.is_rocm()` / `.is_cuda()` (vLLM: is_cuda means NVIDIA there).
_ROCM_METHODS = frozenset({"is_rocm", "is_hip"})
_NVIDIA_METHODS = frozenset({"is_cuda"})
# Test decorators, matched on the lower-cased name without underscores. Arch- and version-specific ones
# (`skipIfRocmArch`, `skipIfRocmVersionLessThan`, `runOnRocmArch`) still run on some ROCm systems, so
# they are not gates.
_SKIPS_ON_ROCM = re.compile(r"^skip(?:cuda|gpu)?if(?:rocm|hip)(?:multiprocess)?$")
_RUNS_ONLY_ON_ROCM = re.compile(r"^(?:skip(?:cuda|gpu)?ifnot(?:rocm|hip)|skipunless(?:rocm|hip)|runonrocm|onlyrocm)$")
# A requirement decorator named for NVIDIA's runtime (`requires_cuda`, `cuda_only`) whose ROCm counterpart is
# imported beside it from the same module (`requires_rocm`): the pair says `cuda` means NVIDIA there, not "a GPU".
_NVIDIA_REQUIREMENT = re.compile(
    r"^(?P<head>(?:requires?|needs?|only|runs?_on|run_only_on)_)(?:cuda|nvidia)(?P<tail>_gpu|_device)?$"
    r"|^(?:cuda|nvidia)(?P<only>_only)$"
)
_ROCM_WORDS = ("rocm", "hip", "amd")
_TERMINATING_CALLS = frozenset(
    {"sys.exit", "exit", "quit", "os._exit", "os.abort", "pytest.skip", "pytest.exit", "pytest.fail"}
)
# An `except ImportError:` that ends in one of these does not survive the failed import.
_FAILING_CALLS = frozenset({"sys.exit", "exit", "quit", "os._exit", "os.abort", "pytest.exit", "pytest.fail"})
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
_ROCM_TARGET_NAMES = frozenset({"rocm", "hip"})
# The runtime names a def asked about each runtime by name is called with (`_runtime_name_probe`).
_NVIDIA_RUNTIME = "cuda"
_ROCM_RUNTIME = "rocm"
# The words of a platform value (`"amd_rocm"`, `"rocm-6"`): a value naming ROCm among other words is ROCm's too.
_VALUE_WORD = re.compile(r"[a-z]+")
_VENDOR_PACKAGES = load("vendor_packages")
_TYPE_CHECKING = frozenset({"typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING"})
_OTHER_DEVICE_TYPES = frozenset(_VENDOR_PACKAGES["other_device_types"])
# `bool(x)`, `int(x)`: a switch read as text and converted (`bool(int(os.getenv("USE_ROCM", "0")))`) keeps its truth.
_TRUTH_KEEPING_CASTS = frozenset({"bool", "int"})
_ENVIRONMENT_READS = frozenset({"os.getenv", "os.environ.get"})
# What a build switch is compared with to ask whether it is set.
_SWITCH_ON = frozenset({"1", "on", "true", "yes"})
# The operating system's name as Python reports it; macOS ("darwin") has neither a ROCm nor a CUDA GPU.
_PLATFORM_NAMES = frozenset({"sys.platform", "platform.system", "os.name"})
_GPU_FREE_PLATFORM = "darwin"
# Windows by each of those names: the Instinct GPUs ROCm's data-centre stack serves run Linux, so code only Windows
# runs is not on ROCm's path (what it does on NVIDIA is not decided).
_WINDOWS_PLATFORMS = frozenset({"win32", "windows", "nt"})
# Environment variables of NVIDIA's toolchain: CMake's CUDA compiler and host compiler (`CUDACXX`, `CUDAHOSTCXX`)
# and nvcc's own (`NVCC_PREPEND_FLAGS`, `NVCC_CCBIN`). A ROCm build sets none of them, so code run only when one
# is set is not ROCm's. (Runtime variables such as `CUDA_VISIBLE_DEVICES` are honoured on ROCm: not these.)
_NVIDIA_TOOLCHAIN_VARIABLE = re.compile(r"^(?:CUDA(?:HOST)?CXX|NVCC_[A-Z_]+)$")
# A variable or environment variable naming the CUDA build variant a packaging script targets (torch's wheel tags:
# `cu121`, `cpu`, `rocm6.1`; `CU_VERSION`, `cuda_tag`, the builders' `DESIRED_CUDA`), and a `cu` tag or prefix
# compared with it: only an NVIDIA variant starts with `cu` (a device name such as "cuda" is no such variable).
_CUDA_TAG_VARIABLE = re.compile(r"^_*(?:cu|cuda)_*(?:version|ver|tag)$|^_*desired_*cuda$", re.IGNORECASE)
_CUDA_TAG = re.compile(r"^cu\d*$")
# Simple statements that evaluate one expression, their `value`.
_EVALUATING_STATEMENTS = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)
# Where custom operators live, `torch.ops.<namespace>.<operator>`.
_CUSTOM_OPERATORS = "torch.ops."
_PACKAGE_PROBES = frozenset({"importlib.util.find_spec", "pytest.importorskip"})
_NVIDIA_PROGRAMS = frozenset(_VENDOR_PACKAGES["nvidia_only_programs"])
_ROCM_PROGRAMS = frozenset(_VENDOR_PACKAGES["rocm_only_programs"])
# Runners whose result is the program's exit code (`subprocess.run`'s through `.returncode`).
_EXIT_CODE_RUNNERS = frozenset({"subprocess.call", "subprocess.run", "os.system"})
# Their module `tvm.testing.utils` is re-exported as `tvm.testing`: both spellings name one decorator.
_NVIDIA_ONLY_TEST_DECORATORS = frozenset(_VENDOR_PACKAGES["nvidia_only_test_decorators"])
# Runners that raise when the program is missing or fails (`subprocess.run` only with `check=True`).
_RAISING_RUNNERS = frozenset({"subprocess.check_output", "subprocess.check_call"})
# Class decorators that shape the class and return it, registering it nowhere (`@dataclass`).
_CLASS_SHAPERS = frozenset({"dataclasses.dataclass", "functools.total_ordering", "typing.final"})
# NVML's initialisation (`pynvml.nvmlInit()`, also through `nvidia_smi` and `py3nvml.py3nvml`): it raises unless
# libnvidia-ml found an NVIDIA driver.
_NVML_INITS = frozenset(
    f"{module}.{function}"
    for module in ("pynvml", "nvidia_smi", "py3nvml.py3nvml")
    for function in ("nvmlInit", "nvmlInitWithFlags")
)
# Exceptions that catch NVML's failure to initialise (pynvml's `NVMLError` and its subclasses, ctypes' OSError).
_NVML_FAILURE = re.compile(r"^(?:NVMLError\w*|Exception|BaseException|OSError)$")
# The keyword that switches what a decorator registers on or off (`@register_benchmark(enabled=...)`).
_SWITCH_KEYWORDS = frozenset({"enabled", "enable"})
_ORDERINGS: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Lt: op.lt,
    ast.LtE: op.le,
    ast.Gt: op.gt,
    ast.GtE: op.ge,
}
_MAX_DEPTH = 24
# The prefix of the functions pytest collects as tests (its default `python_functions`).
_PYTEST_TEST_PREFIX = "test"
# The module-level functions pytest and unittest call by name: xunit-style setup and teardown, `load_tests`.
_PYTEST_MODULE_FUNCTIONS = frozenset(
    {
        "setup_module",
        "teardown_module",
        "setup_function",
        "teardown_function",
        "setup",
        "teardown",
        "setUpModule",
        "tearDownModule",
        "load_tests",
    }
)
# The fields that hold statement lists (a Try's `handlers` hold except clauses, not statements).
_STATEMENT_FIELDS = ("body", "orelse", "finalbody")
# Functions whose callers are decided one inside another on the Python stack before the next is deferred.
_MAX_CALLER_NESTING = 32
# Variables decided one inside another (a flag read in another flag's definition) before the answer is "not
# gated": each level nests a walk over the reads' branches on the Python stack.
_MAX_VARIABLE_NESTING = 16

# Where the module as a whole can run (rocmlint/python/importers.py), asked when a branch first needs it.
ModuleBase = Callable[[], Branch]
Condition = tuple[Vendor, bool]  # a test and whether the node sits where it is true


class ReadElsewhere(Protocol):
    """What the modules of the project that import this one do with its module-level names."""

    def __call__(self, name: str) -> bool:
        """Whether one of them may read `name` (ProjectIndex.read_elsewhere)."""

    def only_off_rocm(self, name: str) -> bool:
        """Whether some read `name` and every read of it there is in code that never runs on ROCm
        (ProjectIndex.read_only_off_rocm)."""

    def key_registered_off_rocm(self, key: str, testers: frozenset[str], qualified: str | None) -> bool:
        """Whether the project writes the string `key` other than as the argument of a call of one of `testers`,
        and only in code that never runs on ROCm; `qualified`: the imported tester, which must be a registry
        lookup (`tests_membership_of_its_parameter`), None for a def of this file already found to be one
        (ProjectIndex.key_registered_off_rocm)."""

    def definitions_only_on_nvidia(self, name: str) -> bool:
        """Whether the project reaches the code inside this module's defs under its top-level def or class `name` only
        on NVIDIA: the module sits in an NVIDIA-named folder that a registry keyed by the vendor's name chooses, or only
        the NVIDIA platform class chooses it (ProjectIndex.definitions_only_on_nvidia)."""


class CrossModuleResolver(Protocol):
    """Resolves a qualified name defined in another module of the scanned tree. A name ending in "()" asks
    for the value of calling it (`from pkg.env import is_hip; is_hip()`)."""

    def __call__(self, qualified: str) -> Vendor | None:
        """Its vendor value (a ROCm or NVIDIA test), None when it is none."""

    def strings(self, qualified: str) -> VendorStrings | None:
        """The strings it may hold per vendor (`PLATFORM = "rocm" if torch.version.hip else "cuda"`)."""

    def skip(self, qualified: str) -> Vendor | None:
        """Where a test decorated with it runs, when it is a vendor skip decorator (`GateAnalyzer.skip_decorator`)."""

    def in_project(self, qualified: str) -> bool:
        """Whether a module of the scanned tree defines it (`pkg.testing.requires_cuda` is the tree's
        `pkg/testing.py`'s), rather than a library outside the tree."""


@dataclass
class _BlockScan:
    """How far `_conditions_before` has read a block: the conditions its statements so far leave, those
    holding where the current line starts, the last statement read and the index of the next one."""

    block: list[ast.stmt]
    conditions: list[Condition] = field(default_factory=list)
    line_start: list[Condition] = field(default_factory=list)
    previous: ast.stmt | None = None
    next: int = 0
    busy: bool = False  # one of its statements' tests is being evaluated


class _CallerDeferred(Exception):
    """Deciding a function's callers needs `function` decided first, too deep to do it on this stack;
    `path` is the chain of functions being decided when it was asked."""

    def __init__(self, function: FunctionNode, path: list[FunctionNode]) -> None:
        super().__init__(function.name)
        self.function = function
        self.path = path


class GateAnalyzer:
    def __init__(
        self,
        semantic: Semantic,
        rocm_guards: frozenset[str] = frozenset(),
        resolve_external: CrossModuleResolver | None = None,
        module_base: ModuleBase | None = None,
        read_elsewhere: ReadElsewhere | None = None,
        in_test_suite: bool = False,
    ) -> None:
        self.semantic = semantic
        # A test suite runs on AMD's CDNA GPUs: a capability comparison with one value on all of them is a test of
        # ROCm there (`major in (10, 12)` is false on MI200, MI300 and MI355).
        self.in_test_suite = in_test_suite
        self.rocm_guards = rocm_guards
        self.resolve_external = resolve_external
        self.module_base = module_base
        self.read_elsewhere = read_elsewhere
        self._binding_cache: dict[tuple[int, str], Vendor] = {}
        self._branch_cache: dict[ast.AST, Branch] = {}
        self._written_cache: dict[ast.AST, Branch] = {}  # `_written_branch`
        self._before_cache: dict[ast.stmt, list[Condition]] = {}
        self._scans: dict[int, _BlockScan] = {}  # by id(block): lists are unhashable; each scan keeps its block
        self._operand_cache: dict[ast.AST, list[Condition]] = {}
        self._nvidia_records: dict[ast.AST, frozenset[ast.AST]] = {}  # a registry list -> its NVIDIA-only records
        self._chosen_definitions: dict[str, bool] = {}  # a top-level def or class -> only NVIDIA reaches its code
        self._blocks: dict[ast.stmt, list[ast.stmt]] = {}
        self._callers: dict[FunctionNode, list[Condition]] = {}
        self._caller_path: list[FunctionNode] = []  # the functions being decided, outermost first
        self._on_caller_path: set[FunctionNode] = set()  # the same, for membership tests
        self._caller_nesting = 0  # how many of them are on the Python stack
        self._recursive: set[FunctionNode] = set()
        self._ignored_variables: dict[tuple[ast.AST, str], bool] = {}  # (scope, name): read only where ROCm ignores it
        self._variable_nesting = 0  # variables being decided on the Python stack
        self._switching: set[tuple[int, tuple[ast.expr, ...]]] = set()  # flags whose assignments are being placed
        self._skips: dict[tuple[object, ...], Vendor | None] = {}  # by `_binding_key`: where its tests run
        self._idle_on_rocm: dict[ast.ClassDef, bool] = {}  # benchmark classes: every registration off on ROCm
        self._returns_on_rocm: dict[FunctionNode, bool] = {}  # `_may_return_on_rocm`, False while being decided
        self._deciding_classes: set[ast.ClassDef] = set()  # subclasses being decided (`_subclass_only_off_rocm`)

    @cached_property
    def references(self) -> References:
        """The file's name index and call sites (rules share it through `PythonContext.references`)."""
        return References(self.semantic)

    @cached_property
    def _values(self) -> Values:
        return Values(self.semantic, self.references)

    @cached_property
    def vendor_values(self) -> VendorValues:
        """The strings names hold per vendor (`PLATFORM == "cuda"` as a gate)."""
        external = self.resolve_external.strings if self.resolve_external is not None else None
        # A proxy, not `self`: the pair would be a reference cycle, so the file's trees would wait for the
        # cyclic collector instead of going when the check ends (see rocmlint/collector.py).
        return VendorValues(self.semantic, weakref.proxy(self), external)

    @cached_property
    def module_branch(self) -> Branch:
        """Where the module itself can run (`module_base`), asked once, when a branch first needs it."""
        return self.module_base() if self.module_base is not None else EVERYWHERE

    def module_branch_off_rocm(self) -> bool:
        """The module was found to run only off ROCm, if a branch asked (for `check --verbose`: asks nothing)."""
        known = self.__dict__.get("module_branch")
        return isinstance(known, Branch) and known.on_rocm is False

    # --- public -----------------------------------------------------------------------------------
    def branch(self, node: ast.AST) -> Branch:
        """Where `node` can run, from every condition between it and the module, and where the module
        itself can run (`module_base`: a module only imported from NVIDIA-only code is NVIDIA code).
        Iterative: deep nesting must not exhaust the Python stack."""
        chain: list[ast.AST] = []
        current: ast.AST | None = node
        while current is not None and current not in self._branch_cache:
            chain.append(current)
            current = self.semantic.parent(current)
        result = self.module_branch if current is None else self._branch_cache[current]
        for child in reversed(chain):
            parent = self.semantic.parent(child)
            if parent is not None:
                for condition, taken in self._conditions(parent, child):
                    result = result.under(condition, taken)
            self._branch_cache[child] = result
        return result

    def never_on_rocm(self, node: ast.AST) -> bool:
        """`branch(node).on_rocm is False`, decided first without the questions that read beyond the conditions
        written around `node`: where the module runs (its importers' gates), where each def around it is called
        from (its calls, or the modules importing a def this file never calls), whether the variable it is assigned
        to is only read where ROCm ignores it. Those only ever add "not on ROCm", so when the written conditions
        already say it, they are not asked (a hazard gated in its own def)."""
        known = self._branch_cache.get(node)
        if known is not None:
            return known.on_rocm is False
        return self._written_branch(node).on_rocm is False or self.branch(node).on_rocm is False

    def gate_off_rocm(self, node: ast.AST) -> ast.AST | None:
        """For `check --verbose`: the node whose condition keeps `node` off ROCm, from the branches `never_on_rocm`
        worked out (nothing is computed anew): the outermost `if`, def (its skips and callers), expression or
        statement list that does; the module when where it runs decides (its importers, what it imports, its
        folder); None when no branch known for `node` says so."""
        chain: list[ast.AST] = []
        current: ast.AST | None = node
        while current is not None:
            chain.append(current)
            current = self.semantic.parent(current)
        for child in reversed(chain[:-1]):
            known = self._branch_cache.get(child) or self._written_cache.get(child)
            if known is not None and known.on_rocm is False:
                parent = self.semantic.parent(child)
                decided_by_module = parent is self.semantic.module and self.module_branch.on_rocm is False
                return self.semantic.module if decided_by_module else parent
        return None

    def _known_branch(self, node: ast.AST) -> Branch:
        full = self._branch_cache.get(node)
        return full if full is not None else self._written_cache[node]

    def _written_branch(self, node: ast.AST) -> Branch:
        """`branch` from the conditions written around `node` alone (`_conditions` without `indirect`, no module
        base), or from a branch known for an enclosing node: a False there is one of `branch`'s."""
        chain: list[ast.AST] = []
        current: ast.AST | None = node
        while current is not None and current not in self._branch_cache and current not in self._written_cache:
            chain.append(current)
            current = self.semantic.parent(current)
        result = EVERYWHERE if current is None else self._known_branch(current)
        for child in reversed(chain):
            parent = self.semantic.parent(child)
            if parent is not None:
                for condition, taken in self._conditions(parent, child, indirect=False):
                    result = result.under(condition, taken)
            self._written_cache[child] = result
        return result

    def reach(self, node: ast.AST, within: Within = None) -> Vendor:
        """Whether `node` runs, per vendor, whenever control enters `within` (default: the module; a
        statement list such as a function's `body` leaves out what decides whether its owner runs):
        True (always), False (never), None (it depends on runtime state). Unlike `branch`, every
        condition counts, vendor-related or not: under `if x > 3:` the answer is None. For flow
        questions such as "does this ROCm-only assignment always replace the earlier one"."""
        return self._path(node, within)

    def in_import_guard(self, node: ast.AST) -> bool:
        """Inside the body of a `try:` whose handlers catch ImportError (or broader) and carry on, or of
        `with suppress(ImportError):`."""
        child = node
        for ancestor in self.semantic.ancestors(node):
            if (
                isinstance(ancestor, ast.Try)
                and self._in_body(ancestor, child)
                and self._catches_import_error(ancestor)
            ):
                return True
            if (
                isinstance(ancestor, (ast.With, ast.AsyncWith))
                and self._in_body(ancestor, child)
                and self._suppresses_import_error(ancestor)
            ):
                return True
            if isinstance(ancestor, DEFS):
                return False
            child = ancestor
        return False

    def value(self, expr: ast.AST, depth: int = 0) -> Vendor:
        """The vendor value of an expression, evaluated where it stands."""
        if depth > _MAX_DEPTH:
            return UNKNOWN
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            return self.value(expr.operand, depth + 1).negate()
        if isinstance(expr, ast.BoolOp):
            return self._operands_value(expr, len(expr.values), depth)
        if isinstance(expr, (ast.Compare, ast.Call)):
            arch = gfx_name_test(self.semantic, expr)
            if arch is not None:
                return arch
        if isinstance(expr, ast.Compare):
            return self._comparison(expr, depth)
        if isinstance(expr, ast.Call):
            return self._call(expr, depth)
        if isinstance(expr, ast.Constant) and type(expr.value) is bool:
            return CONSTANT_TRUE if expr.value else CONSTANT_FALSE
        if isinstance(expr, (ast.Name, ast.Attribute)):
            if self._type_checking(expr):
                return CONSTANT_FALSE  # true for type checkers only (`if TYPE_CHECKING or not is_rocm():`)
            return arch_name_truth(self.semantic, expr) or self._reference(expr, depth)
        if isinstance(expr, ast.NamedExpr):
            return self.value(expr.value, depth + 1)  # `if (hip := torch.version.hip):`
        return UNKNOWN

    def _type_checking(self, expr: ast.Name | ast.Attribute) -> bool:
        """`typing.TYPE_CHECKING` (or typing_extensions'), False whenever the code runs."""
        written = expr.id if isinstance(expr, ast.Name) else expr.attr
        return written == "TYPE_CHECKING" and self.semantic.qualified_name(expr) in _TYPE_CHECKING

    def symbol_value(self, name: str, called: bool = False) -> Vendor | None:
        """The vendor value of a module-level name of this file (for other modules importing it); with
        `called`, the value of calling it."""
        head, _, member = name.partition(".")
        binding = self.semantic.lookup_in(self.semantic.module, head)
        if binding is None:
            return None
        if member:  # `Platform.is_mi300`, `current_platform.is_mi300` (an instance made here)
            return self._member_of(binding, member, depth=0, called=called)
        return self._binding_value(binding, name, depth=0, called=called)

    def skip_decorator(self, name: str, called: bool = False) -> Vendor | None:
        """Where a test decorated with this file's module-level `name` runs (`@name`; with `called`,
        `@name(...)`), for the modules importing it; None when it is not a vendor skip."""
        binding = self.semantic.lookup_in(self.semantic.module, name)
        if binding is None:
            return NVIDIA if any(_nvidia_only_test_decorator(f"{m}.{name}") for m in self._star_imported()) else None
        return self._defined_skip(binding, called)

    def _star_imported(self) -> list[str]:
        """The modules this file's module-level `from m import *` statements import (absolute ones: a framework's
        testing helpers re-exported by the project's own testing module)."""
        return [
            statement.module
            for statement in self.semantic.module.body
            if isinstance(statement, ast.ImportFrom)
            and statement.module
            and not statement.level
            and any(alias.name == "*" for alias in statement.names)
        ]

    def terminates(self, statements: Sequence[ast.stmt]) -> bool:
        """Does this block always leave the enclosing block (return, raise, continue, break, exit, skip)?"""
        if not statements:
            return False
        last = statements[-1]
        if isinstance(last, ast.If):
            return self.terminates(last.body) and self.terminates(last.orelse)
        if isinstance(last, (ast.With, ast.AsyncWith)):
            return self.terminates(last.body)
        if isinstance(last, COMPOUND_STATEMENTS):
            return False
        return any(self._exits(statement) for statement in last_line(statements))

    # --- conditions a child inherits from its parent -----------------------------------------------
    def _conditions(self, parent: ast.AST, child: ast.AST, indirect: bool = True) -> list[Condition]:
        """What holds where `child` runs when `parent` does; without `indirect`, only what is written around it: not
        where a def is called from (`_caller_conditions`), nor whether a variable's reads are all ignored on ROCm
        (`_ignored_on_rocm`), which read other code (and other modules) and only ever add "not on ROCm"."""
        if not isinstance(child, ast.stmt):
            return self._expression_conditions(parent, child) + self._definition_conditions(parent, child, indirect)
        block = self._block_of(parent, child)
        return self._block_conditions(parent, block, indirect) + self._conditions_before(block, child)

    def _expression_conditions(self, parent: ast.AST, child: ast.AST) -> list[Condition]:
        """What holds where an expression's part is evaluated: a conditional expression's arm, an
        `and`/`or` operand after the first, a comprehension's element, an NVIDIA record of a device registry."""
        if isinstance(parent, ast.IfExp):
            if child is parent.body:
                return [(self.value(parent.test), True)]
            return [(self.value(parent.test), False)] if child is parent.orelse else []
        if isinstance(parent, ast.BoolOp):
            return self._operand_conditions(parent, child)
        if isinstance(parent, (ast.ListComp, ast.SetComp, ast.GeneratorExp)) and child is parent.elt:
            return self._comprehension_conditions(parent.generators)
        if isinstance(parent, ast.DictComp) and (child is parent.key or child is parent.value):
            return self._comprehension_conditions(parent.generators)
        if isinstance(parent, (ast.List, ast.Tuple)) and isinstance(child, ast.Call):
            return self._record_conditions(parent, child)
        return []

    def _record_conditions(self, records: ast.List | ast.Tuple, record: ast.Call) -> list[Condition]:
        """An NVIDIA record listed after a ROCm one in a device registry is never chosen on ROCm
        (rocmlint/python/vendor_records.py)."""
        nvidia_only = self._nvidia_records.get(records)
        if nvidia_only is None:
            nvidia_only = self._nvidia_records[records] = nvidia_records_after_rocm(records)
        return [(OFF_ROCM, True)] if record in nvidia_only else []

    def _block_conditions(self, parent: ast.AST, block: list[ast.stmt], indirect: bool = True) -> list[Condition]:
        """What holds whenever `parent` runs its statement list `block` (the branch of an `if`, a loop's
        body, a function's body)."""
        if isinstance(parent, ast.If):
            if block is parent.body:
                if self._rocm_arm_follows(parent):
                    return [(OFF_ROCM, True)]
                return [(self._if_test_value(parent), True)]
            return [(self._if_test_value(parent), False)] if block is parent.orelse else []
        if isinstance(parent, ast.While) and block is parent.body:
            return [(self.value(parent.test), True)]
        if isinstance(parent, FUNCTION_DEFS) and block is parent.body:
            if not indirect:
                return self._test_skip_conditions(parent)
            # Callers only ever add "not on ROCm", which a def the project reaches only on NVIDIA already has.
            chosen = self._chosen_conditions(parent) or self._idle_benchmark_conditions(parent)
            return self._test_skip_conditions(parent) + (chosen or self._caller_conditions(parent))
        return []

    def _chosen_conditions(self, function: FunctionNode) -> list[Condition]:
        """A def of a module whose defs the project reaches only on NVIDIA (`ReadElsewhere.definitions_only_on_nvidia`:
        a registry keyed by vendor chooses its folder, or only the NVIDIA platform class chooses it) runs only there,
        unless this module calls it, or makes the class it is a method of, at import: module-level code runs wherever
        the module is imported."""
        if not self._definitions_only_on_nvidia(self._top_level_name(function)) or self._called_at_import(function):
            return []
        return [(NVIDIA, True)]

    def _idle_benchmark_conditions(self, function: FunctionNode) -> list[Condition]:
        """A method of a benchmark class whose every registered benchmark is switched off on ROCm
        (`@register_benchmark(enabled=HAS_CUTLASS)`, the flag set only under `if is_cuda():`): the class's other
        methods (its inputs, metrics) only feed benchmarks that never run there, so nothing they make counts on ROCm."""
        owner = self.semantic.parent(function)
        if not isinstance(owner, ast.ClassDef):
            return []
        if owner not in self._idle_on_rocm:
            self._idle_on_rocm[owner] = False  # asked again while deciding it (a switch read in the class)
            self._idle_on_rocm[owner] = self._every_registration_off_rocm(owner)
        return [(OFF_ROCM, True)] if self._idle_on_rocm[owner] else []

    def _every_registration_off_rocm(self, cls: ast.ClassDef) -> bool:
        """`cls` registers methods with a decorator that takes a switch (`enabled=`), and every method it decorates,
        with a switch or without one (`@register_benchmark()`: always on), is switched off on ROCm."""
        decorated = [
            (dotted_name(decorator.func if isinstance(decorator, ast.Call) else decorator), decorator)
            for method in cls.body
            if isinstance(method, FUNCTION_DEFS)
            for decorator in method.decorator_list
        ]
        registering = {
            name
            for name, decorator in decorated
            if isinstance(decorator, ast.Call) and any(k.arg in _SWITCH_KEYWORDS for k in decorator.keywords)
        }
        registrations = [decorator for name, decorator in decorated if name in registering]
        if not registrations:
            return False
        for decorator in registrations:
            switch = self._registration_switch(decorator) if isinstance(decorator, ast.Call) else None
            if switch is None or switch.rocm is not False:
                return False
        return True

    def _definitions_only_on_nvidia(self, name: str) -> bool:
        if self.read_elsewhere is None:
            return False
        known = self._chosen_definitions.get(name)
        if known is None:
            known = self._chosen_definitions[name] = self.read_elsewhere.definitions_only_on_nvidia(name)
        return known

    def _top_level_name(self, function: FunctionNode) -> str:
        """The name of the module-level def or class `function` sits in (its own for a module-level def)."""
        outermost: FunctionNode | ast.ClassDef = function
        for ancestor in self.semantic.ancestors(function):
            if isinstance(ancestor, (*FUNCTION_DEFS, ast.ClassDef)):
                outermost = ancestor
        return outermost.name

    def _called_at_import(self, function: FunctionNode) -> bool:
        """This module calls `function`, or the class it is a method of, outside every def and lambda."""
        owner = self.semantic.parent(function)
        calls = self.references.calls_of(function)
        if isinstance(owner, ast.ClassDef):
            calls += self.references.calls_of(owner)
        return any(
            not any(isinstance(ancestor, (*FUNCTION_DEFS, ast.Lambda)) for ancestor in self.semantic.ancestors(call))
            for call in calls
        )

    def _block_of(self, parent: ast.AST, statement: ast.stmt) -> list[ast.stmt]:
        """The statement list of `parent` that holds `statement` (every list of a parent indexed at once:
        a block asks for each of its statements, and finding one in a long list is a search)."""
        block = self._blocks.get(statement)
        if block is None:
            for field_name in _STATEMENT_FIELDS:
                statements = getattr(parent, field_name, None)
                if type(statements) is list:
                    self._blocks.update(dict.fromkeys(statements, statements))
            block = self._blocks[statement]
        return block

    def _in_body(self, parent: ast.AST, child: ast.AST) -> bool:
        return isinstance(child, ast.stmt) and self._block_of(parent, child) is getattr(parent, "body", None)

    def _operand_conditions(self, operation: ast.BoolOp, operand: ast.AST) -> list[Condition]:
        """`a and b and c`: `c` is evaluated only where `a and b` is true (`or`: false). Computed for
        every operand at once: finding one in a long chain is a search."""
        if operand not in self._operand_cache:
            taken = isinstance(operation.op, ast.And)
            self._operand_cache[operation.values[0]] = []
            for index in range(1, len(operation.values)):
                self._operand_cache[operation.values[index]] = [(self._operands_value(operation, index, 0), taken)]
        return self._operand_cache.get(operand, [])

    def _operands_value(self, operation: ast.BoolOp, count: int, depth: int) -> Vendor:
        """The value of the first `count` operands of `operation`. They are evaluated as the operator
        groups them (`a and b and c` is `(a and b) and c`), each operation one level deeper than the one
        around it: past `_MAX_DEPTH` a long chain's first operands are unknown, and cost nothing."""
        last = count - 1
        first = max(1, last + depth - _MAX_DEPTH)  # the outermost operations whose operands are evaluated
        conjunction = isinstance(operation.op, ast.And)
        present = conjunction and self._beside_vendor_test(operation, depth + 1)
        combined = self._operand_value(operation.values[0], depth + last, present) if first == 1 else UNKNOWN
        for index in range(first, count):
            operand = self._operand_value(operation.values[index], depth + last - index + 1, present)
            combined = combined.both(operand) if conjunction else combined.either(operand)
        return combined

    def _operand_value(self, operand: ast.expr, depth: int, gpu_present: bool) -> Vendor:
        """An operand's value; with `gpu_present`, a GPU-presence test (`torch.cuda.is_available()`) is true:
        `is_available() and torch.version.hip is not None` asks "a ROCm GPU?", and the code it leaves out when
        no GPU is present is no GPU code, so its `else:` is NVIDIA's."""
        if gpu_present and self.is_gpu_presence_test(operand):
            return CONSTANT_TRUE
        return self.value(operand, depth)

    def _beside_vendor_test(self, conjunction: ast.BoolOp, depth: int) -> bool:
        """`conjunction` holds a GPU-presence test and, among its other operands, a vendor test."""
        presence = [operand for operand in conjunction.values if self.is_gpu_presence_test(operand)]
        if not presence or len(presence) == len(conjunction.values):
            return False
        return any(
            self.value(operand, depth).is_vendor_test for operand in conjunction.values if operand not in presence
        )

    def is_gpu_presence_test(self, expr: ast.AST) -> bool:
        """`torch.cuda.is_available()`: true wherever a GPU of either vendor is present."""
        return (
            isinstance(expr, ast.Call)
            and not expr.args
            and self.semantic.qualified_name(expr.func) in _GPU_PRESENCE_TESTS
        )

    # --- variables only read where ROCm ignores them ------------------------------------------------
    def _definition_conditions(self, parent: ast.AST, child: ast.AST, indirect: bool = True) -> list[Condition]:
        """`_has_sm80 = <capability test>` whose every read is `is_cuda() and _has_sm80`, sits in an
        NVIDIA-only branch or after a ROCm exit: on ROCm the value never decides anything, so computing
        it is as gated as its reads (a hazard in it cannot reach ROCm). Flags defined from flags chain:
        a read inside another such definition is gated by it. A test's parametrize lists only feed the
        test, so they run where its skip decorators let it, and where its body gets to their first read (after
        `if not <NVIDIA test>: self.skipTest(...)`); a def's default values, where it is called."""
        if isinstance(parent, FUNCTION_DEFS) and _is_parametrize(child):
            return self._test_skip_conditions(parent) + self._conditions_before_parameters_read(parent)
        if isinstance(parent, FUNCTION_DEFS) and child in parent.decorator_list and _is_skip_decorator(child):
            return self._enclosing_skip_conditions(parent)
        if isinstance(parent, ast.arguments) and (child in parent.defaults or child in parent.kw_defaults):
            owner = self.semantic.parent(parent)  # a default only reaches the body, so only where it is called
            return self._caller_conditions(owner) if indirect and isinstance(owner, FUNCTION_DEFS) else []
        if not indirect or not isinstance(parent, (ast.Assign, ast.AnnAssign)) or child is not parent.value:
            return []
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        if all(isinstance(target, ast.Name) and self._ignored_on_rocm(target) for target in targets):
            return [(OFF_ROCM, True)]
        return []

    def _ignored_on_rocm(self, target: ast.Name) -> bool:
        """Whether every read of the variable `target` assigns is ignored on ROCm: a def's local, or a module
        variable that is private (`_x`) or that no module of the project importing this one may read (a
        class attribute is read as `self.x`, which is not followed)."""
        binding = self.semantic.lookup(target.id, target)
        if binding is None or binding.kind != "value":
            return False
        scope = binding.scope.node
        if not isinstance(scope, (ast.Module, *FUNCTION_DEFS)):
            return False
        ignored = self._every_read_ignored_on_rocm(target.id, scope)
        if ignored and scope is self.semantic.module:
            return self.unread_by_importers(target.id)
        return ignored

    def unread_by_importers(self, name: str) -> bool:
        """No module of the project that imports this one may read this module's module-level `name`: it is
        private (`_x`), or the project index finds no read of it (unknown, so False, without a project)."""
        if name.startswith("_"):
            return True
        return self.read_elsewhere is not None and not self.read_elsewhere(name)

    def _every_read_ignored_on_rocm(self, identifier: str, scope: ast.AST) -> bool:
        """At least one read in this file, and every one ignored on ROCm (decided once per variable)."""
        key = (scope, identifier)
        known = self._ignored_variables.get(key)
        if known is not None:
            return known
        if self._variable_nesting >= _MAX_VARIABLE_NESTING:
            return False  # too deep to decide on this stack: not gated
        self._ignored_variables[key] = False  # asked again while deciding it (a cycle of flags): not gated
        self._variable_nesting += 1
        ignored: bool | None = None
        try:
            ignored = self._reads_ignored_on_rocm(identifier, scope)
        finally:
            self._variable_nesting -= 1
            if ignored is None:  # a caller question deferred through here (_CallerDeferred): asked again later
                del self._ignored_variables[key]
            else:
                self._ignored_variables[key] = ignored
        return ignored

    def _reads_ignored_on_rocm(self, identifier: str, scope: ast.AST) -> bool:
        """At least one read, and every read ignored on ROCm (stops at the first that is not)."""
        read_at_all = False
        for read in self._reads_within(identifier, scope):
            if not self._reads_variable(read, scope):
                continue
            if not self._read_ignored_on_rocm(read):
                return False
            read_at_all = True
        return read_at_all

    def _reads_within(self, identifier: str, scope: ast.AST) -> list[ast.Name]:
        """The reads spelled `identifier` in the lines of `scope` (a def's locals are read in it: a common
        name is read in every def of a long module, and resolving each read is a walk)."""
        reads = self.references.reads(identifier)
        if not isinstance(scope, FUNCTION_DEFS):
            return reads
        first, last = scope.lineno, scope.end_lineno or scope.lineno
        return [read for read in reads if first <= read.lineno <= last]

    def _reads_variable(self, read: ast.Name, scope: ast.AST) -> bool:
        """`read` reads the variable of `scope`, and not only to assign it again (`_flag = _flag and x`)."""
        binding = self.semantic.lookup(read.id, read)
        if binding is None or binding.scope.node is not scope:
            return False
        statement = self.semantic.statement_of(read)
        if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            return not any(isinstance(target, ast.Name) and target.id == read.id for target in targets)
        return True

    def _read_ignored_on_rocm(self, read: ast.Name) -> bool:
        """On ROCm the read never runs, or the `and`/`or` around it decides without it (`_flag and is_cuda()`
        is false there, `is_rocm() or _flag` true)."""
        return self.decided_on_rocm_without(read) or self.never_on_rocm(read)

    def decided_on_rocm_without(self, node: ast.AST) -> bool:
        """An `and`/`or` holding `node` (through `not` and nested chains) has another operand that decides it on
        ROCm: one true on ROCm in an `or` (`major >= 8 or SYSTEM == "rocm"`), one false on ROCm in an `and`;
        what `node` says does not change the chain's value there."""
        operand = node
        for parent in self.semantic.ancestors(node):
            if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
                operand = parent
                continue
            if not isinstance(parent, ast.BoolOp):
                return False
            deciding = isinstance(parent.op, ast.Or)  # the value an operand decides the operation with
            if any(self.value(other).rocm is deciding for other in parent.values if other is not operand):
                return True
            operand = parent
        return False

    # --- callers: the call graph, one function at a time --------------------------------------------
    def _caller_conditions(self, function: FunctionNode) -> list[Condition]:
        """A function that this file only ever calls from code that never runs on ROCm, and only uses as a
        value there, does not run on ROCm either: `def cuda_version(): ...` called under `if
        torch.version.cuda:`, the NVIDIA arm of `sync = _sync_rocm if torch.version.hip else _sync_cuda`,
        `autotune(prune_configs_by=...)` under `if torch.version.hip is None:` (a value that is never made on
        ROCm is never called there). Recursive functions (directly or through others) are left alone.

        Answers are memoised. Deciding one function asks where its callers run, so a chain of calls
        f1 -> f2 -> ... -> f3000 nests that deep: past `_MAX_CALLER_NESTING` functions the innermost
        question is deferred (`_CallerDeferred`) and answered first by the outermost call, which then
        asks again, so the Python stack stays bounded whatever the chain."""
        known = self._callers.get(function)
        if known is not None:
            return known
        if function in self._on_caller_path:  # asked again while deciding it: a cycle of calls
            self._recursive.update(self._caller_path[self._caller_path.index(function) :])
            return []
        if self._caller_nesting >= _MAX_CALLER_NESTING:
            raise _CallerDeferred(function, list(self._caller_path))
        if self._caller_nesting > 0:
            return self._decide_callers(function)
        return self._settle_callers(function)

    def _settle_callers(self, function: FunctionNode) -> list[Condition]:
        """Decide `function`, deciding first every deeper function a deferral names (a stack of pending
        questions, each with the chain of functions being decided when it was asked, for cycles)."""
        pending: list[tuple[FunctionNode, list[FunctionNode]]] = [(function, [])]
        while pending:
            current, path = pending[-1]
            if current in self._callers:
                pending.pop()
                continue
            self._caller_path, self._on_caller_path = list(path), set(path)
            try:
                self._decide_callers(current)
            except _CallerDeferred as deferred:
                pending.append((deferred.function, deferred.path))
        self._caller_path, self._on_caller_path = [], set()
        return self._callers[function]

    def _decide_callers(self, function: FunctionNode) -> list[Condition]:
        self._caller_path.append(function)
        self._on_caller_path.add(function)
        self._caller_nesting += 1
        try:
            found = self._conditions_from_callers(function)
        finally:
            self._caller_path.pop()
            self._on_caller_path.discard(function)
            self._caller_nesting -= 1
        result = [] if function in self._recursive else found
        self._callers[function] = result
        return result

    def _conditions_from_callers(self, function: FunctionNode) -> list[Condition]:
        if function in self._recursive:
            return []
        uses = self.references.uses_of(function)
        if any(self._in_script_entry(use) for use in uses):
            return [(OFF_ROCM, True)] if self._script_tested_only_off_rocm(function, uses) else []
        if not uses:
            if self._uncalled_test_helper(function):
                return [(OFF_ROCM, True)]  # it runs nowhere, so not on ROCm
            return [(OFF_ROCM, True)] if self._used_elsewhere_only_off_rocm(function) else []
        if any(function in self.semantic.ancestors(use) for use in uses):
            return []
        if all(self.never_on_rocm(call) for call in uses):
            return [(OFF_ROCM, True)]
        return []

    def _script_tested_only_off_rocm(self, function: FunctionNode, uses: list[ast.expr]) -> bool:
        """A module-level def the file's `if __name__ == "__main__":` block calls (a script's entry point, run by
        hand) that the rest of the project only ever calls off ROCm: the modules importing it read it only where
        ROCm never runs (`example.main()` in a test skipped unless on NVIDIA, `@requires_cuda`) and this file's
        other uses are off ROCm too. The project runs the script on NVIDIA alone, so it is an NVIDIA script;
        a script no other module reads, or one a test also calls on ROCm, is left to its own gates."""
        if self.read_elsewhere is None or self.semantic.parent(function) is not self.semantic.module:
            return False
        others = [use for use in uses if not self._in_script_entry(use)]
        if any(function in self.semantic.ancestors(use) for use in others):
            return False  # recursive
        if not all(self.never_on_rocm(use) for use in others):
            return False
        return self.read_elsewhere.only_off_rocm(function.name) or self._script_read_only_off_rocm

    @cached_property
    def _script_read_only_off_rocm(self) -> bool:
        """The modules importing this file read some of its module-level defs and classes, each only off ROCm
        (`from example import main` called in a test skipped unless on NVIDIA): the project runs none of the
        script's code on ROCm, so its `__main__` block (calling the defs `main` calls, not `main`) is NVIDIA's too."""
        elsewhere = self.read_elsewhere
        if elsewhere is None:
            return False
        defined = [statement.name for statement in self.semantic.module.body if isinstance(statement, DEFS)]
        read = [name for name in defined if elsewhere(name)]
        return bool(read) and all(elsewhere.only_off_rocm(name) for name in read)

    def _in_script_entry(self, node: ast.AST) -> bool:
        """`node` sits in the body of a module-level `if __name__ == "__main__":` (not its `else`)."""
        child = node
        for ancestor in self.semantic.ancestors(node):
            if ancestor is self.semantic.module:
                return False
            if self.semantic.parent(ancestor) is self.semantic.module:
                return isinstance(ancestor, ast.If) and tests_main_module(ancestor.test) and child in ancestor.body
            child = ancestor
        return False

    def _uncalled_test_helper(self, function: FunctionNode) -> bool:
        """A module-level def of a test module (one holding a test pytest collects) that pytest neither collects
        nor calls (not `test*`, no hook or setup name, no decorator), that no module importing this one may read
        and whose name the file writes nowhere else (not even in a `skipif("check()")` string): nothing runs it.
        A library's def is not one: the library's users call it."""
        if not self.in_test_suite or self.read_elsewhere is None or function.decorator_list:
            return False
        if self.semantic.parent(function) is not self.semantic.module or _pytest_may_call(function.name):
            return False
        if not any(
            isinstance(statement, FUNCTION_DEFS) and statement.name.startswith(_PYTEST_TEST_PREFIX)
            for statement in self.semantic.module.body
        ):
            return False
        written = re.findall(rf"(?<!\w){re.escape(function.name)}(?!\w)", self.semantic.source_text)
        return len(written) == 1 and not self.read_elsewhere(function.name)

    def _used_elsewhere_only_off_rocm(self, function: FunctionNode) -> bool:
        """A module-level def this file never uses, which the modules importing it only use in code that never
        runs on ROCm: `prune_configs_by = {"perf_model": estimate_time} if torch.version.hip is None else {}` in
        the module that imports `estimate_time`. Likewise a method of a module-level class this file never uses
        (a template only other modules subclass or make): its methods run on the instances those modules make;
        or of a class this file makes only off ROCm (`_instances_only_off_rocm`)."""
        owner = self.semantic.parent(function)
        if owner is self.semantic.module:
            return self.read_elsewhere is not None and self.read_elsewhere.only_off_rocm(function.name)
        if not isinstance(owner, ast.ClassDef) or self.semantic.parent(owner) is not self.semantic.module:
            return False
        return self._class_only_off_rocm(owner)

    def _class_only_off_rocm(self, owner: ast.ClassDef) -> bool:
        """The methods of a module-level class run only off ROCm: this file never uses it, or makes it only off
        ROCm (`_instances_only_off_rocm`). Reading a data attribute of the class (`Gpu._errors.get(code)`) or naming
        it in an annotation (`-> list[Gpu]`) makes no instance and runs none of its methods."""
        if any(self._decorator_name(decorator) not in _CLASS_SHAPERS for decorator in owner.decorator_list):
            return False  # registered by a decorator
        uses = [
            use
            for use in self.references.uses_of(owner)
            if not self._reads_class_data(use, owner) and not self._in_annotation(use)
        ]
        outside = [use for use in uses if not self._in_own_method(use, owner)]
        if outside:
            return self._instances_only_off_rocm(owner, outside)
        if self.read_elsewhere is not None and self.read_elsewhere.only_off_rocm(owner.name):
            return True
        return bool(uses) and self._instances_only_off_rocm(owner, uses)  # its own methods make it only off ROCm

    def _reads_class_data(self, use: ast.expr, owner: ast.ClassDef) -> bool:
        """`use` is `Owner.name` for a `name` the class body assigns (not a method), not called."""
        read = self.semantic.parent(use)
        if not isinstance(read, ast.Attribute) or read.value is not use or not isinstance(read.ctx, ast.Load):
            return False
        called = self.semantic.parent(read)
        if isinstance(called, ast.Call) and called.func is read:
            return False
        assigned = (
            target
            for statement in owner.body
            if isinstance(statement, (ast.Assign, ast.AnnAssign))
            for target in (statement.targets if isinstance(statement, ast.Assign) else [statement.target])
        )
        return any(isinstance(target, ast.Name) and target.id == read.attr for target in assigned)

    def _decorator_name(self, decorator: ast.expr) -> str:
        called = decorator.func if isinstance(decorator, ast.Call) else decorator
        return self.semantic.qualified_name(called) or ""

    def _in_annotation(self, use: ast.expr) -> bool:
        child: ast.AST = use
        for ancestor in self.semantic.ancestors(use):
            if isinstance(ancestor, ast.arg):
                return child is ancestor.annotation
            if isinstance(ancestor, ast.AnnAssign):
                return child is ancestor.annotation
            if isinstance(ancestor, FUNCTION_DEFS):
                return child is ancestor.returns
            if isinstance(ancestor, ast.stmt):
                return False
            child = ancestor
        return False

    def _in_own_method(self, use: ast.expr, owner: ast.ClassDef) -> bool:
        """`use` of the class sits in a def of its own (`return Packed(data)` in `Packed.unflatten`): it makes an
        instance only where that def runs, so where the class is used from outside."""
        for ancestor in self.semantic.ancestors(use):
            if ancestor is owner:
                return False
            if isinstance(ancestor, FUNCTION_DEFS) and self.semantic.parent(ancestor) is owner:
                return True
        return False

    def _instances_only_off_rocm(self, owner: ast.ClassDef, uses: list[ast.expr]) -> bool:
        """A class this file only makes (or names) in code that never runs on ROCm, which no class here
        derives from and the modules importing this one do not read or only read off ROCm: its methods run on
        its instances, so never on ROCm (`manager = NvidiaManager()` in the NVIDIA arm of a vendor dispatch).
        As for a def called here, a file read alone (no importers known) is taken at its word."""
        subclasses = [parent for use in uses if isinstance(parent := self.semantic.parent(use), ast.ClassDef)]
        if not all(self._subclass_only_off_rocm(subclass, owner) for subclass in subclasses):
            return False  # a base class: the subclass's instances run its methods
        made = [use for use in uses if not isinstance(self.semantic.parent(use), ast.ClassDef)]
        if not all(self.never_on_rocm(use) for use in made):
            return False
        elsewhere = self.read_elsewhere
        return elsewhere is None or not elsewhere(owner.name) or elsewhere.only_off_rocm(owner.name)

    def _subclass_only_off_rocm(self, subclass: ast.ClassDef, base: ast.ClassDef) -> bool:
        """A module-level class derived from `base` (named among its bases, not in its body) whose own methods run
        only off ROCm: its instances, which run the base's methods, are made only there."""
        if self.semantic.parent(subclass) is not self.semantic.module or subclass in self._deciding_classes:
            return False
        if not any(isinstance(named, ast.Name) and named.id == base.name for named in subclass.bases):
            return False
        self._deciding_classes.add(subclass)
        try:
            return self._class_only_off_rocm(subclass)
        finally:
            self._deciding_classes.discard(subclass)

    def _rocm_arm_follows(self, branch: ast.If) -> bool:
        """`if <cuda setup or override>: ... elif torch.version.hip: ...`: a later arm that only ROCm can
        take means the author routed ROCm there, so an earlier arm whose test is not known to hold on
        ROCm is the NVIDIA path (xformers, flash-attention setup scripts). Overrides such as
        `FORCE_CUDA=1` that would send ROCm into the first arm are taken as deliberate."""
        if self.value(branch.test).rocm is not None:
            return False
        arm = self._elif_of(branch)
        while arm is not None:
            value = self.value(arm.test)
            if value.nvidia is False and value.rocm is not False:
                return True
            arm = self._elif_of(arm)
        return False

    def _elif_of(self, branch: ast.If) -> ast.If | None:
        """The `elif` arm that follows `branch` (an `else:` block that only holds an `if` is not one)."""
        arm = branch.orelse[0] if len(branch.orelse) == 1 else None
        return arm if isinstance(arm, ast.If) and self.semantic.is_elif(arm) else None

    def _comprehension_conditions(self, generators: list[ast.comprehension]) -> list[Condition]:
        """`[f(x) for x in xs if not IS_ROCM]`: the element is only computed where every filter holds."""
        return [(self.value(test), True) for generator in generators for test in generator.ifs]

    # --- early exits: what holds after a statement that leaves the block on some path -------------
    def _conditions_before(self, block: list[ast.stmt], statement: ast.stmt) -> list[Condition]:
        """Conditions that hold when `statement` runs because earlier statements of its block exit
        otherwise. Statements written on one line (`assert t; f()`, `if t: a; b`) are one step: the
        later ones are not decided by the earlier. A block is scanned once, from its start up to the
        statements asked so far: deciding a statement never evaluates the tests written after it (a name
        assigned at the top of a module and tested further down, `if PLATFORM != "cuda": raise`, is
        decided from the assignment's conditions alone). Asked again for a later statement while one of
        the block's tests is being evaluated, the earlier exits are not known yet: none are assumed."""
        known = self._before_cache.get(statement)
        if known is not None:
            return known
        scan = self._scans.get(id(block))
        if scan is None:
            scan = self._scans[id(block)] = _BlockScan(block)
        if scan.busy:
            return []
        scan.busy = True
        try:
            while scan.next < len(block) and statement not in self._before_cache:
                item = block[scan.next]
                if scan.previous is None or scan.previous.end_lineno != item.lineno:
                    scan.line_start = list(scan.conditions)
                self._before_cache[item] = scan.line_start
                scan.next += 1
                scan.conditions.extend(self._conditions_after(item))
                scan.previous = item
        finally:
            scan.busy = False
        return self._before_cache.get(statement, [])

    def _conditions_after(self, statement: ast.stmt) -> list[Condition]:
        """`assert t` leaves `t` true; an import of a vendor-only package (or `pytest.importorskip` of
        one) raises on the other vendors, so what follows runs only where it succeeded."""
        if isinstance(statement, ast.If):
            return self._after_if(statement)
        if isinstance(statement, ast.Try):
            return self._after_try(statement)
        if isinstance(statement, ast.Assert):
            return [(self.value(statement.test), True)]
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            return [(vendor, True) for vendor in map(_package_vendor, _imported_modules(statement)) if vendor]
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            vendor = self._package_probe(statement.value) or self._program_probe(statement.value)
            if vendor is not None:
                return [(vendor, True)]
            if self._nvml_probe(statement):
                return [(NVIDIA, True)]
        if not isinstance(statement, _EVALUATING_STATEMENTS) or statement.value is None:
            return []
        calls = _always_called(statement.value)  # walked once for both questions
        return self._package_calls(calls) + self._helper_exits(calls)

    def _helper_exits(self, calls: list[ast.Call]) -> list[Condition]:
        """A simple statement that always calls (`calls`) a def of this file which never returns on ROCm (`nvcc =
        get_nvcc_path()`, whose body raises unless `shutil.which("nvcc")` found NVIDIA's compiler): what follows
        runs only off ROCm."""
        for call in calls:
            if not isinstance(call.func, ast.Name):
                continue
            binding = self.semantic.lookup(call.func.id, call.func)
            if binding is None or binding.kind != "function" or not isinstance(binding.definition, FUNCTION_DEFS):
                continue
            if not self._may_return_on_rocm(binding.definition):
                return [(OFF_ROCM, True)]
        return []

    def _may_return_on_rocm(self, function: FunctionNode) -> bool:
        """Whether a call of `function` may come back on ROCm: it is no generator, and its own `return`s, and its
        end when its last statement does not return or raise, are not all in code the conditions written around them
        keep off ROCm (a `return` after `if shutil.which("nvcc") is None: raise ...`; the end of a check that raises
        when `torch.version.hip` is set). A recursive def being decided may."""
        known = self._returns_on_rocm.get(function)
        if known is not None:
            return known
        self._returns_on_rocm[function] = True
        off_rocm = (
            not _is_generator(function)
            and self._end_off_rocm(function.body[-1])
            and all(self._written_branch(statement).on_rocm is False for statement in own_returns(function))
        )
        self._returns_on_rocm[function] = not off_rocm
        return not off_rocm

    def _end_off_rocm(self, last: ast.stmt) -> bool:
        """A def whose `last` statement returns or raises has no end of its own to reach; otherwise its end is reached
        after `last`, off ROCm when `last` runs only off ROCm or leaves a condition false on ROCm (`if
        torch.version.hip is not None: raise RuntimeError(...)`)."""
        if isinstance(last, (ast.Return, ast.Raise)):
            return True
        branch = self._written_branch(last)
        for condition, taken in self._conditions_after(last):
            branch = branch.under(condition, taken)
        return branch.on_rocm is False

    def _package_calls(self, calls: list[ast.Call]) -> list[Condition]:
        """A simple statement that always calls into a vendor-only package (`x = torch.zeros(deep_gemm.ceil_div(m,
        128))`, `q, s = get_vanilla_qk_quant(q, k)` after `from spas_sage_attn.utils import ...`) raises on the other
        vendors, whether the package's import failed there or was caught (`except ImportError: deep_gemm = None`):
        what follows runs only where the package is. Calls in a lambda, a conditional arm, a later `and`/`or`
        operand or a comprehension may not run."""
        return [(vendor, True) for vendor in self._package_call_vendors(calls)] if self._package_roots else []

    @cached_property
    def _package_roots(self) -> frozenset[str]:
        """The names the file binds to vendor-only packages (`deep_gemm`, `fp8_linear` from `q8_kernels...`), and
        to `torch` when it calls a custom operator (`torch.ops.`): the first names of the calls
        `package_call_vendors` looks up (most files have none, and most statements' calls are no such call)."""
        roots: set[str] = set()
        for node in self.semantic.parents:  # every node: by its exact type, the test the loop repeats most cheaply
            if type(node) is ast.Import:
                for alias in node.names:
                    if alias.name == "torch" or _package_vendor(alias.name) is not None:
                        roots.add(alias.asname or alias.name.split(".", 1)[0])
            elif type(node) is ast.ImportFrom and node.module and not node.level:
                if _package_vendor(node.module) is not None:
                    roots.update(alias.asname or alias.name for alias in node.names)
        if "torch.ops." not in self.semantic.source_text:
            roots.discard("torch")
        return frozenset(roots)

    def package_call_vendors(self, statement: ast.stmt) -> list[Vendor]:
        """The vendors of the vendor-only packages a simple statement always calls into (`_package_calls`): a
        callee imported from one (`deep_gemm.ceil_div`), or a custom operator named for one (`torch.ops._C.
        cutlass_scaled_mm`, a CUTLASS kernel)."""
        if not isinstance(statement, _EVALUATING_STATEMENTS) or statement.value is None or not self._package_roots:
            return []
        return self._package_call_vendors(_always_called(statement.value))

    def _package_call_vendors(self, calls: list[ast.Call]) -> list[Vendor]:
        vendors: list[Vendor] = []
        for call in calls:
            if (dotted_name(call.func) or "").split(".", 1)[0] not in self._package_roots:
                continue
            name = self.semantic.qualified_name(call.func) or ""
            operator = name.split(".")[3] if name.startswith(_CUSTOM_OPERATORS) and name.count(".") == 3 else ""
            vendor = _package_vendor(name) or (_package_vendor(operator.split("_", 1)[0]) if operator else None)
            if vendor is not None:
                vendors.append(vendor)
        return vendors

    def _program_probe(self, call: ast.Call) -> Vendor | None:
        """`subprocess.check_output(["nvidia-smi", "-L"])` (or `check_call`, `run(..., check=True)`) as a statement of
        its own raises unless the driver's program ran, so what follows runs only on its vendor (`rocm-smi`: ROCm's,
        see `_program_vendor`). Not when its
        output is kept (`out = check_output(...)`): the reads of `out` would follow the call, and the value would
        count as only read where ROCm never gets, hiding the call itself."""
        name = self.semantic.qualified_name(call.func) or ""
        checked = name == "subprocess.run" and any(
            keyword.arg == "check" and _literal_truth(keyword.value) is CONSTANT_TRUE for keyword in call.keywords
        )
        if not (checked or name in _RAISING_RUNNERS):
            return None
        vendor = self._program_vendor(self._program_run(call))
        return vendor if vendor.is_vendor_test else None

    def _program_run(self, call: ast.Call) -> str:
        """The program a runner call runs (`subprocess.call("nvidia-smi", shell=True)`, `run(["rocm-smi"])`): the
        first word of its command, without a folder; "" when it is not written out."""
        command = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "args"), None)
        if isinstance(command, (ast.List, ast.Tuple)):
            command = command.elts[0] if command.elts else None
        text = self.semantic.string_value(command) if command is not None else None
        words = text.split() if text else []
        return words[0].rsplit("/", 1)[-1] if words else ""

    def _program_exit_test(self, left: ast.expr, right: ast.expr) -> Vendor:
        """`subprocess.call("nvidia-smi", ...) == 0` (or `subprocess.run(...).returncode`, `os.system(...)`): the
        driver's program ran, which it does only on its vendor's machines (`rocm-smi` only on ROCm's)."""
        run = left if _is_zero(right) else right if _is_zero(left) else None
        if isinstance(run, ast.Attribute) and run.attr == "returncode":
            run = run.value
        if not isinstance(run, ast.Call) or self.semantic.qualified_name(run.func) not in _EXIT_CODE_RUNNERS:
            return UNKNOWN
        return self._program_vendor(self._program_run(run))

    @staticmethod
    def _program_vendor(program: str) -> Vendor:
        """The vendor whose machines have a driver's program (`nvidia-smi`: NVIDIA's; `rocm-smi`: ROCm's): where it
        is found or ran (`shutil.which("nvidia-smi")`); UNKNOWN for any other program."""
        program = program.rsplit("/", 1)[-1]
        return NVIDIA if program in _NVIDIA_PROGRAMS else ROCM if program in _ROCM_PROGRAMS else UNKNOWN

    def _nvml_probe(self, statement: ast.Expr) -> bool:
        """`pynvml.nvmlInit()` in the body of a `try:` with a handler catching its failure (`except NVMLError:`,
        `except Exception:`): a probe whether NVML answers, which it does only on NVIDIA machines, so what follows in
        the body (`return True`, `PYNVML_AVAILABLE = True`) runs only there. An unguarded call is no probe: the
        NVML calls after it fail on ROCm with it, and stay each a hazard of their own."""
        call = statement.value
        if not isinstance(call, ast.Call) or self.semantic.qualified_name(call.func) not in _NVML_INITS:
            return False
        parent = self.semantic.parent(statement)
        if not isinstance(parent, ast.Try) or statement not in parent.body:
            return False
        return any(_swallows_nvml_failure(handler) for handler in parent.handlers)

    def _package_probe(self, call: ast.Call) -> Vendor | None:
        """`importlib.util.find_spec("cutlass")` / `pytest.importorskip("cutlass")`: found only where the
        package's vendor is."""
        name = self.semantic.qualified_name(call.func) or ""
        arguments = argument_values(call)
        if name not in _PACKAGE_PROBES or not arguments:
            return None
        package = self.semantic.string_value(arguments[0])
        return _package_vendor(package) if package else None

    def _after_if(self, statement: ast.If) -> list[Condition]:
        """After `if t: <exit>` (any elif/else), `t` is false; after `if t: ... else: <exit>` (every
        later arm exiting), `t` is true. What the one arm that carries on leaves true holds after it too
        (`if torch.cuda.is_available(): from flash_attn.cute import f` `else: raise ImportError`)."""
        if self.terminates(statement.body):
            after = [(self._if_test_value(statement), False)]
            arm = self._elif_of(statement)
            after.extend(self._after_if(arm) if arm is not None else self._after_block(statement.orelse))
            return after
        if self.terminates(statement.orelse):
            return [(self._if_test_value(statement), True), *self._after_block(statement.body)]
        return []

    def _if_test_value(self, statement: ast.If) -> Vendor:
        """The value of an `if`'s test; a GPU-presence test whose body tests the vendor (`if
        torch.cuda.is_available():` then `if torch.version.hip: return DeviceType.ROCm`) is true, as in
        `is_available() and torch.version.hip` (`_operand_value`): what it leaves out is no GPU code."""
        if self.is_gpu_presence_test(statement.test) and any(
            isinstance(inner, ast.If) and self.value(inner.test).is_vendor_test for inner in statement.body
        ):
            return CONSTANT_TRUE
        return self.value(statement.test)

    def _after_try(self, statement: ast.Try) -> list[Condition]:
        """When every handler of a `try` leaves the block (`except ImportError: raise`), what follows runs only
        where the body (and its `else:`) ran to its end: what they leave true holds after it (an import of a
        vendor-only package that a handler re-raises is as unguarded as one written alone)."""
        if not all(self.terminates(handler.body) for handler in statement.handlers):
            return []
        return self._after_block(statement.body) + self._after_block(statement.orelse)

    def _after_block(self, block: list[ast.stmt]) -> list[Condition]:
        return [condition for item in block for condition in self._conditions_after(item)]

    def _exits(self, statement: ast.stmt) -> bool:
        if isinstance(statement, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            return True
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            name = self.semantic.qualified_name(statement.value.func) or ""
            return name in _TERMINATING_CALLS or name.endswith(".skipTest")
        return False

    def _conditions_before_parameters_read(self, function: FunctionNode) -> list[Condition]:
        """The conditions before the first statement of a test's body that reads one of its parameters (`self` and
        `cls` aside): the values a parametrize decorator passes in reach nothing before it. None when no statement
        reads one."""
        names = {argument.arg for argument in (*function.args.posonlyargs, *function.args.args)}
        names.update(argument.arg for argument in function.args.kwonlyargs)
        names -= {"self", "cls"}
        for statement in function.body:
            if any(isinstance(node, ast.Name) and node.id in names for node in ast.walk(statement)):
                return self._conditions_before(function.body, statement)
        return []

    # --- test-skip decorators and `pytestmark` ----------------------------------------------------
    def _test_skip_conditions(self, function: FunctionNode) -> list[Condition]:
        """A test's body runs only where its skip decorators (and its class's, and `pytestmark`) let it.
        A class's decorators gate its methods, not the class body, which runs at import everywhere."""
        return self._decorator_conditions(function.decorator_list) + self._enclosing_skip_conditions(function)

    def _enclosing_skip_conditions(self, function: FunctionNode) -> list[Condition]:
        """The skip decorators of a test's class and the `pytestmark` of its class and module: a test's own skip
        decorator only decides where they let the test run."""
        conditions: list[Condition] = []
        owner = self.semantic.enclosing_scope_node(function)
        if isinstance(owner, ast.ClassDef):
            conditions.extend(self._decorator_conditions(owner.decorator_list))
            conditions.extend(self._pytestmark_conditions(owner))
            owner = self.semantic.enclosing_scope_node(owner)
        if owner is self.semantic.module:
            conditions.extend(self._pytestmark_conditions(owner))
        return conditions

    def _decorator_conditions(self, decorators: Sequence[ast.expr]) -> list[Condition]:
        found = (self._skip_condition(decorator) for decorator in decorators)
        return [condition for condition in found if condition is not None]

    def _pytestmark_conditions(self, scope_node: ast.Module | ast.ClassDef) -> list[Condition]:
        binding = self.semantic.lookup_in(scope_node, "pytestmark")
        if binding is None or binding.kind != "value":
            return []
        marks: list[ast.expr] = []
        for value in binding.values:
            if isinstance(value, (ast.List, ast.Tuple)):
                marks.extend(unstarred(element) for element in value.elts)
            else:
                marks.append(value)
        found = (self._skip_condition(mark) for mark in marks if isinstance(mark, ast.Call))
        return [condition for condition in found if condition is not None]

    def _skip_condition(self, expr: ast.expr) -> Condition | None:
        """`@skipIfRocm` -> runs where ROCm is false; `@unittest.skipIf(c, ...)` -> where `c` is false."""
        call = expr if isinstance(expr, ast.Call) else None
        name = dotted_name(call.func if call is not None else expr) or ""
        key = name.rsplit(".", 1)[-1].replace("_", "").lower()
        if _SKIPS_ON_ROCM.match(key):
            return (ROCM, False)
        if _RUNS_ONLY_ON_ROCM.match(key):
            return (ROCM, True)
        if call is not None and key in ("skipif", "skipunless"):
            argument = self.semantic.argument(call, "condition", 0)
            if argument is not None:
                return (self.value(argument), key == "skipunless")
            return None
        switch = self._registration_switch(call) if call is not None else None
        if switch is not None:
            return (switch, True)
        if _nvidia_only_test_decorator(self.semantic.qualified_name(call.func if call is not None else expr)):
            return (NVIDIA, True)
        runs = self._project_skip(call.func if call is not None else expr, call is not None)
        return (runs, True) if runs is not None else None

    # --- skip decorators the project defines, recognised by what they do ----------------------------
    def _project_skip(self, decorator: ast.expr, called: bool) -> Vendor | None:
        """Where a test decorated with a name of the project runs: `requires_cuda = pytest.mark.skipif(not
        <NVIDIA test>, ...)`, a def returning such a mark or applying one, a wrapper that calls the test only
        after a vendor test, in this file or (through the import) another module of the project."""
        if isinstance(decorator, ast.Name):
            binding = self.semantic.lookup(decorator.id, decorator)
            return self._defined_skip(binding, called) if binding is not None else None
        if not isinstance(decorator, ast.Attribute):
            return None
        head = (dotted_name(decorator) or "").split(".", 1)[0]
        binding = self.semantic.lookup(head, decorator) if head else None
        qualified = self.semantic.qualified_name(decorator)
        if binding is None or binding.kind != "import" or qualified is None:
            return None
        return self._external_skip(qualified, called)

    def _registration_switch(self, call: ast.Call) -> Vendor | None:
        """`@register_benchmark(enabled=is_cuda())`: a decorator switched on by a vendor test registers the
        function only where the test holds, so it runs only there."""
        for keyword in call.keywords:
            if keyword.arg in _SWITCH_KEYWORDS:
                value = self.value(keyword.value)  # a constant is a default users override, not a vendor's
                return value if value.is_vendor_test and value not in (CONSTANT_TRUE, CONSTANT_FALSE) else None
        return None

    def _external_skip(self, qualified: str, called: bool) -> Vendor | None:
        if self.resolve_external is None or "." not in qualified or qualified.startswith(("torch.", "pytest.")):
            return None
        return self.resolve_external.skip(qualified + ("()" if called else ""))

    def _defined_skip(self, binding: Binding, called: bool) -> Vendor | None:
        key = (*_binding_key(binding), called)
        if key in self._skips:
            return self._skips[key]
        self._skips[key] = None  # breaks cycles (`a = b`, `b = a`)
        runs = self._bound_skip(binding, called)
        self._skips[key] = runs if runs is not None and runs.is_vendor_test else None
        return self._skips[key]

    def _bound_skip(self, binding: Binding, called: bool) -> Vendor | None:
        if binding.kind == "import" and binding.qualified:
            found = self._external_skip(binding.qualified, called)
            if (
                found is not None
                or self.resolve_external is None
                or self.resolve_external.in_project(binding.qualified)
            ):
                return found  # a decorator of the tree is judged by what it does, not by its name
            return _requirement_with_rocm_counterpart(binding)
        if binding.kind == "value" and not called and binding.single is not None:
            return _runs_where(self._skip_condition(binding.single))
        if binding.kind != "function" or not isinstance(binding.definition, FUNCTION_DEFS):
            return None
        if called:  # a factory: `def requires_sm90(): return pytest.mark.skipif(...)`, or returning a decorator
            return self._only_return_skip(binding.definition, self._made_decorator_skip)
        return self._applied_skip(binding.definition)

    def _only_return_skip(self, function: FunctionNode, skip_of: Callable[[ast.expr], Vendor | None]) -> Vendor | None:
        """What the single value `function` returns does as a skip (`skip_of`); None unless exactly one."""
        values = [statement.value for statement in own_returns(function) if statement.value is not None]
        return skip_of(values[0]) if len(values) == 1 else None

    def _made_decorator_skip(self, value: ast.expr) -> Vendor | None:
        """A factory's return value: a skip mark (`pytest.mark.skipif(...)`, `unittest.skipUnless(...)`) or
        a decorator def of its own."""
        inner = self._local_def(value)
        if inner is not None:
            return self._applied_skip(inner)
        return _runs_where(self._skip_condition(value)) if isinstance(value, ast.Call) else None

    def _applied_skip(self, decorator: FunctionNode) -> Vendor | None:
        """A def applied to the test itself: it returns the test under a skip mark (`return
        unittest.skipUnless(<NVIDIA test>, ...)(func)`), or a wrapper calling the test only where a vendor test
        holds (`if not is_cuda(): pytest.skip(...)` / `return` first)."""
        parameters = decorator.args.posonlyargs + decorator.args.args
        if not parameters:
            return None
        test = parameters[0].arg

        def skip_of(value: ast.expr) -> Vendor | None:
            if isinstance(value, ast.Call) and _passes_only(value, test):
                return _runs_where(self._skip_condition(value.func))
            wrapper = self._local_def(value)
            return self._wrapper_skip(wrapper, test) if wrapper is not None else None

        return self._only_return_skip(decorator, skip_of)

    def _wrapper_skip(self, wrapper: FunctionNode, test: str) -> Vendor | None:
        """Where the wrapper calls the test it wraps: its path to the single call of `test`."""
        calls = [
            node
            for node in ast.walk(wrapper)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == test
        ]
        if len(calls) != 1:
            return None
        path = self._path(calls[0], wrapper.body)
        return path if path.is_vendor_test else None

    def _local_def(self, value: ast.expr) -> FunctionNode | None:
        """The def a returned name is bound to in the returning function (`return wrapper`)."""
        if not isinstance(value, ast.Name):
            return None
        binding = self.semantic.lookup(value.id, value)
        if binding is None or binding.kind != "function" or not isinstance(binding.definition, FUNCTION_DEFS):
            return None
        return binding.definition

    # --- expression forms --------------------------------------------------------------------------
    def _comparison(self, expr: ast.Compare, depth: int) -> Vendor:
        """What the strings the operands hold per vendor decide (`PLATFORM == "cuda"`, vendor_values.py),
        and where they decide nothing, what the comparison's written form says (`x == "rocm"`)."""
        written = self._written_comparison(expr, depth)
        if not written.is_vendor_test and self.in_test_suite:
            written = self._capability_in_test_suite(expr)
        vendor_valued = self.vendor_values.comparison(expr)
        if vendor_valued is None:
            return written
        return Vendor(
            written.rocm if vendor_valued.rocm is None else vendor_valued.rocm,
            written.nvidia if vendor_valued.nvidia is None else vendor_valued.nvidia,
        )

    def _capability_in_test_suite(self, expr: ast.Compare) -> Vendor:
        """A capability comparison in a test suite with the same value on every CDNA GPU (`major in (10, 12)`,
        `cap >= (10, 0)`): decided there on ROCm, unknown on NVIDIA."""
        if "capability" not in self.semantic.source_text and "get_device_properties" not in self.semantic.source_text:
            return UNKNOWN
        found = on_every_cdna_gpu(self.semantic, self._values, expr)
        return UNKNOWN if found is None else Vendor(found, None)

    def _written_comparison(self, expr: ast.Compare, depth: int) -> Vendor:
        if len(expr.ops) != 1:
            return UNKNOWN
        operator, right = expr.ops[0], expr.comparators[0]
        if is_none(right) or is_none(expr.left):
            subject = expr.left if is_none(right) else right
            value = self.value(subject, depth + 1)
            if isinstance(operator, (ast.IsNot, ast.NotEq)):
                return value
            if isinstance(operator, (ast.Is, ast.Eq)):
                return value.negate()
            return UNKNOWN
        if isinstance(operator, (ast.In, ast.NotIn)):
            value = self._version_string_test(expr.left, right)
            return value.negate() if isinstance(operator, ast.NotIn) else value
        if type(operator) in _ORDERINGS:
            return self._ordering(expr.left, operator, right)
        ran = self._program_exit_test(expr.left, right) if isinstance(operator, (ast.Eq, ast.NotEq)) else UNKNOWN
        if ran.is_vendor_test:
            return ran.negate() if isinstance(operator, ast.NotEq) else ran
        literal = _string(right) or _string(expr.left)
        subject = expr.left if _string(right) is not None else right
        if literal is not None and isinstance(operator, (ast.Eq, ast.NotEq)):
            value = self._backend_comparison(subject, literal)
            return value.negate() if isinstance(operator, ast.NotEq) else value
        return UNKNOWN

    def _ordering(self, left: ast.expr, operator: ast.cmpop, right: ast.expr) -> Vendor:
        """`CUDA_VERSION >= (12, 3)` after `CUDA_VERSION = parse(torch.version.cuda) if torch.version.cuda else
        (0, 0)`: an operand that is a number or tuple literal on a vendor (the arm of a vendor test that vendor
        takes), compared with a literal, is decided there. Constants compared with constants decide nothing."""
        sides = [self._literal_arms(side) for side in (left, right)]
        if not any(arms is not None for arms in sides):
            return UNKNOWN
        per_vendor = [
            arms or (_number_literal(side), _number_literal(side))
            for arms, side in zip(sides, (left, right), strict=True)
        ]
        compare = _ORDERINGS[type(operator)]
        return Vendor(
            _compared(compare, per_vendor[0][0], per_vendor[1][0]),
            _compared(compare, per_vendor[0][1], per_vendor[1][1]),
        )

    def _literal_arms(self, expr: ast.expr) -> tuple[object, object] | None:
        """The number or tuple literal a conditional expression gives on ROCm and on NVIDIA (None for a vendor
        whose arm is no such literal or not decided), followed through a name assigned once; None when `expr`
        is no conditional expression with a vendor test."""
        value = self.semantic.single_value(expr)
        if not isinstance(value, ast.IfExp):
            return None
        test = self.value(value.test)
        if not test.is_vendor_test:
            return None
        return (
            None if test.rocm is None else _number_literal(value.body if test.rocm else value.orelse),
            None if test.nvidia is None else _number_literal(value.body if test.nvidia else value.orelse),
        )

    def _version_string_test(self, needle: ast.expr, haystack: ast.expr) -> Vendor:
        """`"rocm" in torch.__version__`: ROCm wheels are versioned `2.5.1+rocm6.2`; `"nvidia" in
        torch.cuda.get_device_name().lower()`: no ROCm GPU's name has NVIDIA's in it (device_names.py)."""
        if names_nvidia_in_device_name(self.semantic, needle, haystack):
            return OFF_ROCM
        literal = _string(needle)
        if literal is None or self.semantic.qualified_name(haystack) != "torch.__version__":
            return UNKNOWN
        return ROCM if literal.lower() in ("rocm", "+rocm", "hip") else UNKNOWN

    def _backend_comparison(self, subject: ast.expr, literal: str) -> Vendor:
        """`== "rocm"`/`"hip"` compares a build target or backend with ROCm's name (`BUILD_TARGET ==
        "rocm"`, Triton's `get_current_target().backend == "hip"`, a platform switch's `PLATFORM == "amd_rocm"`
        among other vendors' values). `== "cuda"` is NVIDIA-only for Triton's backend alone: build targets such
        as vLLM's `VLLM_TARGET_DEVICE` are "cuda" on ROCm too."""
        if not _ROCM_TARGET_NAMES.isdisjoint(_VALUE_WORD.findall(literal.lower())):
            return ROCM
        if literal in _OTHER_DEVICE_TYPES and _names_a_device_type(subject):
            return NEITHER  # `x.device.type == "xpu"`: a ROCm GPU's device type is "cuda"
        if literal.lower() == _GPU_FREE_PLATFORM and self._names_the_platform(subject):
            return NEITHER  # `sys.platform == "darwin"`, `platform.system() == "Darwin"`
        if literal.lower() in _WINDOWS_PLATFORMS and self._names_the_platform(subject):
            return OFF_ROCM  # `os.name == "nt"`, `sys.platform == "win32"`, `platform.system() == "Windows"`
        if literal == "cuda" and isinstance(subject, ast.Attribute) and subject.attr == "backend":
            return NVIDIA
        if _CUDA_TAG.match(literal) and self._names_a_cuda_tag(subject, prefix=True):
            return NVIDIA  # `CU_VERSION == "cu118"`, `CU_VERSION[:2] != "cu"`
        if literal.lower() in _SWITCH_ON and isinstance(subject, ast.Call) and subject.args:
            if self.semantic.qualified_name(subject.func) in _ENVIRONMENT_READS:
                return self._environment_switch(subject.args[0])  # `os.getenv("USE_ROCM") == "1"`
        return UNKNOWN

    def _names_a_cuda_tag(self, subject: ast.expr, prefix: bool) -> bool:
        """`subject` reads a CUDA build-variant variable (`_CUDA_TAG_VARIABLE`): a name or attribute, an environment
        read of one (`os.environ["CU_VERSION"]`, `os.getenv("CU_VERSION")`), with `prefix`: or its leading slice
        (`CU_VERSION[:2]`)."""
        if prefix and isinstance(subject, ast.Subscript) and isinstance(subject.slice, ast.Slice):
            if subject.slice.lower is None and subject.slice.step is None:
                return self._names_a_cuda_tag(subject.value, prefix=False)
            return False
        if isinstance(subject, ast.Name):
            return bool(_CUDA_TAG_VARIABLE.match(subject.id))
        if isinstance(subject, ast.Attribute):
            return bool(_CUDA_TAG_VARIABLE.match(subject.attr))
        key: ast.expr | None = None
        if isinstance(subject, ast.Subscript) and self.semantic.qualified_name(subject.value) == "os.environ":
            key = subject.slice
        elif isinstance(subject, ast.Call) and subject.args:
            key = subject.args[0] if self.semantic.qualified_name(subject.func) in _ENVIRONMENT_READS else None
        variable = _string(key) if key is not None else None
        return variable is not None and bool(_CUDA_TAG_VARIABLE.match(variable))

    def _cuda_tag_prefix_test(self, call: ast.Call) -> bool:
        """`CU_VERSION.startswith("cu")`: true only for an NVIDIA build variant."""
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr != "startswith" or len(call.args) != 1 or call.keywords:
            return False
        literal = _string(call.args[0])
        return literal is not None and bool(_CUDA_TAG.match(literal)) and self._names_a_cuda_tag(func.value, False)

    def _names_the_platform(self, subject: ast.expr) -> bool:
        """`sys.platform` or a call of `platform.system()`."""
        read = subject.func if isinstance(subject, ast.Call) and not subject.args else subject
        return self.semantic.qualified_name(read) in _PLATFORM_NAMES

    def _call(self, call: ast.Call, depth: int) -> Vendor:
        func = call.func
        name = self.semantic.qualified_name(func) or ""
        builtin = self._builtin_call(name, call, depth)
        if builtin is not None:
            return builtin
        configured = self._configured(name)
        if configured is not None:
            return configured
        if name in _FALSE_ON_ROCM_CALLS:
            return OFF_ROCM
        if name == "shutil.which" and call.args:
            return self._program_vendor(self.semantic.string_value(call.args[0]) or "")
        if self._cuda_tag_prefix_test(call):
            return NVIDIA
        registry = self._registry_test(call)
        if registry is not None:
            return registry
        if isinstance(func, ast.Attribute):
            without_arguments = not call.args and not call.keywords
            if without_arguments and func.attr in _ROCM_METHODS:
                return ROCM
            if without_arguments and func.attr in _NVIDIA_METHODS:
                return NVIDIA
            member = self._member_value(func, depth, called=True)
            if member.is_vendor_test:
                return member
            external = self._external(func, name, called=True)
            if external is not None:
                return external
        elif isinstance(func, ast.Name):
            binding = self.semantic.lookup(func.id, func)
            if binding is not None:
                resolved = self._binding_value(binding, func.id, depth + 1, called=True)
                if resolved.is_vendor_test:
                    return resolved
                runtime = self._runtime_name_probe(call, binding)
                if runtime is not None:
                    return runtime
            if func.id in _NVIDIA_METHODS:
                return NVIDIA
        return self._convention(name, func)

    def _runtime_name_probe(self, call: ast.Call, binding: Binding) -> Vendor | None:
        """`_device_usable("cuda")` where the file also calls `_device_usable("rocm")`: a def of the file asked
        about each runtime by name keeps them apart, so its "cuda" is NVIDIA's (a compiler's targets,
        `rt.device("cuda")` beside `rt.device("rocm")`): never true on ROCm, and its "rocm" never true on
        NVIDIA. None unless the call names one runtime and the file names the other to the same def."""
        asked = _runtime_name(call)
        if asked is None or binding.kind != "function" or not isinstance(binding.definition, FUNCTION_DEFS):
            return None
        other = _ROCM_RUNTIME if asked == _NVIDIA_RUNTIME else _NVIDIA_RUNTIME
        if not any(_runtime_name(sibling) == other for sibling in self.references.calls_of(binding.definition)):
            return None
        return OFF_ROCM if asked == _NVIDIA_RUNTIME else OFF_NVIDIA

    def _registry_test(self, call: ast.Call) -> Vendor | None:
        """`is_extension_available("quanto_cuda")`: a registry lookup (`def f(name): return name in REGISTRY`) of
        a key the project registers only in code that never runs on ROCm (`register_extension(Extension(
        "quanto_cuda", ...))` in a module imported only under `torch.version.cuda`) is false on ROCm; None when
        the call is no such lookup or the key is registered where ROCm may run."""
        func = call.func
        if self.read_elsewhere is None or not isinstance(func, ast.Name) or len(call.args) != 1 or call.keywords:
            return None
        key = call.args[0]
        if not isinstance(key, ast.Constant) or not isinstance(key.value, str):
            return None
        binding = self.semantic.lookup(func.id, func)
        if binding is None:
            return None
        testers = {func.id}
        qualified: str | None = None
        if binding.kind == "import" and binding.qualified:
            qualified = binding.qualified
            testers.add(qualified.rsplit(".", 1)[-1])
        elif not (binding.kind == "function" and _is_registry_lookup(binding.definition)):
            return None
        found = self.read_elsewhere.key_registered_off_rocm(key.value, frozenset(testers), qualified)
        return OFF_ROCM if found else None

    def _builtin_call(self, name: str, call: ast.Call, depth: int) -> Vendor | None:
        """`getattr(torch.version, "hip", None)`, `hasattr(torch.version, "hip")`, `bool(x)`, `int(x)`, `os.getenv("USE_ROCM")`; None when
        the call is none of these."""
        arguments = argument_values(call)
        if name == "getattr" and len(arguments) >= 2:
            owner = self.semantic.qualified_name(arguments[0])
            attribute = _string(arguments[1])
            return self._named(f"{owner}.{attribute}") if owner and attribute else UNKNOWN
        if name == "hasattr" and len(arguments) >= 2:
            owner = self.semantic.qualified_name(arguments[0])
            # torch.version.hip exists (as None) on NVIDIA builds too, but always on ROCm builds.
            if owner == "torch.version" and _string(arguments[1]) == "hip":
                return Vendor(True, None)
            return UNKNOWN
        if name in _TRUTH_KEEPING_CASTS and len(arguments) == 1:
            return self.value(arguments[0], depth + 1)
        if name in _ENVIRONMENT_READS and arguments:
            return self._environment_switch(arguments[0])
        return self._package_probe(call)

    @staticmethod
    def _environment_switch(key: ast.expr) -> Vendor:
        """An environment variable named like a ROCm build switch (`USE_ROCM`, a project's `NVTE_USE_ROCM`) or
        naming the ROCm version to build for (`ROCM_VERSION`): the user or the build sets it to build for ROCm, so the code it selects is ROCm's and its `else:` NVIDIA's.
        The name is matched from each `_`-separated word on, as the flags' naming convention is. A variable of
        NVIDIA's toolchain (`CUDAHOSTCXX`) is set off ROCm only."""
        variable = _string(key)
        if variable is None:
            return UNKNOWN
        if _NVIDIA_TOOLCHAIN_VARIABLE.match(variable):
            return OFF_ROCM  # `if host_cxx := os.environ.get("CUDAHOSTCXX"):`
        words = variable.split("_")
        suffixes = ("_".join(words[start:]) for start in range(len(words)))
        patterns = (_ROCM_CONVENTION, _ROCM_VERSION_SWITCH)
        return ROCM if any(pattern.match(suffix) for suffix in suffixes if suffix for pattern in patterns) else UNKNOWN

    def _reference(self, expr: ast.Name | ast.Attribute, depth: int) -> Vendor:
        name = self.semantic.qualified_name(expr) or ""
        direct = self._named(name)
        if direct.is_vendor_test:
            return direct
        configured = self._configured(name)
        if configured is not None:
            return configured
        binding = None
        if isinstance(expr, ast.Name):
            binding = self.semantic.lookup(expr.id, expr)
            if binding is not None:
                resolved = self._binding_value(binding, expr.id, depth + 1, called=False)
                if resolved.is_vendor_test:
                    return resolved
        else:
            member = self._member_value(expr, depth, called=False)
            if member.is_vendor_test:
                return member
            external = self._external(expr, name, called=False)
            if external is not None:
                return external
        conventional = self._convention(name, expr)
        if conventional.is_vendor_test or binding is None or binding.kind != "value":
            return conventional
        values = self.semantic.known_values(binding, expr.id) if isinstance(expr, ast.Name) else None
        return conventional if values is None else self._switched_on_one_vendor(binding, values)

    def _named(self, qualified: str) -> Vendor:
        if qualified in _ROCM_NAMES:
            return ROCM
        if qualified in _NVIDIA_NAMES:
            return NVIDIA
        return UNKNOWN

    def _configured(self, qualified: str) -> Vendor | None:
        """A name the user listed in `rocm-guards` (a bare, unresolved name matches on its last part)."""
        if not qualified or not self.rocm_guards:
            return None
        last = qualified.rsplit(".", 1)[-1]
        for guard in self.rocm_guards:
            if qualified == guard or ("." not in qualified and guard.rsplit(".", 1)[-1] == last):
                return ROCM
        return None

    def _convention(self, qualified: str, expr: ast.AST | None = None) -> Vendor:
        """A flag named like one (`IS_ROCM`, `is_hip()`, `on_gfx9()`) whose definition says nothing
        better. Both the name it was imported as and the name as written in `expr` count
        (`IS_ROCM = detect()` has no qualified name; `from env import is_hip as check` is written `check`)."""
        written = dotted_name(expr) if expr is not None else None
        for name in (qualified, written or ""):
            last = name.rsplit(".", 1)[-1]
            if last and _ROCM_CONVENTION.match(last):
                return ROCM
            if last and _NVIDIA_CONVENTION.match(last):
                return NVIDIA
        return UNKNOWN

    def _member_value(self, expr: ast.Attribute, depth: int, called: bool) -> Vendor:
        """`self.flag`, `cls.flag`, `Config.flag`, `self.is_amd()` for a class of this file (its class
        attributes, methods, `self.flag = ...` assignments, and those of its bases)."""
        cls = self.semantic.receiver_class(expr)
        if cls is None:
            owner = self.semantic.lookup(expr.value.id, expr) if isinstance(expr.value, ast.Name) else None
            found = self._member_of(owner, expr.attr, depth, called) if owner and owner.kind == "value" else None
            return found or UNKNOWN
        binding = self.semantic.member(cls, expr.attr)
        if binding is None:
            return UNKNOWN
        return self._binding_value(binding, expr.attr, depth + 1, called)

    def _member_of(self, owner: Binding, member: str, depth: int, called: bool) -> Vendor | None:
        """`member` of what `owner` is bound to: a class of this file, an instance of one made once
        (`current_platform = RocmPlatform()`), or such a class or instance of another module of the
        project (through an import)."""
        if owner.kind == "value" and isinstance(owner.single, ast.Call) and isinstance(owner.single.func, ast.Name):
            made_by = owner.single.func
            owner = self.semantic.lookup(made_by.id, made_by) or owner
            if owner.kind == "value":
                return None  # an instance of something other than a class
        if owner.kind == "class" and isinstance(owner.definition, ast.ClassDef):
            binding = self.semantic.member(owner.definition, member)
            return self._binding_value(binding, member, depth + 1, called) if binding is not None else None
        if owner.kind == "import" and owner.qualified:
            return self._resolve_external(f"{owner.qualified}.{member}", called)
        return None

    def _external(self, expr: ast.Name | ast.Attribute, qualified: str, called: bool) -> Vendor | None:
        """A name reached through an import (`env.IS_ROCM` after `import mypkg.env as env`)."""
        head = (dotted_name(expr) or "").split(".", 1)[0]
        binding = self.semantic.lookup(head, expr) if head else None
        if binding is None or binding.kind != "import":
            return None
        return self._resolve_external(qualified, called)

    def _resolve_external(self, qualified: str, called: bool) -> Vendor | None:
        if self.resolve_external is None or "." not in qualified or qualified.startswith("torch."):
            return None
        return self.resolve_external(qualified + ("()" if called else ""))

    def _binding_value(self, binding: Binding, name: str, depth: int, called: bool) -> Vendor:
        values = self.semantic.known_values(binding, name) if binding.kind == "value" else binding.values
        if binding.opaque and not values:
            return UNKNOWN  # a parameter or loop variable (not cached: lambda ones share the scope's key)
        key = (id(binding.scope.node), name + ("()" if called else ""))
        cached = self._binding_cache.get(key)
        if cached is not None:
            return cached
        self._binding_cache[key] = UNKNOWN  # breaks cycles (`x = not x`)
        result = self._evaluate_binding(binding, name, values, depth, called)
        self._binding_cache[key] = result
        return result

    def _evaluate_binding(
        self, binding: Binding, name: str, values: tuple[ast.expr, ...] | None, depth: int, called: bool
    ) -> Vendor:
        if binding.kind == "value" and not called:
            if values is None:
                return UNKNOWN  # a parameter, loop target or `+=`: could be anything
            merged = _merge([(self.value(v, depth + 1), v) for v in values])
            if merged.is_vendor_test:
                return merged
            if isinstance(binding.scope.node, ast.ClassDef):
                return merged  # an attribute is set by methods whose order and callers this file does not show
            if not all(isinstance(value, ast.Constant) and type(value.value) is bool for value in values):
                return UNKNOWN  # no flag of constants
            if self._hard_wired_off(binding, name, values):
                return CONSTANT_FALSE
            # Where the flag's true assignments run, completed by the assignments that run last on each vendor.
            switched = self._switched_on_one_vendor(binding, values)
            truth = _flag_truth(self.vendor_values.variable_strings(binding, name))
            return Vendor(
                truth.rocm if switched.rocm is None else switched.rocm,
                truth.nvidia if switched.nvidia is None else switched.nvidia,
            )
        if binding.kind == "function" and called and isinstance(binding.definition, FUNCTION_DEFS):
            return self._function_value(binding.definition, depth)
        if binding.kind == "import" and binding.qualified:
            direct = self._named(binding.qualified)
            if direct.is_vendor_test and not called:
                return direct
            external = self._resolve_external(binding.qualified, called)
            if external is not None:
                return external
        return UNKNOWN

    def _hard_wired_off(self, binding: Binding, name: str, values: tuple[ast.expr, ...]) -> bool:
        """`COMPILE_FLAG = False` once, at module level, never rebound (no other assignment, no `global` of it) and
        read by no module importing this one (`unread_by_importers`, which is unknown without a project): a switch
        hard-wired off, so `if COMPILE_FLAG:` never runs on either vendor. A flag another module may read could be set
        from there (`mod.COMPILE_FLAG = True`), and one assigned twice is a switch the file itself flips."""
        if len(values) != 1 or binding.scope.node is not self.semantic.module:
            return False
        value = values[0]
        statement = self.semantic.parent(value)
        if not isinstance(value, ast.Constant) or value.value is not False or not isinstance(statement, ast.Assign):
            return False
        if self.semantic.parent(statement) is not self.semantic.module or len(statement.targets) != 1:
            return False
        if any(isinstance(node, ast.Global) and name in node.names for node in self.semantic.parents):
            return False
        return self.unread_by_importers(name)

    def _switched_on_one_vendor(self, binding: Binding, values: tuple[ast.expr, ...]) -> Vendor:
        """`HAS_CUTLASS = False`, then `HAS_CUTLASS = True` only inside `if is_cuda():`: a flag of constants
        whose every true assignment never runs on one vendor is false there; one whose every false assignment
        never runs there (`if torch.version.hip: IS_HIP = True` / `else: IS_HIP = False`) is true there."""
        constants = [value for value in values if isinstance(value, ast.Constant) and type(value.value) is bool]
        if len(constants) != len(values):
            return UNKNOWN
        key = (id(binding.scope.node), values)
        if key in self._switching:
            return UNKNOWN  # asked again while deciding where its assignments run
        self._switching.add(key)
        try:
            return self._switched_where(constants)
        finally:
            self._switching.discard(key)

    def _switched_where(self, constants: list[ast.Constant]) -> Vendor:
        truths = [(CONSTANT_TRUE if value.value else CONSTANT_FALSE, value) for value in constants]
        set_where = [self.branch(value) for truth, value in truths if truth == CONSTANT_TRUE]
        cleared_where = [self.branch(value) for truth, value in truths if truth == CONSTANT_FALSE]
        if not set_where or not cleared_where:
            return UNKNOWN  # never set, or never cleared (read before any assignment: undefined)
        found = Vendor(_switched(set_where, cleared_where, rocm=True), _switched(set_where, cleared_where, rocm=False))
        # Set nowhere either vendor runs (a def called on neither as far as this file shows): no vendor test.
        return UNKNOWN if found.rocm is False and found.nvidia is False else found

    def _function_value(self, function: FunctionNode, depth: int) -> Vendor:
        """What calling a function returns: the `or` of every `return` value under the conditions that
        lead to it (`if torch.version.hip: return True` / `return False` is a ROCm test). Literals count
        by their truth, so a check that returns an error message on ROCm and `""` when the device fits
        (`if IS_ROCM: return "unsupported on ROCm"`) is true on ROCm: `if check(): return` exits there."""
        total = CONSTANT_FALSE  # falling off the end returns None
        informative = False
        returns = own_returns(function)
        for statement in returns:
            if statement.value is None:
                continue
            literal = _literal_truth(statement.value)
            value = literal if literal is not None else self.value(statement.value, depth + 1)
            path = self._path(statement, function.body)
            informative = informative or (
                value.is_vendor_test and literal is None and not _is_constant(statement.value)
            )
            informative = informative or (path.is_vendor_test and path != CONSTANT_TRUE)
            total = total.either(path.both(value))
        # A function returning only constants (or nothing) is a switch or a procedure, not a vendor test.
        return total if returns and informative else UNKNOWN

    def _path(self, node: ast.AST, stop: Within) -> Vendor:
        """The conjunction (three-valued) of the conditions from `stop` (None: the module) down to `node`.
        A statement list as `stop` counts its earlier statements' exits, not what runs the list."""
        path = CONSTANT_TRUE
        child = node
        for parent in self.semantic.ancestors(node):
            if isinstance(child, ast.stmt):
                block = self._block_of(parent, child)
                path = _conjunction(path, self._conditions_before(block, child))
                if block is stop:
                    break
                path = _conjunction(path, self._block_conditions(parent, block))
            else:
                path = _conjunction(path, self._expression_conditions(parent, child))
            if parent is stop:
                break
            child = parent
        return path

    # --- import guards ----------------------------------------------------------------------------
    def _catches_import_error(self, node: ast.Try) -> bool:
        """A handler that catches ImportError (or broader) and carries on: one that re-raises or exits
        does not make the failed import harmless."""
        return any(
            _handles_import_error(handler) and not self._fails(handler.body)
            for handler in node.handlers
            if isinstance(handler, ast.ExceptHandler)
        )

    def _fails(self, statements: list[ast.stmt]) -> bool:
        if not statements or isinstance(statements[-1], COMPOUND_STATEMENTS):
            return False
        for statement in last_line(statements):
            if isinstance(statement, ast.Raise):
                return True
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
                if (self.semantic.qualified_name(statement.value.func) or "") in _FAILING_CALLS:
                    return True
        return False

    @staticmethod
    def _suppresses_import_error(node: ast.With | ast.AsyncWith) -> bool:
        for item in node.items:
            call = item.context_expr
            if isinstance(call, ast.Call) and (dotted_name(call.func) or "").endswith("suppress"):
                if any((dotted_name(argument) or "") in _IMPORT_ERRORS for argument in argument_values(call)):
                    return True
        return False


def _requirement_with_rocm_counterpart(binding: Binding) -> Vendor | None:
    """An imported `requires_cuda` of a library outside the tree whose `requires_rocm` (or `_hip`, `_amd`) is
    imported from the same module in the same scope: a test decorated with it runs only on NVIDIA GPUs (a
    TVM-style `requires_cuda` asks for a CUDA device, which ROCm does not provide)."""
    assert binding.qualified is not None
    module, _, name = binding.qualified.rpartition(".")
    match = _NVIDIA_REQUIREMENT.match(name)
    if match is None or not module:
        return None
    counterparts = {
        f"{match['head']}{word}{match['tail'] or ''}" if match["head"] else f"{word}{match['only']}"
        for word in _ROCM_WORDS
    }
    imported = set(binding.scope.imports.values())
    return NVIDIA if any(f"{module}.{counterpart}" in imported for counterpart in counterparts) else None


def _runtime_name(call: ast.Call) -> str | None:
    """The runtime a one-argument call names (`f("cuda")`, `f("ROCm")`), as `_NVIDIA_RUNTIME` or
    `_ROCM_RUNTIME`; None for any other call."""
    if len(call.args) != 1 or call.keywords:
        return None
    name = _string(call.args[0])
    if name is None:
        return None
    name = name.lower()
    if name == _NVIDIA_RUNTIME:
        return name
    return _ROCM_RUNTIME if name in _ROCM_TARGET_NAMES else None


def _is_skip_decorator(decorator: ast.AST) -> bool:
    """`@pytest.mark.skipif(...)`, `@unittest.skipIf(...)`, `@skipUnless(...)`: a skip decided by its condition."""
    if not isinstance(decorator, ast.Call):
        return False
    return (dotted_name(decorator.func) or "").rsplit(".", 1)[-1].replace("_", "").lower() in ("skipif", "skipunless")


def _pytest_may_call(name: str) -> bool:
    """pytest collects `test*` functions and calls hooks and xunit-style setup and teardown by their names."""
    return name.startswith((_PYTEST_TEST_PREFIX, "pytest_")) or name in _PYTEST_MODULE_FUNCTIONS


# Decorators passing a test its inputs, by the end of their dotted name: pytest's and absl's.
_PARAMETRIZE_DECORATORS = (
    "mark.parametrize",
    "parameterized.parameters",
    "parameterized.named_parameters",
    "parameterized.product",
)


def _is_parametrize(decorator: ast.AST) -> bool:
    """`@pytest.mark.parametrize(...)`, or absl's `@parameterized.parameters(...)` (`named_parameters`, `product`):
    its argument values are the test's inputs."""
    return isinstance(decorator, ast.Call) and (dotted_name(decorator.func) or "").endswith(_PARAMETRIZE_DECORATORS)


def _runs_where(condition: Condition | None) -> Vendor | None:
    """Where a test runs under a skip condition: where the test is true (`taken`) or false."""
    if condition is None:
        return None
    test, taken = condition
    return test if taken else test.negate()


def _passes_only(call: ast.Call, name: str) -> bool:
    """`mark(func)`: the call's one argument is the name `name`."""
    return not call.keywords and len(call.args) == 1 and isinstance(call.args[0], ast.Name) and call.args[0].id == name


def _conjunction(path: Vendor, conditions: list[Condition]) -> Vendor:
    for condition, taken in conditions:
        path = path.both(condition if taken else condition.negate())
    return path


def _handles_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((dotted_name(unstarred(item)) or "").rsplit(".", 1)[-1] in _IMPORT_ERRORS for item in types)


def _flag_truth(strings: VendorStrings) -> Vendor:
    """A flag of booleans whose value is decided per vendor by the assignments that run there
    (`IS_HIP = False`, then `if torch.version.hip: IS_HIP = True`); unknown unless it is known on both vendors
    and differs."""

    def truth(possible: Possible) -> bool | None:
        if not possible or len(possible) != 1:
            return None
        value = next(iter(possible))
        return value if type(value) is bool else None

    found = Vendor(truth(strings.rocm), truth(strings.nvidia))
    # Only a whole answer: a partial one would hide what the name says by convention (`is_rocm_pytorch`).
    decided = found.rocm is not None and found.nvidia is not None and found.rocm != found.nvidia
    return found if decided else UNKNOWN


def _switched(set_where: list[Branch], cleared_where: list[Branch], rocm: bool) -> bool | None:
    """A flag's value on one vendor: false when no true assignment runs there, true when no false one does."""

    def never(where: Branch) -> bool:
        return (where.on_rocm if rocm else where.on_nvidia) is False

    if all(never(where) for where in set_where):
        return False
    return True if all(never(where) for where in cleared_where) else None


def _merge(values: list[tuple[Vendor, ast.expr]]) -> Vendor:
    """Several assignments of one name must agree, else the name is unknown.

    Literal constants are fallbacks (`IS_ROCM = False` in an `except ImportError:`), left out; a name
    only ever set to constants (`USE_GRAPHS = False`) is a switch users flip, not a vendor test.
    """
    tests = [value for value, source in values if not _is_constant(source)]
    if not tests:
        return UNKNOWN
    first = tests[0]
    return first if all(value == first for value in tests) else UNKNOWN


def _is_constant(node: ast.AST) -> bool:
    """`True`, `False` or `None` (numbers and strings are not the flags' fallbacks)."""
    return isinstance(node, ast.Constant) and (node.value is None or type(node.value) is bool)


def _literal_truth(node: ast.AST) -> Vendor | None:
    """The truth of a literal None, string, number or display (`"msg"`, `""`, `0`, `[]`, `f"found {x}"`, which
    holds text whatever `x` is), the same on every vendor; None when `node` is no such literal."""
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (str, bytes, int, float))):
        return CONSTANT_TRUE if node.value else CONSTANT_FALSE
    if isinstance(node, ast.JoinedStr):
        text = any(isinstance(part, ast.Constant) and part.value for part in node.values)
        return CONSTANT_TRUE if text else None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return CONSTANT_TRUE if node.elts else CONSTANT_FALSE
    if isinstance(node, ast.Dict) and None not in node.keys:
        return CONSTANT_TRUE if node.keys else CONSTANT_FALSE
    return None


def _is_zero(node: ast.AST) -> bool:
    """The literal `0` (not through `ast.literal_eval`, whose failure on other nodes leaves a reference cycle)."""
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == 0


def _number_literal(node: ast.AST) -> object:
    """The value of a number or a tuple of numbers written literally (`(0, 0)`, `12`), else None."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    numbers = value if isinstance(value, tuple) else (value,)
    if all(isinstance(number, (int, float)) and not isinstance(number, bool) for number in numbers):
        return value
    return None


def _compared(compare: Callable[[object, object], bool], left: object, right: object) -> bool | None:
    """`compare(left, right)` when both are known and comparable (a tuple with a number is not), else None."""
    if left is None or right is None:
        return None
    try:
        return bool(compare(left, right))
    except TypeError:
        return None


def _nvidia_only_test_decorator(qualified: str | None) -> bool:
    """A framework's test decorator that skips unless the framework finds an NVIDIA device (vendor_packages.toml),
    named from its module or from the module it is defined in (`tvm.testing.utils.requires_cuda`)."""
    if not qualified:
        return False
    return (
        qualified in _NVIDIA_ONLY_TEST_DECORATORS
        or qualified.replace(".utils.", ".", 1) in _NVIDIA_ONLY_TEST_DECORATORS
    )


def _string(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and type(node.value) is str:
        return node.value
    return None


def _imported_modules(statement: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(statement, ast.Import):
        return [alias.name for alias in statement.names]
    if statement.level or statement.module is None:
        return []
    return [statement.module]


@lru_cache(maxsize=4096)
def _package_vendor(module: str) -> Vendor | None:
    """Where a module can be imported, if it belongs to a vendor-only package (asked for every import statement and
    call into a package a gate analysis reads: `torch`, `os` again and again)."""
    for vendor, key in ((NVIDIA, "nvidia_only"), (ROCM, "rocm_only"), (NEITHER, "other_accelerators")):
        if any(module == package or module.startswith(package + ".") for package in _VENDOR_PACKAGES[key]):
            return vendor
    return None


def _swallows_nvml_failure(handler: ast.ExceptHandler) -> bool:
    """The handler catches NVML's failure to initialise (a bare `except:` too) and raises nothing of its own."""
    if any(isinstance(statement, ast.Raise) for statement in handler.body):
        return False
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(_NVML_FAILURE.match((dotted_name(name) or "").rsplit(".", 1)[-1]) for name in names)


def _is_registry_lookup(definition: FunctionNode | ast.ClassDef | None) -> bool:
    return isinstance(definition, FUNCTION_DEFS) and tests_membership_of_its_parameter(definition)


_NOT_OWN_BODIES = frozenset({*DEFS, ast.Lambda})
_NOT_ALWAYS_EVALUATED = frozenset({ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp})


def _is_generator(function: FunctionNode) -> bool:
    """`function`'s own body yields (not that of a def, class or lambda in it)."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        node_type = type(node)
        if node_type is ast.Yield or node_type is ast.YieldFrom:
            return True
        if node_type not in _NOT_OWN_BODIES:
            stack += child_nodes(node)
    return False


def _always_called(expr: ast.expr) -> list[ast.Call]:
    """The calls evaluating `expr` always makes: not those of a lambda, comprehension, conditional arm or an
    `and`/`or` operand after the first. In the order a walk with `ast.iter_child_nodes` found them: the callers
    decide the calls in turn, and a decision may depend on those made before it (a recursive def)."""
    found: list[ast.Call] = []
    stack: list[ast.AST] = [expr]
    while stack:
        node = stack.pop()
        if type(node) in _NOT_ALWAYS_EVALUATED:
            continue
        if isinstance(node, ast.IfExp):
            stack.append(node.test)
            continue
        if isinstance(node, ast.BoolOp):
            stack.append(node.values[0])
            continue
        if isinstance(node, ast.Call):
            found.append(node)
        stack += child_nodes(node)
    return found


def _names_a_device_type(subject: ast.AST) -> bool:
    """`x.device.type`, `device_type`, `device`, `infer_device()`: what a device-type comparison reads."""
    name = dotted_name(subject.func if isinstance(subject, ast.Call) else subject) or ""
    return "device" in name.lower()


def _binding_key(binding: Binding) -> tuple[object, ...]:
    """What a binding stands for, by the ids of what outlives it: the semantic model's scopes and the tree's
    nodes. Not `id(binding)`: every lookup makes a new Binding, and a freed one's id is soon another's (the
    answer for one decorator was given to the next one made at the same address)."""
    values = tuple(id(value) for value in binding.values)
    return binding.kind, id(binding.scope.node), binding.qualified, values, id(binding.definition), binding.opaque
