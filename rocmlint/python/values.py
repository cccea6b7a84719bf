"""What a Python expression may evaluate to: the one value tracer rules ask instead of walking values themselves.

A trace starts at an expression and walks back to the leaves it may come from: names to what they are
assigned, both arms of `a if c else b`, and (when the rule asks for them, `Follow`) operands, subscripted
values, elements, f-string fields, joins, conversions (`list(x)`), string methods, loop variables and
calls of local functions. At every expression it first asks the rule's `visit`, which knows the rule's
hazard: it returns the leaves found there (a list, possibly empty: a dead end), `Through(...)` to
continue at other expressions (a step only this rule sees through, such as `int(x)`), or None to let the
tracer follow the generic constructs.

Every step costs one unit of depth, the same for every rule (`MAX_DEPTH`); a trace started from inside
`visit` continues the depth of the expression being visited, so nested traces are bounded too (and
`x = x + "a"` cannot loop).

`Values`, one per file (`ctx.values`): `trace` itself; built on it `arms` (each arm of a conditional its
own node), `string_sources` (plain string literals), `texts` (f-strings and concatenations too),
`int_values` (constant arithmetic folded), `loop_sources` (what a loop variable is traced to); and
`collection_elements` (what a collection display holds). Forward, one step: `collection_of` (the whole
collection a value is part of), `destination` (where that collection goes next: the call it is an
argument of, the reads of the variable it is assigned or added to, or the calls of the def returning it)
and `variable_reads`. `destination` is a single step that knows nothing of the rule; `flow.value_uses`
walks on over several variables, asking the rule's `visit` what each use means.

Module helpers: `list_added_to` (`x` of `x.append(...)`), `assignment_targets` and `assigned_name`,
`fstring_fields`, `is_literal_constant`, `return_values`.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import libcst as cst

from rocmlint.python.references import References
from rocmlint.python.semantic import DEFERRED_BODIES, MAX_DEPTH, Semantic

T = TypeVar("T")
# Operands followed by every arithmetic or string operator.
ALL_OPERATORS: tuple[type[cst.BaseBinaryOp], ...] = (cst.BaseBinaryOp,)
_SEQUENCES = (cst.Tuple, cst.List, cst.Set)
_CONSTANT_NAMES = frozenset({"None", "True", "False"})
# Calls that return a sequence, or any collection, of the elements of their one argument (the one list).
SEQUENCE_CALLS = frozenset({"tuple", "list", "sorted"})
COLLECTION_CALLS = SEQUENCE_CALLS | {"set", "frozenset"}
# Calls whose result keeps the elements (or the text) of their one argument.
_CONVERSIONS = COLLECTION_CALLS | {"str"}
# Methods of a string whose result still carries the string's text.
_TEXT_METHODS = frozenset({"format", "strip", "lstrip", "rstrip"})
# Methods that add to the list they are called on, in place (the one list: `list_added_to`).
ADDING_METHODS = frozenset({"append", "extend", "insert"})
_PART_OF_COLLECTION = (cst.Element, cst.List, cst.Tuple, cst.Set, cst.StarredElement, cst.BinaryOperation)
_ELEMENT_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp)
# The statements that assign a value to targets (`assignment_targets`).
ASSIGNMENTS = (cst.Assign, cst.AugAssign, cst.AnnAssign)
_INTEGER_OPERATIONS: dict[type, Callable[[int, int], int]] = {
    cst.Add: operator.add,
    cst.Subtract: operator.sub,
    cst.Multiply: operator.mul,
    cst.FloorDivide: operator.floordiv,
    cst.LeftShift: operator.lshift,
    cst.RightShift: operator.rshift,
}
_INTEGER_CHOICES: dict[str, Callable[[list[int]], int]] = {"min": min, "max": max}


class Names(enum.Enum):
    """How a trace follows a variable."""

    SINGLE = "single"  # only a name assigned exactly once (and bound no other way) stands for its value
    ALL = "all"  # every value the name is assigned in its scope; the unknown ones (a loop target) are skipped
    # Every value, but only when each one leads to leaves or is a literal constant (`major = 0` in an
    # `except:`); nothing as soon as one is something else or unknown: the name may then hold anything.
    AGREEING = "agreeing"


@dataclass(frozen=True)
class Follow:
    """Which generic constructs a trace sees through (besides names and, unless `arms` is off, conditionals)."""

    names: Names = Names.SINGLE
    arms: bool = True  # both arms of `a if c else b`
    operators: tuple[type[cst.BaseBinaryOp], ...] = ()  # both operands of `a <op> b` for these operators
    subscripts: bool = False  # `x[i]` and `x[a:b]` come from `x`
    elements: bool = False  # every element of a tuple, list or set display
    fields: bool = False  # every `{...}` field of an f-string
    joins: bool = False  # `sep.join(x)` comes from `x` (with `elements`, from its elements)
    conversions: bool = False  # `list(x)`, `tuple(x)`, `set(x)`, `frozenset(x)`, `sorted(x)`, `str(x)` come from `x`
    text_methods: bool = False  # `s.format(...)`, `s.strip()` (and `lstrip`, `rstrip`) come from `s`
    # A loop variable takes the elements its loop iterates when they are written out (`for w in [4, 8]`,
    # tuple targets, `itertools.product`); a plain target over anything else is an element of the
    # iterable, traced as the iterable itself (like a subscript).
    loops: bool = False
    returns: bool = False  # a call of a def of this file comes from its `return` values


@dataclass(frozen=True)
class Destination:
    """Where the collection an expression belongs to goes next (`Values.destination`): exactly one of
    an argument of a call, the reads of the variable it is assigned or added to, or the calls of the
    def that returns it."""

    call: cst.Call | None = None
    argument: cst.Arg | None = None
    reads: tuple[cst.Name, ...] = ()
    calls: tuple[cst.Call, ...] = ()


@dataclass(frozen=True)
class IntValue:
    """One integer an expression may be (`Values.int_values`), and the node that makes it."""

    value: int
    node: cst.CSTNode
    looped: bool = False  # an element of the list a loop iterates: one of several values at run time


@dataclass(frozen=True)
class Through:
    """A rule's own step: continue the trace at these expressions."""

    parts: tuple[cst.BaseExpression, ...]


