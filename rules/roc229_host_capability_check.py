"""ROC229 host-capability-check."""

from __future__ import annotations

import re

from rocmlint.cuda import device_query
from rocmlint.cuda.device_query import holds_attribute, is_property_field, same_on_current_gpus
from rocmlint.cuda.frontend import Anchors, CudaContext, Node
from rocmlint.cuda.syntax import disabled, largest_terms, number_use, outermost, short_circuited, whole_condition
from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

_FIELDS = ("major", "minor")
_CAPABILITY_ATTRIBUTES = re.compile(
    r"(?:cudaDevAttr|hipDeviceAttribute)ComputeCapability(?:Major|Minor)|CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_(?:MAJOR|MINOR)"
)
_PART_ATTRIBUTES = {
    "major": re.compile(r"ComputeCapabilityMajor|COMPUTE_CAPABILITY_MAJOR"),
    "minor": re.compile(r"ComputeCapabilityMinor|COMPUTE_CAPABILITY_MINOR"),
}
_WHAT = {
    "comparison": "compares the CUDA compute capability",
    "switch": "switches on the CUDA compute capability",
    "arithmetic": "computes an SM number from the compute capability",
}
_FORMATTING_CALL = re.compile(r"(?:\w+::)*(?:v?[sfd]?n?printf|print|format)")
_FIX_MESSAGE = (
    "on ROCm make the compute-capability test false (review: the ROCm side then takes the non-NVIDIA-feature "
    "path; test `gcnArchName` or `prop.arch.has*` for what the check guards)"
)


