"""Python idioms several rules recognise: display calls, `try`/`except` fallbacks, `os.environ` writes,
conditional arms that reach ROCm, the tests that decide whether code runs, f-string and `.format` text.

Each helper is generic Python knowledge asked through the front end (`ctx`); what counts as a hazard
stays in the rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from rocmlint.python.frontend import PythonContext
from rocmlint.python.scopes import dotted_name
from rocmlint.python.semantic import DEFERRED_BODIES

# Calls whose arguments are only shown, the one list for every rule, by the callee's last name (a method,
# or a function called by its own name: `from logging import info`): `logging` loggers and the `logging`
# module, `warnings.warn`, `print` (rich's `console.print`), click's `echo`/`secho`, a stream's `write`.
DISPLAY_CALLS = frozenset(
    {
        "debug",
        "info",
        "warning",
        "warn",
        "error",
        "exception",
        "critical",
        "fatal",
        "log",
        "print",
        "echo",
        "secho",
        "write",
    }
)
_NAME_WORDS = re.compile(r"[a-z0-9]+")
_ENVIRON = "os.environ"
_ENVIRON_SETTERS = frozenset({f"{_ENVIRON}.setdefault", "os.putenv"})
_STATEMENTS = (cst.BaseSmallStatement, cst.BaseCompoundStatement)
_STRING_LITERALS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


# `str` methods that search a text for their first argument (`text.startswith(needle)`).
STRING_SEARCHES = frozenset({"startswith", "endswith", "find", "rfind", "index", "rindex", "count", "__contains__"})
# Calls whose arguments are values to look for, not to use, by the callee's last name (the one table):
# needles (`STRING_SEARCHES`), regex and shell patterns and the text they are matched against, text cut out
# of a string (`replace`, `split`, `strip`, ...), attribute names looked up, and pytest's test parameters.
LOOKUP_METHODS = STRING_SEARCHES | {
    "match",
    "fullmatch",
    "search",
    "findall",
    "finditer",
    "sub",
    "compile",
    "fnmatch",
    "fnmatchcase",
    "replace",
    "removeprefix",
    "removesuffix",
    "split",
    "rsplit",
    "partition",
    "rpartition",
    "strip",
    "lstrip",
    "rstrip",
    "getattr",
    "hasattr",
    "parametrize",
    "param",
}
# Lookups by key whose other arguments are values to use (`d.get(key, default)`, `d.pop(key, default)`).
KEY_LOOKUPS = frozenset({"get", "pop"})

# Functions that run a program: its command is the first argument (or `args=`).
PROCESS_RUNNERS = frozenset(
    {
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.Popen",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "os.system",
        "os.popen",
        "asyncio.create_subprocess_exec",
        "asyncio.create_subprocess_shell",
        "sh.Command",
    }
)


# --- names and constants ------------------------------------------------------------------------------
def last_name(expr: cst.BaseExpression) -> str:
    """The last segment of a callee or reference: `c` of `a.b.c` or of `c`; "" for anything else."""
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return expr.value if isinstance(expr, cst.Name) else ""


def name_words(name: str) -> tuple[str, ...]:
    """The lower-case words of an identifier, in order (`nvcc`, `args`, `v2` of `NVCC_ARGS_v2`;
    `getCudaVersion` is one word): what a rule matches a name on by convention."""
    return tuple(_NAME_WORDS.findall(name.lower()))


def is_none(node: cst.CSTNode) -> bool:
    """The literal `None`."""
    return isinstance(node, cst.Name) and node.value == "None"


def is_truthy_constant(expr: cst.BaseExpression) -> bool:
    """`True` or a non-zero integer literal (`1` as a switch)."""
    if isinstance(expr, cst.Name):
        return expr.value == "True"
    if isinstance(expr, cst.Integer):
        return expr.evaluated_value != 0
    return False


def subscript_key(node: cst.CSTNode) -> cst.BaseExpression | None:
    """`KEY` of `x[KEY]` (a single index, not a slice), else None."""
    if not isinstance(node, cst.Subscript) or len(node.slice) != 1:
        return None
    index = node.slice[0].slice
    return index.value if isinstance(index, cst.Index) else None


# --- calls --------------------------------------------------------------------------------------------
def called_function(ctx: PythonContext, call: cst.Call) -> str | None:
    """The qualified name of the function a call runs, or builds with `functools.partial(f, ...)` (whose
    keyword arguments then go to `f`)."""
    name = ctx.qualified_name(call.func)
    if name == "functools.partial" and call.args:
        return ctx.qualified_name(call.args[0].value)
    return name


def unpacked_keyword(ctx: PythonContext, call: cst.Call, keyword: str) -> list[tuple[cst.Arg, cst.BaseExpression]]:
    """The values `keyword` gets through `**{...}` arguments of `call` (a dict literal, `dict(...)` or a
    name assigned one once), each with the `**` argument it is in."""
    found: list[tuple[cst.Arg, cst.BaseExpression]] = []
    for arg in call.args:
        if arg.star == "**":
            value = ctx.semantic.dict_entries(arg.value).get(keyword)
            if value is not None:
                found.append((arg, value))
    return found


# --- values -------------------------------------------------------------------------------------------
def rocm_arm(
    ctx: PythonContext, value: cst.BaseExpression, wanted: Callable[[cst.BaseExpression], bool]
) -> cst.BaseExpression | None:
    """The first arm of `value` (`ctx.values.arms`) that is `wanted` and can run on ROCm: report
    once per statement, gated on that arm (`True if torch.version.cuda else False` is no hazard)."""
    for arm in ctx.values.arms(value):
        if wanted(arm) and not ctx.is_rocm_gated(arm):
            return arm
    return None


def report_site(ctx: PythonContext, literal: cst.CSTNode, written: cst.CSTNode) -> cst.CSTNode:
    """Where to report a literal a call argument evaluates to: the literal when it is written inside
    `written` (the argument), else `written` itself (the literal was assigned elsewhere)."""
    return literal if ctx.semantic.is_within(literal, written) else written


def literal_text(ctx: PythonContext, node: cst.CSTNode) -> str | None:
    """The text of a string literal as written (plain, implicitly concatenated, or an f-string with `{}`
    for each field); None for anything else (a name is not followed: see `Semantic.static_text`)."""
    return ctx.semantic.static_text(node, "{}") if isinstance(node, _STRING_LITERALS) else None


def fstring_prefix(string: cst.FormattedString) -> str:
    """The constant text an f-string starts with (`"hip:"` of `f"hip:{rank}"`), "" when it starts with
    a field."""
    first = string.parts[0] if string.parts else None
    return first.value if isinstance(first, cst.FormattedStringText) else ""


# --- os.environ ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EnvironmentWrite:
    """One variable a statement writes into `os.environ`."""

    key: str | None  # the variable's name, when it is known
    value: cst.BaseExpression
    site: cst.CSTNode  # the value as written in the statement (the call's argument when it is elsewhere)


def environ_key(ctx: PythonContext, target: cst.CSTNode) -> cst.BaseExpression | None:
    """`KEY` of an `os.environ[KEY]` subscript."""
    if not isinstance(target, cst.Subscript):
        return None
    key = subscript_key(target)
    if key is None or ctx.qualified_name(target.value) != _ENVIRON:
        return None
    return key


def environ_writes(ctx: PythonContext, node: cst.Assign | cst.Call) -> list[EnvironmentWrite]:
    """The variables `os.environ[KEY] = value`, `os.environ.setdefault(KEY, value)`,
    `os.putenv(KEY, value)` and `os.environ.update(KEY=value, {...})` write."""
    if isinstance(node, cst.Assign):
        keys = (environ_key(ctx, target.target) for target in node.targets)
        return [EnvironmentWrite(ctx.string_value(key), node.value, node.value) for key in keys if key is not None]
    name = ctx.qualified_name(node.func)
    if name in _ENVIRON_SETTERS:
        key, value = ctx.semantic.positional(node, 0), ctx.semantic.positional(node, 1)
        if key is None or value is None:
            return []
        return [EnvironmentWrite(ctx.string_value(key.value), value.value, value)]
    if name == f"{_ENVIRON}.update":
        return _update_writes(ctx, node)
    return []


def _update_writes(ctx: PythonContext, call: cst.Call) -> list[EnvironmentWrite]:
    writes: list[EnvironmentWrite] = []
    for arg in call.args:
        if arg.keyword is not None:
            writes.append(EnvironmentWrite(arg.keyword.value, arg.value, arg))
            continue
        for key, value in ctx.semantic.dict_entries(arg.value).items():
            writes.append(EnvironmentWrite(key, value, report_site(ctx, value, arg)))
    return writes


# --- what is only shown -------------------------------------------------------------------------------
def is_display_call(ctx: PythonContext, call: cst.Call) -> bool:
    """`print(...)`, a logging call (`logger.info(...)`, `logging.warning(...)`, `log.log(...)`),
    `warnings.warn(...)`, `click.echo(...)`, `sys.stderr.write(...)`: see DISPLAY_CALLS."""
    return last_name(call.func) in DISPLAY_CALLS or ctx.qualified_name(call.func) == "print"


def only_displayed(ctx: PythonContext, node: cst.CSTNode) -> bool:
    """Inside the arguments of a display call of the same statement: the result is only shown
    (`print("sm_90 built:", "sm_90" in archs)`), no code path depends on it."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (*_STATEMENTS, cst.Lambda)):
            return False
        if isinstance(ancestor, cst.Call) and is_display_call(ctx, ancestor):
            return True
    return False


