"""The CUDA C++ front end through the engine: positions, noqa, ERROR regions, ROCm sources, crashes,
and CUDA embedded in Python strings. ROC224 (`__nanosleep`) stands in for any C++ rule."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from rocmlint.rules.roc224_nanosleep import Nanosleep
from snippets import parse

from rocmlint.config import Settings
from rocmlint.cuda.frontend import CudaContext, CudaOptions, Node, check_cuda, without_jinja
from rocmlint.diagnostics import Severity
from rocmlint.engine import Engine, FileReport
from rocmlint.python.embedded import find_embedded_cuda
from rocmlint.rule import Rule
from rocmlint.source import SourceFile

SLEEP = "__device__ void backoff(unsigned ns) {\n  __nanosleep(ns);\n}\n"


@pytest.fixture
def settings() -> Settings:
    return Settings(root=Path.cwd())


def check(settings: Settings, code: str | bytes, path: str = "k.cu") -> FileReport:
    data = code.encode("utf-8") if isinstance(code, str) else code
    return Engine().check_bytes(path, data, settings)


def found(report: FileReport) -> list[tuple[str, int, int]]:
    return [(d.code, d.location.line, d.location.column) for d in report.diagnostics]


def test_reports_line_and_column(settings):
    assert found(check(settings, SLEEP)) == [("ROC224", 2, 3)]
    diagnostic = check(settings, SLEEP).diagnostics[0]
    assert (diagnostic.end_location.line, diagnostic.end_location.column) == (2, 18)


@pytest.mark.parametrize("path", ["k.cu", "k.cuh", "k.cpp", "k.cc", "k.cxx", "k.h", "k.hpp", "k.hh", "k.inl", "k.hu"])
def test_every_cuda_suffix_is_checked(settings, path):
    assert found(check(settings, SLEEP, path)) == [("ROC224", 2, 3)]


def test_bom_crlf_and_non_ascii_keep_positions(settings):
    code = "\ufeff// größe\r\n__device__ void f(unsigned ns) { /* ü */ __nanosleep(ns); }\r\n"
    assert found(check(settings, code)) == [("ROC224", 2, 42)]


def test_file_without_triggers_is_never_parsed(settings):
    report = check(settings, "__global__ void k(float* x) { x[threadIdx.x] = 0.f; }\n")
    assert report.skipped and report.diagnostics == []


def test_nvidia_only_branch_is_not_reported(settings):
    code = "__device__ void f(unsigned ns) {\n#ifndef USE_ROCM\n  __nanosleep(ns);\n#endif\n}\n"
    assert found(check(settings, code)) == []


def test_a_value_only_nvidia_only_code_reads_is_not_reported(settings):
    code = """__global__ void k(float* x) {
  int groupMask = 15 << ((threadIdx.x & 31) & ~3);
  int lane = threadIdx.x & 31;
#ifdef USE_ROCM
  float v = __shfl_down(x[0], 1);
#else
  float v = __shfl_xor_sync(groupMask, x[0], 1);
#endif
  x[lane] = v;
}
"""
    codes = {(code, line) for code, line, _ in found(check(settings, code))}
    assert ("ROC208", 2) not in codes  # `groupMask` is read only in the NVIDIA arm
    # `lane` indexes memory on ROCm too (with a shift across the wavefront: not 32-lane halves of its own)
    assert ("ROC208", 3) in codes


def test_configured_rocm_macro_gates(settings):
    code = "__device__ void f(unsigned ns) {\n#ifndef MYPROJ_HIP\n  __nanosleep(ns);\n#endif\n}\n"
    assert found(check(settings, code)) == [("ROC224", 3, 3)]
    assert found(check(replace(settings, rocm_macros=("MYPROJ_HIP",)), code)) == []


@pytest.mark.parametrize(
    ("test", "reported"),
    [
        ("if (USE_ROCM) { __nanosleep(ns); } else { sleep_portably(ns); }", True),
        ("if (USE_ROCM) { sleep_portably(ns); } else { __nanosleep(ns); }", False),
        ("if (!USE_ROCM) { __nanosleep(ns); }", False),
        ("if constexpr (kIsHip) { sleep_portably(ns); } else { __nanosleep(ns); }", False),
        ("if (kUnknownFlag) { sleep_portably(ns); } else { __nanosleep(ns); }", True),
    ],
)
def test_runtime_tests_of_vendor_constants_gate(settings, test, reported):
    """`if (USE_ROCM)`, and `if constexpr` on a `constexpr bool` made from a vendor macro, are vendor branches."""
    code = f"constexpr bool kIsHip = USE_ROCM;\n__device__ void f(unsigned ns) {{\n  {test}\n}}\n"
    assert found(check(settings, code)) == ([("ROC224", 3, test.index("__nanosleep") + 3)] if reported else [])


def test_noqa_in_cpp_comments(settings):
    assert found(check(settings, SLEEP.replace("(ns);", "(ns);  // noqa: ROC224"))) == []
    assert found(check(settings, SLEEP.replace("(ns);", "(ns);  /* noqa */"))) == []
    assert found(check(settings, SLEEP.replace("(ns);", "(ns);  // noqa: ROC210"))) == [("ROC224", 2, 3)]


def test_unused_noqa_of_a_cpp_rule_is_reported(settings):
    code = "__device__ void f() {\n  int x = 0;  // noqa: ROC224\n}\n// __nanosleep elsewhere in a comment\n"
    report = check(replace(settings, extend_select=("ROC002",)), code)
    assert [(d.code, d.location.line) for d in report.diagnostics] == [("ROC002", 2)]


def test_hazard_inside_error_region_is_reported_without_fix(settings, monkeypatch):
    """Macros tree-sitter cannot parse leave ERROR nodes; the clear tokens inside are still linted."""

    def fixing_visit(self, node: Node, ctx: CudaContext) -> None:
        if ctx.call_name(node) == "__nanosleep":
            ctx.report(
                node,
                "nanosleep",
                fix=ctx.fix("swap", ctx.edit(node.start_byte, node.end_byte, "__builtin_amdgcn_s_sleep(1)")),
            )

    monkeypatch.setattr(Nanosleep, "visit_call_expression", fixing_visit)
    # A dispatch macro taking a lambda, with one parenthesis too many: the whole call is an ERROR node.
    broken = 'DISPATCH(T, "n", [&] {\n  __nanosleep(ns); } ) )\n'
    clean = 'DISPATCH(T, "n", [&] {\n  __nanosleep(ns); } );\n'
    broken_report, clean_report = check(settings, broken), check(settings, clean)
    assert found(broken_report) == [("ROC224", 2, 3)] and broken_report.diagnostics[0].fix is None
    assert clean_report.diagnostics[0].fix is not None


class _WaveRule(Rule):
    code = "ROC224"
    name = "test-wave"
    severity = Severity.ERROR
    language = "cuda"
    applies_to_rocm_sources = True

    def visit_call_expression(self, node: Node, ctx: CudaContext) -> None:
        ctx.report(node, "wave")


def _codes_on(code: str, path: str, rule: type[Rule]) -> list[str]:
    source = SourceFile.from_bytes(path, code.encode(), "cuda")
    return [d.code for d in check_cuda(source, [rule], CudaOptions(), lambda *args: None)]


@pytest.mark.parametrize(
    ("path", "header", "rocm_source"),
    [
        ("k.hip", "", True),
        ("k.cu", "#include <hip/hip_runtime.h>\n", True),
        ("k.cu", "#include <cuda_runtime.h>\n", False),
        ("k.cu", "#ifdef USE_ROCM\n#include <hip/hip_runtime.h>\n#endif\n", False),
    ],
)
def test_rocm_sources_only_run_wave_size_rules(path, header, rocm_source):
    code = header + SLEEP
    assert _codes_on(code, path, Nanosleep) == ([] if rocm_source else ["ROC224"])
    assert _codes_on(code, path, _WaveRule) == ["ROC224"]


def test_a_header_only_rocm_compiles_that_includes_the_hip_runtime_is_a_rocm_source():
    from rocmlint.cuda.frontend import is_rocm_source
    from rocmlint.cuda.preprocessor import VendorMacros, analyse
    from rocmlint.vendor import Branch

    text = "#pragma once\n#include <hip/hip_runtime.h>\n"
    assert is_rocm_source("quick.h", analyse(text, VendorMacros(), Branch(None, False)))  # reached only on ROCm
    nvidia_arm = "#ifndef USE_ROCM\n#include <hip/hip_runtime.h>\n#endif\n"
    assert not is_rocm_source("quick.h", analyse(nvidia_arm, VendorMacros(), Branch(None, False)))


def test_crashing_rule_becomes_roc900_and_file_goes_on(settings, monkeypatch):
    def crash(self, node, ctx):
        raise RuntimeError("boom")

    monkeypatch.setattr(Nanosleep, "visit_call_expression", crash)
    report = check(settings, SLEEP)
    assert [d.code for d in report.diagnostics] == ["ROC900"]
    assert "ROC224" in report.diagnostics[0].message and report.tracebacks


def test_visit_method_for_unknown_node_type_is_a_rule_bug(settings, monkeypatch):
    monkeypatch.setattr(Nanosleep, "visit_callexpression", lambda self, node, ctx: None, raising=False)
    report = check(settings, SLEEP)
    assert [d.code for d in report.diagnostics] == ["ROC900"]
    assert "visit_callexpression" in report.diagnostics[0].message


def test_deeply_nested_code_does_not_crash(settings):
    depth = 5000
    code = "__device__ void f(unsigned ns) {\n" + "{" * depth + "__nanosleep(ns);" + "}" * depth + "\n}\n"
    assert found(check(settings, code)) == [("ROC224", 2, depth + 1)]


# --- CUDA embedded in Python strings ---------------------------------------------------------------


JIT = '''import torch
from torch.utils.cpp_extension import load_inline
import cupy as cp

CUDA_SRC = r"""
__global__ void spin(int* flag) {
  while (*flag == 0) { __nanosleep(100); }
}
"""

mod = load_inline(name="spin", cpp_sources="", cuda_sources=CUDA_SRC, functions=["spin"])
k = cp.RawKernel("extern \\"C\\" __global__ void f() {\\n  __nanosleep(5);\\n}\\n", "f")
'''


def test_embedded_sources_are_checked_at_their_python_positions(settings):
    assert found(check(settings, JIT, "jit.py")) == [("ROC224", 7, 24), ("ROC224", 12, 57)]
    line = JIT.splitlines()[11]  # the escapes before the call count as they are written
    assert line[56:67] == "__nanosleep"


def test_embedded_source_maps_each_character_to_where_it_is_written():
    """Escapes map to their backslash; an implicit concatenation over lines and comments is one source."""
    lines = [
        "import cupy as cp",
        "k = cp.RawKernel(",
        '    "a\\tb"  # it\'s',
        "    r\"\\n\" + '''c",
        "d''',",
        '    "f",',
        ")",
    ]
    code = "\n".join(lines) + "\n"
    (source,) = find_embedded_cuda(parse(code).ctx)
    assert source.text == "a\tb\\nc\nd"
    assert [code[offset] for offset in source.offsets] == ["a", "\\", "b", "\\", "n", "c", "\n", "d"]
    assert source.offsets[1] == code.index("\\t")


def test_embedded_source_in_gated_call_is_skipped(settings):
    code = JIT.replace("mod = load_inline(", "if not torch.version.hip:\n    mod = load_inline(")
    assert [line for _, line, _ in found(check(settings, code, "jit.py"))] == [13]


@pytest.mark.parametrize(
    "call",
    [
        'cp.RawKernel(code="__global__ void f() { __nanosleep(1); }", name="f")',
        'cp.ElementwiseKernel("T x", "T y", "__nanosleep(1); y = x", "k")',
        'cp.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "r", preamble="__device__ void s() { __nanosleep(1); }")',
        'cp.RawModule(code=["__global__ void f() {}", "__global__ void g() { __nanosleep(1); }"])',
        'load_inline("m", "", "__global__ void f() { " + "__nanosleep(1); }")',
        'torch.cuda.jiterator._create_jit_fn("template <typename T> T f(T x) { __nanosleep(1); return x; }")',
    ],
)
def test_each_jit_entry_point(settings, call):
    code = f"import torch\nimport cupy as cp\nfrom torch.utils.cpp_extension import load_inline\nk = {call}\n"
    assert [c for c, line, _ in found(check(settings, code, "jit.py"))] == ["ROC224"]


@pytest.mark.parametrize(
    "call",
    [
        'cp.RawKernel(f"__global__ void f() {{ __nanosleep({n}); }}", "f")',  # only known at run time
        'cp.RawKernel(b"__global__ void f() { __nanosleep(1); }", "f")',
        'print("__global__ void f() { __nanosleep(1); }")',  # not a JIT call
        'cp.RawKernel("__global__ void f() { __nanosleep(1); }  // noqa: ROC224", "f")',
    ],
)
def test_not_checked_or_suppressed(settings, call):
    code = f"import cupy as cp\nn = 1\nk = {call}\n"
    assert found(check(settings, code, "jit.py")) == []


def test_a_jinja_template_is_parsed_with_its_tags_blanked_byte_for_byte():
    """FBGEMM's `codegen/*.cu` are Jinja templates: statement and comment tags become spaces, expressions
    underscores (joining the identifier they sit in), line breaks stay; C++ with `{{` (an aggregate) is untouched."""
    template = b"{# generated #}\nvoid f{{ suffix }}() {\n{% if dense %}\n  g<{{ n }}>();\n{% endif %}\n}\n"
    blanked, is_template = without_jinja(template)
    assert is_template
    assert len(blanked) == len(template) and blanked.count(b"\n") == template.count(b"\n")
    assert blanked.split(b"\n")[1] == b"void f____________() {"
    assert blanked.split(b"\n")[3] == b"  g<_______>();"
    assert blanked.split(b"\n")[2].strip() == b""
    aggregate = b"int m[2][2] = {{1, 2}, {3, 4}};\n"
    assert without_jinja(aggregate) == (aggregate, False)
