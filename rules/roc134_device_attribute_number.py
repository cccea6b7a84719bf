"""ROC134 device-attribute-number."""

from __future__ import annotations

import ast

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import last_name
from rocmlint.python.values import Follow, Names
from rocmlint.rule import Invalid, Rule, Valid

# A device-attribute query, by its callee's last name with case and underscores dropped: the runtime's
# `cudaDeviceGetAttribute`, the driver's `cuDeviceGetAttribute`, a binding's `deviceGetAttribute` or an
# extension's `get_device_attribute`. Each takes the attribute first.
_QUERY_SUFFIX = "devicegetattribute"
_QUERY_NAME = "getdeviceattribute"
# Every value a variable is assigned, and what a helper of the file returns.
_ATTRIBUTE_VALUES = Follow(names=Names.ALL, returns=True)


def _message(number: int) -> str:
    return (
        f"{number} is a number of CUDA's cudaDeviceAttr enum (cudaDevAttrMaxSharedMemoryPerBlockOptin is 97), "
        "but HIP numbers hipDeviceAttribute_t in another order, so on ROCm this query reads another attribute; "
        "pass the named attribute, or HIP's number when torch.version.hip is set"
    )


class DeviceAttributeNumber(Rule):
    """
    ## What it does
    Flags an integer passed as the attribute of a device-attribute query (`cudaDeviceGetAttribute`,
    `cuDeviceGetAttribute`, a binding's `deviceGetAttribute`, an extension's `get_device_attribute`) in code
    ROCm runs. The integer may be written in the call or come from a variable or a helper of the file
    (`cudaDevAttrMaxSharedMemoryPerBlockOptin = 97`); the diagnostic points at the number. Not flagged: a
    named enum member (`cudaDeviceAttr.cudaDevAttrMultiProcessorCount`), a number only ROCm uses, a query
    only NVIDIA runs.

    ## Why is this bad on ROCm?
    A Python extension that forwards an attribute number to `cudaDeviceGetAttribute` is hipified to
    `hipDeviceGetAttribute`, which reads the number as a `hipDeviceAttribute_t`. HIP's enum is not
    numbered like CUDA's `cudaDeviceAttr` (ROCm's hip_runtime_api.h lists its attributes in another order), so
    the query returns some other attribute, or fails, and sizes computed from it are wrong. vLLM's ROCm port
    replaced CUDA's 97 (`cudaDevAttrMaxSharedMemoryPerBlockOptin`) with 74 when on HIP.

    ## Example
    ```python
    def get_max_shared_memory_bytes(gpu: int = 0) -> int:
        cudaDevAttrMaxSharedMemoryPerBlockOptin = 97
        return int(cuda_utils.get_device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, gpu))
    ```

    ## Fix
    ```python
    def get_max_shared_memory_bytes(gpu: int = 0) -> int:
        max_shared_memory_attribute = 74 if torch.version.hip else 97
        return int(cuda_utils.get_device_attribute(max_shared_memory_attribute, gpu))
    ```

    ## Fix safety
    No automatic fix: HIP's number depends on the attribute, and some CUDA attributes have no HIP
    counterpart.
    """

    code = "ROC134"
    name = "device-attribute-number"
    severity = Severity.ERROR
    applies_to_tests = True  # a suite that sizes shared memory from the query reads the wrong attribute too
    fix_availability = FixAvailability.NONE
    # The query's name in its usual casings; `_attribute` alone let a fifth of PyTorch's Python files through.
    triggers = tuple(
        f"{word}{attribute}".encode()
        for word in ("Get", "get", "get_", "GET_", "Device", "device", "device_", "DEVICE_")
        for attribute in ("Attribute", "attribute", "ATTRIBUTE")
    )
    trigger_pattern = r"(?i)device_*get_*attribute|get_*device_*attribute"

    def __init__(self) -> None:
        # A number several queries read is reported once.
        self._reported: set[ast.AST] = set()

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        if not node.args or isinstance(node.args[0], ast.Starred) or not _is_attribute_query(node.func):
            return
        for number in ctx.values.int_values(node.args[0], _ATTRIBUTE_VALUES):
            if number.node in self._reported or ctx.is_nvidia_gated(number.node):
                continue
            if ctx.report(number.node, _message(number.value), gate_on=(node,)):
                self._reported.add(number.node)


def _is_attribute_query(func: ast.expr) -> bool:
    name = last_name(func).lower().replace("_", "")
    return name.endswith(_QUERY_SUFFIX) or name == _QUERY_NAME


DeviceAttributeNumber.valid = (
    # Named enum members: a binding maps them to the platform's numbers.
    Valid(
        """
        import cupy
        from cupy.cuda import runtime
        def multiprocessors(device):
            return runtime.deviceGetAttribute(runtime.cudaDevAttrMultiProcessorCount, device)
        """,
    ),
    # A number chosen by platform; a query only NVIDIA runs.
    Valid(
        """
        import torch
        from vllm._C import cuda_utils
        def max_shared_memory(gpu=0):
            attribute = 74 if torch.version.hip else 97
            return cuda_utils.get_device_attribute(attribute, gpu)
        def opt_in_shared_memory(gpu=0):
            if torch.version.cuda:
                return cuda_utils.get_device_attribute(97, gpu)
            return 0
        """,
    ),
    # An attribute the linter cannot know; a query of something else than a device.
    Valid(
        """
        from vllm._C import cuda_utils
        def attribute_value(attribute, gpu=0):
            return cuda_utils.get_device_attribute(attribute, gpu)
        def kernel_registers(function):
            return function.get_attribute(4)
        """,
    ),
)
DeviceAttributeNumber.invalid = (
    Invalid(
        """
        from vllm._C import cuda_utils
        def get_max_shared_memory_bytes(gpu: int = 0) -> int:
            cudaDevAttrMaxSharedMemoryPerBlockOptin = 97
            max_shared_mem = cuda_utils.get_device_attribute(
                cudaDevAttrMaxSharedMemoryPerBlockOptin, gpu)
            return int(max_shared_mem)
        """,
        expect=("3:47-3:49",),
        message="cudaDeviceAttr",
    ),
    # Written in the call, through a binding of the runtime API and an extension's driver-API wrapper.
    Invalid(
        """
        import cupy
        from . import _ext
        clock_rate = cupy.cuda.runtime.deviceGetAttribute(13, 0)
        sm_count = _ext.cuDeviceGetAttribute(16, device)
        """,
        expect=("3:51-3:53", "4:38-4:40"),
    ),
    # Returned by a helper of the file, reported once however many queries read it.
    Invalid(
        """
        from . import _ext
        def _opt_in_attribute():
            return 97
        shared = _ext.get_device_attribute(_opt_in_attribute(), 0)
        shared_1 = _ext.get_device_attribute(_opt_in_attribute(), 1)
        """,
        expect=("3:12-3:14",),
    ),
)
