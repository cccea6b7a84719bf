"""Python idioms several rules recognise: display calls, `try`/`except` fallbacks, `os.environ` writes,
conditional arms that reach ROCm, the tests that decide whether code runs, f-string and `.format` text.

Each helper is generic Python knowledge asked through the front end (`ctx`); what counts as a hazard
stays in the rule.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rocmlint.python.embedded import StringToken, string_token
from rocmlint.python.frontend import PythonContext
from rocmlint.python.scopes import DEFS, FUNCTION_DEFS, argument_values, dotted_name, is_none, last_line, unstarred
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
_QUIET_EXITS = (ast.Return, ast.Continue, ast.Break)


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
# Keywords whose value is matched against, not used: the options offered (`choices=`), the condition under which a
# declaration applies (`when=`: a package recipe's `depends_on("llvm@5.7:", when="amdgpu_target=gfx942")`).
_LOOKED_FOR_KEYWORDS = frozenset({"choices", "when"})

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
def last_name(expr: ast.AST) -> str:
    """The last segment of a callee or reference: `c` of `a.b.c` or of `c`; "" for anything else."""
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return expr.id if isinstance(expr, ast.Name) else ""


# A decorator's name registering a def with a benchmark harness (`@register_benchmark()`, `@benchmark`, `@bench`).
_BENCHMARK_REGISTRATION = re.compile(r"(?:^|_)bench(?:mark)?(?:_|$)")


def in_registered_benchmark(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` sits in a def a benchmark harness registers (a decorator whose name has the word `benchmark` or
    `bench`): what such a def turns on is what it measures."""
    for ancestor in ctx.ancestors(node):
        if not isinstance(ancestor, FUNCTION_DEFS):
            continue
        for decorator in ancestor.decorator_list:
            name = last_name(decorator.func if isinstance(decorator, ast.Call) else decorator)
            if _BENCHMARK_REGISTRATION.search(name.lower()):
                return True
    return False


