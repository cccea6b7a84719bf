"""The CUDA compute capability as Python code reads it: `torch.cuda.get_device_capability()`,
`torch.cuda.get_device_properties(d).major`/`.minor`, vLLM's `current_platform.get_device_capability()`, the
values computed from them (numbers, tuples, strings such as `f"sm{major}{minor}"`), the helpers that compare it
themselves, the major version of a threshold it is compared with, and the tests of it against NVIDIA
architectures (`arch_test`).

Whether such a test is a hazard (ROCm reports the gfx IP version there) stays in the rule.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rocmlint.python.capability_features import only_picks_an_ampere_feature
from rocmlint.python.capability_values import (
    CDNA_CAPABILITIES,
    PLATFORM_READ,
    READS,
    at,
    capability_step,
    minor_value_at,
    reads_of,
    value_at,
)
from rocmlint.python.conditions import skip_polarity, whole_condition
from rocmlint.python.flow import never_read, only_picks_display
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import is_none, last_name, only_displayed
from rocmlint.python.project import is_test_file
from rocmlint.python.scopes import FUNCTION_DEFS

# Helpers that compare the capability themselves: vLLM's `Platform` methods, torchtitan's
# `has_cuda_capability(9, 0)`.
_CAPABILITY_HELPERS = frozenset(
    {"has_device_capability", "is_device_capability", "is_device_capability_family", "has_cuda_capability"}
)
_READ_METHODS = frozenset({*(name.rsplit(".", 1)[-1] for name in READS), PLATFORM_READ[-1]})
# Below major 8 (`7`, `(7, 5)`, `75` as `sm`, `"sm_75"`) every GPU ROCm supports (major 9 or more) comes out
# as a recent NVIDIA GPU, and what such a threshold gates (fp16, tensor cores) exists on AMD. An equality with a
# whole version names one NVIDIA GPU whatever its major (`cap == (7, 5)` picks Turing's tuning or workaround), as
# `== (8, 0)` does (`_names_one_gpu`).
_FIRST_RECENT_MAJOR = 8
# The oldest major version a GPU ROCm supports reports (gfx9: MI100, MI250, MI300). An architecture of an older
# major tested for equality (`sm == 80`, `cap in {(8, 0), (8, 6)}`, `"sm89"`) is never the GPU on ROCm: where the
# test picks a branch itself (`if`, a conditional expression), every AMD GPU takes the one the other NVIDIA GPUs
# take, so it cannot misfire there. Kept in a flag (`is_sm80 = cap == (8, 0)`) it may turn features off for
# every GPU but one, AMD's included (tests skipped, bf16 refused): that is still reported.
_FIRST_ROCM_MAJOR = 9
_IDENTITIES = (ast.Eq, ast.NotEq)
# A version number from 20 up is `major * 10 + minor` (`75`, `"sm_75"`).
_FIRST_TWO_PART_NUMBER = 20
# NVIDIA's only major-9 architecture is Hopper's 9.0; AMD's CDNA3 and CDNA4 report 9.4 (MI300, gfx942) and 9.5 (MI355X,
# gfx950). A version 9.1-9.9 names an AMD GPU: the test reads the gfx IP version on purpose (`is_gfx950 = cap == (9,
# 5)`, `cap < (9, 5)` for what gfx950 fixed), it picks no NVIDIA path.
_AMD_ONLY_MAJOR = 9
_COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
# The version a text names: `90` of `"sm90"`/`"sm_90a"`/`"90"`, `8.9` of `"8.9"`.
_TEXT_VERSION = re.compile(r"(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class ArchTest:
    """A capability value tested against NVIDIA architectures (`arch_test`)."""

    site: ast.expr  # the comparison, the subscript or the `.get(...)` call
    sources: tuple[ast.AST, ...]  # the capability reads the tested value is computed from
    lookup: bool = False  # a table keyed by architecture (`KERNELS[f"sm{major}{minor}"]`), not a comparison


def is_capability_read(ctx: PythonContext, call: ast.Call) -> bool:
    """`torch.cuda.get_device_capability(...)`, `torch.cuda.get_device_properties(...)`, vLLM's
    `current_platform.get_device_capability()`."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr not in _READ_METHODS:
        return False  # an attribute call names its callee last: most calls are told apart without a lookup
    return capability_step(call, ctx.semantic) == [call]


def capability_reads(ctx: PythonContext, expr: ast.expr) -> list[ast.AST]:
    """The capability reads (`get_device_capability()`, `get_device_properties()` calls) an expression is
    computed from (`cap[0]`, `props.major`, `major * 10 + minor`, `(major, minor)`, `f"sm{major}{minor}"`,
    `int(x)`, `str(x)`, vLLM's `DeviceCapability.to_int()`, names and `self` attributes assigned from them,
    calls of a def of this file returning them); empty when it is not a capability value."""
    return reads_of(ctx.semantic, ctx.values, expr)


