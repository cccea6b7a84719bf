"""What rules ask about warps (rocmlint/cuda/warp.py): thread indices, warp-constant and lane/warp names,
reductions and unrolled butterflies over 32 lanes, 32-lane splits of thread ids, wave-size selectors."""

from __future__ import annotations

import pytest
from test_cuda_values import context, initial_value, node_at

from rocmlint.cuda import file_facts, warp


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("int t = threadIdx.x;\nint v = t + 1;\n", True),
        ("int t = blockIdx.x * blockDim.x + threadIdx.x;\nint v = t;\n", False),
        ("int lane_id;\nint v = lane_id;\n", True),
        ("int count;\nint v = count;\n", False),
    ],
)
def test_is_thread_index(code: str, expected: bool) -> None:
    ctx = context("__global__ void k() {\n" + code + "}\n")
    assert warp.is_thread_index(initial_value(ctx, "int v"), ctx) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("WARP_SIZE", True),
        ("kWarpSize", True),
        ("THREADS_PER_WARP", True),
        ("C10_WARP_SIZE", False),
        ("warp_id", False),
        ("PROJ_WARP_SIZE", True),  # a project's prefix
        ("LOG_WARP_SIZE_X", False),
    ],
)
def test_is_warp_constant_name(name: str, expected: bool) -> None:
    assert warp.is_warp_constant_name(name) == expected


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("int w = THREADS / 32;", "warps per block"),
        ("bool many = block_size > 32;", "a block size against one warp"),
        ("int w = n / 32;", None),
        ("int warp_size = min(n, 32);", "a warp size clamped to 32 lanes"),
        ("int block_x = max(32, n);", "a block kept at least one 32-lane warp"),
        ("int block_x = min(32, n);", "a block row capped at one 32-lane warp"),
        ("int threads = min(32, n);", None),
        ("dim3 threads(32, 4);", "a block row of one warp"),
        ("dim3 threads(32);", None),
        ("dim3 threads(32, 1, 1);", None),  # one row: a one-dimensional block of 32 threads
        ("dim3 threads(32, 1, 2);", "a block row of one warp"),
        ("dim3 tile(8, 32);", None),
    ],
)
def test_warp_of_32(statement: str, expected: str | None) -> None:
    ctx = context("void f(int n) {\n  " + statement + "\n}\n")
    literal = next(node for node in ctx.descendants(ctx.tree.root_node, "number_literal") if ctx.text(node) == "32")
    assert warp.warp_of_32(literal, ctx) == expected


@pytest.mark.parametrize(
    ("kernel", "expected"),
    [
        # A tile kernel: its rows of 32 threads index columns, which two rows per 64-lane wavefront compute the same.
        ("out[threadIdx.y * 32 + threadIdx.x] = in[threadIdx.x];", None),
        # A kernel working on warps takes each row for one.
        ("out[threadIdx.x] = __shfl_xor_sync(0xffffffff, in[threadIdx.x], 16);", "a block row of one warp"),
        ("int lane = threadIdx.x; out[lane] = in[lane];", "a block row of one warp"),
    ],
)
def test_a_launch_block_row_is_a_warp_only_for_a_kernel_working_on_warps(kernel: str, expected: str | None) -> None:
    ctx = context(
        "template <int TB>\n__global__ void k(const float* in, float* out) {\n  "
        + kernel
        + "\n}\nvoid f(const float* in, float* out, int n) {\n  k<4><<<n, dim3(32, 8), 0, 0>>>(in, out);\n}\n"
    )
    literal = next(
        node
        for node in ctx.descendants(ctx.tree.root_node, "number_literal")
        if ctx.text(node) == "32" and ctx.enclosing(node, "kernel_call_syntax") is not None
    )
    assert warp.warp_of_32(literal, ctx) == expected


def test_reduction_over_32_lanes() -> None:
    loop = "  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o{width});\n"
    for width, expected in (("", "o"), (", 32", None)):
        ctx = context("__device__ float r(float v) {\n" + loop.format(width=width) + "  return v;\n}\n")
        assert warp.reduction_over_32_lanes(node_at(ctx, "for", "for_statement"), ctx) == expected