def opted_in_by_switch(test: ast.expr, option: re.Pattern[str], off_by_default: Callable[[str], bool]) -> bool:
    """Whether an `if` test holds only when the user chose the option whose names match `option` (lower-case):
    an off-by-default switch named for it (`off_by_default`: `PythonContext.off_by_default`, a command-line switch
    or config field; `if args.allow_tf32:`, `if args.allow_tf32 and ...`), or a data type the user picked asked whether it is that
    option (`if config.train_dtype.enable_tf():`). A value compared with the option's name (`if precision ==
    "tf32":`) is not one: reviewers judged a benchmark's `--precision tf32` that silently runs fp32 on ROCm a
    hazard."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(opted_in_by_switch(operand, option, off_by_default) for operand in test.values)
    if isinstance(test, ast.Call):
        return _data_type_is_option(test, option)
    name = last_name(test)
    return option.search(name.lower()) is not None and off_by_default(name)


def _data_type_is_option(call: ast.Call, option: re.Pattern[str]) -> bool:
    """`<data type>.<predicate named for the option>()`: a question about a data type the user picked."""
    if call.args or call.keywords or not isinstance(call.func, ast.Attribute):
        return False
    return "dtype" in name_words(last_name(call.func.value)) and option.search(call.func.attr.lower()) is not None


def name_words(name: str) -> tuple[str, ...]:
    """The lower-case words of an identifier, in order (`nvcc`, `args`, `v2` of `NVCC_ARGS_v2`;
    `getCudaVersion` is one word): what a rule matches a name on by convention."""
    return tuple(_NAME_WORDS.findall(name.lower()))


def is_truthy_constant(expr: ast.AST) -> bool:
    """`True` or a non-zero integer literal (`1` as a switch)."""
    if not isinstance(expr, ast.Constant):
        return False
    # `bool` is a subclass of `int`: `False` is no integer literal here.
    return expr.value is True or (type(expr.value) is int and expr.value != 0)


def is_string_literal(node: ast.AST) -> bool:
    """A string or bytes literal (implicitly concatenated or not) or an f-string."""
    if isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))


def literal_token(ctx: PythonContext, node: ast.AST) -> StringToken | None:
    """A str or bytes literal written as one token (its prefix, quote and text between the quotes); None
    for an implicit concatenation, an f-string or anything else."""
    if not isinstance(node, ast.Constant) or not isinstance(node.value, (str, bytes)):
        return None
    return string_token(ctx.code_of(node))


def subscript_key(node: ast.AST) -> ast.expr | None:
    """`KEY` of `x[KEY]` (a single index: not a slice, not `x[a, b]`), else None."""
    if not isinstance(node, ast.Subscript) or isinstance(node.slice, (ast.Slice, ast.Tuple)):
        return None
    return node.slice


# --- calls --------------------------------------------------------------------------------------------
def called_function(ctx: PythonContext, call: ast.Call) -> str | None:
    """The qualified name of the function a call runs, or builds with `functools.partial(f, ...)` (whose
    keyword arguments then go to `f`)."""
    name = ctx.qualified_name(call.func)
    if name != "functools.partial":
        return name
    arguments = argument_values(call)
    return ctx.qualified_name(arguments[0]) if arguments else name


def unpacked_keyword(ctx: PythonContext, call: ast.Call, keyword: str) -> list[tuple[ast.keyword, ast.expr]]:
    """The values `keyword` gets through `**{...}` arguments of `call` (a dict literal, `dict(...)` or a
    name assigned one once), each with the `**` argument it is in."""
    found: list[tuple[ast.keyword, ast.expr]] = []
    for argument in call.keywords:
        if argument.arg is None:
            value = ctx.semantic.dict_entries(argument.value).get(keyword)
            if value is not None:
                found.append((argument, value))
    return found


# --- values -------------------------------------------------------------------------------------------
def rocm_arm(ctx: PythonContext, value: ast.expr, wanted: Callable[[ast.expr], bool]) -> ast.expr | None:
    """The first arm of `value` (`ctx.values.arms`) that is `wanted` and can run on ROCm: report
    once per statement, gated on that arm (`True if torch.version.cuda else False` is no hazard)."""
    for arm in ctx.values.arms(value):
        if wanted(arm) and not ctx.is_rocm_gated(arm):
            return arm
    return None


def report_site(ctx: PythonContext, literal: ast.AST, written: ast.AST) -> ast.AST:
    """Where to report a literal a call argument evaluates to: the literal when it is written inside
    `written` (the argument), else `written` itself (the literal was assigned elsewhere)."""
    return literal if ctx.semantic.is_within(literal, written) else written


def literal_text(ctx: PythonContext, node: ast.AST) -> str | None:
    """The text of a string literal as written (plain, implicitly concatenated, or an f-string with `{}`
    for each field); None for anything else (a name is not followed: see `Semantic.static_text`)."""
    return ctx.semantic.static_text(node, "{}") if is_string_literal(node) else None


def fstring_prefix(string: ast.JoinedStr) -> str:
    """The constant text an f-string starts with (`"hip:"` of `f"hip:{rank}"`), "" when it starts with
    a field."""
    first = string.values[0] if string.values else None
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""


# --- os.environ ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EnvironmentWrite:
    """One variable a statement writes into `os.environ`."""

    key: str | None  # the variable's name, when it is known
    value: ast.expr
    site: ast.AST  # the value as written in the statement (the call's argument when it is elsewhere)


def environ_key(ctx: PythonContext, target: ast.AST) -> ast.expr | None:
    """`KEY` of an `os.environ[KEY]` subscript."""
    if not isinstance(target, ast.Subscript):
        return None
    key = subscript_key(target)
    if key is None or ctx.qualified_name(target.value) != _ENVIRON:
        return None
    return key


def environ_writes(ctx: PythonContext, node: ast.Assign | ast.Call) -> list[EnvironmentWrite]:
    """The variables `os.environ[KEY] = value`, `os.environ.setdefault(KEY, value)`,
    `os.putenv(KEY, value)` and `os.environ.update(KEY=value, {...})` write."""
    if isinstance(node, ast.Assign):
        keys = (environ_key(ctx, target) for target in node.targets)
        return [EnvironmentWrite(ctx.string_value(key), node.value, node.value) for key in keys if key is not None]
    name = ctx.qualified_name(node.func)
    if name in _ENVIRON_SETTERS:
        key, value = ctx.semantic.positional(node, 0), ctx.semantic.positional(node, 1)
        if key is None or value is None:
            return []
        return [EnvironmentWrite(ctx.string_value(key), value, value)]
    if name == f"{_ENVIRON}.update":
        return _update_writes(ctx, node)
    return []


def _update_writes(ctx: PythonContext, call: ast.Call) -> list[EnvironmentWrite]:
    writes: list[EnvironmentWrite] = []
    for argument in call.args:
        writes.extend(_mapping_writes(ctx, unstarred(argument), argument))
    for keyword in call.keywords:
        if keyword.arg is None:
            writes.extend(_mapping_writes(ctx, keyword.value, keyword))
        else:
            writes.append(EnvironmentWrite(keyword.arg, keyword.value, keyword))
    return writes


def _mapping_writes(ctx: PythonContext, mapping: ast.expr, argument: ast.AST) -> list[EnvironmentWrite]:
    """The entries of a mapping passed as `argument` (`{...}`, `**{...}`, a name assigned one once)."""
    entries = ctx.semantic.dict_entries(mapping).items()
    return [EnvironmentWrite(key, value, report_site(ctx, value, argument)) for key, value in entries]


def keeps_user_setting(ctx: PythonContext, name: str, value: ast.expr) -> bool:
    """The value written to the environment variable `name` is the one the user set (`os.environ[name] =
    saved` after `saved = os.getenv(name)`: a restore), or made from it alone by a function of this file
    (`os.environ[name] = merge(saved)`): the script amends or puts back the user's choice, it picks nothing
    of its own (and a literal in the function is still seen where it is written)."""
    if _environment_read(ctx, value, name):
        return True
    if isinstance(value, ast.Name):
        binding = ctx.semantic.lookup(value.id, value)
        value = binding.single if binding is not None and binding.single is not None else value
    if not isinstance(value, ast.Call) or value.keywords or not value.args:
        return False
    if ctx.semantic.local_function(value.func) is None:
        return False
    return all(_environment_read(ctx, argument, name) for argument in value.args)


def _environment_read(ctx: PythonContext, expr: ast.expr, name: str) -> bool:
    """`os.getenv(name)`, `os.environ.get(name)`, `os.environ[name]`, or a variable assigned one of them
    once; a default other than None is a value of the script's own."""
    if isinstance(expr, ast.Name):
        # single_value follows a bounded chain of once-assigned names (`a = b; b = a` is a cycle).
        single = ctx.semantic.single_value(expr)
        return single is not None and not isinstance(single, ast.Name) and _environment_read(ctx, single, name)
    if isinstance(expr, ast.Subscript):
        key = environ_key(ctx, expr)
        return key is not None and ctx.string_value(key) == name
    if not isinstance(expr, ast.Call) or expr.keywords:
        return False
    if ctx.qualified_name(expr.func) not in ("os.getenv", f"{_ENVIRON}.get"):
        return False
    default = expr.args[1] if len(expr.args) == 2 else None
    if len(expr.args) not in (1, 2) or (default is not None and not is_none(default)):
        return False
    return ctx.string_value(expr.args[0]) == name


