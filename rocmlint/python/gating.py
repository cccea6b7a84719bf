"""Which vendor a piece of Python can run on, from the ROCm/NVIDIA tests around it.

Every expression gets a `Vendor` value: what it evaluates to (truthiness, three-valued) on a ROCm build
and on an NVIDIA build. `torch.version.hip` is (True, False); `torch.version.cuda` is (False, True);
`torch.cuda.is_available()` is (unknown, unknown) because it is true on both. A node's `Branch` combines
the values of every condition it sits under: the branch of `if`/`elif`/`else`, conditional expressions,
`and`/`or` short-circuits, comprehension filters, early `return`/`raise`/`continue`/`break`/skip after a
test, `assert`, and test-skip decorators. The forms recognised are those of RULES.md, "What gated means".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cached_property

import libcst as cst

from rocmlint.data import load
from rocmlint.python.references import References
from rocmlint.python.scopes import dotted_name
from rocmlint.python.semantic import Binding, Semantic
from rocmlint.python.tree import children
from rocmlint.vendor import CONSTANT_FALSE, CONSTANT_TRUE, EVERYWHERE, NEITHER, NVIDIA, ROCM, UNKNOWN, Branch, Vendor

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
# Project flags named by convention (`IS_ROCM`, `_is_hip`, `on_amd`, vLLM's `on_gfx9()`, `on_mi3xx()`).
_ROCM_CONVENTION = re.compile(
    r"^_*(?:(?:is|on|use|using|with|has|running_on|test_with|build_for)_*(?:rocm|hip|amd|amdgpu|hip_extension)"
    r"(?:_*(?:gpu|platform|build|backend|device|pytorch|torch))?|on_(?:gfx|mi)\w*)$",
    re.IGNORECASE,
)
_NVIDIA_CONVENTION = re.compile(r"^_*(?:is|on|using|running_on)_*nvidia(?:_*gpu)?$", re.IGNORECASE)
# `current_platform.is_rocm()` / `.is_cuda()` (vLLM: is_cuda means NVIDIA there).
_ROCM_METHODS = frozenset({"is_rocm", "is_hip"})
_NVIDIA_METHODS = frozenset({"is_cuda"})
# Test decorators, matched on the lower-cased name without underscores. Arch- and version-specific ones
# (`skipIfRocmArch`, `skipIfRocmVersionLessThan`, `runOnRocmArch`) still run on some ROCm systems, so
# they are not gates.
_SKIPS_ON_ROCM = re.compile(r"^skip(?:cuda|gpu)?if(?:rocm|hip)(?:multiprocess)?$")
_RUNS_ONLY_ON_ROCM = re.compile(r"^(?:skip(?:cuda|gpu)?ifnot(?:rocm|hip)|skipunless(?:rocm|hip)|runonrocm|onlyrocm)$")
_TERMINATING_CALLS = frozenset(
    {"sys.exit", "exit", "quit", "os._exit", "os.abort", "pytest.skip", "pytest.exit", "pytest.fail"}
)
# An `except ImportError:` that ends in one of these does not survive the failed import.
_FAILING_CALLS = frozenset({"sys.exit", "exit", "quit", "os._exit", "os.abort", "pytest.exit", "pytest.fail"})
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
_ROCM_TARGET_NAMES = frozenset({"rocm", "hip"})
_VENDOR_PACKAGES = load("vendor_packages")
_OTHER_DEVICE_TYPES = frozenset(_VENDOR_PACKAGES["other_device_types"])
_PACKAGE_PROBES = frozenset({"importlib.util.find_spec", "pytest.importorskip"})
_MAX_DEPTH = 24
# Functions whose callers are decided one inside another on the Python stack before the next is deferred.
_MAX_CALLER_NESTING = 32

# Resolves a qualified name defined in another module of the scanned tree to its vendor value. A name
# ending in "()" asks for the value of calling it (`from pkg.env import is_hip; is_hip()`).
CrossModuleResolver = Callable[[str], "Vendor | None"]
Condition = tuple[Vendor, bool]  # a test and whether the node sits where it is true


class _CallerDeferred(Exception):
    """Deciding a function's callers needs `function` decided first, too deep to do it on this stack;
    `path` is the chain of functions being decided when it was asked."""

    def __init__(self, function: cst.FunctionDef, path: list[cst.FunctionDef]) -> None:
        super().__init__(function.name.value)
        self.function = function
        self.path = path


class GateAnalyzer:
    def __init__(
        self,
        semantic: Semantic,
        rocm_guards: frozenset[str] = frozenset(),
        resolve_external: CrossModuleResolver | None = None,
    ) -> None:
        self.semantic = semantic
        self.rocm_guards = rocm_guards
        self.resolve_external = resolve_external
        self._binding_cache: dict[tuple[int, str], Vendor] = {}
        self._branch_cache: dict[cst.CSTNode, Branch] = {}
        self._before_cache: dict[cst.CSTNode, list[Condition]] = {}
        self._callers: dict[cst.FunctionDef, list[Condition]] = {}
        self._caller_path: list[cst.FunctionDef] = []  # the functions being decided, outermost first
        self._on_caller_path: set[cst.FunctionDef] = set()  # the same, for membership tests
        self._caller_nesting = 0  # how many of them are on the Python stack
        self._recursive: set[cst.FunctionDef] = set()

    @cached_property
    def references(self) -> References:
        """The file's name index and call sites (rules share it through `PythonContext.references`)."""
        return References(self.semantic)

    # --- public -----------------------------------------------------------------------------------
    def branch(self, node: cst.CSTNode) -> Branch:
        """Where `node` can run, from every condition between it and the module (iterative: deep
        nesting must not exhaust the Python stack)."""
        chain: list[cst.CSTNode] = []
        current: cst.CSTNode | None = node
        while current is not None and current not in self._branch_cache:
            chain.append(current)
            current = self.semantic.parent(current)
        result = EVERYWHERE if current is None else self._branch_cache[current]
        for child in reversed(chain):
            parent = self.semantic.parent(child)
            if parent is not None:
                for condition, taken in self._conditions(parent, child):
                    result = result.under(condition, taken)
            self._branch_cache[child] = result
        return result

    def reach(self, node: cst.CSTNode, within: cst.CSTNode | None = None) -> Vendor:
        """Whether `node` runs, per vendor, whenever control enters `within` (default: the module):
        True (always), False (never), None (it depends on runtime state). Unlike `branch`, every
        condition counts, vendor-related or not: under `if x > 3:` the answer is None. For flow
        questions such as "does this ROCm-only assignment always replace the earlier one"."""
        return self._path(node, within)

    def in_import_guard(self, node: cst.CSTNode) -> bool:
        """Inside the body of a `try:` whose handlers catch ImportError (or broader) and carry on, or of
        `with suppress(ImportError):`."""
        child = node
        for ancestor in self.semantic.ancestors(node):
            if isinstance(ancestor, cst.Try) and child is ancestor.body and self._catches_import_error(ancestor):
                return True
            if isinstance(ancestor, cst.With) and child is ancestor.body and self._suppresses_import_error(ancestor):
                return True
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                return False
            child = ancestor
        return False

    def value(self, expr: cst.CSTNode, depth: int = 0) -> Vendor:
        """The vendor value of an expression, evaluated where it stands."""
        if depth > _MAX_DEPTH:
            return UNKNOWN
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            return self.value(expr.expression, depth + 1).negate()
        if isinstance(expr, cst.BooleanOperation):
            left, right = self.value(expr.left, depth + 1), self.value(expr.right, depth + 1)
            return left.both(right) if isinstance(expr.operator, cst.And) else left.either(right)
        if isinstance(expr, cst.Comparison):
            return self._comparison(expr, depth)
        if isinstance(expr, cst.Call):
            return self._call(expr, depth)
        if isinstance(expr, (cst.Name, cst.Attribute)):
            return self._reference(expr, depth)
        if isinstance(expr, cst.NamedExpr):
            return self.value(expr.value, depth + 1)  # `if (hip := torch.version.hip):`
        return UNKNOWN

    def symbol_value(self, name: str, called: bool = False) -> Vendor | None:
        """The vendor value of a module-level name of this file (for other modules importing it); with
        `called`, the value of calling it."""
        binding = self.semantic.lookup_in(self.semantic.module, name)
        if binding is None:
            return None
        return self._binding_value(binding, name, depth=0, called=called)

    # --- conditions a child inherits from its parent -----------------------------------------------
    def _conditions(self, parent: cst.CSTNode, child: cst.CSTNode) -> Sequence[Condition]:
        if isinstance(parent, cst.If) and child is parent.body and self._rocm_arm_follows(parent):
            return [(Vendor(False, None), True)]
        if isinstance(parent, (cst.If, cst.IfExp)):
            if child is parent.body:
                return [(self.value(parent.test), True)]
            if child is parent.orelse:
                return [(self.value(parent.test), False)]
            return []
        if isinstance(parent, cst.BooleanOperation) and child is parent.right:
            return [(self.value(parent.left), isinstance(parent.operator, cst.And))]
        if isinstance(parent, cst.While) and child is parent.body:
            return [(self.value(parent.test), True)]
        if isinstance(parent, (cst.ListComp, cst.SetComp, cst.GeneratorExp)) and child is parent.elt:
            return self._comprehension_conditions(parent.for_in)
        if isinstance(parent, cst.DictComp) and (child is parent.key or child is parent.value):
            return self._comprehension_conditions(parent.for_in)
        if isinstance(parent, cst.FunctionDef) and child is parent.body:
            return self._test_skip_conditions(parent) + self._caller_conditions(parent)
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            return self._conditions_before(parent, child)
        return []

    # --- callers: the call graph, one function at a time --------------------------------------------
    def _caller_conditions(self, function: cst.FunctionDef) -> list[Condition]:
        """A function that this file only ever calls from code that never runs on ROCm (and never passes
        around as a value) does not run on ROCm either: `def cuda_version(): ...` called under
        `if torch.version.cuda:`. Recursive functions (directly or through others) are left alone.

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

    def _settle_callers(self, function: cst.FunctionDef) -> list[Condition]:
        """Decide `function`, deciding first every deeper function a deferral names (a stack of pending
        questions, each with the chain of functions being decided when it was asked, for cycles)."""
        pending: list[tuple[cst.FunctionDef, list[cst.FunctionDef]]] = [(function, [])]
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

    def _decide_callers(self, function: cst.FunctionDef) -> list[Condition]:
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

    def _conditions_from_callers(self, function: cst.FunctionDef) -> list[Condition]:
        if function in self._recursive:
            return []
        uses = self.references.uses_of(function)
        if not uses or any(not isinstance(use, cst.Call) for use in uses):
            return []
        if any(function in self.semantic.ancestors(use) for use in uses):
            return []
        if all(self.branch(call).on_rocm is False for call in uses):
            return [(Vendor(False, None), True)]
        return []

    def _rocm_arm_follows(self, branch: cst.If) -> bool:
        """`if <cuda setup or override>: ... elif torch.version.hip: ...`: a later arm that only ROCm can
        take means the author routed ROCm there, so an earlier arm whose test is not known to hold on
        ROCm is the NVIDIA path (xformers, flash-attention setup scripts). Overrides such as
        `FORCE_CUDA=1` that would send ROCm into the first arm are taken as deliberate."""
        if self.value(branch.test).rocm is not None:
            return False
        arm = branch.orelse
        while isinstance(arm, cst.If):
            value = self.value(arm.test)
            if value.nvidia is False and value.rocm is not False:
                return True
            arm = arm.orelse
        return False

    def _comprehension_conditions(self, comp: cst.CompFor | None) -> list[Condition]:
        """`[f(x) for x in xs if not IS_ROCM]`: the element is only computed where every filter holds."""
        conditions: list[Condition] = []
        while comp is not None:
            conditions.extend((self.value(item.test), True) for item in comp.ifs)
            comp = comp.inner_for_in
        return conditions

    # --- early exits: what holds after a statement that leaves the block on some path -------------
    def _conditions_before(self, block: cst.IndentedBlock | cst.Module, child: cst.CSTNode) -> list[Condition]:
        """Conditions that hold when `child` runs because earlier statements of its block exit otherwise.
        Computed for the whole block at once (a block's statements all ask)."""
        if child not in self._before_cache:
            conditions: list[Condition] = []
            for statement in block.body:
                self._before_cache[statement] = list(conditions)
                conditions.extend(self._conditions_after(statement))
        return self._before_cache.get(child, [])

    def _conditions_after(self, statement: cst.CSTNode) -> list[Condition]:
        if isinstance(statement, cst.If):
            return self._after_if(statement)
        if isinstance(statement, cst.SimpleStatementLine):
            return [condition for small in statement.body for condition in self._after_small(small)]
        return []

    def _after_small(self, small: cst.BaseSmallStatement) -> list[Condition]:
        """`assert t` leaves `t` true; an import of a vendor-only package (or `pytest.importorskip` of
        one) raises on the other vendors, so what follows runs only where it succeeded."""
        if isinstance(small, cst.Assert):
            return [(self.value(small.test), True)]
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            return [(vendor, True) for vendor in map(_package_vendor, _imported_modules(small)) if vendor]
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            vendor = self._package_probe(small.value)
            return [(vendor, True)] if vendor is not None else []
        return []

    def _package_probe(self, call: cst.Call) -> Vendor | None:
        """`importlib.util.find_spec("cutlass")` / `pytest.importorskip("cutlass")`: found only where the
        package's vendor is."""
        name = self.semantic.qualified_name(call.func) or ""
        if name not in _PACKAGE_PROBES or not call.args:
            return None
        package = self.semantic.string_value(call.args[0].value)
        return _package_vendor(package) if package else None

    def _after_if(self, statement: cst.If) -> list[Condition]:
        """After `if t: <exit>` (any elif/else), `t` is false; after `if t: ... else: <exit>` (every
        later arm exiting), `t` is true."""
        if self.terminates(statement.body):
            after = [(self.value(statement.test), False)]
            if isinstance(statement.orelse, cst.If):
                after.extend(self._after_if(statement.orelse))
            return after
        if statement.orelse is not None and self._arms_terminate(statement.orelse):
            return [(self.value(statement.test), True)]
        return []

    def _arms_terminate(self, orelse: cst.If | cst.Else) -> bool:
        if isinstance(orelse, cst.Else):
            return self.terminates(orelse.body)
        return self.terminates(orelse.body) and orelse.orelse is not None and self._arms_terminate(orelse.orelse)

    def terminates(self, suite: cst.BaseSuite) -> bool:
        """Does this block always leave the enclosing block (return, raise, continue, break, exit, skip)?"""
        statements = suite.body if isinstance(suite, cst.IndentedBlock) else [suite]
        if not statements:
            return False
        last = statements[-1]
        if isinstance(last, cst.If):
            return self.terminates(last.body) and last.orelse is not None and self._arms_terminate(last.orelse)
        if isinstance(last, cst.With):
            return self.terminates(last.body)
        if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return any(self._exits(small) for small in last.body)
        return False

    def _exits(self, small: cst.BaseSmallStatement) -> bool:
        if isinstance(small, (cst.Return, cst.Raise, cst.Continue, cst.Break)):
            return True
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            name = self.semantic.qualified_name(small.value.func) or ""
            return name in _TERMINATING_CALLS or name.endswith(".skipTest")
        return False

    # --- test-skip decorators and `pytestmark` ----------------------------------------------------
    def _test_skip_conditions(self, function: cst.FunctionDef) -> list[Condition]:
        """A test's body runs only where its skip decorators (and its class's, and `pytestmark`) let it.
        A class's decorators gate its methods, not the class body, which runs at import everywhere."""
        conditions = self._decorator_conditions(function.decorators)
        owner = self.semantic.enclosing_scope_node(function)
        if isinstance(owner, cst.ClassDef):
            conditions.extend(self._decorator_conditions(owner.decorators))
            conditions.extend(self._pytestmark_conditions(owner))
            owner = self.semantic.enclosing_scope_node(owner)
        if owner is self.semantic.module:
            conditions.extend(self._pytestmark_conditions(owner))
        return conditions

    def _decorator_conditions(self, decorators: Sequence[cst.Decorator]) -> list[Condition]:
        found = (self._skip_condition(decorator.decorator) for decorator in decorators)
        return [condition for condition in found if condition is not None]

    def _pytestmark_conditions(self, scope_node: cst.Module | cst.ClassDef) -> list[Condition]:
        binding = self.semantic.lookup_in(scope_node, "pytestmark")
        if binding is None or binding.kind != "value":
            return []
        marks: list[cst.BaseExpression] = []
        for value in binding.values:
            if isinstance(value, (cst.List, cst.Tuple)):
                marks.extend(element.value for element in value.elements)
            else:
                marks.append(value)
        found = (self._skip_condition(mark) for mark in marks if isinstance(mark, cst.Call))
        return [condition for condition in found if condition is not None]

    def _skip_condition(self, expr: cst.BaseExpression) -> Condition | None:
        """`@skipIfRocm` -> runs where ROCm is false; `@unittest.skipIf(c, ...)` -> where `c` is false."""
        call = expr if isinstance(expr, cst.Call) else None
        name = dotted_name(call.func if call is not None else expr) or ""
        key = name.rsplit(".", 1)[-1].replace("_", "").lower()
        if _SKIPS_ON_ROCM.match(key):
            return (ROCM, False)
        if _RUNS_ONLY_ON_ROCM.match(key):
            return (ROCM, True)
        if call is not None and key in ("skipif", "skipunless"):
            argument = self.semantic.keyword(call, "condition") or self.semantic.positional(call, 0)
            if argument is not None:
                return (self.value(argument.value), key == "skipunless")
        return None

    # --- expression forms --------------------------------------------------------------------------
    def _comparison(self, expr: cst.Comparison, depth: int) -> Vendor:
        if len(expr.comparisons) != 1:
            return UNKNOWN
        target = expr.comparisons[0]
        operator, right = target.operator, target.comparator
        if _is_none(right) or _is_none(expr.left):
            subject = expr.left if _is_none(right) else right
            value = self.value(subject, depth + 1)
            if isinstance(operator, (cst.IsNot, cst.NotEqual)):
                return value
            if isinstance(operator, (cst.Is, cst.Equal)):
                return value.negate()
            return UNKNOWN
        if isinstance(operator, (cst.In, cst.NotIn)):
            value = self._version_string_test(expr.left, right)
            return value.negate() if isinstance(operator, cst.NotIn) else value
        literal = _string(right) or _string(expr.left)
        subject = expr.left if _string(right) is not None else right
        if literal is not None and isinstance(operator, (cst.Equal, cst.NotEqual)):
            value = self._backend_comparison(subject, literal)
            return value.negate() if isinstance(operator, cst.NotEqual) else value
        return UNKNOWN

    def _version_string_test(self, needle: cst.BaseExpression, haystack: cst.BaseExpression) -> Vendor:
        """`"rocm" in torch.__version__`: ROCm wheels are versioned `2.5.1+rocm6.2`."""
        literal = _string(needle)
        if literal is None or self.semantic.qualified_name(haystack) != "torch.__version__":
            return UNKNOWN
        return ROCM if literal.lower() in ("rocm", "+rocm", "hip") else UNKNOWN

    def _backend_comparison(self, subject: cst.CSTNode, literal: str) -> Vendor:
        """`== "rocm"`/`"hip"` compares a build target or backend with ROCm's name (`BUILD_TARGET ==
        "rocm"`, Triton's `get_current_target().backend == "hip"`). `== "cuda"` is NVIDIA-only for
        Triton's backend alone: build targets such as vLLM's `VLLM_TARGET_DEVICE` are "cuda" on ROCm too."""
        if literal.lower() in _ROCM_TARGET_NAMES:
            return ROCM
        if literal in _OTHER_DEVICE_TYPES and _names_a_device_type(subject):
            return NEITHER  # `x.device.type == "xpu"`: a ROCm GPU's device type is "cuda"
        if literal == "cuda" and isinstance(subject, cst.Attribute) and subject.attr.value == "backend":
            return NVIDIA
        return UNKNOWN

    def _call(self, call: cst.Call, depth: int) -> Vendor:
        func = call.func
        name = self.semantic.qualified_name(func) or ""
        builtin = self._builtin_call(name, call, depth)
        if builtin is not None:
            return builtin
        configured = self._configured(name)
        if configured is not None:
            return configured
        if isinstance(func, cst.Attribute):
            if not call.args and func.attr.value in _ROCM_METHODS:
                return ROCM
            if not call.args and func.attr.value in _NVIDIA_METHODS:
                return NVIDIA
            member = self._member_value(func, depth, called=True)
            if member.is_vendor_test:
                return member
            external = self._external(func, name, called=True)
            if external is not None:
                return external
        elif isinstance(func, cst.Name):
            binding = self.semantic.lookup(func.value, func)
            if binding is not None:
                resolved = self._binding_value(binding, func.value, depth + 1, called=True)
                if resolved.is_vendor_test:
                    return resolved
            if func.value in _NVIDIA_METHODS:
                return NVIDIA
        return self._convention(name, func)

    def _builtin_call(self, name: str, call: cst.Call, depth: int) -> Vendor | None:
        """`getattr(torch.version, "hip", None)`, `hasattr(torch.version, "hip")`, `bool(x)`; None when
        the call is none of these."""
        if name == "getattr" and len(call.args) >= 2:
            owner = self.semantic.qualified_name(call.args[0].value)
            attribute = _string(call.args[1].value)
            return self._named(f"{owner}.{attribute}") if owner and attribute else UNKNOWN
        if name == "hasattr" and len(call.args) >= 2:
            owner = self.semantic.qualified_name(call.args[0].value)
            # torch.version.hip exists (as None) on NVIDIA builds too, but always on ROCm builds.
            if owner == "torch.version" and _string(call.args[1].value) == "hip":
                return Vendor(True, None)
            return UNKNOWN
        if name == "bool" and len(call.args) == 1:
            return self.value(call.args[0].value, depth + 1)
        return self._package_probe(call)

    def _reference(self, expr: cst.Name | cst.Attribute, depth: int) -> Vendor:
        if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
            return CONSTANT_TRUE if expr.value == "True" else CONSTANT_FALSE
        name = self.semantic.qualified_name(expr) or ""
        direct = self._named(name)
        if direct.is_vendor_test:
            return direct
        configured = self._configured(name)
        if configured is not None:
            return configured
        if isinstance(expr, cst.Name):
            binding = self.semantic.lookup(expr.value, expr)
            if binding is not None:
                resolved = self._binding_value(binding, expr.value, depth + 1, called=False)
                if resolved.is_vendor_test:
                    return resolved
        else:
            member = self._member_value(expr, depth, called=False)
            if member.is_vendor_test:
                return member
            external = self._external(expr, name, called=False)
            if external is not None:
                return external
        return self._convention(name, expr)

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

    def _convention(self, qualified: str, expr: cst.CSTNode | None = None) -> Vendor:
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

    def _member_value(self, expr: cst.Attribute, depth: int, called: bool) -> Vendor:
        """`self.flag`, `cls.flag`, `Config.flag`, `self.is_amd()` for a class of this file (its class
        attributes, methods, `self.flag = ...` assignments, and those of its bases)."""
        cls = self.semantic.receiver_class(expr)
        if cls is None:
            return UNKNOWN
        binding = self.semantic.member(cls, expr.attr.value)
        if binding is None:
            return UNKNOWN
        return self._binding_value(binding, expr.attr.value, depth + 1, called)

    def _external(self, expr: cst.Name | cst.Attribute, qualified: str, called: bool) -> Vendor | None:
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
        if binding.opaque and not binding.values:
            return UNKNOWN  # a parameter or loop variable (not cached: lambda ones share the scope's key)
        key = (id(binding.scope.node), name + ("()" if called else ""))
        cached = self._binding_cache.get(key)
        if cached is not None:
            return cached
        self._binding_cache[key] = UNKNOWN  # breaks cycles (`x = not x`)
        result = self._evaluate_binding(binding, depth, called)
        self._binding_cache[key] = result
        return result

    def _evaluate_binding(self, binding: Binding, depth: int, called: bool) -> Vendor:
        if binding.kind == "value" and not called:
            if binding.opaque:
                return UNKNOWN  # a parameter, loop target or `+=`: could be anything
            return _merge([(self.value(v, depth + 1), v) for v in binding.values])
        if binding.kind == "function" and called and isinstance(binding.definition, cst.FunctionDef):
            return self._function_value(binding.definition, depth)
        if binding.kind == "import" and binding.qualified:
            direct = self._named(binding.qualified)
            if direct.is_vendor_test and not called:
                return direct
            external = self._resolve_external(binding.qualified, called)
            if external is not None:
                return external
        return UNKNOWN

    def _function_value(self, function: cst.FunctionDef, depth: int) -> Vendor:
        """What calling a function returns: the `or` of every `return` value under the conditions that
        lead to it (`if torch.version.hip: return True` / `return False` is a ROCm test)."""
        total = CONSTANT_FALSE  # falling off the end returns None
        informative = False
        returns = _return_statements(function)
        for statement in returns:
            if statement.value is None:
                continue
            value = self.value(statement.value, depth + 1)
            path = self._path(statement, function.body)
            informative = informative or (value.is_vendor_test and not _is_constant(statement.value))
            informative = informative or (path.is_vendor_test and path != CONSTANT_TRUE)
            total = total.either(path.both(value))
        # A function returning only constants (or nothing) is a switch or a procedure, not a vendor test.
        return total if returns and informative else UNKNOWN

    def _path(self, node: cst.CSTNode, stop: cst.CSTNode | None) -> Vendor:
        """The conjunction (three-valued) of the conditions from `stop` (None: the module) down to `node`."""
        path = CONSTANT_TRUE
        child = node
        for parent in self.semantic.ancestors(node):
            for condition, taken in self._conditions(parent, child):
                path = path.both(condition if taken else condition.negate())
            if parent is stop:
                break
            child = parent
        return path

    # --- import guards ----------------------------------------------------------------------------
    def _catches_import_error(self, node: cst.Try) -> bool:
        """A handler that catches ImportError (or broader) and carries on: one that re-raises or exits
        does not make the failed import harmless."""
        return any(_handles_import_error(handler) and not self._fails(handler.body) for handler in node.handlers)

    def _fails(self, suite: cst.BaseSuite) -> bool:
        statements = suite.body if isinstance(suite, cst.IndentedBlock) else [suite]
        last = statements[-1] if statements else None
        if not isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return False
        for small in last.body:
            if isinstance(small, cst.Raise):
                return True
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                if (self.semantic.qualified_name(small.value.func) or "") in _FAILING_CALLS:
                    return True
        return False

    @staticmethod
    def _suppresses_import_error(node: cst.With) -> bool:
        for item in node.items:
            call = item.item
            if isinstance(call, cst.Call) and (dotted_name(call.func) or "").endswith("suppress"):
                if any((dotted_name(a.value) or "") in _IMPORT_ERRORS for a in call.args):
                    return True
        return False


def _handles_import_error(handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    for item in types:
        expr = item.value if isinstance(item, cst.BaseElement) else item
        if (dotted_name(expr) or "").rsplit(".", 1)[-1] in _IMPORT_ERRORS:
            return True
    return False


def _merge(values: list[tuple[Vendor, cst.BaseExpression]]) -> Vendor:
    """Several assignments of one name must agree, else the name is unknown.

    Literal constants are fallbacks (`IS_ROCM = False` in an `except ImportError:`), left out; a name
    only ever set to constants (`USE_GRAPHS = False`) is a switch users flip, not a vendor test.
    """
    tests = [value for value, source in values if not _is_constant(source)]
    if not tests:
        return UNKNOWN
    first = tests[0]
    return first if all(value == first for value in tests) else UNKNOWN


def _is_constant(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and node.value in ("True", "False", "None")


def _return_statements(function: cst.FunctionDef) -> list[cst.Return]:
    """The `return` statements of a function (not those of nested defs, classes or lambdas)."""
    found: list[cst.Return] = []
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Return):
            found.append(node)
            continue
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.BaseExpression)):
            continue
        stack.extend(children(node))
    return found


def _is_none(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _string(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _imported_modules(statement: cst.Import | cst.ImportFrom) -> list[str]:
    if isinstance(statement, cst.Import):
        return [dotted_name(alias.name) or "" for alias in statement.names]
    if statement.relative or statement.module is None:
        return []
    return [dotted_name(statement.module) or ""]


def _package_vendor(module: str) -> Vendor | None:
    """Where a module can be imported, if it belongs to a vendor-only package."""
    for vendor, key in ((NVIDIA, "nvidia_only"), (NEITHER, "other_accelerators")):
        if any(module == package or module.startswith(package + ".") for package in _VENDOR_PACKAGES[key]):
            return vendor
    return None


def _names_a_device_type(subject: cst.CSTNode) -> bool:
    """`x.device.type`, `device_type`, `device`, `infer_device()`: what a device-type comparison reads."""
    name = dotted_name(subject.func if isinstance(subject, cst.Call) else subject) or ""
    return "device" in name.lower()
