"""ROC201 ballot-mask-32bit."""

from __future__ import annotations

from rocmlint.cuda.frontend import Anchors, ByteSpan, CudaContext, Node
from rocmlint.cuda.masks import (
    WAVE_MASK_INTRINSICS,
    WAVE_MASK_METHODS,
    buffers_of_32_bits,
    copies_into_32_bits,
    is_wave_mask_call,
    mask_fix,
    narrowing,
)
from rocmlint.cuda.warp import wave_size_at
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid


class BallotMask32Bit(Rule):
    """
    ## What it does
    Flags the result of `__ballot*`, `__activemask`, `__match_any*` or `__match_all*` stored in, assigned
    to, returned as, or cast to a 32-bit type (`unsigned`, `unsigned int`, `uint32_t`, `int`), and a 32-bit
    variable of the same function the stored mask is then copied into (`kept = mask;`), at its declaration, and a
    buffer of 32-bit words such a variable is stored into (`bits[i] = mask;`), at the declaration that decides its
    type (a struct member when the pointer is initialised from one, `unsigned* bits = params.bitmask + i`).

    ## Why is this bad on ROCm?
    On ROCm a wave has 64 lanes (GCN/CDNA) and HIP's `__ballot`, `__activemask` and `__match_any`
    return a 64-bit `unsigned long long` (`amd_warp_functions.h`). Keeping the result in 32 bits
    silently drops lanes 32-63: vote counts come out too small, "all lanes agree" tests pass when they
    should not, and per-lane bit tests read zeros. Nothing warns at compile time, the narrowing is
    implicit. `auto`, `uint64_t` and `unsigned long long` keep every lane.
    Code only wave32 targets compile (the `#else` of `#if defined(__GFX9__)`, `__GFX11__`,
    `__AMDGCN_WAVEFRONT_SIZE == 32`) is not reported: 32 bits hold the whole wave there.

    ## Example
    ```cuda
    __global__ void count_negative(const float* x, int* out) {
      unsigned int votes = __ballot_sync(0xffffffff, x[threadIdx.x] < 0.f);
      if (threadIdx.x % 32 == 0) atomicAdd(out, __popc(votes));
    }
    ```

    ## Fix
    ```cuda
    __global__ void count_negative(const float* x, int* out) {
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
      unsigned long long votes = __ballot(x[threadIdx.x] < 0.f);
    #else
      unsigned int votes = __ballot_sync(0xffffffff, x[threadIdx.x] < 0.f);
    #endif
      if (threadIdx.x % 32 == 0) atomicAdd(out, __popc(votes));
    }
    ```
    The fix wraps the declaration (or the smallest statement standing on its own lines) in a ROCm gate
    whose branch declares the variable `unsigned long long` (`uint64_t` where it was `uint32_t`); a
    32-bit cast of the mask becomes a 64-bit one, and so does the variable that cast initialises. The
    ROCm branch also gets every other mask fix of the statement: a `*_sync` call with a full-warp mask
    (`0xffffffff`, `~0u`, `__activemask()`, a `FULL_MASK`/`FINAL_MASK` macro) becomes the non-sync
    intrinsic (ROC210), so the branch compiles on HIP releases without `*_sync` warp functions and
    ROC210's fix of the same statement is the same edit. A mask assigned to an existing variable or
    returned from a function declared 32-bit is reported without a fix: widening it means changing
    another declaration. (The `__popc` and the `% 32` are ROC202 and ROC208.)

    ## Fix safety
    Safe: the NVIDIA branch keeps the original declaration token for token (only `__LINE__` values
    below it move), and the ROCm branch only widens the variable to the type HIP's intrinsic already
    returns; dropping a full-warp mask is what HIP's non-sync intrinsics mean. Code that later packs the
    mask into 32-bit storage (a `uint32_t` buffer, a shuffle) needs its own review.
    """

    code = "ROC201"
    name = "ballot-mask-32bit"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    triggers = (b"__ballot", b"__activemask", b"__match_any", b"__match_all", b"__lanemask_", b".ballot(")
    applies_to_rocm_sources = True

    def __init__(self) -> None:
        self._buffers: set[int] = set()  # buffer declarations reported in this file (each once, at its first store)

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """A wave-mask call holds the intrinsic's or method's name (is_wave_mask_call)."""
        anchors = ctx.offsets(*(name.encode() for name in WAVE_MASK_INTRINSICS | WAVE_MASK_METHODS))
        return {"call_expression": anchors} if anchors else {}

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        if not is_wave_mask_call(node, ctx):
            return
        found = narrowing(node, ctx)
        if wave_size_at(ctx, node) == 32:
            return  # a 32-bit mask holds a wave32 target's whole wave (the `#else` of `#if defined(__GFX9__)`)
        name = ctx.call_name(node) or ctx.text(node.child_by_field_name("function") or node)
        for target, copy in copies_into_32_bits(node, ctx):
            ctx.report(
                target,
                f"`{ctx.text(copy)}` copies the 64-bit mask of `{name}` into this 32-bit variable, dropping lanes "
                "32-63 on ROCm; declare it `uint64_t` or `unsigned long long`",
            )
        for origin, store in buffers_of_32_bits(node, ctx):
            if origin.start_byte in self._buffers:
                continue
            self._buffers.add(origin.start_byte)
            ctx.report(
                origin,
                f"`{ctx.text(store)}` (line {store.start_point[0] + 1}) stores the 64-bit mask of `{name}` in this "
                "buffer of 32-bit words, dropping lanes 32-63 on ROCm; make its elements `uint64_t`",
            )
        if found is None:
            return
        declaration = ctx.statement_of(node) if found.where == "stored in" else None
        ctx.report(
            # A declaration is reported from its type: the 32-bit type is what the reader changes.
            node if declaration is None else ByteSpan(min(declaration.start_byte, node.start_byte), node.end_byte),
            f"`{name}` returns a 64-bit mask on ROCm (64-lane waves) but is {found.where} `{found.type_text}`, "
            "dropping lanes 32-63; use `auto`, `uint64_t` or `unsigned long long`",
            fix=mask_fix(node, ctx, "keep the mask in 64 bits on ROCm", list(found.widen)),
        )