# --- what is only shown -------------------------------------------------------------------------------
def is_display_call(ctx: PythonContext, call: ast.Call) -> bool:
    """`print(...)`, a logging call (`logger.info(...)`, `logging.warning(...)`, `log.log(...)`),
    `warnings.warn(...)`, `click.echo(...)`, `sys.stderr.write(...)`: see DISPLAY_CALLS."""
    return last_name(call.func) in DISPLAY_CALLS or ctx.qualified_name(call.func) == "print"


def only_displayed(ctx: PythonContext, node: ast.AST) -> bool:
    """Inside the arguments of a display call of the same statement: the result is only shown
    (`print("sm_90 built:", "sm_90" in archs)`), no code path depends on it."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (ast.stmt, ast.Lambda)):
            return False
        if isinstance(ancestor, ast.Call) and is_display_call(ctx, ancestor):
            return True
    return False


def in_message(ctx: PythonContext, node: ast.AST) -> bool:
    """Inside a display call (`is_display_call`), an exception (`raise`) or `assert` message, or a
    decorator (test data), within the statement `node` is in: text that is shown, not used."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, ast.Raise):
            return True
        if isinstance(ancestor, DEFS):
            return child in ancestor.decorator_list
        if isinstance(ancestor, ast.Assert):
            return child is ancestor.msg
        if isinstance(ancestor, ast.Call) and is_display_call(ctx, ancestor):
            return True
        if isinstance(ancestor, ast.stmt):
            return False
        child = ancestor
    return False