def test_butterfly_transform_is_no_reduction() -> None:
    """A Hadamard butterfly testing the thread's own bit of the counter leaves each lane its value: no warp total."""
    body = "    float p = __shfl_xor_sync(0xffffffff, v, i);\n    v = {sign} + p;\n"
    for sign, expected in (("(t & i) ? -v : v", None), ("(n & i) ? -v : v", "i"), ("v", "i")):
        ctx = context(
            "__device__ float h(float v, int n) {\n  int t = threadIdx.x;\n  for (int i = 1; i < 32; i <<= 1) {\n"
            + body.format(sign=sign)
            + "  }\n  return v;\n}\n"
        )
        assert warp.reduction_over_32_lanes(node_at(ctx, "for", "for_statement"), ctx) == expected


def test_in_wave_selector() -> None:
    ctx = context("#if defined(__GFX9__)\n#define W 64\n#else\nint a;\n#endif\nint b;\n")
    assert warp.in_wave_selector(ctx, node_at(ctx, "a", "identifier"))
    assert not warp.in_wave_selector(ctx, node_at(ctx, "b", "identifier"))


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("#if defined(__GFX9__)\nint a;\n#else\nint qq;\n#endif\n", 32),  # GFX9 is wave64: its #else is RDNA
        ("#if defined(__GFX9__)\nint qq;\n#else\nint a;\n#endif\n", 64),
        ("#if defined(__gfx942__) || defined(__gfx950__)\nint qq;\n#endif\n", 64),
        ("#if defined(__gfx942__)\nint a;\n#else\nint qq;\n#endif\n", None),  # gfx90a is wave64 too
        ("#if defined(__GFX11__) || defined(__gfx1250__)\nint qq;\n#endif\n", 32),
        ("#if __AMDGCN_WAVEFRONT_SIZE == 32\nint qq;\n#endif\n", 32),
        ("#if __AMDGCN_WAVEFRONT_SIZE__ == 64\nint a;\n#elif defined(USE_ROCM)\nint qq;\n#endif\n", 32),
        ("#ifdef __gfx9_4_generic__\nint qq;\n#endif\n", 64),
        ("#ifdef USE_ROCM\nint qq;\n#endif\n", None),  # no test of the target
        ("#ifndef __HIP_DEVICE_COMPILE__\n#if defined(__GFX9__)\nint a;\n#else\nint qq;\n#endif\n#endif\n", None),
        ("int qq;\n", None),
    ],
)
def test_wave_size_at(code: str, expected: int | None) -> None:
    ctx = context(code)
    assert warp.wave_size_at(ctx, node_at(ctx, "qq", "identifier")) == expected


def test_lane_splits_and_their_anchors() -> None:
    ctx = context("__global__ void k(int n) {\n  int a = threadIdx.x >> 5, b = n & 0x1f, c = n % 320, d = n / 32;\n}\n")
    splits = [warp.lane_split(n, ctx) for n in ctx.descendants(ctx.tree.root_node, "binary_expression")]
    assert sorted((ctx.text(left), operator) for left, operator in filter(None, splits)) == [
        ("n", "&"),
        ("n", "/"),
        ("threadIdx.x", ">>"),
    ]
    assert sorted(warp.split_offsets(ctx)) == [ctx.content.index(text) for text in (b">> 5", b"& 0x1f", b"/ 32")]


def test_is_lane_or_warp_name() -> None:
    assert [warp.is_lane_or_warp_name(name) for name in ("lane_id", "wid", "warp", "offset", None)] == [
        True,
        True,
        True,
        False,
        False,
    ]


def test_unrolled_from_16() -> None:
    ctx = context(
        "__device__ float f(float v) {\n"
        "  v += __shfl_xor_sync(0xffffffff, v, 16);\n"
        "  v += __shfl_xor_sync(0xffffffff, v, 16, 32);\n"
        "  v += __shfl_up_sync(0xffffffff, v, 16);\n"
        "  return v + __shfl_xor(v, 8);\n"
        "}\n"
    )
    calls = ctx.descendants(ctx.tree.root_node, "call_expression")
    assert [warp.unrolled_from_16(call, ctx) for call in sorted(calls, key=lambda n: n.start_byte)] == [
        "__shfl_xor_sync",
        None,
        None,
        None,
    ]


