"""The C++ front end's narrowing changes no result: rules' `visits_needed` (node types and anchors), the
anchored queries, the lazy parse, name lookups from the text, and `in_error` over the span's bytes.

Each check compares against the plain way (every rule visits every node of its types, found by one walk
of the whole tree), which is what the front end did before the narrowing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import tree_sitter
from rocmlint.rules.roc224_nanosleep import Nanosleep

from rocmlint.config import Overrides, Settings
from rocmlint.cuda import frontend
from rocmlint.cuda.frontend import PREPROCESSOR_HOOKS, CudaContext, CudaOptions
from rocmlint.cuda.preprocessor import VendorMacros, analyse
from rocmlint.diagnostics import Diagnostic
from rocmlint.engine import Engine
from rocmlint.registry import all_rules
from rocmlint.rule import Invalid, Valid
from rocmlint.source import SourceFile

SETTINGS = Overrides(select=("ALL",)).apply(Settings(root=Path.cwd()))
DEFAULT_SETTINGS = Settings(root=Path.cwd())  # ROC216, which visits every call, is off by default
CUDA_RULES = [rule for rule in all_rules() if rule.language == "cuda"]
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CUDA_SUFFIXES = (".cu", ".cuh", ".cpp", ".h", ".hip")

# Several rules in one file, where one rule's walk and another's anchors meet (a capability getter makes
# ROC229 visit every identifier, its `.major` is anchored) and anchors hold several nodes of a type.
MIXED = [
    "void pick(const cudaDeviceProp* dprops, int device) {\n"
    "  int major;\n"
    "  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);\n"
    "  if (dprops->major == 8 || major >= 9) { launch_sm90(); }\n"
    "}\n",
    "#define WARP_SIZE 32\n"
    "__global__ void reduce(float* out, const float* x) {\n"
    "  __shared__ float partial[WARP_SIZE];\n"
    "  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;\n"
    "  unsigned mask = __ballot_sync(0xffffffff, x[lane] > 0.f);\n"
    "  float v = x[threadIdx.x];\n"
    "  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffff, v, offset);\n"
    "  if (lane == 0) partial[warp] = v + __popc(mask) + (1 << lane);\n"
    '  asm volatile("membar.gl;");\n'
    "  __nanosleep(100);\n"
    "}\n"
    "void run(float* out, const float* x, cudaStream_t s) {\n"
    "  cudaFuncSetAttribute(reduce, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000);\n"
    "  reduce<<<1, 256, 100000, s>>>(out, x);\n"
    "}\n",
    "#include <cutlass/gemm/device/gemm.h>\n"
    "#include <cuda_fp8.h>\n"
    "using namespace cute;\n"
    "__device__ __nv_fp8_e4m3 q(float x) { return __nv_fp8_e4m3(fminf(x, 448.0f)); }\n"
    "__global__ void tile(float* c) { nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> acc; }\n"
    "template <int N = warpSize> __global__ void k(int* p) { cudaLaunchAttribute a; *p = x % 32 + y / 32; }\n",
    # Spellings the narrowed visits must still reach: `__asm__`, properties behind a member named for them, a
    # launch whose grid argument closes templates with `>>>` before its shared memory size.
    "__device__ int lane_id() {\n"
    "  int id;\n"
    '  __asm__ __volatile__("mov.u32 %0, %%laneid;" : "=r"(id));\n'
    "  return id;\n"
    "}\n"
    "struct Params { const cudaDeviceProp* dprops; };\n"
    "void pick(Params params) { if (params.dprops->major >= 9) { launch_sm90(); } }\n"
    "template <typename T> struct A {};\n"
    "template <typename T> int blocks(int n) { return n; }\n"
    "__global__ void k(float* x) { extern __shared__ float s[]; s[0] = x[0]; }\n"
    "void run(float* x, int n) { k<<<blocks<A<A<int>>>(n), 256, 100000>>>(x); }\n",
    # A shift amount on the next line, or only a call naming the lane; properties from a getter, by `auto`; a
    # `half2` member read through a subscript.
    "__device__ bool on(unsigned m) { return m & (1u <<\n    (threadIdx.x & (WAVE_SIZE - 1))); }\n"
    "__device__ bool at(unsigned m) { return m & (1u << __lane_id()); }\n"
    "void pick() {\n"
    "  auto p = at::cuda::getCurrentDeviceProperties();\n"
    "  if (p->major >= 9) { launch_sm90(); }\n"
    "}\n"
    "__device__ float low(const half2* v) { return __half2float(v[0].x); }\n",
]


def _files() -> Iterator[tuple[str, str]]:
    for rule in CUDA_RULES:
        examples: list[Valid | Invalid] = [*rule.valid, *rule.invalid]
        for example in examples:
            yield example.path or "example.cu", example.code
    yield "all_examples.cu", "\n".join(example.code for rule in CUDA_RULES for example in rule.invalid)
    for index, code in enumerate(MIXED):
        yield f"mixed{index}.cu", code
    for path in sorted(FIXTURES.rglob("*")):
        if path.suffix in CUDA_SUFFIXES:
            yield str(path), path.read_text(encoding="utf-8")


FILES = list(_files())


def _diagnostics(path: str, code: str, settings: Settings = SETTINGS) -> list[Diagnostic]:
    return Engine().check_bytes(path, code.encode("utf-8"), settings).diagnostics


def _every_node(self: frontend._RuleRun) -> dict[str, frontend.Anchors]:
    """The plain way: every node of every type the rule has a method for."""
    return {} if self.failed else {t: None for t in self.visits if t not in PREPROCESSOR_HOOKS}


@pytest.mark.parametrize("settings", [DEFAULT_SETTINGS, SETTINGS], ids=["default", "all"])
@pytest.mark.parametrize(("path", "code"), FILES, ids=[f"{i}-{Path(p).name}" for i, (p, _) in enumerate(FILES)])
def test_narrowed_visits_find_what_visiting_every_node_finds(
    path: str, code: str, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    narrowed = _diagnostics(path, code, settings)
    monkeypatch.setattr(frontend, "_anchor_limit", lambda length: -1)  # anchors never pay: the walk finds them
    walked = _diagnostics(path, code, settings)
    monkeypatch.setattr(frontend._RuleRun, "needed_visits", _every_node)
    assert narrowed == walked == _diagnostics(path, code, settings)


def test_mixed_files_are_reported() -> None:
    """The equivalence above means something: the mixed files hold findings of many rules."""
    codes = {d.code for index, code in enumerate(MIXED) for d in _diagnostics(f"mixed{index}.cu", code)}
    assert {
        "ROC201",
        "ROC202",
        "ROC203",
        "ROC206",
        "ROC208",
        "ROC211",
        "ROC217",
        "ROC218",
        "ROC221",
        "ROC224",
        "ROC229",
    } <= codes


def test_a_file_no_rule_visits_nodes_in_is_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_parse(content: bytes) -> tree_sitter.Tree:
        raise AssertionError("parsed")

    monkeypatch.setattr(frontend, "parse", no_parse)
    # ROC217 runs (`cuda` is its trigger) but the file names nothing from its tables.
    assert _diagnostics("k.cu", "// runs on cuda devices\nstatic int counter = 0;\n", DEFAULT_SETTINGS) == []


# Files a rule runs on (its triggers are there) but need not parse: what it visits nodes for cannot be there.
UNPARSED = [
    ("ROC203", "// plasma physics, no asmjit\nint steps = 1;\n"),  # `asm` only inside words
    ("ROC208", 'static_assert(sizeof(float) == 4, "");\nint lane = 32;\n'),  # no warp-size name to assert
    ("ROC217", "void run(float* x, cudaStream_t s) { k<<<1, 256, 0, s>>>(x); }\n"),  # a launch, no device code
    ("ROC221", "void run(float* x) { k<<<grid, block>>>(x); k<<<LAUNCH_CONFIG>>>(x); }\n"),  # no shared size
    ("ROC229", "struct Version { int major, minor; };\nbool newer(Version v) { return v.major > 2; }\n"),
    (
        "ROC229",
        "// the version property\nstruct Version { int major; };\nbool newer(Version v) { return v.major > 2; }\n",
    ),
    ("ROC211", "// one value per lane\nvoid log(int v) { std::cout << v << std::endl; }\n"),  # no lane shifted by
    ("ROC241", "float low(half v) { return __half2float(v.x); }\n"),  # `half2` only inside a word
    (
        "ROC229",
        "int cores(int device) {\n  int major = 0;\n"
        "  cudaDeviceGetAttribute(&major, cudaDevAttrMultiProcessorCount, device);\n  return major > 8;\n}\n",
    ),  # a getter, no capability attribute
]


@pytest.mark.parametrize(("code", "text"), UNPARSED)
def test_a_file_a_rule_cannot_find_its_nodes_in_is_not_parsed(
    code: str, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[bytes] = []
    parse = frontend.parse
    monkeypatch.setattr(frontend, "parse", lambda content: parse(parsed.append(content) or content))
    report = Engine().check_bytes("k.cu", text.encode(), Overrides(select=(code,)).apply(Settings(root=Path.cwd())))
    assert not report.skipped  # the rule runs
    assert (report.diagnostics, report.tracebacks, parsed) == ([], [], [])


def test_a_crash_in_visits_needed_is_the_rules_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(self: Nanosleep, ctx: CudaContext) -> dict[str, frontend.Anchors]:
        raise RuntimeError("boom")

    monkeypatch.setattr(Nanosleep, "visits_needed", crash)
    code = "#define WARP_SIZE 32\n__device__ void backoff(unsigned ns) {\n  __nanosleep(ns);\n}\n"
    found = _diagnostics("k.cu", code, DEFAULT_SETTINGS)
    assert [d.code for d in found] == ["ROC208", "ROC900"]  # the other rules go on
    assert "ROC224" in found[1].message and "RuntimeError: boom" in found[1].message


def test_visits_are_anchored_where_anchors_are_few(monkeypatch: pytest.MonkeyPatch) -> None:
    walks: list[tuple[str, ...]] = []
    original = frontend._cursor

    def cursor(node_types: tuple[str, ...]) -> tree_sitter.QueryCursor:
        walks.append(node_types)
        return original(node_types)

    monkeypatch.setattr(frontend, "_cursor", cursor)
    code = "__device__ void backoff(unsigned ns) {\n  __nanosleep(ns);\n}\n"
    assert [d.code for d in _diagnostics("k.cu", code)] == ["ROC224"]
    assert len(walks) == 1  # one cursor, run over the anchor's bytes only


def test_the_queries_compiled_before_a_pool_forks_serve_every_visit(monkeypatch: pytest.MonkeyPatch) -> None:
    """compile_queries (run in the parent of a process pool) compiles every query a file's visits use."""
    compiled: list[tuple[str, ...]] = []
    visited: list[tuple[str, ...]] = []
    original_query, original_cursor = frontend._query, frontend._cursor

    def query(node_types: tuple[str, ...]) -> tree_sitter.Query:
        compiled.append(node_types)
        return original_query(node_types)

    def cursor(node_types: tuple[str, ...]) -> tree_sitter.QueryCursor:
        visited.append(node_types)
        return original_cursor(node_types)

    monkeypatch.setattr(frontend, "_query", query)
    frontend.compile_queries(tuple(CUDA_RULES))
    precompiled = set(compiled)
    monkeypatch.setattr(frontend, "_cursor", cursor)
    for path, code in FILES:
        if not path.startswith("example"):  # the examples together are all_examples.cu
            _diagnostics(path, code)
    assert len(set(visited)) == 4  # with and without each of the two costly groups
    assert set(visited) <= precompiled