def is_looked_for(ctx: PythonContext, node: ast.AST) -> bool:
    """Whether the value `node` stands for (a literal, or the collection holding it) is something to look
    for rather than to use: compared (`==`, `in`), matched or edited as text (an argument of
    `LOOKUP_METHODS`, an `assert*` method, `re.*`, `fnmatch.*`), a key or an index (a subscript, a
    dict key, the key of `.get(key, ...)` or `.pop(key, ...)`), offered as `choices=`, a declaration's condition
    (`when=`), or test parameters."""
    parent = ctx.parent(node)
    if isinstance(parent, ast.Compare):
        return True
    if isinstance(parent, ast.Subscript):
        return node is parent.slice
    if isinstance(parent, ast.Tuple) and is_subscript_index(ctx, parent):
        return True  # one of the indices of `x[a, b]`
    if isinstance(parent, ast.Dict):
        return node in parent.keys
    argument = parent if isinstance(parent, (ast.keyword, ast.Starred)) else node
    call = ctx.parent(argument)
    if not isinstance(call, ast.Call) or argument is call.func:
        return False
    method = last_name(call.func)
    if method in LOOKUP_METHODS or method.startswith("assert"):
        return True
    if (ctx.qualified_name(call.func) or "").startswith(("re.", "fnmatch.")):
        return True
    if isinstance(argument, ast.keyword) and argument.arg in _LOOKED_FOR_KEYWORDS:
        return True
    return method in KEY_LOOKUPS and ctx.semantic.positional(call, 0) is argument


def is_subscript_index(ctx: PythonContext, expr: ast.AST) -> bool:
    """`expr` is what a subscript indexes with (`node` in `x[node]`, a tuple of indices included)."""
    parent = ctx.parent(expr)
    return isinstance(parent, ast.Subscript) and parent.slice is expr


# --- blocks -----------------------------------------------------------------------------------------------
def statements_before(block: Sequence[ast.stmt], child: ast.AST) -> list[ast.stmt]:
    """The statements of `block` (a body, `orelse`, `finalbody` list) that run before its statement `child`."""
    earlier: list[ast.stmt] = []
    for statement in block:
        if statement is child:
            break
        earlier.append(statement)
    return earlier


def leaves_quietly(block: Sequence[ast.stmt]) -> bool:
    """The block ends in `return`, `continue` or `break`: it skips the rest and carries on (unlike a
    `raise`, which is no fallback)."""
    return any(isinstance(statement, _QUIET_EXITS) for statement in last_line(block))


