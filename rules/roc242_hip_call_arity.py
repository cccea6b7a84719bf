"""ROC242 hip-call-arity."""

from __future__ import annotations

from rocmlint.cuda.frontend import Anchors, CudaContext, Node
from rocmlint.cuda.hip_gaps import hip_call_forms
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid


class HipCallArity(Rule):
    """
    ## What it does
    Flags calls of CUDA runtime functions whose HIP counterpart takes a different number of arguments than the
    call passes, in code a ROCm build compiles: CUDA 12's three-argument `cudaGraphInstantiate(&exec, graph,
    flags)` and `cudaGraphExecUpdate(exec, graph, &result_info)`, and the six-argument
    `cudaStreamGetCaptureInfo(stream, &status, &id, &graph, &deps, &count)`.

    ## Why is this bad on ROCm?
    hipify renames the call (`hipGraphInstantiate`, `hipGraphExecUpdate`, `hipStreamGetCaptureInfo`), but HIP
    declares those with CUDA 11's signatures: `hipGraphInstantiate` takes five arguments (an error node and a
    log buffer), `hipGraphExecUpdate` four (an error node and an update result), `hipStreamGetCaptureInfo` three
    (its six-argument form is `hipStreamGetCaptureInfo_v2`). The renamed call does not compile
    (`include/hip/hip_runtime_api.h`). Ports add a ROCm branch: llama.cpp's `hipGraphExecUpdate` branch,
    exllamav2 dropping the capture-node lookup on ROCm.

    ## Example
    ```cuda
    void update(cudaGraphExec_t exec, cudaGraph_t graph) {
      cudaGraphExecUpdateResultInfo info;
      cudaGraphExecUpdate(exec, graph, &info);
    }
    ```

    ## Fix
    ```cuda
    void update(cudaGraphExec_t exec, cudaGraph_t graph) {
    #if defined(USE_ROCM)
      hipGraphNode_t error_node;
      hipGraphExecUpdateResult result;
      hipGraphExecUpdate(exec, graph, &error_node, &result);
    #else
      cudaGraphExecUpdateResultInfo info;
      cudaGraphExecUpdate(exec, graph, &info);
    #endif
    }
    ```

    ## Fix safety
    No automatic fix: the ROCm form returns its results in other variables the code has to declare and read.
    """

    code = "ROC242"
    name = "hip-call-arity"
    severity = Severity.ERROR
    fix_availability = FixAvailability.NONE
    language = "cuda"
    triggers = tuple(name.encode() for name in hip_call_forms())

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """A reported call holds the function's name."""
        anchors = ctx.word_offsets(*hip_call_forms())
        return {"call_expression": anchors} if anchors else {}

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        name = ctx.call_name(node)
        form = hip_call_forms().get(name.removeprefix("::") if name else "")
        if form is None:
            return
        count = len(ctx.arguments(node))
        if count in form.arguments:
            return
        expected = " or ".join(str(n) for n in sorted(form.arguments))
        ctx.report(
            node,
            f"`{name}` with {count} arguments does not compile on ROCm: hipify renames it to `{form.hip}`, which "
            f"takes {expected}; on ROCm call {form.instead}",
        )


HipCallArity.valid = (
    # The forms HIP declares too.
    Valid(
        """
        void capture(cudaStream_t s, cudaGraphExec_t* exec, cudaGraph_t graph) {
          cudaStreamCaptureStatus status;
          unsigned long long id;
          cudaStreamGetCaptureInfo(s, &status, &id);
          cudaGraphInstantiate(exec, graph, nullptr, nullptr, 0);
        }
        """,
    ),
    # The CUDA 12 form only in the NVIDIA arm.
    Valid(
        """
        void update(cudaGraphExec_t exec, cudaGraph_t graph) {
        #ifdef USE_ROCM
          hipGraphNode_t error_node;
          hipGraphExecUpdateResult result;
          hipGraphExecUpdate(exec, graph, &error_node, &result);
        #else
          cudaGraphExecUpdateResultInfo info;
          cudaGraphExecUpdate(exec, graph, &info);
        #endif
        }
        """,
    ),
    # A name in a comment or a string is no call.
    Valid(
        """
        // cudaGraphInstantiate(&exec, graph, 0) is the CUDA 12 form
        const char* kWhat = "cudaGraphExecUpdate(exec, graph, &info)";
        """,
    ),
)
HipCallArity.invalid = (
    Invalid(
        """
        void update(cudaGraphExec_t exec, cudaGraph_t graph) {
          cudaGraphExecUpdateResultInfo info;
          cudaGraphExecUpdate(exec, graph, &info);
        }
        """,
        expect=("3:3-3:42",),
        message="takes 4",
    ),
    Invalid(
        """
        void instantiate(cudaGraphExec_t* exec, cudaGraph_t graph) {
          CUDA_CHECK(cudaGraphInstantiate(exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch));
        }
        """,
        expect=("2:14-2:89",),
        message="hipGraphInstantiateWithFlags",
    ),
    Invalid(
        """
        void last_node(cudaStream_t stream) {
          cudaStreamCaptureStatus status;
          unsigned long long id;
          cudaGraph_t graph;
          const cudaGraphNode_t* deps;
          size_t count;
          ::cudaStreamGetCaptureInfo(stream, &status, &id, &graph, &deps, &count);
        }
        """,
        expect=("7:3-7:74",),
        message="hipStreamGetCaptureInfo_v2",
    ),
)
