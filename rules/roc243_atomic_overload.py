"""ROC243 atomic-overload."""

from __future__ import annotations

from rocmlint.cuda.frontend import Anchors, CudaContext, Node
from rocmlint.cuda.syntax import without_parentheses
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

# Floating-point overloads HIP's headers define and CUDA's do not (CUDA has `atomicAdd(double*)` only from sm_60, so
# code defines it under `__CUDA_ARCH__ < 600`, a test HIP passes): atomic -> pointee types (amd_hip_atomic.h).
_DEFINED_BY_HIP = {"atomicMax": ("float", "double"), "atomicMin": ("float", "double"), "atomicAdd": ("double",)}
# Element types whose `atomicAdd` CUDA has (sm_60/sm_70) and HIP does not declare.
_HALF_TYPES = frozenset({"half", "__half", "half2", "__half2"})
_QUALIFIERS = frozenset({"const", "volatile", "__restrict__", "struct"})


class AtomicOverload(Rule):
    """
    ## What it does
    Flags, in code a ROCm build compiles, the floating-point atomic overloads CUDA and HIP disagree on: a
    definition of `atomicMax`/`atomicMin` for `float`/`double` or `atomicAdd` for `double` (the usual CAS-loop
    helper CUDA code carries), and a call of `atomicAdd` on a `half`/`half2` pointer.

    ## Why is this bad on ROCm?
    HIP's `amd_hip_atomic.h` already defines `atomicMax(float*, float)`, `atomicMin(float*, float)`, their `double`
    forms and `atomicAdd(double*, double)`, so the project's own definition is a "redefinition of 'atomicMax'"
    error (hipcc 5.2.3 and HIP 7.1; bitsandbytes wrapped its float `atomicMax` in `#if !BNB_HIP`). Conversely
    HIP declares no `atomicAdd` for `__half`/`__half2` (hipcc 5.2.3: "no matching function for call to
    'atomicAdd'"; absent from ROCm 6.3's `amd_hip_fp16.h`): exllamav2's port added a CAS-loop `half2` version.
    A call the project gives its own overload for (`atomicAdd(half2*, half2)` in this file or a header around it,
    compiled on ROCm) is not flagged.

    ## Example
    ```cuda
    __device__ float atomicMax(float* address, float val) {
      int* as_int = (int*)address;
      int old = *as_int, assumed;
      do {
        assumed = old;
        old = atomicCAS(as_int, assumed, __float_as_int(fmaxf(val, __int_as_float(assumed))));
      } while (assumed != old);
      return __int_as_float(old);
    }
    ```

    ## Fix
    ```cuda
    #if !defined(USE_ROCM)  // HIP defines atomicMax(float*, float)
    __device__ float atomicMax(float* address, float val) { /* CAS loop */ }
    #endif
    ```

    ## Fix safety
    No automatic fix: which arm the helper belongs in depends on the project's ROCm gate, and a `half2` atomic
    needs a CAS loop written for ROCm.
    """

    code = "ROC243"
    name = "atomic-overload"
    severity = Severity.ERROR
    fix_availability = FixAvailability.NONE
    language = "cuda"
    triggers = (b"atomicMax", b"atomicMin", b"atomicAdd")

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """A definition's declarator and a call both hold the atomic's name."""
        names = ctx.word_offsets(*_DEFINED_BY_HIP)
        return {"function_declarator": names, "call_expression": ctx.word_offsets("atomicAdd")} if names else {}

    def visit_function_declarator(self, node: Node, ctx: CudaContext) -> None:
        name = node.child_by_field_name("declarator")
        if name is None or ctx.text(name) not in _DEFINED_BY_HIP or node.parent is None:
            return
        if node.parent.type != "function_definition":
            return  # a declaration: HIP's own prototype repeated is harmless
        pointee = _first_pointer_parameter(node, ctx)
        if pointee in _DEFINED_BY_HIP[ctx.text(name)]:
            ctx.report(
                name,
                f"HIP already defines `{ctx.text(name)}({pointee}*, {pointee})` (amd_hip_atomic.h): this definition "
                "is a redefinition error on ROCm; compile it for CUDA only",
            )

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        if ctx.call_name(node) != "atomicAdd":
            return
        arguments = ctx.arguments(node)
        pointee = _root_type(arguments[0], ctx) if arguments else None
        if pointee in _HALF_TYPES and ("atomicAdd", pointee) not in ctx.atomic_overloads():
            ctx.report(
                node,
                "HIP declares no `atomicAdd` for `__half`/`__half2` (CUDA has it from sm_60/sm_70): on ROCm add "
                "a CAS loop on the 32-bit word (`atomicCAS`) in a ROCm branch",
            )


