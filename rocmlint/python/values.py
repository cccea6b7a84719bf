"""What a Python expression may evaluate to: the one value tracer rules ask instead of walking values themselves.

A trace starts at an expression and walks back to the leaves it may come from: names to what they are
assigned, both arms of `a if c else b`, and (when the rule asks for them, `Follow`) operands, subscripted
values, elements, f-string fields, joins, conversions (`list(x)`), string methods, loop variables, calls of
local functions and methods (a name unpacked from one takes its element of the returned tuples), and
attributes of a class of this file (`self.x` assigned in another method). At every expression it first asks
the rule's `visit`, which knows the rule's hazard: it returns the leaves found there (a list, possibly
empty: a dead end), `Through(...)` to continue at other expressions (a step only this rule sees through,
such as `int(x)`), or None to let the tracer follow the generic constructs.

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

Module helpers: `argument_of` (the call an expression is passed to), `only_argument`, `list_added_to`
(`x` of `x.append(...)`), `assignment_targets` and `assigned_name`, `element_values`, `fstring_fields`,
`is_literal_constant`, `return_values`.
"""

from __future__ import annotations

import ast
import enum
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from rocmlint.python.references import References
from rocmlint.python.scopes import FunctionNode, own_returns
from rocmlint.python.semantic import DEFERRED_BODIES, FUNCTION_DEFS, MAX_DEPTH, Semantic

T = TypeVar("T")
# An argument as written: the expression, its `*x`, or its `name=x` / `**x` keyword.
Argument = ast.expr | ast.keyword
# Operands followed by every arithmetic or string operator.
ALL_OPERATORS: tuple[type[ast.operator], ...] = (ast.operator,)
_SEQUENCES = (ast.Tuple, ast.List, ast.Set)
_DATACLASS_DECORATORS = frozenset({"dataclasses.dataclass"})
# Calls that return a sequence, or any collection, of the elements of their one argument (the one list).
SEQUENCE_CALLS = frozenset({"tuple", "list", "sorted"})
COLLECTION_CALLS = SEQUENCE_CALLS | {"set", "frozenset"}
# Calls whose result keeps the elements (or the text) of their one argument.
_CONVERSIONS = COLLECTION_CALLS | {"str"}
# Methods of a string whose result still carries the string's text.
_TEXT_METHODS = frozenset({"format", "strip", "lstrip", "rstrip"})
# Methods that add to the list they are called on, in place (the one list: `list_added_to`).
ADDING_METHODS = frozenset({"append", "extend", "insert"})
# `*x` is part of a collection only inside a display; in a call it is an argument (`argument_of`).
_PART_OF_COLLECTION = (ast.List, ast.Tuple, ast.Set, ast.BinOp)
_ELEMENT_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp)
# The statements that assign a value to targets (`assignment_targets`).
ASSIGNMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign)
_INTEGER_OPERATIONS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
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
    operators: tuple[type[ast.operator], ...] = ()  # both operands of `a <op> b` for these operators
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
    # A call of a def of this file (a function, or a method called as `self.m()`, `cls.m()`, `Class.m()`)
    # comes from its `return` values; a name unpacked from such a call (`block, warps = settings(n)`), from
    # the element at its position of each tuple the def returns (under `Names.ALL` or `AGREEING`: an unpacked
    # name is never assigned once).
    returns: bool = False
    # `self.x`, `cls.x` and `Class.x` of a class of this file come from every value the class assigns `x`
    # (its body, `self.x = ...` in any of its methods, its bases), under the `names` policy.
    attributes: bool = False


@dataclass(frozen=True)
class Destination:
    """Where the collection an expression belongs to goes next (`Values.destination`): exactly one of
    an argument of a call (`argument`: as written, see `argument_of`), the reads of the variable it is
    assigned or added to, or the calls of the def that returns it."""

    call: ast.Call | None = None
    argument: Argument | None = None
    reads: tuple[ast.Name, ...] = ()
    calls: tuple[ast.Call, ...] = ()


