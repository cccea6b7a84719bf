"""A backend selector compared by value (rocmlint/cuda/value_selectors.py): `#if (XYZ_BACKEND == 1)` arms written
for NVIDIA and `#elif (XYZ_BACKEND == 2)` arms written for ROCm make the macro 1 on NVIDIA's build and 2 on ROCm's,
so every `XYZ_BACKEND == 1` of the project is NVIDIA's condition."""

from __future__ import annotations

import textwrap
from pathlib import Path

from rocmlint.cuda.file_facts import read_facts
from rocmlint.cuda.preprocessor import MacroState, VendorMacros
from rocmlint.cuda.project import CudaProject
from tests.test_cuda_project import _codes, write_tree

# The selector's header: one arm per backend, by value (0: another accelerator's API, whose arm names no vendor).
_HEADER = """
    #if(XYZ_BACKEND==0)
    #include "vulkan/vulkan.h"
    #elif(XYZ_BACKEND==1)
    #include <nvrtc.h>
    #include <cuda.h>
    #include <cuda_runtime.h>
    #elif(XYZ_BACKEND==2)
    #include <hip/hiprtc.h>
    #include <hip/hip_runtime.h>
    #elif(XYZ_BACKEND==3)
    #include <CL/cl.h>
    #endif
    """
# A file of the project comparing the selector elsewhere, with NVIDIA-only calls in the `== 1` arm.
_COMPILE = """
    #include "backend.h"
    void compile(CUfunction function) {
    #if(XYZ_BACKEND==1)
        cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536);
    #elif(XYZ_BACKEND==2)
        hipFuncSetAttribute(function, hipFuncAttributeMaxDynamicSharedMemorySize, 65536);
    #endif
    }
    """


def test_compared_arms_vote_for_the_vendor_their_code_is_written_for():
    facts = read_facts("/x/backend.h", textwrap.dedent(_HEADER).lstrip(), VendorMacros())
    assert facts.value_votes == (("XYZ_BACKEND", 1, "nvidia", 3), ("XYZ_BACKEND", 2, "rocm", 7))


def test_a_selector_compared_by_value_has_each_vendors_value(tmp_path: Path):
    root = write_tree(tmp_path, {"backend.h": _HEADER})
    learned = CudaProject.build(root).learned["XYZ_BACKEND"]
    assert (learned.on_rocm, learned.on_nvidia) == (MacroState(True, 2), MacroState(True, 1))
    assert learned.evidence.why == "its `== 1` arms are written for NVIDIA, its `== 2` arms for ROCm"


def test_the_nvidia_value_gates_code_in_every_file_of_the_project(tmp_path: Path):
    root = write_tree(tmp_path, {"backend.h": _HEADER, "compile.cpp": _COMPILE})
    assert _codes(root, "backend.h") == []
    assert _codes(root, "compile.cpp") == []
    # Only the other file's arms are written for ROCm: the header's `== 2` arm is another accelerator's, still
    # nothing but ROCm's value in the project, so its CUDA includes stay hidden; with no ROCm arm at all they show.
    no_rocm_arm = _HEADER.replace("hip/hiprtc.h", "CL/cl2.h").replace("hip/hip_runtime.h", "CL/cl3.h")
    root = write_tree(tmp_path / "no_rocm_arm", {"backend.h": no_rocm_arm, "compile.cpp": _COMPILE})
    assert _codes(root, "backend.h") == []
    unported = write_tree(tmp_path / "unported", {"backend.h": no_rocm_arm})
    assert [code for code, _ in _codes(unported, "backend.h")] == ["ROC205", "ROC204", "ROC204"]


def test_arms_of_one_value_written_for_both_vendors_decide_nothing(tmp_path: Path):
    mixed = _HEADER.replace('#include "vulkan/vulkan.h"', "#include <cuda_runtime.h>").replace(
        "XYZ_BACKEND==0", "XYZ_BACKEND==2"
    )
    root = write_tree(tmp_path, {"backend.h": _HEADER, "other.h": mixed})
    assert "XYZ_BACKEND" not in CudaProject.build(root).learned


def test_a_chain_comparing_several_macros_votes_nothing():
    text = "#if(A==1)\n#include <cuda_runtime.h>\n#elif(B==2)\n#include <hip/hip_runtime.h>\n#endif\n"
    assert read_facts("/x/a.h", text, VendorMacros()).value_votes == ()


def test_compared_arms_may_spell_the_value_first_and_leave_out_parentheses():
    text = "#if 1 == B\n#include <cuda_runtime.h>\n#elif B == 0x2\n#include <hip/hip_runtime.h>\n#else\n#endif\n"
    assert read_facts("/x/a.h", text, VendorMacros()).value_votes == (("B", 1, "nvidia", 1), ("B", 2, "rocm", 3))