def in_message(ctx: PythonContext, node: cst.CSTNode) -> bool:
    """Inside a display call (`is_display_call`), an exception (`raise`) or `assert` message, or a
    decorator (test data), within the statement `node` is in: text that is shown, not used."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.Raise, cst.Decorator)):
            return True
        if isinstance(ancestor, cst.Assert):
            return child is ancestor.msg
        if isinstance(ancestor, cst.Call) and is_display_call(ctx, ancestor):
            return True
        if isinstance(ancestor, _STATEMENTS):
            return False
        child = ancestor
    return False


def is_looked_for(ctx: PythonContext, node: cst.CSTNode) -> bool:
    """Whether the value `node` stands for (a literal, or the collection holding it) is something to look
    for rather than to use: compared (`==`, `in`), matched or edited as text (an argument of
    `LOOKUP_METHODS`, an `assert*` method, `re.*`, `fnmatch.*`), a key or an index (a subscript, a
    dict key, the key of `.get(key, ...)` or `.pop(key, ...)`), offered as `choices=`, or test parameters."""
    parent = ctx.parent(node)
    if isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.Index, cst.SubscriptElement)):
        return True
    if isinstance(parent, cst.DictElement):
        return parent.key is node
    call = ctx.parent(parent) if isinstance(parent, cst.Arg) else None
    if not isinstance(call, cst.Call):
        return False
    assert isinstance(parent, cst.Arg)
    method = last_name(call.func)
    if method in LOOKUP_METHODS or method.startswith("assert"):
        return True
    if (ctx.qualified_name(call.func) or "").startswith(("re.", "fnmatch.")):
        return True
    if parent.keyword is not None and parent.keyword.value == "choices":
        return True
    return method in KEY_LOOKUPS and ctx.semantic.positional(call, 0) is parent


# --- blocks -----------------------------------------------------------------------------------------------
def statements_before(block: cst.IndentedBlock | cst.Module, child: cst.CSTNode) -> list[cst.CSTNode]:
    """The statements of `block` that run before its statement `child`."""
    earlier: list[cst.CSTNode] = []
    for statement in block.body:
        if statement is child:
            break
        earlier.append(statement)
    return earlier


def leaves_quietly(suite: cst.BaseSuite) -> bool:
    """The block ends in `return`, `continue` or `break`: it skips the rest and carries on (unlike a
    `raise`, which is no fallback)."""
    statements = suite.body if isinstance(suite, cst.IndentedBlock) else [suite]
    last = statements[-1] if statements else None
    smalls = last.body if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else []
    return any(isinstance(small, (cst.Return, cst.Continue, cst.Break)) for small in smalls)


# --- try/except fallbacks -----------------------------------------------------------------------------
def handled_by_try(ctx: PythonContext, node: cst.CSTNode, caught: frozenset[str]) -> bool:
    """Inside the body of a `try:` (in the same def, class or lambda) with a handler that catches one of
    the exception names `caught` (a bare `except:` catches all) and does not re-raise: a fallback."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, DEFERRED_BODIES):
            return False
        if isinstance(ancestor, cst.Try) and child is ancestor.body:
            if any(_swallows(handler, caught) for handler in ancestor.handlers):
                return True
        child = ancestor
    return False


