"""ROC221 lds-over-64k."""

from __future__ import annotations

import re

from rocmlint.cuda.frontend import Anchors, CudaContext, Node, Span
from rocmlint.cuda.preprocessor import evaluate_integer, parse_int
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

LDS_BYTES = 64 * 1024  # LDS per workgroup on MI100/MI200/MI300 (ROCm GPU specs table)
_ELEMENT_BYTES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "int8_t": 1, "uint8_t": 1, "__nv_fp8_e4m3": 1,
    "__nv_fp8_e5m2": 1, "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2,
    "at::Half": 2, "c10::Half": 2, "__nv_bfloat16": 2, "nv_bfloat16": 2, "bf16": 2, "__hip_bfloat16": 2,
    "hip_bfloat16": 2, "at::BFloat16": 2, "c10::BFloat16": 2, "float": 4, "int": 4, "unsigned": 4, "unsigned int": 4,
    "signed int": 4, "int32_t": 4, "uint32_t": 4, "half2": 4, "__half2": 4, "__nv_bfloat162": 4, "double": 8,
    "long long": 8, "unsigned long long": 8, "long long int": 8, "int64_t": 8, "uint64_t": 8, "size_t": 8,
    "float2": 8, "int2": 8, "uint2": 8, "float4": 16, "int4": 16, "uint4": 16, "double2": 16,
}
_MAX_DYNAMIC_ATTRIBUTES = frozenset(
    {"cudaFuncAttributeMaxDynamicSharedMemorySize", "hipFuncAttributeMaxDynamicSharedMemorySize",
     "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", "HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES"}
)
_SET_ATTRIBUTE = frozenset({"cudaFuncSetAttribute", "hipFuncSetAttribute", "cuFuncSetAttribute"})
_SET_ATTRIBUTE_WORDS = frozenset(name.encode() for name in _SET_ATTRIBUTE)
_TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(sizeof\s*\(\s*[\w:\s]+?\s*\))|([A-Za-z_]\w*)|(<<|>>|[-+*/%()]))")
_ARITHMETIC = frozenset({"+", "-", "*", "/", "%", "<<", ">>"})


def _sizeof(type_name: str) -> int | None:
    return _ELEMENT_BYTES.get(" ".join(type_name.replace("const", " ").split()))


def _text_value(text: str, before: Span, ctx: CudaContext, depth: int) -> int | None:
    """The value of a macro's replacement text (`(32 * 1024 + 16)`, `TILE * sizeof(float)`), or None."""
    if depth > 6:
        return None
    pieces: list[str] = []
    position = 0
    text = text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            return None
        number, size, name, operator = match.groups()
        if number is not None:
            pieces.append(str(parse_int(number)))
        elif size is not None:
            element = _sizeof(size[size.index("(") + 1 : -1])
            if element is None:
                return None
            pieces.append(str(element))
        elif name is not None:
            define = ctx.define(name, before)
            value = None if define is None else _text_value(define.value, before, ctx, depth + 1)
            if value is None:
                return None
            pieces.append(f"({value})")
        else:
            pieces.append(operator)
        position = match.end()
    return evaluate_integer(" ".join(pieces)) if pieces else None


def constant_value(node: Node, ctx: CudaContext, depth: int = 0) -> int | None:
    """An integer constant expression made of literals, `sizeof` of known types, same-file macros and
    initialised variables (`constexpr int kSmem = 96 * 1024;`); None when any part is unknown."""
    if depth > 6:
        return None
    kind = node.type
    if kind == "number_literal":
        return parse_int(ctx.text(node))
    if kind == "parenthesized_expression" and node.named_child_count == 1:
        return constant_value(node.named_children[0], ctx, depth + 1)
    if kind == "cast_expression":
        value = node.child_by_field_name("value")
        return None if value is None else constant_value(value, ctx, depth + 1)
    if kind == "sizeof_expression":
        type_node = node.child_by_field_name("type")
        return None if type_node is None else _sizeof(ctx.text(type_node))
    if kind == "identifier":
        define = ctx.define(ctx.text(node), node)
        if define is not None:
            return _text_value(define.value, node, ctx, depth + 1)
        declaration = ctx.declaration_of(node)
        if declaration is None or ctx.is_rocm_gated(declaration):
            # A declaration in NVIDIA-only code sizes nothing on ROCm.
            return None
        value = ctx.declared_value(node)
        return None if value is None else constant_value(value, ctx, depth + 1)
    if kind == "binary_expression":
        operator = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if operator is None or left is None or right is None or ctx.text(operator) not in _ARITHMETIC:
            return None
        a, b = constant_value(left, ctx, depth + 1), constant_value(right, ctx, depth + 1)
        if a is None or b is None:
            return None
        op = ctx.text(operator)
        return evaluate_integer(f"({a}) {op} ({b})")
    return None


