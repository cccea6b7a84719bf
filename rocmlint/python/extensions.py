"""The flag lists a PyTorch extension build hands to the device compiler (nvcc; hipcc on ROCm), found where
they are defined, and the string literals they may hold.

`torch.utils.cpp_extension` passes `extra_compile_args["nvcc"]` and `load(extra_cuda_cflags=...)` to hipcc
on ROCm as they are, except that BuildExtension renames `-U__CUDA_NO_*` to `-U__HIP_NO_*` in a dict's
`"nvcc"` list. Build scripts name their own lists by convention (`nvcc_flags`, `NVCC_ARGS`, `cuda_flags`,
DeepSpeed's `def nvcc_args(self)`). What is wrong with a flag stays in the rule.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import is_string_literal, name_words, subscript_key
from rocmlint.python.lists import Item, list_items, method_additions, reached_reads
from rocmlint.python.scopes import FUNCTION_DEFS, FunctionNode
from rocmlint.python.values import Through, list_added_to, return_values

_FLAG_WORDS = frozenset({"flags", "cflags", "args", "options", "opts"})
_SWITCH_WORDS = frozenset({"with", "use", "build", "enable"})
_ROCM_WORDS = frozenset({"hip", "hipcc", "rocm", "amd"})
_NVCC = "nvcc"


@dataclass(frozen=True)
class DeviceFlags:
    """Expressions whose items a build hands to the device compiler."""

    sources: tuple[ast.expr, ...]
    path: tuple[ast.expr, ...] = ()  # where the list is used on the way (a read, a call): gate on these
    # BuildExtension rewrites `-U__CUDA_NO_*` in it on ROCm (a dict's "nvcc" entry), or where it goes is
    # unknown; False for `extra_cuda_cflags=` and a plain list, which reach hipcc unchanged.
    hipified: bool = True


def device_flags(ctx: PythonContext, node: ast.AST) -> list[DeviceFlags]:
    """The device-compiler flag lists `node` defines: the `"nvcc"` entry of a dict literal, `dict(nvcc=...)`
    or `x["nvcc"] = ...`; `extra_cuda_cflags=` (`load`, `load_inline`); a plain list given to
    `CUDAExtension(extra_compile_args=...)`; and what is assigned or added (`+=`, `.append`/`.extend`/
    `.insert`) to a variable or attribute, or returned by a def, named like one (`is_device_flags_name`).
    A variable counts where a read it reaches on ROCm uses it, a def where it is called (or as it stands
    when nothing here reads or calls it: a module constant, a subclass's override)."""
    if isinstance(node, ast.Dict):
        return [
            DeviceFlags((value,))
            for key, value in zip(node.keys, node.values, strict=True)
            if key is not None and ctx.string_value(key) == _NVCC
        ]
    if isinstance(node, ast.Call):
        return _call_flags(ctx, node)
    if isinstance(node, ast.Assign):
        return [flags for target in node.targets for flags in _defined(ctx, target, node.value, [node.value])]
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
        return _defined(ctx, node.target, node, [node.value])
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return _defined(ctx, node.target, node.value, [node.value])
    if isinstance(node, FUNCTION_DEFS) and is_device_flags_name(node.name):
        returns = tuple(return_values(node))
        return [DeviceFlags(returns, path) for path in _paths(ctx.references.loose_calls_of(node) or None)]
    return []


def _call_flags(ctx: PythonContext, call: ast.Call) -> list[DeviceFlags]:
    callee = ctx.qualified_name(call.func) or ""
    found: list[DeviceFlags] = []
    if callee == "dict":
        nvcc = ctx.semantic.keyword(call, _NVCC)
        found += [DeviceFlags((nvcc.value,))] if nvcc is not None else []
    cuda_cflags = ctx.semantic.keyword(call, "extra_cuda_cflags")
    if cuda_cflags is not None:
        found.append(DeviceFlags((cuda_cflags.value,), hipified=False))
    compile_args = ctx.semantic.keyword(call, "extra_compile_args")
    if compile_args is not None and callee.rsplit(".", 1)[-1] == "CUDAExtension":
        # A plain list goes to both compilers unchanged; a dict's "nvcc" entry is the dict's.
        if isinstance(ctx.single_value(compile_args.value), (ast.List, ast.BinOp)):
            found.append(DeviceFlags((compile_args.value,), hipified=False))
    receiver = list_added_to(call)
    if receiver is not None:
        found += _defined(ctx, receiver, call, method_additions(call))
    return found


def _defined(ctx: PythonContext, target: ast.expr, definition: ast.AST, sources: list[ast.expr]) -> list[DeviceFlags]:
    """`compile_args["nvcc"] = ...`, `self.nvcc_flags += ...`, `nvcc_flags.append(...)`."""
    key = subscript_key(target)
    if (key is not None and ctx.string_value(key) == _NVCC) or (
        isinstance(target, ast.Attribute) and is_device_flags_name(target.attr)
    ):
        return [DeviceFlags(tuple(sources))]
    if isinstance(target, ast.Name) and is_device_flags_name(target.id):
        reads = reached_reads(ctx, target, definition)
        if reads is None and _unread_module_constant(ctx, target):
            return []
        return [DeviceFlags(tuple(sources), path) for path in _paths(reads)]
    return []


def _unread_module_constant(ctx: PythonContext, target: ast.Name) -> bool:
    """A module-level list nothing reads, here or (per the project's import index) in a module importing this
    one: a copy kept from another project (aiter's `COMMON_NVCC_FLAGS` from torch's cpp_extension.py) reaches no
    compiler. Unknown without the project model: then it counts."""
    binding = ctx.semantic.lookup(target.id, target)
    return binding is not None and binding.scope.node is ctx.module and ctx.gates.unread_by_importers(target.id)


def _paths(sites: Sequence[ast.expr] | None) -> list[tuple[ast.expr, ...]]:
    """Through each of the sites where a list is used, or as it stands when there are none (None)."""
    return [()] if sites is None else [(site,) for site in sites]


def is_device_flags_name(name: str) -> bool:
    """`nvcc_flags`, `NVCC_FLAGS`, `nvcc_args_layer_norm`, `extra_nvcc_flags`, `cuda_flags`, `extra_cuda_cflags`,
    `cuda_compile_args`; not a ROCm one (`hipcc_flags`, `nvcc_flags_rocm`)."""
    words = name_words(name)
    if not words or _ROCM_WORDS.intersection(words) or not _FLAG_WORDS.intersection(words):
        return False
    if _NVCC in words:
        return True
    return words[-2:-1] == ("cuda",) or words[-3:-1] == ("cuda", "compile")


def flag_strings(ctx: PythonContext, flags: DeviceFlags) -> list[Item[ast.expr]]:
    """Every string literal a flag list may hold (`lists.list_items`, through `"nvcc"` entries and local
    helpers that are not ROCm's), with the whole path it took to gate on."""
    found: list[Item[ast.expr]] = []
    for source in flags.sources:
        items = list_items(ctx, source, lambda node: _flag_leaves(ctx, node), _passes_flags)
        found += [(literal, (*flags.path, *path)) for literal, path in items]
    return found


def _flag_leaves(ctx: PythonContext, node: ast.expr) -> list[ast.expr] | Through | None:
    if is_string_literal(node):
        return [node]
    if isinstance(node, ast.Dict):
        nvcc = ctx.semantic.dict_entries(node).get(_NVCC)
    elif isinstance(node, ast.Call) and ctx.qualified_name(node.func) == "dict":
        keyword = ctx.semantic.keyword(node, _NVCC)
        nvcc = keyword.value if keyword is not None else None
    else:
        return None
    return Through((nvcc,)) if nvcc is not None else []


def _passes_flags(helper: FunctionNode) -> bool:
    """A local helper passes its flags on unless it is ROCm's (`hipify_flags(...)`)."""
    return not _ROCM_WORDS.intersection(name_words(helper.name))


def gpu_build_switch(ctx: PythonContext, node: ast.Assign) -> ast.Name | None:
    """The switch a module-level assignment sets once, in a build script that builds a `CUDAExtension`, when its
    name says it turns the CUDA build on (`WITH_CUDA`, `USE_CUDA`, `BUILD_CUDA`; not a ROCm one): whether the
    script builds the GPU extension at all. None for any other assignment."""
    if ctx.parent(node) is not ctx.module or len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return None
    target = node.targets[0]
    words = name_words(target.id)
    if "cuda" not in words or not _SWITCH_WORDS.intersection(words) or _ROCM_WORDS.intersection(words):
        return None
    if len(ctx.semantic.assigned_values(target)) != 1 or not ctx.contains(b"CUDAExtension"):
        return None  # set again elsewhere (a ROCm override is possible), or no GPU extension to build
    return target
