"""The OCP FP8 dtypes as Python code names them: PyTorch's, JAX's (`jax.numpy`) and ml_dtypes' `float8_e4m3fn`
and `float8_e5m2`, written as an attribute (`torch.float8_e4m3fn`, `jnp.float8_e5m2`), an imported name
(`from ml_dtypes import float8_e4m3fn`) or looked up by name (`getattr(torch, "float8_e4m3fn", None)`); the
`finfo(...)` a dtype is given to; the places whose format specification fixes OCP FP8 (the element,
activation and weight dtypes of an MX format, the block scales of NVFP4); uses where the encoding does not matter; FP8 tensors made
and kept on the CPU (`cpu_data`); and choices that already cover the FNUZ variant.

Whether a mention is a hazard (MI300 implements only the FNUZ variants) stays in the rule.
"""

from __future__ import annotations

import ast
import os
import re
import weakref
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise

from rocmlint.python.conditions import choices_around
from rocmlint.python.cpu_tensors import in_gpu_free_test, kept_on_cpu
from rocmlint.python.flow import value_uses
from rocmlint.python.fp8_data import fp8_as_data, multiplies_matrices
from rocmlint.python.fp8_definitions import defines_the_format, on_meta_device
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import last_name, name_words
from rocmlint.python.scopes import (
    COMPOUND_STATEMENTS,
    FunctionNode,
    dotted_name,
    parameter_names,
    positional_parameters,
    tests_main_module,
)
from rocmlint.python.semantic import DEFERRED_BODIES, FUNCTION_DEFS
from rocmlint.python.uses import in_allow_list, is_inspected, outermost_collection_member
from rocmlint.python.values import ASSIGNMENTS, assigned_name, assignment_targets

# The libraries whose FP8 dtypes come in both encodings, with the FNUZ variant named `<ocp>` + "uz"/"fnuz".
_LIBRARIES = ("torch", "jax.numpy", "ml_dtypes")
OCP_NAMES = frozenset({"float8_e4m3fn", "float8_e5m2"})
_FINFO = frozenset(f"{library}.finfo" for library in (*_LIBRARIES, "numpy"))
# Keywords whose dtype is OCP FP8 by the MX specification: an MX element dtype on any call, and the
# activation and weight dtypes of an MX format's configuration (`MXFPInferenceConfig(weight_dtype=...)`).
_MX_ELEMENT_KEYWORDS = frozenset({"elem_dtype"})
_MX_CONFIG_KEYWORDS = frozenset({"activation_dtype", "weight_dtype"})
# An MX format's configuration or helper: a callee named `MX...`, `Mxfp...`, `mx_...`.
_MX_CALLEE = re.compile(r"^(?:MX|Mx|mx)(?:[A-Z0-9_]|fp|Fp)")
# A word of a snake_case name that names an MX format: `mx`, `mxfp8`, `mxfp4`, `mxfp6`.
_MX_TOKEN = re.compile(r"mx(?:fp[468])?")
# An MX format or the MX block scale (E8M0) as a word of code or text: `mxfp8`, `per_1x32_mx_quant`, `e8m0fnu`, `ue8m0`.
_MX_WORD = re.compile(r"mx(?:fp[468])?|u?e8m0(?:fnu)?")
_WORD_SPLIT = re.compile(r"[^a-z0-9]+")
# A 4-bit float format named in a file (NVFP4: E2M1 elements, e4m3 block scales; `float4_e2m1fn_x2`).
_FP4_FORMAT = re.compile(r"fp4|e2m1|float4", re.IGNORECASE)
# Words of a name that hold block scales (`scale_e4m3`, `sc`, `sfa`, `weight_scales`, `_recast_scale`).
_SCALE_WORDS = frozenset({"scale", "scales", "sc", "sf", "sfa", "sfb"})
# Endings of a word naming scales of one operand (`wscales`, `ascales`).
_SCALE_SUFFIXES = ("scale", "scales")
# Calls whose `dtype=`/argument is the dtype of the tensor they produce.
_PRODUCING_METHODS = frozenset({"to", "view"})
_STORAGE_KEYWORD, _COMPUTE_KEYWORD = "storage_dtype", "compute_dtype"
# A weight-only quantization's configuration (torchao's `Float8WeightOnlyConfig(weight_dtype=...)`): its FP8 weights
# are dequantized before a high-precision matmul.
_WEIGHT_KEYWORD, _WEIGHT_ONLY = "weight_dtype", re.compile(r"weight_?only", re.IGNORECASE)
# A fake quantization's configuration or op (torchao's `Float8FakeQuantizeConfig(dtype=...)`,
# `torch.fake_quantize_per_tensor_affine`): values are rounded to the dtype and back, never computed with in it.
_FAKE_QUANTIZE = re.compile(r"fake_?quantiz", re.IGNORECASE)
_LOOP_STATEMENTS = (ast.For, ast.AsyncFor, ast.While)
# Calls that read every local variable of the def they are in.
_NAMESPACE_READERS = frozenset({"locals", "vars"})
# What a dtype may be assigned as and still be followed: itself (`torch.float8_e4m3fn`), a name, a conditional's arms.
_ASSIGNED_DTYPES = (ast.Attribute, ast.Name, ast.IfExp)
# Conversions of a tensor to another floating-point dtype (`saved_and_cast_back`), and those dtypes by name.
_CAST_METHODS = frozenset({"float", "half", "bfloat16", "double"})
_FLOAT_DTYPES = frozenset({"float32", "float", "float16", "half", "bfloat16", "float64", "double"})
_SAVE, _SAVED_TENSORS = "save_for_backward", "saved_tensors"
_FORWARD, _BACKWARD = "forward", "backward"
# A quantized linear method's `apply(self, layer, x, ...)` (vLLM's `LinearMethodBase`): `forward` of the layer given.
_APPLY = "apply"
# Words and the prefix naming an FP8 dtype or a value that may be one.
_FP8_WORDS, _FP8_PREFIX = frozenset({"fp8", "float8", "f8"}), "float8_"
# What a value may be assigned as and still be the tensor made: the call itself, a name, a conditional's arms.
_KEPT_AS_IS = (ast.Call, ast.Name, ast.IfExp)
# `finfo` fields equal for the OCP and FNUZ formats.
_PORTABLE_FINFO = frozenset({"bits"})
# `finfo` fields of the smallest step of a dtype: beside a 4-bit float format, the floor of its e4m3 block scales
# (`torch.finfo(torch.float8_e4m3fn).tiny` as the scales' epsilon), whose encoding the format fixes.
_SMALLEST_FINFO = frozenset({"tiny", "eps", "smallest_normal"})
# `<name> = torch.float8_e4m3fnuz` (also `self.<name>: torch.dtype = ...`) anywhere in the file.
_FNUZ_ASSIGNMENT = r"\b{name}\s*(?::[^=\n]*)?=\s*(?:torch\.)?float8_e\w*fnuz\b"
# `<table>[...] = ...` on a line that names a fnuz dtype (as key or value): an entry added to the table later.
_FNUZ_ENTRY = r"^[ \t]*(?:{name})\s*\[[^\n]*fnuz"
# Integer and boolean dtype names: a table that has them decodes every kind of stored tensor, not a choice of FP8.
# The format an FP8 dtype's name spells (`float8_e4m3fn` -> `e4m3`).
_FP8_FORMAT = re.compile(r"e\dm\d")
_NON_FLOAT_DTYPE = re.compile(r"^(?:u?int\d+|bool)$")
# A stored type code: an upper-case tag (`F8_E4M3`, `BF16`, `I8`, `BOOL`).
_TYPE_CODE = re.compile(r"^[A-Z][A-Z0-9_]*$")
_COLLECTION_LITERALS = (ast.Dict, ast.List, ast.Tuple, ast.Set)
# A branch whose test or alternative mentions these already selects the FP8 format per architecture.
_ARCH_SELECTION_MARKERS = ("fnuz", "gfx")
# Calls that write tensors to a checkpoint file.
_CHECKPOINT_WRITERS = frozenset(
    {"torch.save", "safetensors.torch.save_file", "safetensors.torch.save_model", "safetensors.numpy.save_file"}
)
# `argparse.ArgumentParser`'s readers of the command line.
_COMMAND_LINE_PARSES = frozenset({"parse_args", "parse_known_args"})
# Tensor methods that reshape or reinterpret a tensor where it is, without arithmetic on its elements.
_IN_PLACE_OF_DATA = frozenset({"view", "reshape", "contiguous", "detach", "clone", "flatten", "t", "transpose"})
_FP8_ONLY_STORED: weakref.WeakKeyDictionary[PythonContext, bool] = weakref.WeakKeyDictionary()
_HANDLES_FNUZ_SPLIT: weakref.WeakKeyDictionary[PythonContext, bool] = weakref.WeakKeyDictionary()
# A module of a library's FP8 support by its dotted path (`torchao.float8.float8_tensor`, `mylib.fp8.linear`).
_FP8_MODULE = re.compile(r"(?:^|[._])(?:float8|fp8)(?:[._]|$)")
# Methods that add their arguments to a collection (`ok.append(torch.float8_e4m3fn)`).
_ADDING_METHODS = frozenset({"append", "add", "extend", "insert"})