def _array_dimensions(declarator: Node) -> tuple[Node | None, list[Node]]:
    """The name and the size expressions of `s[A][B]` (outermost first)."""
    sizes: list[Node] = []
    current: Node | None = declarator
    while current is not None and current.type == "array_declarator":
        size = current.child_by_field_name("size")
        if size is not None:
            sizes.append(size)
        current = current.child_by_field_name("declarator")
    return current, sizes


def _kib(size: int) -> str:
    return f"{size} bytes ({size / 1024:g} KiB)"


class LdsOver64k(Rule):
    """
    ## What it does
    Flags shared memory requests above 64 KiB that are known at compile time: static `__shared__`
    arrays (alone or summed over one kernel), `cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, N)`
    and `<<<grid, block, N>>>` launches whose `N` is a constant over 65536 bytes.

    ## Why is this bad on ROCm?
    MI100, MI200 and MI300 GPUs have 64 KiB of LDS per compute unit (ROCm GPU specs table; MI300X
    reports `sharedMemPerBlock` 65536, ROCm/hipBLASLt#1539), against up to ~227 KiB of opt-in shared
    memory on Hopper. Static arrays over the limit fail to compile or launch; HIP 7.0 validates the
    dynamic request at launch and returns `hipErrorInvalidValue` (rocm-systems `hip-7-changes.rst`),
    while older ROCm silently ignored the opt-in attribute (mamba `selective_scan_fwd_kernel.cuh`).

    ## Example
    ```cuda
    constexpr int kSmemBytes = 96 * 1024;

    void launch(const float* x, float* y, cudaStream_t stream) {
      cudaFuncSetAttribute(tile_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
      tile_kernel<<<128, 256, kSmemBytes, stream>>>(x, y);
    }
    ```

    ## Fix
    ```cuda
    void launch(const float* x, float* y, cudaStream_t stream) {
    #if defined(USE_ROCM)
      constexpr int kSmemBytes = 64 * 1024;  // smaller tiles on MI200/MI300
    #else
      constexpr int kSmemBytes = 96 * 1024;
    #endif
      cudaFuncSetAttribute((const void*)tile_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
      tile_kernel<<<128, 256, kSmemBytes, stream>>>(x, y);
    }
    ```

    ## Fix safety
    No automatic fix: fitting in 64 KiB means choosing smaller tiles (or more passes), a redesign of
    the kernel; MI350/MI355 have 160 KiB, so a runtime check of `sharedMemPerBlockOptin` may be enough.
    """

    code = "ROC221"
    name = "lds-over-64k"
    severity = Severity.ERROR
    fix_availability = FixAvailability.NONE
    language = "cuda"
    triggers = (b"__shared__", b"MaxDynamicSharedMemorySize", b"MAX_DYNAMIC_SHARED_SIZE_BYTES", b"<<<")

    def __init__(self) -> None:
        # Static shared bytes seen so far per function (start byte), to catch several arrays adding up.
        self._totals: dict[int, int] = {}

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """Each visit's node holds its text: `__shared__`, the attribute setter's name, a launch's `<<<`."""
        needed: dict[str, Anchors] = {}
        for node_type, anchors in (
            ("declaration", ctx.offsets(b"__shared__")),
            ("call_expression", ctx.offsets(*_SET_ATTRIBUTE_WORDS)),
            ("kernel_call_syntax", ctx.offsets(b"<<<")),
        ):
            if anchors:
                needed[node_type] = anchors
        return needed

    def visit_declaration(self, node: Node, ctx: CudaContext) -> None:
        qualifiers = {ctx.text(c) for c in node.children if c.type in ("type_qualifier", "storage_class_specifier")}
        if "__shared__" not in qualifiers or "extern" in qualifiers:
            return
        type_node = node.child_by_field_name("type")
        element = None if type_node is None else _sizeof(ctx.text(type_node))
        if element is None:
            return
        for declarator in node.children_by_field_name("declarator"):
            self._check_array(node, declarator, element, ctx)

    def _check_array(self, declaration: Node, declarator: Node, element: int, ctx: CudaContext) -> None:
        name, sizes = _array_dimensions(declarator)
        if name is None or not sizes:
            return
        total = element
        for size in sizes:
            value = constant_value(size, ctx)
            if value is None:
                return
            total *= value
        label = ctx.text(name)
        if total > LDS_BYTES:
            ctx.report(declarator, f"static `__shared__` array `{label}` needs {_kib(total)}; ROCm GPUs have 64 KiB of LDS per workgroup (MI200/MI300)")
            return
        function = ctx.function_of(declaration)
        if function is None:
            return
        before = self._totals.get(function.start_byte, 0)
        self._totals[function.start_byte] = before + total
        if before <= LDS_BYTES < before + total:
            ctx.report(
                declarator,
                f"static `__shared__` arrays of this kernel add up to {_kib(before + total)} with `{label}`; ROCm GPUs "
                "have 64 KiB of LDS per workgroup (MI200/MI300)",
            )

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        if ctx.call_name(node) not in _SET_ATTRIBUTE:
            return
        arguments = ctx.arguments(node)
        if len(arguments) < 3 or ctx.text(arguments[1]).split("::")[-1] not in _MAX_DYNAMIC_ATTRIBUTES:
            return
        value = constant_value(arguments[2], ctx)
        if value is not None and value > LDS_BYTES:
            ctx.report(
                arguments[2],
                f"opting in to {_kib(value)} of dynamic shared memory: ROCm GPUs have 64 KiB of LDS per workgroup "
                "(MI200/MI300); HIP 7 rejects the launch",
            )

    def visit_kernel_call_syntax(self, node: Node, ctx: CudaContext) -> None:
        arguments = [c for c in node.named_children if c.type != "comment"]
        if len(arguments) < 3:
            return
        value = constant_value(arguments[2], ctx)
        if value is not None and value > LDS_BYTES:
            ctx.report(arguments[2], f"launch asks for {_kib(value)} of dynamic shared memory; ROCm GPUs have 64 KiB of LDS per workgroup (MI200/MI300)")