_WRAPPERS = """\
#ifdef USE_ROCM
#define SHFL_XOR(var, lane) __shfl_xor(var, lane)
#define SHFL_XOR_W(var, lane, width) __shfl_xor(var, lane, width)
#else
#define SHFL_XOR(var, lane) __shfl_xor_sync(uint32_t(-1), var, lane)
#define SHFL_XOR_W(var, lane, width) __shfl_xor_sync(uint32_t(-1), var, lane, width)
#endif
"""


def test_project_macros_wrapping_one_shuffle_are_read_as_it_on_rocm() -> None:
    ctx = context(
        _WRAPPERS + "__device__ float f(float v) {\n"
        "  v += SHFL_XOR(v, 16);\n"
        "  v += SHFL_XOR_W(v, 16, 16);\n"
        "  for (int o = 16; o > 0; o /= 2) v += SHFL_XOR(v, o);\n"
        "  return v + OTHER(v, 16);\n"
        "}\n"
    )
    calls = sorted(ctx.descendants(ctx.tree.root_node, "call_expression"), key=lambda n: n.start_byte)
    shuffled = [warp.shuffle(call, ctx) for call in calls]
    assert [(found[0], [ctx.text(a) for a in found[1] if a]) for found in shuffled if found] == [
        ("__shfl_xor", ["v", "16"]),
        ("__shfl_xor", ["v", "16", "16"]),
        ("__shfl_xor", ["v", "o"]),
    ]
    assert [warp.unrolled_from_16(call, ctx) for call in calls if ctx.call_name(call) != "__shfl_xor"] == [
        "SHFL_XOR",
        None,  # an explicit width of 16: 16-lane groups on purpose
        None,
        None,
    ]
    assert warp.reduction_over_32_lanes(node_at(ctx, "for", "for_statement"), ctx) == "o"


def test_shuffle_wrapper_forms() -> None:
    assert file_facts.shuffle_wrapper_form("__shfl_xor_sync(uint32_t(-1), var, m)", ("var", "m")) == (
        "__shfl_xor_sync(uint32_t(-1), #0, #1)"
    )
    assert file_facts.shuffle_wrapper_form("( __shfl_down(v, d, w) )", ("w", "v", "d")) == "__shfl_down(#1, #2, #0)"
    assert file_facts.shuffle_wrapper_form("__shfl_xor(v, m) + 1", ("v", "m")) is None  # more than one call
    assert file_facts.shuffle_wrapper_form("foo(v, m)", ("v", "m")) is None
    assert file_facts.wrapped_call("__shfl_xor_sync(uint32_t(-1), #0, #1)") == ("__shfl_xor_sync", (None, 0, 1))


def test_functions_doing_64_lane_arithmetic_are_written_for_64_lane_waves():
    from pathlib import Path

    from rocmlint.config import Settings
    from rocmlint.engine import Engine

    def roc208(code: str) -> list[int]:
        report = Engine().check_bytes("k.cu", code.encode(), Settings(root=Path.cwd()))
        return [d.location.line for d in report.diagnostics if d.code == "ROC208"]

    butterfly = (
        "__device__ float f(float v) {\n"
        "  v += __shfl_xor(v, 32, 64);\n"
        "  for (int o = 16; o > 0; o /= 2) v += __shfl_xor(v, o);\n"
        "  return v;\n}\n"
    )
    assert roc208(butterfly) == []
    assert roc208(butterfly.replace("  v += __shfl_xor(v, 32, 64);\n", "")) == [2]  # the loop, one line up
    half_wave = "__device__ int f() { int lane = threadIdx.x & 63; return lane + threadIdx.x / 32; }\n"
    assert roc208(half_wave) == []
    assert roc208(half_wave.replace("& 63", "& 7")) == [1]