def threshold_major(ctx: PythonContext, threshold: ast.AST) -> float | None:
    """The version a constant threshold compared with the capability stands for, on the scale of the major
    version: `8` of `8`, of `(8, 9)`, of `89` (compared with `major * 10 + minor`) and of `"sm_89"`; a float
    keeps its minor (`8.9` of `8.9` and of `"8.9"`). None when it is no constant number or version text."""
    value = ctx.single_value(threshold)
    if isinstance(value, ast.Tuple) and value.elts:
        value = ctx.single_value(value.elts[0])
    number = value.value if isinstance(value, ast.Constant) else None
    if isinstance(number, str):
        number = _text_version(number)
    # `bool` is a subclass of `int`: `True` is no threshold.
    if type(number) is not int and type(number) is not float:
        return None
    number = float(number)
    return number // 10 if number >= 20 else number


def _text_version(text: str) -> float | None:
    match = _TEXT_VERSION.search(text)
    if match is None:
        return None
    return float(match.group(0)) if match.group(2) is not None else float(match.group(1))


def arch_test(ctx: PythonContext, node: ast.Compare | ast.Subscript | ast.Call) -> ArchTest | None:
    """The capability test `node` makes against an NVIDIA architecture of major 8 or more, if it makes one:
    a comparison with a threshold (`cap >= (9, 0)`, `f"sm{major}{minor}" == "sm90"`, `cap < min_capability`),
    membership in a written-out collection of architectures (`arch in ("sm90", "sm100")`), or a lookup in a
    table whose keys are written out (`KERNELS[f"sm{major}{minor}"]`, `KERNELS.get(arch)`).

    Not tests of an architecture: two capability values compared (device 0 with device 1, the capability
    with one cached in a variable or on `self`, or read back from a loaded record: `_read_back`), thresholds
    below major 8 (an equality with an older architecture still names an NVIDIA GPU), and tables filled at
    run time (a cache keyed by capability)."""
    if isinstance(node, ast.Compare):
        return _comparison_test(ctx, node)
    return _lookup_test(ctx, node)


def _comparison_test(ctx: PythonContext, node: ast.Compare) -> ArchTest | None:
    for left, operator, right in ctx.semantic.comparison_pairs(node):
        if isinstance(operator, (ast.In, ast.NotIn)):
            listed = ctx.values.collection_elements(right)
            if (isinstance(operator, ast.In) and _picks_without_amd(ctx, node, listed)) or _only_amd_gpus(ctx, listed):
                continue
            sources = capability_reads(ctx, left) if _names_arch(ctx, right, one_gpu=True) else []
            if sources:
                return ArchTest(node, tuple(sources))
            continue
        if not isinstance(operator, _COMPARISONS):
            continue
        left_sources, right_sources = capability_reads(ctx, left), capability_reads(ctx, right)
        if bool(left_sources) == bool(right_sources):
            continue
        threshold = right if left_sources else left
        if _names_amd_gpu(ctx, node, threshold):
            continue
        major = threshold_major(ctx, threshold)
        identity = isinstance(operator, _IDENTITIES)
        older = major is not None and major < _FIRST_RECENT_MAJOR
        if is_none(threshold) or (older and not (identity and _names_one_gpu(ctx, threshold))):
            continue
        if identity and _read_back(ctx, threshold):
            continue
        if isinstance(operator, ast.Eq) and _picks_without_amd(ctx, node, [threshold]):
            continue
        return ArchTest(node, tuple(left_sources or right_sources))
    return None


def _read_back(ctx: PythonContext, value: ast.expr) -> bool:
    """`cached.get("capability")`, `record["capability"]`: a value read back by name from a mapping that is not
    written out here (a loaded cache, a JSON record): equality with it is an identity test (a cache made on
    another GPU), not a test of an architecture."""
    key: ast.expr | None
    if isinstance(value, ast.Subscript):
        mapping, key = value.value, value.slice
    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get":
        mapping, key = value.func.value, (value.args[0] if value.args else None)
    else:
        return False
    return key is not None and ctx.string_value(key) is not None and not isinstance(ctx.single_value(mapping), ast.Dict)


def _lookup_test(ctx: PythonContext, node: ast.Subscript | ast.Call) -> ArchTest | None:
    if isinstance(node, ast.Subscript):
        if ctx.semantic.is_store(node):
            return None  # filling a table, not looking in it
        table, key = node.value, node.slice
    elif isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        table, key = node.func.value, node.args[0]
    else:
        return None
    if not _names_arch(ctx, table) or _only_amd_gpus(ctx, ctx.values.collection_elements(table)):
        return None
    sources = capability_reads(ctx, key)
    return ArchTest(node, tuple(sources), lookup=True) if sources else None


