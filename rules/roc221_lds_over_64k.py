"""ROC221 lds-over-64k."""

from __future__ import annotations

from rocmlint.cuda.frontend import Anchors, CudaContext, Node
from rocmlint.cuda.syntax import array_dimensions
from rocmlint.cuda.values import constant_value, size_of
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

LDS_BYTES = 64 * 1024  # LDS per workgroup on MI100/MI200/MI300 (ROCm GPU specs table)
_MAX_DYNAMIC_ATTRIBUTES = frozenset(
    {
        "cudaFuncAttributeMaxDynamicSharedMemorySize",
        "hipFuncAttributeMaxDynamicSharedMemorySize",
        "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES",
        "HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES",
    }
)
_SET_ATTRIBUTE = frozenset({"cudaFuncSetAttribute", "hipFuncSetAttribute", "cuFuncSetAttribute"})
_SET_ATTRIBUTE_WORDS = frozenset(name.encode() for name in _SET_ATTRIBUTE)


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
        """Each visit's node holds its text: `__shared__`, the attribute setter's name, the `<<<` of a launch that
        may pass a shared memory size."""
        needed: dict[str, Anchors] = {}
        for node_type, anchors in (
            ("declaration", ctx.offsets(b"__shared__")),
            ("call_expression", ctx.offsets(*_SET_ATTRIBUTE_WORDS)),
            ("kernel_call_syntax", _sized_launches(ctx)),
        ):
            if anchors:
                needed[node_type] = anchors
        return needed

    def visit_declaration(self, node: Node, ctx: CudaContext) -> None:
        qualifiers = {ctx.text(c) for c in node.children if c.type in ("type_qualifier", "storage_class_specifier")}
        if "__shared__" not in qualifiers or "extern" in qualifiers:
            return
        type_node = node.child_by_field_name("type")
        element = None if type_node is None else size_of(ctx.text(type_node))
        if element is None:
            return
        for declarator in node.children_by_field_name("declarator"):
            self._check_array(node, declarator, element, ctx)

    def _check_array(self, declaration: Node, declarator: Node, element: int, ctx: CudaContext) -> None:
        name, sizes = array_dimensions(declarator)
        if name is None or not sizes:
            return
        total = element
        for size in sizes:
            value = constant_value(ctx, size)
            if value is None:
                return
            total *= value
        label = ctx.text(name)
        if total > LDS_BYTES:
            ctx.report(
                declarator,
                f"static `__shared__` array `{label}` needs {_kib(total)}; ROCm GPUs have 64 KiB of LDS per workgroup (MI200/MI300)",
            )
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
        value = constant_value(ctx, arguments[2])
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
        value = constant_value(ctx, arguments[2])
        if value is not None and value > LDS_BYTES:
            ctx.report(
                arguments[2],
                f"launch asks for {_kib(value)} of dynamic shared memory; ROCm GPUs have 64 KiB of LDS per workgroup (MI200/MI300)",
            )


def _sized_launches(ctx: CudaContext) -> list[int]:
    """The `<<<` of the launches that may pass a dynamic shared memory size (a third argument): two commas before
    the `>>>` (a nested call's or a comment's count too), or a `<` there (a template's `>>>` may close first)."""
    content = ctx.content
    found = []
    for start in ctx.offsets(b"<<<"):
        end = content.find(b">>>", start + 3)
        config = content[start + 3 : end] if end >= 0 else b"<"
        if config.count(b",") >= 2 or b"<" in config:
            found.append(start)
    return found


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