@dataclass(frozen=True)
class OcpFp8:
    """An OCP FP8 dtype a node stands for (`ocp_fp8_dtype`)."""

    library: str  # "torch", "jax.numpy" or "ml_dtypes"
    name: str  # "float8_e4m3fn" or "float8_e5m2"

    @property
    def qualified(self) -> str:
        return f"{self.library}.{self.name}"

    @property
    def fnuz(self) -> str:
        """The FNUZ variant MI300 implements instead (`torch.float8_e4m3fnuz`, `jax.numpy.float8_e5m2fnuz`)."""
        return self.qualified + ("uz" if self.name.endswith("fn") else "fnuz")


def ocp_fp8_dtype(ctx: PythonContext, node: ast.AST) -> OcpFp8 | None:
    """The OCP FP8 dtype `node` names: an attribute or imported name (through import aliases), or a
    `getattr(<library>, "<name>"[, default])` call; None for anything else, and for a name bound rather than read
    (`float8_e4m3fn = None`, the fallback of a failed import: no dtype)."""
    if isinstance(node, ast.Call):
        return _looked_up(ctx, node)
    if not isinstance(node, (ast.Attribute, ast.Name)) or last_name(node) not in OCP_NAMES:
        return None
    if not isinstance(node.ctx, ast.Load):
        return None
    library, _, name = (ctx.qualified_name(node) or "").rpartition(".")
    return OcpFp8(library, name) if library in _LIBRARIES else None


def _looked_up(ctx: PythonContext, call: ast.Call) -> OcpFp8 | None:
    if not isinstance(call.func, ast.Name) or call.func.id != "getattr" or not 2 <= len(call.args) <= 3:
        return None
    library, name = ctx.qualified_name(call.args[0]), ctx.string_value(call.args[1])
    return OcpFp8(library, name) if library in _LIBRARIES and name in OCP_NAMES else None


def finfo_of(ctx: PythonContext, node: ast.AST) -> ast.Call | None:
    """The `finfo(...)` call (`torch.finfo`, `jnp.finfo`, `ml_dtypes.finfo`, `numpy.finfo`) `node` is the
    argument of (positional or keyword)."""
    parent = ctx.parent(node)
    call = ctx.parent(parent) if isinstance(parent, ast.keyword) else parent
    if not isinstance(call, ast.Call) or call.func is node:
        return None
    return call if ctx.qualified_name(call.func) in _FINFO else None


