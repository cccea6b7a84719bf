"""The wave-size choice the warp-size rules' fixes write on the ROCm side (ROC208, ROC209).

A ROCm build compiles each file in a host pass and one device pass per `--offload-arch`. Only the device
passes know the target: clang defines `__GFX9__` (gfx900 ... gfx950, all wave64) or `__GFX10__`/`__GFX11__`/
`__GFX12__` (RDNA, wave32) there. The HIP documentation's selector, `defined(__GFX8__) || defined(__GFX9__)`,
therefore gives 32 in the host pass of a CDNA build, so host code that sizes launches or instantiates
kernel templates from the constant disagrees with the device code (the ROCm/vllm#694 review). The
selector below keeps the HIP documentation's per-target choice in device passes and picks 64, the CDNA
(MI200/MI300) value, in the host pass, where no target is known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rocmlint.cuda.frontend import CudaContext, Node, Span

WAVE64_CONDITION = "defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)"
_INT_LITERAL = re.compile(r"(?P<digits>0[xX][0-9a-fA-F]+|\d+)(?P<suffix>[uUlL]*)")


@dataclass(frozen=True)
class ByteSpan:
    """A span of the file's content that is no single tree-sitter node (`enum {...};`)."""

    start_byte: int
    end_byte: int


def wave_selector(wave64: str, wave32: str, indent: str = "") -> str:
    """ROCm text choosing `wave64` for GFX8/GFX9 device passes and the host pass, `wave32` for other targets.

    `indent` is what the fixed statement is indented by; `gated_fix` puts it before the first line itself.
    """
    return f"#if {WAVE64_CONDITION}\n{indent}{wave64}\n{indent}#else\n{indent}{wave32}\n{indent}#endif"


def with_value(literal: str, value: int) -> str:
    """`32u` -> `64u`: the integer literal's suffix kept, its digits replaced by `value`."""
    match = _INT_LITERAL.fullmatch(literal.strip())
    return f"{value}{match.group('suffix')}" if match else str(value)


def indent_of(ctx: CudaContext, span: Span) -> str:
    """The whitespace before `span` on its first line."""
    line_start = ctx.content.rfind(b"\n", 0, span.start_byte) + 1
    return ctx.content[line_start : span.start_byte].decode("utf-8", "replace")


def enum_declaration(ctx: CudaContext, enumerator: Node) -> ByteSpan | None:
    """`enum { ... };` around `enumerator`: the enum specifier with the `;` that follows it."""
    specifier = ctx.enclosing(enumerator, "enum_specifier")
    if specifier is None:
        return None
    following = specifier.next_sibling
    if following is None or following.type != ";":
        return None  # `enum E {...} e;`, a member of a declaration: the declaration is the statement
    return ByteSpan(specifier.start_byte, following.end_byte)
