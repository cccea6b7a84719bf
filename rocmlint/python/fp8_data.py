"""FP8 dtypes handled as data, where no arithmetic picks the encoding: a dtype paired with the text that names its
format (a parse or decode table: `{"float8_e4m3fn": torch.float8_e4m3fn}`, `if code == "F8_E4M3": return
torch.float8_e4m3fn`) in a file that multiplies no matrices, a lookup that only probes whether the library has
the dtype (`if getattr(torch, "float8_e4m3fn", None):`), and a tensor made in the dtype only to be read back at once
(`torch.tensor(x, dtype=torch.float8_e4m3fn).view(torch.uint8).item()`).

`fp8.encoding_neutral_use` asks these; whether a mention is a hazard stays in ROC107.
"""

from __future__ import annotations

import ast
import re
import weakref

from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import last_name
from rocmlint.python.semantic import FUNCTION_DEFS

# A call that multiplies matrices by its name: `torch.mm`, `torch._scaled_mm`, `*gemm*`, `*matmul*`.
MATRIX_PRODUCT = re.compile(r"mm$|gemm|matmul", re.IGNORECASE)
_MULTIPLIES_MATRICES: weakref.WeakKeyDictionary[PythonContext, bool] = weakref.WeakKeyDictionary()
# The format part of an OCP dtype's name (`float8_e4m3fn` -> `e4m3`), as a type code names it: `F8_E4M3`.
_FORMAT_OF_NAME = re.compile(r"^float8_(e\dm\d)")
# A stored format's type code: upper-case (safetensors' `F8_E4M3`, a store API's `FLOAT8_E5M2`).
_TYPE_CODE = re.compile(r"^[A-Z][A-Z0-9_]*$")
# Calls that convert data into a dtype given as `dtype=` (a tensor's methods `.to`/`.view` take it positionally too).
_CONVERTING_FACTORIES = frozenset({"torch.tensor", "torch.as_tensor"})
_CONVERTING_METHODS = frozenset({"to", "view"})
# Tensor methods that convert, reinterpret, reshape or move a tensor without arithmetic on its elements.
_NO_ARITHMETIC_METHODS = frozenset(
    {"to", "view", "float", "half", "bfloat16", "double", "cpu", "detach", "clone", "contiguous", "reshape", "flatten"}
)
# Tensor methods that hand a tensor's values over to Python or NumPy.
_READ_OUT_METHODS = frozenset({"item", "tolist", "numpy"})


def multiplies_matrices(ctx: PythonContext) -> bool:
    """The file calls something named as a matrix product (`MATRIX_PRODUCT`): its FP8 data may reach a GEMM here."""
    known = _MULTIPLIES_MATRICES.get(ctx)
    if known is None:
        # Every node but the module, as the walk recorded them (a second walk of the file costs more).
        calls = (node for node in ctx.semantic.parents if isinstance(node, ast.Call))
        known = _MULTIPLIES_MATRICES[ctx] = any(MATRIX_PRODUCT.search(last_name(call.func)) for call in calls)
    return known


def fp8_as_data(ctx: PythonContext, node: ast.AST, name: str) -> bool:
    """`node`, the OCP FP8 dtype `name` (`float8_e4m3fn`), is only data: a feature probe (`feature_probe`), or the
    dtype a text names (`named_by_text`) in a file that multiplies no matrices, where the table only translates a
    name read from a file, a cache or the command line into the dtype of tensors moved, stored or compared (a
    communication test's `--dtype`, safetensors' `F8_E4M3`), or a tensor made in it only to be read back (`read_back`).
    A GEMM test's `--dtype` table is still reported."""
    if feature_probe(ctx, node) or read_back(ctx, node):
        return True
    return named_by_text(ctx, node, name) and not multiplies_matrices(ctx)


def named_by_text(ctx: PythonContext, node: ast.AST, name: str) -> bool:
    """`node` stands beside a string that names it (`_names_dtype`): the
    value of a dict entry or of a subscript store keyed by it (`DTYPES["float8_e4m3fn"] = node`), an element of a
    tuple holding it (`("FLOAT8_E4M3", node)`) or of a tuple a dict entry keyed by it holds, or returned under an `if` testing equality with it (a decoder: `if
    dt == "F8_E4M3": return node, None, 1`) or a switch named for it (`if args.unet_in_fp8_e4m3fn: return node`):
    the text chose the format, the code only translates it. Not a variable
    assigned under such an `if` (`if bits == "e4m3": self.fp_dtype = node`): the code goes on to compute with it."""
    match = _FORMAT_OF_NAME.match(name)
    if match is None:
        return False
    if any(_names_dtype(text, name, match.group(1)) for text in _paired_texts(ctx, node)):
        return True
    return any(_names_dtype(text, name, match.group(1)) for text in _decoded_texts(ctx, node))