# --- try/except fallbacks -----------------------------------------------------------------------------
def handled_by_try(ctx: PythonContext, node: ast.AST, caught: frozenset[str]) -> bool:
    """Inside the body of a `try:` (in the same def, class or lambda) with a handler that catches one of
    the exception names `caught` (a bare `except:` catches all) and does not re-raise: a fallback."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, DEFERRED_BODIES):
            return False
        if isinstance(ancestor, ast.Try) and child in ancestor.body:
            if any(_swallows(handler, caught) for handler in ancestor.handlers):
                return True
        child = ancestor
    return False


# The method a class's construction runs.
_CONSTRUCTOR = "__init__"
# How many defs up a failure may be followed to the `try:` that catches it.
MAX_CALLER_LEVELS = 4


def handled_by_callers(ctx: PythonContext, node: ast.AST, caught: frozenset[str], levels: int = 0) -> bool:
    """`handled_by_try`, or `node` sits in a module-level def of this file that no other module may call (its name
    is private, or no importer reads it), or in a private method of a module-level class (`self._by_nvml()`), and
    every use of which is a call that is itself handled so, up to a few defs up (`_device_snapshot()` called only
    inside `get_snapshot()`'s `try: ... except Exception: return {"available": False}`): the failure reaches a
    fallback."""
    if handled_by_try(ctx, node, caught):
        return True
    function = next((ancestor for ancestor in ctx.ancestors(node) if isinstance(ancestor, DEFERRED_BODIES)), None)
    if levels >= MAX_CALLER_LEVELS or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    owner = ctx.parent(function)
    if isinstance(owner, ast.ClassDef):
        if ctx.parent(owner) is not ctx.semantic.module or not function.name.startswith("_"):
            return False
        if function.name == _CONSTRUCTOR:
            return _constructions_handled(ctx, owner, caught, levels + 1)
    elif owner is not ctx.semantic.module or not called_only_here(ctx, function.name):
        return False
    uses = ctx.references.uses_of(function)
    return bool(uses) and all(
        isinstance(use, ast.Call) and handled_by_callers(ctx, use, caught, levels + 1) for use in uses
    )


def _constructions_handled(ctx: PythonContext, cls: ast.ClassDef, caught: frozenset[str], levels: int) -> bool:
    """Every construction of a class no other module may use is handled (`handled_by_callers`): a call of the class,
    or the class as a record of a list of backends tried in turn (`for name, backend in [("NVML", NvmlBackend),
    ("sysfs", SysfsBackend)]: try: backend() except Exception: continue`): its constructor's failure reaches the
    fallback."""
    if not called_only_here(ctx, cls.name):
        return False
    uses = ctx.references.uses_of(cls)
    return bool(uses) and all(_construction_handled(ctx, use, caught, levels) for use in uses)


def _construction_handled(ctx: PythonContext, use: ast.expr, caught: frozenset[str], levels: int) -> bool:
    if isinstance(use, ast.Call):
        return handled_by_callers(ctx, use, caught, levels)
    calls = _calls_of_tried_record(ctx, use)
    return bool(calls) and all(handled_by_callers(ctx, call, caught, levels) for call in calls)


def _calls_of_tried_record(ctx: PythonContext, use: ast.expr) -> list[ast.Call]:
    """The calls of the loop variable a `for` over a list of records (a name bound once to a list or tuple literal, or
    the literal itself) binds to `use`, an element of a record or a record; none when the list is read any other way
    or the element is not bound to a name of its own."""
    position: int | None = None
    record: ast.expr = use
    parent = ctx.parent(use)
    if isinstance(parent, ast.Tuple) and isinstance(ctx.parent(parent), (ast.List, ast.Tuple)):
        position, record = parent.elts.index(use), parent
    records = ctx.parent(record)
    if not isinstance(records, (ast.List, ast.Tuple)):
        return []
    loops = _loops_over(ctx, records)
    calls: list[ast.Call] = []
    for loop in loops:
        target = loop.target
        if position is not None:
            if not isinstance(target, ast.Tuple) or position >= len(target.elts):
                return []
            target = target.elts[position]
        if not isinstance(target, ast.Name):
            return []
        calls.extend(
            node
            for statement in loop.body
            for node in ast.walk(statement)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == target.id
        )
    return calls if loops else []


def _loops_over(ctx: PythonContext, records: ast.List | ast.Tuple) -> list[ast.For]:
    """The `for` loops over `records`, directly or through a name bound only to it in the same scope; none when the
    name is read any other way (returned, passed on)."""
    holder = ctx.parent(records)
    if isinstance(holder, ast.For) and holder.iter is records:
        return [holder]
    if not (isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name)):
        return []
    name = holder.targets[0].id
    scope = ctx.semantic.enclosing_scope_node(holder)
    binding = ctx.semantic.lookup_in(scope, name)
    if binding is None or binding.single is not records:
        return []
    reads = [read for read in ctx.references.reads(name) if ctx.semantic.enclosing_scope_node(read) is scope]
    loops = [ctx.parent(read) for read in reads]
    if not all(isinstance(loop, ast.For) and loop.iter is read for loop, read in zip(loops, reads, strict=True)):
        return []
    return [loop for loop in loops if isinstance(loop, ast.For)]


def called_only_here(ctx: PythonContext, name: str) -> bool:
    """No other module of the project may call the module-level def `name`: private by its name, or read by no
    importer (when the project's importers are known)."""
    read_elsewhere = ctx.gates.read_elsewhere
    return name.startswith("_") or (read_elsewhere is not None and not read_elsewhere(name))


# What a handler catching a failed import names (`except Exception` catches ImportError too).
IMPORT_FAILURES = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def lazy_import_with_actionable_error(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is imported inside a def, in a `try:` whose `except ImportError` raises an exception of its own with
    a message (`raise ImportError(INSTALL_HINT) from exc`): the module loads without the package, and only the code
    that needs it stops, saying what to install (an opt-in backend's loader)."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, DEFERRED_BODIES):
            return False
        if isinstance(ancestor, ast.Try) and child in ancestor.body:
            inside_def = isinstance(
                ctx.semantic.enclosing_scope_node(ancestor), (ast.FunctionDef, ast.AsyncFunctionDef)
            )
            return inside_def and any(_raises_with_message(handler) for handler in ancestor.handlers)
        child = ancestor
    return False


def _raises_with_message(handler: ast.ExceptHandler) -> bool:
    """An `except ImportError` (or `except Exception`, bare `except:`) handler whose last statement raises a new
    exception given a message."""
    if (handler.type is not None and not set(caught_names(handler)) & IMPORT_FAILURES) or not handler.body:
        return False
    last = handler.body[-1]
    return isinstance(last, ast.Raise) and isinstance(last.exc, ast.Call) and bool(last.exc.args or last.exc.keywords)


def _swallows(handler: ast.ExceptHandler, caught: frozenset[str]) -> bool:
    if re_raises(handler):
        return False
    return handler.type is None or any(name in caught for name in caught_names(handler))


def caught_names(handler: ast.ExceptHandler) -> list[str]:
    """The last segments of the exception types an `except` names (`[NVMLError, OSError]` for
    `except (pynvml.NVMLError, OSError):`); empty for a bare `except:`."""
    if handler.type is None:
        return []
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return [(dotted_name(unstarred(expr)) or "").rsplit(".", 1)[-1] for expr in types]


def raised_name(statement: ast.Raise) -> str:
    """The last segment of the exception a `raise` names (`MissingCUDAException` for `raise
    errors.MissingCUDAException("...")`); "" for a bare `raise`."""
    exception = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
    return (dotted_name(exception) or "").rsplit(".", 1)[-1] if exception is not None else ""


def re_raises(handler: ast.ExceptHandler) -> bool:
    """A `raise` among the handler's top-level statements."""
    return any(isinstance(statement, ast.Raise) for statement in handler.body)


# --- string literals in a value -----------------------------------------------------------------------
def literal_value(ctx: PythonContext, node: ast.Constant) -> str | None:
    """A string literal's value; a bytes literal's too, read as Latin-1 (`b"--offload-arch=gfx942"`, the
    options of a runtime compiler)."""
    if isinstance(node.value, bytes):
        return node.value.decode("latin-1")
    return ctx.string_value(node)


def literals_in(ctx: PythonContext, value: ast.AST) -> list[str]:
    """The values of the string and bytes literals written in `value`: the literal itself, or the elements of
    the list, tuple or set, the operands, the call's arguments holding it (`Values.collection_of`), in source order."""
    found: list[str] = []
    stack: list[ast.AST] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Constant):
            text = literal_value(ctx, node)
            found.extend([text] if text is not None else [])
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            stack.extend(unstarred(element) for element in reversed(node.elts))
        elif isinstance(node, ast.BinOp):
            stack.extend((node.right, node.left))
        elif isinstance(node, ast.Call):
            stack.extend(reversed(argument_values(node)))
    return found


def caught_earlier(ctx: PythonContext, node: ast.AST, exception: str) -> bool:
    """`node` sits in an `except` clause (within its def) of a `try` whose earlier clause catches the exception
    class named `exception` (`except torch.cuda.OutOfMemoryError:` before `except RuntimeError as e:`), alone or in
    a tuple: that exception never reaches `node`."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, DEFS):
            return False
        if not isinstance(ancestor, ast.ExceptHandler):
            continue
        statement = ctx.parent(ancestor)
        if not isinstance(statement, (ast.Try, ast.TryStar)):
            return False
        earlier = statement.handlers[: statement.handlers.index(ancestor)]
        types = [handler.type for handler in earlier if handler.type is not None]
        caught = [element for kind in types for element in (kind.elts if isinstance(kind, ast.Tuple) else [kind])]
        return any(last_name(kind) == exception for kind in caught)
    return False
