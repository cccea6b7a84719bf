"""ROC206 cutlass."""

from __future__ import annotations

import re

from rocmlint.cuda.frontend import Anchors, CudaContext, Node
from rocmlint.cuda.hip_gaps import CUTLASS_HEADER
from rocmlint.cuda.preprocessor import Include
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

_USING_NAMESPACE = re.compile(r"using\s+namespace\s+:?:?\s*(cutlass|cute)\b")
_LIBRARY = {"cutlass": "CUTLASS", "cute": "CuTe"}


class Cutlass(Rule):
    """
    ## What it does
    Flags CUTLASS and CuTe in code a ROCm build compiles: the first `#include` of a `cutlass/...` or
    `cute/...` header in a file, or, in a file that gets the library through other headers, the first
    `#include` of a project header that brings it in (the project model follows the includes), else the
    first use of the `cutlass::`/`cute::` namespace.

    ## Why is this bad on ROCm?
    CUTLASS and CuTe are NVIDIA-only template libraries built on PTX (`mma.sync`, `ldmatrix`,
    `cp.async`, `wgmma`) and on the 32-lane warp; there is no ROCm build and hipify has no mapping for
    them. Code that uses them needs a separate ROCm path: Composable Kernel (CK), hipBLASLt, or a Triton
    kernel. xformers' ROCm builds, for example, dispatch memory-efficient attention to CK kernels while
    its CUTLASS-based ops report unavailable (facebookresearch/xformers#978, #1365), and DeepSpeed's
    evoformer CUTLASS kernels (`csrc/deepspeed4science/evoformer_attn/`) have no ROCm path.

    One diagnostic per file and library (the message counts the other includes): the first include
    already stops a ROCm build with "file not found", every further include and namespace use follows
    from the same decision (give the file a ROCm path), and a CUTLASS-based kernel directory would
    otherwise produce hundreds of identical hits.

    ## Example
    ```cuda
    #include <cutlass/gemm/device/gemm.h>

    using Gemm = cutlass::gemm::device::Gemm<cutlass::half_t, cutlass::layout::RowMajor,
                                             cutlass::half_t, cutlass::layout::ColumnMajor,
                                             float, cutlass::layout::RowMajor>;
    ```

    ## Fix
    ```cuda
    #ifdef USE_ROCM
    #include "ck_gemm.h"  // Composable Kernel instance for ROCm
    #else
    #include <cutlass/gemm/device/gemm.h>
    using Gemm = cutlass::gemm::device::Gemm<cutlass::half_t, cutlass::layout::RowMajor,
                                             cutlass::half_t, cutlass::layout::ColumnMajor,
                                             float, cutlass::layout::RowMajor>;
    #endif
    ```

    ## Fix safety
    No automatic fix: the ROCm path is a different kernel library.
    """

    code = "ROC206"
    name = "cutlass"
    severity = Severity.ERROR
    fix_availability = FixAvailability.NONE
    language = "cuda"
    triggers = (b"cutlass", b"cute/", b"cute::", b"namespace cute")

    def __init__(self) -> None:
        # One instance per file: the libraries already reported in this file.
        self._reported: set[str] = set()

    def visit_include(self, include: Include, ctx: CudaContext) -> None:
        match = CUTLASS_HEADER.search(include.header)
        if match is None:
            self._brought_in(include, ctx)
            return
        if match.group(1) in self._reported:
            return
        library = match.group(1)
        more = sum(1 for other in ctx.preprocessor.includes if other is not include and _is_open(other, library, ctx))
        also = f" (and {more} more {_LIBRARY[library]} include{'s' if more > 1 else ''} in this file)" if more else ""
        if ctx.report(
            include,
            f"`{include.header}` is a {_LIBRARY[library]} header{also}: CUTLASS/CuTe have no ROCm build; "
            "give ROCm a Composable Kernel/hipBLASLt path and keep the CUTLASS code behind `#ifndef USE_ROCM`",
        ):
            self._reported.add(library)

    def _brought_in(self, include: Include, ctx: CudaContext) -> None:
        """A project header whose own includes (or its headers') bring in CUTLASS or CuTe: the ROCm build stops at
        this `#include`, which stands for the file's namespace uses (one diagnostic for both libraries); a file
        that includes a library itself is reported there instead."""
        brought: dict[str, tuple[str, str]] = {}  # library -> its first header reached, and where
        for header, where in ctx.includes_through(include.header, include.system):
            match = CUTLASS_HEADER.search(header)
            if match is not None and match.group(1) not in self._reported:
                brought.setdefault(match.group(1), (header, where))
        libraries = [
            lib for lib in brought if not any(_is_open(other, lib, ctx) for other in ctx.preprocessor.includes)
        ]
        if not libraries:
            return
        header, where = brought[libraries[0]]
        names = " and ".join(_LIBRARY[library] for library in libraries)
        if ctx.report(
            include,
            f"`{include.header}` brings in {names} (`{header}`, {where}): CUTLASS/CuTe have no ROCm build; give ROCm "
            "a Composable Kernel/hipBLASLt path and keep this include behind `#ifndef USE_ROCM`",
        ):
            self._reported.update(libraries)

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """A namespace use spells its library as a whole word; one its header already reported is done."""
        pending = [library.encode() for library in _LIBRARY if library not in self._reported]
        anchors = ctx.offsets(*(word for word in pending if word in ctx.words))
        return {"namespace_identifier": anchors, "using_declaration": anchors} if anchors else {}

    def visit_namespace_identifier(self, node: Node, ctx: CudaContext) -> None:
        # `cutlass::gemm::GemmShape`, `cute::make_tensor`, `namespace cutlass { ... }`, `= cutlass::gemm`.
        self._namespace_use(node, ctx.text(node), ctx)

    def visit_using_declaration(self, node: Node, ctx: CudaContext) -> None:
        match = _USING_NAMESPACE.match(ctx.text(node))
        if match is not None:
            self._namespace_use(node, match.group(1), ctx)

    def _namespace_use(self, node: Node, library: str, ctx: CudaContext) -> None:
        if library not in _LIBRARY or library in self._reported:
            return
        if ctx.report(
            node,
            f"uses the {_LIBRARY[library]} namespace `{library}::`, which has no ROCm build; give ROCm a "
            "Composable Kernel/hipBLASLt path and keep this code behind `#ifndef USE_ROCM` "
            "(later uses in this file are not reported)",
        ):
            self._reported.add(library)


