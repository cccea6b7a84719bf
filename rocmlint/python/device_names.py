"""Tests on the GPU's marketing name: `"nvidia" in torch.cuda.get_device_name().lower()` is false on ROCm.

A ROCm build of PyTorch reports the AMD marketing name (`"AMD Instinct MI300X"`, `"AMD Radeon RX 7900 XTX"`), or a
bare PCI id (`"Device 74a1"`) or nothing when the name is unknown, as `get_device_name`: never a name with "nvidia"
in it, in any case. So a test that looks for "nvidia" in the device name, as a caller that dispatches GPU monitoring
by vendor does

    device = torch.cuda.get_device_name(torch.cuda.current_device())
    if "nvidia" in device.lower():
        from . import nvml          # NVIDIA's module: imported from NVIDIA code only

is never true on ROCm (what it is on NVIDIA depends on the card). The name is followed through case changes and
stripping (`.lower()`, `.upper()`, `.strip()`) and through a variable every assignment of which is such a name, None,
or a string constant without the word (the `""` a failed query leaves). A test for "amd" in the name decides nothing:
an unknown AMD GPU's name may lack it.
"""

from __future__ import annotations

import ast

from rocmlint.python.semantic import MAX_DEPTH, Semantic

# Where torch reports the GPU's marketing name (the `name` field of `get_device_properties` is the same string).
_NAME_QUERIES = frozenset({"torch.cuda.get_device_name"})
_NAME_FIELD = "name"
_PROPERTIES_QUERIES = frozenset({"torch.cuda.get_device_properties"})
# String methods that keep whether the vendor's word is in the text (up to case).
_WORD_KEEPING_METHODS = frozenset({"lower", "upper", "casefold", "strip", "lstrip", "rstrip"})
NVIDIA_WORD = "nvidia"


def names_nvidia_in_device_name(semantic: Semantic, needle: ast.expr, haystack: ast.expr) -> bool:
    """`needle in haystack` looks for NVIDIA's name in the GPU's marketing name: never true on ROCm."""
    word = semantic.string_value(needle)
    if word is None or NVIDIA_WORD not in word.lower():
        return False
    return _is_device_name(semantic, haystack, word.lower(), MAX_DEPTH)


def _is_device_name(semantic: Semantic, expr: ast.expr, word: str, depth: int) -> bool:
    """`expr` holds the GPU's marketing name, or a string that does not contain `word`, on every path."""
    if depth <= 0:
        return False
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and not expr.args:
        if expr.func.attr in _WORD_KEEPING_METHODS:
            return _is_device_name(semantic, expr.func.value, word, depth - 1)
    if isinstance(expr, ast.Call):
        return semantic.qualified_name(expr.func) in _NAME_QUERIES
    if isinstance(expr, ast.Attribute) and expr.attr == _NAME_FIELD and isinstance(expr.value, ast.Call):
        return semantic.qualified_name(expr.value.func) in _PROPERTIES_QUERIES
    if not isinstance(expr, ast.Name):
        return False
    values = semantic.assigned_values(expr)
    queried = any(value is not None and not isinstance(value, ast.Constant) for value in values)
    return queried and all(
        value is not None and _assigned_name_or_other(semantic, value, word, depth - 1) for value in values
    )


def _assigned_name_or_other(semantic: Semantic, value: ast.expr, word: str, depth: int) -> bool:
    if isinstance(value, ast.Constant):
        return value.value is None or (isinstance(value.value, str) and word not in value.value.lower())
    return _is_device_name(semantic, value, word, depth)
