"""ROC208 warp-size-32."""

from __future__ import annotations

import re

from rocmlint.cuda.frontend import Anchors, CudaContext, Define, Node, Span
from rocmlint.cuda.preprocessor import parse_int
from rocmlint.cuda.values import START, Trace, initialiser, resolve_text
from rocmlint.cuda.warp import enum_declaration, indent_of, wave_selector, with_value
from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

# Names that spell "the hardware warp width": WARP_SIZE, kWarpSize, hw_warp_size, THREADS_PER_WARP ...
_WARP_CONSTANT = re.compile(
    r"(?:k_?|c_?|g_?|s_?)?(?:hw_?|cuda_?|gpu_?|default_?|hardware_?|phys(?:ical)?_?)?warp_?(?:size|sz|threads|width|lanes)"
    r"|(?:k_?)?(?:num_?|n_?)?(?:threads|lanes)_?per_?warp",
    re.IGNORECASE,
)
# PyTorch's wrapper is wave-aware (RULES.md: portable wrappers are not hazards).
_PORTABLE_CONSTANTS = frozenset({"C10_WARP_SIZE"})
# Preprocessor tests that pick the wave size per target: a 32 under them is the RDNA (wave32) arm.
_WAVE_AWARE_TEST = re.compile(r"__(?:GFX|gfx)\w*__|WAVEFRONT|wave_?size|WAVE(?:32|64)", re.IGNORECASE)
# Variables that conventionally hold a thread or lane index.
_THREAD_ID_NAME = re.compile(
    r"tid|tidx|tid_?x|t_?idx|thread_?id(?:x|_?x)?|thread_?idx(?:_?x)?|thread_?index|thread_?rank|"
    r"local_?(?:tid|thread_?id)|ltid|lane|lane_?id(?:x)?|lane_?index|laneid|tx",
    re.IGNORECASE,
)
_GLOBAL_INDEX = re.compile(r"\b(?:blockIdx|gridDim)\b")
# Where the result of `x % 32` / `x >> 5` is stored says it is a lane or warp index.
_LANE_OR_WARP_TARGET = re.compile(r"(?:lane|warp)_?(?:id|idx|index|num|no)?|wid|laneid|warpid", re.IGNORECASE)
# Right operand that makes each operator a 32-lane split.
_SPLITS = {"%": 32, "/": 32, "&": 31, ">>": 5}
_SHUFFLES = frozenset(
    {
        "__shfl_xor_sync", "__shfl_down_sync", "__shfl_up_sync", "__shfl_xor", "__shfl_down", "__shfl_up",
        "WARP_SHFL_XOR", "WARP_SHFL_DOWN", "WARP_SHFL_UP", "VLLM_SHFL_XOR_SYNC", "VLLM_SHFL_XOR_SYNC_WIDTH",
        "VLLM_SHFL_DOWN_SYNC", "VLLM_SHFL_UP_SYNC",
    }
)
_DESCENDING = frozenset({"__shfl_xor_sync", "__shfl_down_sync", "__shfl_xor", "__shfl_down", "WARP_SHFL_XOR",
                         "WARP_SHFL_DOWN", "VLLM_SHFL_XOR_SYNC", "VLLM_SHFL_XOR_SYNC_WIDTH", "VLLM_SHFL_DOWN_SYNC"})


def _shuffle_offset_index(name: str) -> int:
    """Position of the lane offset: after the mask for the `_sync` intrinsics, after the value otherwise."""
    return 2 if name.endswith("_sync") else 1


def _has_subgroup_width(name: str, arguments: list[Node], ctx: CudaContext) -> bool:
    """An explicit width of at most 32 works on 32-lane segments on purpose (correct on a wave64 too)."""
    index = _shuffle_offset_index(name) + 1
    if len(arguments) <= index:
        return False
    width = ctx.int_value(arguments[index])
    return width is not None and width <= 32


def _strip(node: Node) -> Node:
    """Look through parentheses and casts: `(int)(threadIdx.x)` is `threadIdx.x`."""
    while True:
        if node.type == "parenthesized_expression" and node.named_child_count == 1:
            node = node.named_children[0]
        elif node.type == "cast_expression" and node.child_by_field_name("value") is not None:
            node = node.child_by_field_name("value")  # type: ignore[assignment]
        else:
            return node