Visit = Callable[[cst.BaseExpression], "Sequence[T] | Through | None"]
# Names assigned once and both arms of conditionals.
PLAIN = Follow()
_TEXTS = Follow(text_methods=True)


class Values:
    """The value tracer of one file (`PythonContext.values`)."""

    def __init__(self, semantic: Semantic, references: References) -> None:
        self.semantic = semantic
        self.references = references
        # The depth of the expression being visited while a trace runs, so that nested traces continue it.
        self._depth: int | None = None

    def trace(self, expr: cst.BaseExpression, visit: Visit[T], follow: Follow = PLAIN) -> list[T]:
        """Every leaf `visit` finds in what `expr` may evaluate to, in source order of the steps taken."""
        outer = self._depth
        try:
            return self._trace(expr, visit, follow, 0 if outer is None else outer + 1)
        finally:
            self._depth = outer

    def _trace(self, expr: cst.BaseExpression, visit: Visit[T], follow: Follow, depth: int) -> list[T]:
        if depth > MAX_DEPTH:
            return []
        self._depth = depth
        step = visit(expr)
        if isinstance(step, Through):
            return self._trace_all(step.parts, visit, follow, depth + 1)
        if step is not None:
            return list(step)
        if isinstance(expr, cst.Name):
            return self._trace_name(expr, visit, follow, depth)
        return self._trace_all(self._steps(expr, follow), visit, follow, depth + 1)

    def _trace_all(self, parts: Sequence[cst.BaseExpression], visit: Visit[T], follow: Follow, depth: int) -> list[T]:
        found: list[T] = []
        for part in parts:
            found += self._trace(part, visit, follow, depth)
        return found

    def _trace_name(self, name: cst.Name, visit: Visit[T], follow: Follow, depth: int) -> list[T]:
        if follow.loops:
            looped = self.loop_sources(name)
            if looped is not None:
                return self._trace_all(looped, visit, follow, depth + 1)
        if follow.names is Names.SINGLE:
            binding = self.semantic.lookup(name.value, name)
            single = binding.single if binding is not None else None
            return self._trace(single, visit, follow, depth + 1) if single is not None else []
        assigned = self.semantic.assigned_values(name)
        found: list[T] = []
        for value in assigned:
            leaves = self._trace(value, visit, follow, depth + 1) if value is not None else []
            if follow.names is Names.AGREEING and not leaves and (value is None or not is_literal_constant(value)):
                return []
            found += leaves
        return found

    def _steps(self, expr: cst.BaseExpression, follow: Follow) -> list[cst.BaseExpression]:
        """The expressions `expr` comes from, one generic step back (none: `expr` is a leaf)."""
        if isinstance(expr, cst.IfExp):
            return [expr.body, expr.orelse] if follow.arms else []
        if isinstance(expr, cst.BinaryOperation):
            return [expr.left, expr.right] if isinstance(expr.operator, follow.operators) else []
        if isinstance(expr, cst.Subscript):
            return [expr.value] if follow.subscripts else []
        if isinstance(expr, _SEQUENCES):
            return [element.value for element in expr.elements] if follow.elements else []
        if isinstance(expr, cst.FormattedString):
            return fstring_fields(expr) if follow.fields else []
        if isinstance(expr, cst.Call):
            return self._call_steps(expr, follow)
        return []

    def _call_steps(self, call: cst.Call, follow: Follow) -> list[cst.BaseExpression]:
        func = call.func
        if follow.joins and isinstance(func, cst.Attribute) and func.attr.value == "join" and len(call.args) == 1:
            return [call.args[0].value]
        if follow.conversions and len(call.args) == 1 and self.semantic.qualified_name(func) in _CONVERSIONS:
            return [call.args[0].value]
        if follow.text_methods and isinstance(func, cst.Attribute) and func.attr.value in _TEXT_METHODS:
            return [func.value]
        function = self.semantic.local_function(func) if follow.returns else None
        return return_values(function) if function is not None else []

    # --- texts ----------------------------------------------------------------------------------------
    def arms(self, expr: cst.CSTNode, *, follow_names: bool = True) -> list[cst.BaseExpression]:
        """Every expression `expr` may evaluate to, each arm of `a if c else b` its own node (so that a rule
        can gate on it: `"x" if IS_ROCM else "y"`); with `follow_names`, through names assigned once (a name
        that is not stays itself)."""

        def visit(arm: cst.BaseExpression) -> list[cst.BaseExpression] | None:
            if isinstance(arm, cst.IfExp) or (follow_names and self._assigned_once(arm)):
                return None
            return [arm]

        return self.trace(expr, visit) if isinstance(expr, cst.BaseExpression) else []

    def string_sources(self, expr: cst.CSTNode) -> list[tuple[str, cst.CSTNode]]:
        """Every string `expr` may be, with the literal it comes from (`arms`: names assigned once, both arms
        of conditionals); only plain string literals (`texts` also reads f-strings and concatenations)."""
        found: list[tuple[str, cst.CSTNode]] = []
        for arm in self.arms(expr):
            string = self.semantic.string_value(arm)
            if string is not None:
                found.append((string, arm))
        return found

    def _assigned_once(self, expr: cst.BaseExpression) -> bool:
        if not isinstance(expr, cst.Name):
            return False
        binding = self.semantic.lookup(expr.value, expr)
        return binding is not None and binding.single is not None

    def texts(self, expr: cst.BaseExpression) -> list[tuple[str, cst.CSTNode]]:
        """Every text `expr` may be, with the node it is written at: string literals, f-strings (a space for
        each field), their concatenations, through names assigned once, both arms of conditionals,
        `"...".format(...)` and `.strip()`."""
        return self.trace(expr, self._text_step, _TEXTS)

    def _text_step(self, expr: cst.BaseExpression) -> list[tuple[str, cst.CSTNode]] | None:
        # A name is left to the trace, so that the literal it is assigned is the node, not the name.
        text = None if isinstance(expr, cst.Name) else self.semantic.static_text(expr)
        return [(text, expr)] if text is not None else None

    # --- integers -------------------------------------------------------------------------------------
    def int_values(self, expr: cst.BaseExpression) -> list[IntValue]:
        """Every integer `expr` may be, where it is known at lint time: literals, names assigned once,
        both arms of conditionals, arithmetic on constants (`BLOCK // 32`, `1 << 5`), `min`/`max` of
        constants, and the integers in the list a loop variable iterates (`for w in [4, 8, 32]`, a tuple
        target of `[(64, 4), (128, 32)]`, `itertools.product([64, 128], [4, 8])`)."""
        return self.trace(expr, self._int_step)

    def _int_step(self, expr: cst.BaseExpression) -> list[IntValue] | None:
        if isinstance(expr, cst.Integer):
            return [IntValue(int(expr.evaluated_value), expr)]
        if isinstance(expr, cst.Name):
            looped = self.semantic.loop_values(expr)
            if looped is None:
                return None
            return [IntValue(int(v.evaluated_value), v, looped=True) for v in looped if isinstance(v, cst.Integer)]
        if isinstance(expr, cst.BinaryOperation):
            apply = _INTEGER_OPERATIONS.get(type(expr.operator))
            left, right = self._constant(expr.left), self._constant(expr.right)
            if apply is None or left is None or right is None or not _defined_operation(expr.operator, right):
                return []
            return [IntValue(apply(left, right), expr)]
        if not isinstance(expr, cst.Call) or not expr.args:
            return None
        choose = _INTEGER_CHOICES.get(self.semantic.qualified_name(expr.func) or "")
        if choose is None:
            return None
        arguments = [self._constant(arg.value) for arg in expr.args if not arg.star and arg.keyword is None]
        known = [value for value in arguments if value is not None]
        return [IntValue(choose(known), expr)] if len(known) == len(expr.args) else []

    def _constant(self, expr: cst.BaseExpression) -> int | None:
        """The one value of an operand, when it has exactly one."""
        values = self.int_values(expr)
        return values[0].value if len(values) == 1 and not values[0].looped else None

    # --- loops and collections ----------------------------------------------------------------------
    def loop_sources(self, name: cst.Name) -> list[cst.BaseExpression] | None:
        """What the loop variable `name` is traced to (see `Follow.loops`: unlike `Semantic.loop_values`, the
        iterable itself when its elements are not written out); None when it is no loop variable there,
        empty for a tuple target whose elements are not written out."""
        target = self.semantic.loop_target(name)
        if target is None:
            return None
        written = self.semantic.iterated_values(target.iterable, target.position)
        if written or target.position is not None:
            return written
        return [target.iterable]

    def collection_elements(self, expr: cst.BaseExpression) -> list[cst.BaseExpression]:
        """The elements of a tuple, list or set display, the keys of a dict display, through a name
        assigned once and `set(...)`/`frozenset(...)`/`tuple(...)`/`list(...)`/`sorted(...)`; empty for
        anything else."""
        value = expr
        for _ in range(MAX_DEPTH):
            value = self.semantic.single_value(value) or value
            if not isinstance(value, cst.Call) or len(value.args) != 1:
                break
            if self.semantic.qualified_name(value.func) not in COLLECTION_CALLS:
                break
            value = value.args[0].value
        if isinstance(value, _SEQUENCES):
            return [element.value for element in value.elements]
        if isinstance(value, cst.Dict):
            return [element.key for element in value.elements if isinstance(element, cst.DictElement)]
        return []

    # --- where a value goes -----------------------------------------------------------------------------
    def collection_of(self, expr: cst.CSTNode) -> cst.CSTNode:
        """The outermost expression that is just the collection `expr` belongs to: list, tuple and set
        displays, `*x`, operands (`a + b`), a comprehension's element, conditional arms, and
        `list(...)`/`tuple(...)`/`sorted(...)`/`set(...)`/`frozenset(...)` around it (`expr` itself when
        none of these holds it)."""
        current = expr
        while True:
            parent = self.semantic.parent(current)
            if (
                isinstance(parent, _PART_OF_COLLECTION)
                or (isinstance(parent, _ELEMENT_COMPREHENSIONS) and current is parent.elt)
                or (isinstance(parent, cst.IfExp) and current is not parent.test)
            ):
                current = parent
            elif isinstance(parent, cst.Arg) and self._is_collection_call(self.semantic.parent(parent)):
                current = self.semantic.parent(parent)  # type: ignore[assignment]
            else:
                return current

    def _is_collection_call(self, node: cst.CSTNode | None) -> bool:
        return isinstance(node, cst.Call) and self.semantic.qualified_name(node.func) in COLLECTION_CALLS

    def destination(self, expr: cst.CSTNode) -> Destination | None:
        """Where the collection `expr` belongs to (`collection_of`) goes: passed to a call, assigned to
        a variable or added to one (`configs.append(...)`: the variable's reads, those that only add to
        it left out), or returned from a def (its calls in this file); None for anything else."""
        root = self.collection_of(expr)
        parent = self.semantic.parent(root)
        if isinstance(parent, cst.Arg):
            call = self.semantic.parent(parent)
            if not isinstance(call, cst.Call):
                return None
            receiver = list_added_to(call)
            if isinstance(receiver, cst.Name):
                return Destination(reads=self.variable_reads(receiver, call))
            return Destination(call=call, argument=parent)
        if isinstance(parent, ASSIGNMENTS) and parent.value is root:
            target = assigned_name(parent)
            return Destination(reads=self.variable_reads(target, parent)) if target is not None else None
        if isinstance(parent, cst.Return):
            function = next((a for a in self.semantic.ancestors(parent) if isinstance(a, DEFERRED_BODIES)), None)
            if isinstance(function, cst.FunctionDef):
                return Destination(calls=tuple(self.references.calls_of(function)))
        return None

    def variable_reads(self, name: cst.Name, at: cst.CSTNode) -> tuple[cst.Name, ...]:
        """The reads of the variable `name` (as bound from `at`), except those that only add to the list
        it holds (`name.append(...)`); empty when it is no variable."""
        binding = self.semantic.lookup(name.value, at)
        if binding is None or binding.kind != "value":
            return ()
        return tuple(read for read in self.semantic.reads(name.value, binding) if not self._adds_to(read))

    def _adds_to(self, read: cst.Name) -> bool:
        parent = self.semantic.parent(read)
        return isinstance(parent, cst.Attribute) and parent.value is read and parent.attr.value in ADDING_METHODS