class HostCapabilityCheck(Rule):
    """
    ## What it does
    Flags host code that compares the CUDA compute capability: `prop.major`/`prop.minor` of a
    `cudaDeviceProp`/`hipDeviceProp_t` (also `at::cuda::getCurrentDeviceProperties()->major`), an SM number computed
    as `major * 10 + minor`, and values read with `cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor/Minor,
    dev)`.

    ## Why is this bad on ROCm?
    On ROCm `hipDeviceProp_t.major/minor` hold the GFX IP version (9.4 on MI300X, 11.0 on RDNA3): `major >= 8` meant for
    Ampere selects the wrong path, and `major == 8` rejects AMD GPUs (DeepSpeed: MI300 "not Ampere"). The HIP porting
    guide says to test `prop.arch.has*` flags or `gcnArchName` instead. Not reported: a floor every current GPU (NVIDIA
    sm_75 and newer, AMD majors 9 to 12) clears alike (`major >= 3`, `major < 7`); a test only ROCm compiles
    (`#ifdef __HIP_PLATFORM_AMD__`: written for GFX IP); one after a `&&` false on ROCm (`haveArch && major == 12` where
    ROCm declares `bool haveArch = false;` and nothing ROCm compiles assigns it or takes its address); one a project's
    HIP twin of its CUDA file rewrote for GFX IP.

    ## Example
    ```cuda
    void check_support() {
      auto dprops = at::cuda::getCurrentDeviceProperties();
      bool is_sm8x = dprops->major == 8 && dprops->minor >= 0;
      TORCH_CHECK(is_sm8x, "FlashAttention only supports Ampere GPUs or newer.");
    }
    ```

    ## Fix
    Write the ROCm side by hand from what the check guards, for example an architecture list:
    ```cuda
    void check_support() {
      auto dprops = at::cuda::getCurrentDeviceProperties();
    #if defined(USE_ROCM)
      bool is_sm8x = std::string(dprops->gcnArchName).rfind("gfx94", 0) == 0;
    #else
      bool is_sm8x = dprops->major == 8 && dprops->minor >= 0;
    #endif
      TORCH_CHECK(is_sm8x, "FlashAttention only supports Ampere GPUs or newer.");
    }
    ```
    The unsafe autofix writes a starting point for that review: the statement behind a ROCm gate, where each test
    made only of capability comparisons becomes `false && (<test>)`, so ROCm behaves as a GPU without the NVIDIA
    capability (other terms, as in `force || prop.major >= 8`, keep their meaning):
    ```cuda
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
      bool is_sm8x = false && (dprops->major == 8 && dprops->minor >= 0);
    #else
      bool is_sm8x = dprops->major == 8 && dprops->minor >= 0;
    #endif
    ```
    Switches on `major` and computed SM numbers (`major * 10 + minor`) get no fix.

    ## Fix safety
    Unsafe. The NVIDIA branch (`#else`) keeps the statement token for token, so `nvcc` compiles what it compiled
    before. On ROCm the test is now false, which skips "Ampere or newer" paths (usually the NVIDIA-specific kernels)
    but also makes "too old" guards such as `!(major >= 7)` reject the device; what the ROCm branch should test (a
    gfx list from `gcnArchName`, a `prop.arch.has*` flag) depends on what the capability check was guarding.
    """

    code = "ROC229"
    name = "host-capability-check"
    severity = Severity.ERROR
    fix_availability = FixAvailability.UNSAFE
    language = "cuda"
    triggers = (b"major", b"minor", b"ComputeCapability", b"COMPUTE_CAPABILITY")

    def __init__(self) -> None:
        self._reported: set[tuple[int, int]] = set()  # conditions: `major == 8 && minor >= 0` is one check

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """`.major`/`.minor` hold the field's name, in a file that may read device properties; the variables an
        attribute getter fills can be any identifier, in a file naming a capability attribute (as each one does)."""
        fields = ctx.word_offsets(*_FIELDS) if device_query.may_read_device_properties(ctx) else ()
        needed: dict[str, Anchors] = {"field_expression": fields} if fields else {}
        if device_query.may_fill_attribute_variables(ctx, b"ComputeCapability", b"COMPUTE_CAPABILITY"):
            needed["identifier"] = None
        return needed

    def visit_field_expression(self, node: Node, ctx: CudaContext) -> None:
        if is_property_field(node, ctx, _FIELDS):
            self._check_use(node, ctx)

    def visit_identifier(self, node: Node, ctx: CudaContext) -> None:
        parent = node.parent
        if parent is not None and parent.type == "pointer_expression":
            return  # the `&major` handed to cudaDeviceGetAttribute itself
        if holds_attribute(node, ctx, _CAPABILITY_ATTRIBUTES):
            self._check_use(node, ctx)

    def _check_use(self, value: Node, ctx: CudaContext) -> None:
        """Report a comparison of the capability, a switch on it or an SM number made from it, once per condition."""
        use = None if short_circuited(value, ctx) else number_use(value, ctx)
        if use is None or ctx.written_for_rocm(value):  # AMD's GFX IP numbering, read on purpose
            return
        kind, node = use
        whole = whole_condition(node, ctx)
        if (whole.start_byte, whole.end_byte) in self._reported or ctx.rewritten_for_amd(whole):
            return
        self._reported.add((whole.start_byte, whole.end_byte))
        if (kind == "comparison" and self._selects_nothing(whole, ctx)) or (
            kind == "arithmetic" and _printed(node, ctx)
        ):
            return
        ctx.report(
            node,
            f"`{ctx.text(node)}` {_WHAT[kind]}; on ROCm `major.minor` is the GFX IP version (9.4 on MI300X): test "
            "`gcnArchName` or `prop.arch.has*` flags in a ROCm branch",
            fix=self._fix(whole, ctx) if kind == "comparison" else None,
        )

    def _fix(self, whole: Node, ctx: CudaContext) -> Fix | None:
        """The statement behind a ROCm gate, each test of the condition `whole` made only of capability
        comparisons disabled there; other terms (`force || prop.major >= 8`) keep their meaning."""
        tests = largest_terms(whole, ctx, lambda comparison: self._reads_capability(comparison, ctx))
        replacements = [(test, disabled(test, ctx)) for test in tests]
        return ctx.statement_fix(_FIX_MESSAGE, whole, replacements, safe=False) if replacements else None

    def _selects_nothing(self, whole: Node, ctx: CudaContext) -> bool:
        """Every capability test of the condition `whole` (`force || prop.major >= 3`: the comparison) is a floor
        every current GPU of both vendors clears the same way."""
        tests = largest_terms(whole, ctx, lambda comparison: self._reads_capability(comparison, ctx))
        return bool(tests) and all(
            same_on_current_gpus(test, ctx, lambda n: self._capability_part(n, ctx)) for test in tests
        )

    def _capability_part(self, node: Node, ctx: CudaContext) -> str | None:
        """ "major" or "minor" for a read of that part of the capability, None for anything else."""
        if node.type == "field_expression":
            field = node.child_by_field_name("field")
            return ctx.text(field) if field is not None and is_property_field(node, ctx, _FIELDS) else None
        if node.type != "identifier":
            return None
        return next((part for part, pattern in _PART_ATTRIBUTES.items() if holds_attribute(node, ctx, pattern)), None)

    def _reads_capability(self, node: Node, ctx: CudaContext) -> bool:
        return any(
            is_property_field(n, ctx, _FIELDS)
            if n.type == "field_expression"
            else holds_attribute(n, ctx, _CAPABILITY_ATTRIBUTES)
            for n in ctx.descendants(node, "field_expression", "identifier")
        )