def _builtin_field(node: Node, ctx: CudaContext) -> str | None:
    """`threadIdx` for `threadIdx.x`, `blockDim` for `blockDim.y`; None for anything else."""
    if node.type != "field_expression":
        return None
    argument, field = node.child_by_field_name("argument"), node.child_by_field_name("field")
    if argument is None or field is None or ctx.text(field) not in ("x", "y", "z"):
        return None
    name = ctx.text(argument)
    return name if name in ("threadIdx", "blockDim") else None


def _is_thread_id(node: Node, ctx: CudaContext, trace: Trace | None = START) -> bool:
    """`threadIdx.x`, a `tid`/`lane`-named variable, a variable initialised from one, or `threadIdx.x + k`."""
    node = _strip(node)
    if trace is None:
        return False
    if _builtin_field(node, ctx) == "threadIdx":
        return True
    if node.type == "identifier":
        # The initialiser decides when there is one (`int tid = blockIdx.x * blockDim.x + threadIdx.x` is a
        # global element index); the name decides for parameters and members.
        found = initialiser(ctx, node, trace)
        if found is not None:
            value, deeper = found
            if _GLOBAL_INDEX.search(ctx.text(value)):
                return False
            if _is_thread_id(value, ctx, deeper):
                return True
        return bool(_THREAD_ID_NAME.fullmatch(ctx.text(node)))
    if node.type == "binary_expression" and ctx.text(node.child_by_field_name("operator") or node) == "+":
        if _GLOBAL_INDEX.search(ctx.text(node)):
            return False  # a grid-wide index: `% 32` / `>> 5` on it is usually bit packing of data
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        return any(side is not None and _is_thread_id(side, ctx, trace.step()) for side in (left, right))
    return False


def _assigned_name(node: Node, ctx: CudaContext) -> str | None:
    """The variable `node` initialises or is assigned to (through parentheses and casts)."""
    current = node
    parent = current.parent
    while parent is not None and parent.type in ("parenthesized_expression", "cast_expression"):
        current, parent = parent, parent.parent
    if parent is None:
        return None
    if parent.type == "init_declarator" and parent.child_by_field_name("value") == current:
        target = parent.child_by_field_name("declarator")
    elif parent.type == "assignment_expression" and parent.child_by_field_name("right") == current:
        target = parent.child_by_field_name("left")
    else:
        return None
    return ctx.text(target) if target is not None and target.type == "identifier" else None


def _in_wave_selector(ctx: CudaContext, span: Span) -> bool:
    """Inside an `#if` chain that tests the target's wave size (`__GFX9__`, `__AMDGCN_WAVEFRONT_SIZE`)."""
    open_chains: list[list[str]] = []
    for directive in ctx.preprocessor.directives:
        if directive.start_byte >= span.start_byte:
            break
        if directive.kind in ("if", "ifdef", "ifndef"):
            open_chains.append([directive.condition])
        elif directive.kind in ("elif", "elifdef", "elifndef") and open_chains:
            open_chains[-1].append(directive.condition)
        elif directive.kind == "endif" and open_chains:
            open_chains.pop()
    return any(_WAVE_AWARE_TEST.search(condition) for chain in open_chains for condition in chain)


# What every ROC208 finding needs besides its number, as file-level prefilter context (`Rule.also_requires`):
# a warp-constant name (_WARP_CONSTANT: `warp`), a `blockDim` split, a thread-id operand (`threadIdx` or a
# _THREAD_ID_NAME: `tid`, `t_idx`, `thread`, `lane`, `tx`), a lane/warp target (_LANE_OR_WARP_TARGET: `lane`,
# `warp`, `wid`), or a shuffle (_SHUFFLES: `shfl`/`SHFL`). The prefilter compares these ignoring case, as
# the rule's name patterns do.
_CONTEXT_WORDS = (b"blockdim", b"shfl", b"thread", b"lane", b"warp", b"tid", b"tx", b"wid", b"t_idx")
# What tree-sitter may skip between an operator and its right operand: whitespace (Unicode's too, in UTF-8),
# line continuations and comments. Possessive, so that a file full of `//` does not backtrack.
_GAP = (
    rb"(?:[ \t\n\r\f\v]++|\xc2\xa0|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80|\xef\xbb\xbf"
    rb"|\\\r?\n|/\*.*?\*/|//(?:[^\r\n\\]++|\\(?:\r?\n|.))*+)*+"
)


