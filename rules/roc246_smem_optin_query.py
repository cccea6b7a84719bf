"""ROC246 smem-optin-query."""

from __future__ import annotations

from rocmlint.cuda.frontend import Anchors, CudaContext, Node
from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, Rule, Valid

# The opt-in shared-memory limit, as a device attribute (runtime, driver, HIP) and as a device property field.
_ATTRIBUTES = frozenset(
    {
        "cudaDevAttrMaxSharedMemoryPerBlockOptin",
        "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
        "hipDeviceAttributeSharedMemPerBlockOptin",
    }
)
_PROPERTY = "sharedMemPerBlockOptin"
_MESSAGE = (
    "HIP reported the opt-in shared-memory limit as 0 until a July 2024 ROCm/clr change (ROCm/hip#3516), and AMD "
    "GPUs have no opt-in beyond their LDS (64 KiB on CDNA): a size computed from it is 0 on older ROCm; query "
    "`hipDeviceAttributeMaxSharedMemoryPerBlock` (`sharedMemPerBlock`) on ROCm"
)


class SmemOptinQuery(Rule):
    """
    ## What it does
    Flags queries of the opt-in shared-memory limit in code a ROCm build compiles: the device attribute
    `cudaDevAttrMaxSharedMemoryPerBlockOptin` (`CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`,
    `hipDeviceAttributeSharedMemPerBlockOptin`) and the `sharedMemPerBlockOptin` device property; not the CUDA
    attribute in a torch extension, whose hipify maps it to `hipDeviceAttributeMaxSharedMemoryPerBlock`
    (pytorch#116984, January 2024), nor the enumerator declaring it in a project's own copy of the driver API's
    enum: only its uses query the limit.

    ## Why is this bad on ROCm?
    CUDA kernels size their dynamic shared memory from this limit (FBGEMM: "use 2/3 of the available GPU shared
    mem"). HIP set `sharedMemPerBlockOptin` to 0 (ROCm/hip#3516, HIP 6.0.3) until ROCm/clr 4b95e7bc (July 2024)
    made it `sharedMemPerBlock`, because AMD has no opt-in above the LDS size: on older ROCm the computed size is
    0 and the kernels fail or fall back. FBGEMM and PyTorch (pytorch#116984) switched to
    `hipDeviceAttributeMaxSharedMemoryPerBlock` / `sharedMemPerBlock` on ROCm.

    ## Example
    ```cuda
    int max_shared_bytes = 0;
    cudaDeviceGetAttribute(&max_shared_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    ```

    ## Fix
    ```cuda
    int max_shared_bytes = 0;
    #if defined(USE_ROCM)
    hipDeviceGetAttribute(&max_shared_bytes, hipDeviceAttributeMaxSharedMemoryPerBlock, device);
    #else
    cudaDeviceGetAttribute(&max_shared_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    #endif
    ```

    ## Fix safety
    No automatic fix: the ROCm branch names HIP's API, which a hipified build spells through its own renames.
    """

    code = "ROC246"
    name = "smem-optin-query"
    severity = Severity.WARNING
    fix_availability = FixAvailability.NONE
    language = "cuda"
    triggers = (b"Optin", b"OPTIN")

    def visits_needed(self, ctx: CudaContext) -> dict[str, Anchors]:
        """The attribute is an identifier; the property the field of a member access."""
        attributes, properties = ctx.word_offsets(*_ATTRIBUTES), ctx.word_offsets(_PROPERTY)
        needed: dict[str, Anchors] = {}
        if attributes:
            needed["identifier"] = attributes
        if properties:
            needed["field_identifier"] = properties
        return needed

    def visit_identifier(self, node: Node, ctx: CudaContext) -> None:
        name = ctx.text(node)
        if name not in _ATTRIBUTES:
            return
        if node.parent is not None and node.parent.type == "enumerator":
            return  # the attribute's own declaration (a project's copy of the driver API's enum), not a query of it
        if ctx.hipified_build and name.startswith("cuda"):
            return  # torch's hipify renames it to the non-opt-in limit, `hipDeviceAttributeMaxSharedMemoryPerBlock`
        ctx.report(node, f"`{name}`: {_MESSAGE}")

    def visit_field_identifier(self, node: Node, ctx: CudaContext) -> None:
        parent = node.parent
        if ctx.text(node) == _PROPERTY and parent is not None and parent.type == "field_expression":
            ctx.report(node, f"`{_PROPERTY}`: {_MESSAGE}")


SmemOptinQuery.valid = (
    Valid(
        """
        int shared_limit(int device) {
          int bytes = 0;
        #if defined(USE_ROCM)
          hipDeviceGetAttribute(&bytes, hipDeviceAttributeMaxSharedMemoryPerBlock, device);
        #else
          cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
        #endif
          return bytes;
        }
        """,
    ),
    # The plain per-block limit, and a field of the code's own struct declared with that name.
    Valid(
        """
        struct Limits { size_t sharedMemPerBlockOptin; };
        size_t limit(const cudaDeviceProp& prop) { return prop.sharedMemPerBlock; }
        """,
    ),
    # A project's own copy of the driver API's enum declares the attribute; only its uses query it.
    Valid(
        """
        typedef enum CUdevice_attribute_enum {
          CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
          CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
        } CUdevice_attribute;
        typedef enum hipDeviceAttribute_t { hipDeviceAttributeSharedMemPerBlockOptin } hipDeviceAttribute_t;
        """,
        path="ext_driver.h",
    ),
    Valid(
        """
        #ifndef USE_ROCM
        size_t optin(const cudaDeviceProp& prop) { return prop.sharedMemPerBlockOptin; }
        #endif
        """,
    ),
)
SmemOptinQuery.invalid = (
    # FBGEMM's backward kernels: 2/3 of the opt-in limit.
    Invalid(
        """
        int used_shared_bytes(int device) {
          int max_shared_bytes = 0;
          cudaDeviceGetAttribute(&max_shared_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
          return max_shared_bytes * 2 / 3;
        }
        """,
        expect=("3:45-3:84",),
        message="July 2024",
    ),
    Invalid(
        """
        size_t optin(const cudaDeviceProp& prop) { return prop.sharedMemPerBlockOptin; }
        """,
        expect=("1:56-1:78",),
        message="`sharedMemPerBlockOptin`",
    ),
    Invalid(
        """
        int optin(CUdevice device) {
          int bytes;
          cuDeviceGetAttribute(&bytes, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device);
          return bytes;
        }
        """,
        expect=("3:32-3:85",),
        message="`CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`",
    ),
)