def _names_amd_gpu(ctx: PythonContext, compare: ast.Compare, threshold: ast.expr) -> bool:
    """`threshold`, the constant side of the capability comparison `compare`, names a version only AMD GPUs report
    (`(9, 4)`, `95`, `9.5`), or is major 9 tested for equality beside a test of the minor version that Hopper's 0
    fails (`props.major == 9 and props.minor == 5`)."""
    version = _whole_version(ctx, threshold)
    if version is not None:
        return _amd_only(version)
    if not isinstance(compare.ops[0], ast.Eq) or threshold_major(ctx, threshold) != _AMD_ONLY_MAJOR:
        return False
    conjunction = ctx.parent(compare)
    if not isinstance(conjunction, ast.BoolOp) or not isinstance(conjunction.op, ast.And):
        return False
    return any(
        isinstance(other, ast.Compare) and minor_value_at(ctx.semantic, ctx.values, other, 0) is False
        for other in conjunction.values
    )


def _only_amd_gpus(ctx: PythonContext, versions: list[ast.expr]) -> bool:
    """Every one of `versions` (a collection's elements or a table's keys) names a version only AMD GPUs report."""
    found = [_whole_version(ctx, version) for version in versions]
    return bool(found) and all(version is not None and _amd_only(version) for version in found)


def _amd_only(version: tuple[int, int]) -> bool:
    return version[0] == _AMD_ONLY_MAJOR and version[1] > 0


def _whole_version(ctx: PythonContext, version: ast.AST) -> tuple[int, int] | None:
    """(major, minor) of a constant that spells both (`(9, 4)`, `94`, `9.4`, `"9.4"`); None for anything else, a
    major alone included."""
    value = ctx.single_value(version)
    if isinstance(value, ast.Tuple):
        parts = [ctx.single_value(element) for element in value.elts[:2]]
        numbers = [part.value for part in parts if isinstance(part, ast.Constant) and type(part.value) is int]
        return (numbers[0], numbers[1]) if len(numbers) == 2 else None
    number = value.value if isinstance(value, ast.Constant) else None
    if isinstance(number, str):
        match = _TEXT_VERSION.fullmatch(number.strip())
        if match is None:
            return None
        number = float(match.group(0)) if match.group(2) is not None else int(match.group(1))
    if type(number) is float and number < _FIRST_TWO_PART_NUMBER:
        return int(number), round((number - int(number)) * 10)
    if type(number) is int and _FIRST_TWO_PART_NUMBER <= number < 100:
        major, minor = divmod(number, 10)
        return major, minor
    return None


def _picks_without_amd(ctx: PythonContext, node: ast.Compare, architectures: list[ast.expr]) -> bool:
    """`node` is (part of) the test of an `if` or a conditional expression (or the result of a predicate only so
    tested: `_result_only_picks_branches`), and each of `architectures` (the
    written-out side of its equality or membership test) is a constant architecture of a major version no AMD GPU
    met reports (`80`, `(8, 9)`, `"sm_86"`; `(12, 0)` and `major == 10` too where only CDNA's 9.x is met:
    `_meets_rdna`). Major 9 is always met: `== (9, 0)` is true on MI200."""
    condition = whole_condition(ctx, node)
    chooser = ctx.parent(condition)
    if isinstance(chooser, ast.Return) and chooser.value is condition:
        if not _result_only_picks_branches(ctx, chooser):
            return False
    elif not isinstance(chooser, (ast.If, ast.IfExp)) or chooser.test is not condition:
        return False
    majors = [threshold_major(ctx, architecture) for architecture in architectures]
    return bool(majors) and all(major is not None and not _major_met_on_amd(ctx, major) for major in majors)


def _major_met_on_amd(ctx: PythonContext, major: float) -> bool:
    """Whether an AMD GPU the file may run on reports this major version (`9.5` of a float threshold counts as 9):
    CDNA's 9, and RDNA's 10-12 where the project meets consumer GPUs (`_meets_rdna`)."""
    if major < _FIRST_ROCM_MAJOR:
        return False
    return major < _FIRST_ROCM_MAJOR + 1 or _meets_rdna(ctx)


def _meets_rdna(ctx: PythonContext) -> bool:
    """The file may run on AMD's consumer GPUs (RDNA, 10.3-12.0): the project names an RDNA target
    (`PythonContext.consumer_gpus`) and the file is no test, which AMD's CI runs on CDNA."""
    return bool(ctx.consumer_gpus) and not is_test_file(ctx.source.path)