def _printed(number: Node, ctx: CudaContext) -> bool:
    """An SM number handed straight to a formatting call (`printf("SM%d", major * 100 + minor * 10)`): shown to a
    reader, it selects no code (ROCm prints its GFX IP version as SM940, a cosmetic difference)."""
    arguments = outermost(number).parent
    call = arguments.parent if arguments is not None and arguments.type == "argument_list" else None
    return call is not None and bool(_FORMATTING_CALL.fullmatch(ctx.call_name(call) or ""))


HostCapabilityCheck.valid = (
    # The check only runs on NVIDIA builds; code only ROCm compiles reads the GFX IP version on purpose (MI300).
    Valid(
        """
        void check(const at::Tensor& q) {
          auto dprops = at::cuda::getCurrentDeviceProperties();
        #ifndef USE_ROCM
          bool is_sm8x = dprops->major == 8 && dprops->minor >= 0;
          TORCH_CHECK(is_sm8x, "needs Ampere");
        #else
          TORCH_CHECK(dprops->major == 9 && dprops->minor >= 4, "needs GFX IP 9.4");
        #endif
        }
        """,
    ),
    Valid(
        """
        bool supports_bf16(int device) {
          cudaDeviceProp prop;
          cudaGetDeviceProperties(&prop, device);
        #if defined(USE_ROCM)
          return std::string(prop.gcnArchName).find("gfx94") == 0;
        #else
          return prop.major >= 8;
        #endif
        }
        """,
    ),
    # Printing the capability, and `.major` of other structs, are not capability checks.
    Valid(
        r"""
        struct Version { int major; int minor; };
        void report(const cudaDeviceProp& props, Version v) {
          printf("cc: %d.%d (SM%d)\n", props.major, props.minor, props.major * 100 + props.minor * 10);
          if (v.major >= 2 && v.minor > 1) printf("new format\n");
        }
        """,
    ),
    # Tests ROCm never evaluates: NVIDIA-only code, and after a flag ROCm's declaration sets false and never changes.
    Valid(
        """
        int sm_count_for_arch(int dev) {
          int major = 0;
        #if !defined(__HIP_PLATFORM_AMD__)
          bool have_arch = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess;
          if (major >= 9) return 132;
        #else
          bool have_arch = false;
        #endif
          return have_arch && major * 10 >= 80 ? 108 : 104;
        }
        """,
    ),
    # Floors every current GPU clears the same way : no feature is selected.
    Valid(
        """
        bool should_use_cuvs(int device, bool use_cuvs) {
          auto prop = getDeviceProperties(device);
          if (prop.major < 7) return false;
          XYZ_ASSERT_FMT(prop.major >= 3, "need 3.0+ compute capability, have %d", prop.major);
          return use_cuvs && (prop.major >= 6 || (prop.major == 5 && prop.minor >= 3));
        }
        """,
    ),
    # A tensor layout's `major` field, and a loop bound named like it.
    Valid(
        """
        void transpose(Layout layout, int major) {
          if (layout.major == Layout::Row) { launch_row(); }
          for (int i = 0; i < major; ++i) launch_col(i);
        }
        """,
    ),
    # What the fix writes: the ROCm arm never evaluates the comparison (`false && ...`).
    Valid(
        """
        bool use_fast_path(const cudaDeviceProp& prop, bool force) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          return force || (false && (prop.major >= 8 && prop.minor >= 0));
        #else
          return force || (prop.major >= 8 && prop.minor >= 0);
        #endif
        }
        """,
    ),
)
HostCapabilityCheck.invalid = (
    Invalid(
        """
        void mha_fwd(const at::Tensor& q) {
          auto dprops = at::cuda::getCurrentDeviceProperties();
          bool is_sm8x = dprops->major == 8 && dprops->minor >= 0;
          bool is_sm90 = dprops->major == 9 && dprops->minor == 0;
          TORCH_CHECK(is_sm90 || is_sm8x, "FlashAttention only supports Ampere GPUs or newer.");
        }
        """,
        expect=("3:18-3:36", "4:18-4:36"),
        message="compares the CUDA compute capability",
        fixed="""
        void mha_fwd(const at::Tensor& q) {
          auto dprops = at::cuda::getCurrentDeviceProperties();
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          bool is_sm8x = false && (dprops->major == 8 && dprops->minor >= 0);
        #else
          bool is_sm8x = dprops->major == 8 && dprops->minor >= 0;
        #endif
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          bool is_sm90 = false && (dprops->major == 9 && dprops->minor == 0);
        #else
          bool is_sm90 = dprops->major == 9 && dprops->minor == 0;
        #endif
          TORCH_CHECK(is_sm90 || is_sm8x, "FlashAttention only supports Ampere GPUs or newer.");
        }
        """,
    ),
    Invalid(
        """
        void attention(at::Tensor& q) {
          cudaDeviceProp* prop = at::cuda::getCurrentDeviceProperties();
          DISPATCH_ARCHTAG(prop->major * 10 + prop->minor, launch(q));
        }
        """,
        expect=("3:20-3:50",),
        message="computes an SM number",
    ),
    Invalid(
        """
        int pick_kernel(int dev) {
          int major = 0, minor = 0;
          cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
          cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
          if (major >= 9) return 2;
          return major * 10 + minor >= 80 ? 1 : 0;
        }
        """,
        expect=("5:7-5:17", "6:10-6:34"),
        fixed="""
        int pick_kernel(int dev) {
          int major = 0, minor = 0;
          cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
          cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          if (false && (major >= 9)) return 2;
        #else
          if (major >= 9) return 2;
        #endif
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          return (false && (major * 10 + minor >= 80)) ? 1 : 0;
        #else
          return major * 10 + minor >= 80 ? 1 : 0;
        #endif
        }
        """,
    ),
    Invalid(
        """
        void run(const cudaDeviceProp& deviceProp) {
          int runtime_cuda_arch = deviceProp.major * 100 + deviceProp.minor * 10;
          dispatch(runtime_cuda_arch);
        }
        """,
        expect=("2:27-2:73",),
    ),
    Invalid(
        """
        float focal_loss(const at::Tensor& x) {
          cudaDeviceProp props;
          cudaGetDeviceProperties(&props, x.get_device());
          switch (props.major) {
            case 8: return launch_ampere(x);
            default: return launch_generic(x);
          }
        }
        """,
        expect=("4:3-7:4",),
        message="switches on",
        no_fix=True,
    ),
    # Only the capability part of the condition is disabled on ROCm; `force` keeps its meaning.
    Invalid(
        """
        bool use_fast_path(const cudaDeviceProp& prop, bool force) {
          return force || (prop.major >= 8 && prop.minor >= 0);
        }
        """,
        expect=("2:20-2:35",),
        fixed="""
        bool use_fast_path(const cudaDeviceProp& prop, bool force) {
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          return force || (false && (prop.major >= 8 && prop.minor >= 0));
        #else
          return force || (prop.major >= 8 && prop.minor >= 0);
        #endif
        }
        """,
    ),
    # Turing and Ampere answer `major >= 8` differently: it selects a feature.
    Invalid(
        """
        bool supportsBFloat16(int device) {
          auto& prop = getDeviceProperties(device);
          return prop.major >= 8;
        }
        """,
        expect=("3:10-3:25",),
        fixed="""
        bool supportsBFloat16(int device) {
          auto& prop = getDeviceProperties(device);
        #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
          return false && (prop.major >= 8);
        #else
          return prop.major >= 8;
        #endif
        }
        """,
    ),
)