def test_offsets_are_sorted_unique_and_lowered_keeps_positions() -> None:
    context = _context("int WarpSize = warp_size; // Warp\n")
    assert context.offsets(b"Warp", b"Warp") == (4, 29)
    assert context.offsets(b"warp", lowered=True) == (4, 15, 29)
    assert context.offsets(b"absent") == ()


def test_offsets_are_remembered_per_question() -> None:
    """Rules ask from every node they visit; the answer is found once, and the same texts with and without
    `lowered` are different questions."""
    context = _context("int WarpSize = warp_size; // Warp\n")
    first = context.offsets(b"warp", lowered=True)
    assert context.offsets(b"warp", lowered=True) is first
    assert context.offsets(b"warp") == (15,)
    assert context.offsets(b"warp", lowered=True) == (4, 15, 29)


def test_anchor_ranges_merge_neighbours() -> None:
    assert frontend._anchor_ranges([3, 4, 10, 100, 500]) == [(3, 11), (100, 101), (500, 501)]
    assert frontend._anchor_ranges([]) == []


def test_words_hold_every_identifier() -> None:
    context = _context("\n".join(code for _, code in FILES))
    cursor = tree_sitter.QueryCursor(
        frontend._query(("field_identifier", "identifier", "namespace_identifier", "type_identifier"))
    )
    names = {
        context.content[n.start_byte : n.end_byte] for n in cursor.captures(context.tree.root_node).get("node", [])
    }
    assert names and {name for name in names if name.isascii()} <= context.words


