"""An `#ifdef __NVCC__` whose arms only define hint macros (`_Pragma(...)` for nvcc, empty for the others) changes
no code on ROCm (rocmlint/cuda/conditions.py `holds_only_pragmas`); a flag or a helper other code names does."""

from __future__ import annotations

from pathlib import Path

from tests.test_cuda_project import _codes, write_tree

_HINTS = """
    #ifdef __NVCC__
    #define XYZ_DIAG_STR(x) #x
    #define XYZ_DIAG_PUSH_SUPPRESS(x) _Pragma("nv_diagnostic push") _Pragma(XYZ_DIAG_STR(nv_diag_suppress x))
    #define XYZ_DIAG_POP() _Pragma("nv_diagnostic pop")
    #else
    #define XYZ_DIAG_PUSH_SUPPRESS(x)
    #define XYZ_DIAG_POP()
    #endif
    """


def test_arms_defining_only_hint_macros_are_hints(tmp_path: Path):
    root = write_tree(tmp_path, {"defs.h": _HINTS})
    assert _codes(root, "defs.h") == []


def test_a_stringizer_other_code_names_is_no_hint(tmp_path: Path):
    named = _HINTS + "    const char* name = XYZ_DIAG_STR(xyz);\n"
    root = write_tree(tmp_path, {"defs.h": named})
    assert _codes(root, "defs.h") == [("ROC214", 1)]


def test_an_empty_object_like_definition_may_be_a_flag(tmp_path: Path):
    flag = _HINTS.replace("#define XYZ_DIAG_POP()\n", "#define XYZ_DIAG_POP()\n#define XYZ_PLAIN_COMPILER\n")
    root = write_tree(tmp_path, {"defs.h": flag})
    assert _codes(root, "defs.h") == [("ROC214", 1)]