@pytest.mark.parametrize(
    ("assertion", "expected"),
    [
        ("static_assert(kWarpSize == 32);", "kWarpSize == 32"),
        ('static_assert(32 == ns::WARP_SIZE, "lanes");', "32 == ns::WARP_SIZE"),
        ("static_assert((C10_WARP_SIZE == 32));", "(C10_WARP_SIZE == 32)"),
        ("static_assert(kWarpSize == 32 || kWarpSize == 64);", None),  # both widths accepted
        ("static_assert(kWarpSize != 32);", None),
        ("static_assert(kWarpSize == 64);", None),
        ("static_assert(kTileRows == 32);", None),  # a 32 that is no warp size
    ],
)
def test_asserted_warp_size_32(assertion: str, expected: str | None) -> None:
    ctx = context(assertion + "\n")
    condition = warp.asserted_warp_size_32(node_at(ctx, "static_assert", "static_assert_declaration"), ctx)
    assert (ctx.text(condition) if condition is not None else None) == expected


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("#define NUM_WARPS 32\n#define THREADS (NUM_WARPS * WARP_SIZE)\n", True),
        ("#define NUM_WARPS 32\nint t = warpSize * NUM_WARPS;\n", True),
        ("#define NUM_WARPS 32\nint t = NUM_WARPS * 32;\n", True),
        ("#define NUM_WARPS 16\nint t = NUM_WARPS * WARP_SIZE;\n", False),  # 1024 threads even at 64 lanes
        ("#define NUM_WARPS 32\nint blocks = n / NUM_WARPS;\n", False),  # no warp size makes it a block
        ("#define NUM_TILES 32\nint t = NUM_TILES * WARP_SIZE;\n", False),  # no warp count
    ],
)
def test_block_of_32_warps(code: str, expected: bool) -> None:
    name, value = code.split("\n", 1)[0].split()[1:]
    assert warp.block_of_32_warps(name, int(value), context(code)) == expected


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("constexpr int kWarps = 32;\nvoid f() { g(dim3(kThreadsPerWarp, kWarps)); }\n", 32),
        ("void f() { g(dim3(WARP_SIZE, 64)); }\n", 64),
        ("void f() { g(dim3(warpSize, 2 * 16)); }\n", 32),
        ("constexpr int kWarps = 16;\nvoid f() { g(dim3(kThreadsPerWarp, kWarps)); }\n", None),  # 1024 at 64 lanes
        ("void f() { g(dim3(kTileWidth, 32)); }\n", None),  # rows of a tile, not of a warp
        ("void f(int n) { g(dim3(WARP_SIZE, n)); }\n", None),  # a row count not known
    ],
)
def test_warps_in_dim3_block(code: str, expected: int | None) -> None:
    ctx = context(code)
    arguments = node_at(ctx, "dim3(", "call_expression").child_by_field_name("arguments")
    assert arguments is not None
    assert warp.warps_in_dim3_block(arguments.named_children, ctx) == expected


@pytest.mark.parametrize(
    ("code", "at", "node_type", "expected"),
    [
        ("void f() { dim3 threads(kWarpSize, kWarps); }\n", "dim3", "declaration", [["kWarpSize", "kWarps"]]),
        (
            "void f() { dim3 a(W, 2 * 16), b{W, 4}, c = dim3(W, 8); }\n",
            "dim3 a",
            "declaration",
            [["W", "2 * 16"], ["W", "4"]],  # `c`'s value is a call, visited as one
        ),
        ("void f() { g(dim3(W, /* rows */ 32)); }\n", "dim3(", "call_expression", [["W", "32"]]),
        ("dim3 make_block(int width, int rows);\n", "dim3", "declaration", []),  # a function declaration
        ("void f() { int3 v(W, 32); }\n", "int3", "declaration", []),  # no dim3
        ("void f() { g(make(W, 32)); }\n", "make(", "call_expression", []),
    ],
)
def test_dim3_arguments(code: str, at: str, node_type: str, expected: list[list[str]]) -> None:
    ctx = context(code)
    found = warp.dim3_arguments(node_at(ctx, at, node_type), ctx)
    assert [[ctx.text(extent) for extent in extents] for _, extents in found] == expected