@dataclass(frozen=True)
class IntValue:
    """One integer an expression may be (`Values.int_values`), and the node that makes it."""

    value: int
    node: ast.AST
    looped: bool = False  # an element of the list a loop iterates: one of several values at run time


@dataclass(frozen=True)
class Through:
    """A rule's own step: continue the trace at these expressions."""

    parts: tuple[ast.expr, ...]


Visit = Callable[[ast.expr], "Sequence[T] | Through | None"]
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

    def trace(self, expr: ast.expr, visit: Visit[T], follow: Follow = PLAIN) -> list[T]:
        """Every leaf `visit` finds in what `expr` may evaluate to, in source order of the steps taken."""
        outer = self._depth
        try:
            return self._trace(expr, visit, follow, 0 if outer is None else outer + 1)
        finally:
            self._depth = outer

    def _trace(self, expr: ast.expr, visit: Visit[T], follow: Follow, depth: int) -> list[T]:
        if depth > MAX_DEPTH:
            return []
        self._depth = depth
        step = visit(expr)
        if isinstance(step, Through):
            return self._trace_all(step.parts, visit, follow, depth + 1)
        if step is not None:
            return list(step)
        if isinstance(expr, ast.Name):
            return self._trace_name(expr, visit, follow, depth)
        if isinstance(expr, ast.Attribute) and follow.attributes:
            return self._trace_attribute(expr, visit, follow, depth)
        return self._trace_all(self._steps(expr, follow), visit, follow, depth + 1)

    def _trace_all(self, parts: Sequence[ast.expr], visit: Visit[T], follow: Follow, depth: int) -> list[T]:
        found: list[T] = []
        for part in parts:
            found += self._trace(part, visit, follow, depth)
        return found

    def _trace_name(self, name: ast.Name, visit: Visit[T], follow: Follow, depth: int) -> list[T]:
        if follow.loops:
            looped = self.loop_sources(name)
            if looped is not None:
                return self._trace_all(looped, visit, follow, depth + 1)
        if follow.names is Names.SINGLE:
            binding = self.semantic.lookup(name.id, name)
            single = binding.single if binding is not None else None
            return self._trace(single, visit, follow, depth + 1) if single is not None else []
        assigned = self.semantic.assigned_values(name)
        if follow.returns:
            assigned = [element for value in assigned for element in self._returned_elements(value, name.id)]
        return self._trace_assigned(assigned, visit, follow, depth)

    def _trace_attribute(self, expr: ast.Attribute, visit: Visit[T], follow: Follow, depth: int) -> list[T]:
        cls = self.semantic.receiver_class(expr)
        binding = self.semantic.attribute_binding(cls, expr.attr) if cls is not None else None
        if binding is None and cls is not None:
            given = self.dataclass_field_values(cls, expr.attr)
            if follow.names is Names.SINGLE:
                given = given if len(given) == 1 else []
            return self._trace_assigned(given, visit, follow, depth) if given else []
        if binding is None or binding.kind != "value":
            return []
        if follow.names is Names.SINGLE:
            single = binding.single
            return self._trace(single, visit, follow, depth + 1) if single is not None else []
        unknown: list[ast.expr | None] = [None] if binding.opaque else []
        return self._trace_assigned([*binding.values, *unknown], visit, follow, depth)

    def _trace_assigned(
        self, assigned: Sequence[ast.expr | None], visit: Visit[T], follow: Follow, depth: int
    ) -> list[T]:
        """The leaves of every value a variable is assigned (None: a value not known), under `follow.names`
        (`ALL` or `AGREEING`)."""
        found: list[T] = []
        for value in assigned:
            leaves = self._trace(value, visit, follow, depth + 1) if value is not None else []
            if follow.names is Names.AGREEING and not leaves and (value is None or not is_literal_constant(value)):
                return []
            found += leaves
        return found

    def dataclass_field_values(self, cls: ast.ClassDef, name: str) -> list[ast.expr | None]:
        """What the calls of dataclass `cls` in this file give its field `name` (declared by an annotation alone):
        the keyword or the argument at the field's position (None where a call's arguments are unpacked); empty
        when `name` is no such field or the class is never called here."""
        fields = _dataclass_fields(cls, self.semantic)
        if name not in fields:
            return []
        position = fields.index(name)
        given: list[ast.expr | None] = []
        for call in self.references.calls_of(cls):
            keyword = next((keyword for keyword in call.keywords if keyword.arg in (name, None)), None)
            if keyword is not None:
                given.append(keyword.value if keyword.arg is not None else None)
            elif position < len(call.args) and not any(isinstance(arg, ast.Starred) for arg in call.args):
                given.append(call.args[position])
            else:
                given.append(None)
        return given

    def _returned_elements(self, value: ast.expr | None, name: str) -> list[ast.expr | None]:
        """What `name` gets from one value it is assigned: the value itself, or, when it is unpacked from a call
        of a def of this file (`block, warps = settings(n)`), the element at its position of each tuple the
        def returns (`return block, warps`; None for a return that is no such tuple)."""
        statement = self.semantic.parent(value) if value is not None else None
        position = _unpacked_position(statement, value, name)
        function = (
            self.semantic.called_def(value.func) if position is not None and isinstance(value, ast.Call) else None
        )
        if function is None or position is None:
            return [value]
        elements: list[ast.expr | None] = []
        for returned in return_values(function):
            part = self.semantic.single_value(returned) or returned
            if isinstance(part, ast.Tuple) and position < len(part.elts) and not _has_starred(part):
                elements.append(part.elts[position])
            else:
                elements.append(None)
        return elements

    def _steps(self, expr: ast.expr, follow: Follow) -> list[ast.expr]:
        """The expressions `expr` comes from, one generic step back (none: `expr` is a leaf)."""
        if isinstance(expr, ast.IfExp):
            return [expr.body, expr.orelse] if follow.arms else []
        if isinstance(expr, ast.BinOp):
            return [expr.left, expr.right] if isinstance(expr.op, follow.operators) else []
        if isinstance(expr, ast.Subscript):
            return [expr.value] if follow.subscripts else []
        if isinstance(expr, _SEQUENCES):
            return element_values(expr) if follow.elements else []
        if isinstance(expr, ast.JoinedStr):
            return fstring_fields(expr) if follow.fields else []
        if isinstance(expr, ast.Call):
            return self._call_steps(expr, follow)
        return []

    def _call_steps(self, call: ast.Call, follow: Follow) -> list[ast.expr]:
        func = call.func
        argument = only_argument(call)
        if follow.joins and isinstance(func, ast.Attribute) and func.attr == "join" and argument is not None:
            return [argument]
        if follow.conversions and argument is not None and self.semantic.qualified_name(func) in _CONVERSIONS:
            return [argument]
        if follow.text_methods and isinstance(func, ast.Attribute) and func.attr in _TEXT_METHODS:
            return [func.value]
        function = self.semantic.called_def(func) if follow.returns else None
        return return_values(function) if function is not None else []

    # --- texts ----------------------------------------------------------------------------------------
    def arms(self, expr: ast.AST, *, follow_names: bool = True) -> list[ast.expr]:
        """Every expression `expr` may evaluate to, each arm of `a if c else b` its own node (so that a rule
        can gate on it: `"x" if IS_ROCM else "y"`); with `follow_names`, through names assigned once (a name
        that is not stays itself)."""

        def visit(arm: ast.expr) -> list[ast.expr] | None:
            if isinstance(arm, ast.IfExp) or (follow_names and self._assigned_once(arm)):
                return None
            return [arm]

        return self.trace(expr, visit) if isinstance(expr, ast.expr) else []

    def string_sources(self, expr: ast.AST) -> list[tuple[str, ast.expr]]:
        """Every string `expr` may be, with the literal it comes from (`arms`: names assigned once, both arms
        of conditionals); only plain string literals (`texts` also reads f-strings)."""
        found: list[tuple[str, ast.expr]] = []
        for arm in self.arms(expr):
            string = self.semantic.string_value(arm)
            if string is not None:
                found.append((string, arm))
        return found

    def _assigned_once(self, expr: ast.expr) -> bool:
        if not isinstance(expr, ast.Name):
            return False
        binding = self.semantic.lookup(expr.id, expr)
        return binding is not None and binding.single is not None

    def texts(self, expr: ast.expr) -> list[tuple[str, ast.expr]]:
        """Every text `expr` may be, with the node it is written at: string literals, f-strings (a space for
        each field), their concatenations, through names assigned once, both arms of conditionals,
        `"...".format(...)` and `.strip()`."""
        return self.trace(expr, self._text_step, _TEXTS)

    def _text_step(self, expr: ast.expr) -> list[tuple[str, ast.expr]] | None:
        # A name is left to the trace, so that the literal it is assigned is the node, not the name.
        text = None if isinstance(expr, ast.Name) else self.semantic.static_text(expr)
        return [(text, expr)] if text is not None else None

    # --- integers -------------------------------------------------------------------------------------
    def int_values(self, expr: ast.expr, follow: Follow = PLAIN) -> list[IntValue]:
        """Every integer `expr` may be, where it is known at lint time: literals, names assigned once (with
        `follow`, every assignment, a helper's returns...), both arms of conditionals, arithmetic on constants
        (`BLOCK // 32`, `1 << 5`), `min`/`max` of constants, and the integers in the list a loop variable
        iterates (`for w in [4, 8, 32]`, a tuple target of `[(64, 4), (128, 32)]`,
        `itertools.product([64, 128], [4, 8])`)."""
        return self.trace(expr, self._int_step, follow)

    def _int_step(self, expr: ast.expr) -> list[IntValue] | None:
        literal = _integer_literal(expr)
        if literal is not None:
            return [IntValue(literal, expr)]
        if isinstance(expr, ast.Name):
            looped = self.semantic.loop_values(expr)
            if looped is None:
                return None
            return [IntValue(value, v, looped=True) for v in looped if (value := _integer_literal(v)) is not None]
        if isinstance(expr, ast.BinOp):
            apply = _INTEGER_OPERATIONS.get(type(expr.op))
            left, right = self._constant(expr.left), self._constant(expr.right)
            if apply is None or left is None or right is None or not _defined_operation(expr.op, right):
                return []
            return [IntValue(apply(left, right), expr)]
        if not isinstance(expr, ast.Call) or not (expr.args or expr.keywords):
            return None
        choose = _INTEGER_CHOICES.get(self.semantic.qualified_name(expr.func) or "")
        if choose is None:
            return None
        arguments = [self._constant(arg) for arg in expr.args if not isinstance(arg, ast.Starred)]
        known = [value for value in arguments if value is not None]
        return [IntValue(choose(known), expr)] if len(known) == len(expr.args) + len(expr.keywords) else []

    def _constant(self, expr: ast.expr) -> int | None:
        """The one value of an operand, when it has exactly one."""
        values = self.int_values(expr)
        return values[0].value if len(values) == 1 and not values[0].looped else None

    # --- loops and collections ----------------------------------------------------------------------
    def loop_sources(self, name: ast.Name) -> list[ast.expr] | None:
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

    def collection_elements(self, expr: ast.expr) -> list[ast.expr]:
        """The elements of a tuple, list or set display, the keys of a dict display, through a name
        assigned once and `set(...)`/`frozenset(...)`/`tuple(...)`/`list(...)`/`sorted(...)`; empty for
        anything else."""
        value = expr
        for _ in range(MAX_DEPTH):
            value = self.semantic.single_value(value) or value
            collected = self._collected(value)
            if collected is None:
                break
            value = collected
        if isinstance(value, _SEQUENCES):
            return element_values(value)
        if isinstance(value, ast.Dict):
            return [key for key in value.keys if key is not None]
        return []

    def _collected(self, value: ast.expr) -> ast.expr | None:
        """`x` of `set(x)`, `frozenset(x)`, `tuple(x)`, `list(x)`, `sorted(x)`."""
        if not isinstance(value, ast.Call) or self.semantic.qualified_name(value.func) not in COLLECTION_CALLS:
            return None
        return only_argument(value)

    # --- where a value goes -----------------------------------------------------------------------------
    def collection_of(self, expr: ast.AST) -> ast.AST:
        """The outermost expression that is just the collection `expr` belongs to: list, tuple and set
        displays, `*x`, operands (`a + b`), a comprehension's element, conditional arms, and
        `list(...)`/`tuple(...)`/`sorted(...)`/`set(...)`/`frozenset(...)` around it (`expr` itself when
        none of these holds it)."""
        current = expr
        holder = self._collection_holding(current)
        while holder is not None:
            current, holder = holder, self._collection_holding(holder)
        return current

    def _collection_holding(self, node: ast.AST) -> ast.AST | None:
        """The collection directly around `node` (one step of `collection_of`), None when none is."""
        parent = self.semantic.parent(node)
        if isinstance(parent, _PART_OF_COLLECTION):
            return parent
        if isinstance(parent, ast.Starred) and isinstance(self.semantic.parent(parent), _SEQUENCES):
            return parent
        if isinstance(parent, _ELEMENT_COMPREHENSIONS):
            return parent if node is parent.elt else None
        if isinstance(parent, ast.IfExp):
            return parent if node is not parent.test else None
        passed = argument_of(self.semantic, node)
        if passed is None or self.semantic.qualified_name(passed[0].func) not in COLLECTION_CALLS:
            return None
        return passed[0]

    def destination(self, expr: ast.AST) -> Destination | None:
        """Where the collection `expr` belongs to (`collection_of`) goes: passed to a call, assigned to
        a variable or added to one (`configs.append(...)`: the variable's reads, those that only add to
        it left out), or returned from a def (its calls in this file); None for anything else."""
        root = self.collection_of(expr)
        parent = self.semantic.parent(root)
        passed = argument_of(self.semantic, root)
        if passed is not None:
            call, argument = passed
            receiver = list_added_to(call)
            if isinstance(receiver, ast.Name):
                return Destination(reads=self.variable_reads(receiver, call))
            return Destination(call=call, argument=argument)
        if isinstance(parent, ASSIGNMENTS) and parent.value is root:
            target = assigned_name(parent)
            return Destination(reads=self.variable_reads(target, parent)) if target is not None else None
        if isinstance(parent, ast.Return):
            function = next((a for a in self.semantic.ancestors(parent) if isinstance(a, DEFERRED_BODIES)), None)
            if isinstance(function, FUNCTION_DEFS):
                return Destination(calls=tuple(self.references.calls_of(function)))
        return None

    def variable_reads(self, name: ast.Name, at: ast.AST) -> tuple[ast.Name, ...]:
        """The reads of the variable `name` (as bound from `at`), except those that only add to the list
        it holds (`name.append(...)`); empty when it is no variable."""
        binding = self.semantic.lookup(name.id, at)
        if binding is None or binding.kind != "value":
            return ()
        return tuple(read for read in self.semantic.reads(name.id, binding) if not self._adds_to(read))

    def _adds_to(self, read: ast.Name) -> bool:
        parent = self.semantic.parent(read)
        return isinstance(parent, ast.Attribute) and parent.value is read and parent.attr in ADDING_METHODS


