"""An `#if` chain whose arms only declare constants, aliases or macros that no file of the project names
(rocmlint/cuda/unused_arms.py `declares_only_unnamed`): whichever arm ROCm takes, no code reads what it declares,
so the chain's test is no hazard there. Named anywhere else, or holding code, it still is."""

from __future__ import annotations

from pathlib import Path

from tests.test_cuda_project import _codes, write_tree

# Runtime flags re-exported under a vendor-neutral prefix; two exist only from CUDA 10 on.
_FLAGS = """
    #pragma once
    #define GPU_PREFIX(name) cuda##name
    namespace gpu { namespace flag {
    constexpr auto MemoryTypeHost = GPU_PREFIX(MemoryTypeHost);
    #if (CUDART_VERSION >= 10000)
    // newer memory types
    constexpr auto MemoryTypeManaged = GPU_PREFIX(MemoryTypeManaged);
    using ManagedFlag = decltype(MemoryTypeManaged);
    #endif
    } }
    """
_USER = '#include "flags.hpp"\nint host_type() { return gpu::flag::MemoryTypeHost; }\n'


def test_an_arm_declaring_only_what_nothing_names_is_no_hazard(tmp_path: Path):
    root = write_tree(tmp_path / "p", {"flags.hpp": _FLAGS, "use.cu": _USER})
    assert _codes(root, "flags.hpp") == []


def test_a_declared_name_named_elsewhere_keeps_the_chain(tmp_path: Path):
    # Named by another file of the project, included or not.
    user = _USER + "int managed() { return gpu::flag::MemoryTypeManaged; }\n"
    root = write_tree(tmp_path / "other", {"flags.hpp": _FLAGS, "use.cu": user})
    assert ("ROC207", 5) in _codes(root, "flags.hpp")
    root = write_tree(
        tmp_path / "apart", {"flags.hpp": _FLAGS, "use.cu": _USER, "tool.cpp": "auto t = ManagedFlag{};\n"}
    )
    assert ("ROC207", 5) in _codes(root, "flags.hpp")
    # Named by the file itself after the chain.
    read = _FLAGS + "inline int managed() { return gpu::flag::MemoryTypeManaged; }\n"
    root = write_tree(tmp_path / "here", {"flags.hpp": read, "use.cu": _USER})
    assert ("ROC207", 5) in _codes(root, "flags.hpp")


def test_an_arm_holding_more_than_effect_free_declarations_keeps_the_chain(tmp_path: Path):
    for name, line in (
        ("function", "inline int managed_type() { return 1; }"),
        ("object", "static Registrar managed_registrar(GPU_PREFIX(MemoryTypeManaged));"),
        ("declarators", "constexpr int first_kind = 1, second_kind = 2;"),
        ("nested", "#if CUDART_VERSION >= 11000\nconstexpr int newer_kind = 3;\n#endif"),
    ):
        code = _FLAGS.replace("    using ManagedFlag", f"    {line}\n    using ManagedFlag")
        root = write_tree(tmp_path / name, {"flags.hpp": code, "use.cu": _USER})
        assert ("ROC207", 5) in _codes(root, "flags.hpp"), name