BallotMask32Bit.valid = (
    # Copied into 64-bit storage, or a 32-bit half taken on purpose by a cast.
    Valid(
        """
        __device__ void halves(const float* x, unsigned long long* out, unsigned* low) {
          uint64_t kept;
          auto mask = __ballot(x[threadIdx.x] < 0.0F);
          kept = mask;
          unsigned half;
          half = (unsigned)mask;
          out[0] = kept;
          low[0] = half;
        }
        """,
    ),
    # The `#else` of a GFX9 (wave64) arm compiles for wave32 targets only (and NVIDIA): 32 bits hold the wave.
    Valid(
        """
        __device__ int winner(float v, float best) {
        #if defined(__GFX9__)
          uint64_t mask = __ballot(v == best);
          return mask ? __builtin_ctzll(mask) : 0;
        #else
          unsigned mask = static_cast<unsigned>(__ballot(v == best));
          return mask ? __builtin_ctz(mask) : 0;
        #endif
        }
        """,
    ),
    # Gated: the ROCm branch keeps the 64-bit mask.
    Valid(
        """
        DEVICE_FUNCTION bitmask_t ballot(int predicate) {
        #ifdef USE_ROCM
          return __ballot(predicate);
        #else
          unsigned int m = __ballot_sync(0xFFFFFFFFU, predicate);
          return m;
        #endif
        }
        """,
    ),
    Valid(
        """
        __device__ int leader_of_group(int key) {
        #if !defined(__HIP_PLATFORM_AMD__)
          unsigned peers = __match_any_sync(__activemask(), key);
          return __ffs(peers) - 1;
        #else
          return 0;
        #endif
        }
        """,
    ),
    # 64-bit or deduced types keep every lane.
    Valid(
        """
        __global__ void compact(const int* flags, int* out) {
          auto active = __activemask();
          uint64_t votes = __ballot(flags[threadIdx.x] != 0);
          unsigned long long peers = __match_any_sync(active, flags[threadIdx.x]);
          const auto lt = votes & __lanemask_lt();
          if (votes & 1ull) out[blockIdx.x] = __popcll(lt) + (peers != 0);
        }
        """,
    ),
    # A ballot used as a truth value or counted directly is not stored in 32 bits.
    Valid(
        """
        #ifndef USE_ROCM
        #define VOTE_MASK 0xffffffff
        #endif
        __device__ bool warp_any_nan(float v) {
          bool any = __ballot(isnan(v)) != 0;
          if (__ballot(v > 0.f)) return true;
          return any;
        }
        """,
    ),
    # A returned ballot from a function declared with a 64-bit (or alias) type.
    Valid(
        """
        using lane_mask_t = unsigned long long;
        __device__ lane_mask_t vote(bool p) { return __ballot(p); }
        __device__ bitmask_t vote_alias(bool p) { return __ballot(p); }
        """,
    ),
    # A stale gate: ROC215 reports `__HIP_PLATFORM_HCC__`, and the `#else` is taken as the NVIDIA side it was
    # written as (fixing the gate settles it).
    Valid(
        """
        __device__ bool any_hit(bool hit) {
        #ifdef __HIP_PLATFORM_HCC__
          return __any(hit);
        #else
          unsigned int votes = __ballot_sync(0xffffffff, hit);
          return votes != 0;
        #endif
        }
        """,
    ),
)
BallotMask32Bit.invalid = (
    # Stored through a local pointer into a struct's 32-bit buffer (apex's relu bitmask): the member decides its type;
    # a 64-bit mask stored into a 32-bit parameter buffer is cut at the store.
    Invalid(
        "struct Params {\n  unsigned int *bitmask;\n  uint64_t *wide;\n};\n"
        "__global__ void relu(Params params, const float* x, unsigned* out) {\n"
        "  unsigned int *const bits = params.bitmask + blockIdx.x;\n  uint64_t *const all = params.wide;\n"
        "  auto mask = __ballot(x[threadIdx.x] < 0.0F);\n  bits[0] = mask;\n  all[0] = mask;\n  out[0] = mask;\n}\n",
        expect=("2:3-2:25", "5:53-5:66"),
        message="stores the 64-bit mask of `__ballot` in this buffer of 32-bit words",
    ),
    # The mask kept in 64 bits, then copied into a 32-bit variable declared before the loop (apex's relu mask).
    Invalid(
        """
        __device__ void relu_bits(const float* x, unsigned int* out, int lane_id) {
          unsigned int relu_mask;
          for (int i = 0; i < 4; ++i) {
            auto local_relu_mask = __ballot(x[i * 32 + lane_id] < 0.0F);
            if (lane_id == i) relu_mask = local_relu_mask;
          }
          out[lane_id] = relu_mask;
        }
        """,
        expect=("2:3-2:26",),
        message="`relu_mask = local_relu_mask` copies the 64-bit mask of `__ballot`",
        no_fix=True,
    ),
    # The apex relu-mask kernel: ballot result kept in an `unsigned int`.
    Invalid(
        """
        __device__ void relu_bits(const float* x, unsigned int* out) {
          int lane_id = threadIdx.x & 31;
          for (int i = 0; i < 4; ++i) {
            bool rectified = x[i * 32 + lane_id] < 0.0F;
            unsigned int local_relu_mask = __ballot(rectified);
            if (lane_id == i) out[i] = local_relu_mask;
          }
        }
        """,
        expect=("5:5-5:55",),
        message="stored in `unsigned int`",
        fixed="""
        __device__ void relu_bits(const float* x, unsigned int* out) {
          int lane_id = threadIdx.x & 31;
          for (int i = 0; i < 4; ++i) {
            bool rectified = x[i * 32 + lane_id] < 0.0F;
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
            unsigned long long local_relu_mask = __ballot(rectified);
        #else
            unsigned int local_relu_mask = __ballot(rectified);
        #endif
            if (lane_id == i) out[i] = local_relu_mask;
          }
        }
        """,
    ),
    # A full-warp `__ballot_sync`: the ROCm branch also drops the mask (ROC210), giving one clean branch.
    Invalid(
        """
        #define FULL_MASK 0xffffffff
        __global__ void count_positive(const float* x, int* out) {
          const uint32_t votes = __ballot_sync(FULL_MASK, x[threadIdx.x] > 0.f);  // one bit per lane
          if (threadIdx.x % warpSize == 0) atomicAdd(out, __popcll(votes));
        }
        """,
        expect=("3:3-3:72",),
        message="stored in `uint32_t`",
        fixed="""
        #define FULL_MASK 0xffffffff
        __global__ void count_positive(const float* x, int* out) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          const uint64_t votes = __ballot(x[threadIdx.x] > 0.f);
        #else
          const uint32_t votes = __ballot_sync(FULL_MASK, x[threadIdx.x] > 0.f);  // one bit per lane
        #endif
          if (threadIdx.x % warpSize == 0) atomicAdd(out, __popcll(votes));
        }
        """,
    ),
    Invalid(
        """
        __device__ uint32_t active_lanes() {
          return __activemask();
        }
        """,
        expect=("2:10-2:24",),
        message="returned as `uint32_t`",
    ),
    Invalid(
        """
        __global__ void vote_kernel(const int* keys, uint32_t* out) {
          uint32_t masks[2];
          masks[0] = __match_any_sync(__activemask(), keys[threadIdx.x]);
          out[threadIdx.x] = masks[0];
        }
        """,
        expect=("3:14-3:65",),
        message="assigned to `uint32_t`",
    ),
    Invalid(
        """
        __device__ int leaders(bool p) {
          const auto bits = static_cast<unsigned>(__ballot(p) & __lanemask_lt());
          return bits == 0;
        }
        """,
        expect=("2:43-2:54", "2:57-2:72"),
        message="cast to `unsigned`",
        fixed="""
        __device__ int leaders(bool p) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          const auto bits = static_cast<unsigned long long>(__ballot(p) & __lanemask_lt());
        #else
          const auto bits = static_cast<unsigned>(__ballot(p) & __lanemask_lt());
        #endif
          return bits == 0;
        }
        """,
    ),
    Invalid(
        """
        __global__ void flag_rows(const float* x, int* any_negative) {
          int votes = (int)__ballot(x[threadIdx.x] < 0.f);
          if (threadIdx.x == 0) *any_negative = votes;
        }
        """,
        expect=("2:20-2:50",),
        message="cast to `int`",
        fixed="""
        __global__ void flag_rows(const float* x, int* any_negative) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          unsigned long long votes = (unsigned long long)__ballot(x[threadIdx.x] < 0.f);
        #else
          int votes = (int)__ballot(x[threadIdx.x] < 0.f);
        #endif
          if (threadIdx.x == 0) *any_negative = votes;
        }
        """,
    ),
    # In a `.hip` file too: the wave is 64 lanes there.
    Invalid(
        """
        #include <hip/hip_runtime.h>
        __global__ void k(const int* f, unsigned* o) {
          unsigned m = __ballot(f[threadIdx.x]);
          o[blockIdx.x] = m;
        }
        """,
        path="kernel.hip",
        expect=("3:3-3:40",),
    ),
)