def _first_pointer_parameter(declarator: Node, ctx: CudaContext) -> str | None:
    """`float` for `(float* address, float val)`: the pointee of the first parameter, when it is a pointer."""
    parameters = declarator.child_by_field_name("parameters")
    first = next((c for c in parameters.named_children), None) if parameters is not None else None
    if first is None or first.type != "parameter_declaration":
        return None
    type_node, pointer = first.child_by_field_name("type"), first.child_by_field_name("declarator")
    if type_node is None or pointer is None or pointer.type != "pointer_declarator":
        return None
    return ctx.text(type_node)


def _root_type(expression: Node, ctx: CudaContext) -> str | None:
    """The element type `expression` points into: the declared type of `out` in `out`, `out + 1`, `&out[i]`,
    `&v`, or the type of a `(half2*)p` cast (CUDA compiles the call only with a pointer there)."""
    expression = without_parentheses(expression)
    if expression.type == "cast_expression":
        cast_type = expression.child_by_field_name("type")
        return _base(ctx.text(cast_type).replace("*", " ")) if cast_type is not None else None
    if expression.type == "pointer_expression" or expression.type == "subscript_expression":
        inner = expression.child_by_field_name("argument")
        return _root_type(inner, ctx) if inner is not None else None
    if expression.type == "binary_expression":
        left = expression.child_by_field_name("left")
        return _root_type(left, ctx) if left is not None else None
    if expression.type == "identifier":
        return _base(ctx.declared_type(expression) or "")
    return None


def _base(written: str) -> str | None:
    words = [word for word in written.split() if word not in _QUALIFIERS]
    return words[0] if len(words) == 1 else None


AtomicOverload.valid = (
    # A CUDA-only helper (bitsandbytes' port).
    Valid(
        """
        #if !defined(USE_ROCM)
        __device__ float atomicMax(float* address, float val) { return val; }
        #endif
        """,
    ),
    # The overloads HIP and CUDA share, and a prototype.
    Valid(
        """
        __device__ int atomicMax(int* address, int val);
        __global__ void k(float* f, double* d, int* i) {
          atomicAdd(f, 1.f);
          atomicAdd(d, 1.0);
          atomicMax(i, 3);
        }
        """,
    ),
    # The file's own `half2` atomicAdd for ROCm is what its calls use.
    Valid(
        """
        #if defined(USE_ROCM)
        __device__ __forceinline__ void atomicAdd(half2* address, half2 val) { atomicAdd_half2(address, val); }
        #endif
        __global__ void acc(half2* out, half2 v) { atomicAdd(out, v); }
        """,
    ),
)
AtomicOverload.invalid = (
    Invalid(
        """
        __device__ float atomicMax(float* address, float val) {
          int* as_int = (int*)address;
          int old = *as_int;
          return __int_as_float(old);
        }
        """,
        expect=("1:18-1:27",),
        message="redefinition",
    ),
    # CUDA's `atomicAdd(double*)` needs sm_60: the fallback's `#if` is true on ROCm, where `__CUDA_ARCH__` is 0.
    Invalid(
        """
        #if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 600
        __device__ double atomicAdd(double* address, double val) {
          return atomicCAS_double(address, val);
        }
        #endif
        """,
        expect=("2:19-2:28",),
        message="`atomicAdd(double*, double)`",
    ),
    # exllamav2's q_gemm kernel: the output pointer declared `half2*`, and a cast.
    Invalid(
        """
        __global__ void reduce(void* c, half2 r01, half2 r23, half h) {
          half2 *out = (half2*) c;
          atomicAdd(out + 1, r23);
          atomicAdd(&((half*)c)[0], h);
        }
        """,
        expect=("3:3-3:26", "4:3-4:31"),
        message="`__half2`",
    ),
)
