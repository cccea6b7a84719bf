"""ROC203 inline-ptx."""

from __future__ import annotations

import re

from rocmlint.cuda.frontend import Anchors, CudaContext, Node
from rocmlint.cuda.hip_gaps import asm_template, macro_asm_template, ptx_in
from rocmlint.cuda.preprocessor import Define
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

_ASM_KEYWORDS = frozenset({b"asm", b"__asm__", b"__asm"})  # tree-sitter's `gnu_asm_expression` keywords
# What ROCm offers instead, by PTX instruction or register (HIP device headers / AMDGPU builtins).
_HINTS = {
    "laneid": "`__lane_id()`",
    "smid": "`__smid()`",
    "trap": "`__builtin_trap()`",
    "clock": "`clock64()`/`wall_clock64()`",
    "clock64": "`clock64()`/`wall_clock64()`",
    "globaltimer": "`wall_clock64()`",
    "shfl": "`__shfl*` (no `_sync`)",
    "vote": "`__ballot`/`__any`/`__all`",
    "bar": "`__syncthreads()`",
    "membar": "`__threadfence*()`",
    "fence": "`__threadfence*()` or `__atomic_*` with a memory order",
    "red": "`atomicAdd`/`__hip_atomic_fetch_add` with a memory order",
    "atom": "`atomic*`/`__hip_atomic_*` with a memory order",
    "cvt": "the `__float2half`/`__half2float`-style conversion functions",
    "cp": "plain loads into `__shared__` plus `__syncthreads()` (no async copy)",
    "ldmatrix": "rocWMMA or Composable Kernel",
    "mma": "rocWMMA, Composable Kernel or `__builtin_amdgcn_mfma_*`",
    "wgmma": "rocWMMA, Composable Kernel or `__builtin_amdgcn_mfma_*`",
    "ld": "plain loads or `__builtin_nontemporal_load`",
    "st": "plain stores or `__builtin_nontemporal_store`",
}


class InlinePtx(Rule):
    """
    ## What it does
    Flags `asm`/`asm volatile`/`__asm__` statements whose template is PTX (`mov.u32 %0, %%laneid;`,
    `ld.global.cs.v4.u32`, `cp.async`, `mma.sync`, `ldmatrix`, `{ .reg .pred p; ... }`) that a ROCm
    build compiles, including those inside macro definitions and templates assembled from macros. A macro's
    hazard is its expansions': one expanded somewhere, and only where ROCm never compiles (an `#if __CUDA_ARCH__ >=
    900` arm, directly or through another macro of the file; none in the files around it), is not reported.

    ## Why is this bad on ROCm?
    HIP-Clang compiles device code for AMDGPU, whose inline assembler accepts only GCN/CDNA/RDNA
    instructions (`v_`, `s_`, `ds_`, `buffer_` mnemonics). PTX text is rejected as an invalid
    instruction, and PTX register constraints (`"h"`, `"l"`, `"f"`) cannot be allocated. HIP provides
    intrinsics for the common uses: `__lane_id()` for `%laneid`, `__smid()` for `%smid`,
    `__builtin_trap()` for `trap;`, `__builtin_nontemporal_load/store` for `.cs` cache hints
    (HIP `amd_device_functions.h`; hazard catalog ROC203). Tensor-core PTX (`mma`, `ldmatrix`, `wgmma`)
    has no one-line replacement: it needs rocWMMA, Composable Kernel or the MFMA builtins.

    ## Example
    ```cuda
    __device__ __forceinline__ unsigned lane_id() {
      unsigned id;
      asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
      return id;
    }
    ```

    ## Fix
    ```cuda
    __device__ __forceinline__ unsigned lane_id() {
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__)
      return __lane_id();
    #else
      unsigned id;
      asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
      return id;
    #endif
    }
    ```

    ## Fix safety
    No automatic fix: the HIP replacement depends on what the assembly does, and for most PTX there
    is none of the same shape.
    """

    code = "ROC203"
    name = "inline-ptx"
    severity = Severity.ERROR
    fix_availability = FixAvailability.NONE
    language = "cuda"
    triggers = (b"asm",)  # `asm`, `__asm__`, `__asm`

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """An asm statement holds its keyword (`asm`, `__asm__`, `__asm`), a whole word of the file (a file that
        spells `asm` only inside other words, `plasma`, `asmjit`, is never parsed for it)."""
        anchors = ctx.offsets(b"asm") if not _ASM_KEYWORDS.isdisjoint(ctx.words) else ()
        return {"gnu_asm_expression": anchors} if anchors else {}

    def visit_gnu_asm_expression(self, node: Node, ctx: CudaContext) -> None:
        code = node.child_by_field_name("assembly_code")
        found = ptx_in(asm_template(ctx, ctx.text(code if code is not None else node), node))
        if found is not None:
            ctx.report(node, _message(*found))

    def visit_define(self, define: Define, ctx: CudaContext) -> None:
        # Macro bodies are not parsed by tree-sitter: the front end reads the asm template from the text.
        template = macro_asm_template(ctx, define)
        found = ptx_in(template) if template is not None else None
        if found is not None and not ctx.expanded_only_off_rocm(define):
            ctx.report(define.directive, _message(*found))  # hazards of a macro are its expansions' (none on ROCm)


def _message(snippet: str, key: str) -> str:
    hint = _HINTS.get(key.removesuffix("_lo").removesuffix("_hi"))
    if key in ("ld", "st") and re.search(r"\.(?:acquire|release|relaxed|volatile)\b", snippet):
        hint = "`__hip_atomic_load`/`__hip_atomic_store` (or `__atomic_*_n`) with a memory order"
    instead = f"use {hint} on ROCm" if hint else "write a HIP/GCN equivalent"
    return (
        f"inline PTX (`{snippet}`) cannot be assembled for AMDGPU (HIP-Clang accepts only GCN asm); "
        f"{instead}, or keep it behind `#ifndef USE_ROCM`"
    )


