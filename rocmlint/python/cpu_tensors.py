"""Tensors made on the CPU that this function keeps there: test data and checkpoint contents, not GPU work.

A tensor is on the CPU when it is made there: `.cpu()`, `.to("cpu")`, a torch factory with
`device="cpu"`; in a test suite's file also a factory with no device at all (`torch.randn(4, 8)`: the
default device is the CPU unless the file changes it with `torch.set_default_device`). Library code is left
out of that last case: a model's weights are made without a device under a loader's `with
torch.device(...)` in another module. Methods that keep a tensor where it is (`.detach()`, `.view(...)`,
a `.to(dtype)` cast) and local variables whose every assignment is such a tensor carry it on.

It stays on the CPU when the expression ends in a local variable, a collection or a call argument, and no
read of that variable moves it (`.cuda()`, `.to(device)`, a call given a `device=`) or makes it part of a
module (`nn.Parameter(w)`, `self.w = w`, `register_buffer`) or leaves the function (`return w`).

A whole test can be kept off the GPU too (`in_gpu_free_test`): nothing in it, nor in the defs and classes of
its file that it calls, names a device but the CPU, CUDA or a GPU, and it reads no tensor from outside (its
parameters are parametrize values or pytest's plain fixtures, its other names imports, defs and classes).
"""

from __future__ import annotations

import ast
import builtins
import re

from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import last_name
from rocmlint.python.project import is_test_file
from rocmlint.python.scopes import FunctionNode, dotted_name
from rocmlint.python.semantic import FUNCTION_DEFS, MAX_DEPTH
from rocmlint.python.torch_api import device_arguments

# torch factories that take `device=` and make a new tensor (not the `_like` ones: they follow their input).
_FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "empty",
        "zeros",
        "ones",
        "full",
        "rand",
        "randn",
        "randint",
        "randperm",
        "arange",
        "linspace",
        "logspace",
        "eye",
    )
)
# Factories that copy their data, and keep its device when it is a tensor: new on the CPU from a literal only.
_FROM_DATA = frozenset({"torch.tensor", "torch.as_tensor"})
_LITERAL_DATA = (ast.List, ast.Tuple, ast.Constant, ast.ListComp)
# Tensor methods whose result lives where the tensor does.
_SAME_DEVICE_METHODS = frozenset(
    {
        "detach",
        "clone",
        "contiguous",
        "view",
        "reshape",
        "t",
        "T",
        "transpose",
        "permute",
        "flatten",
        "squeeze",
        "unsqueeze",
        "float",
        "half",
        "bfloat16",
        "to",
        "cpu",
    }
)
_MOVING_METHODS = frozenset({"cuda", "to", "pin_memory", "share_memory_"})
# Calls that make a tensor part of a module, which is then moved with it (`model.cuda()`).
_MODULE_STATE = ("Parameter", "Buffer", "register_buffer", "register_parameter", "setattr")