def _result_only_picks_branches(ctx: PythonContext, result: ast.Return) -> bool:
    """`result` returns from a private def (`_scaled_mm_supported`, no other module's) every use of which in this
    file is a call that is the test of an `if` or a conditional expression (under `not` too): a branch choice
    written as a predicate (`if _scaled_mm_supported(x):`), not a flag kept for later."""
    function = ctx.semantic.enclosing_scope_node(result)
    if not isinstance(function, FUNCTION_DEFS) or not function.name.startswith("_"):
        return False
    uses = ctx.references.uses_of(function)
    return bool(uses) and all(isinstance(use, ast.Call) and _picks_a_branch(ctx, use) for use in uses)


def _picks_a_branch(ctx: PythonContext, call: ast.Call) -> bool:
    tested: ast.AST = call
    parent = ctx.parent(call)
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        tested, parent = parent, ctx.parent(parent)
    return isinstance(parent, (ast.If, ast.IfExp)) and parent.test is tested


def _names_arch(ctx: PythonContext, collection: ast.expr, one_gpu: bool = False) -> bool:
    """One of the written-out elements (or keys) of a collection names an architecture of major 8 or more or,
    with `one_gpu` (membership, an equality with each element), any one NVIDIA GPU (`_names_one_gpu`)."""
    for element in ctx.values.collection_elements(collection):
        major = threshold_major(ctx, element)
        if major is not None and (major >= _FIRST_RECENT_MAJOR or (one_gpu and _names_one_gpu(ctx, element))):
            return True
    return False


def _names_one_gpu(ctx: PythonContext, version: ast.AST) -> bool:
    """A whole version, major and minor (`(7, 5)`, `"sm_75"`, `"7.5"`, `75`, `7.5`), which names one NVIDIA
    architecture; not a major alone, which is a piece of a threshold spelled out (`major < 7 or (major == 7 and
    minor < 5)`)."""
    value = ctx.single_value(version)
    if isinstance(value, ast.Tuple):
        return len(value.elts) >= 2
    number = value.value if isinstance(value, ast.Constant) else None
    if isinstance(number, str):
        match = _TEXT_VERSION.search(number)
        return match is not None and (match.group(2) is not None or int(match.group(1)) >= _FIRST_TWO_PART_NUMBER)
    return type(number) is float or (type(number) is int and number >= _FIRST_TWO_PART_NUMBER)


def helper_test(ctx: PythonContext, call: ast.Call) -> str | None:
    """The name of the capability helper `call` asks (`current_platform.has_device_capability(89)`,
    `has_cuda_capability(9, 0)`), None for any other call, and for the helper's own implementation (a call on
    `self`/`cls`), a helper defined in this file, whose body's comparison is the test, and a helper of another
    module whose result is already false on ROCm (`return torch.version.hip is None and cap >= (major, minor)`):
    it is an NVIDIA-only test, and its callers select no NVIDIA path on AMD GPUs."""
    func = call.func
    helper = last_name(func)
    if helper not in _CAPABILITY_HELPERS or not (call.args or call.keywords):
        return None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
        return None
    if ctx.semantic.local_function(func) is not None or ctx.vendor_test(call).rocm is False:
        return None
    return helper


# What torch reports where a test suite runs: the oldest NVIDIA GPU current CUDA supports (Turing, sm_75), and
# AMD GPUs from MI200 (gfx90a, 9.0) through MI300X/MI355X (9.4, 9.5) and RDNA2 to RDNA4 (10.3, 11.x, 12.0).
_OLDEST_NVIDIA = (7, 5)
_ROCM_CAPABILITIES = ((9, 0), (9, 4), (9, 5), (10, 3), (11, 0), (11, 5), (12, 0))


