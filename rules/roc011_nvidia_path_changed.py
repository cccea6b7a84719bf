"""ROC011 nvidia-path-changed."""

from rocmlint.diagnostics import Severity
from rocmlint.rule import ToolRule


class NvidiaPathChanged(ToolRule):
    """
    ## What it does
    Reports a CUDA file whose NVIDIA translation unit changed: `nvcc -E` of the fixed file gives a
    different token stream from `nvcc -E` of the original (line markers and spacing ignored).

    ## Why is this bad on ROCm?
    It is bad on NVIDIA: a ROCm port must leave the NVIDIA build byte-for-byte what it was, so that
    the port cannot regress the platform it came from. rocmlint's fixes only add
    `#if <ROCm> ... #else` around the original text; a change here comes from an edit by hand or a
    broken fix. `check --fix --verify` restores such a file to its original bytes.

    ## Example
    ```text
    csrc/kernels.cu:1:1: ROC011 nvcc -E of the fixed file differs from the original: the NVIDIA path changed
    ```

    ## Fix
    Put the ROCm change behind `#if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__)` and keep the
    original text in the `#else` branch.

    ## Fix safety
    No fix is offered.
    """

    code = "ROC011"
    name = "nvidia-path-changed"
    severity = Severity.ERROR
