"""ROC224 nanosleep."""

from __future__ import annotations

from rocmlint.cuda.frontend import Anchors, CudaContext, Node
from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid


class Nanosleep(Rule):
    """
    ## What it does
    Flags calls to the CUDA device intrinsic `__nanosleep(ns)` that a ROCm build compiles.

    ## Why is this bad on ROCm?
    HIP's device headers do not declare `__nanosleep` (it is absent from `amd_device_functions.h`), so
    the kernel stops compiling with "use of undeclared identifier". Ports replace it with the AMDGPU
    sleep builtin `__builtin_amdgcn_s_sleep(n)`, which sleeps in coarse units of 64 clock cycles rather
    than nanoseconds.

    ## Example
    ```cuda
    __device__ void backoff(unsigned ns) {
      __nanosleep(ns);
    }
    ```

    ## Fix
    ```cuda
    __device__ void backoff(unsigned ns) {
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
      __builtin_amdgcn_s_sleep(1);
    #else
      __nanosleep(ns);
    #endif
    }
    ```

    ## Fix safety
    Safe: the NVIDIA branch keeps the original statement token for token. The ROCm branch only
    approximates the delay (a spin-wait back-off stays correct, its timing changes).
    """

    code = "ROC224"
    name = "nanosleep"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SAFE
    language = "cuda"
    triggers = (b"__nanosleep",)

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """A reported call holds the name."""
        anchors = ctx.offsets(b"__nanosleep")
        return {"call_expression": anchors} if anchors else {}

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        if ctx.call_name(node) != "__nanosleep":
            return
        ctx.report(
            node,
            "`__nanosleep` does not exist in HIP; on ROCm use `__builtin_amdgcn_s_sleep(n)` (sleeps n*64 cycles)",
            fix=_fix(node, ctx),
        )


def _fix(call: Node, ctx: CudaContext) -> Fix | None:
    statement = ctx.statement_of(call)
    if statement is None or statement.type != "expression_statement":
        return None  # a sleep inside a loop header or condition: no single statement to duplicate
    rocm = ctx.rocm_variant(statement, [(call, "__builtin_amdgcn_s_sleep(1)")])
    return ctx.gated_fix("sleep with `__builtin_amdgcn_s_sleep(1)` on ROCm", statement, rocm)


Nanosleep.valid = (
    Valid(
        """
        __device__ void backoff(unsigned ns) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__)
          __builtin_amdgcn_s_sleep(1);
        #else
          __nanosleep(ns);
        #endif
        }
        """,
    ),
    Valid(
        """
        __device__ void backoff(unsigned ns) {
        #ifndef USE_ROCM
          __nanosleep(ns);
        #endif
        }
        """,
    ),
    Valid(
        """
        __device__ void backoff(unsigned ns) {
        #if !defined(__HIP_PLATFORM_AMD__) && __CUDA_ARCH__ >= 700
          __nanosleep(ns);
        #endif
        }
        """,
    ),
    # The name in a comment or a string is not a call.
    Valid(
        """
        // On Volta and later we could call __nanosleep(100) here.
        __device__ const char* kWhy = "__nanosleep unavailable";
        """,
    ),
)
Nanosleep.invalid = (
    Invalid(
        """
        __device__ void backoff(unsigned ns) {
          __nanosleep(ns);
        }
        """,
        expect=("2:3-2:18",),
        message="__builtin_amdgcn_s_sleep",
        fixed="""
        __device__ void backoff(unsigned ns) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          __builtin_amdgcn_s_sleep(1);
        #else
          __nanosleep(ns);
        #endif
        }
        """,
    ),
    Invalid(
        """
        template <int kBackoffNs>
        __global__ void spin_until(volatile int* flag) {
          while (*flag == 0) {
            __nanosleep(kBackoffNs);  // back off
          }
        }
        """,
        expect=("4:5-4:28",),
        fixed="""
        template <int kBackoffNs>
        __global__ void spin_until(volatile int* flag) {
          while (*flag == 0) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
            __builtin_amdgcn_s_sleep(1);
        #else
            __nanosleep(kBackoffNs);  // back off
        #endif
          }
        }
        """,
    ),
    Invalid(
        """
        #ifdef USE_ROCM
        #define SLEEP() __builtin_amdgcn_s_sleep(1)
        #endif
        __device__ void wait_for(int* lock) {
          while (atomicCAS(lock, 0, 1) != 0) { __nanosleep(32); }
        }
        """,
        expect=("5:40-5:55",),
    ),
)