def list_added_to(call: cst.Call) -> cst.BaseExpression | None:
    """`x` of `x.append(...)`, `x.extend(...)`, `x.insert(...)` (`ADDING_METHODS`; any receiver: `self.x`,
    `d["k"]`); None for other calls."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ADDING_METHODS:
        return func.value
    return None


def _defined_operation(operation: cst.BaseBinaryOp, right: int) -> bool:
    """No division by zero, no shifts that build huge integers."""
    if isinstance(operation, cst.FloorDivide):
        return right != 0
    if isinstance(operation, (cst.LeftShift, cst.RightShift)):
        return 0 <= right < 64
    return True


def assigned_name(statement: cst.Assign | cst.AugAssign | cst.AnnAssign) -> cst.Name | None:
    """The one name a statement assigns (`x = ...`, `x += ...`, `x: T = ...`), None for other targets."""
    targets = assignment_targets(statement)
    return targets[0] if len(targets) == 1 and isinstance(targets[0], cst.Name) else None


def assignment_targets(statement: cst.Assign | cst.AugAssign | cst.AnnAssign) -> list[cst.BaseAssignTargetExpression]:
    """What a statement assigns to, as written: each `=` target of `a = b = ...` (a tuple target whole),
    the one target of `x += ...` and `x: T = ...`."""
    if isinstance(statement, cst.Assign):
        return [target.target for target in statement.targets]
    return [statement.target]


def fstring_fields(string: cst.FormattedString) -> list[cst.BaseExpression]:
    """The expressions of an f-string's `{...}` fields."""
    return [part.expression for part in string.parts if isinstance(part, cst.FormattedStringExpression)]


def is_literal_constant(value: cst.BaseExpression) -> bool:
    """A literal that carries no computed value: a number, string, `None`/`True`/`False`, `-1`, or a
    tuple or list of these (`(0, 0)`, `[]`), as assigned for a fallback."""
    if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(value, cst.Name):
        return value.value in _CONSTANT_NAMES
    if isinstance(value, cst.UnaryOperation):
        return is_literal_constant(value.expression)
    if isinstance(value, (cst.Tuple, cst.List)):
        return all(is_literal_constant(element.value) for element in value.elements)
    return False


def return_values(function: cst.FunctionDef) -> list[cst.BaseExpression]:
    """The values of the `return` statements of `function` itself (not of defs, classes or lambdas in it)."""
    return [node.value for node in _own_nodes(function.body) if isinstance(node, cst.Return) and node.value]


def _own_nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (*DEFERRED_BODIES, cst.BaseExpression)):
            stack.extend(reversed(node.children))