def _decoded_texts(ctx: PythonContext, node: ast.AST) -> list[str]:
    """The strings that the `if` tests around a decoder's use of `node` compare with, within its def: a
    reinterpretation of stored bytes (`raw.view(node)`, then only methods without arithmetic, returned or assigned:
    `if code == "F8_E4M3": return raw.view(node).reshape(shape)`), where the data already is in the format the text
    names; or the name compared given `node` in its place (`if dtype == "float8_e4m3fn": dtype = node`), the
    record's dtype name translated."""
    statement = ctx.semantic.statement_of(node)
    compared: str | None = None
    if isinstance(statement, ast.Assign) and statement.value is node and len(statement.targets) == 1:
        target = statement.targets[0]
        compared = target.id if isinstance(target, ast.Name) else None
    elif not _reinterpreted_as_is(ctx, node, statement):
        return []
    texts: list[str] = []
    child: ast.AST | None = statement
    for branch in ctx.ancestors(node):
        if isinstance(branch, FUNCTION_DEFS):
            break
        if isinstance(branch, ast.If) and child in branch.body:
            texts += _equality_texts(ctx, branch.test, compared)
        child = branch
    return texts


def _reinterpreted_as_is(ctx: PythonContext, node: ast.AST, statement: ast.stmt | None) -> bool:
    """`node` is the dtype of `x.view(node)` whose result, through methods without arithmetic, is the whole value
    `statement` returns or assigns."""
    view = ctx.parent(node)
    if not isinstance(view, ast.Call) or view.args[:1] != [node] or last_name(view.func) != "view":
        return False
    current: ast.AST = view
    method = ctx.parent(current)
    while isinstance(method, ast.Attribute):
        call = ctx.parent(method)
        if method.attr not in _NO_ARITHMETIC_METHODS or not isinstance(call, ast.Call) or call.func is not method:
            return False
        current, method = call, ctx.parent(call)
    return isinstance(statement, (ast.Return, ast.Assign)) and statement.value is current


def _equality_texts(ctx: PythonContext, test: ast.expr, compared: str | None) -> list[str]:
    """The strings `test` (or an operand of its `and`) compares for equality, with the name `compared` only when
    given."""
    tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    texts: list[str] = []
    for one in tests:
        if not isinstance(one, ast.Compare) or len(one.ops) != 1 or not isinstance(one.ops[0], ast.Eq):
            continue
        sides = [one.left, one.comparators[0]]
        if compared is not None and not any(isinstance(side, ast.Name) and side.id == compared for side in sides):
            continue
        texts += _strings(ctx, sides)
    return texts


def _names_dtype(text: str, name: str, fmt: str) -> bool:
    """`text` names the OCP dtype `name` itself: a stored format's upper-case type code of its format (`F8_E4M3`,
    `FLOAT8_E5M2`: OCP by the format's definition), or its own name in other text (`torch.float8_e4m3fn`,
    `unet_in_fp8_e4m3fn`, an option's label `float8-e5m2`; `e4m3fn` is OCP's alone). Not a name that fits both encodings (`fp8_e4m3`, `fp8_e5m2`:
    vLLM's kv-cache dtypes, which the table maps to OCP by its own choice)."""
    if "FNUZ" in text.upper():
        return False
    if _TYPE_CODE.match(text):
        return fmt.upper() in text
    spelled = text.lower().replace("-", "_")  # `float8-e5m2`, an option's label, spells the name too
    return (name.removeprefix("float8_") if name.endswith("fn") else name) in spelled


def _paired_texts(ctx: PythonContext, node: ast.AST) -> list[str]:
    """The strings `node` is paired with (`named_by_text`); a tuple that is a dict's value is paired with its key
    (`{"float8-e4m3fn (fp16 LoRA)": (torch.float8_e4m3fn, True)}`: an option's label and its settings)."""
    parent = ctx.parent(node)
    if isinstance(parent, ast.Dict):
        key = next((k for k, v in zip(parent.keys, parent.values, strict=True) if v is node), None)
        return _strings(ctx, [key] if key is not None else [])
    if isinstance(parent, ast.Assign) and parent.value is node:
        return _strings(ctx, [target.slice for target in parent.targets if isinstance(target, ast.Subscript)])
    if isinstance(parent, ast.Tuple):
        texts = _strings(ctx, [element for element in parent.elts if element is not node])
        holder = ctx.parent(parent)
        if isinstance(holder, ast.Dict):
            return texts or _paired_texts(ctx, parent)  # `{"float8-e5m2": (torch.float8_e5m2, False)}`
        return texts or (_tested_texts(ctx, holder) if isinstance(holder, ast.Return) else [])
    return _tested_texts(ctx, parent) if isinstance(parent, ast.Return) else []