InlinePtx.valid = (
    Valid(
        """
        __device__ __forceinline__ unsigned lane_id() {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__)
          return __lane_id();
        #else
          unsigned id;
          asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
          return id;
        #endif
        }
        """,
    ),
    Valid(
        """
        __device__ __forceinline__ void store_streaming(float4* dst, float4 v) {
        #if !defined(__HIP_PLATFORM_AMD__)
          asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(dst), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w));
        #else
          __builtin_nontemporal_store(v, dst);
        #endif
        }
        """,
    ),
    # PTX inside an architecture gate: not compiled on ROCm (ROC213 reports the gate itself).
    Valid(
        r"""
        __device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
        #ifndef USE_ROCM
        #if __CUDA_ARCH__ >= 800
          unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
          asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(s), "l"(gmem));
        #endif
        #endif
        }
        """,
    ),
    # A stale gate: ROC215 reports `__HIP_PLATFORM_HCC__`, and the `#else` is taken as the NVIDIA side it was
    # written as (fixing the gate settles it).
    Valid(
        r"""
        __device__ __forceinline__ void store_streaming(float4* dst, float4 v) {
        #ifdef __HIP_PLATFORM_HCC__
          __builtin_nontemporal_store(v, dst);
        #else
          asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(dst), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w));
        #endif
        }
        """,
    ),
    # AMDGPU assembly and host x86 assembly are fine.
    Valid(
        r"""
        __device__ __forceinline__ float fast_exp2(float x) {
          float r;
          asm volatile("v_exp_f32 %0, %1" : "=v"(r) : "v"(x));
          asm volatile("s_waitcnt lgkmcnt(0)\n\ts_barrier" ::: "memory");
          return r;
        }
        inline unsigned long long host_tsc() {
          unsigned lo, hi;
          __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
          asm volatile("" ::: "memory");
          return (static_cast<unsigned long long>(hi) << 32) | lo;
        }
        """,
    ),
    # ARM NEON's `vadd`/`vsub` name one operand type; PTX's video instructions of those names name three.
    Valid(
        r"""
        inline float16x8_t add_f16(float16x8_t a, float16x8_t b) {
          float16x8_t ret;
          asm volatile("vadd.f16 %0, %1, %2\n" : "+w"(ret) : "w"(a), "w"(b));
          asm volatile("vsub.s32 q0, q1, q2\n" ::: "q0");
          return ret;
        }
        """,
    ),
    Valid(
        r"""
        #ifndef USE_ROCM
        #define LDMATRIX_X4(r, p) asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" \
            : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(p))
        #endif
        """,
    ),
)
InlinePtx.invalid = (
    Invalid(
        """
        __device__ unsigned absdiff_add(unsigned a, unsigned b, unsigned c) {
          unsigned d;
          asm("vabsdiff.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
          return d;
        }
        """,
        expect=("3:3-3:85",),
    ),
    Invalid(
        """
        __device__ __forceinline__ unsigned lane_id() {
          unsigned id;
          asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
          return id;
        }
        """,
        expect=("3:3-3:51",),
        message="use `__lane_id()` on ROCm",
    ),
    # A global-memory barrier built from PTX (apex group_norm shape).
    Invalid(
        """
        __device__ void spin_wait_(int* barrier, int step, int expected) {
          asm volatile("red.release.gpu.global.add.s32 [%0], %1;" :: "l"(barrier), "r"(step));
          for (int found = -1; found != expected;) {
            asm volatile("ld.global.acquire.gpu.b32 %0, [%1];" : "=r"(found) : "l"(barrier));
          }
        }
        """,
        expect=("2:3-2:86", "4:5-4:85"),
        message="`red.release.gpu.global.add.s32`",
    ),
    # A multi-line template with a `.reg` scope, under a project macro ROCm may well define.
    Invalid(
        r"""
        template <>
        __device__ __forceinline__ void load_global<16>(void* dst, const void* src, bool do_access) {
          uint4* data = reinterpret_cast<uint4*>(dst);
          asm volatile(
              "{\n"
              "\t.reg .pred p;\n"
              "\tsetp.ne.b32 p, %5, 0;\n"
              "\t@p ld.global.v4.u32 {%0, %1, %2, %3}, [%4];\n"
              "}\n"
              : "=r"(data[0].x), "=r"(data[0].y), "=r"(data[0].z), "=r"(data[0].w)
              : "l"(src), "r"((int)do_access));
        }
        """,
        expect=("4:3-11:39",),
    ),
    # The template comes from a macro (expanded from the same file).
    Invalid(
        """
        #define SMID_ASM "mov.u32 %0, %%smid;"
        __device__ unsigned sm_id() {
          unsigned id;
          asm volatile(SMID_ASM : "=r"(id));
          return id;
        }
        """,
        expect=("4:3-4:35",),
        message="`__smid()`",
    ),
    Invalid(
        """
        __device__ __noinline__ void die() {
          asm volatile("trap;");
        }
        """,
        expect=("2:3-2:24",),
        message="`__builtin_trap()`",
    ),
    # PTX in a function-like macro (apex fmha gemm.h shape).
    Invalid(
        r"""
        #define MMA_16816(d, a, b) \
          asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};" \
                       : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
        """,
        expect=("1:1-3:132",),
        message="`__builtin_amdgcn_mfma_*`",
    ),
)