def ocp_by_spec(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is passed where the format's specification fixes OCP FP8: `elem_dtype=` (an MX element dtype),
    or `activation_dtype=`/`weight_dtype=` of an MX format's configuration (`MXFPInferenceConfig(...)`)."""
    keyword = ctx.parent(node)
    if not isinstance(keyword, ast.keyword) or keyword.arg is None:
        return False
    if keyword.arg in _MX_ELEMENT_KEYWORDS:
        return True
    call = ctx.parent(keyword)
    callee = last_name(call.func) if isinstance(call, ast.Call) else None
    return keyword.arg in _MX_CONFIG_KEYWORDS and callee is not None and _MX_CALLEE.match(callee) is not None


def fp4_block_scales(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is the dtype of the block scales of a 4-bit float format (NVFP4: E2M1 elements with OCP e4m3 scales,
    one per 16): the tensor a `.to(node)`, `.view(node)` or a factory's `dtype=node` makes is named as scales (what
    it is assigned to, the tensor cast, the def returning it or a def whose name ends in scales, which makes nothing
    else in FP8: `sc = (sc.float() * ratio).to(node)`, `scale_u8.view(node)`, `def _recast_scale(t): return
    t.to(node)`, `s8 = base.to(node)` in `def _optimal_nvfp4_scales`) in code naming a 4-bit float format.
    The format fixes the scales' encoding, which MI300 decodes in software as every GPU without FP4 does. Also a
    variable of a def holding the dtype (`fp8_dtype = torch.float8_e4m3fn`) whose every read makes such scales or is
    the `finfo` of the scales' range (`torch.finfo(fp8_dtype).max`)."""
    variable = _dtype_variable_reads(ctx, node)
    if variable is not None:
        return any(_makes_block_scales(ctx, read) for read in variable) and all(
            finfo_of(ctx, read) is not None or _makes_block_scales(ctx, read) for read in variable
        )
    return _makes_block_scales(ctx, node)


def _dtype_variable_reads(ctx: PythonContext, node: ast.AST) -> list[ast.Name] | None:
    """The reads in its def of the one variable `node` is assigned to (`fp8_dtype = node`, or as the fallback of a
    setting: `scale_dtype = args.scale_dtype or node`), None when `node` is not the value of a def's assignment to a
    single name."""
    statement = ctx.parent(node)
    if isinstance(statement, ast.BoolOp) and isinstance(statement.op, ast.Or) and statement.values[-1] is node:
        node, statement = statement, ctx.parent(statement)  # the fallback of a setting: `scales.dtype or node`
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is not node:
        return None
    target = assigned_name(statement)
    if target is None:
        return None
    scope = ctx.semantic.enclosing_scope_node(statement)
    if not isinstance(scope, FUNCTION_DEFS):
        return None
    reads = ctx.references.mention_reads(target.id, within=scope)
    return [read for read in reads if isinstance(read, ast.Name)]


def _makes_block_scales(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is the dtype of a tensor made as a 4-bit float format's block scales (`fp4_block_scales`)."""
    call = _producing_call(ctx, node)
    if call is None or not _near_a_fp4_format(ctx, call):
        return False
    names: list[str] = []
    if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, (ast.Name, ast.Attribute)):
        names.append(last_name(call.func.value))
    names += _names_given_around(ctx, call)
    statement = ctx.semantic.statement_of(call)
    function = next((ancestor for ancestor in ctx.ancestors(call) if isinstance(ancestor, FUNCTION_DEFS)), None)
    if isinstance(statement, (ast.Assign, ast.AnnAssign)):
        names += [last_name(target) for target in assignment_targets(statement)]
    if function is not None and (isinstance(statement, ast.Return) or _names_scales(name_words(function.name)[-1:])):
        names.append(function.name)  # what the def returns, or all a def named for scales makes (`_nvfp4_scales`)
    return _names_scales(word for name in names for word in name_words(name))


def _names_scales(words: Iterable[str]) -> bool:
    return any(word in _SCALE_WORDS or word.endswith(_SCALE_SUFFIXES) for word in words)


def _names_given_around(ctx: PythonContext, call: ast.Call) -> list[str]:
    """The strings passed beside `call` to the calls around it in its statement, as text or a piece of a
    concatenation: the name a tensor is registered under (`m.register_parameter(prefix + "_scale",
    nn.Parameter(torch.empty(..., dtype=node)))`)."""
    names: list[str] = []
    for ancestor in ctx.ancestors(call):
        if isinstance(ancestor, ast.stmt):
            break
        if isinstance(ancestor, ast.Call):
            for argument in ancestor.args:
                pieces = [argument.right, argument.left] if isinstance(argument, ast.BinOp) else [argument]
                names += [text for text in (ctx.string_value(piece) for piece in pieces) if text is not None]
    return names


def _near_a_fp4_format(ctx: PythonContext, node: ast.AST) -> bool:
    """The file's name or the module-level statement holding `node` (its def or class) names a 4-bit float format:
    an int4 format's FP8 group scales (W4A8) elsewhere in the file are the kernel's choice, not the format's."""
    if _FP4_FORMAT.search(os.path.basename(ctx.source.path)):
        return True
    outermost = next((ancestor for ancestor in ctx.ancestors(node) if ctx.parent(ancestor) is ctx.module), node)
    return _FP4_FORMAT.search(ctx.code_of(outermost)) is not None


def _producing_call(ctx: PythonContext, node: ast.AST) -> ast.Call | None:
    """The call that makes a tensor of dtype `node`: `x.to(node)`, `x.view(node)`, `torch.empty(..., dtype=node)`,
    also as an arm of a conditional expression there (`dtype=torch.bfloat16 if int4 else node`)."""
    parent = ctx.parent(node)
    while isinstance(parent, ast.IfExp) and node is not parent.test:
        node, parent = parent, ctx.parent(parent)
    if isinstance(parent, ast.keyword):
        call = ctx.parent(parent)
        return call if parent.arg == "dtype" and isinstance(call, ast.Call) else None
    if not isinstance(parent, ast.Call) or node not in parent.args:
        return None
    return parent if isinstance(parent.func, ast.Attribute) and parent.func.attr in _PRODUCING_METHODS else None


def storage_only(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is the `storage_dtype=` of a call that also names a `compute_dtype=` (diffusers' layerwise casting), the
    `weight_dtype=` of a weight-only quantization's configuration (`Float8WeightOnlyConfig`),
    or the value of a `storage_dtype` variable of a def that also assigns a `compute_dtype` (`_storage_variable`):
    weights are only kept in FP8 and cast to the compute dtype for every operation, a conversion PyTorch does the
    same way on every GPU."""
    keyword = ctx.parent(node)
    if isinstance(keyword, (ast.Assign, ast.AnnAssign)) and keyword.value is node:
        return _storage_variable(ctx, keyword)
    bound = _bound_parameter(ctx, node)
    if bound is not None:
        parameter, parameters = bound
        return parameter.arg == _STORAGE_KEYWORD and _COMPUTE_KEYWORD in parameter_names(parameters)
    if not isinstance(keyword, ast.keyword):
        return False
    call = ctx.parent(keyword)
    if not isinstance(call, ast.Call):
        return False
    if keyword.arg == _WEIGHT_KEYWORD:
        return _WEIGHT_ONLY.search(last_name(call.func)) is not None
    return keyword.arg == _STORAGE_KEYWORD and any(other.arg == _COMPUTE_KEYWORD for other in call.keywords)


def _bound_parameter(ctx: PythonContext, node: ast.AST) -> tuple[ast.arg, ast.arguments] | None:
    """The parameter of a def of this file that `node` is the default of, or is passed to positionally
    (`def f(storage_dtype=torch.float8_e4m3fn, ...)`, `f(torch.float8_e4m3fn, torch.float32)`), with the def's
    parameters."""
    owner = ctx.parent(node)
    if isinstance(owner, ast.arguments):
        defaults: list[tuple[ast.arg, ast.expr | None]] = list(
            zip(positional_parameters(owner)[::-1], owner.defaults[::-1], strict=False)
        )
        defaults += list(zip(owner.kwonlyargs, owner.kw_defaults, strict=True))
        found = next((parameter for parameter, default in defaults if default is node), None)
        return (found, owner) if found is not None else None
    if not isinstance(owner, ast.Call) or not any(argument is node for argument in owner.args):
        return None
    function = ctx.semantic.called_def(owner.func)
    if function is None:
        return None
    parameters = positional_parameters(function.args)
    if isinstance(owner.func, ast.Attribute) and parameters:
        parameters = parameters[1:]  # a method called on its instance or class: `self`/`cls` is not passed
    position = next(index for index, argument in enumerate(owner.args) if argument is node)
    return (parameters[position], function.args) if position < len(parameters) else None


def saved_and_cast_back(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is the dtype of `x.to(node)` whose result is only cast back, at once (`w.to(node).to(torch.bfloat16)`,
    a reference rounded to FP8) or after an autograd backward kept it: every use of it (through assignments and
    conditional arms) is a cast to another dtype (`.to(ctx.dtype)`, `.float()`), an attribute set on it, or an
    argument of `ctx.save_for_backward(...)` whose tensor the paired `backward` (the class's, or one patched in beside
    the forward) casts back before any other read (`x, w = ctx.saved_tensors` then `x = x.to(ctx.orig_dtype)`). FP8 only stores the values there: PyTorch converts
    to and from it elementwise, the same on every GPU (FNUZ would round alike below its 240 maximum)."""
    parent = ctx.parent(node)
    if not isinstance(parent, ast.Call) or parent.args[:1] != [node] or last_name(parent.func) != "to":
        return False

    def visit(value: ast.AST) -> list[bool] | None:
        holder = ctx.parent(value)
        if isinstance(holder, ASSIGNMENTS) and holder.value is value and isinstance(value, _KEPT_AS_IS):
            return None  # followed to the reads of what it is assigned to
        if isinstance(holder, ast.Attribute) and holder.value is value:
            if isinstance(holder.ctx, ast.Store):
                return []  # `x.activation_offloading = True`: a mark on the tensor
            call = ctx.parent(holder)
            return [isinstance(call, ast.Call) and call.func is holder and _casts_dtype(call)]
        if isinstance(holder, ast.Call) and value in holder.args and last_name(holder.func) == _SAVE:
            return [_cast_back_in_backward(ctx, holder, holder.args.index(value))]
        return [False]

    verdicts = value_uses(ctx, parent, visit)
    return bool(verdicts) and all(verdicts)


def _casts_dtype(call: ast.Call) -> bool:
    """`x.float()`, `x.half()`, `x.bfloat16()`, or `x.to(<a dtype>)` (`torch.bfloat16`, `ctx.orig_dtype`,
    `w.dtype`): a conversion to another floating-point dtype, not a move to a device."""
    method = last_name(call.func)
    if method in _CAST_METHODS:
        return not call.args
    if method != "to" or len(call.args) != 1:
        return False
    target = call.args[0]
    return (isinstance(target, (ast.Name, ast.Attribute)) and "dtype" in last_name(target).lower()) or (
        isinstance(target, ast.Attribute) and target.attr in _FLOAT_DTYPES
    )


def _cast_back_in_backward(ctx: PythonContext, save: ast.Call, position: int) -> bool:
    """The `backward` paired with the forward calling `save` (`ctx.save_for_backward(...)`, `_backward_of`) takes the
    tensor at `position` back from `ctx.saved_tensors` (unpacked or indexed) and first reads it to cast it to another
    dtype."""
    backward = _backward_of(ctx, save)
    if backward is None:
        return False
    for statement in ctx.semantic.descendants(backward):
        name = _saved_tensor_name(statement, position) if isinstance(statement, ast.Assign) else None
        if name is None:
            continue
        reads = [read for read in ctx.references.mention_reads(name, within=backward) if isinstance(read, ast.Name)]
        if not reads:
            return False
        first = min(reads, key=lambda read: (read.lineno, read.col_offset))
        holder = ctx.parent(first)
        call = ctx.parent(holder) if isinstance(holder, ast.Attribute) else None
        return isinstance(call, ast.Call) and call.func is holder and _casts_dtype(call)
    return False


def _backward_of(ctx: PythonContext, save: ast.Call) -> FunctionNode | None:
    """The `backward` paired with the forward holding `save`: the `backward` method of its class, or a def patched in
    beside it (`Fn.forward = _forward` and `Fn.backward = _backward` in the block defining both)."""
    owner = next((ancestor for ancestor in ctx.ancestors(save) if isinstance(ancestor, ast.ClassDef)), None)
    if owner is not None:
        return next((d for d in owner.body if isinstance(d, FUNCTION_DEFS) and d.name == _BACKWARD), None)
    forward = next((ancestor for ancestor in ctx.ancestors(save) if isinstance(ancestor, FUNCTION_DEFS)), None)
    if forward is None:
        return None
    block = ctx.semantic.block_of(forward)
    patches = [patch for patch in map(_method_patch, block) if patch is not None]
    patched = next((target for target, method, name in patches if method == _FORWARD and name == forward.name), None)
    if patched is None:
        return None
    backward = next((name for target, method, name in patches if method == _BACKWARD and target == patched), None)
    return next((d for d in block if isinstance(d, FUNCTION_DEFS) and d.name == backward), None)


def _method_patch(statement: ast.stmt) -> tuple[str, str, str] | None:
    """`Fn.forward = _forward`: the class patched (as written), the method, and the def put in its place."""
    if (
        not isinstance(statement, ast.Assign)
        or len(statement.targets) != 1
        or not isinstance(statement.value, ast.Name)
    ):
        return None
    target = statement.targets[0]
    patched = dotted_name(target.value) if isinstance(target, ast.Attribute) else None
    return (patched, target.attr, statement.value.id) if isinstance(target, ast.Attribute) and patched else None


def _saved_tensor_name(statement: ast.Assign, position: int) -> str | None:
    """The name `statement` binds to the saved tensor at `position`: `a, b = ctx.saved_tensors`,
    `a = ctx.saved_tensors[1]`."""
    if len(statement.targets) != 1:
        return None
    target, value = statement.targets[0], statement.value
    if isinstance(value, ast.Attribute) and value.attr == _SAVED_TENSORS and isinstance(target, ast.Tuple):
        if any(isinstance(element, ast.Starred) for element in target.elts) or position >= len(target.elts):
            return None
        element = target.elts[position]
        return element.id if isinstance(element, ast.Name) else None
    if not isinstance(value, ast.Subscript) or not isinstance(target, ast.Name):
        return None
    saved, index = value.value, value.slice
    if isinstance(saved, ast.Attribute) and saved.attr == _SAVED_TENSORS and isinstance(index, ast.Constant):
        return target.id if index.value == position else None
    return None


def _storage_variable(ctx: PythonContext, assignment: ast.Assign | ast.AnnAssign) -> bool:
    """`storage_dtype = torch.float8_e4m3fn` beside a `compute_dtype = ...` or a `compute_dtype=` argument
    (`m.enable_layerwise_casting(compute_dtype=..., storage_dtype=storage_dtype)`) of the same def: the pair of a
    layerwise cast written out, whose FP8 dtype only holds weights between operations."""
    target = assigned_name(assignment)
    if target is None or target.id != _STORAGE_KEYWORD:
        return False
    scope = ctx.semantic.enclosing_scope_node(assignment)
    if not isinstance(scope, FUNCTION_DEFS):
        return False
    return any(
        (isinstance(found, ast.Name) and found.id == _COMPUTE_KEYWORD and isinstance(found.ctx, ast.Store))
        or (isinstance(found, ast.keyword) and found.arg == _COMPUTE_KEYWORD)
        for found in ctx.semantic.descendants(scope)
    )


def encoding_neutral_use(ctx: PythonContext, node: ast.expr) -> bool:
    """A use of an FP8 dtype where its encoding does not matter: comparisons, type checks, lookup tables and
    allow-lists (the dtype is matched against, not produced), `finfo(...).bits` (the same for both formats), the
    `finfo(...).tiny`/`.eps` of a 4-bit float format's block scales (`_SMALLEST_FINFO`),
    places whose spec fixes OCP FP8 (`ocp_by_spec`), a storage dtype (`storage_only`), a variable nothing reads
    afterwards (`never_read`), a fake quantization's (`fake_quantized`), a tensor quantized for a checkpoint and
    moved to the CPU (`exported_to_cpu`), FP8 only handled as data
    (`fp8_data.fp8_as_data`: a table translating a name into the dtype, a feature probe), and FP8 data made and kept
    on the CPU (`cpu_data`) unless handed to a library's FP8 support (`handed_to_fp8_library`)."""
    if is_inspected(ctx, node) or in_allow_list(ctx, node):
        return True
    if (cpu_data(ctx, node) or in_gpu_free_test(ctx, node)) and not handed_to_fp8_library(ctx, node):
        return True
    if fp8_only_stored(ctx) or made_for_nvidia_only_forward(ctx, node):
        return True
    dtype = ocp_fp8_dtype(ctx, node)
    if compared_alias(ctx, node) or (dtype is not None and fp8_as_data(ctx, node, dtype.name)):
        return True
    if dtype is not None and defines_the_format(ctx, node, dtype.name):
        return True
    member = outermost_collection_member(ctx, node)
    if on_meta_device(ctx, _producing_call(ctx, member)):
        return True
    if ocp_by_spec(ctx, member) or storage_only(ctx, member) or in_format_dtype_table(ctx, member):
        return True
    if fp4_block_scales(ctx, member) or saved_and_cast_back(ctx, member) or never_read(ctx, member):
        return True
    if fake_quantized(ctx, member) or exported_to_cpu(ctx, member) or modules_converted_in_place(ctx, member):
        return True
    finfo = finfo_of(ctx, member)
    used = ctx.parent(finfo) if finfo is not None else None
    if not isinstance(used, ast.Attribute):
        return False
    return used.attr in _PORTABLE_FINFO or (used.attr in _SMALLEST_FINFO and _near_a_fp4_format(ctx, used))


def handed_to_fp8_library(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is, within its statement, in an argument of a call into an imported module of FP8 support
    (`_FP8_MODULE`: `tensor_to_scale(a, node)`, `Float8Tensor(torch.empty(16, dtype=node), ...)` from
    `torchao.float8`): the library's tensor types, scaling and linear layers take the dtype into the FP8 matmuls
    they run, on whatever device they are given later. Data made on the CPU for them is no checkpoint."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, ast.stmt):
            return False
        if isinstance(ancestor, ast.Call) and not ctx.semantic.is_within(node, ancestor.func):
            if _fp8_library_callee(ctx, ancestor.func):
                return True
    return False


def _fp8_library_callee(ctx: PythonContext, callee: ast.expr) -> bool:
    """`callee` is a name bound by an import (or an attribute of one) from a module of FP8 support."""
    root = callee
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    binding = ctx.semantic.lookup(root.id, root)
    if binding is None or binding.kind != "import":
        return False
    module = (ctx.qualified_name(callee) or "").rpartition(".")[0]
    return _FP8_MODULE.search(module.lower()) is not None


def modules_converted_in_place(ctx: PythonContext, node: ast.AST) -> bool:
    """In a file that multiplies no matrices, `node` only sets the dtype modules are converted to in place: every
    use of it, through assignments and conditional arms, is the dtype of a `.to(...)` whose result is dropped
    (`unet.to(dtype=node)`, `m.to(device, dtype=node if fp8 else None)`: `nn.Module.to` converts the parameters in
    place, where a tensor's `.to` would return a copy and change nothing), or is only inspected (compared,
    logged), and one is such a conversion. PyTorch's layers multiply no FP8 weights: the model upcasts them
    (autocast, patched forwards), and FP8 only stores them."""
    if multiplies_matrices(ctx):
        return False

    def visit(value: ast.AST) -> list[bool | None] | None:
        holder = ctx.parent(value)
        if isinstance(holder, ASSIGNMENTS) and holder.value is value and isinstance(value, _ASSIGNED_DTYPES):
            return None  # followed to the reads of what it is assigned to
        if _dropped_conversion(ctx, value):
            return [True]
        return [None] if is_inspected(ctx, value) else [False]  # None: a comparison or a message

    verdicts = value_uses(ctx, node, visit)
    return False not in verdicts and True in verdicts


def _dropped_conversion(ctx: PythonContext, value: ast.AST) -> bool:
    """`value`, or a conditional expression it is an arm of, is the dtype of `x.to(...)` (positional or `dtype=`)
    standing as a statement of its own."""
    parent = ctx.parent(value)
    while isinstance(parent, ast.IfExp) and value is not parent.test:
        value, parent = parent, ctx.parent(parent)
    keyword = parent if isinstance(parent, ast.keyword) else None
    call = ctx.parent(keyword) if keyword is not None else parent
    if not isinstance(call, ast.Call) or last_name(call.func) != "to" or not isinstance(call.func, ast.Attribute):
        return False
    passed = keyword.arg == "dtype" if keyword is not None else any(argument is value for argument in call.args)
    return passed and isinstance(ctx.parent(call), ast.Expr)


def fake_quantized(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` only configures fake quantizations: every use of it, through variables, is a dtype keyword of one
    (`Float8FakeQuantizeConfig(dtype=node)`, `_FAKE_QUANTIZE`), an entry of a local dict only unpacked into one
    (`kwargs["activation_dtype"] = dt`, then `Int4WeightFakeQuantizeConfig(**kwargs)`), or a comparison, and one is
    not a comparison. Quantization-aware training rounds values to FP8 and back and computes in the high-precision
    dtype: PyTorch converts elementwise, the same on every GPU."""

    def visit(value: ast.AST) -> list[bool | None] | None:
        holder = ctx.parent(value)
        if isinstance(holder, ASSIGNMENTS) and holder.value is value and isinstance(value, _ASSIGNED_DTYPES):
            return None  # followed to the reads of what it is assigned to
        if isinstance(value, ast.Subscript) and isinstance(value.ctx, ast.Store):
            return [_only_unpacked_into_fake_quantize(ctx, value.value)]
        if _fake_quantize_dtype(ctx, value):
            return [True]
        return [None] if is_inspected(ctx, value) else [False]  # None: a comparison, no configuration

    verdicts = value_uses(ctx, node, visit)
    return False not in verdicts and True in verdicts


def _fake_quantize_dtype(ctx: PythonContext, value: ast.AST) -> bool:
    """`value` is a dtype keyword of a fake quantization's call (`Float8FakeQuantizeConfig(dtype=value)`)."""
    keyword = ctx.parent(value)
    call = ctx.parent(keyword) if isinstance(keyword, ast.keyword) else None
    if not isinstance(call, ast.Call) or not isinstance(keyword, ast.keyword) or keyword.arg is None:
        return False
    return "dtype" in name_words(keyword.arg) and _FAKE_QUANTIZE.search(last_name(call.func)) is not None


def _only_unpacked_into_fake_quantize(ctx: PythonContext, table: ast.expr) -> bool:
    """`table` is a def's local dict whose every read (but its own entries' stores) is unpacked as the keyword
    arguments of a fake quantization (`Int4WeightFakeQuantizeConfig(**kwargs)`)."""
    if not isinstance(table, ast.Name):
        return False
    binding = ctx.semantic.lookup(table.id, table)
    if binding is None or binding.kind != "value" or not isinstance(binding.scope.node, FUNCTION_DEFS):
        return False
    unpacked = 0
    for read in ctx.semantic.reads(table.id, binding):
        holder = ctx.parent(read)
        if isinstance(holder, ast.Subscript) and isinstance(holder.ctx, ast.Store):
            continue  # `kwargs[key] = ...`: an entry added
        call = ctx.parent(holder) if isinstance(holder, ast.keyword) and holder.arg is None else None
        if not isinstance(call, ast.Call) or _FAKE_QUANTIZE.search(last_name(call.func)) is None:
            return False
        unpacked += 1
    return unpacked > 0


def never_read(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is the value of an assignment to a def's local variable that nothing reads afterwards (`dtype =
    torch.float8_e4m3fn` left behind when the code using it was commented out): no read of the variable comes later
    in the def, none in a loop around the assignment (the next pass), none in a def or lambda nested in it (it may
    run later), and the def does not call `locals()`/`vars()`. The dtype makes no tensor."""
    statement = ctx.parent(node)
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is not node:
        return False
    target = assigned_name(statement)
    if target is None:
        return False
    binding = ctx.semantic.lookup(target.id, target)
    if binding is None or binding.kind != "value":
        return False
    function = binding.scope.node
    if not isinstance(function, FUNCTION_DEFS) or ctx.semantic.enclosing_scope_node(statement) is not function:
        return False
    if any(isinstance(call, ast.Call) and last_name(call.func) in _NAMESPACE_READERS for call in ast.walk(function)):
        return False
    loops = [ancestor for ancestor in ctx.ancestors(statement) if isinstance(ancestor, _LOOP_STATEMENTS)]
    loops = [loop for loop in loops if ctx.semantic.is_within(loop, function)]
    end = (statement.end_lineno or statement.lineno, statement.end_col_offset or 0)
    for read in ctx.semantic.reads(target.id, binding):
        later = (read.lineno, read.col_offset) > end and not _in_other_branch(ctx, read, statement)
        if later or any(ctx.semantic.is_within(read, loop) for loop in loops):
            return False
        if any(isinstance(ancestor, DEFERRED_BODIES) for ancestor in _ancestors_below(ctx, read, function)):
            return False
    return True


def _in_other_branch(ctx: PythonContext, read: ast.AST, statement: ast.stmt) -> bool:
    """`read` and `statement` lie in the two branches of one `if`: one runs, never both."""
    for branch in ctx.ancestors(statement):
        if isinstance(branch, ast.If) and ctx.semantic.is_within(read, branch):
            arms = (branch.body, branch.orelse)
            return any(_in_block(ctx, statement, a) and _in_block(ctx, read, b) for a, b in (arms, arms[::-1]))
    return False


def _in_block(ctx: PythonContext, node: ast.AST, block: list[ast.stmt]) -> bool:
    return any(ctx.semantic.is_within(node, statement) for statement in block)


def _ancestors_below(ctx: PythonContext, node: ast.AST, top: ast.AST) -> Iterator[ast.AST]:
    """The ancestors of `node` below `top`."""
    for ancestor in ctx.ancestors(node):
        if ancestor is top:
            return
        yield ancestor


def exported_to_cpu(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is the dtype of `x.to(node)` whose tensor, directly or through a def's local variable, is only moved to
    the CPU (`q.reshape(shape).cpu()`: methods that only reshape it first), in a file that writes checkpoints
    (`torch.save`, safetensors' `save_file`), multiplies no matrices and is no test (whose saved model feeds the
    compute it tests): quantized for export, in the OCP interchange format of the files it writes. PyTorch casts
    elementwise, the same on every GPU."""
    cast = ctx.parent(node)
    if not isinstance(cast, ast.Call) or cast.args[:1] != [node] or last_name(cast.func) != "to":
        return False
    if ctx.in_test_suite or multiplies_matrices(ctx) or not _writes_checkpoints(ctx):
        return False
    statement = ctx.parent(cast)
    if not isinstance(statement, ast.Assign) or statement.value is not cast:
        return _moved_to_cpu(ctx, cast)
    target = assigned_name(statement)
    if target is None:
        return False
    binding = ctx.semantic.lookup(target.id, target)
    if binding is None or binding.kind != "value" or not isinstance(binding.scope.node, FUNCTION_DEFS):
        return False
    reads = ctx.semantic.reads(target.id, binding)
    return bool(reads) and all(_moved_to_cpu(ctx, read) for read in reads)


def _writes_checkpoints(ctx: PythonContext) -> bool:
    calls = (node for node in ctx.semantic.parents if isinstance(node, ast.Call))
    return any(ctx.qualified_name(call.func) in _CHECKPOINT_WRITERS for call in calls)


def _moved_to_cpu(ctx: PythonContext, tensor: ast.AST) -> bool:
    """`tensor`, after methods that only reshape it (`_IN_PLACE_OF_DATA`), is moved to the CPU by `.cpu()`."""
    while True:
        method = ctx.parent(tensor)
        call = ctx.parent(method) if isinstance(method, ast.Attribute) and method.value is tensor else None
        if not isinstance(call, ast.Call) or call.func is not method:
            return False
        assert isinstance(method, ast.Attribute)
        if method.attr == "cpu":
            return not _moved_back(ctx, call)
        if method.attr not in _IN_PLACE_OF_DATA:
            return False
        tensor = call


def _moved_back(ctx: PythonContext, moved: ast.Call) -> bool:
    """`moved` (`q.cpu()`) is assigned to a local variable a read of which is moved again (`q.cuda()`, `q.to(...)`)."""
    statement = ctx.parent(moved)
    if not isinstance(statement, ast.Assign) or statement.value is not moved or len(statement.targets) != 1:
        return False
    target = statement.targets[0]
    if isinstance(target, ast.Subscript):
        return False  # `state[key] = q.cpu()`: into a collection, as saved
    binding = ctx.semantic.lookup(target.id, target) if isinstance(target, ast.Name) else None
    if binding is None or not isinstance(target, ast.Name):
        return True  # `self.w = q.cpu()`: module state, which may move on
    for read in ctx.semantic.reads(target.id, binding):
        method = ctx.parent(read)
        if isinstance(method, ast.Attribute) and method.value is read and method.attr in ("cuda", "to"):
            return True
    return False


def fp8_only_stored(ctx: PythonContext) -> bool:
    """The file multiplies no matrices in FP8 (no call named `*mm`, `*gemm*`, `*matmul*`) and shows what its FP8
    tensors are for instead: it is a script (`if __name__ == "__main__":` or `args = parser.parse_args()` at module
    level, not a test) that writes checkpoints
    (`torch.save`, safetensors' `save_file`), an offline converter whose FP8 tensors are the OCP interchange format of the files it
    writes; or it defines a module whose `forward` (or a def it patches in as one: `layer.forward = new_forward`)
    casts its weight to the input's dtype before using it (`self.weight.to(x.dtype)`, `upcast(self.weight,
    x.dtype)`), weights only stored in FP8. PyTorch converts to and
    from FP8 elementwise, the same on every GPU."""
    known = _FP8_ONLY_STORED.get(ctx)
    if known is None:
        known = _FP8_ONLY_STORED[ctx] = _only_stores_fp8(ctx)
    return known


def _only_stores_fp8(ctx: PythonContext) -> bool:
    if multiplies_matrices(ctx):
        return False
    # Every node but the module, as the walk recorded them: only tested, so in any order, and a second walk of the
    # whole file cost more than the rest of this.
    found = ctx.semantic.parents
    calls = [node for node in found if isinstance(node, ast.Call)]
    if any(isinstance(node, FUNCTION_DEFS) and _upcasts_weight(ctx, node) for node in found):
        return True
    if ctx.in_test_suite:
        return False  # a test saving a quantized model tests it: its FP8 feeds the compute of the code it tests
    main = any(tests_main_module(statement.test) for statement in ctx.module.body if isinstance(statement, ast.If))
    return (main or _parses_command_line(ctx)) and any(
        ctx.qualified_name(call.func) in _CHECKPOINT_WRITERS for call in calls
    )


def _parses_command_line(ctx: PythonContext) -> bool:
    """A module-level statement reads the command line (`args = parser.parse_args()`): the file is a script run on
    its own, as one behind `if __name__ == "__main__":` is."""
    for statement in ctx.module.body:
        value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.Expr)) else None
        if isinstance(value, ast.Call) and last_name(value.func) in _COMMAND_LINE_PARSES:
            return True
    return False


def _upcasts_weight(ctx: PythonContext, function: FunctionNode) -> bool:
    """A module's `forward(self, x)`, a quantized linear method's `apply(self, layer, x, ...)` (vLLM's
    `LinearMethodBase`), or a def patched in as a module's forward (`_patched_forward`), that reads the weight (`self.weight`, `layer.weight`) only to cast it to the input's dtype:
    as `self.weight.to(x.dtype)`, beside `x.dtype` among a call's arguments (`_upcast(self.weight, x.dtype, ...)`),
    into a local the next statement rebinds to its cast (`w = self.weight.detach()` then `w = w.to(dtype=x.dtype)`),
    or into a local only cast and asked its dtype (`w = layer.weight`, `w.to(dtype=out)` beside `x.to(dtype=out)`).
    A compute dtype of the module's own (`self.compute_dtype if ... else x.dtype`) is the input's dtype too, and so
    is the dtype the input itself is cast to in the def: both operands then share it, and no high-precision op
    takes FP8 operands."""
    roles = _weight_owner_and_input(ctx, function)
    if roles is None:
        return False
    owner, data = roles
    input_dtype = _InputDtype(owner, data, _casts_of(function, data))
    reads = 0
    for call in ast.walk(function):
        if not isinstance(call, ast.Call):
            continue
        arguments = [*call.args, *(keyword.value for keyword in call.keywords)]
        to_input_dtype = any(input_dtype.names(argument) for argument in arguments)
        method = call.func if isinstance(call.func, ast.Attribute) else None
        if to_input_dtype and method is not None and method.attr == "to" and _is_weight_of(method.value, owner):
            reads += 1
        elif to_input_dtype:
            reads += sum(_is_weight_of(argument, owner) for argument in arguments)
    reads += sum(1 for block in _blocks(function) for pair in pairwise(block) if _upcast_alias(*pair, input_dtype))
    reads += sum(_only_cast_alias(function, statement, input_dtype) for statement in ast.walk(function))
    weights = sum(_is_weight_of(node, owner) for node in ast.walk(function))
    return reads > 0 and reads == weights


def _weight_owner_and_input(ctx: PythonContext, function: FunctionNode) -> tuple[str, str] | None:
    """The names of the module whose weight `function` reads and of its input: the parameters of a `forward` or
    `apply` method, or those of a patched forward (`_patched_forward`)."""
    parameters = positional_parameters(function.args)
    first = {_FORWARD: 0, _APPLY: 1}.get(function.name)
    if first is None:
        return _patched_forward(ctx, function)
    return (parameters[first].arg, parameters[first + 1].arg) if len(parameters) >= first + 2 else None


def _patched_forward(ctx: PythonContext, function: FunctionNode) -> tuple[str, str] | None:
    """`function` is put in place of a module's forward in the block defining it (`layer.forward = new_forward`,
    the module a name): the module's name, and the input's, its first positional parameter or the name bound to
    `args[0]` (`def new_forward(*args, **kwargs): x = args[0]`)."""
    patches = (patch for patch in map(_method_patch, ctx.semantic.block_of(function)) if patch is not None)
    owner = next((patched for patched, method, name in patches if method == _FORWARD and name == function.name), None)
    if owner is None or "." in owner:
        return None
    parameters = positional_parameters(function.args)
    if parameters:
        return owner, parameters[0].arg
    varargs = function.args.vararg.arg if function.args.vararg is not None else None
    for statement in function.body:
        target = _single_name_target(statement)
        value = statement.value if isinstance(statement, ast.Assign) else None
        if target is None or not isinstance(value, ast.Subscript) or not _is_name(value.value, varargs or ""):
            continue
        if isinstance(value.slice, ast.Constant) and value.slice.value == 0:
            return owner, target
    return None


@dataclass(frozen=True)
class _InputDtype:
    """The input's dtype in a def upcasting a weight: `data.dtype`, the module's own compute dtype beside it, or a
    name the input is cast to (`casts`)."""

    owner: str
    data: str
    casts: frozenset[str]

    def names(self, node: ast.AST) -> bool:
        if isinstance(node, ast.IfExp):
            arms = (node.body, node.orelse)
            own = [arm for arm in arms if not _is_dtype_of(arm, self.data)]
            return len(own) < 2 and all(_is_own_dtype(arm, self.owner) for arm in own)
        return _is_dtype_of(node, self.data) or (isinstance(node, ast.Name) and node.id in self.casts)


def _casts_of(function: ast.AST, data: str) -> frozenset[str]:
    """The names of the dtypes `data` is cast to in `function` (`x.to(dtype=out)`, `x.to(out)`), but for one that
    may be FP8: named for it (`fp8_dtype`) or given a value that names an FP8 dtype here (`out = torch.float8_e4m3fn`),
    an input quantized for an FP8 kernel."""
    names: set[str] = set()
    for call in ast.walk(function):
        method = call.func if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else None
        if method is None or method.attr != "to" or not _is_name(method.value, data):
            continue
        assert isinstance(call, ast.Call)
        names.update(a.id for a in (*call.args, *(k.value for k in call.keywords)) if isinstance(a, ast.Name))
    fp8 = {name for name in names if _FP8_WORDS & set(name_words(name))}
    for statement in ast.walk(function):
        if isinstance(statement, ASSIGNMENTS) and statement.value is not None and _names_fp8(statement.value):
            fp8.update(target.id for target in assignment_targets(statement) if isinstance(target, ast.Name))
    return frozenset(names - fp8)


def _names_fp8(value: ast.AST) -> bool:
    return any(
        (isinstance(node, ast.Attribute) and node.attr.startswith(_FP8_PREFIX))
        or (isinstance(node, ast.Name) and node.id.startswith(_FP8_PREFIX))
        for node in ast.walk(value)
    )


def _blocks(forward: ast.AST) -> Iterator[list[ast.stmt]]:
    """Every statement list in `forward` (its body, each branch's)."""
    for node in ast.walk(forward):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def _upcast_alias(first: ast.stmt, second: ast.stmt, input_dtype: _InputDtype) -> bool:
    """`w = self.weight` (or `self.weight.detach()`) followed by `w = w.to(<input dtype>)`: the local is the
    upcast weight before anything reads it."""
    alias = _single_name_target(first)
    if alias is None or not isinstance(first, ast.Assign):
        return False
    value = first.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "detach":
        value = value.func.value
    if not _is_weight_of(value, input_dtype.owner) or _single_name_target(second) != alias:
        return False
    cast = second.value if isinstance(second, ast.Assign) else None
    if not (isinstance(cast, ast.Call) and isinstance(cast.func, ast.Attribute) and cast.func.attr == "to"):
        return False
    arguments = [*cast.args, *(keyword.value for keyword in cast.keywords)]
    return _is_name(cast.func.value, alias) and any(input_dtype.names(a) for a in arguments)


def _only_cast_alias(function: ast.AST, statement: ast.AST, input_dtype: _InputDtype) -> bool:
    """`w = layer.weight`, assigned once, and every other read of `w` in `function` is its cast to the input's dtype
    (`w.to(dtype=out)`) or a question about its dtype (`w.dtype`, `w.output_dtype`): the weight as stored is never
    an operand."""
    if not isinstance(statement, ast.Assign) or not _is_weight_of(statement.value, input_dtype.owner):
        return False
    alias = _single_name_target(statement)
    if alias is None:
        return False
    parents = {child: node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
    uses = [node for node in ast.walk(function) if _is_name(node, alias) and node is not statement.targets[0]]
    return bool(uses) and all(_cast_or_dtype_read(use, parents, input_dtype) for use in uses)


def _cast_or_dtype_read(use: ast.AST, parents: dict[ast.AST, ast.AST], input_dtype: _InputDtype) -> bool:
    attribute = parents.get(use)
    if not isinstance(attribute, ast.Attribute) or isinstance(getattr(use, "ctx", None), ast.Store):
        return False
    if "dtype" in name_words(attribute.attr):
        return True
    call = parents.get(attribute)
    if attribute.attr != "to" or not isinstance(call, ast.Call) or call.func is not attribute:
        return False
    return any(input_dtype.names(a) for a in (*call.args, *(k.value for k in call.keywords)))


def _single_name_target(statement: ast.stmt) -> str | None:
    target = assigned_name(statement) if isinstance(statement, ast.Assign) else None
    return None if target is None else target.id


def _is_own_dtype(node: ast.AST, owner: str) -> bool:
    return isinstance(node, ast.Attribute) and "dtype" in name_words(node.attr) and _is_name(node.value, owner)


def _is_weight_of(node: ast.AST, owner: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "weight" and _is_name(node.value, owner)


def _is_dtype_of(node: ast.AST, data: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "dtype" and _is_name(node.value, data)


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def made_for_nvidia_only_forward(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is in the `__init__` of a module class whose `forward` calls into a package with no ROCm build before it
    can return (`fp8_linear(...)` from `q8_kernels`, `torch.ops._C.cutlass_scaled_mm(...)`; gating's
    `package_call_vendors`): the FP8 weights it makes are only ever multiplied where that package runs."""
    init = next((ancestor for ancestor in ctx.ancestors(node) if isinstance(ancestor, FUNCTION_DEFS)), None)
    owner = ctx.parent(init) if init is not None and init.name == "__init__" else None
    if not isinstance(owner, ast.ClassDef):
        return False
    forward = next((d for d in owner.body if isinstance(d, FUNCTION_DEFS) and d.name == _FORWARD), None)
    if forward is None:
        return False
    for statement in forward.body:
        vendors = ctx.gates.package_call_vendors(statement)
        if vendors:
            return all(vendor.rocm is False for vendor in vendors)
        if any(isinstance(found, (ast.Return, ast.Raise, ast.Yield)) for found in ast.walk(statement)):
            return False
    return False


def compared_alias(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is what a def's variable holds (alone or as an arm of a conditional: `expected = torch.float8_e4m3fn if
    quantized else torch.bfloat16`), and every read of that variable in the def is only inspected (`uses.is_inspected`:
    `t.dtype == expected`, `str(expected)`): a dtype matched against, as a comparison written out is."""
    holder = ctx.parent(node)
    value = holder if isinstance(holder, ast.IfExp) and node is not holder.test else node
    statement = ctx.parent(value)
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is not value:
        return False
    target = assigned_name(statement)
    scope = ctx.semantic.enclosing_scope_node(statement)
    if target is None or not isinstance(scope, FUNCTION_DEFS):
        return False
    reads = ctx.references.mention_reads(target.id, within=scope)
    return bool(reads) and all(isinstance(read, ast.Name) and is_inspected(ctx, read) for read in reads)


def in_format_dtype_table(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is a value of a dict literal that maps a file format's type codes (upper-case tags) to the library's
    dtypes, integer and boolean ones among them (`{"BOOL": torch.bool, "I8": torch.int8, "F8_E4M3":
    torch.float8_e4m3fn}`, safetensors' header codes): a decoder of stored data, whose FP8 entries are OCP because
    the format defines them so. Or one that maps another type system's dtypes to the library's (`{dtypes.int8:
    torch.int8, dtypes.float8_e4m3: torch.float8_e4m3fn}`, a compiler's tensors handed to torch), each FP8 key named
    for its value's format: a translation, where the other system's dtype chose the format."""
    table = ctx.parent(node)
    if not isinstance(table, ast.Dict) or not any(value is node for value in table.values):
        return False
    dtypes = [ctx.qualified_name(value) or "" for value in table.values]
    library = (ctx.qualified_name(node) or "").rpartition(".")[0]
    if not all(dtype.rpartition(".")[0] == library for dtype in dtypes):
        return False
    if not any(_NON_FLOAT_DTYPE.match(dtype.rpartition(".")[2]) for dtype in dtypes):
        return False
    if all(key is not None and _TYPE_CODE.match(ctx.string_value(key) or "") for key in table.keys):
        return True
    # A lower-case name (`"fp8_e4m3"`) is a user's choice of dtype, neither a stored type code nor another dtype.
    return _keyed_by_other_dtypes(ctx, table, library)


def _keyed_by_other_dtypes(ctx: PythonContext, table: ast.Dict, library: str) -> bool:
    """Every key of `table` is a member of one namespace other than `library` (`dtypes.float16`), and the key of each
    OCP FP8 value names that value's format (`dtypes.float8_e4m3` for `torch.float8_e4m3fn`)."""
    keys = [key for key in table.keys if isinstance(key, ast.Attribute)]
    owners = {dotted_name(key.value) for key in keys}
    if len(keys) != len(table.keys) or len(owners) != 1 or None in owners:
        return False
    if ctx.qualified_name(keys[0].value) == library:
        return False  # the library's own dtypes: a cast table, not a translation
    for key, value in zip(keys, table.values, strict=True):
        dtype = ocp_fp8_dtype(ctx, value)
        form = _FP8_FORMAT.search(dtype.name) if dtype is not None else None
        if form is not None and (form.group(0) not in key.attr.lower() or "fnuz" in key.attr.lower()):
            return False
    return True


def selected_per_arch(ctx: PythonContext, node: ast.expr) -> bool:
    """A branch, conditional expression or collection around `node` that also covers the FNUZ format (names a
    `fnuz` dtype or tests a `gfx` architecture), or a def around it that converts to FNUZ on ROCm
    (`converted_on_rocm`)."""
    for choice in choices_around(ctx, node):
        if _decided_by_a_fixed_setting(ctx, choice):
            continue
        if any(marker in ctx.code_of(choice).lower() for marker in _ARCH_SELECTION_MARKERS):
            return True
    return table_adds_fnuz(ctx, node) or added_beside_fnuz(ctx, node) or converted_on_rocm(ctx, node)


def added_beside_fnuz(ctx: PythonContext, node: ast.expr) -> bool:
    """`node` is added to a collection (`ok.append(node)`, `ok.add(node)`) to which the same def (or module) also
    adds a FNUZ dtype (`ok.append(torch.float8_e4m3fnuz)`): the collection lists both formats, as a literal naming
    both does (`e4m3_ok` accepted by an assert, built one `hasattr(torch, ...)` at a time). So is a name defined by
    a def of this file from `node` alone (`qfloat8_e4m3fn = qfloat(torch.float8_e4m3fn)`) where the same def also
    defines one from a FNUZ dtype (`qfloat8_e4m3fnuz = qfloat(torch.float8_e4m3fnuz)`): a registry of every format,
    from which users pick. A literal the collection starts as counts as adding its elements (`dtypes =
    [torch.float8_e4m3fn]`), and a FNUZ dtype may be added by name, when torch has it (`for name in
    ("float8_e4m3fnuz",): value = getattr(torch, name, None) ... dtypes.append(value)`)."""
    if not ctx.contains(b"fnuz"):
        return False
    adding = ctx.parent(node)
    if adding is None:
        return False
    key = _starting_literal_key(ctx, adding)
    if key is None:
        if not isinstance(adding, ast.Call) or not any(argument is node for argument in adding.args):
            return False
        key = _sibling_key(ctx, adding)
    if key is None:
        return False
    for found in ctx.semantic.descendants(ctx.semantic.enclosing_scope_node(adding)):
        if found is adding or not isinstance(found, ast.Call) or _sibling_key(ctx, found) != key:
            continue
        if any(_names_fnuz(part) for argument in found.args for part in ast.walk(argument)):
            return True
        if _in_loop_over_fnuz_names(ctx, found):
            return True
    return False


def _starting_literal_key(ctx: PythonContext, literal: ast.AST) -> str | None:
    """The sibling key of a list or set literal a name starts as (`dtypes = [torch.float8_e4m3fn]`): adding to it."""
    if not isinstance(literal, (ast.List, ast.Set)):
        return None
    statement = ctx.parent(literal)
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1 or statement.value is not literal:
        return None
    target = statement.targets[0]
    return "adds to " + ctx.code_of(target) if isinstance(target, ast.Name) else None


def _in_loop_over_fnuz_names(ctx: PythonContext, call: ast.Call) -> bool:
    """`call` sits in a `for` loop over constants one of which names a FNUZ dtype (`for name in
    ("float8_e4m3fnuz", "float8_e5m2fnuz"):`): what it adds is that dtype, looked up by name."""
    for found in ctx.semantic.ancestors(call):
        if isinstance(found, FUNCTION_DEFS):
            return False
        if isinstance(found, ast.For) and any(_names_fnuz_text(part) for part in ast.walk(found.iter)):
            return True
    return False


def _names_fnuz_text(node: ast.AST) -> bool:
    """A string constant naming a FNUZ dtype (`"float8_e4m3fnuz"`)."""
    if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
        return False
    return node.value.startswith("float8_") and node.value.endswith("fnuz")


def _sibling_key(ctx: PythonContext, call: ast.Call) -> str | None:
    """What makes two calls siblings: adding to the same collection, or defining a name from one argument with the
    same def of this file."""
    collection = _collection_added_to(call)
    if collection is not None:
        return "adds to " + ctx.code_of(collection)
    statement = ctx.parent(call)
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    if not isinstance(statement.targets[0], ast.Name) or len(call.args) != 1 or call.keywords:
        return None
    return "defined by " + ctx.code_of(call.func) if ctx.semantic.called_def(call.func) is not None else None


def _collection_added_to(node: ast.AST | None) -> ast.expr | None:
    """The collection `<collection>.append(...)` (or another of `_ADDING_METHODS`) adds to."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    return node.func.value if node.func.attr in _ADDING_METHODS else None


def _decided_by_a_fixed_setting(ctx: PythonContext, choice: ast.AST) -> bool:
    """`choice` is a part of a conditional whose test is a setting with one value on every vendor: a
    module flag assigned only `False` (`torch.float8_e4m3fn if not config.use_fnuz_dtype else
    torch.float8_e4m3fnuz`, the flag in another module of the tree). Nothing sets it for ROCm, so the FNUZ
    arm is only taken by users who know to flip it: no choice per architecture."""
    conditional = ctx.parent(choice)
    if not isinstance(conditional, (ast.If, ast.IfExp)):
        return False
    test = conditional.test
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if not isinstance(test, (ast.Name, ast.Attribute)):
        return False
    values = ctx.gates.vendor_values.strings(test)
    return (
        values.rocm is not None
        and values.rocm == values.nvidia
        and len(values.rocm) == 1
        and (next(iter(values.rocm)) is False)
    )


def table_adds_fnuz(ctx: PythonContext, node: ast.expr) -> bool:
    """`node` sits in a table literal assigned to a name, and the file adds FNUZ entries to that table later
    (`FORMATS["float8_e4m3fnuz"] = {...}`, often where torch has the dtype): the table lists every format a user
    may pick, and the pick is made elsewhere."""
    if not ctx.contains(b"fnuz"):
        return False
    table: ast.AST | None = None
    for ancestor in ctx.ancestors(node):
        if not isinstance(ancestor, _COLLECTION_LITERALS):
            break
        table = ancestor
    statement = ctx.parent(table) if table is not None else None
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is not table:
        return False
    names = [name for name in map(last_name, assignment_targets(statement)) if name]
    entry = re.compile(_FNUZ_ENTRY.format(name="|".join(map(re.escape, names))), re.MULTILINE) if names else None
    return entry is not None and entry.search(ctx.source.text) is not None


def converted_on_rocm(ctx: PythonContext, node: ast.expr) -> bool:
    """The def holding `node` (or whose default it is) converts to a FNUZ dtype in code only ROCm runs: the OCP
    value is NVIDIA's, and ROCm's is normalised. Only the def itself: another method of its class (a test class's
    other tests) may convert other values.

        def fp8_quantize(weight, qdtype=torch.float8_e4m3fn):
            qweight = weight.to(qdtype)
            if SYSTEM == "rocm":
                qweight = normalize_e4m3fn_to_fnuz(qweight)   # a def of this file that names float8_e4m3fnuz
            return qweight
    """
    if not ctx.contains(b"fnuz"):
        return False  # no FNUZ dtype is named in this file, so none of its defs converts to one
    scope = next((ancestor for ancestor in ctx.ancestors(node) if isinstance(ancestor, FUNCTION_DEFS)), None)
    if scope is None:
        return False
    for found in ctx.semantic.descendants(scope):
        if (_names_fnuz(found) or _calls_a_fnuz_def(ctx, found)) and ctx.branch(found).on_nvidia is False:
            return True
    return False


def picked_per_arch_for_rocm(ctx: PythonContext, node: ast.expr) -> bool:
    """`node` is in code written for ROCm (`PythonContext.written_for_rocm`, or a project written for AMD:
    `PythonContext.project_written_for_amd`) whose file handles the FNUZ/OCP split itself: it names a FNUZ dtype, or
    compares with or keys a table by a gfx architecture (not in comments, docstrings or messages). Authors who run
    only on AMD and pick the format per arch there choose the OCP format knowingly (a gfx950 or gfx12 path, an MX
    format, a transport format converted for gfx94x)."""
    if not any(ctx.contains(marker.encode()) for marker in _ARCH_SELECTION_MARKERS):
        return False
    if not ctx.written_for_rocm(node) and not ctx.project_written_for_amd:
        return False
    return _handles_fnuz_split(ctx)


def _handles_fnuz_split(ctx: PythonContext) -> bool:
    """A node of the file (any but the module, which neither names a dtype nor is a string) names a FNUZ dtype or
    chooses by a gfx architecture (`picked_per_arch_for_rocm`); asked once per file."""
    known = _HANDLES_FNUZ_SPLIT.get(ctx)
    if known is None:
        known = _HANDLES_FNUZ_SPLIT[ctx] = any(
            _names_fnuz(found) or _chooses_by_gfx(ctx, found) for found in ctx.semantic.parents
        )
    return known


def mx_code(ctx: PythonContext, node: ast.expr) -> bool:
    """`node` is MX code: a def (or a module) named for an MX format (`dynamic_mxfp8_quant`, `per_1x32_mx_quant`,
    `mxfp4_utils.py`), an `if` arm around it within its def whose test names one (`if fmt == "mxfp8":`), or the
    simple statements beside it name one (`assert K % MXFP8_BLOCK_SIZE == 0`, a docstring saying "MXFP8"; not
    E8M0 scales alone, which per-token FP8 rounds to as well). The MX specification fixes its element type as OCP FP8: on MI300, which has no MX,
    the hazard is the format itself, and the FNUZ dtype would break it. Another arm's MX (a def handling several
    formats) says nothing of this one. In code written for ROCm (see `picked_per_arch_for_rocm`) the defs and
    classes around it and, at module level, the module's docstring or the defs reading the name it is assigned to
    (`_read_by_mx_defs`) count too: AMD's authors write MX code for gfx950."""
    scopes = [ancestor for ancestor in ctx.ancestors(node) if isinstance(ancestor, (*FUNCTION_DEFS, ast.ClassDef))]
    names = [scope.name for scope in scopes if isinstance(scope, FUNCTION_DEFS)]
    names.append(os.path.splitext(os.path.basename(ctx.source.path))[0])
    if any(_MX_TOKEN.fullmatch(token) for name in names for token in name.lower().split("_")):
        return True
    if ctx.written_for_rocm(node) or ctx.project_written_for_amd:
        return _says_mx(ctx, scopes) or (not scopes and _read_by_mx_defs(ctx, node))
    return bool(scopes) and (_in_mx_arm(ctx, node) or _beside_mx(ctx, node))


def _read_by_mx_defs(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` sits in the value of a module-level name (a table of buffer dtypes) that only defs naming an MX format
    read (`_says_mx`: `use_mxfp8=...`): the table serves their MX code."""
    statement = ctx.semantic.statement_of(node)
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or ctx.parent(statement) is not ctx.module:
        return False
    target = assigned_name(statement)
    if target is None:
        return False
    readers = [
        next((ancestor for ancestor in ctx.ancestors(read) if isinstance(ancestor, FUNCTION_DEFS)), None)
        for read in ctx.references.mention_reads(target.id)
    ]
    return bool(readers) and all(reader is not None and _says_mx(ctx, [reader]) for reader in readers)


def _in_mx_arm(ctx: PythonContext, node: ast.AST) -> bool:
    """Whether an `if` arm holding `node`, within its def, tests a name or text naming an MX format."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, FUNCTION_DEFS):
            return False
        if isinstance(ancestor, ast.If) and any(child is statement for statement in ancestor.body):
            if any(_names_mx(word, _MX_TOKEN) for found in ast.walk(ancestor.test) for word in _words_of(found)):
                return True
        child = ancestor
    return False


def _beside_mx(ctx: PythonContext, node: ast.AST) -> bool:
    """Whether the simple statements of the block holding `node` (its own included; not the compound ones, whose
    arms may hold other formats) name an MX format."""
    statement = ctx.semantic.statement_of(node)
    if statement is None:
        return False
    return any(
        _names_mx(word, _MX_TOKEN)
        for sibling in ctx.semantic.block_of(statement)
        if not isinstance(sibling, COMPOUND_STATEMENTS)
        for found in ctx.semantic.descendants(sibling)
        for word in _words_of(found)
    )


def _says_mx(ctx: PythonContext, scopes: Sequence[ast.AST]) -> bool:
    """Whether a def or class around a node (or the module's docstring, outside every one) names an MX format or its
    E8M0 scale in its names or strings; not in comments, which may speak of another branch (`# the UE8M0 layout`
    over an `if` the OCP value is not in)."""
    if not scopes:
        return _names_mx(ast.get_docstring(ctx.module) or "")
    return any(_names_mx(word) for scope in scopes for found in ast.walk(scope) for word in _words_of(found))


def _words_of(node: ast.AST) -> list[str]:
    """The names and the text a node spells (not its children's)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, (ast.arg, ast.keyword)):
        return [node.arg or ""]
    if isinstance(node, (*FUNCTION_DEFS, ast.ClassDef)):
        return [node.name]
    return []


def _names_mx(text: str, words: re.Pattern[str] = _MX_WORD) -> bool:
    """Whether `text` has a word naming an MX format (or, by default, the E8M0 scale, which formats other than MX
    also round their scales to: `ceil_to_ue8m0` beside a per-token FP8 cast)."""
    return any(words.fullmatch(word) for word in _WORD_SPLIT.split(text.lower()))


def _chooses_by_gfx(ctx: PythonContext, node: ast.AST) -> bool:
    """A gfx name compared with (`arch == "gfx950"`, `arch in ("gfx942", ...)`) or keying a dict: a choice per arch."""
    if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or "gfx" not in node.value:
        return False
    parent = ctx.parent(node)
    if isinstance(parent, (ast.Tuple, ast.List, ast.Set)):
        parent = ctx.parent(parent)
    if isinstance(parent, ast.Dict):
        return any(key is node for key in parent.keys)
    return isinstance(parent, ast.Compare)


def cpu_data(ctx: PythonContext, node: ast.expr) -> bool:
    """`node` is the dtype a tensor made and kept on the CPU is cast to or made with (`torch.randn(4, 8)
    .to(torch.float8_e4m3fn)` in a test, `torch.zeros(n, dtype=torch.float8_e4m3fn, device="cpu")` written to
    a checkpoint): data in the OCP format on disk, converted or cast elementwise, which never reaches an FP8
    GEMM of the GPU from here (cpu_tensors.py)."""
    parent = ctx.parent(node)
    keyword = parent if isinstance(parent, ast.keyword) else None
    call = ctx.parent(keyword) if keyword is not None else parent
    if not isinstance(call, ast.Call) or node is call.func:
        return False
    method = call.func.attr if isinstance(call.func, ast.Attribute) else None
    if keyword is not None and keyword.arg != "dtype":
        return False
    if keyword is None and method != "to":
        return False
    return kept_on_cpu(ctx, call)


def default_overridden_with_fnuz(ctx: PythonContext, node: ast.expr) -> bool:
    """`e4m3_dtype = torch.float8_e4m3fn` as a default that the file reassigns to a fnuz dtype
    elsewhere (torchao's `Float8TypeConfig.__post_init__` sets `self.e4m3_dtype` on MI300)."""
    statement = ctx.parent(node)
    if not ctx.contains(b"fnuz") or not isinstance(statement, (ast.Assign, ast.AnnAssign)):
        return False
    if statement.value is not node:
        return False  # a target or an annotation, not the assigned default
    names = [name for name in map(last_name, assignment_targets(statement)) if name]
    return any(re.search(_FNUZ_ASSIGNMENT.format(name=re.escape(name)), ctx.source.text) for name in names)


def _names_fnuz(node: ast.AST) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return name.startswith("float8_") and name.endswith("fnuz")


def _calls_a_fnuz_def(ctx: PythonContext, node: ast.AST) -> bool:
    """A call of a def of this file whose body names a FNUZ dtype."""
    called = ctx.semantic.called_def(node.func) if isinstance(node, ast.Call) else None
    return called is not None and any(_names_fnuz(inner) for inner in ctx.semantic.descendants(called))


def targets_without_fnuz(ctx: PythonContext) -> bool:
    """The project declares its ROCm targets and none of them is a FNUZ-only gfx94x part."""
    archs = ctx.options.target_archs
    return bool(archs) and not any(arch.startswith("gfx94") for arch in archs)