def _strings(ctx: PythonContext, nodes: list[ast.expr]) -> list[str]:
    return [text for text in (ctx.string_value(node) for node in nodes) if text is not None]


def _tested_texts(ctx: PythonContext, statement: ast.AST | None) -> list[str]:
    """The strings the test of the `if` whose body holds `statement` compares for equality (`dt == "F8_E4M3"`,
    also one operand of an `and`), and the name of a switch it tests (`if args.unet_in_fp8_e4m3fn:`)."""
    branch = ctx.parent(statement) if statement is not None else None
    if not isinstance(branch, ast.If) or statement not in branch.body:
        return []
    tests = branch.test.values if isinstance(branch.test, ast.BoolOp) else [branch.test]
    texts: list[str] = []
    for test in tests:
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            texts += _strings(ctx, [test.left, test.comparators[0]])
        elif isinstance(test, (ast.Name, ast.Attribute)):
            texts.append(last_name(test))  # a switch named for the format: `if args.unet_in_fp8_e4m3fn:`
    return texts


def feature_probe(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is a lookup with a default (`getattr(torch, "float8_e4m3fn", None)`) that is only tested for truth:
    the test of an `if`/`while`/`assert`/conditional expression, under `not`, an operand of `and`/`or` that is so
    tested, or returned (alone or in such an `and`) from a def whose every call is tested for truth
    (`def has_fp8(): return getattr(torch, "float8_e4m3fn", None) and ...`, then `if has_fp8():`)."""
    if not isinstance(node, ast.Call) or len(node.args) != 3:
        return False
    tested: ast.AST = node
    while isinstance(ctx.parent(tested), ast.BoolOp):
        tested = ctx.parent(tested)  # type: ignore[assignment]
    if _tested_for_truth(ctx, tested):
        return True
    statement = ctx.parent(tested)
    if not isinstance(statement, ast.Return):
        return False
    function = ctx.semantic.enclosing_scope_node(statement)
    if not isinstance(function, FUNCTION_DEFS):
        return False
    uses = ctx.references.uses_of(function)
    calls = ctx.references.calls_of(function)
    return bool(calls) and len(calls) == len(uses) and all(_tested_for_truth(ctx, call) for call in calls)


def _tested_for_truth(ctx: PythonContext, node: ast.AST) -> bool:
    parent = ctx.parent(node)
    if isinstance(parent, ast.UnaryOp):
        return isinstance(parent.op, ast.Not)
    if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        return parent.test is node
    return isinstance(parent, ast.BoolOp) and _tested_for_truth(ctx, parent)


def read_back(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is the dtype a tensor is converted to (`torch.tensor(x, dtype=node)`, `t.to(node)`, `t.view(node)`) in
    an expression that hands its values to Python or NumPy right away, through methods that do no arithmetic
    (`.view(torch.uint8).item()`, `.float().tolist()`, `.cpu().numpy()`): a reference encoding read back as bits or
    numbers. PyTorch converts to and from FP8 elementwise, the same on every GPU, and nothing else sees the tensor."""
    current = _converting_call(ctx, node)
    while current is not None:
        method = ctx.parent(current)
        if not isinstance(method, ast.Attribute):
            return False
        call = ctx.parent(method)
        if not isinstance(call, ast.Call) or call.func is not method:
            return False
        if method.attr in _READ_OUT_METHODS:
            return True
        current = call if method.attr in _NO_ARITHMETIC_METHODS else None
    return False


def _converting_call(ctx: PythonContext, node: ast.AST) -> ast.Call | None:
    """The call converting data into dtype `node`: `torch.tensor(x, dtype=node)`, `t.to(node)`, `t.view(dtype=node)`."""
    parent = ctx.parent(node)
    call = ctx.parent(parent) if isinstance(parent, ast.keyword) and parent.arg == "dtype" else parent
    if not isinstance(call, ast.Call) or call.func is node:
        return None
    if isinstance(call.func, ast.Attribute) and call.func.attr in _CONVERTING_METHODS:
        return call
    if isinstance(parent, ast.keyword) and ctx.qualified_name(call.func) in _CONVERTING_FACTORIES:
        return call
    return None
