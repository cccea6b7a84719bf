"""Three-valued vendor logic shared by both front ends: what a test evaluates to on a ROCm build and on
an NVIDIA build (True, False, or None for unknown), and the Branch a piece of code sits in."""

from __future__ import annotations

from dataclasses import dataclass

Tri = bool | None  # True, False, or None for "unknown"
# What C++ fixes test for a ROCm build (`#if <condition>`; configurable as `rocm-condition`). `__HIP__` too:
# hipcc predefines it, while __HIP_PLATFORM_AMD__ only appears once a HIP header is included (or when the
# build passes it, as PyTorch's does), so a gated `#include` needs the third term.
DEFAULT_ROCM_CONDITION = "defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)"


def and3(a: Tri, b: Tri) -> Tri:
    if a is False or b is False:
        return False
    if a is True and b is True:
        return True
    return None


def or3(a: Tri, b: Tri) -> Tri:
    if a is True or b is True:
        return True
    if a is False and b is False:
        return False
    return None


def not3(a: Tri) -> Tri:
    return None if a is None else not a


@dataclass(frozen=True)
class Vendor:
    """The truth value of an expression on a ROCm build and on an NVIDIA build."""

    rocm: Tri
    nvidia: Tri

    def negate(self) -> Vendor:
        return Vendor(not3(self.rocm), not3(self.nvidia))

    def both(self, other: Vendor) -> Vendor:
        """`self and other`."""
        return Vendor(and3(self.rocm, other.rocm), and3(self.nvidia, other.nvidia))

    def either(self, other: Vendor) -> Vendor:
        """`self or other`."""
        return Vendor(or3(self.rocm, other.rocm), or3(self.nvidia, other.nvidia))

    @property
    def is_vendor_test(self) -> bool:
        return self.rocm is not None or self.nvidia is not None


UNKNOWN = Vendor(None, None)
ROCM = Vendor(True, False)
NVIDIA = Vendor(False, True)
CONSTANT_TRUE = Vendor(True, True)
CONSTANT_FALSE = Vendor(False, False)
OFF_ROCM = Vendor(False, None)  # never true on ROCm; what it is on NVIDIA is not decided
OFF_NVIDIA = Vendor(None, False)  # never true on NVIDIA; what it is on ROCm is not decided
NEITHER = CONSTANT_FALSE  # true on no GPU vendor's build (another accelerator's test)


@dataclass(frozen=True)
class Branch:
    """Whether a node can run on each vendor: True (it may, whenever the code around it gets there) or
    False (never). The analysis itself answers True/False; None ("maybe") stays a valid value for
    callers, and every consumer treats it like True (only False means gated)."""

    on_rocm: Tri = True
    on_nvidia: Tri = True

    def under(self, condition: Vendor, taken: bool) -> Branch:
        value = condition if taken else condition.negate()
        return Branch(_restrict(self.on_rocm, value.rocm), _restrict(self.on_nvidia, value.nvidia))


def _restrict(current: Tri, condition: Tri) -> Tri:
    """Only a condition known to be false on a vendor keeps code from running there. One that depends on
    runtime state (`hip and x > 3`) or says nothing about vendors (`torch.cuda.is_available()`) may hold,
    so it changes nothing: `if x: if not IS_ROCM:` and `if x and not IS_ROCM:` give the same answer."""
    return False if condition is False else current


EVERYWHERE = Branch()
NO_GPU = Branch(False, False)  # another accelerator's code: it runs on neither vendor's GPUs