def made_on_cpu(ctx: PythonContext, expr: ast.AST, depth: int = 0) -> bool:
    """`expr` evaluates to a tensor on the CPU."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(expr, ast.Name):
        return _local_on_cpu(ctx, expr, depth)
    if not isinstance(expr, ast.Call):
        return False
    devices = device_arguments(ctx, expr)
    if isinstance(expr.func, ast.Attribute) and expr.func.attr == "cpu" and not expr.args:
        return True
    if any(_names_cpu(ctx, device) for device in devices):
        return True
    factory = ctx.qualified_name(expr.func) or ""
    if factory in _FROM_DATA and not (expr.args and isinstance(expr.args[0], _LITERAL_DATA)):
        return False  # `torch.as_tensor(t)` stays where the tensor `t` is
    if factory in _FACTORIES or factory in _FROM_DATA:
        return not devices and _default_device_is_cpu(ctx, expr)
    if isinstance(expr.func, ast.Attribute) and expr.func.attr in _SAME_DEVICE_METHODS:
        return not _moves(ctx, expr) and made_on_cpu(ctx, expr.func.value, depth + 1)
    return False


def kept_on_cpu(ctx: PythonContext, expr: ast.expr) -> bool:
    """The tensor `expr` evaluates to ends on the CPU and stays there in this function: `expr`, after the
    methods applied to it (a `.cpu()` among them, or made on the CPU), is assigned to a local variable no read of which moves it, or is put in a
    collection or passed to a call that does not make it module state."""
    kept = _outermost_same_device(ctx, expr)
    return made_on_cpu(ctx, kept) and _stays(ctx, kept, depth=0)


def _stays(ctx: PythonContext, value: ast.AST, depth: int) -> bool:
    """Where `value` goes next keeps it on the CPU: not returned, not stored outside a local variable, not
    passed to a call that is given a device or makes module state; a local variable or a collection it
    goes into must stay too."""
    if depth > MAX_DEPTH or _moves_on(ctx, value):
        return False
    parent = ctx.parent(value)
    if isinstance(parent, (ast.Return, ast.Yield, ast.YieldFrom, ast.Lambda)):
        return False
    if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and parent.value is value:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        target = targets[0] if len(targets) == 1 else None
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            target = target.value  # `state[name] = w`: into a local collection
        if not isinstance(target, ast.Name):
            return False  # `self.w = ...`, unpacking
        return _local_reads_stay(ctx, target, depth)
    if isinstance(parent, (ast.List, ast.Tuple, ast.Set, ast.Starred)) or (
        isinstance(parent, ast.Dict) and value in parent.values
    ):
        return _stays(ctx, parent, depth + 1)
    call = ctx.parent(parent) if isinstance(parent, ast.keyword) else parent
    if isinstance(call, ast.Call) and value is not call.func:
        return not _makes_module_state(ctx, call) and not device_arguments(ctx, call)
    return True


def _local_reads_stay(ctx: PythonContext, target: ast.Name, depth: int) -> bool:
    binding = ctx.semantic.lookup(target.id, target)
    if binding is None or binding.kind != "value" or not isinstance(binding.scope.node, FUNCTION_DEFS):
        return False
    for read in ctx.semantic.reads(target.id, binding):
        used = _outermost_same_device(ctx, read)
        statement = ctx.parent(used)
        if isinstance(statement, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == target.id for t in statement.targets
        ):
            continue  # `x = x.view(...)`: the variable's own other value, checked as an assignment of it
        if not _stays(ctx, used, depth + 1):
            return False
    return True


def _outermost_same_device(ctx: PythonContext, expr: ast.AST) -> ast.AST:
    """`x.detach().view(2, 2)` for `x`: the last of the methods that keep the tensor where it is."""
    current = expr
    while True:
        attribute = ctx.parent(current)
        if not isinstance(attribute, ast.Attribute) or attribute.value is not current:
            return current
        call = ctx.parent(attribute)
        if not isinstance(call, ast.Call) or call.func is not attribute:
            return current
        if attribute.attr not in _SAME_DEVICE_METHODS or _moves(ctx, call):
            return current
        current = call


def _moves_on(ctx: PythonContext, used: ast.AST) -> bool:
    """The method applied next to `used` moves it off the CPU (`.cuda()`, `.to(device)`)."""
    attribute = ctx.parent(used)
    call = ctx.parent(attribute) if isinstance(attribute, ast.Attribute) else None
    return isinstance(call, ast.Call) and call.func is attribute and _moves(ctx, call)


def _moves(ctx: PythonContext, call: ast.Call) -> bool:
    """`.cuda()`, `.pin_memory()`, or `.to(...)` given a device that is not the CPU (not a dtype alone)."""
    method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    if method not in _MOVING_METHODS:
        return False
    if method != "to":
        return True
    return any(not _names_cpu(ctx, device) and not _is_dtype(ctx, device) for device in device_arguments(ctx, call))


def _names_cpu(ctx: PythonContext, device: ast.expr) -> bool:
    """`"cpu"`, `torch.device("cpu")`."""
    if isinstance(device, ast.Call) and ctx.qualified_name(device.func) == "torch.device" and device.args:
        device = device.args[0]
    return ctx.string_value(device) == "cpu"


def _is_dtype(ctx: PythonContext, expr: ast.expr) -> bool:
    """A torch dtype written out (`torch.float8_e4m3fn`), or a name that holds a dtype by its name."""
    name = ctx.qualified_name(expr) or ""
    return (name.startswith("torch.") and name.rsplit(".", 1)[-1][:1].islower() and "dtype" not in name) or (
        isinstance(expr, ast.Name) and "dtype" in expr.id.lower()
    )


def _makes_module_state(ctx: PythonContext, call: ast.Call) -> bool:
    callee = ctx.qualified_name(call.func) or (call.func.attr if isinstance(call.func, ast.Attribute) else "")
    return any(callee.rsplit(".", 1)[-1].endswith(marker) for marker in _MODULE_STATE)


def _local_on_cpu(ctx: PythonContext, name: ast.Name, depth: int) -> bool:
    """A local variable every assignment of which is a CPU tensor (`x = x.to(dtype)` counts by its other ones)."""
    binding = ctx.semantic.lookup(name.id, name)
    if binding is None or binding.kind != "value" or binding.opaque or not binding.values:
        return False
    if not isinstance(binding.scope.node, FUNCTION_DEFS):
        return False
    others = [value for value in binding.values if next(ctx.semantic.name_reads(value, name.id), None) is None]
    return bool(others) and all(made_on_cpu(ctx, value, depth + 1) for value in others)


def _default_device_is_cpu(ctx: PythonContext, factory: ast.Call) -> bool:
    """A factory without a device makes a CPU tensor: in a test suite's file that does not change the
    default device, outside a `with torch.device(...):`."""
    if not is_test_file(ctx.source.path) or ctx.contains(b"set_default_device"):
        return False
    for ancestor in ctx.semantic.ancestors(factory):
        if isinstance(ancestor, (ast.With, ast.AsyncWith)) and any(
            isinstance(item.context_expr, ast.Call) and ctx.qualified_name(item.context_expr.func) == "torch.device"
            for item in ancestor.items
        ):
            return False
    return True


# Words of code that places tensors on a GPU or asks for one: any device (a variable, a fixture), CUDA, a GPU.
_GPU_WORDS = re.compile(r"cuda|gpu|xpu|device|accelerat|(?<![a-z])(?:mps|npu|hip)(?![a-z])", re.IGNORECASE)
# In a def or class a test calls, a `device` parameter is only forwarded: the test's own words decide it.
_EXPLICIT_GPU_WORDS = re.compile(r"cuda|gpu|xpu|accelerat|(?<![a-z])(?:mps|npu|hip)(?![a-z])", re.IGNORECASE)
# pytest's fixtures that hold no tensor.
_PLAIN_FIXTURES = frozenset(
    {"self", "cls", "monkeypatch", "tmp_path", "tmpdir", "tmp_path_factory", "request", "capsys", "caplog", "mocker"}
)
_PARAMETRIZE = "mark.parametrize"
# How many defs and classes of the file one test may reach before it counts as unknown.
_MAX_DEFINITIONS = 32
# How many helpers, each called from the next, a test may reach through before its tensors count as unknown.
_MAX_HELPER_DEPTH = 3


def in_gpu_free_test(ctx: PythonContext, node: ast.AST, depth: int = 0) -> bool:
    """`node` is in a test suite's function (its outermost def; for a test method, its class without the class's
    other tests) that keeps every tensor on the CPU: its text names no device but the CPU and no CUDA or GPU, nor
    do the defs and classes of this file it calls; its tests and fixtures take parametrize values or pytest's
    plain fixtures (no tensor fixture), a helper def what the file's tests give it (every use a call from such a
    test); and every other name it reads is local, an import, a builtin, a def or a class (no module-level
    tensor)."""
    if not is_test_file(ctx.source.path):
        return False
    outermost = _outermost_definition(ctx, node)
    if outermost is None:
        return False
    unit = _test_unit(ctx, outermost, node)
    if _default_device_changed(ctx, unit) or any(_names_a_gpu(ctx, part, _GPU_WORDS) for part in unit):
        return False
    seen: set[ast.AST] = {outermost, *unit}
    if not all(_reads_gpu_free(ctx, part, seen) for part in unit):
        return False
    if _parameters_plain(ctx, outermost, unit):
        return True
    return _only_called_from_gpu_free_tests(ctx, outermost, depth)


def _outermost_definition(ctx: PythonContext, node: ast.AST) -> ast.AST | None:
    """The def or class at module level holding `node` (its decorators included)."""
    outermost = None
    for ancestor in ctx.semantic.ancestors(node):
        if isinstance(ancestor, (*FUNCTION_DEFS, ast.ClassDef)):
            outermost = ancestor
    return outermost


def _test_unit(ctx: PythonContext, outermost: ast.AST, node: ast.AST) -> list[ast.AST]:
    """What runs with `node`: its outermost def; for a node in a test method of a class, the class (bases,
    decorators, attributes, set-up and helper methods) without its other test methods, which each run on their
    own and cannot hand this one a tensor."""
    if not isinstance(outermost, ast.ClassDef):
        return [outermost]
    method = next((ancestor for ancestor in ctx.semantic.ancestors(node) if ctx.parent(ancestor) is outermost), None)
    if not _is_test(method):
        return [outermost]
    kept = [statement for statement in outermost.body if statement is method or not _is_test(statement)]
    return [*outermost.decorator_list, *outermost.bases, *outermost.keywords, *kept]


def _default_device_changed(ctx: PythonContext, unit: list[ast.AST]) -> bool:
    """A `torch.set_default_device(...)` that may apply to the unit: at module level, in the unit itself, or in
    another test that does not restore the default in a `finally:` (which then leaks into the tests after it)."""
    if not ctx.contains(b"set_default_device"):
        return False
    for mention in ctx.references.mentions("set_default_device"):
        test = next((ancestor for ancestor in ctx.semantic.ancestors(mention) if _is_test(ancestor)), None)
        if test is None or any(ctx.semantic.is_within(mention, part) for part in unit) or not _restores(ctx, test):
            return True
    return False


def _restores(ctx: PythonContext, test: ast.AST) -> bool:
    """`test` sets the default device again in a `finally:` block."""
    for found in ctx.semantic.descendants(test):
        if isinstance(found, ast.Try) and any(
            last_name(mention) == "set_default_device" for block in found.finalbody for mention in ast.walk(block)
        ):
            return True
    return False


def _is_test(statement: ast.AST | None) -> bool:
    """A test function pytest or unittest collects and runs on its own (`test_*`, `test*` methods)."""
    return isinstance(statement, FUNCTION_DEFS) and statement.name.startswith("test")


def _is_fixture(function: FunctionNode) -> bool:
    return any(
        (dotted_name(decorator.func if isinstance(decorator, ast.Call) else decorator) or "").endswith("fixture")
        for decorator in function.decorator_list
    )


def _parameters_plain(ctx: PythonContext, outermost: ast.AST, unit: list[ast.AST]) -> bool:
    """Every parameter without a default of the outermost def, and of the unit's tests and fixtures, is a
    parametrize value or a pytest plain fixture: a tensor fixture may be on a GPU. The other methods of a test
    class and nested defs get what the tests give."""
    functions: list[ast.AST] = [part for part in unit if isinstance(part, FUNCTION_DEFS)]
    functions += [method for part in unit if isinstance(part, ast.ClassDef) for method in part.body]
    checked = [
        function
        for function in functions
        if isinstance(function, FUNCTION_DEFS)
        and (function is outermost or _is_test(function) or _is_fixture(function))
    ]
    return all(_required_plain(ctx, function) for function in checked)


def _required_plain(ctx: PythonContext, function: FunctionNode) -> bool:
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    required = positional[: len(positional) - len(arguments.defaults)]
    required += [arg for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if not default]
    allowed = _PLAIN_FIXTURES | _parametrized_names(ctx, function)
    return all(arg.arg in allowed for arg in required)


def _only_called_from_gpu_free_tests(ctx: PythonContext, helper: ast.AST, depth: int) -> bool:
    """`helper`, a module-level def that is neither a test nor a fixture, is only called (never passed on as a
    value) and only from tests that keep every tensor on the CPU: its parameters hold what they give it."""
    if depth >= _MAX_HELPER_DEPTH or not isinstance(helper, FUNCTION_DEFS) or _is_test(helper) or _is_fixture(helper):
        return False
    uses = ctx.references.uses_of(helper)
    return bool(uses) and all(isinstance(use, ast.Call) and in_gpu_free_test(ctx, use, depth + 1) for use in uses)


def _parametrized_names(ctx: PythonContext, function: ast.AST) -> frozenset[str]:
    names: set[str] = set()
    for decorator in getattr(function, "decorator_list", ()):
        if not isinstance(decorator, ast.Call) or not (dotted_name(decorator.func) or "").endswith(_PARAMETRIZE):
            continue
        argnames = ctx.string_value(decorator.args[0]) if decorator.args else None
        names.update(part.strip() for part in (argnames or "").split(","))
    return frozenset(names)


def _reads_gpu_free(ctx: PythonContext, definition: ast.AST, seen: set[ast.AST]) -> bool:
    """The names `definition` reads are locals, imports, builtins, or defs and classes of this file whose text
    names no GPU (and whose own reads are such names)."""
    for found in ctx.semantic.descendants(definition):
        if type(found) is not ast.Name or type(found.ctx) is not ast.Load:
            continue
        binding = ctx.semantic.lookup(found.id, found)
        if binding is None:
            if not hasattr(builtins, found.id):
                return False
            continue
        if binding.kind == "import" or binding.scope.node is not ctx.semantic.module:
            continue
        called = binding.definition
        if called is None:
            if binding.opaque or any(_names_a_gpu(ctx, value, _GPU_WORDS) for value in binding.values):
                return False  # a module-level value placed on a device, or one whose value is unknown
            continue
        if called in seen:
            continue
        seen.add(called)
        if len(seen) > _MAX_DEFINITIONS or _names_a_gpu(ctx, called, _EXPLICIT_GPU_WORDS):
            return False
        if not _reads_gpu_free(ctx, called, seen):
            return False
    return True


def _names_a_gpu(ctx: PythonContext, root: ast.AST, words: re.Pattern[str]) -> bool:
    """A name, attribute, keyword or string under `root` (docstrings and the CPU placements
    `device="cpu"`, `torch.device("cpu")`, `.to("cpu")` aside) matches `words`."""
    for found in ctx.semantic.descendants(root):
        if _is_cpu_placement(ctx, found):
            continue
        if words.search(_word_of(ctx, found)):
            return True
    return False


def _word_of(ctx: PythonContext, node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.keyword):
        return node.arg or ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and not isinstance(ctx.parent(node), ast.Expr):
        return node.value
    return ""


def _is_cpu_placement(ctx: PythonContext, node: ast.AST) -> bool:
    """The `device=` keyword, the `torch.device` callee or the `"cpu"` string of a CPU placement."""
    if isinstance(node, ast.keyword):
        return node.arg == "device" and _names_cpu(ctx, node.value)
    if isinstance(node, ast.Constant):
        return node.value == "cpu"
    call = ctx.parent(node)
    if isinstance(node, ast.Attribute) and isinstance(call, ast.Call) and call.func is node:
        return node.attr in ("device", "to") and bool(call.args) and _names_cpu(ctx, call.args[0])
    return False