def _is_open(include: Include, library: str, ctx: CudaContext) -> bool:
    """An include of `library` that a ROCm build reads."""
    match = CUTLASS_HEADER.search(include.header)
    return match is not None and match.group(1) == library and not ctx.is_rocm_gated(include)


Cutlass.valid = (
    Valid(
        """
        #ifdef USE_ROCM
        #include "ck_gemm_instance.h"
        #else
        #include <cutlass/gemm/device/gemm.h>
        using Gemm = cutlass::gemm::device::Gemm<cutlass::half_t, cutlass::layout::RowMajor,
                                                 cutlass::half_t, cutlass::layout::ColumnMajor,
                                                 float, cutlass::layout::RowMajor>;
        #endif
        """,
    ),
    Valid(
        """
        #if !defined(__HIP_PLATFORM_AMD__)
        #include <cute/tensor.hpp>
        template <class Layout>
        __device__ void copy_tile(float* dst, const float* src, Layout layout) {
          using namespace cute;
          Tensor s = make_tensor(make_gmem_ptr(src), layout);
          Tensor d = make_tensor(make_gmem_ptr(dst), layout);
          copy(s, d);
        }
        #endif
        """,
    ),
    Valid(
        """
        #ifndef USE_ROCM
        #include "cutlass/numeric_types.h"
        using ElementAcc = cutlass::half_t;
        #else
        using ElementAcc = __half;
        #endif
        """,
    ),
    # Names that only look alike, and mentions in comments or strings.
    Valid(
        """
        // Tile sizes follow cutlass::gemm::GemmShape<128, 128, 32>.
        namespace cutlass_compat { constexpr int kTileM = 128; }
        const char* kBackend = "cutlass";
        int cute_count(int n) { return cutlass_compat::kTileM * n; }
        """,
    ),
)
Cutlass.invalid = (
    Invalid(
        """
        #include <cutlass/gemm/device/gemm.h>

        using Gemm = cutlass::gemm::device::Gemm<cutlass::half_t, cutlass::layout::RowMajor,
                                                 cutlass::half_t, cutlass::layout::ColumnMajor,
                                                 float, cutlass::layout::RowMajor>;
        """,
        expect=("1:1-1:38",),
        message="`cutlass/gemm/device/gemm.h` is a CUTLASS header",
    ),
    # Only the first namespace use in a file that gets CUTLASS through a project header.
    Invalid(
        """
        #include "gemm_kernel_utils.h"
        template <typename scalar_t>
        struct DefaultConfig {
          using Element = typename cutlass::platform::conditional<sizeof(scalar_t) == 2, cutlass::half_t, float>::type;
          static constexpr int kAlignment = 128 / cutlass::sizeof_bits<Element>::value;
        };
        """,
        expect=("4:28-4:35",),
        message="`cutlass::`",
    ),
    Invalid(
        """
        #include <cute/tensor.hpp>
        #include "cutlass/numeric_types.h"
        using namespace cute;
        """,
        expect=("1:1-1:27", "2:1-2:35"),
        message="CuTe header",
    ),
    # An include that is not ROCm-gated although its uses are.
    Invalid(
        """
        #include <cutlass/cutlass.h>
        #ifndef USE_ROCM
        using Gemm = cutlass::gemm::device::Gemm<cutlass::half_t, cutlass::layout::RowMajor,
                                                 cutlass::half_t, cutlass::layout::ColumnMajor,
                                                 float, cutlass::layout::RowMajor>;
        #endif
        """,
        expect=("1:1-1:29",),
    ),
    Invalid(
        """
        template <class TiledMma>
        __global__ void gemm_kernel(const half* A, const half* B, float* C) {
          using namespace cute;
          TiledMma mma;
        }
        """,
        expect=("3:3-3:24",),
        message="CuTe namespace",
    ),
)