_LOGICAL_WARP = """\
constexpr uint32_t THREADS_PER_WARP = 32;
struct Reducer { enum { THREADS_PER_WARP = 32 }; };
template <typename T> __device__ T shuffle_xor(T x, int o) {
#ifdef __HIP_PLATFORM_AMD__
  return __shfl_xor(x, o, THREADS_PER_WARP);
#else
  return __shfl_xor_sync(0xffffffff, x, o);
#endif
}
__device__ float first(float v) {
#ifdef __HIP_PLATFORM_AMD__
  return __shfl(v, 0, THREADS_PER_WARP);
#else
  return __shfl_sync(0xffffffff, v, 0);
#endif
}
__device__ void store(float* s, float v) { if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = v; }
"""


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("", ""), True),
        # A ballot ROCm compiles spans the 64-lane wave: `% 32` lanes would index it wrongly.
        (("s[threadIdx.x / 32] = v;", "s[threadIdx.x / 32] = __ballot(v > 0);"), False),
        # A shuffle ROCm compiles without a width exchanges across the whole wave.
        (("__shfl(v, 0, THREADS_PER_WARP)", "__shfl(v, 0)"), False),
        # A width of 64 somewhere: the file does not keep to 32-lane groups.
        (("uint32_t THREADS_PER_WARP = 32", "uint32_t THREADS_PER_WARP = 64"), False),
        # The same width in shared code only: no sign the port chose it for ROCm.
        (("#ifdef __HIP_PLATFORM_AMD__\n  return __shfl_xor(", "#if 1\n  return __shfl_xor("), None),
    ],
)
def test_files_working_on_32_lane_logical_warps_on_rocm(change: tuple[str, str], expected: bool | None) -> None:
    code = _LOGICAL_WARP.replace(*change)
    if expected is None:  # both ROCm-only arms made shared
        code = code.replace("#ifdef __HIP_PLATFORM_AMD__\n  return __shfl(", "#if 1\n  return __shfl(")
    assert code != _LOGICAL_WARP or change == ("", "")
    assert warp.logical_32_lane_warps(context(code)) is bool(expected)


def test_rocm_warp_constants_of_a_logical_32_lane_warp_file_are_not_reported():
    from pathlib import Path

    from rocmlint.config import Settings
    from rocmlint.engine import Engine

    def roc208(code: str) -> list[int]:
        report = Engine().check_bytes("k.cu", code.encode(), Settings(root=Path.cwd()))
        return [d.location.line for d in report.diagnostics if d.code == "ROC208"]

    assert roc208(_LOGICAL_WARP) == []
    with_ballot = _LOGICAL_WARP.replace("s[threadIdx.x / 32] = v;", "s[threadIdx.x / 32] = __ballot(v > 0);")
    assert roc208(with_ballot) == [1, 2, 17, 17]  # both constants, `% 32` and `/ 32`


def test_half_wave_blocks_of_warp_transposing_collectives() -> None:
    ctx = context(
        "template <int kNThreads, int kNItems, typename T> struct Traits {\n"
        "  using Load = cub::BlockLoad<T, kNThreads, kNItems, cub::BLOCK_LOAD_WARP_TRANSPOSE>;\n"
        "  using Store = cub::BlockStore<T, 96, kNItems, cub::BLOCK_STORE_DIRECT>;\n"
        "};\n"
        "template <int kNThreads, int kBits> void launch() { using K = Traits<kNThreads, kBits, float>; }\n"
        "template <int kBits, int kBlockSize> void pack();\n"
        "void run() { launch<32, 32>(); launch<64, 4>(); pack<32, 96>(); Traits<96, 4, int> t; }\n"
    )
    names, sizes = warp.warp_transposed_blocks(ctx)
    assert names == {"kNThreads"} and [ctx.text(s) for s in sizes] == ["kNThreads"]
    found = [
        (ctx.text(argument), parameter)
        for arguments in ctx.descendants(ctx.tree.root_node, "template_argument_list")
        for argument, parameter in warp.half_wave_template_arguments(arguments, ctx)
    ]
    # `launch` hands `kNThreads` to the traits that size the load; `kBits` sizes nothing, nor does `pack`, whose
    # parameter's name alone says block size.
    assert sorted(found) == [("32", "`kNThreads`"), ("96", "`kNThreads`")]
    assert [v for v in (32, 64, 96, 128, 0, 16) if warp.is_half_wave_block(v)] == [32, 96]


