"""Vendor-valued names: the constant strings an expression may hold on a ROCm and on an NVIDIA build, and
what comparing it with strings means per vendor.

`PLATFORM = "rocm" if torch.version.hip else "cuda"` holds "rocm" on ROCm and "cuda" on NVIDIA, so
`PLATFORM == "cuda"` is false on ROCm: a gate. The values are followed through names (every assignment
of the scope, each under the conditions it runs under: an if/elif/else chain whose arms test vendors
gives each vendor only the values of the arms it can take, and an assignment that always runs replaces
the earlier ones), conditional expressions, the `return`s of a function, class and `self` attributes, Triton's backend
name (`get_current_target().backend`: "hip" on ROCm, "cuda" on NVIDIA),
and names imported from other modules of the project (`StringResolver`). Other accelerators' values
("xpu", "mps", "cpu") are simply values that belong to neither vendor.

A member of an enum class is a value too (`EnumMember`): `get_device_type()` returning `DeviceType.ROCm` when
`torch.version.hip` is set, else `DeviceType.Cuda`, makes `device_type == DeviceType.Cuda` false on ROCm. A member
is only ever equal to itself: compared with a string or a number (an `IntEnum` member equals its value) it
decides nothing.

Never a guess: one value that is not a string constant (or None) on a vendor leaves that vendor's
values unknown, and a comparison only counts when an operand's values differ between the vendors (a
name only ever set to "cuda" is a setting, not a vendor test). The per-vendor conditions come from the
gate analysis (`Gates`, which gating.GateAnalyzer is; it asks `comparison` in turn).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from rocmlint.data import load
from rocmlint.python.scopes import FUNCTION_DEFS, FunctionNode, ScopeNode, dotted_name, is_none, own_returns
from rocmlint.python.semantic import MAX_DEPTH, Binding, Semantic
from rocmlint.python.values import element_values
from rocmlint.vendor import CONSTANT_TRUE, Tri, Vendor


@dataclass(frozen=True)
class EnumMember:
    """A member of an enum class (`DeviceType.Cuda`), named by its class (and the line the class starts on, so
    two enums of one name in two modules stay apart) and member."""

    enum: str
    line: int
    member: str


Constant = str | bool | None | EnumMember
# The values a vendor may see: None when not known (anything is possible).
Possible = frozenset[Constant] | None
_COLLECTION_CALLS = frozenset({"tuple", "list", "set", "frozenset"})
_ENUM_BASES = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"})
# Triton's `driver.active.get_current_target()` names its backend "hip" on ROCm and "cuda" on NVIDIA.
_TRITON_TARGET_CALL = "get_current_target"
_WORDS = load("vendor_packages")
_ROCM_WORDS = frozenset(_WORDS["rocm_backend_words"])
_NVIDIA_WORDS = frozenset(_WORDS["nvidia_backend_words"])


@dataclass(frozen=True)
class VendorStrings:
    """The constant values (strings, or None) an expression may hold on a ROCm and on an NVIDIA build."""

    rocm: Possible
    nvidia: Possible

    @property
    def known(self) -> bool:
        return self.rocm is not None or self.nvidia is not None

    @property
    def decided_by_vendor(self) -> bool:
        """The values differ between the vendors: what the expression holds depends on a vendor test."""
        return self.rocm != self.nvidia


UNKNOWN_STRINGS = VendorStrings(None, None)
_TRITON_BACKENDS = VendorStrings(frozenset({"hip"}), frozenset({"cuda"}))
# Resolves a qualified name defined in another module of the project to its values ("()" at the end: the
# values of calling it), None when unknown.
StringResolver = Callable[[str], "VendorStrings | None"]
# Where `Gates.reach` starts: a node, a statement list (a function's `body`: entering it, whatever decides
# whether the function runs), or None (the module).
Within = ast.AST | list[ast.stmt] | None


class Gates(Protocol):
    """What this analysis asks of the gate analysis."""

    def value(self, expr: ast.AST, depth: int = 0) -> Vendor: ...

    def reach(self, node: ast.AST, within: Within = None) -> Vendor: ...

    def terminates(self, statements: Sequence[ast.stmt]) -> bool: ...


class VendorValues:
    def __init__(self, semantic: Semantic, gates: Gates, resolve_external: StringResolver | None = None) -> None:
        self.semantic = semantic
        self.gates = gates
        self.resolve_external = resolve_external
        self._cache: dict[tuple[int, ...], VendorStrings] = {}
        self._nesting = 0  # names and functions being evaluated, one inside another

    # --- public -----------------------------------------------------------------------------------
    def comparison(self, expr: ast.Compare) -> Vendor | None:
        """What a comparison (`==`, `!=`, `in`, `not in`, `is None`; a chain `a == b == c` is the `and` of
        its links) evaluates to per vendor, when an operand holds vendor-decided values; else None."""
        result = CONSTANT_TRUE
        decided = False
        for left, operator, right in self.semantic.comparison_pairs(expr):
            link = self._link(left, operator, right)
            if link is None:
                result = result.both(Vendor(None, None))
                continue
            decided = True
            result = result.both(link)
        return result if decided else None

    def strings(self, expr: ast.AST, depth: int = 0) -> VendorStrings:
        """The values `expr` may hold per vendor, evaluated where it stands."""
        if depth > MAX_DEPTH:
            return UNKNOWN_STRINGS
        if isinstance(expr, ast.Constant):
            return _constant(expr.value)
        if isinstance(expr, ast.IfExp):
            return self._arms(expr, depth)
        if isinstance(expr, ast.NamedExpr):
            return self.strings(expr.value, depth + 1)
        if isinstance(expr, ast.Name):
            return self._name(expr)
        if isinstance(expr, ast.Attribute):
            return self._attribute(expr, called=False)
        if isinstance(expr, ast.Call):
            return self._call(expr)
        return UNKNOWN_STRINGS

    def symbol_strings(self, name: str, called: bool = False) -> VendorStrings | None:
        """The values of a module-level name of this file (for other modules importing it); with `called`,
        of calling it. None when nothing is known."""
        head, _, member = name.partition(".")
        binding = self.semantic.lookup_in(self.semantic.module, head)
        if binding is not None and member:  # `GPU.vendor`: a member of a class of this file
            if binding.kind == "import":  # a class this module imports (a package's `__init__`)
                found = self._external(f"{binding.qualified}.{member}", called)
                return found if found.known else None
            owner = binding.definition if binding.kind == "class" else None
            enum_member = self._enum_member(owner, member) if isinstance(owner, ast.ClassDef) else None
            if enum_member is not None:
                return None if called else enum_member
            binding = self.semantic.member(owner, member) if isinstance(owner, ast.ClassDef) else None
        if binding is None:
            return None
        found = self._binding_strings(binding, None, called, name=None if member else name)
        return found if found.known else None

    def variable_strings(self, binding: Binding, name: str) -> VendorStrings:
        """The values of a variable as a read after every assignment sees them (a flag read in a def or
        another module)."""
        return self._binding_strings(binding, None, called=False, name=name)

    # --- comparisons ------------------------------------------------------------------------------
    def _link(self, left: ast.expr, operator: ast.cmpop, right: ast.expr) -> Vendor | None:
        if isinstance(operator, (ast.Is, ast.IsNot)) and not (is_none(left) or is_none(right)):
            return None
        if isinstance(operator, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            members = [right]
        elif isinstance(operator, (ast.In, ast.NotIn)):
            found = self._members(right)
            if found is None:
                return None
            members = found
        else:
            return None
        subject = self.strings(left)
        candidates = [self.strings(member) for member in members]
        if not subject.decided_by_vendor and not any(candidate.decided_by_vendor for candidate in candidates):
            return None
        if _mixes_members([subject, *candidates]):
            return None
        value = Vendor(
            _membership(subject.rocm, [candidate.rocm for candidate in candidates]),
            _membership(subject.nvidia, [candidate.nvidia for candidate in candidates]),
        )
        return value.negate() if isinstance(operator, (ast.NotEq, ast.IsNot, ast.NotIn)) else value

    def _members(self, collection: ast.expr) -> list[ast.expr] | None:
        """The elements of the tuple, list or set a membership test searches (written out, through a name
        assigned once, or in `set(...)`/`tuple(...)`), None when it is no such collection."""
        value = self.semantic.single_value(collection)
        if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
            if self.semantic.qualified_name(value.func) in _COLLECTION_CALLS:
                value = self.semantic.single_value(value.args[0])
        if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
            return element_values(value)
        return None

    # --- expression forms -------------------------------------------------------------------------
    def _arms(self, expr: ast.IfExp, depth: int) -> VendorStrings:
        test = self.gates.value(expr.test)
        body = self.strings(expr.body, depth + 1)
        orelse = self.strings(expr.orelse, depth + 1)
        return VendorStrings(
            _choose(test.rocm, body.rocm, orelse.rocm), _choose(test.nvidia, body.nvidia, orelse.nvidia)
        )

    def _name(self, name: ast.Name) -> VendorStrings:
        binding = self.semantic.lookup(name.id, name)
        return (
            self._binding_strings(binding, name, called=False, name=name.id) if binding is not None else UNKNOWN_STRINGS
        )

    def _attribute(self, expr: ast.Attribute, called: bool) -> VendorStrings:
        """`self.platform`, `Config.PLATFORM` (a class of this file), `env.PLATFORM` (an imported module);
        with `called`, what calling it returns (`self.backend()`)."""
        if not called and _is_triton_backend(expr):
            return _TRITON_BACKENDS
        cls = self.semantic.receiver_class(expr)
        if cls is not None:
            member = self._enum_member(cls, expr.attr)
            if member is not None and not called:
                return member
            binding = self.semantic.member(cls, expr.attr)
            return self._binding_strings(binding, None, called) if binding is not None else UNKNOWN_STRINGS
        head = (dotted_name(expr) or "").split(".", 1)[0]
        binding = self.semantic.lookup(head, expr) if head else None
        if binding is None:
            return UNKNOWN_STRINGS
        if binding.kind == "value" and isinstance(expr.value, ast.Name):
            return self._instance_member(binding, expr.attr, called)
        if binding.kind != "import":
            return UNKNOWN_STRINGS
        return self._external(self.semantic.qualified_name(expr), called)

    def _instance_member(self, instance: Binding, member: str, called: bool) -> VendorStrings:
        """A member of the one instance a name holds (`gpu = GPU()`, then `gpu.vendor`): the member of its
        class, defined in this file or imported from another module of the project."""
        made = instance.single
        if not isinstance(made, ast.Call) or not isinstance(made.func, ast.Name):
            return UNKNOWN_STRINGS
        cls = self.semantic.lookup(made.func.id, made.func)
        if cls is not None and cls.kind == "class" and isinstance(cls.definition, ast.ClassDef):
            binding = self.semantic.member(cls.definition, member)
            return self._binding_strings(binding, None, called) if binding is not None else UNKNOWN_STRINGS
        if cls is not None and cls.kind == "import":
            return self._external(f"{cls.qualified}.{member}", called)
        return UNKNOWN_STRINGS

    def _enum_member(self, cls: ast.ClassDef, name: str) -> VendorStrings | None:
        """`name` as a member of `cls` when `cls` is an enum (a direct subclass of one of `enum`'s) and assigns
        `name` in its body; else None."""
        if not any(self.semantic.qualified_name(base) in _ENUM_BASES for base in cls.bases):
            return None
        binding = self.semantic.lookup_in(cls, name)
        if binding is None or binding.kind != "value":
            return None
        member = frozenset({EnumMember(cls.name, cls.lineno, name)})
        return VendorStrings(member, member)

    def _call(self, call: ast.Call) -> VendorStrings:
        """What a function or method of this file, or an imported function, returns (`device_kind()`).
        Its parameters are unknown values, so what the arguments are does not matter."""
        func = call.func
        if isinstance(func, ast.Name):
            binding = self.semantic.lookup(func.id, func)
            return self._binding_strings(binding, None, called=True) if binding is not None else UNKNOWN_STRINGS
        if isinstance(func, ast.Attribute):
            return self._attribute(func, called=True)
        return UNKNOWN_STRINGS

    def _external(self, qualified: str | None, called: bool) -> VendorStrings:
        """A name defined in another module of the project (not torch's: those are never vendor-valued)."""
        if self.resolve_external is None or not qualified or "." not in qualified or qualified.startswith("torch."):
            return UNKNOWN_STRINGS
        return self.resolve_external(qualified + ("()" if called else "")) or UNKNOWN_STRINGS

    # --- names and functions ----------------------------------------------------------------------
    def _binding_strings(
        self, binding: Binding, reader: ast.Name | None, called: bool, name: str | None = None
    ) -> VendorStrings:
        """The values of a binding (an import, a variable or attribute, or with `called` a def) as `reader`
        sees them (None: a read from elsewhere, after every assignment); a variable `name` also gets its
        parts of tuple assignments (`IS_ROCM, BACKEND = True, "rocm"`)."""
        if binding.kind == "import":
            return self._external(binding.qualified, called)
        if called or _is_property(binding):
            function = binding.definition
            if binding.kind != "function" or not isinstance(function, FUNCTION_DEFS):
                return UNKNOWN_STRINGS
            return self._memoised((id(function),), lambda: self._returns(function))
        if binding.kind != "value":
            return UNKNOWN_STRINGS
        values = self.semantic.known_values(binding, name) if name is not None else None
        if values is None:
            values = None if binding.opaque else binding.values
        if values is None:
            return UNKNOWN_STRINGS
        assignments = self._assignments(binding, values, reader)
        if not assignments:
            return UNKNOWN_STRINGS
        key = tuple(id(value) for value, _ in assignments)
        return self._memoised(key, lambda: self._assigned(assignments, binding.scope.node))

    def _memoised(self, key: tuple[int, ...], evaluate: Callable[[], VendorStrings]) -> VendorStrings:
        """Each name's (function's) values once; a cycle (`if P == "a": P = "b"`) or names nested deeper
        than `MAX_DEPTH` (each one's conditions compare the next) are unknown."""
        known = self._cache.get(key)
        if known is not None:
            return known
        if self._nesting >= MAX_DEPTH:
            return UNKNOWN_STRINGS
        self._cache[key] = UNKNOWN_STRINGS
        self._nesting += 1
        try:
            found = evaluate()
        finally:
            self._nesting -= 1
        self._cache[key] = found
        return found

    def _assignments(
        self, binding: Binding, values: tuple[ast.expr, ...], reader: ast.Name | None
    ) -> list[tuple[ast.expr, ast.stmt]]:
        """Each value the binding is assigned, with its statement, in writing order; a read in the
        binding's own scope sees only the assignments written before it."""
        found: list[tuple[ast.expr, ast.stmt]] = []
        same_scope = reader is not None and self.semantic.enclosing_scope_node(reader) is binding.scope.node
        for value in values:
            statement = self.semantic.statement_of(value)
            if statement is None or (same_scope and reader is not None and _ends_after(statement, reader)):
                continue
            found.append((value, statement))
        found.sort(key=lambda pair: (pair[1].lineno, pair[1].col_offset))
        return found

    def _assigned(self, assignments: list[tuple[ast.expr, ast.stmt]], scope: ScopeNode) -> VendorStrings:
        """Per vendor, the values of the assignments that can run there, from the last one that always
        runs there (and so replaces those before it) on."""
        reaches = [self.gates.reach(statement, self._scope_body(statement)) for _, statement in assignments]
        straight = [self._straight(statement, scope) for _, statement in assignments]
        values = [self.strings(value) for value, _ in assignments]
        return _vendor_names(
            VendorStrings(
                _union([v.rocm for v in values], [r.rocm for r in reaches], _last_always(reaches, straight, rocm=True)),
                _union(
                    [v.nvidia for v in values],
                    [r.nvidia for r in reaches],
                    _last_always(reaches, straight, rocm=False),
                ),
            )
        )

    def _returns(self, function: FunctionNode) -> VendorStrings:
        """The values a function returns per vendor (None too where it can fall off its end)."""
        returns = own_returns(function)
        reaches = [self.gates.reach(statement, function.body) for statement in returns]
        values = [self.strings(statement.value) if statement.value else _NONE for statement in returns]
        if not self.gates.terminates(function.body):
            values.append(_NONE)
            reaches.append(CONSTANT_TRUE)
        return _vendor_names(
            VendorStrings(
                _union([v.rocm for v in values], [r.rocm for r in reaches], 0),
                _union([v.nvidia for v in values], [r.nvidia for r in reaches], 0),
            )
        )

    def _scope_body(self, statement: ast.stmt) -> Within:
        """Where an assignment's conditions start: its def's or class's body, or the module."""
        owner = self.semantic.enclosing_scope_node(statement)
        return None if isinstance(owner, ast.Module) else owner.body

    def _straight(self, statement: ast.stmt, scope: ScopeNode) -> bool:
        """Written in the binding's own scope, nested only in `if` arms: it runs, in writing order,
        whenever they are taken (a loop body may run no time, a `try` body may stop half way, a handler
        only runs after a failure; `self.x = ...` in two methods, or `global x` in a def, run in an order
        nobody knows)."""
        if self.semantic.enclosing_scope_node(statement) is not scope:
            return False
        for ancestor in self.semantic.ancestors(statement):
            if ancestor is scope:
                return True
            if not isinstance(ancestor, ast.If):
                return False
        return True


def _constant(value: object) -> VendorStrings:
    if value is None:
        return _NONE
    if type(value) is str or type(value) is bool:
        return VendorStrings(frozenset({value}), frozenset({value}))
    return UNKNOWN_STRINGS


_NONE = VendorStrings(frozenset({None}), frozenset({None}))


def _mixes_members(operands: list[VendorStrings]) -> bool:
    """Enum members compared with other values (strings, flags): an `IntEnum` or `StrEnum` member equals its
    value, which the members do not record, so such a comparison decides nothing."""
    values = [value for operand in operands for possible in (operand.rocm, operand.nvidia) for value in possible or ()]
    members = [isinstance(value, EnumMember) for value in values if value is not None]
    return any(members) and not all(members)


def _is_property(binding: Binding) -> bool:
    """A method read as an attribute returns its value (`@property def vendor(self): return self._vendor`)."""
    definition = binding.definition
    if binding.kind != "function" or not isinstance(definition, FUNCTION_DEFS):
        return False
    return any(dotted_name(decorator) == "property" for decorator in definition.decorator_list)


def _vendor_names(found: VendorStrings) -> VendorStrings:
    """A value whose every string names one GPU vendor, both vendors among them (`get_vendor()` returning
    "nvidia" or "amd" by the device files it finds, None when neither): it names the vendor of the machine
    it runs on, so a ROCm machine sees only the ROCm names (or None) and an NVIDIA one only the NVIDIA names.
    Anything else is returned as found."""
    values = found.rocm
    if values is None or found.decided_by_vendor:
        return found
    named: dict[Constant, str | None] = {value: _named_vendor(value) for value in values if value is not None}
    if None in named.values() or set(named.values()) != {"rocm", "nvidia"}:
        return found
    return VendorStrings(
        frozenset(value for value in values if named.get(value, "rocm") == "rocm"),  # None: on either
        frozenset(value for value in values if named.get(value, "nvidia") == "nvidia"),
    )


def _named_vendor(value: Constant) -> str | None:
    """`"rocm"` or `"nvidia"` when a string's words name exactly that vendor ("amd-graphics", "cuda"), else None."""
    if not isinstance(value, str):
        return None
    words = set(re.split(r"[^a-z0-9]+", value.lower()))
    rocm, nvidia = bool(words & _ROCM_WORDS), bool(words & _NVIDIA_WORDS)
    if rocm == nvidia:
        return None
    return "rocm" if rocm else "nvidia"


def _choose(test: Tri, body: Possible, orelse: Possible) -> Possible:
    """The values of `body if test else orelse` on one vendor."""
    if test is True:
        return body
    if test is False:
        return orelse
    return None if body is None or orelse is None else body | orelse


def _last_always(reaches: list[Vendor], straight: list[bool], rocm: bool) -> int:
    """The index of the last assignment that always runs on the vendor (0 when none does)."""
    last = 0
    for index, (reach, unconditional) in enumerate(zip(reaches, straight, strict=True)):
        if unconditional and (reach.rocm if rocm else reach.nvidia) is True:
            last = index
    return last


def _union(values: list[Possible], reaches: list[Tri], start: int) -> Possible:
    """What one vendor may see of `values[start:]`: each value whose reach there is not False; unknown as
    soon as one of them is (or none can be seen: the name is set elsewhere, or not at all)."""
    found: set[Constant] = set()
    for possible, reach in zip(values[start:], reaches[start:], strict=True):
        if reach is False:
            continue
        if possible is None:
            return None
        found.update(possible)
    return frozenset(found) if found else None


def _membership(subject: Possible, members: list[Possible]) -> Tri:
    """Is the subject's value one of the members' (three-valued)? True when every value it may hold is
    certainly there, False when none of them can be."""
    if subject is None or any(member is None for member in members):
        return None
    certain = {next(iter(member)) for member in members if member is not None and len(member) == 1}
    possible = {value for member in members if member is not None for value in member}
    if subject <= certain:
        return True
    if not subject & possible:
        return False
    return None


def _ends_after(statement: ast.stmt, reader: ast.Name) -> bool:
    """Whether `statement` is not over when `reader` is evaluated (it holds it, or comes later)."""
    end = (statement.end_lineno or statement.lineno, statement.end_col_offset or 0)
    return end > (reader.lineno, reader.col_offset)


def _is_triton_backend(expr: ast.Attribute) -> bool:
    """`<driver>.get_current_target().backend` (however the driver is reached)."""
    target = expr.value
    return (
        expr.attr == "backend"
        and isinstance(target, ast.Call)
        and isinstance(target.func, ast.Attribute)
        and target.func.attr == _TRITON_TARGET_CALL
    )
