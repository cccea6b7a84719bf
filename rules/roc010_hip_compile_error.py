"""ROC010 hip-compile-error."""

from rocmlint.diagnostics import Severity
from rocmlint.rule import ToolRule


class HipCompileError(ToolRule):
    """
    ## What it does
    Reports an error from `hipcc` when `rocmlint verify` (or `check --fix --verify`) compiles a CUDA file
    for AMD GPUs, at the file and line the compiler names.

    The file is compiled as a PyTorch extension build on ROCm compiles it: `hipcc -x hip
    --offload-arch=<targets> -DUSE_ROCM=1 -D__HIP_PLATFORM_AMD__=1`, with CUDA API names renamed to
    their HIP names first (in a temporary copy, from the table ROC216 uses), so the errors left are the
    porting hazards rocmlint's rules describe, not names hipify would rename.

    ## Why is this bad on ROCm?
    The file does not build on ROCm: a missing CUDA header, a 32-bit mask given to a `*_sync` warp
    intrinsic, inline PTX, an intrinsic HIP does not have.

    ## Example
    ```text
    csrc/welford.cu:42:14: ROC010 hipcc: use of undeclared identifier '__nanosleep'
    ```

    ## Fix
    Fix the hazard the message points at; most have a rocmlint rule with a gated fix
    (`rocmlint check --fix`).

    ## Fix safety
    No fix is offered for the compiler error itself.
    """

    code = "ROC010"
    name = "hip-compile-error"
    severity = Severity.ERROR