def harmless_reading(ctx: PythonContext, node: ast.AST, sources: Sequence[ast.AST] = ()) -> str | None:
    """Why a capability test selects no NVIDIA path on ROCm by mistake (for `check --verbose`), or None when it may:
    it or the capability reads it compares (`sources`) are ROCm-gated or it runs only on ROCm (code an author wrote
    for ROCm compares gfx versions on purpose: `if torch.version.hip: rdna = major >= 10`, a module only imported under
    a ROCm test), another operand of its `and`/`or` decides the condition there (`major >= 8 or SYSTEM == "rocm"`), it
    is only shown (`idioms.only_displayed`) or only picks which message is shown (`flow.only_picks_display`), nothing
    reads it (`flow.never_read`), it only decides a test skip that is harmless (`harmless_skip`), an estimate
    (`only_picks_an_estimate`), or bf16 or an SDPA backend on "Ampere or newer", which every AMD GPU has
    (`capability_features.only_picks_an_ampere_feature`)."""
    gated = next((part for part in (node, *sources) if ctx.is_rocm_gated(part)), None)
    if gated is not None:
        return ctx.gate_evidence(gated)
    readings: tuple[tuple[Callable[[], bool], str], ...] = (
        (lambda: only_displayed(ctx, node), "it is only shown"),
        (lambda: ctx.is_nvidia_gated(node), "it runs only on ROCm (gfx versions compared on purpose)"),
        (lambda: ctx.gates.decided_on_rocm_without(node), "another operand of its condition decides it on ROCm"),
        (lambda: only_picks_display(ctx, node), "it only picks which message is shown"),
        (lambda: never_read(ctx, node), "nothing reads its value"),
        (lambda: harmless_skip(ctx, node), "it only decides a test skip that does not misfire on ROCm"),
        (lambda: oldest_arm_on_amd(ctx, node), "every AMD GPU takes the arm the oldest NVIDIA GPU takes"),
        (lambda: only_picks_an_estimate(ctx, node), "it only picks a speed estimate"),
        (lambda: probe_false_on_rocm_anyway(ctx, node), "the probe it decides answers False on ROCm anyway"),
        (lambda: only_picks_an_ampere_feature(ctx, node), _AMPERE_FEATURE_READING),
    )
    return next((reading for holds, reading in readings if holds()), None)


def harmless_on_rocm(ctx: PythonContext, node: ast.AST, sources: Sequence[ast.AST] = ()) -> bool:
    """`harmless_reading` has a reading of the test `node`, which `check --verbose` then shows."""
    reading = harmless_reading(ctx, node, sources)
    if reading is not None:
        ctx.note_not_reported(node, reading)
    return reading is not None


_AMPERE_FEATURE_READING = (
    "an Ampere floor that only enables a feature every AMD GPU has (bf16, an SDPA backend, FlashAttention 2, TF32)"
)


def only_picks_an_estimate(ctx: PythonContext, node: ast.AST) -> bool:
    """`node`, a capability test, decides what a def returns, and the def returns nothing but float constants
    (`if major >= 9: return 5.0`, `return 4.0 if minor == 9 else 2.0`, `return 1.0`): a relative speed or
    weight that seeds a heuristic, not a kernel, a tile size, a count or a feature switch, and the same on every
    AMD GPU, so their ratios stay right (a multi-GPU split's prior, replaced by measured speeds)."""
    condition = whole_condition(ctx, node)
    chooser = ctx.parent(condition)
    if isinstance(chooser, ast.If) and chooser.test is condition:
        if not all(isinstance(statement, ast.Return) for statement in chooser.body):
            return False
    elif not (isinstance(chooser, ast.IfExp) and chooser.test is condition):
        return False
    function = next((ancestor for ancestor in ctx.ancestors(node) if isinstance(ancestor, FUNCTION_DEFS)), None)
    if function is None:
        return False
    returns = [found for found in ctx.semantic.descendants(function) if isinstance(found, ast.Return)]
    own = [found for found in returns if ctx.semantic.enclosing_scope_node(found) is function]
    return bool(own) and all(_float_constants(found.value) for found in own)


def probe_false_on_rocm_anyway(ctx: PythonContext, node: ast.AST) -> bool:
    """`node`, a capability test, only picks an early `return` of a probe that answers False on ROCm whatever it picks:

        def fp4_available() -> bool:
            if torch.cuda.get_device_capability()[0] < 8:   # MI300X's 9.4 passes...
                return False
            try:
                import cutlass.utils.blackwell_helpers      # ...and the probe still answers False: no CuTe DSL there
                return True
            except ImportError:
                return False

    The probe is a module-level def made of tests, imports, names it binds and `return`s only (nothing it runs has
    an effect a test could let through), and the gate analysis finds every answer it gives on ROCm false
    (`GateAnalyzer.symbol_value`: its `True` follows an NVIDIA-only import). A CUDA toolkit found (`CUDA_HOME`)
    is no such answer: a ROCm machine may have one installed."""
    condition = whole_condition(ctx, node)
    chooser = ctx.parent(condition)
    if not (isinstance(chooser, ast.If) and chooser.test is condition):
        return False
    if not all(isinstance(statement, ast.Return) for statement in chooser.body):
        return False
    function = next((ancestor for ancestor in ctx.ancestors(node) if isinstance(ancestor, FUNCTION_DEFS)), None)
    if function is None or ctx.parent(function) is not ctx.semantic.module or not _without_effects(function):
        return False
    answered = ctx.gates.symbol_value(function.name, called=True)
    return answered is not None and answered.rocm is False


