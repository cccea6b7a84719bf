"""What the warp-size rules (ROC208, ROC209) know of warps: names of warp-size constants and thread indices,
shuffles, 32-lane splits of thread ids, `#if` chains that select the wave size, and the wave-size choice their
fixes write on the ROCm side.

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
import weakref

from rocmlint.cuda.conditions import chains_around
from rocmlint.cuda.frontend import ByteSpan, CudaContext, Define, Node, Span
from rocmlint.cuda.preprocessor import (
    WAVE_SIZE_MACROS,
    MacroLookup,
    evaluate_expression,
    is_amd_target_macro,
    names_in,
    parse_int,
)
from rocmlint.cuda.syntax import (
    array_dimensions,
    bare,
    binary_parts,
    constant_context,
    identifiers_in,
    is_builtin_warpsize,
    loop_counter,
    operator_with_literal,
)
from rocmlint.cuda.values import START, Trace, constant_value, initialiser
from rocmlint.diagnostics import Fix

WAVE64_CONDITION = "defined(__GFX8__) || defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)"
_INT_LITERAL = re.compile(r"(?P<digits>0[xX][0-9a-fA-F]+|\d+)(?P<suffix>[uUlL]*)")


def wave_selector(wave64: str, wave32: str, indent: str = "") -> str:
    """ROCm text choosing `wave64` for GFX8/GFX9 device passes and the host pass, `wave32` for other targets.

    `indent` is what the fixed statement is indented by; `gated_fix` puts it before the first line itself.
    """
    return f"#if {WAVE64_CONDITION}\n{indent}{wave64}\n{indent}#else\n{indent}{wave32}\n{indent}#endif"


def _with_value(literal: str, value: int) -> str:
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


# --- names ------------------------------------------------------------------------------------------------
# Names that spell "the hardware warp width": WARP_SIZE, kWarpSize, hw_warp_size, THREADS_PER_WARP ...
_WARP_CONSTANT = re.compile(
    r"(?:[a-z][a-z0-9]*_)?(?:k_?|c_?|g_?|s_?)?(?:hw_?|cuda_?|gpu_?|default_?|hardware_?|phys(?:ical)?_?)?warp_?(?:size|sz|threads|width|lanes)"
    r"|(?:k_?)?(?:num_?|n_?)?(?:threads|lanes)_?per_?warp",
    re.IGNORECASE,
)
# PyTorch's wrapper is wave-aware (RULES.md: portable wrappers are not hazards).
_PORTABLE_CONSTANTS = frozenset({"C10_WARP_SIZE"})
# Names for the number of warps in a block: `NUM_WARPS`, `WARPS_PER_BLOCK`, `kNumWarps`, `N_WARPS`.
_WARP_COUNT = re.compile(r"(?:k_?)?(?:num_?|n_?)warps|(?:k_?)?warps_?per_?(?:block|cta)", re.IGNORECASE)
# Variables that conventionally hold a thread or lane index.
_THREAD_ID_NAME = re.compile(
    r"tid|tidx|tid_?x|t_?idx|thread_?id(?:x|_?x)?|thread_?idx(?:_?x)?|thread_?index|thread_?rank|"
    r"local_?(?:tid|thread_?id)|ltid|lane|lane_?id(?:x)?|lane_?index|laneid|tx",
    re.IGNORECASE,
)
_GLOBAL_INDEX = re.compile(r"\b(?:blockIdx|gridDim)\b")


# Where the result of `x % 32` / `x >> 5` is stored says it is a lane or warp index.
_LANE_OR_WARP_NAME = re.compile(r"(?:lane|warp)_?(?:id|idx|index|num|no)?|wid|laneid|warpid", re.IGNORECASE)


def is_lane_or_warp_name(name: str | None) -> bool:
    """`lane`, `lane_id`, `warp_idx`, `wid`: a variable named for a lane or warp index."""
    return name is not None and bool(_LANE_OR_WARP_NAME.fullmatch(name))


def is_warp_constant_name(name: str) -> bool:
    """`WARP_SIZE`, `kWarpSize`, `THREADS_PER_WARP`: a name for the hardware warp width (not `C10_WARP_SIZE`)."""
    return name not in _PORTABLE_CONSTANTS and bool(_WARP_CONSTANT.fullmatch(name))


def builtin_index(node: Node, ctx: CudaContext) -> str | None:
    """`threadIdx` for `threadIdx.x`, `blockDim` for `blockDim.y`; None for anything else."""
    if node.type != "field_expression":
        return None
    argument, field = node.child_by_field_name("argument"), node.child_by_field_name("field")
    if argument is None or field is None or ctx.text(field) not in ("x", "y", "z"):
        return None
    name = ctx.text(argument)
    return name if name in ("threadIdx", "blockDim") else None


def is_thread_index(node: Node, ctx: CudaContext, trace: Trace | None = START) -> bool:
    """`threadIdx.x`, a `tid`/`lane`-named variable, a variable initialised from one, or `threadIdx.x + k`;
    not a grid-wide index (`blockIdx.x * blockDim.x + threadIdx.x`)."""
    node = bare(node)
    if trace is None:
        return False
    if builtin_index(node, ctx) == "threadIdx":
        return True
    if node.type == "identifier":
        # The initialiser decides when there is one (`int tid = blockIdx.x * blockDim.x + threadIdx.x` is a
        # global element index); the name decides for parameters and members.
        found = initialiser(ctx, node, trace)
        if found is not None:
            value, deeper = found
            if _GLOBAL_INDEX.search(ctx.text(value)):
                return False
            if is_thread_index(value, ctx, deeper):
                return True
        return bool(_THREAD_ID_NAME.fullmatch(ctx.text(node)))
    if node.type == "binary_expression" and ctx.text(node.child_by_field_name("operator") or node) == "+":
        if _GLOBAL_INDEX.search(ctx.text(node)):
            return False  # a grid-wide index: `% 32` / `>> 5` on it is usually bit packing of data
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        return any(side is not None and is_thread_index(side, ctx, trace.step()) for side in (left, right))
    return False


# --- shuffles ---------------------------------------------------------------------------------------------
_SHUFFLES = frozenset(
    {
        "__shfl_xor_sync",
        "__shfl_down_sync",
        "__shfl_up_sync",
        "__shfl_xor",
        "__shfl_down",
        "__shfl_up",
        "WARP_SHFL_XOR",
        "WARP_SHFL_DOWN",
        "WARP_SHFL_UP",
    }
)
# The shuffles whose offsets a reduction halves down to 1 (a butterfly or a tree reduction).
_DESCENDING_SHUFFLES = frozenset(
    {
        "__shfl_xor_sync",
        "__shfl_down_sync",
        "__shfl_xor",
        "__shfl_down",
        "WARP_SHFL_XOR",
        "WARP_SHFL_DOWN",
    }
)


def shuffle(call: Node, ctx: CudaContext) -> tuple[str, list[Node | None]] | None:
    """The lane exchange a call makes and its arguments: a _SHUFFLES call itself, or a call of a project macro
    wrapping one (`ctx.wrapped_shuffle`: `SHFL_XOR_W(v, o, 16)` is `__shfl_xor(v, o, 16)` on ROCm)."""
    name = ctx.call_name(call) or ""
    if name in _SHUFFLES:
        return name, list(ctx.arguments(call))
    wrapped = ctx.wrapped_shuffle(call)
    return wrapped if wrapped is not None and wrapped[0] in _SHUFFLES else None


def unrolled_from_16(call: Node, ctx: CudaContext) -> str | None:
    """The name of a descending shuffle called with the literal offset 16 and no explicit width of at most 32:
    the first step of an unrolled 32-lane butterfly (`v += __shfl_xor_sync(m, v, 16); ... (m, v, 8); ...`)."""
    found = shuffle(call, ctx)
    if found is None or found[0] not in _DESCENDING_SHUFFLES:
        return None
    offset = _shuffle_offset(*found)
    if offset is None or offset.type != "number_literal" or parse_int(ctx.text(offset)) != 16:
        return None
    return None if _has_subgroup_width(*found, ctx) or in_32_lane_logical_warps(call, ctx) else ctx.call_name(call)


def _shuffle_offset(name: str, arguments: list[Node | None]) -> Node | None:
    """The lane offset argument of a _SHUFFLES call: after the mask for the `_sync` intrinsics, after the
    value otherwise."""
    index = 2 if name.endswith("_sync") else 1
    return arguments[index] if len(arguments) > index else None


def _has_subgroup_width(name: str, arguments: list[Node | None], ctx: CudaContext) -> bool:
    """An explicit width of at most 32 works on 32-lane segments on purpose (correct on a wave64 too)."""
    index = (2 if name.endswith("_sync") else 1) + 1
    width_node = arguments[index] if len(arguments) > index else None
    width = ctx.int_value(width_node) if width_node is not None else None
    return width is not None and width <= 32


_SUBGROUP_FUNCTIONS: weakref.WeakKeyDictionary[CudaContext, dict[int, bool]] = weakref.WeakKeyDictionary()


def in_32_lane_subgroups(node: Node, ctx: CudaContext) -> bool:
    """The function around `node` shuffles with an explicit width of at most 32 (`__shfl_xor_sync(m, v, o, 32)`),
    or the whole file works on 32-lane logical warps on ROCm (`logical_32_lane_warps`): its `% 32` and `/ 32`
    index those logical 32-lane groups, which stay consistent on a 64-lane wavefront; or the function works on
    32-lane halves of its own (`in_32_lane_logical_warps`)."""
    if logical_32_lane_warps(ctx) or in_32_lane_logical_warps(node, ctx):
        return True
    function = ctx.function_of(node)
    if function is None:
        return False
    known = _SUBGROUP_FUNCTIONS.setdefault(ctx, {})
    if function.start_byte not in known:
        # Every _SHUFFLES name, and every wrapper of one the project defines, says `shfl`: a function without it
        # need not be walked.
        walk = b"shfl" in ctx.content[function.start_byte : function.end_byte].lower()
        known[function.start_byte] = walk and any(
            found is not None and _has_subgroup_width(*found, ctx)
            for found in map(lambda n: shuffle(n, ctx), ctx.descendants(function, "call_expression"))
        )
    return known[function.start_byte]


_HALF_WAVE_FUNCTIONS: weakref.WeakKeyDictionary[CudaContext, dict[int, bool]] = weakref.WeakKeyDictionary()
# What ties a function to the hardware wave width or exchanges lanes in ways an xor below 32 does not describe.
_WAVE_WIDE = re.compile(rb"\bwarpSize\b|WarpReduce|WarpScan|tiled_partition|coalesced_group|__reduce_\w+_sync")


def in_32_lane_logical_warps(node: Node, ctx: CudaContext) -> bool:
    """The `void` function around `node` works on 32-lane logical warps of its own, consistent on a 64-lane
    wavefront: it splits thread ids by 32 itself (`lane = threadIdx.x & 31`, `warp = threadIdx.x >> 5`), and its
    every lane exchange is an xor by less than 32 (`for (o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(m, v, o)`),
    which never leaves an aligned 32-lane half of a wavefront; no vote, broadcast, `warpSize` or library warp
    primitive. Each half then reduces its own 32 lanes into the slot its logical warp index names, as two NVIDIA
    warps would; a function returning a value could hand a 32-lane total to a caller counting `warpSize` lanes."""
    function = ctx.function_of(node)
    if function is None:
        return False
    known = _HALF_WAVE_FUNCTIONS.setdefault(ctx, {})
    if function.start_byte not in known:
        known[function.start_byte] = _works_on_32_lane_halves(function, ctx)
    return known[function.start_byte]


def _works_on_32_lane_halves(function: Node, ctx: CudaContext) -> bool:
    returned = function.child_by_field_name("type")
    text = ctx.content[function.start_byte : function.end_byte]
    if returned is None or ctx.text(returned) != "void" or b"shfl" not in text.lower() or _WAVE_WIDE.search(text):
        return False
    exchanges = 0
    for call in ctx.descendants(function, "call_expression"):
        name = ctx.call_name(call) or ""
        if "shfl" not in name.lower() and _WAVE_VOTE.fullmatch(name) is None:
            continue
        found = shuffle(call, ctx)
        if found is None or "xor" not in found[0].lower() or not _xor_within_32(call, found, ctx):
            return False
        exchanges += 1
    return exchanges > 0 and any(
        (split := lane_split(expression, ctx)) is not None and is_thread_index(split[0], ctx)
        for expression in ctx.descendants(function, "binary_expression")
    )


def _xor_within_32(call: Node, found: tuple[str, list[Node | None]], ctx: CudaContext) -> bool:
    """The xor's lane mask is below 32: a constant, or the counter of a loop around it halving from 16 or less
    (or doubling from 1 while below 32)."""
    offset = _shuffle_offset(*found)
    if offset is None:
        return False
    value = ctx.int_value(offset)
    if value is not None:
        return 0 < value < 32
    if offset.type != "identifier":
        return False
    for loop in ctx.ancestors(call):
        counter = loop_counter(loop, ctx) if loop.type == "for_statement" else None
        if counter is None or counter[0] != ctx.text(offset):
            continue
        start, update = ctx.int_value(counter[1]), loop.child_by_field_name("update")
        step = ctx.text(update) if update is not None else ""
        halving = start is not None and 0 < start < 32 and re.search(r">>=|/=|--|-=", step) is not None
        return halving or (start == 1 and _bounded_by_32(loop.child_by_field_name("condition"), counter[0], ctx))
    return False


# Every lane exchange HIP compiles: the shuffles with and without `_sync`, broadcasts (`__shfl`) included.
_HIP_SHUFFLE = re.compile(r"__shfl(?:_xor|_down|_up)?(?:_sync)?")
# Wave-wide votes: their result spans the whole 64-lane wavefront, whatever width the shuffles use.
_WAVE_VOTE = re.compile(r"\w*(?:ballot|activemask)\w*|__(?:any|all|match_any|match_all)(?:_sync)?|__lane_id")
_LOGICAL_WARP_FILES: weakref.WeakKeyDictionary[CudaContext, bool] = weakref.WeakKeyDictionary()


def logical_32_lane_warps(ctx: CudaContext) -> bool:
    """The file works on 32-lane logical warps on ROCm by design: every shuffle ROCm compiles in it passes an
    explicit width of at most 32, one of them in an arm only ROCm compiles (the port wrote
    `__shfl_xor(v, o, THREADS_PER_WARP)` under `__HIP_PLATFORM_AMD__` on purpose), and ROCm compiles no
    wave-wide vote there (a ballot spans 64 lanes: a lane index of `tid % 32` would address it wrongly). Its
    32-lane warp constants and `% 32` lane indices name those logical warps, consistent on a 64-lane wavefront."""
    if ctx in _LOGICAL_WARP_FILES:
        return _LOGICAL_WARP_FILES[ctx]
    _LOGICAL_WARP_FILES[ctx] = False
    if b"shfl" not in ctx.content:
        return False
    chosen_for_rocm = False
    for call in ctx.descendants(ctx.tree.root_node, "call_expression"):
        name = ctx.call_name(call) or ""
        shuffle = _HIP_SHUFFLE.fullmatch(name) is not None
        if not (shuffle or _WAVE_VOTE.fullmatch(name)):
            continue
        branch = ctx.branch(call)
        if branch.on_rocm is False:
            continue
        if not shuffle or not _width_at_most_32(name, ctx.arguments(call), ctx):
            return False
        chosen_for_rocm = chosen_for_rocm or branch.on_nvidia is False
    _LOGICAL_WARP_FILES[ctx] = chosen_for_rocm
    return chosen_for_rocm


def _width_at_most_32(name: str, arguments: list[Node], ctx: CudaContext) -> bool:
    """The shuffle passes an explicit width of at most 32: a constant expression, or a name every initialisation
    of which in the file gives it such a value (`enum { THREADS_PER_WARP = 32 };` members of several structs)."""
    index = (2 if name.endswith("_sync") else 1) + 1
    if len(arguments) <= index:
        return False
    width = arguments[index]
    value = constant_value(ctx, width)
    if value is None and width.type == "identifier":
        pattern = rf"\b{re.escape(ctx.text(width))}\s*=\s*(\w+)\s*[;,}}]"
        values = {parse_int(v) for v in re.findall(pattern, ctx.content.decode("utf-8", "replace"))}
        value = values.pop() if len(values) == 1 else None
    return value is not None and 0 < value <= 32


# 64-lane arithmetic: a split of ids into 64-lane waves (`& 63`, `% 64`, `>> 6`, `/ 64`), or a shuffle by 32 lanes
# (the first step of a 64-lane butterfly).
_WAVE64_TEXTS = (
    *(operator_with_literal(operator, value) for operator, value in {"%": 64, "/": 64, "&": 63, ">>": 6}.items()),
    re.compile(rb"shfl\w*\s*\((?:[^;()]|\([^;()]*\))*?,\s*32\s*[,)]"),
)
_WAVE64_FUNCTIONS: weakref.WeakKeyDictionary[CudaContext, dict[int, bool]] = weakref.WeakKeyDictionary()


def in_wave64_code(node: Node, ctx: CudaContext) -> bool:
    """The function around `node` already does 64-lane arithmetic (`lane = threadIdx.x & 63`, a shuffle by 32):
    it is written for 64-lane waves, and a 32 there is a half-wave on purpose (an MFMA tile, a 32-lane segment)."""
    function = ctx.function_of(node)
    if function is None:
        return False
    known = _WAVE64_FUNCTIONS.setdefault(ctx, {})
    if function.start_byte not in known:
        text = ctx.content[function.start_byte : function.end_byte]
        known[function.start_byte] = any(pattern.search(text) for pattern in _WAVE64_TEXTS)
    return known[function.start_byte]


def reduction_over_32_lanes(loop: Node, ctx: CudaContext) -> str | None:
    """The counter of a shuffle reduction loop sized for 32 lanes: halving from 16
    (`for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(m, v, o)`) or doubling from 1 up to 32, with the
    counter as the shuffle's offset; not among the first 32 threads on purpose, nor with an explicit width, nor a
    per-lane transform (`_lane_bit_tested`)."""
    counter = loop_counter(loop, ctx)
    body = loop.child_by_field_name("body")
    if counter is None or body is None:
        return None
    variable, start = counter[0], ctx.int_value(counter[1])
    ascending = start == 1 and _bounded_by_32(loop.child_by_field_name("condition"), variable, ctx)
    if (start != 16 and not ascending) or _in_first_32_threads(loop, ctx) or _lane_bit_tested(body, variable, ctx):
        return None
    if in_32_lane_logical_warps(loop, ctx):
        return None  # each 32-lane half reduces its own logical warp
    for call in ctx.descendants(body, "call_expression"):
        found = shuffle(call, ctx)
        if found is None or (not ascending and found[0] not in _DESCENDING_SHUFFLES):
            continue
        offset = _shuffle_offset(*found)
        if offset is not None and ctx.text(offset).strip() == variable and not _has_subgroup_width(*found, ctx):
            return variable
    return None


def _lane_bit_tested(body: Node, variable: str, ctx: CudaContext) -> bool:
    """Each step tests the thread's own bit of the counter (`t & i`): a butterfly transform (a Hadamard or a
    bitonic step) that leaves each lane its own value, no warp total. Its xor offsets stay inside aligned 32-lane
    groups, which a 64-lane wavefront runs as two independent groups exactly as two NVIDIA warps."""
    for test in ctx.descendants(body, "binary_expression"):
        parts = binary_parts(test, ctx)
        if parts is None or parts[1] != "&":
            continue
        for counter, index in ((parts[0], parts[2]), (parts[2], parts[0])):
            if ctx.text(counter).strip() == variable and is_thread_index(index, ctx):
                return True
    return False


def _in_first_32_threads(node: Node, ctx: CudaContext) -> bool:
    """Under `if (tid < 32)`: a reduction among 32 threads on purpose (lane 0's result stays right)."""
    for ancestor in ctx.ancestors(node):
        if ancestor.type == "function_definition":
            return False
        condition = ancestor.child_by_field_name("condition") if ancestor.type == "if_statement" else None
        test = binary_parts(
            condition.named_children[0] if condition is not None and condition.named_child_count else None, ctx
        )
        if test is not None and test[1] == "<" and ctx.int_value(test[2]) == 32 and is_thread_index(test[0], ctx):
            return True
    return False


def _bounded_by_32(condition: Node | None, variable: str, ctx: CudaContext) -> bool:
    """`i < 32` or `i <= 16`: an ascending butterfly that stops at the 32-lane boundary."""
    test = binary_parts(condition, ctx)
    if test is None or ctx.text(test[0]).strip() != variable:
        return False
    bound = ctx.int_value(test[2])
    return (test[1] == "<" and bound == 32) or (test[1] == "<=" and bound == 16)


# --- 32-lane splits of thread ids ------------------------------------------------------------------------
# The right operand that makes each operator split thread ids into 32-lane warps (`% 32`, `& 31`, `>> 5`).
LANE_SPLITS = {"%": 32, "/": 32, "&": 31, ">>": 5}
# Each split with its number: lane arithmetic cannot be found where none matches (one pattern per operator:
# one alternation of all four took five times as long).
SPLIT_TEXTS = tuple(operator_with_literal(operator, value) for operator, value in LANE_SPLITS.items())


def split_offsets(ctx: CudaContext) -> list[int]:
    """Where the file's text holds one of LANE_SPLITS with its literal: anchors for `visits_needed`."""
    return [match.start() for split in SPLIT_TEXTS for match in split.finditer(ctx.content)]


def lane_split(node: Node, ctx: CudaContext) -> tuple[Node, str] | None:
    """(left operand, operator) of `x % 32`, `x / 32`, `x & 31` (also `& 0x1f`) or `x >> 5`."""
    parts = binary_parts(node, ctx)
    if parts is None or parts[2].type != "number_literal":
        return None
    left, operator, right = parts
    if LANE_SPLITS.get(operator) is None or parse_int(ctx.text(right)) != LANE_SPLITS[operator]:
        return None
    return left, operator


# --- wave-size selectors ----------------------------------------------------------------------------------
# Preprocessor tests that pick the wave size per target: a 32 under them is the RDNA (wave32) arm.
_WAVE_AWARE_TEST = re.compile(r"__(?:GFX|gfx)\w*__|WAVEFRONT|wave_?size|WAVE(?:32|64)", re.IGNORECASE)


def in_wave_selector(ctx: CudaContext, span: Span) -> bool:
    """Inside an `#if` chain that tests the target's wave size (`__GFX9__`, `__AMDGCN_WAVEFRONT_SIZE`)."""
    chains = chains_around(ctx, span.start_byte, later_arms=False)
    return any(_WAVE_AWARE_TEST.search(condition) for chain in chains for condition in chain)


# A device pass targets one GPU: the gfx family decides its wave size. `__GFX9__`, `__gfx942__`, `__gfx90a__`,
# `__gfx9_4_generic__` name GCN/CDNA families (wave64); `__GFX11__`, `__gfx1100__`, `__gfx1250__` RDNA ones (wave32).
_FAMILY_MACRO = re.compile(
    r"__GFX(?P<upper>\d+)__|__gfx(?P<lower>\d+?)[0-9a-f]{2}__|__gfx(?P<generic>\d+)(?:_\d+)?_generic__"
)
# GFX9 (Vega, CDNA: MI100 ... MI355) runs 64-lane waves, GFX10 and newer (RDNA) 32-lane ones; the ROCm releases
# rocmlint targets (5.0 and later) build for no GFX8 target, so the `#else` of `#if defined(__GFX9__)` is wave32.
_WAVE64_FAMILY = 9
_DEVICE_PASS_MACROS = frozenset({"__HIP_DEVICE_COMPILE__", "__AMDGCN__"})


def wave_size_at(ctx: CudaContext, span: Span) -> int | None:
    """The wave size of every ROCm device pass that compiles `span`, as its `#if` arms decide: 32 in the `#else`
    of `#if defined(__GFX9__)` or under `__GFX11__` / `__AMDGCN_WAVEFRONT_SIZE == 32`, 64 under `__gfx942__`;
    None when both kinds of pass may compile it (or neither does). An NVIDIA build may compile the code too: its
    warps are 32 lanes, so a 32 there is right on both."""
    arms = ctx.preprocessor.open_arms(span.start_byte)
    if not any(
        is_amd_target_macro(name) for earlier, own in arms for c in (*earlier, own or "") for name in names_in(c)
    ):
        return None  # no arm tests the target: both wave sizes compile it
    rocm = ctx.preprocessor.macro_lookup("rocm", span.start_byte)
    compiled = {size: _arms_entered(arms, _device_pass_lookup(size, rocm)) for size in (32, 64)}
    if compiled[64] is False and compiled[32] is not False:
        return 32
    if compiled[32] is False and compiled[64] is not False:
        return 64
    return None


def _device_pass_lookup(wave_size: int, rocm: MacroLookup) -> MacroLookup:
    """What a ROCm device pass for a target with `wave_size` lanes knows of a macro: its gfx family macros, its
    wave size, that it is a device pass; anything else as a ROCm build does."""

    def lookup(name: str, asked: str) -> int | None:
        family = _FAMILY_MACRO.fullmatch(name)
        if family is not None:
            number = int(family.group("upper") or family.group("lower") or family.group("generic"))
            if wave_size == 64:  # every wave64 target is a GFX9 one: `__GFX9__` holds, a named GFX9 target may
                return (1 if family.group("upper") else None) if number == _WAVE64_FAMILY else 0
            return None if number > _WAVE64_FAMILY else 0  # one of the RDNA families and targets, never GFX9
        if name in WAVE_SIZE_MACROS:
            return 1 if asked == "defined" else wave_size
        if name in _DEVICE_PASS_MACROS:
            return 1
        return rocm(name, asked)

    return lookup


def _arms_entered(arms: list[tuple[list[str], str | None]], lookup: MacroLookup) -> bool | None:
    """Whether a pass enters every arm of `arms` (`Preprocessor.open_arms`): False when an earlier arm of some
    chain certainly holds or the arm's own condition certainly fails, None when that is unknown."""
    entered: bool | None = True
    for earlier, own in arms:
        values = [evaluate_expression(condition, lookup) for condition in earlier]
        if own is not None:
            values.append(None if (value := evaluate_expression(own, lookup)) is None else int(not value))
        if any(value for value in values):
            return False  # an earlier arm certainly holds, or this one's condition certainly fails
        if None in values:
            entered = None
    return entered


# --- fixes: a 32 constant becomes 64 on CDNA, the NVIDIA text stays -----------------------------------------
_WAVE_FIX_MESSAGE = "define the wave size per ROCm target (64 on GFX8/GFX9 and in the host pass, 32 on RDNA)"
# `#define WARP_SIZE 32`, `#define WARP_SIZE (32u)  // lanes`: the prefix, the literal, the rest of the line.
_DEFINE_LITERAL = re.compile(
    r"(?P<head>[ \t]*#[ \t]*define[ \t]+\w+[ \t(]+)(?P<literal>(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*)(?P<tail>.*)", re.DOTALL
)
# The statements a constant's declaration can be wrapped as (not the `for` loop that declares it).
_DECLARATIONS = frozenset({"declaration", "field_declaration", "type_definition"})


def wave_size_define_fix(define: Define, ctx: CudaContext) -> Fix | None:
    """`#define WARP_SIZE 32` in a ROCm-gated wave selector; only a literal value (`32`, `(32)`, `32u`) is
    rewritten."""
    text = ctx.text(define.directive)
    match = _DEFINE_LITERAL.fullmatch(text)
    if match is None or "\\" in text or parse_int(match.group("literal")) != 32:
        return None  # `#define WARP_SIZE HW_WARP`, a continued line: the value is not ours to rewrite
    wave64 = match.group("head") + _with_value(match.group("literal"), 64) + match.group("tail")
    return ctx.gated_fix(_WAVE_FIX_MESSAGE, define.directive, wave_selector(wave64, text))


def wave_size_constant_fix(name_node: Node, value: Node, ctx: CudaContext) -> Fix | None:
    """A 32 constant's declaration (or `enum {...};`) in a ROCm-gated wave selector, with 64 for 32."""
    is_enumerator = name_node.parent is not None and name_node.parent.type == "enumerator"
    statement: Span | None = enum_declaration(ctx, name_node) if is_enumerator else None
    if statement is None:
        statement = ctx.statement_of(name_node)
        if statement is None or statement.type not in _DECLARATIONS:
            return None
    wave64 = ctx.rocm_variant(statement, [(value, _with_value(ctx.text(value), 64))])
    return ctx.gated_fix(
        _WAVE_FIX_MESSAGE, statement, wave_selector(wave64, ctx.text(statement), indent_of(ctx, statement))
    )


# --- a literal 32 that stands for a warp outside lane arithmetic (ROC208, warning) -----------------------------------
# Names for a block's thread count or x-extent (not a thread index): `THREADS`, `kNThreads`, `NUM_THREADS`,
# `block_size`, `blockSize`, `MAX_BLOCK_SIZE`, `threads_per_block`, `block_x`.
_THREAD_COUNT_NAME = re.compile(
    r"(?:k_?|max_?|n_?|num_?)*(?:threads(?:_?per_?block)?|block_?(?:size|threads)|block_?(?:dim_?)?x)", re.IGNORECASE
)
# A block's x-extent, whose rows a min() clamp to 32 makes one warp each (`block_x`, `blockDimX`).
_BLOCK_X_NAME = re.compile(r"block_?(?:dim_?)?x", re.IGNORECASE)
_WARP_COUNT_OPERATORS = frozenset({"/", ">", ">=", "<", "<="})
_CLAMPS = frozenset({"min", "max", "std::min", "std::max", "::min", "::max"})


def is_thread_count(node: Node, ctx: CudaContext) -> bool:
    """`blockDim.x`, or a variable or constant named for a block's thread count (`THREADS`, `block_size`)."""
    node = bare(node)
    if builtin_index(node, ctx) == "blockDim":
        return True
    return node.type == "identifier" and bool(_THREAD_COUNT_NAME.fullmatch(ctx.text(node)))


def warp_of_32(literal: Node, ctx: CudaContext) -> str | None:
    """What a literal 32 does when it stands for a 32-lane warp outside lane arithmetic, None otherwise:
    - `THREADS / 32`, `blockSize > 32`: a block's thread count divided by, or compared with, one warp;
    - `warp_size = min(n, 32)`, `(n < 32) ? n : 32`, `block_x = max(32, ...)`: a warp size clamped to 32 lanes, or
      a block's x-extent kept at least one 32-lane warp;
    - `dim3 threads(32, 4)`: a two-dimensional block whose x-extent is one 32-lane warp (each row a warp).
    Whether the file works on warps at all (shuffles, ballots) is the caller's evidence."""
    if ctx.int_value(literal) != 32:
        return None
    parent = literal.parent
    if parent is None:
        return None
    if parent.type == "binary_expression":
        return _counted_warps(literal, parent, ctx)
    if parent.type == "conditional_expression" and literal in (
        parent.child_by_field_name("consequence"),
        parent.child_by_field_name("alternative"),
    ):
        return _clamped(parent, "min", ctx)
    call = parent.parent if parent.type == "argument_list" else None
    if call is None:
        return None
    if call.type == "call_expression" and ctx.call_name(call) in _CLAMPS:
        return _clamped(call, (ctx.call_name(call) or "").rsplit(":", 1)[-1], ctx)
    is_dim3 = (call.type == "call_expression" and ctx.call_name(call) == "dim3") or (
        call.type == "init_declarator" and _declared_type(call, ctx) == "dim3"
    )
    extents = parent.named_children
    # Rows only when there are several: `dim3 threads(32, 1, 1)` is a one-dimensional block of 32 threads.
    rows = len(extents) >= 2 and any(ctx.int_value(extent) != 1 for extent in extents[1:])
    if not (is_dim3 and extents[0] == literal and rows) or _block_of_a_warp_free_kernel(call, ctx):
        return None
    return "a block row of one warp"


def _block_of_a_warp_free_kernel(block: Node, ctx: CudaContext) -> bool:
    """Whether `block` is the block of a launch (`k<<<grid, dim3(32, 8)>>>(...)`) of kernels this file defines, none
    of which works on warps (shuffles, ballots, warp reductions, `warpSize`): its rows of 32 threads index a tile's
    columns, which a 64-lane wavefront holding two rows computes the same."""
    config = block.parent
    if config is None or config.type != "kernel_call_syntax":
        return False
    arguments = [child for child in config.named_children if child.type != "comment"]
    callee = config.parent.child_by_field_name("function") if config.parent is not None else None
    if len(arguments) < 2 or arguments[1] != block or callee is None:
        return False
    if callee.type == "template_function":
        callee = callee.child_by_field_name("name")
    if callee is None or callee.type != "identifier":
        return False
    name = ctx.text(callee)
    kernels = [
        definition
        for definition in ctx.descendants(ctx.tree.root_node, "function_definition")
        if (declarator := definition.child_by_field_name("declarator")) is not None
        and (named := declarator.child_by_field_name("declarator")) is not None
        and ctx.text(named) == name
    ]
    words = (*WORKS_ON_WARPS, b"warpsize", b"lane")
    return bool(kernels) and not any(
        word in ctx.content[kernel.start_byte : kernel.end_byte].lower() for kernel in kernels for word in words
    )


def _counted_warps(literal: Node, expression: Node, ctx: CudaContext) -> str | None:
    parts = binary_parts(expression, ctx)
    if parts is None or parts[1] not in _WARP_COUNT_OPERATORS:
        return None
    other = parts[0] if parts[2] == literal else parts[2]
    if not is_thread_count(other, ctx):
        return None
    if parts[1] == "/" and builtin_index(bare(other), ctx) == "blockDim":
        return None  # ROC208's `blockDim.x / 32`
    return "warps per block" if parts[1] == "/" else "a block size against one warp"


def block_of_32_warps(name: str, value: int, ctx: CudaContext) -> bool:
    """`#define NUM_WARPS 32` (or more) where the file multiplies it by a warp size (`NUM_WARPS * WARP_SIZE`):
    a block of that many warps, 1024 threads with 32 lanes but over HIP's 1024-thread limit with 64."""
    if value < 32 or not _WARP_COUNT.fullmatch(name):
        return False
    spelled = re.escape(name.encode())
    products = re.finditer(rb"\b" + spelled + rb"\s*\*\s*(\w+)|(\w+)\s*\*\s*" + spelled + rb"\b", ctx.content)
    for match in products:
        other = (match.group(1) or match.group(2)).decode()
        if is_warp_constant_name(other) or other in ("warpSize", "C10_WARP_SIZE", "32"):
            return True
    return False


def dim3_arguments(node: Node, ctx: CudaContext) -> list[tuple[Node, list[Node]]]:
    """The argument lists of the `dim3` values `node` builds, each with its extents: a `dim3(a, b)` call, or a
    declaration `dim3 threads(a, 2 * b), tiles{a, b};`. C++ reads `dim3 threads(a, b)` with plain names as a
    function declaration: its extents are then the parameters' type names, unless a parameter has a name of its
    own (a real function declaration)."""
    if node.type == "call_expression":
        arguments = node.child_by_field_name("arguments")
        return [(arguments, _extents(arguments))] if arguments is not None and ctx.call_name(node) == "dim3" else []
    type_node = node.child_by_field_name("type")
    if type_node is None or ctx.text(type_node) != "dim3":
        return []
    found: list[tuple[Node, list[Node]]] = []
    for declarator in node.children_by_field_name("declarator"):
        if declarator.type == "init_declarator":
            arguments = declarator.child_by_field_name("value")
            if arguments is not None and arguments.type not in ("argument_list", "initializer_list"):
                continue  # `= dim3(a, b)` is a call of its own; `= other` copies a block
        elif declarator.type == "function_declarator":
            arguments = declarator.child_by_field_name("parameters")
            if arguments is not None and any(p.child_by_field_name("declarator") for p in arguments.named_children):
                continue
        else:
            continue
        if arguments is not None:
            found.append((arguments, _extents(arguments)))
    return found


def _extents(arguments: Node) -> list[Node]:
    return [
        (child.child_by_field_name("type") or child) if child.type == "parameter_declaration" else child
        for child in arguments.named_children
        if child.type != "comment"
    ]


def warps_in_dim3_block(extents: list[Node], ctx: CudaContext) -> int | None:
    """The warp count of `dim3 threads(kThreadsPerWarp, kWarpsPerBlock)` when it is 32 or more: a block whose
    rows are warps, named by a warp-size constant (a literal 32 is `warp_of_32`'s), and whose row count is a
    constant. `extents` are the `dim3` arguments (`dim3_arguments`). 1024 threads with 32 lanes, over HIP's limit with 64."""
    if len(extents) < 2 or bare(extents[0]).type not in ("identifier", "type_identifier"):
        return None
    width = ctx.text(bare(extents[0]))
    if not (is_warp_constant_name(width) or width == "warpSize"):
        return None
    rows_node = bare(extents[1])
    if rows_node.type in ("identifier", "type_identifier"):
        found = initialiser(ctx, rows_node, START)
        rows = constant_value(ctx, found[0], found[1]) if found is not None else None
    else:
        rows = constant_value(ctx, rows_node)
    return rows if rows is not None and rows >= 32 else None


def asserted_warp_size_32(assertion: Node, ctx: CudaContext) -> Node | None:
    """The condition of `static_assert(kWarpSize == 32)` (or `32 == ns::WARP_SIZE`): a warp-size constant,
    by its name, asserted to be 32 lanes as the whole condition (an `||` with 64 accepts both widths)."""
    condition = assertion.child_by_field_name("condition") or next(iter(assertion.named_children), None)
    parts = binary_parts(bare(condition), ctx) if condition is not None else None
    if parts is None or parts[1] != "==":
        return None
    left, _, right = parts
    literal, other = (left, bare(right)) if ctx.int_value(left) == 32 else (right, bare(left))
    if ctx.int_value(literal) != 32:
        return None
    if other.type == "qualified_identifier":
        other = other.child_by_field_name("name") or other
    name = ctx.text(other) if other.type == "identifier" else ""
    return condition if is_warp_constant_name(name) or name == "C10_WARP_SIZE" else None


def _clamped(value: Node, clamp: str, ctx: CudaContext) -> str | None:
    """`value` (a min/max call or a conditional) as the whole value given to a warp-size or thread-count name."""
    holder = value.parent
    while holder is not None and holder.type == "parenthesized_expression":
        holder = holder.parent
    if holder is None or holder.type not in ("init_declarator", "assignment_expression"):
        return None
    target = holder.child_by_field_name("declarator" if holder.type == "init_declarator" else "left")
    name = ctx.text(target) if target is not None else ""
    if is_warp_constant_name(name) or name in ("warpSize", "warp_size"):
        return "a warp size clamped to 32 lanes"
    if clamp == "max" and target is not None and is_thread_count(target, ctx):
        return "a block kept at least one 32-lane warp"
    if clamp == "min" and target is not None and _BLOCK_X_NAME.fullmatch(ctx.text(target)):
        return "a block row capped at one 32-lane warp"
    return None


def _declared_type(declarator: Node, ctx: CudaContext) -> str | None:
    declaration = declarator.parent
    type_node = declaration.child_by_field_name("type") if declaration is not None else None
    return ctx.text(type_node) if type_node is not None else None


# --- per-warp arrays read at a lane index (ROC208, warning) ------------------------------------------------------
# A size counted in warps: `NUM_WARPS`, `kWarpsPerBlock`, `THREADS / WARP_SIZE`, `blockDim.x / 32`; not a warp size
# itself (`warpSize`, `WARPSIZE`: a lane count, which a lane index never reaches).
_WARP_COUNT_SIZE = re.compile(r"warps(?!ize)|/\s*\(?\s*(?:\w*warp_?size\w*|32)\b", re.IGNORECASE)
_LANE_NAME = re.compile(r"lane_?(?:id|idx|index)?", re.IGNORECASE)
_DECLARATIONS_WITH_SIZES = frozenset({"declaration", "field_declaration"})


def warp_array_at_lane(subscript: Node, ctx: CudaContext) -> str | None:
    """The array of `sums[lane_id]` when its declaration sizes it in warps (`__shared__ float sums[NUM_WARPS]`)
    and no test of the lane or thread index guards the access: the code assumes a block holds as many warps
    as a warp has lanes (1024 threads in 32-lane warps); with 64-lane waves there are half as many warps
    and lanes past them index out of bounds."""
    array, indices = subscript.child_by_field_name("argument"), subscript.child_by_field_name("indices")
    index = indices.named_children[0] if indices is not None and len(indices.named_children) == 1 else None
    if array is None or array.type != "identifier" or index is None:
        return None
    lane = bare(index)
    if lane.type != "identifier" or not _LANE_NAME.fullmatch(ctx.text(lane)):
        return None
    size = _array_size(array, ctx)
    if size is None or not _WARP_COUNT_SIZE.search(size) or _guarded(subscript, ctx.text(lane), ctx):
        return None
    return ctx.text(array)


def _array_size(array: Node, ctx: CudaContext) -> str | None:
    """The size expression, as written, of the one-dimensional array `array` names."""
    declaration = ctx.declaration_of(array)
    if declaration is None or declaration.type not in _DECLARATIONS_WITH_SIZES:
        return None
    for declarator in declaration.children_by_field_name("declarator"):
        name, sizes = array_dimensions(declarator)
        if name is not None and ctx.text(name) == ctx.text(array) and len(sizes) == 1:
            return ctx.text(sizes[0])
    return None


def _guarded(node: Node, lane: str, ctx: CudaContext) -> bool:
    """Under an `if` or `?:` whose test reads the lane or a thread index (`lane < NUM_WARPS ? s[lane] : 0`)."""
    tested = re.compile(rf"\b(?:{re.escape(lane)}|threadIdx|tid)\b")
    for ancestor in ctx.ancestors(node):
        if ancestor.type in ("function_definition", "lambda_expression"):
            return False
        condition = ancestor.child_by_field_name("condition")
        if ancestor.type in ("if_statement", "conditional_expression", "while_statement", "for_statement") and (
            condition is not None and tested.search(ctx.text(condition))
        ):
            return True
    return False


__all__ = [
    "LANE_SPLITS",
    "SPLIT_TEXTS",
    "builtin_index",
    "enum_declaration",
    "in_32_lane_logical_warps",
    "in_32_lane_subgroups",
    "in_wave_selector",
    "indent_of",
    "is_lane_or_warp_name",
    "is_thread_count",
    "is_thread_index",
    "is_warp_constant_name",
    "lane_split",
    "logical_32_lane_warps",
    "reduction_over_32_lanes",
    "split_offsets",
    "unrolled_from_16",
    "warp_array_at_lane",
    "warp_of_32",
    "wave_selector",
    "wave_size_at",
    "wave_size_constant_fix",
    "wave_size_define_fix",
]


# --- warps counted as 32 lanes outside lane arithmetic: where ROC208 reports them -------------------------------
# A file that shuffles, ballots or reduces across a warp: its 32s and warp counts are about warps.
WORKS_ON_WARPS = (b"shfl", b"ballot", b"warpreduce", b"warp_reduce")


def works_on_warps(ctx: CudaContext) -> bool:
    """A file that shuffles, ballots or reduces across a warp, or reads the builtin `warpSize` (warp-synchronous
    reductions `if (tid < warpSize)`, tiles of one warp per row): its 32s and warp counts are about warps."""
    return ctx.mentions(*WORKS_ON_WARPS, lowered=True) or b"warpSize" in ctx.words


def warp_count_literal(literal: Node, ctx: CudaContext) -> tuple[Node, str] | None:
    """The expression a literal 32 standing for a warp sits in (for an argument, the clamp or `dim3` call), with
    what it does (`warp_of_32`), unless a wave-size selection chose it."""
    what = warp_of_32(literal, ctx)
    if what is None or in_wave_selector(ctx, literal) or in_32_lane_logical_warps(literal, ctx):
        return None
    shown = literal.parent or literal
    if shown.type == "argument_list" and shown.parent is not None:
        shown = shown.parent
    return shown, what


def define_of_32_warps(define: Define, ctx: CudaContext) -> int | None:
    """The warp count of `#define NUM_WARPS 32` in a file that works on warps (`block_of_32_warps`), outside a
    wave-size selection."""
    if define.parameters is not None or not works_on_warps(ctx):
        return None
    value = parse_int(ctx.resolve_text(define.value, define.directive))
    if value is None or not block_of_32_warps(define.name, value, ctx) or in_wave_selector(ctx, define.directive):
        return None
    return value


def dim3_blocks_of_32_warps(node: Node, ctx: CudaContext) -> list[tuple[Node, int]]:
    """The `dim3` argument lists `node` builds (`dim3_arguments`) that make a block of 32 or more warps, each with
    its warp count, outside a wave-size selection."""
    blocks = ((arguments, warps_in_dim3_block(extents, ctx)) for arguments, extents in dim3_arguments(node, ctx))
    return [
        (arguments, warps) for arguments, warps in blocks if warps is not None and not in_wave_selector(ctx, arguments)
    ]


def shortened(text: str) -> str:
    """Source text for a message: one line, at most 60 characters."""
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


# --- blocks that are not whole 64-lane waves under warp-transposing block collectives (ROC208) ------------------
# cub's (and hipcub's) warp-transpose block loads and stores exchange data warp by warp: rocPRIM asserts the block
# is a multiple of the hardware warp size (`block_load.hpp`, "BlockSize must be a multiple of hardware warpsize").
# The algorithm must be named outright: `THREADS >= WARP_SIZE ? ..._WARP_TRANSPOSE : ..._DIRECT` chooses per wave.
_WARP_TRANSPOSE = re.compile(rb"\bBLOCK_(?:LOAD|STORE)_WARP_TRANSPOSE\w*")
_WARP_TRANSPOSE_ARGUMENT = re.compile(r"(?:\w+::)*BLOCK_(?:LOAD|STORE)_WARP_TRANSPOSE\w*")
_BLOCK_COLLECTIVES = frozenset({"BlockLoad", "BlockStore"})
_SCOPES = ("function_definition", "struct_specifier", "class_specifier")
_TRANSPOSED_BLOCKS: weakref.WeakKeyDictionary[CudaContext, tuple[frozenset[str], tuple[Node, ...]]] = (
    weakref.WeakKeyDictionary()
)
_TEMPLATE_PARAMETERS: weakref.WeakKeyDictionary[CudaContext, dict[str, tuple[list[str], Node | None]]] = (
    weakref.WeakKeyDictionary()
)


def is_half_wave_block(value: int | None) -> bool:
    """A thread count made of 32-lane warps but not of 64-lane wavefronts (32, 96, 160 ...)."""
    return value is not None and value > 0 and value % 32 == 0 and value % 64 != 0


def warp_transposed_blocks(ctx: CudaContext) -> tuple[frozenset[str], tuple[Node, ...]]:
    """The block sizes of this file's warp-transposing `BlockLoad`/`BlockStore` instantiations (their second
    template argument): the names given there (`THREADS`, `kNThreads`), and the arguments themselves."""
    if ctx in _TRANSPOSED_BLOCKS:
        return _TRANSPOSED_BLOCKS[ctx]
    names: set[str] = set()
    sizes: list[Node] = []
    # Every match holds this word: a substring search skips the files without it, where the pattern's leading
    # `\b` would have been tried at every byte.
    matches = _WARP_TRANSPOSE.finditer(ctx.content) if b"_WARP_TRANSPOSE" in ctx.content else ()
    for match in matches:
        node = ctx.tree.root_node.descendant_for_byte_range(match.start(), match.end())
        arguments = ctx.enclosing(node, "template_argument_list") if node is not None else None
        collective = arguments.parent if arguments is not None else None
        name = collective.child_by_field_name("name") if collective is not None else None
        if arguments is None or name is None or ctx.text(name) not in _BLOCK_COLLECTIVES:
            continue
        extents = arguments.named_children
        if len(extents) < 4 or not _WARP_TRANSPOSE_ARGUMENT.fullmatch(ctx.text(extents[3])):
            continue
        sizes.append(extents[1])
        names.add(ctx.text(extents[1]))
    _TRANSPOSED_BLOCKS[ctx] = found = (frozenset(names), tuple(sizes))
    return found


def half_wave_transposed_block(name_node: Node, value: Node, ctx: CudaContext) -> bool:
    """`constexpr int THREADS = 32;` where `THREADS` sizes a warp-transposing block collective of the same
    function or class (or anywhere, for a file-scope constant)."""
    names, sizes = warp_transposed_blocks(ctx)
    if ctx.text(name_node) not in names or not is_half_wave_block(ctx.int_value(value)):
        return False
    scope = ctx.enclosing(name_node, *_SCOPES)
    return any(
        ctx.text(size) == ctx.text(name_node)
        and (scope is None or scope.start_byte <= size.start_byte < scope.end_byte)
        for size in sizes
    )


def half_wave_template_arguments(arguments: Node, ctx: CudaContext) -> list[tuple[Node, str]]:
    """The literal thread counts of 32-lane (not 64-lane) multiples among `arguments` (a template argument list),
    each with the template parameter it gives, that size a warp-transposing block collective: the collective's own
    size (`BlockLoad<T, 32, 4, BLOCK_LOAD_WARP_TRANSPOSE>`), or a same-file template's parameter that sizes one
    (`launch<32, 4, T>(...)` of a `launch` whose `Traits<kNThreads, ...>` loads with a warp transpose)."""
    _, sizes = warp_transposed_blocks(ctx)
    if not sizes:
        return []
    owner = arguments.parent.child_by_field_name("name") if arguments.parent is not None else None
    if owner is None:
        return []
    if ctx.text(owner) in _BLOCK_COLLECTIVES:
        size = next((s for s in sizes if s.parent == arguments), None)
        return [(size, "the block size")] if size is not None and is_half_wave_block(ctx.int_value(size)) else []
    parameters = _template_parameters(ctx).get(ctx.text(owner), ([], None))[0]
    found: list[tuple[Node, str]] = []
    for index, argument in enumerate(arguments.named_children[: len(parameters)]):
        if argument.type != "number_literal" or not is_half_wave_block(ctx.int_value(argument)):
            continue
        if _sizes_transposes(ctx.text(owner), index, ctx, depth=2):
            found.append((argument, f"`{parameters[index]}`"))
    return found


def _sizes_transposes(template: str, index: int, ctx: CudaContext, depth: int) -> bool:
    """Whether the `index`-th parameter of the same-file `template` sizes a warp-transposing collective in its
    definition: as the collective's block size, through a member it initialises (`static constexpr int kNThreads =
    kNThreads_;`), or handed on as an argument of another such template (`Traits<kNThreads, ...>`), `depth` deep."""
    parameters, definition = _template_parameters(ctx).get(template, ([], None))
    if definition is None or index >= len(parameters) or not parameters[index]:
        return False
    parameter = parameters[index]
    text = ctx.text(definition)
    aliases = {parameter, *re.findall(rf"\b(\w+)\s*=\s*{re.escape(parameter)}\s*;", text)}
    _, sizes = warp_transposed_blocks(ctx)
    inside = [s for s in sizes if definition.start_byte <= s.start_byte < definition.end_byte]
    if any(ctx.text(size) in aliases for size in inside):
        return True
    if depth == 0:
        return False
    for arguments in ctx.descendants(definition, "template_argument_list"):
        owner = arguments.parent.child_by_field_name("name") if arguments.parent is not None else None
        if owner is None or ctx.text(owner) == template:
            continue
        for position, argument in enumerate(arguments.named_children):
            if ctx.text(argument) in aliases and _sizes_transposes(ctx.text(owner), position, ctx, depth - 1):
                return True
    return False


def _template_parameters(ctx: CudaContext) -> dict[str, tuple[list[str], Node | None]]:
    """Name of each function or class template this file defines -> its template parameters' names and its
    definition (a body's; None when only declared). A name declared with different parameters is left out."""
    if ctx in _TEMPLATE_PARAMETERS:
        return _TEMPLATE_PARAMETERS[ctx]
    found: dict[str, tuple[list[str], Node | None]] = {}
    ambiguous: set[str] = set()
    for template in ctx.descendants(ctx.tree.root_node, "template_declaration"):
        parameter_list = template.child_by_field_name("parameters")
        name = _templated_name(template, ctx)
        if parameter_list is None or name is None:
            continue
        parameters = [_parameter_name(p, ctx) for p in parameter_list.named_children if p.type != "comment"]
        defined = template if b"{" in ctx.content[template.start_byte : template.end_byte] else None
        known_parameters, known_definition = found.setdefault(name, (parameters, defined))
        if known_parameters != parameters:
            ambiguous.add(name)
        elif known_definition is None and defined is not None:
            found[name] = (parameters, defined)
    _TEMPLATE_PARAMETERS[ctx] = known = {n: p for n, p in found.items() if n not in ambiguous}
    return known


def _templated_name(template: Node, ctx: CudaContext) -> str | None:
    """`launch` for `template <...> void launch(...)`, `Traits` for `template <...> struct Traits {...}`."""
    for child in template.named_children:
        if child.type in ("struct_specifier", "class_specifier"):
            name = child.child_by_field_name("name")
            return ctx.text(name) if name is not None else None
        if child.type in ("function_definition", "declaration"):
            declarator = child.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "function_declarator":
                declarator = declarator.child_by_field_name("declarator")
            name = declarator.child_by_field_name("declarator") if declarator is not None else None
            return ctx.text(name) if name is not None and name.type == "identifier" else None
    return None


def _parameter_name(parameter: Node, ctx: CudaContext) -> str:
    """`kNThreads` for `int kNThreads` or `int kNThreads = 128`, `T` for `typename T`; "" when unnamed."""
    name = parameter.child_by_field_name("declarator") or parameter.child_by_field_name("name")
    if name is None:
        name = next((c for c in parameter.named_children if c.type == "type_identifier"), None)
    return ctx.text(name) if name is not None and name.type in ("identifier", "type_identifier") else ""


# --- the device pass's wave size, which the host pass lacks (ROC209) ---------------------------------------------
_DEVICE_WAVE_MACROS: weakref.WeakKeyDictionary[CudaContext, frozenset[str]] = weakref.WeakKeyDictionary()
_WARPSIZE_MACROS: weakref.WeakKeyDictionary[CudaContext, frozenset[str]] = weakref.WeakKeyDictionary()


def device_wave_size_macros(ctx: CudaContext) -> frozenset[str]:
    """The compiler's device-pass wave size (`__AMDGCN_WAVEFRONT_SIZE`) and the macros this file or its headers
    define, for ROCm, as it (`#define BNB_WARP_SIZE __AMDGCN_WAVEFRONT_SIZE`, whatever another arm defines): only
    a device pass knows its target, so host code reading one gets no wave size, or a fixed default."""
    if ctx in _DEVICE_WAVE_MACROS:
        return _DEVICE_WAVE_MACROS[ctx]
    own = _own_macros_for(ctx, WAVE_SIZE_MACROS)
    _DEVICE_WAVE_MACROS[ctx] = found = frozenset({*WAVE_SIZE_MACROS, *own, *ctx.options.project.device_wave_sizes})
    return found


def constant_warpsize_uses(ctx: CudaContext, span: Span) -> list[Node]:
    """The names in `span` standing for HIP's `warpSize` (itself or a macro of this file defined as it) where C++
    needs a constant expression: what a fix replaces with a target's wave size."""
    macros = warpsize_macros(ctx)
    return [
        node
        for node in identifiers_in(ctx, span)
        if (ctx.text(node) in macros or is_builtin_warpsize(node, ctx)) and constant_context(node, ctx) is not None
    ]


def warpsize_macros(ctx: CudaContext) -> frozenset[str]:
    """Object-like macros of this file whose value is `warpSize` (`#define WARP_SIZE warpSize`)."""
    if ctx not in _WARPSIZE_MACROS:
        _WARPSIZE_MACROS[ctx] = frozenset(_own_macros_for(ctx, frozenset({"warpSize"})))
    return _WARPSIZE_MACROS[ctx]


def _own_macros_for(ctx: CudaContext, values: frozenset[str]) -> set[str]:
    """This file's object-like macros a ROCm build defines as one of `values` (in parentheses or not)."""
    return {
        name
        for name, defines in ctx.preprocessor.defines.items()
        if any(
            d.parameters is None and d.value.strip("() \t") in values and not ctx.is_rocm_gated(d.directive)
            for d in defines
        )
    }


# --- loops striding a lane index by 32 lanes (ROC208, warning) ----------------------------------------------------
def lane_strided_by_32(loop: Node, ctx: CudaContext) -> Node | None:
    """The update of `for (i = lane * k; ...; i += 32 * k)` (or `i = lane; ...; i += 32`): a loop that starts at a
    lane index (a lane-named variable, or one initialised from `tid % 32` / `tid & 31`) and advances by 32 lanes
    at a time; with the lane split fixed to 64-lane waves, lanes 32-63 cover the next iteration's elements too.
    Also `for (i = 0; ...; i += 32) { c = i + lane; ... }`: the lanes of one warp take the 32 elements from `i`."""
    counter = loop_counter(loop, ctx)
    update = loop.child_by_field_name("update")
    if counter is None or update is None or update.type != "assignment_expression":
        return None
    operator, target, step = (update.child_by_field_name(f) for f in ("operator", "left", "right"))
    if (
        operator is None
        or target is None
        or step is None
        or ctx.text(operator) != "+="
        or ctx.text(target) != counter[0]
    ):
        return None
    factors = _factors(bare(step), ctx)
    # A literal 32: a warp-size constant's stride follows the constant, whose definition is reported and fixed.
    lanes = next((f for f in factors if f.type == "number_literal" and ctx.int_value(f) == 32), None)
    if lanes is None:
        return None
    if not _is_lane_index(counter[1], ctx):
        return update if factors == [lanes] and _lanes_offset_from_zero(loop, counter, ctx) else None
    # The step is 32 times what each lane's start is scaled by: the lanes of one warp cover it once.
    scale = sorted(ctx.text(f) for f in _factors(bare(counter[1]), ctx)[1:])
    return update if sorted(ctx.text(f) for f in factors if f != lanes) == scale else None


def _lanes_offset_from_zero(loop: Node, counter: tuple[str, Node], ctx: CudaContext) -> bool:
    """The loop counts from 0 and its body adds a lane index to the counter (`int c = i + tid`)."""
    body = loop.child_by_field_name("body")
    if body is None or ctx.int_value(bare(counter[1])) != 0:
        return False
    for expression in ctx.descendants(body, "binary_expression"):
        parts = binary_parts(expression, ctx)
        if parts is None or parts[1] != "+":
            continue
        left, right = bare(parts[0]), bare(parts[2])
        for mine, other in ((left, right), (right, left)):
            if mine.type == "identifier" and ctx.text(mine) == counter[0] and _is_lane_index(other, ctx):
                return True
    return False


def _factors(node: Node, ctx: CudaContext) -> list[Node]:
    """`[a, b, c]` for `a * b * c` (through parentheses); `[node]` for anything else."""
    parts = binary_parts(node, ctx)
    if parts is None or parts[1] != "*":
        return [node]
    return [*_factors(bare(parts[0]), ctx), *_factors(bare(parts[2]), ctx)]


def _is_lane_index(value: Node, ctx: CudaContext) -> bool:
    """The first factor of `value` is a lane: `lane`, `lane_id`, a variable initialised from `x % 32`/`x & 31`, or
    `threadIdx.x` (or a variable holding it) in a function that names `threadIdx.y` its warp index."""
    first = _factors(bare(value), ctx)[0]
    if builtin_index(first, ctx) == "threadIdx":
        return _x_is_lane(first, ctx)
    if first.type != "identifier":
        return False
    if is_lane_or_warp_name(ctx.text(first)) and ctx.text(first).lower().startswith("lane"):
        return True
    found = initialiser(ctx, first, START)
    if found is not None and builtin_index(bare(found[0]), ctx) == "threadIdx":
        return _x_is_lane(bare(found[0]), ctx)
    split = lane_split(bare(found[0]), ctx) if found is not None else None
    return split is not None and split[1] in ("%", "&")


def _x_is_lane(index: Node, ctx: CudaContext) -> bool:
    """`index` is `threadIdx.x` and its function stores `threadIdx.y` as a warp index (`int wid = threadIdx.y`): each
    row of the block is one warp, so the x index is the lane (a warp per row, each row reduced by a warp collective of
    the hardware width)."""
    field = index.child_by_field_name("field")
    function = ctx.function_of(index)
    if field is None or ctx.text(field) != "x" or function is None:
        return False
    for declarator in ctx.descendants(function, "init_declarator"):
        name, stored = declarator.child_by_field_name("declarator"), declarator.child_by_field_name("value")
        if name is None or stored is None or not is_lane_or_warp_name(ctx.text(name)):
            continue
        if not ctx.text(name).lower().startswith("lane") and ctx.text(bare(stored)) == "threadIdx.y":
            return True
    return False


def define_used_as_warp(define: Define, ctx: CudaContext) -> str | None:
    """What `#define TILE_W 32` does where the file uses it as a warp (`warp_of_32` on its uses: `dim3 t(TILE_W, 4)`,
    `block_x = std::min(n, TILE_W)`), outside a wave-size selection; None for any other macro. Its name does not say
    warp: the uses do, and the definition is what a port changes."""
    if define.parameters is not None or is_warp_constant_name(define.name) or in_wave_selector(ctx, define.directive):
        return None
    if parse_int(ctx.resolve_text(define.value, define.directive)) != 32:
        return None
    for offset in ctx.word_offsets(define.name):
        use = ctx.tree.root_node.descendant_for_byte_range(offset, offset + len(define.name))
        if use is not None and use.type == "identifier" and ctx.text(use) == define.name:
            what = warp_of_32(use, ctx)
            if what is not None:
                return what
    return None
