"""Code that searches text for a string: `needle in text`, `str.startswith`/`find`/..., `re.search`/...,
`pytest.raises(match=...)` and unittest's regex and membership assertions, and every string a needle may be.

Rules that recognise text by its wording (error messages, device names) ask here what is searched for; which
wording is a hazard stays in the rule.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import STRING_SEARCHES, last_name
from rocmlint.python.scopes import argument_values, own_returns, unstarred
from rocmlint.python.semantic import FUNCTION_DEFS

# The functions of `re` (and of the `regex` package) that match a pattern against a text; a compiled
# pattern has methods of the same names that take the text alone.
_REGEX_MATCHERS = frozenset({"search", "match", "fullmatch", "findall", "finditer"})
_REGEX_FUNCTION_NAMES = _REGEX_MATCHERS | {"compile"}
_REGEX_MODULES = ("re", "regex")
_REGEX_FUNCTIONS = frozenset(f"{module}.{name}" for module in _REGEX_MODULES for name in _REGEX_FUNCTION_NAMES)
_REGEX_COMPILERS = frozenset(f"{module}.compile" for module in _REGEX_MODULES)
_REGEX_ASSERTIONS = frozenset({"assertRaisesRegex", "assertRaisesRegexp", "assertRegex", "assertNotRegex"})
_MEMBERSHIP_ASSERTIONS = frozenset({"assertIn", "assertNotIn"})


@dataclass(frozen=True)
class Needle:
    """A string that may be searched for, the literal it is written at, and the other candidates
    searched with it (the rest of the tuple it came from)."""

    text: str
    literal: ast.AST
    siblings: tuple[str, ...] = ()
    from_loop: bool = False  # an element a loop or comprehension target takes


def searched_text(ctx: PythonContext, call: ast.Call) -> ast.expr | None:
    """The argument a text-matching call searches for (the needle, or the pattern), else None."""
    func = call.func
    last = last_name(func)
    argument = ctx.semantic.argument
    if isinstance(func, ast.Attribute) and last in STRING_SEARCHES:
        return argument(call, None, 0)
    if last in _REGEX_ASSERTIONS:
        return argument(call, "expected_regex", 1)
    if last in _MEMBERSHIP_ASSERTIONS:
        return argument(call, "member", 0)
    if last == "raises" and ctx.qualified_name(func) == "pytest.raises":
        return argument(call, "match", None)
    if last in _REGEX_FUNCTION_NAMES and ctx.qualified_name(func) in _REGEX_FUNCTIONS:
        return argument(call, "pattern", 0)
    return None


def regex_operands(ctx: PythonContext, call: ast.Call) -> tuple[ast.expr, ast.expr] | tuple[None, None]:
    """(pattern, searched string) of `re.search(p, s)` (and `match`, `fullmatch`, `findall`, `finditer`;
    `regex.*` too), or of `compiled.search(s)` after `compiled = re.compile(p)`; (None, None) for other
    calls."""
    func = call.func
    if last_name(func) not in _REGEX_MATCHERS:
        return None, None
    arguments = argument_values(call)
    if ctx.qualified_name(func) in _REGEX_FUNCTIONS and len(arguments) >= 2:
        return arguments[0], arguments[1]
    if not isinstance(func, ast.Attribute) or not arguments:
        return None, None
    compiled = ctx.single_value(func.value)
    if not isinstance(compiled, ast.Call) or ctx.qualified_name(compiled.func) not in _REGEX_COMPILERS:
        return None, None
    patterns = argument_values(compiled)
    return (patterns[0], arguments[0]) if patterns else (None, None)


def membership_needle(comparison: ast.Compare) -> ast.expr | None:
    """`needle` of `needle in text` / `needle not in text` (a single comparison), else None."""
    if len(comparison.ops) != 1 or not isinstance(comparison.ops[0], (ast.In, ast.NotIn)):
        return None
    return comparison.left


def needles(ctx: PythonContext, expr: ast.expr) -> list[Needle]:
    """Strings `expr` may be: a literal, a name assigned once, conditional arms, the members of a tuple
    (`startswith(("a", "b"))`), or the elements a loop/comprehension target takes."""
    if isinstance(expr, ast.Name):
        looped = _loop_needles(ctx, expr)
        if looped is not None:
            return looped
    resolved = ctx.single_value(expr)
    if isinstance(resolved, (ast.Tuple, ast.List)):
        return _element_needles(ctx, [unstarred(element) for element in resolved.elts], from_loop=False)
    return [Needle(text, literal) for text, literal in ctx.values.string_sources(expr)]


def _loop_needles(ctx: PythonContext, name: ast.Name) -> list[Needle] | None:
    """The strings a `for`/comprehension target takes when `name` is one (None when it is not); the
    element of a tuple target (`for text, code in ...`) is not followed."""
    loop = ctx.semantic.loop_target(name)
    if loop is None:
        return None
    if loop.position is not None:
        return []
    return _element_needles(ctx, ctx.semantic.iterated_values(loop.iterable), from_loop=True)


def _element_needles(ctx: PythonContext, elements: Sequence[ast.expr], from_loop: bool) -> list[Needle]:
    members = [(ctx.string_value(element), element) for element in elements]
    texts = tuple(text for text, _ in members if text is not None)
    return [Needle(text, literal, siblings=texts, from_loop=from_loop) for text, literal in members if text is not None]


def string_texts(ctx: PythonContext, root: ast.AST) -> Iterator[str]:
    """The values of the plain string literals inside `root` (not the text pieces of f-strings)."""
    for node in ctx.semantic.descendants(root):
        if isinstance(node, ast.Constant) and not isinstance(ctx.parent(node), ast.JoinedStr):
            text = ctx.string_value(node)
            if text is not None:
                yield text


def is_text_of_name(ctx: PythonContext, expr: ast.expr) -> bool:
    """A name, an attribute, or `str()`/`repr()` of one: text that evaluating twice changes nothing."""
    if isinstance(expr, ast.Call):
        arguments = argument_values(expr)
        if ctx.qualified_name(expr.func) not in ("str", "repr") or len(arguments) != 1:
            return False
        expr = arguments[0]
    return isinstance(expr, (ast.Name, ast.Attribute))


def matches_written_text(ctx: PythonContext, test: ast.expr) -> bool:
    """`test` searches text for written-out strings, alone or with `and`/`or`/`not`: `re.search(r"MI300", name)`,
    `name.startswith("Radeon")`, `"890M" in text`, `text == "Strix Halo"`. An `if` on such a test picks a value
    by what a text says (a name detected at run time, a table written as code)."""
    if isinstance(test, ast.BoolOp):
        return all(matches_written_text(ctx, value) for value in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return matches_written_text(ctx, test.operand)
    if isinstance(test, ast.Call):
        needle = searched_text(ctx, test)
    elif isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq)):
        needle = next((side for side in (test.left, test.comparators[0]) if ctx.string_value(side) is not None), None)
    else:
        needle = membership_needle(test) if isinstance(test, ast.Compare) else None
    return needle is not None and bool(needles(ctx, needle))


def picked_by_text(ctx: PythonContext, statement: ast.Return) -> bool:
    """`statement` returns a constant from the body of an `if` that matches a text against written-out strings, and
    its def returns a different constant from another such `if`: one entry of a table from names to values
    written as code (`if re.search(r"Strix Halo", cpuinfo): return "gfx1151"` then `if "890M" in cpuinfo: return
    "gfx1150"`), not a single guess (`if "AMD" in name: return "gfx942"`)."""
    picked = _text_picked_constant(ctx, statement)
    function = next((ancestor for ancestor in ctx.ancestors(statement) if isinstance(ancestor, FUNCTION_DEFS)), None)
    if picked is None or function is None:
        return False
    others = (_text_picked_constant(ctx, returned) for returned in own_returns(function))
    return any(other is not None and other != picked for other in others)


def _text_picked_constant(ctx: PythonContext, statement: ast.Return) -> object:
    """The constant `statement` returns when it is in the body of an `if` that matches written-out text (and
    that is no vendor test), else None."""
    parent = ctx.parent(statement)
    if not isinstance(statement.value, ast.Constant) or not isinstance(parent, ast.If) or statement not in parent.body:
        return None
    if ctx.vendor_test(parent.test).is_vendor_test or not matches_written_text(ctx, parent.test):
        return None
    return statement.value.value