# Statements a probe may hold: tests, imports, names bound, returns (their expressions are only evaluated).
_PROBE_STATEMENTS = (ast.If, ast.Return, ast.Import, ast.ImportFrom, ast.Try, ast.Pass, ast.Assign, ast.AnnAssign)


def _without_effects(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Every statement of `function` is one of `_PROBE_STATEMENTS`, every assignment binds plain names only."""
    for found in ast.walk(function):
        if found is function or not isinstance(found, ast.stmt):
            continue
        if isinstance(found, ast.Expr) and isinstance(found.value, ast.Constant):
            continue  # a docstring
        if not isinstance(found, _PROBE_STATEMENTS):
            return False
        targets = (
            found.targets
            if isinstance(found, ast.Assign)
            else [found.target]
            if isinstance(found, ast.AnnAssign)
            else []
        )
        if not all(isinstance(target, ast.Name) for target in targets):
            return False
    return True


def _float_constants(value: ast.expr | None) -> bool:
    """`value` is a float constant, or a conditional expression choosing between such."""
    if isinstance(value, ast.IfExp):
        return _float_constants(value.body) and _float_constants(value.orelse)
    return isinstance(value, ast.Constant) and type(value.value) is float


def oldest_arm_on_amd(ctx: PythonContext, node: ast.AST) -> bool:
    """`node`, a capability comparison, has on every AMD GPU it may meet the value it has on the oldest NVIDIA GPU
    (sm_75): AMD takes the arm meant for GPUs without the feature tested (`cap != (10, 0)`: refuse or skip), never
    the one written for a recent NVIDIA GPU (`cap >= (8, 9)` is true on MI250, which has no FP8). The AMD GPUs met are
    the CDNA ones of AMD's CI and servers (MI200 9.0, MI300 9.4, MI355 9.5), where `major >= 10`, `major == 12`,
    `cap not in [(10, 0), (10, 3)]` and `cap < (10, 0)` come out as on Turing; product code of a project that runs on
    AMD's consumer GPUs too (`PythonContext.consumer_gpus`: it names an RDNA gfx target, or target-archs does) meets
    RDNA's 10.3-12.0 as well, NVIDIA's Ampere to Blackwell numbers (`major >= 10` is true there)."""
    if not isinstance(node, ast.Compare) or len(node.ops) != 1 or not _only_newer_than_cdna(ctx, node):
        return False
    oldest = _value_at(ctx, node, _OLDEST_NVIDIA)
    if oldest is None:
        return False
    met = _ROCM_CAPABILITIES if _meets_rdna(ctx) else CDNA_CAPABILITIES
    if any(_value_at(ctx, node, gpu) != oldest for gpu in met):
        return False
    return not any(_differs_from_oldest(ctx, later, met) for later in _later_chain_tests(ctx, node))


def _later_chain_tests(ctx: PythonContext, node: ast.AST) -> list[ast.expr]:
    """The tests of the `elif`s after the `if` whose whole test holds `node` (`if major >= 10: ... elif major >= 9:`):
    AMD goes on to them where Turing does, so its path through the chain is Turing's only if they agree too."""
    condition = whole_condition(ctx, node)
    chooser = ctx.parent(condition)
    if not isinstance(chooser, ast.If) or chooser.test is not condition:
        return []
    tests: list[ast.expr] = []
    while len(chooser.orelse) == 1 and isinstance(chooser.orelse[0], ast.If):
        chooser = chooser.orelse[0]
        tests.append(chooser.test)
    return tests


def _differs_from_oldest(ctx: PythonContext, test: ast.expr, met: tuple[tuple[int, int], ...]) -> bool:
    """A capability comparison in `test` whose value on one of the AMD GPUs `met` is not the oldest NVIDIA GPU's."""
    for compare in ast.walk(test):
        if isinstance(compare, ast.Compare) and len(compare.ops) == 1:
            oldest = _value_at(ctx, compare, _OLDEST_NVIDIA)
            if oldest is not None and any(_value_at(ctx, compare, gpu) != oldest for gpu in met):
                return True
    return False


def _only_newer_than_cdna(ctx: PythonContext, compare: ast.Compare) -> bool:
    """Every architecture `compare` names is newer than the newest CDNA GPU's number (9.5): the arm AMD shares with
    Turing then lacks a feature no AMD GPU has under that number (`!= (10, 0)`), not one AMD has (`== (8, 0)`, A100
    only: bf16 and the large shared memory MI200/MI300 have too)."""
    left, right = compare.left, compare.comparators[0]
    side, other = (left, right) if capability_reads(ctx, left) else (right, left)
    limit = ctx.single_value(other)
    membership = isinstance(compare.ops[0], (ast.In, ast.NotIn))
    listed = limit.elts if membership and isinstance(limit, (ast.Tuple, ast.List, ast.Set)) else [limit]
    for element in listed:
        value = at(side, ctx.single_value(element) if element is not None else None, CDNA_CAPABILITIES[-1])
        if value is None or not value[0] < value[1]:  # type: ignore[operator]
            return False
    return bool(listed)


def harmless_skip(ctx: PythonContext, node: ast.AST) -> bool:
    """`node`, a capability comparison, only decides whether a test is skipped (`conditions.skip_polarity`),
    and either does not skip the test on the oldest NVIDIA GPU (`skipif(major >= 12)`, `if cap == (9, 0):
    pytest.skip("flaky on H100")`: the test needs no recent NVIDIA architecture, and runs on ROCm as a test
    of any GPU does) or skips it on every ROCm GPU (`skipif(major >= 9)`: coverage, not behaviour). A skip
    that spares a ROCm GPU but not the oldest NVIDIA one (`skipif(cap < (8, 9))`, `skipif(cap != (9, 0))`)
    lets a test written for recent NVIDIA GPUs run on AMD ones: not harmless, unless the test itself stops on
    ROCm (`_decorated_test_stops_on_rocm`)."""
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return False
    condition = whole_condition(ctx, node)
    polarity = skip_polarity(ctx, condition)
    if polarity is None:
        return False
    if _decorated_test_stops_on_rocm(ctx, condition):
        return True
    skipping = polarity != _negated(ctx, node, condition)  # the comparison's value that skips the test
    oldest = _value_at(ctx, node, _OLDEST_NVIDIA)
    if oldest is None:
        return False
    return oldest != skipping or all(_value_at(ctx, node, gpu) == skipping for gpu in _ROCM_CAPABILITIES)


def _decorated_test_stops_on_rocm(ctx: PythonContext, condition: ast.AST) -> bool:
    """`condition` decides a skip decorator of a test function whose own body never gets to its end on ROCm
    (`pytest.importorskip("deep_gemm")` first, an early exit on a ROCm test): skipped or not by the
    decorator, the test does nothing on AMD GPUs."""
    child: ast.AST = condition
    for ancestor in ctx.ancestors(condition):
        if isinstance(ancestor, FUNCTION_DEFS):
            return child in ancestor.decorator_list and ctx.is_rocm_gated(ancestor.body[-1])
        if isinstance(ancestor, (ast.ClassDef, ast.Module)):
            return False
        child = ancestor
    return False


def _negated(ctx: PythonContext, node: ast.AST, condition: ast.AST) -> bool:
    """An odd number of `not` between `node` and its whole condition."""
    if node is condition:
        return False
    negated = False
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, ast.UnaryOp):
            negated ^= isinstance(ancestor.op, ast.Not)
        if ancestor is condition:
            break
    return negated


