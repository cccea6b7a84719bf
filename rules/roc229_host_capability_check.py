"""ROC229 host-capability-check."""

from __future__ import annotations

import re

from rocmlint.cuda.frontend import Anchors, CudaContext, Node
from rocmlint.cuda.syntax import COMPARISONS, largest_terms, operator_of, outermost, short_circuited, whole_condition
from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

_ARITHMETIC = frozenset({"+", "-", "*"})
_DEVICE_PROP_TYPES = re.compile(r"\b(?:cudaDeviceProp|hipDeviceProp_t|hipDeviceProp)\b")
# Receivers conventionally holding device properties: prop, props, dprops, deviceProp, device_prop, properties.
_PROP_NAME = re.compile(r"(?:\w*_)?(?:d|dev|device|gpu|cuda|hip)?_?prop(?:s|erties)?", re.IGNORECASE)
_PROP_GETTERS = re.compile(r"(?:^|::)(?:getCurrentDeviceProperties|getDeviceProperties)$")
_CAPABILITY_ATTRIBUTES = re.compile(
    r"(?:cudaDevAttr|hipDeviceAttribute)ComputeCapability(?:Major|Minor)|CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_(?:MAJOR|MINOR)"
)
_GET_ATTRIBUTE = frozenset({"cudaDeviceGetAttribute", "hipDeviceGetAttribute", "cuDeviceGetAttribute"})
_GET_ATTRIBUTE_WORDS = frozenset(name.encode() for name in _GET_ATTRIBUTE)
# Where `false && (<test>)` can replace a test without parentheses around it (lowest-precedence slots).
_LOOSE_SLOTS = frozenset(
    {
        "condition_clause",
        "init_declarator",
        "argument_list",
        "parenthesized_expression",
        "return_statement",
        "expression_statement",
    }
)
_FIX_MESSAGE = (
    "on ROCm make the compute-capability test false (review: the ROCm side then takes the non-NVIDIA-feature "
    "path; test `gcnArchName` or `prop.arch.has*` for what the check guards)"
)


