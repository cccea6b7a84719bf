"""What host code reads about the GPU: fields of the device-properties struct (`cudaDeviceProp`,
`hipDeviceProp_t`, from `cudaGetDeviceProperties` or PyTorch's `at::cuda::getCurrentDeviceProperties()`) and
device attributes read into a variable with `cudaDeviceGetAttribute(&value, attribute, device)`.

Told from this file only: declared types, getter calls, and the names such structs conventionally have.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Collection
from dataclasses import dataclass

from rocmlint.cuda.frontend import CudaContext, Node
from rocmlint.cuda.preprocessor import evaluate_integer
from rocmlint.cuda.values import constant_value

_DEVICE_PROP_TYPES = re.compile(r"\b(?:cudaDeviceProp|hipDeviceProp_t|hipDeviceProp)\b")
# Receivers conventionally holding device properties: prop, props, dprops, deviceProp, device_prop, properties.
_PROP_NAME = re.compile(r"(?:\w*_)?(?:d|dev|device|gpu|cuda|hip)?_?prop(?:s|erties)?", re.IGNORECASE)
_PROP_NAME_BYTES = re.compile(_PROP_NAME.pattern.encode(), re.IGNORECASE)
_PROP_GETTERS = re.compile(r"(?:^|::)(?:getCurrentDeviceProperties|getDeviceProperties)$")
# `cudaDeviceGetAttribute(&value, attribute, device)` and its HIP and driver-API spellings.
ATTRIBUTE_GETTERS = frozenset({"cudaDeviceGetAttribute", "hipDeviceGetAttribute", "cuDeviceGetAttribute"})


def _is_device_properties(receiver: Node, ctx: CudaContext) -> bool:
    """Whether `receiver` (of `receiver.major`, `receiver->minor`) holds device properties: declared as
    `cudaDeviceProp`/`hipDeviceProp_t`, or `auto` from a properties getter, a getter call itself, an element of
    an array of them, or (for parameters and members whose type this file does not say) named like one."""
    while receiver.type in ("parenthesized_expression", "pointer_expression") and receiver.named_child_count:
        receiver = receiver.named_children[-1]
    if receiver.type == "call_expression":
        return bool(_PROP_GETTERS.search(ctx.call_name(receiver) or ""))
    if receiver.type == "field_expression":
        # launch_params.props->major: judge by the member's name.
        member = receiver.child_by_field_name("field")
        return member is not None and bool(_PROP_NAME.fullmatch(ctx.text(member)))
    if receiver.type == "subscript_expression":
        array = receiver.child_by_field_name("argument")
        return array is not None and _is_device_properties(array, ctx)
    if receiver.type != "identifier":
        return False
    declared = ctx.declared_type(receiver)
    if declared is not None and _DEVICE_PROP_TYPES.search(declared):
        return True
    if declared is not None and declared.split()[-1] != "auto":
        return False  # a struct of another type that happens to have a `major` (a version, a tensor layout)
    if declared is not None:
        value = ctx.declared_value(receiver)
        if value is not None and value.type == "call_expression":
            return bool(_PROP_GETTERS.search(ctx.call_name(value) or ""))
    return bool(_PROP_NAME.fullmatch(ctx.text(receiver)))


def may_read_device_properties(ctx: CudaContext) -> bool:
    """Whether `is_property_field` can hold anywhere in the file: every receiver it accepts is declared with the
    struct's type or a getter's value (both spell `DeviceProp`), or named like device properties (a word of the file
    `_PROP_NAME` matches), so a file with neither need not be parsed to look for property reads."""
    if not ctx.mentions(b"prop", lowered=True):
        return False
    if ctx.mentions(b"deviceprop", lowered=True):
        return True
    return any(b"rop" in word.lower() and _PROP_NAME_BYTES.fullmatch(word) for word in ctx.words)


def may_fill_attribute_variables(ctx: CudaContext, *attribute_words: bytes) -> bool:
    """Whether `holds_attribute` can hold anywhere in the file for attributes spelling one of `attribute_words`: an
    attribute getter is a word of the file and one of them is in its text."""
    return any(name.encode() in ctx.words for name in ATTRIBUTE_GETTERS) and ctx.mentions(*attribute_words)


def is_property_field(node: Node, ctx: CudaContext, fields: Collection[str]) -> bool:
    """`prop.major`, `dprops->minor`, `getCurrentDeviceProperties()->major`: a read of one of `fields` of
    device properties."""
    if node.type != "field_expression":
        return False
    field, receiver = node.child_by_field_name("field"), node.child_by_field_name("argument")
    return (
        field is not None
        and receiver is not None
        and ctx.text(field) in fields
        and _is_device_properties(receiver, ctx)
    )


@dataclass(frozen=True)
class _AttributeRead:
    scope: int  # the start of the function holding the call; -1 outside functions
    start: int  # the call's start
    attribute: str  # the attribute argument's text


_READS: weakref.WeakKeyDictionary[CudaContext, dict[str, list[_AttributeRead]]] = weakref.WeakKeyDictionary()


def holds_attribute(identifier: Node, ctx: CudaContext, attributes: re.Pattern[str]) -> bool:
    """Whether `identifier` names a variable an attribute getter filled earlier in the same function (or, at
    file scope, outside functions): `cudaDeviceGetAttribute(&major, <an attribute `attributes` finds>, dev)`."""
    reads = _attribute_reads(ctx).get(ctx.text(identifier))
    if not reads:
        return False
    scope = _scope(identifier, ctx)
    return any(
        read.scope == scope and read.start < identifier.start_byte and attributes.search(read.attribute)
        for read in reads
    )


def _attribute_reads(ctx: CudaContext) -> dict[str, list[_AttributeRead]]:
    """The variable each attribute getter call of the file fills (`&value`, a plain name), by its name."""
    known = _READS.get(ctx)
    if known is not None:
        return known
    known = {}
    if any(name.encode() in ctx.words for name in ATTRIBUTE_GETTERS):
        for call in ctx.descendants(ctx.tree.root_node, "call_expression"):
            arguments = ctx.arguments(call) if ctx.call_name(call) in ATTRIBUTE_GETTERS else []
            target = arguments[0] if len(arguments) >= 2 else None
            if target is None or target.type != "pointer_expression" or target.named_child_count != 1:
                continue
            variable = target.named_children[0]
            if variable.type == "identifier":
                read = _AttributeRead(_scope(call, ctx), call.start_byte, ctx.text(arguments[1]))
                known.setdefault(ctx.text(variable), []).append(read)
    _READS[ctx] = known
    return known


# The compute capabilities (major, minor) of today's GPUs: every NVIDIA GPU CUDA 13 supports (sm_75 and newer) and
# every AMD GPU as HIP reports it (the GFX IP version: 9.0 on MI200, 9.4 on MI300X, 11.x and 12.x on RDNA).
CURRENT_CAPABILITIES = tuple(
    (major, minor) for major in range(7, 13) for minor in range(10) if (major, minor) >= (7, 5)
)
_COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})
_ARITHMETIC = frozenset({"+", "-", "*", "/", "%"})


def same_on_current_gpus(condition: Node, ctx: CudaContext, part_of: Callable[[Node], str | None]) -> bool:
    """Whether `condition`, made of capability reads (`part_of(node)`: "major" or "minor", None for anything
    else), literals and constants, has the same truth value on every GPU of `CURRENT_CAPABILITIES`: a floor
    every current GPU clears (`major >= 3`, `major < 1`) selects no NVIDIA feature on either vendor. False when a
    part is neither."""
    outcomes = {_value(condition, ctx, part_of, capability) for capability in CURRENT_CAPABILITIES}
    return len(outcomes) == 1 and None not in outcomes


def _value(
    node: Node, ctx: CudaContext, part_of: Callable[[Node], str | None], capability: tuple[int, int]
) -> int | None:
    """The value of `node` on a GPU of `capability`, None when unknown (C's truth: 0 or 1)."""
    part = part_of(node)
    if part is not None:
        return capability[0] if part == "major" else capability[1]
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return _value(node.named_children[0], ctx, part_of, capability)
    if node.type == "unary_expression" and ctx.text(node).startswith("!"):
        operand = node.child_by_field_name("argument")
        value = None if operand is None else _value(operand, ctx, part_of, capability)
        return None if value is None else int(not value)
    if node.type != "binary_expression":
        return constant_value(ctx, node)
    operator, left, right = (node.child_by_field_name(f) for f in ("operator", "left", "right"))
    if operator is None or left is None or right is None:
        return None
    op = ctx.text(operator)
    a, b = _value(left, ctx, part_of, capability), _value(right, ctx, part_of, capability)
    if op in ("&&", "||"):
        decided = 0 if op == "&&" else 1
        if decided in (None if a is None else int(bool(a)), None if b is None else int(bool(b))):
            return decided
        return None if a is None or b is None else 1 - decided
    if a is None or b is None or op not in _COMPARISONS | _ARITHMETIC:
        return None
    return evaluate_integer(f"({a}) {op} ({b})")


def _scope(node: Node, ctx: CudaContext) -> int:
    function = ctx.function_of(node)
    return function.start_byte if function is not None else -1


__all__ = [
    "ATTRIBUTE_GETTERS",
    "CURRENT_CAPABILITIES",
    "holds_attribute",
    "is_property_field",
    "may_fill_attribute_variables",
    "may_read_device_properties",
    "same_on_current_gpus",
]