def _literal_text(value: int) -> bytes:
    """A whole integer literal token worth `value`, in the spellings parse_int reads."""
    hex_digits = "".join(f"[{c}{c.upper()}]" if c.isalpha() else c for c in f"{value:x}")
    return f"(?:0[xX]0*{hex_digits}|0+{value:o}|{value})[uUlL]*(?![\\w.'])".encode()


# Each _SPLITS operator with its number: lane arithmetic cannot be found where none matches. One pattern per
# operator, each starting with its operator's text, which re searches for quickly (one alternation of all
# four took five times as long).
_SPLIT_TEXTS = tuple(
    re.compile(re.escape(operator.encode()) + _GAP + _literal_text(value), re.DOTALL) for operator, value in _SPLITS.items()
)

# --- fixes: the constant becomes 64 on CDNA, the NVIDIA text stays ------------------------------------------
_FIX_MESSAGE = "define the wave size per ROCm target (64 on GFX8/GFX9 and in the host pass, 32 on RDNA)"
# `#define WARP_SIZE 32`, `#define WARP_SIZE (32u)  // lanes`: the prefix, the literal, the rest of the line.
_DEFINE_LITERAL = re.compile(r"(?P<head>[ \t]*#[ \t]*define[ \t]+\w+[ \t(]+)(?P<literal>(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*)(?P<tail>.*)", re.DOTALL)
# The statements a constant's declaration can be wrapped as (not the `for` loop that declares it).
_DECLARATIONS = frozenset({"declaration", "field_declaration", "type_definition"})


def _define_fix(define: Define, ctx: CudaContext) -> Fix | None:
    """The define in a ROCm-gated wave selector; only a literal value (`32`, `(32)`, `32u`) is rewritten."""
    text = ctx.text(define.directive)
    match = _DEFINE_LITERAL.fullmatch(text)
    if match is None or "\\" in text or parse_int(match.group("literal")) != 32:
        return None  # `#define WARP_SIZE HW_WARP`, a continued line: the value is not ours to rewrite
    wave64 = match.group("head") + with_value(match.group("literal"), 64) + match.group("tail")
    return ctx.gated_fix(_FIX_MESSAGE, define.directive, wave_selector(wave64, text))


def _constant_fix(name_node: Node, value: Node, ctx: CudaContext) -> Fix | None:
    """The constant's declaration (or `enum {...};`) in a ROCm-gated wave selector, with 64 for 32."""
    statement: Span | None = enum_declaration(ctx, name_node) if name_node.parent is not None and name_node.parent.type == "enumerator" else None
    if statement is None:
        statement = ctx.statement_of(name_node)
        if statement is None or statement.type not in _DECLARATIONS:
            return None
    wave64 = ctx.rocm_variant(statement, [(value, with_value(ctx.text(value), 64))])
    return ctx.gated_fix(_FIX_MESSAGE, statement, wave_selector(wave64, ctx.text(statement), indent_of(ctx, statement)))