DECLARATIONS = (
    "struct Props { int major, minor; int lanes[32]; };\n"
    "static const unsigned kMask = 0xffffffffu, *kMaskPtr = &kMask;\n"
    "__device__ int f(int lane, unsigned mask = 0xffffffff, int (*cb)(int) = nullptr) {\n"
    "  int a = lane, b, &c = a;\n"
    "  for (int lane2 = lane; lane2 < 32; ++lane2) { int lane = lane2; b += lane; }\n"
    "  int Foo::bar = 1;\n"
    "  return a + b + c + int(mask);\n"
    "}\n"
    "int = 5;\n"  # ERROR recovery: a MISSING identifier, whose name is empty
)


def test_declarations_found_from_the_text_are_those_of_a_walk() -> None:
    context = _context(DECLARATIONS)
    walked: dict[str, list[tuple[int, int, str]]] = {}
    cursor = tree_sitter.QueryCursor(frontend._query(tuple(sorted(frontend._DECLARATION_TYPES))))
    for declaration in cursor.captures(context.tree.root_node).get("node", []):
        for declarator in declaration.children_by_field_name("declarator"):
            name = frontend._declared_name(declarator, context)
            if name is not None:
                walked.setdefault(name, []).append((declaration.start_byte, declaration.end_byte, declaration.type))
    assert {"major", "minor", "lanes", "kMask", "kMaskPtr", "lane", "mask", "a", "b", "lane2", ""} <= set(walked)
    for name, expected in walked.items():
        found = [(d.start_byte, d.end_byte, d.type) for d in context._declarations_of(name)]
        assert found == sorted(expected), name
    assert context._declarations_of("absent") == []


def test_in_error_looks_at_the_span_only() -> None:
    context = _context('DISPATCH(T, "n", [&] {\n  __nanosleep(ns); } ) )\nvoid ok() { __nanosleep(1); }\n')
    root = context.tree.root_node
    errors = [
        (n.start_byte, n.end_byte)
        for n in tree_sitter.QueryCursor(frontend._query(("ERROR",))).captures(root).get("node", [])
    ]
    assert errors
    spans = (
        tree_sitter.QueryCursor(
            frontend._query(frontend.visited_types(tuple(r for r in all_rules() if r.language == "cuda")))
        )
        .captures(root)
        .get("node", [])
    )
    assert spans
    for span in spans:
        expected = any(start <= span.start_byte and span.end_byte <= end for start, end in errors)
        assert context.in_error(span) == expected


def _context(code: str) -> CudaContext:
    source = SourceFile.from_bytes("k.cu", code.encode("utf-8"), "cuda")
    return CudaContext(source, analyse(source.text, VendorMacros()), CudaOptions())
