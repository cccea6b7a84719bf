"""Which vendor a piece of Python can run on, from the ROCm/NVIDIA tests around it.

Every expression gets a `Vendor` value: what it evaluates to (truthiness, three-valued) on a ROCm build
and on an NVIDIA build. `torch.version.hip` is (True, False); `torch.version.cuda` is (False, True);
`torch.cuda.is_available()` is (unknown, unknown) because it is true on both. A node's `Branch` combines
the values of every condition it sits under: the branch of `if`/`elif`/`else`, conditional expressions,
`and`/`or` short-circuits, early `return`/`raise`/`continue`/`break`/skip after a test, `assert`, and
test-skip decorators. The forms recognised are those of RULES.md, "What gated means".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from rocmlint.python.scopes import dotted_name
from rocmlint.python.semantic import Binding, Semantic
from rocmlint.python.tree import children

Tri = bool | None  # True, False, or None for "unknown"


def and3(a: Tri, b: Tri) -> Tri:
    if a is False or b is False:
        return False
    if a is True and b is True:
        return True
    return None


def or3(a: Tri, b: Tri) -> Tri:
    if a is True or b is True:
        return True
    if a is False and b is False:
        return False
    return None


def not3(a: Tri) -> Tri:
    return None if a is None else not a


@dataclass(frozen=True)
class Vendor:
    """The truth value of an expression on a ROCm build and on an NVIDIA build."""

    rocm: Tri
    nvidia: Tri

    def negate(self) -> Vendor:
        return Vendor(not3(self.rocm), not3(self.nvidia))

    @property
    def is_vendor_test(self) -> bool:
        return self.rocm is not None or self.nvidia is not None


UNKNOWN = Vendor(None, None)
ROCM = Vendor(True, False)
NVIDIA = Vendor(False, True)
CONSTANT_TRUE = Vendor(True, True)
CONSTANT_FALSE = Vendor(False, False)


@dataclass(frozen=True)
class Branch:
    """Whether a node can run on each vendor: True (whenever reached), False (never), None (maybe)."""

    on_rocm: Tri = True
    on_nvidia: Tri = True

    def under(self, condition: Vendor, taken: bool) -> Branch:
        value = condition if taken else condition.negate()
        return Branch(and3(self.on_rocm, value.rocm), and3(self.on_nvidia, value.nvidia))


EVERYWHERE = Branch()

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
    r"(?:_*(?:gpu|platform|build|backend|device))?|on_(?:gfx|mi)\w*)$",
    re.IGNORECASE,
)
_NVIDIA_CONVENTION = re.compile(r"^_*(?:is|on|using|running_on)_*nvidia(?:_*gpu)?$", re.IGNORECASE)
# `current_platform.is_rocm()` / `.is_cuda()` (vLLM: is_cuda means NVIDIA there).
_ROCM_METHODS = frozenset({"is_rocm", "is_hip"})
_NVIDIA_METHODS = frozenset({"is_cuda"})
_SKIP_DECORATOR_ROCM = re.compile(r"^skip_?if_?rocm\w*$", re.IGNORECASE)
_SKIP_DECORATOR_NOT_ROCM = re.compile(r"^skip_?if_?not_?rocm\w*$", re.IGNORECASE)
_TERMINATING_CALLS = frozenset({"sys.exit", "exit", "quit", "os._exit", "pytest.skip", "pytest.exit", "pytest.fail"})
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
_MAX_DEPTH = 12

# Resolves a qualified name defined in another module of the scanned tree to its vendor value.
CrossModuleResolver = Callable[[str], "Vendor | None"]


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

    # --- public -----------------------------------------------------------------------------------
    def branch(self, node: cst.CSTNode) -> Branch:
        cached = self._branch_cache.get(node)
        if cached is not None:
            return cached
        parent = self.semantic.parent(node)
        result = EVERYWHERE if parent is None else self.branch(parent)
        if parent is not None:
            for condition, taken in self._conditions(parent, node):
                result = result.under(condition, taken)
        self._branch_cache[node] = result
        return result

    def in_import_guard(self, node: cst.CSTNode) -> bool:
        """Inside the body of a `try:` whose handlers catch ImportError (or broader), or `suppress(ImportError)`."""
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
            combine = and3 if isinstance(expr.operator, cst.And) else or3
            return Vendor(combine(left.rocm, right.rocm), combine(left.nvidia, right.nvidia))
        if isinstance(expr, cst.Comparison):
            return self._comparison(expr, depth)
        if isinstance(expr, cst.Call):
            return self._call(expr, depth)
        if isinstance(expr, (cst.Name, cst.Attribute)):
            return self._reference(expr, depth)
        return UNKNOWN

    def symbol_value(self, name: str) -> Vendor | None:
        """The vendor value of a module-level name of this file (for other modules importing it)."""
        binding = self.semantic._lookup_in(self.semantic.scope(self.semantic.module), name)
        if binding is None:
            return None
        return self._binding_value(binding, name, depth=0, called=None)

    # --- conditions a child inherits from its parent -----------------------------------------------
    def _conditions(self, parent: cst.CSTNode, child: cst.CSTNode) -> list[tuple[Vendor, bool]]:
        if isinstance(parent, cst.If):
            if child is parent.body:
                return [(self.value(parent.test), True)]
            if child is parent.orelse:
                return [(self.value(parent.test), False)]
            return []
        if isinstance(parent, cst.IfExp):
            if child is parent.body:
                return [(self.value(parent.test), True)]
            if child is parent.orelse:
                return [(self.value(parent.test), False)]
            return []
        if isinstance(parent, cst.BooleanOperation) and child is parent.right:
            return [(self.value(parent.left), isinstance(parent.operator, cst.And))]
        if isinstance(parent, cst.While) and child is parent.body:
            return [(self.value(parent.test), True)]
        if isinstance(parent, cst.FunctionDef) and child is parent.body:
            return self._decorator_conditions(parent)
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            return self._early_exit_conditions(parent, child)
        return []

    def _early_exit_conditions(
        self, block: cst.IndentedBlock | cst.Module, child: cst.CSTNode
    ) -> list[tuple[Vendor, bool]]:
        conditions: list[tuple[Vendor, bool]] = []
        for statement in block.body:
            if statement is child:
                break
            if isinstance(statement, cst.If):
                body_exits = _terminates(statement.body, self.semantic)
                if statement.orelse is None and body_exits:
                    conditions.append((self.value(statement.test), False))
                elif isinstance(statement.orelse, cst.Else) and not body_exits:
                    if _terminates(statement.orelse.body, self.semantic):
                        conditions.append((self.value(statement.test), True))
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assert):
                        conditions.append((self.value(small.test), True))
        return conditions

    def _decorator_conditions(self, function: cst.FunctionDef) -> list[tuple[Vendor, bool]]:
        conditions: list[tuple[Vendor, bool]] = []
        for decorator in function.decorators:
            expr = decorator.decorator
            name = dotted_name(expr.func if isinstance(expr, cst.Call) else expr) or ""
            last = name.rsplit(".", 1)[-1]
            if _SKIP_DECORATOR_NOT_ROCM.match(last):
                conditions.append((ROCM, True))
            elif _SKIP_DECORATOR_ROCM.match(last):
                conditions.append((ROCM, False))
            elif isinstance(expr, cst.Call) and expr.args and last in ("skipIf", "skipif", "skipUnless"):
                condition = self.value(expr.args[0].value)
                conditions.append((condition, last == "skipUnless"))
        return conditions

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
        literal = _string(right) or _string(expr.left)
        subject = expr.left if _string(right) is not None else right
        if literal is not None and isinstance(operator, (cst.Equal, cst.NotEqual)):
            value = self._backend_comparison(subject, literal)
            return value.negate() if isinstance(operator, cst.NotEqual) else value
        return UNKNOWN

    def _backend_comparison(self, subject: cst.CSTNode, literal: str) -> Vendor:
        """Triton's `get_current_target().backend == "hip"` and friends."""
        if isinstance(subject, cst.Attribute) and subject.attr.value == "backend":
            if literal == "hip":
                return ROCM
            if literal == "cuda":
                return NVIDIA
        return UNKNOWN

    def _call(self, call: cst.Call, depth: int) -> Vendor:
        func = call.func
        name = self.semantic.qualified_name(func) or ""
        if name in ("getattr",) and len(call.args) >= 2:
            owner = self.semantic.qualified_name(call.args[0].value)
            attribute = _string(call.args[1].value)
            if owner and attribute:
                return self._named(f"{owner}.{attribute}")
            return UNKNOWN
        if name == "hasattr" and len(call.args) >= 2:
            owner = self.semantic.qualified_name(call.args[0].value)
            # torch.version.hip exists (as None) on NVIDIA builds too, but always on ROCm builds.
            if owner == "torch.version" and _string(call.args[1].value) == "hip":
                return Vendor(True, None)
            return UNKNOWN
        if name == "bool" and len(call.args) == 1:
            return self.value(call.args[0].value, depth + 1)
        if isinstance(func, cst.Attribute) and not call.args:
            if func.attr.value in _ROCM_METHODS:
                return ROCM
            if func.attr.value in _NVIDIA_METHODS:
                return NVIDIA
        configured = self._configured(name)
        if configured is not None:
            return configured
        if isinstance(func, cst.Name):
            binding = self.semantic.lookup(func.value, func)
            if binding is not None:
                resolved = self._binding_value(binding, func.value, depth + 1, called=call)
                if resolved.is_vendor_test:
                    return resolved
            if func.value in _NVIDIA_METHODS:
                return NVIDIA
        if isinstance(func, cst.Name) and binding_is_import(self.semantic, func):
            external = self._external(name)
            if external is not None:
                return external
        return self._convention(name)

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
                resolved = self._binding_value(binding, expr.value, depth + 1, called=None)
                if resolved.is_vendor_test:
                    return resolved
        elif isinstance(expr.value, cst.Name) and expr.value.value in ("self", "cls"):
            resolved = self._class_attribute(expr, depth)
            if resolved.is_vendor_test:
                return resolved
        external = self._external(name)
        if external is not None:
            return external
        return self._convention(name)

    def _named(self, qualified: str) -> Vendor:
        if qualified in _ROCM_NAMES:
            return ROCM
        if qualified in _NVIDIA_NAMES:
            return NVIDIA
        return UNKNOWN

    def _configured(self, qualified: str) -> Vendor | None:
        if not qualified or not self.rocm_guards:
            return None
        last = qualified.rsplit(".", 1)[-1]
        for guard in self.rocm_guards:
            if qualified == guard or guard.rsplit(".", 1)[-1] == last and "." not in qualified:
                return ROCM
        return None

    def _convention(self, qualified: str) -> Vendor:
        last = qualified.rsplit(".", 1)[-1]
        if not last:
            return UNKNOWN
        if _ROCM_CONVENTION.match(last):
            return ROCM
        if _NVIDIA_CONVENTION.match(last):
            return NVIDIA
        return UNKNOWN

    def _external(self, qualified: str) -> Vendor | None:
        if self.resolve_external is None or "." not in qualified or qualified.startswith("torch."):
            return None
        return self.resolve_external(qualified)

    def _class_attribute(self, expr: cst.Attribute, depth: int) -> Vendor:
        """`self.IS_ROCM` / `cls.IS_ROCM` read in a method of the class that assigns it."""
        for ancestor in self.semantic.ancestors(expr):
            if isinstance(ancestor, cst.ClassDef):
                scope = self.semantic.scope(ancestor)
                binding = self.semantic._lookup_in(scope, expr.attr.value)
                if binding is None:
                    return UNKNOWN
                return self._binding_value(binding, expr.attr.value, depth + 1, called=None)
        return UNKNOWN

    def _binding_value(self, binding: Binding, name: str, depth: int, called: cst.Call | None) -> Vendor:
        key = (id(binding.scope.node), name + ("()" if called is not None else ""))
        cached = self._binding_cache.get(key)
        if cached is not None:
            return cached
        self._binding_cache[key] = UNKNOWN  # breaks cycles (`x = not x`)
        result = self._evaluate_binding(binding, depth, called)
        self._binding_cache[key] = result
        return result

    def _evaluate_binding(self, binding: Binding, depth: int, called: cst.Call | None) -> Vendor:
        if binding.kind == "value" and called is None:
            return _merge([self.value(v, depth + 1) for v in binding.values], binding.values)
        if binding.kind == "function" and called is not None and isinstance(binding.definition, cst.FunctionDef):
            returns = _return_values(binding.definition)
            return _merge([self.value(v, depth + 1) for v in returns], returns)
        if binding.kind == "import" and binding.qualified:
            direct = self._named(binding.qualified)
            if direct.is_vendor_test:
                return direct
            external = self._external(binding.qualified)
            if external is not None:
                return external
        return UNKNOWN

    @staticmethod
    def _catches_import_error(node: cst.Try) -> bool:
        for handler in node.handlers:
            if handler.type is None:
                return True
            types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
            for item in types:
                expr = item.value if isinstance(item, cst.Element) else item
                if (dotted_name(expr) or "").rsplit(".", 1)[-1] in _IMPORT_ERRORS:
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