def _swallows(handler: cst.ExceptHandler, caught: frozenset[str]) -> bool:
    if re_raises(handler):
        return False
    return handler.type is None or any(name in caught for name in caught_names(handler))


def caught_names(handler: cst.ExceptHandler) -> list[str]:
    """The last segments of the exception types an `except` names (`[NVMLError, OSError]` for
    `except (pynvml.NVMLError, OSError):`); empty for a bare `except:`."""
    if handler.type is None:
        return []
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    expressions = [item.value if isinstance(item, cst.BaseElement) else item for item in types]
    return [(dotted_name(expr) or "").rsplit(".", 1)[-1] for expr in expressions]


def raised_name(statement: cst.Raise) -> str:
    """The last segment of the exception a `raise` names (`MissingCUDAException` for `raise
    errors.MissingCUDAException("...")`); "" for a bare `raise`."""
    exception = statement.exc.func if isinstance(statement.exc, cst.Call) else statement.exc
    return (dotted_name(exception) or "").rsplit(".", 1)[-1] if exception is not None else ""


def re_raises(handler: cst.ExceptHandler) -> bool:
    """A `raise` among the handler's top-level statements."""
    statements = handler.body.body if isinstance(handler.body, cst.IndentedBlock) else [handler.body]
    for statement in statements:
        smalls = statement.body if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else []
        if any(isinstance(small, cst.Raise) for small in smalls):
            return True
    return False


# --- string literals in a value -----------------------------------------------------------------------
def literal_value(ctx: PythonContext, node: cst.SimpleString | cst.ConcatenatedString) -> str | None:
    """A string literal's value; a bytes literal's too, read as Latin-1 (`b"--offload-arch=gfx942"`, the
    options of a runtime compiler)."""
    if isinstance(node, cst.SimpleString) and "b" in node.prefix.lower():
        value = node.evaluated_value
        return value.decode("latin-1") if isinstance(value, bytes) else None
    return ctx.string_value(node)


def literals_in(ctx: PythonContext, value: cst.CSTNode) -> list[str]:
    """The values of the string and bytes literals written in `value`: the literal itself, or the elements of
    the list, tuple or set, the operands, the call's arguments holding it (`Values.collection_of`), in source order."""
    found: list[str] = []
    stack: list[cst.CSTNode] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            text = literal_value(ctx, node)
            found.extend([text] if text is not None else [])
        elif isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            stack.extend(element.value for element in reversed(node.elements))
        elif isinstance(node, cst.BinaryOperation):
            stack.extend((node.right, node.left))
        elif isinstance(node, cst.Call):
            stack.extend(arg.value for arg in reversed(node.args))
    return found