class HostCapabilityCheck(Rule):
    """
    ## What it does
    Flags host code that compares the CUDA compute capability: `prop.major`/`prop.minor` of a
    `cudaDeviceProp`/`hipDeviceProp_t` (also `at::cuda::getCurrentDeviceProperties()->major`), an SM
    number computed as `major * 10 + minor`, and values read with
    `cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor/Minor, dev)`.

    ## Why is this bad on ROCm?
    On ROCm `hipDeviceProp_t.major/minor` hold the GFX IP version (9.4 on MI300X, 9.0 on MI200, 11.0
    on RDNA3), so `major >= 8` checks meant for Ampere select the wrong code path, and exact checks
    (`major == 8`) reject AMD GPUs outright (DeepSpeed `blocked_flash.cpp`: MI300 is refused as "not
    Ampere"). The HIP porting guide ("Device-Architecture Properties", "Host code feature
    identification") says to test `prop.arch.has*` flags or `gcnArchName` instead.

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
    The unsafe autofix writes a starting point for that review: the statement behind a ROCm gate, where
    each test made only of capability comparisons becomes `false && (<test>)`, so ROCm behaves as a GPU
    without the NVIDIA capability (other terms, as in `force || prop.major >= 8`, keep their meaning):
    ```cuda
    #if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
      bool is_sm8x = false && (dprops->major == 8 && dprops->minor >= 0);
    #else
      bool is_sm8x = dprops->major == 8 && dprops->minor >= 0;
    #endif
    ```
    Switches on `major` and computed SM numbers (`major * 10 + minor`) get no fix.

    ## Fix safety
    Unsafe. The NVIDIA branch (`#else`) keeps the statement token for token, so `nvcc` compiles what it
    compiled before. On ROCm the test is now false, which skips "Ampere or newer" paths (usually the
    NVIDIA-specific kernels) but also makes "too old" guards such as `!(major >= 7)` reject the device;
    what the ROCm branch should test (a gfx list from `gcnArchName`, a `prop.arch.has*` flag) depends
    on what the capability check was guarding.
    """

    code = "ROC229"
    name = "host-capability-check"
    severity = Severity.ERROR
    fix_availability = FixAvailability.UNSAFE
    language = "cuda"
    triggers = (b"major", b"minor", b"ComputeCapability", b"COMPUTE_CAPABILITY")

    def __init__(self) -> None:
        self._reported: set[tuple[int, int]] = set()
        # Variables filled by cudaDeviceGetAttribute(&v, ...ComputeCapabilityMajor...), per function.
        self._capability_variables: dict[int, set[str]] = {}

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """`.major`/`.minor` hold the field's name, a getter call its name; the variables it fills can be
        any identifier after it."""
        needed: dict[str, Anchors] = {}
        fields = ctx.offsets(*(word for word in (b"major", b"minor") if word in ctx.words))
        if fields:
            needed["field_expression"] = fields
        getters = ctx.offsets(*(_GET_ATTRIBUTE_WORDS & ctx.words))
        if getters:
            needed.update({"call_expression": getters, "identifier": None})
        return needed

    # --- prop.major / prop->minor -------------------------------------------------------------------
    def visit_field_expression(self, node: Node, ctx: CudaContext) -> None:
        field = node.child_by_field_name("field")
        if field is None or ctx.text(field) not in ("major", "minor"):
            return
        receiver = node.child_by_field_name("argument")
        if receiver is None or not self._is_device_properties(receiver, ctx):
            return
        self._check_use(node, ctx)

    def _is_device_properties(self, receiver: Node, ctx: CudaContext) -> bool:
        while receiver.type in ("parenthesized_expression", "pointer_expression") and receiver.named_child_count:
            receiver = receiver.named_children[-1]
        if receiver.type == "call_expression":
            return bool(_PROP_GETTERS.search(ctx.call_name(receiver) or ""))
        if receiver.type == "field_expression":
            # launch_params.props->major: judge by the member's name.
            member = receiver.child_by_field_name("field")
            return member is not None and bool(_PROP_NAME.fullmatch(ctx.text(member)))
        if receiver.type == "subscript_expression":
            array = receiver.child_by_field_name("argument")
            return array is not None and self._is_device_properties(array, ctx)
        if receiver.type != "identifier":
            return False
        declared = ctx.declared_type(receiver)
        if declared is not None and _DEVICE_PROP_TYPES.search(declared):
            return True
        if declared is not None and declared.split()[-1] != "auto":
            return False  # a struct of another type that happens to have a `major` (a version, a tensor layout)
        if declared is not None:
            value = ctx.declared_value(receiver)
            if value is not None and value.type == "call_expression":
                return bool(_PROP_GETTERS.search(ctx.call_name(value) or ""))
        return bool(_PROP_NAME.fullmatch(ctx.text(receiver)))

    # --- cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) ---------------------------
    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        if ctx.call_name(node) not in _GET_ATTRIBUTE:
            return
        arguments = ctx.arguments(node)
        if len(arguments) < 2 or not _CAPABILITY_ATTRIBUTES.search(ctx.text(arguments[1])):
            return
        target = arguments[0]
        if (
            target.type != "pointer_expression"
            or target.named_child_count != 1
            or target.named_children[0].type != "identifier"
        ):
            return
        scope = ctx.function_of(node)
        key = scope.start_byte if scope is not None else -1
        self._capability_variables.setdefault(key, set()).add(ctx.text(target.named_children[0]))

    def visit_identifier(self, node: Node, ctx: CudaContext) -> None:
        if not self._capability_variables:
            return
        scope = ctx.function_of(node)
        names = self._capability_variables.get(scope.start_byte if scope is not None else -1)
        if not names or ctx.text(node) not in names:
            return
        parent = node.parent
        if parent is not None and parent.type == "pointer_expression":
            return  # the `&major` handed to cudaDeviceGetAttribute itself
        self._check_use(node, ctx)

    # --- what the value is used for ---------------------------------------------------------------------
    def _check_use(self, value: Node, ctx: CudaContext) -> None:
        """Report a comparison of the capability, or an SM number computed from it (`major * 10 + minor`)."""
        if short_circuited(value, ctx):
            return
        top = outermost(value)
        computed = False
        while top.parent is not None and operator_of(top.parent, ctx) in _ARITHMETIC:
            top = outermost(top.parent)
            computed = True
        parent = top.parent
        if parent is not None and operator_of(parent, ctx) in COMPARISONS:
            self._report(parent, ctx, "compares the CUDA compute capability", fixable=True)
        elif (
            parent is not None
            and parent.type == "condition_clause"
            and parent.parent is not None
            and parent.parent.type == "switch_statement"
        ):
            self._report(parent.parent, ctx, "switches on the CUDA compute capability")
        elif computed:
            self._report(top, ctx, "computes an SM number from the compute capability")

    def _report(self, node: Node, ctx: CudaContext, what: str, *, fixable: bool = False) -> None:
        # One diagnostic per condition: `major == 8 && minor >= 0` is one capability check.
        whole = whole_condition(node, ctx)
        key = (whole.start_byte, whole.end_byte)
        if key in self._reported:
            return
        self._reported.add(key)
        ctx.report(
            node,
            f"`{ctx.text(node)}` {what}; on ROCm `major.minor` is the GFX IP version (9.4 on MI300X): test "
            "`gcnArchName` or `prop.arch.has*` flags in a ROCm branch",
            fix=self._fix(whole, ctx) if fixable else None,
        )

    # --- fix: the statement behind a ROCm gate, its capability tests disabled on the ROCm side -----------
    def _fix(self, whole: Node, ctx: CudaContext) -> Fix | None:
        """`false && (<test>)` for each capability-only test in the condition `whole`; other terms
        (`force || prop.major >= 8`) keep their meaning. Switches and SM numbers get no fix."""
        replacements = []
        for test in largest_terms(whole, ctx, lambda comparison: self._mentions_capability(comparison, ctx)):
            inner = ctx.text(test) if test.type == "parenthesized_expression" else f"({ctx.text(test)})"
            loose = test.parent is not None and test.parent.type in _LOOSE_SLOTS
            replacements.append((test, f"false && {inner}" if loose else f"(false && {inner})"))
        return ctx.statement_fix(_FIX_MESSAGE, whole, replacements, safe=False) if replacements else None

    def _mentions_capability(self, node: Node, ctx: CudaContext) -> bool:
        scope = ctx.function_of(node)
        variables = self._capability_variables.get(scope.start_byte if scope is not None else -1, set())
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "identifier" and ctx.text(current) in variables:
                return True
            if current.type == "field_expression":
                field, receiver = current.child_by_field_name("field"), current.child_by_field_name("argument")
                if (
                    field is not None
                    and receiver is not None
                    and ctx.text(field) in ("major", "minor")
                    and self._is_device_properties(receiver, ctx)
                ):
                    return True
            stack.extend(current.named_children)
        return False


HostCapabilityCheck.valid = (
    # The check only runs on NVIDIA builds.
    Valid(
        """
        void check(const at::Tensor& q) {
          auto dprops = at::cuda::getCurrentDeviceProperties();
        #ifndef USE_ROCM
          bool is_sm8x = dprops->major == 8 && dprops->minor >= 0;
          TORCH_CHECK(is_sm8x, "needs Ampere");
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
          printf("cc: %d.%d\n", props.major, props.minor);
          if (v.major >= 2 && v.minor > 1) printf("new format\n");
        }
        """,
    ),
    Valid(
        """
        #if !defined(__HIP_PLATFORM_AMD__)
        int sm_count_for_arch(int dev) {
          int major = 0;
          cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
          return major >= 9 ? 132 : 108;
        }
        #endif
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
)