@pytest.mark.parametrize(
    ("loop", "strided"),
    [
        ("for (int i = lane * n; i < K; i += 32 * n) {}", True),
        ("for (int i = lane * v; i < K; i += 32 * v) {}", True),  # a scale that is 32 itself
        ("for (int i = lane * n; i < K; i += n * 32) {}", True),
        ("for (int i = lane; i < K; i += 32) {}", True),
        ("for (int i = lane * n; i < K; i += 32) {}", False),  # 32 elements, not 32 lanes of n
        ("for (int i = lane; i < K; i += warpSize) {}", False),
        ("for (int i = threadIdx.x; i < K; i += 32) {}", False),
        ("for (int i = half; i < K; i += 32) {}", False),  # `tid / 32` is a warp index, not a lane
    ],
)
def test_lane_strided_by_32(loop: str, strided: bool) -> None:
    ctx = context(
        "__global__ void k(int K, int n) {\n  int lane = threadIdx.x & 31;\n  int half = threadIdx.x / 32;\n"
        "  constexpr int v = 32;\n"
        f"  {loop}\n}}\n"
    )
    assert (warp.lane_strided_by_32(node_at(ctx, "for (", "for_statement"), ctx) is not None) == strided


def test_define_used_as_warp_by_its_uses() -> None:
    ctx = context(
        "#define TILE_W 32\n#define ROWS 32\n#define WIDE 64\n"
        "void f(int n, dim3& b) {\n  int block_x = min(n, TILE_W);\n  int rows = min(n, ROWS);\n"
        "  int blockDimX = min(n, WIDE);\n}\n"
    )
    found = {
        name: warp.define_used_as_warp(ctx.preprocessor.defines[name][0], ctx) for name in ("TILE_W", "ROWS", "WIDE")
    }
    assert found == {"TILE_W": "a block row capped at one 32-lane warp", "ROWS": None, "WIDE": None}


_HALVES = (
    "__device__ void block_sum(float v, float* s) {\n  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;\n"
    "  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);\n  if (lane == 0) s[w] = v;\n}\n"
)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (_HALVES, True),
        # Unrolled: constant xor masks below 32.
        (
            _HALVES.replace(
                "for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);",
                "v += __shfl_xor_sync(~0u, v, 16); v += __shfl_xor_sync(~0u, v, 8);",
            ),
            True,
        ),
        # The total leaves the function: a caller may count `warpSize` lanes.
        (_HALVES.replace("__device__ void", "__device__ float").replace("s[w] = v;", "s[w] = v;\n  return v;"), False),
        # A broadcast, a shift, an xor by 32, `warpSize` or a vote reach across the halves.
        (_HALVES.replace("if (lane == 0)", "v = __shfl_sync(0xffffffff, v, 0);\n  if (lane == 0)"), False),
        (_HALVES.replace("__shfl_xor_sync", "__shfl_down_sync"), False),
        (_HALVES.replace("int o = 16", "int o = 32"), False),
        (_HALVES.replace("s[w] = v;", "s[threadIdx.x / warpSize] = v;"), False),
        (_HALVES.replace("if (lane == 0)", "if (__ballot_sync(~0u, v > 0))"), False),
        # No split of thread ids by 32: the function does not name its logical warps.
        (_HALVES.replace("threadIdx.x & 31", "threadIdx.x").replace("threadIdx.x >> 5", "0"), False),
    ],
)
def test_in_32_lane_logical_warps(code: str, expected: bool) -> None:
    ctx = context(code)
    assert warp.in_32_lane_logical_warps(node_at(ctx, "block_sum", "identifier"), ctx) is expected
