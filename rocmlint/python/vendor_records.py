"""Per-vendor records of a device registry, searched in order for the first that applies.

A project that supports several accelerators may describe each one as a record in a list, and take the first
whose probe succeeds:

    REGISTRY = [
        DeviceSpec(name="rocm", is_available=is_rocm, get_info=get_rocm_info),
        DeviceSpec(name="cuda", is_available=is_cuda, get_info=get_nvidia_info),   # never chosen on ROCm
    ]

The records are calls of one constructor, each named for its vendor by a string argument. When a ROCm record
(`"rocm"`, `"hip"`, `"amd"`) comes before an NVIDIA one (`"cuda"`, `"nvidia"`), a ROCm machine stops at the
ROCm record (the NVIDIA record's probe, often `torch.cuda.is_available()`, would also pass there, which is why
the ROCm record is written first), so the NVIDIA record's values are NVIDIA's: functions only used there
(`get_nvidia_info` and what it calls) never run on ROCm. A list whose NVIDIA record comes first says nothing:
a ROCm machine whose first matching record is the NVIDIA one is a hazard of its own.
"""

from __future__ import annotations

import ast

from rocmlint.data import load
from rocmlint.python.scopes import dotted_name

_WORDS = load("vendor_packages")
_ROCM_WORDS = frozenset(_WORDS["rocm_backend_words"])
_NVIDIA_WORDS = frozenset(_WORDS["nvidia_backend_words"])


def nvidia_records_after_rocm(records: ast.List | ast.Tuple) -> frozenset[ast.AST]:
    """The NVIDIA records of `records` that follow a ROCm record, when every element is a call of one
    constructor (none otherwise)."""
    calls = [element for element in records.elts if isinstance(element, ast.Call)]
    if len(calls) < 2 or len(calls) != len(records.elts):
        return frozenset()
    constructor = dotted_name(calls[0].func)
    if constructor is None or any(dotted_name(call.func) != constructor for call in calls[1:]):
        return frozenset()
    found: set[ast.AST] = set()
    rocm_seen = False
    for call in calls:
        words = _vendor_words(call)
        if words & _ROCM_WORDS and not words & _NVIDIA_WORDS:
            rocm_seen = True
        elif rocm_seen and words & _NVIDIA_WORDS and not words & _ROCM_WORDS:
            found.add(call)
    return frozenset(found)


def _vendor_words(call: ast.Call) -> set[str]:
    """The string constants among the call's arguments, lower-cased (`name="cuda"`)."""
    values = [*call.args, *(keyword.value for keyword in call.keywords)]
    return {value.value.lower() for value in values if isinstance(value, ast.Constant) and isinstance(value.value, str)}