def _value_at(ctx: PythonContext, compare: ast.Compare, capability: tuple[int, int]) -> bool | None:
    return value_at(ctx.semantic, ctx.values, compare, capability)


# --- the capability as the NVIDIA architecture a build selects --------------------------------------------
# Environment variables that name the NVIDIA architectures `torch.utils.cpp_extension` (and CMake) build for.
_ARCH_ENVIRONMENT = frozenset({"TORCH_CUDA_ARCH_LIST", "CUDAARCHS"})
_ENVIRONMENT = frozenset({"os.environ"})
_ENVIRONMENT_SETTERS = frozenset({"os.environ.setdefault", "os.putenv"})
# An nvcc architecture option built from a value: `arch=compute_{}`, `code=sm_{}`, `-arch=sm_{}`.
_ARCH_OPTION = re.compile(r"(?:arch|code|gpu-architecture|gpu-code)[=\s](?:sm|compute)_\{\}")
# Calls whose result keeps their argument's value (or its elements): copies, orderings, clamps, text.
_KEEPING_CALLS = frozenset({"min", "max", "sorted", "list", "set", "tuple", "str", "int", "join", "format"})
_ADDING = frozenset({"append", "add", "extend", "insert"})
_LOOPS = (ast.For, ast.AsyncFor, ast.comprehension)
# How many expressions a walk from one read looks at: build scripts reach their flags in a few dozen.
_MAX_WALK = 200


# What a file spells (in any case) where `built_architecture` can find a build: an arch-list variable, or the `sm_` or
# `compute_` of an nvcc option. With the NVIDIA target prefixes its searches report, ROC114's `also_requires` (vLLM:
# 72 files that read the capability for other ends are not walked for it).
BUILT_ARCHITECTURE_WORDS = (*(name.lower().encode() for name in sorted(_ARCH_ENVIRONMENT)), b"sm_", b"compute_")