class WarpSize32(Rule):
    """
    ## What it does
    Flags code that hard-codes a 32-lane warp: warp-size constants defined as 32 (`#define WARP_SIZE 32`,
    `constexpr int kWarpSize = 32`, `THREADS_PER_WARP = 32` enumerators), lane and warp indices computed
    from thread ids with `% 32`, `& 31`, `& 0x1f`, `>> 5` or `/ 32`, and shuffle reductions whose first
    offset is 16.

    ## Why is this bad on ROCm?
    CDNA GPUs (MI100 to MI355) run 64-lane wavefronts; only RDNA runs wave32. HIP's `warpSize` section
    of `hip_cpp_language_extensions.rst` and the HIP porting guide ("do not assume 32 or 64") say to
    read `warpSize` instead. With a 32 constant, "lane 0 of each warp" elects two leaders per wavefront,
    warp indices `tid / 32` disagree with `__shfl_down`/`__ballot`, whose width is the real wave size,
    and a butterfly starting at offset 16 only reduces half the wavefront (llama.cpp#14196, DeepSpeed
    `csrc/includes/context.h`, apex `csrc/welford.cu`, mamba `selective_scan_fwd_kernel.cuh`).

    ## Example
    ```cuda
    #define WARP_SIZE 32

    __global__ void row_sum(const float* x, float* out) {
      float v = x[threadIdx.x];
      for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffff, v, offset);
      if (threadIdx.x % 32 == 0) atomicAdd(out, v);
    }
    ```

    ## Fix
    The autofix handles the constants: their definition goes behind a ROCm gate, where a wave selector
    picks 64 for GFX8/GFX9 (GCN and CDNA, MI100 to MI355) device passes and for the host pass, and 32
    for other targets (RDNA, wave32):
    ```cuda
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
    #if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)
    #define WARP_SIZE 64
    #else
    #define WARP_SIZE 32
    #endif
    #else
    #define WARP_SIZE 32
    #endif
    ```
    `constexpr`/`static const` declarations and enumerators get the same selector around a copy of
    their declaration with `64`. Lane arithmetic and reduction loops are rewritten by hand with the run-time
    `warpSize`:
    ```cuda
    __global__ void row_sum(const float* x, float* out) {
      float v = x[threadIdx.x];
      for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_xor(v, offset);
      if (threadIdx.x % warpSize == 0) atomicAdd(out, v);
    }
    ```

    ## Fix safety
    Safe for the constant definitions: the NVIDIA branch (`#else`) keeps the original definition token
    for token, so `nvcc` compiles what it compiled before; only line numbers move. On ROCm the device
    passes follow the HIP documentation's selector (`__GFX8__`/`__GFX9__` mean a 64-lane wavefront).
    The host pass has no target macro, where that selector alone would give 32 and make host code that
    sizes launches or instantiates kernel templates from the constant disagree with CDNA device code
    (ROCm/vllm#694 review); the fix picks 64 there, the value of the MI200/MI300 targets. The cost
    is on RDNA (wave32) targets: the device code gets 32 but host code still sees 64, so a kernel
    template instantiated with the constant from host code is not the one the RDNA device pass built;
    projects that ship for RDNA should size host-side launches from `hipDeviceAttributeWarpSize` instead.
    Expressions and loops are not fixed: replacing `& 31` by `% warpSize` changes the number of warps
    per block, and shared arrays sized from it, downstream.
    """

    code = "ROC208"
    name = "warp-size-32"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    applies_to_rocm_sources = True
    triggers = (b"32", b"31", b"0x1f", b"0x1F", b"0x20", b">> 5", b">>5", b"16")
    also_requires = _CONTEXT_WORDS

    def __init__(self) -> None:
        self._subgroup_functions: dict[int, bool] = {}  # function start byte -> shuffles with width <= 32

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """Lane arithmetic holds a split with its literal (_SPLIT_TEXTS); a constant's name says `warp`
        (_WARP_CONSTANT), a reduction loop's or unrolled butterfly's shuffle `shfl` (_SHUFFLES), in any case."""
        needed: dict[str, Anchors] = {}
        splits = [match.start() for split in _SPLIT_TEXTS for match in split.finditer(ctx.content)]
        if splits:
            needed["binary_expression"] = splits
        constants = ctx.offsets(b"warp", lowered=True)
        if constants:
            needed.update(dict.fromkeys(("declaration", "field_declaration", "enumerator"), constants))
        shuffles = ctx.offsets(b"shfl", lowered=True)
        if shuffles:
            needed.update(dict.fromkeys(("for_statement", "call_expression"), shuffles))
        return needed

    # --- constants ------------------------------------------------------------------------------
    def visit_define(self, define: Define, ctx: CudaContext) -> None:
        if define.parameters is not None or not self._is_warp_constant_name(define.name):
            return
        if parse_int(resolve_text(ctx, define.value, define.directive)) != 32:
            return
        if _in_wave_selector(ctx, define.directive):
            return
        ctx.report(define.directive, self._constant_message(define.name), fix=_define_fix(define, ctx))

    def visit_declaration(self, node: Node, ctx: CudaContext) -> None:
        if not self._is_constant_declaration(node, ctx):
            return
        for declarator in node.children_by_field_name("declarator"):
            if declarator.type != "init_declarator":
                continue
            self._check_constant(declarator.child_by_field_name("declarator"), declarator.child_by_field_name("value"), ctx)

    def visit_field_declaration(self, node: Node, ctx: CudaContext) -> None:
        # `static constexpr int kWarpSize = 32;` inside a struct: the value is the `default_value` field.
        if self._is_constant_declaration(node, ctx):
            self._check_constant(node.child_by_field_name("declarator"), node.child_by_field_name("default_value"), ctx)

    def visit_enumerator(self, node: Node, ctx: CudaContext) -> None:
        self._check_constant(node.child_by_field_name("name"), node.child_by_field_name("value"), ctx)

    def _check_constant(self, name_node: Node | None, value: Node | None, ctx: CudaContext) -> None:
        if name_node is None or value is None or name_node.type not in ("identifier", "field_identifier"):
            return
        name = ctx.text(name_node)
        if not self._is_warp_constant_name(name) or ctx.int_value(value) != 32:
            return
        if _in_wave_selector(ctx, name_node):
            return
        ctx.report(name_node, self._constant_message(name), fix=_constant_fix(name_node, value, ctx))

    @staticmethod
    def _is_constant_declaration(node: Node, ctx: CudaContext) -> bool:
        """`const`, `constexpr` or `static`: a named constant, not a loop counter that starts at 32."""
        return any(
            child.type in ("type_qualifier", "storage_class_specifier") and ctx.text(child) in ("const", "constexpr", "static")
            for child in node.children
        )

    @staticmethod
    def _is_warp_constant_name(name: str) -> bool:
        return name not in _PORTABLE_CONSTANTS and bool(_WARP_CONSTANT.fullmatch(name))

    @staticmethod
    def _constant_message(name: str) -> str:
        return (
            f"`{name}` hard-codes a 32-lane warp; CDNA wavefronts are 64 lanes: use `warpSize` at run time "
            "or a ROCm-gated `__GFX9__` selector for compile-time sizes"
        )

    # --- lane and warp index arithmetic ------------------------------------------------------------
    def visit_binary_expression(self, node: Node, ctx: CudaContext) -> None:
        operator = node.child_by_field_name("operator")
        right = node.child_by_field_name("right")
        if operator is None or right is None or right.type != "number_literal":
            return
        wanted = _SPLITS.get(ctx.text(operator))
        if wanted is None or parse_int(ctx.text(right)) != wanted:
            return
        left = node.child_by_field_name("left")
        if left is None:
            return
        stripped = _strip(left)
        if _builtin_field(stripped, ctx) == "blockDim" and ctx.text(operator) in ("/", ">>"):
            ctx.report(node, f"`{ctx.text(node)}` counts warps of 32 threads; a CDNA wavefront has 64: divide by `warpSize`")
            return
        target = _assigned_name(node, ctx)
        if not (_is_thread_id(left, ctx) or (target is not None and _LANE_OR_WARP_TARGET.fullmatch(target))):
            return
        if self._uses_32_lane_subgroups(node, ctx) or _in_wave_selector(ctx, node):
            return
        ctx.report(
                node,
            f"`{ctx.text(node)}` splits thread ids into 32-lane warps; on 64-lane CDNA wavefronts use "
            "`% warpSize` / `/ warpSize`",
        )

    def _uses_32_lane_subgroups(self, node: Node, ctx: CudaContext) -> bool:
        """The function shuffles with an explicit width of 32 (`__shfl_xor_sync(m, v, o, 32)`): its `% 32`
        and `/ 32` index those logical 32-lane groups, which stay consistent on a 64-lane wavefront."""
        function = ctx.function_of(node)
        if function is None:
            return False
        known = self._subgroup_functions.get(function.start_byte)
        if known is None and b"shfl" not in ctx.content[function.start_byte : function.end_byte].lower():
            known = False  # every _SHUFFLES name says `shfl`: no need to walk the function
        if known is None:
            known = any(
                (ctx.call_name(n) or "") in _SHUFFLES
                and _has_subgroup_width(ctx.call_name(n) or "", ctx.arguments(n), ctx)
                for n in ctx.descendants(function, "call_expression")
            )
            self._subgroup_functions[function.start_byte] = known
        return known

    # --- shuffle reductions sized for 32 lanes --------------------------------------------------------
    def visit_for_statement(self, node: Node, ctx: CudaContext) -> None:
        variable, start = self._loop_start(node, ctx)
        if variable is None or start is None:
            return
        ascending = start == 1 and self._bounded_by_32(node.child_by_field_name("condition"), variable, ctx)
        if (start != 16 and not ascending) or self._in_first_32_threads(node, ctx):
            return
        body = node.child_by_field_name("body")
        if body is None:
            return
        for call in ctx.descendants(body, "call_expression"):
            name = ctx.call_name(call)
            if name not in _SHUFFLES or (not ascending and name not in _DESCENDING):
                continue
            arguments = ctx.arguments(call)
            index = _shuffle_offset_index(name)
            if len(arguments) <= index or ctx.text(arguments[index]).strip() != variable:
                continue
            if _has_subgroup_width(name, arguments, ctx):
                continue
            ctx.report(
                node,
                f"shuffle reduction over `{variable}` spans only 32 lanes; a 64-lane wavefront needs offsets "
                "from `warpSize / 2`",
            )
            return

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        # Unrolled butterflies: `v += __shfl_xor_sync(mask, v, 16); v += __shfl_xor_sync(mask, v, 8); ...`
        name = ctx.call_name(node)
        if name not in _DESCENDING:
            return
        arguments = ctx.arguments(node)
        index = _shuffle_offset_index(name)
        if len(arguments) <= index or arguments[index].type != "number_literal" or parse_int(ctx.text(arguments[index])) != 16:
            return
        if _has_subgroup_width(name, arguments, ctx):
            return
        ctx.report(node, f"`{name}` with offset 16 starts a 32-lane reduction; a 64-lane wavefront needs offset 32 first")

    @staticmethod
    def _in_first_32_threads(node: Node, ctx: CudaContext) -> bool:
        """Under `if (tid < 32)`: a reduction among 32 threads on purpose (lane 0's result stays right)."""
        for ancestor in ctx.ancestors(node):
            if ancestor.type == "function_definition":
                return False
            if ancestor.type != "if_statement":
                continue
            condition = ancestor.child_by_field_name("condition")
            test = condition.named_children[0] if condition is not None and condition.named_child_count else None
            if test is None or test.type != "binary_expression":
                continue
            left, operator, right = (test.child_by_field_name(f) for f in ("left", "operator", "right"))
            if (
                left is not None and operator is not None and right is not None
                and ctx.text(operator) == "<" and ctx.int_value(right) == 32 and _is_thread_id(left, ctx)
            ):
                return True
        return False

    @staticmethod
    def _loop_start(node: Node, ctx: CudaContext) -> tuple[str | None, int | None]:
        initializer = node.child_by_field_name("initializer")
        if initializer is None:
            return None, None
        if initializer.type == "declaration":
            declarator = initializer.child_by_field_name("declarator")
            if declarator is None or declarator.type != "init_declarator":
                return None, None
            name, value = declarator.child_by_field_name("declarator"), declarator.child_by_field_name("value")
        elif initializer.type == "assignment_expression":
            name, value = initializer.child_by_field_name("left"), initializer.child_by_field_name("right")
        else:
            return None, None
        if name is None or value is None or name.type != "identifier":
            return None, None
        return ctx.text(name), ctx.int_value(value)

    @staticmethod
    def _bounded_by_32(condition: Node | None, variable: str, ctx: CudaContext) -> bool:
        """`i < 32` or `i <= 16`: an ascending butterfly that stops at the 32-lane boundary."""
        if condition is None or condition.type != "binary_expression":
            return False
        left, operator, right = (condition.child_by_field_name(f) for f in ("left", "operator", "right"))
        if left is None or operator is None or right is None or ctx.text(left).strip() != variable:
            return False
        bound = ctx.int_value(right)
        return (ctx.text(operator) == "<" and bound == 32) or (ctx.text(operator) == "<=" and bound == 16)