LdsOver64k.valid = (
    # Sizes that fit, and sizes only known at run time (queried from the device).
    Valid(
        """
        #define TILE 64
        __global__ void transpose(const float* in, float* out) {
          __shared__ float tile[TILE][TILE + 1];
          __shared__ double partial[1024];
          tile[threadIdx.y][threadIdx.x] = in[threadIdx.x];
        }
        void launch(const float* in, float* out, const cudaDeviceProp& prop, cudaStream_t s) {
          size_t smem = prop.sharedMemPerBlockOptin;
          cudaFuncSetAttribute((const void*)transpose, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
          transpose<<<1, dim3(TILE, TILE), smem, s>>>(in, out);
        }
        """,
    ),
    # Large tiles only on the NVIDIA path.
    Valid(
        """
        #ifdef USE_ROCM
        constexpr int kSmemBytes = 64 * 1024;
        #else
        constexpr int kSmemBytes = 160 * 1024;
        #endif
        void launch(cudaStream_t s) {
          cudaFuncSetAttribute((const void*)gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
          gemm_kernel<<<132, 384, kSmemBytes, s>>>();
        }
        """,
    ),
    Valid(
        """
        #if !defined(__HIP_PLATFORM_AMD__)
        __global__ void hopper_tile(float* x) {
          __shared__ float buf[48 * 1024];
          buf[threadIdx.x] = x[threadIdx.x];
        }
        #endif
        """,
    ),
    # `extern __shared__` has no static size; template element types are unknown.
    Valid(
        """
        template <typename T, int N>
        __global__ void k(T* x) {
          extern __shared__ char smem[];
          __shared__ T staging[N * 1024];
          staging[threadIdx.x] = x[threadIdx.x];
        }
        """,
    ),
    # Attributes other than the dynamic shared size, and launches with small constants.
    Valid(
        """
        void configure(cudaStream_t s) {
          cudaFuncSetAttribute((const void*)k, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
          k<<<64, 256, 32 * 1024, s>>>();
        }
        """,
    ),
)
LdsOver64k.invalid = (
    Invalid(
        """
        #define ROWS 128
        #define COLS 160
        __global__ void stage(const float* x, float* y) {
          __shared__ float tile[ROWS][COLS];
          tile[threadIdx.y][threadIdx.x] = x[threadIdx.x];
        }
        """,
        expect=("4:20-4:36",),
        message="81920 bytes",
    ),
    Invalid(
        """
        constexpr int kSmemBytes = 100 * 1024;
        void launch(const half* q, half* o, cudaStream_t stream) {
          cudaFuncSetAttribute((const void*)attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               kSmemBytes);
        }
        """,
        expect=("4:24-4:34",),
        message="dynamic shared memory",
    ),
    Invalid(
        """
        void launch(const float* x, float* y, cudaStream_t stream) {
          softmax_kernel<<<1024, 256, 96 * 1024, stream>>>(x, y);
        }
        """,
        expect=("2:31-2:40",),
        message="launch asks for 98304 bytes",
    ),
    Invalid(
        """
        __global__ void double_buffer(const __half* a) {
          __shared__ __half buf0[16384];
          __shared__ __half buf1[16384];
          __shared__ float scratch[512];
          buf0[threadIdx.x] = a[threadIdx.x];
        }
        """,
        expect=("4:20-4:32",),
        message="add up to",
    ),
    Invalid(
        """
        #define SMEM_BYTES (72 * 1024 + sizeof(float) * 16)
        void launch(cudaStream_t s) {
          cudaFuncSetAttribute((const void*)reduce, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
        }
        """,
        expect=("3:90-3:100",),
    ),
)