def built_architecture(ctx: PythonContext, read: ast.Call) -> ast.AST | None:
    """Where the capability `read` returns (`torch.cuda.get_device_capability(i)`) ends up naming the NVIDIA
    architectures a build compiles for: written, as text (`f"{major}.{minor}"`, joined), to
    `TORCH_CUDA_ARCH_LIST`, or put in an nvcc option (`f"arch=compute_{num},code=sm_{num}"`). Forward through
    assignments (tuple targets too), reads of the assigned names in the same function, subscripts, `.major`/
    `.minor`, arithmetic, f-strings, value-keeping calls (`min`, `sorted`, `";".join`), lists and sets it is
    added to, and loops over them. A comparison ends the walk: that is an architecture test. None when no
    such place is reached."""
    pending: list[ast.AST] = [read]
    seen: set[ast.AST] = set()
    while pending and len(seen) < _MAX_WALK:
        value = pending.pop()
        if value in seen:
            continue
        seen.add(value)
        sink, following = _architecture_step(ctx, value)
        if sink is not None:
            return sink
        pending.extend(following)
    return None


def _architecture_step(ctx: PythonContext, value: ast.AST) -> tuple[ast.AST | None, list[ast.AST]]:
    """The build option `value` is written into (None), and the expressions its value goes on to."""
    parent = ctx.parent(value)
    if isinstance(parent, ast.FormattedValue):
        string = ctx.parent(parent)
        if isinstance(string, ast.JoinedStr) and _ARCH_OPTION.search(_fstring_shape(string)):
            return string, []
        return None, [string] if string is not None else []
    if isinstance(parent, (ast.Subscript, ast.Attribute, ast.BinOp, ast.Tuple, ast.List, ast.Set, ast.Starred)):
        return None, [] if ctx.semantic.is_store(parent) else [parent]
    if isinstance(parent, ast.Call):
        return _call_step(ctx, parent, value)
    call = ctx.parent(parent) if isinstance(parent, ast.keyword) else None
    if isinstance(call, ast.Call):
        return _call_step(ctx, call, value)
    if isinstance(parent, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and parent.value is value:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        for target in targets:
            if _is_architecture_variable(ctx, target):
                return target, []
        return None, [read for target in targets for read in _reads_of(ctx, target, parent)]
    if isinstance(parent, _LOOPS) and parent.iter is value:
        return None, _reads_of(ctx, parent.target, parent)
    return None, []


def _call_step(ctx: PythonContext, call: ast.Call, value: ast.AST) -> tuple[ast.AST | None, list[ast.AST]]:
    func = call.func
    name = ctx.qualified_name(func) or ""
    if name in _ENVIRONMENT_SETTERS and len(call.args) == 2 and call.args[1] is value:
        return (call, []) if ctx.string_value(call.args[0]) in _ARCH_ENVIRONMENT else (None, [])
    if func is value:
        return None, []
    method = last_name(func)
    if isinstance(func, ast.Attribute) and method in _ADDING:
        return None, _reads_of(ctx, func.value, call)  # the list or set it is added to goes on
    if method in _KEEPING_CALLS:
        if method == "format" and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Constant):
            text = ctx.string_value(func.value) or ""
            if _ARCH_OPTION.search(re.sub(r"\{[^{}]*\}", "{}", text)):
                return call, []
        return None, [call]
    return None, []


def _is_architecture_variable(ctx: PythonContext, target: ast.expr) -> bool:
    """`os.environ["TORCH_CUDA_ARCH_LIST"] = ...`."""
    if not isinstance(target, ast.Subscript) or ctx.qualified_name(target.value) not in _ENVIRONMENT:
        return False
    return ctx.string_value(target.slice) in _ARCH_ENVIRONMENT


def _reads_of(ctx: PythonContext, target: ast.AST, statement: ast.AST) -> list[ast.AST]:
    """The reads of the names (or attributes) `target` binds, within the function `statement` is in (the whole
    file at module level); the list or set itself for a name bound by a tuple target's element."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return [read for element in target.elts for read in _reads_of(ctx, element, statement)]
    if isinstance(target, ast.Starred):
        return _reads_of(ctx, target.value, statement)
    if isinstance(target, ast.Name):
        identifier = target.id
    elif isinstance(target, ast.Attribute):
        identifier = target.attr
    else:
        return []
    scope = ctx.semantic.enclosing_scope_node(statement)
    within = None if isinstance(scope, ast.Module) else scope
    return list(ctx.references.mention_reads(identifier, within=within))


def _fstring_shape(string: ast.JoinedStr) -> str:
    """An f-string's text with `{}` for each field: `arch=compute_{},code=sm_{}`."""
    return "".join(str(part.value) if isinstance(part, ast.Constant) else "{}" for part in string.values)