WarpSize32.valid = (
    # The constant is chosen per vendor; the 32 sits in the NVIDIA-only arm.
    Valid(
        "#ifdef USE_ROCM\n"
        "#define WARP_SIZE 64\n"
        "#else\n"
        "#define WARP_SIZE 32\n"
        "#endif\n"
        "__global__ void scale(float* x) { x[threadIdx.x] *= WARP_SIZE; }\n"
    ),
    # DeepSpeed-style: a constexpr per platform, the 32 only where __HIP_PLATFORM_AMD__ is undefined.
    Valid(
        "#if !defined(__HIP_PLATFORM_AMD__)\n"
        "constexpr int hw_warp_size = 32;\n"
        "#else\n"
        "constexpr int hw_warp_size = ROCM_WAVEFRONT_SIZE;\n"
        "#endif\n"
    ),
    # Lane ids from the real wave size; the NVIDIA-only mask arm is gated (mamba reverse_scan.cuh).
    Valid(
        "struct WarpScan {\n"
        "  int lane_id;\n"
        "  __device__ WarpScan()\n"
        "#ifndef USE_ROCM\n"
        "      : lane_id(threadIdx.x & 0x1f)\n"
        "#else\n"
        "      : lane_id(threadIdx.x & (warpSize - 1))\n"
        "#endif\n"
        "  {}\n"
        "};\n"
    ),
    # A per-target wave selector: the 32 is the RDNA (wave32) arm.
    Valid(
        "#ifdef USE_ROCM\n"
        "#if defined(__gfx942__) || defined(__gfx90a__)\n"
        "#define WARP_THREADS 64\n"
        "#elif defined(__gfx1100__)\n"
        "#define WARP_THREADS 32\n"
        "#endif\n"
        "#endif\n"
    ),
    # `/ 32` and `>> 5` on element counts, bit positions and grid-wide indices are not lane arithmetic.
    Valid(
        "__global__ void pack_bits(const bool* in, unsigned* out, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (in[tid]) atomicOr(&out[tid >> 5], 1u << (tid & 31));\n"
        "  int words = n / 32;\n"
        "  size_t bytes = n * sizeof(float) / 32;\n"
        "  if (i < words) out[i] = in[i * 32] ? 1u << (n & 31) : 0u;\n"
        "}\n"
    ),
    # Reductions sized from warpSize / C10_WARP_SIZE, and explicit 32-wide sub-group shuffles.
    Valid(
        "template <typename T>\n"
        "__device__ T warp_sum(T v) {\n"
        "  for (int offset = C10_WARP_SIZE >> 1; offset > 0; offset >>= 1) v += WARP_SHFL_DOWN(v, offset);\n"
        "  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor(v, offset, 32);\n"
        "  return v + (threadIdx.x % warpSize);\n"
        "}\n"
    ),
    # A reduction among the first 32 threads on purpose, and leaders of explicit 32-wide shuffle groups.
    Valid(
        "template <typename T>\n"
        "__device__ T block_reduce(T* x, T val, int lanes) {\n"
        "  const int tid = threadIdx.x;\n"
        "  T result = val;\n"
        "  if (tid < 32) {\n"
        "    for (int i = 16; i >= lanes; i >>= 1) result += __shfl_down(result, i);\n"
        "  }\n"
        "  return result;\n"
        "}\n"
        "__global__ void group_sum(float2* out, float2 v) {\n"
        "  __shared__ float2 per_group[8];\n"
        "  for (int m = 16; m > 0; m >>= 1) v.x += __shfl_xor(v.x, m, 32);\n"
        "  if (threadIdx.x % 32 == 0) per_group[threadIdx.x / 32] = v;\n"
        "}\n"
    ),
    # What the fix writes: a per-target selector behind the ROCm gate, the original in the NVIDIA arm.
    Valid(
        "struct Traits {\n"
        "#if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)\n"
        "  #if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)\n"
        "  static constexpr int kWarpSize = 64;\n"
        "  #else\n"
        "  static constexpr int kWarpSize = 32;\n"
        "  #endif\n"
        "#else\n"
        "  static constexpr int kWarpSize = 32;\n"
        "#endif\n"
        "  static constexpr int kWarps = 256 / kWarpSize;\n"
        "};\n"
    ),
)
WarpSize32.invalid = (
    Invalid(
        "#include <cuda_runtime.h>\n"
        "#define WARP_SIZE 32\n"
        "__global__ void scale(float* x) { x[threadIdx.x] *= WARP_SIZE; }\n",
        line=2,
        message="`WARP_SIZE` hard-codes a 32-lane warp",
        fixed=(
            "#include <cuda_runtime.h>\n"
            "#if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)\n"
            "#if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)\n"
            "#define WARP_SIZE 64\n"
            "#else\n"
            "#define WARP_SIZE 32\n"
            "#endif\n"
            "#else\n"
            "#define WARP_SIZE 32\n"
            "#endif\n"
            "__global__ void scale(float* x) { x[threadIdx.x] *= WARP_SIZE; }\n"
        ),
    ),
    Invalid(
        "__global__ void quantize(const float* x, int8_t* q) {\n"
        "  int gid = threadIdx.x >> 5;\n"
        "  int lane = threadIdx.x & 0x1f;\n"
        "  q[gid * 32 + lane] = (int8_t)x[threadIdx.x];\n"
        "}\n",
        line=2,
        message="`threadIdx.x >> 5`",
        no_fix=True,
    ),
    Invalid(
        "template <int kNRows>\n"
        "__global__ void scan_fwd(float2* smem_running_prefix, int chunk) {\n"
        "  float2 running_prefix = chunk > 0 && threadIdx.x % 32 == 0\n"
        "      ? smem_running_prefix[0] : make_float2(1.f, 0.f);\n"
        "}\n",
        line=3,
    ),
    Invalid(
        "template <typename T>\n"
        "__device__ T warp_reduce_sum(T val) {\n"
        "  for (int offset = 16; offset > 0; offset /= 2)\n"
        "    val += __shfl_xor_sync(0xffffffff, val, offset);\n"
        "  return val;\n"
        "}\n",
        line=3,
        message="spans only 32 lanes",
    ),
    Invalid(
        "struct Traits {\n"
        "  static constexpr int kWarpSize = 32;\n"
        "  static constexpr int kWarps = 256 / kWarpSize;\n"
        "};\n",
        line=2,
        fixed=(
            "struct Traits {\n"
            "#if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)\n"
            "  #if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)\n"
            "  static constexpr int kWarpSize = 64;\n"
            "  #else\n"
            "  static constexpr int kWarpSize = 32;\n"
            "  #endif\n"
            "#else\n"
            "  static constexpr int kWarpSize = 32;\n"
            "#endif\n"
            "  static constexpr int kWarps = 256 / kWarpSize;\n"
            "};\n"
        ),
    ),
    Invalid(
        "__global__ void softmax(const float* in, float* out) {\n"
        "  const int tid = threadIdx.x;\n"
        "  enum { THREADS_PER_WARP = 32 };\n"
        "  int warp_id = tid / 32;\n"
        "  out[warp_id] = in[tid];\n"
        "}\n",
        line=3,
        fixed=(
            "__global__ void softmax(const float* in, float* out) {\n"
            "  const int tid = threadIdx.x;\n"
            "#if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)\n"
            "  #if defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)\n"
            "  enum { THREADS_PER_WARP = 64 };\n"
            "  #else\n"
            "  enum { THREADS_PER_WARP = 32 };\n"
            "  #endif\n"
            "#else\n"
            "  enum { THREADS_PER_WARP = 32 };\n"
            "#endif\n"
            "  int warp_id = tid / 32;\n"
            "  out[warp_id] = in[tid];\n"
            "}\n"
        ),
    ),
    # The hazard sits in a .hip file: wave-size rules still apply to ROCm sources.
    Invalid(
        "#include <hip/hip_runtime.h>\n"
        "__global__ void k(float* x) {\n"
        "  int d3 = threadIdx.x;\n"
        "  int lane = d3 & 31;\n"
        "  x[lane] = 0.f;\n"
        "}\n",
        line=4,
        path="example.hip",
    ),
)