def binding_is_import(semantic: Semantic, name: cst.Name) -> bool:
    binding = semantic.lookup(name.value, name)
    return binding is not None and binding.kind == "import"


def _merge(values: list[Vendor], sources: tuple[cst.BaseExpression, ...] | list[cst.BaseExpression]) -> Vendor:
    """Several assignments (or returns) of one name: agree, or unknown.

    Plain constants are fallbacks (`IS_ROCM = False` in an `except ImportError:`), so when any assignment
    is a real vendor test the constants are left out.
    """
    tests = [v for v, s in zip(values, sources) if v.is_vendor_test and not _is_constant(s)]
    chosen = tests or values
    if not chosen:
        return UNKNOWN
    first = chosen[0]
    return first if all(v == first for v in chosen) else UNKNOWN


def _is_constant(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and node.value in ("True", "False", "None")


def _return_values(function: cst.FunctionDef) -> list[cst.BaseExpression]:
    """The expressions a function returns (not looking into nested defs)."""
    found: list[cst.BaseExpression] = []
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Return) and node.value is not None:
            found.append(node.value)
            continue
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) or isinstance(node, cst.BaseExpression):
            continue
        stack.extend(children(node))
    return found


def _terminates(block: cst.BaseSuite, semantic: Semantic) -> bool:
    """Does this block always leave the enclosing block (return, raise, continue, break, exit, skip)?"""
    statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
    if not statements:
        return False
    last = statements[-1]
    smalls = last.body if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else []
    for small in smalls:
        if isinstance(small, (cst.Return, cst.Raise, cst.Continue, cst.Break)):
            return True
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            name = semantic.qualified_name(small.value.func) or ""
            if name in _TERMINATING_CALLS or name.endswith(".skipTest"):
                return True
    return False


def _is_none(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _string(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None