def argument_of(semantic: Semantic, node: ast.AST) -> tuple[ast.Call, Argument] | None:
    """The call `node` is passed to (not its callee), with the argument as written: `node` itself, the
    `*node` around it, or the `name=node` (`**node`) keyword; None when `node` is no call's argument
    (a class's base or keyword is not)."""
    parent = semantic.parent(node)
    if isinstance(parent, ast.Call):
        return (parent, node) if node is not parent.func and isinstance(node, ast.expr) else None
    if not isinstance(parent, (ast.Starred, ast.keyword)):
        return None
    call = semantic.parent(parent)
    return (call, parent) if isinstance(call, ast.Call) else None


def only_argument(call: ast.Call) -> ast.expr | None:
    """The expression of a call's one argument, however it is passed (`f(x)`, `f(*x)`, `f(k=x)`,
    `f(**x)`); None when the call has no argument or several."""
    if len(call.args) + len(call.keywords) != 1:
        return None
    if call.keywords:
        return call.keywords[0].value
    argument = call.args[0]
    return argument.value if isinstance(argument, ast.Starred) else argument


def list_added_to(call: ast.Call) -> ast.expr | None:
    """`x` of `x.append(...)`, `x.extend(...)`, `x.insert(...)` (`ADDING_METHODS`; any receiver: `self.x`,
    `d["k"]`); None for other calls."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in ADDING_METHODS:
        return func.value
    return None


def _dataclass_fields(cls: ast.ClassDef, semantic: Semantic) -> list[str]:
    """The fields of a dataclass, in order (those annotated in its body, class variables aside); empty for any
    other class."""
    decorated = any(
        (semantic.qualified_name(decorator.func if isinstance(decorator, ast.Call) else decorator) or "")
        in _DATACLASS_DECORATORS
        for decorator in cls.decorator_list
    )
    if not decorated:
        return []
    fields: list[str] = []
    for statement in cls.body:
        if not isinstance(statement, ast.AnnAssign) or not isinstance(statement.target, ast.Name):
            continue
        if "ClassVar" in ast.unparse(statement.annotation):
            continue
        fields.append(statement.target.id)
    return fields


def _unpacked_position(statement: ast.AST | None, value: ast.expr | None, name: str) -> int | None:
    """The position of `name` in the tuple target `statement` unpacks `value` into (`a, name = value`)."""
    if not isinstance(statement, ast.Assign) or statement.value is not value:
        return None
    for target in statement.targets:
        if isinstance(target, (ast.Tuple, ast.List)):
            for position, element in enumerate(target.elts):
                if isinstance(element, ast.Name) and element.id == name:
                    return position
    return None


def _has_starred(display: ast.Tuple) -> bool:
    return any(isinstance(element, ast.Starred) for element in display.elts)


def _integer_literal(expr: ast.expr) -> int | None:
    """The value of an integer literal (`True` and `False` are none)."""
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return expr.value
    return None


def _defined_operation(operation: ast.operator, right: int) -> bool:
    """No division by zero, no shifts that build huge integers."""
    if isinstance(operation, ast.FloorDiv):
        return right != 0
    if isinstance(operation, (ast.LShift, ast.RShift)):
        return 0 <= right < 64
    return True


def assigned_name(statement: ast.Assign | ast.AugAssign | ast.AnnAssign) -> ast.Name | None:
    """The one name a statement assigns (`x = ...`, `x += ...`, `x: T = ...`), None for other targets."""
    targets = assignment_targets(statement)
    return targets[0] if len(targets) == 1 and isinstance(targets[0], ast.Name) else None


def assignment_targets(statement: ast.Assign | ast.AugAssign | ast.AnnAssign) -> list[ast.expr]:
    """What a statement assigns to, as written: each `=` target of `a = b = ...` (a tuple target whole),
    the one target of `x += ...` and `x: T = ...`."""
    if isinstance(statement, ast.Assign):
        return list(statement.targets)
    return [statement.target]


def element_values(display: ast.Tuple | ast.List | ast.Set) -> list[ast.expr]:
    """The elements of a tuple, list or set display, `x` for a `*x` element."""
    return [element.value if isinstance(element, ast.Starred) else element for element in display.elts]


def fstring_fields(string: ast.JoinedStr) -> list[ast.expr]:
    """The expressions of an f-string's `{...}` fields."""
    return [part.value for part in string.values if isinstance(part, ast.FormattedValue)]


def is_literal_constant(value: ast.expr) -> bool:
    """A literal that carries no computed value: a number, string, `None`/`True`/`False`, `-1`, or a
    tuple or list of these (`(0, 0)`, `[]`), as assigned for a fallback."""
    if isinstance(value, ast.Constant):
        return value.value is not Ellipsis
    if isinstance(value, ast.UnaryOp):
        return is_literal_constant(value.operand)
    if isinstance(value, (ast.Tuple, ast.List)):
        return all(is_literal_constant(element) for element in element_values(value))
    return False


def return_values(function: FunctionNode) -> list[ast.expr]:
    """The values of the `return` statements of `function` itself (not of defs, classes or lambdas in it), in
    source order."""
    return [statement.value for statement in own_returns(function) if statement.value is not None]
