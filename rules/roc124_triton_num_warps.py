"""ROC124 triton-num-warps."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import deciding_tests, last_name, report_site
from rocmlint.rule import Invalid, Rule, Valid

# 16 warps x 64 lanes = 1024 threads, the per-block limit of AMD GPUs.
_MAX_WARPS_ON_WAVE64 = 16
_CONFIG_CLASSES = frozenset(
    {"triton.Config", "triton.runtime.Config", "triton.runtime.autotuner.Config", "helion.Config"}
)
_AUTOTUNERS = frozenset({"triton.autotune", "triton.runtime.autotune", "triton.runtime.autotuner.autotune"})
_COLLECTION_BUILDERS = frozenset({"append", "extend", "insert"})
_COLLECTION_WRAPPERS = frozenset({"list", "tuple", "sorted"})
_BINARY_OPERATORS: dict[type, Callable[[int, int], int]] = {
    cst.Add: operator.add,
    cst.Subtract: operator.sub,
    cst.Multiply: operator.mul,
    cst.FloorDivide: operator.floordiv,
    cst.LeftShift: operator.lshift,
    cst.RightShift: operator.rshift,
}
_MAX_DEPTH = 6
_MAX_FLOW_DEPTH = 3
_SCOPE_BOUNDARIES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
_VENDOR_TEST_FORMS = (cst.Name, cst.Attribute, cst.Call, cst.Comparison)


@dataclass(frozen=True)
class _Source:
    """One value `num_warps` may take, and the node it is written at."""

    value: int
    node: cst.CSTNode
    from_loop: bool = False  # an element of the list a `for`/comprehension iterates


class TritonNumWarps(Rule):
    """
    ## What it does
    Flags Triton `num_warps` values above 16 (more than 1024 threads on 64-lane AMD waves) in
    `triton.Config` and kernel launches not gated for ROCm.

    Covers `triton.Config(..., num_warps=N)` (also inside `@triton.autotune(configs=[...])`) and
    launches `kernel[grid](..., num_warps=N)`. The value may be a literal, a name assigned once, either
    arm of a conditional expression, simple constant arithmetic (`BLOCK // 32` with a constant `BLOCK`),
    or an element of the list a `for` loop or comprehension iterates (`for num_warps in [4, 8, 32]`; the
    `32` is reported). Values the linter cannot know (a function parameter) are not flagged, nor are
    configs gated for ROCm: branches on `torch.version.hip`, conditions that mention ROCm around the
    config (`if IS_ROCM and w > 16: continue`), config lists passed through a pruning function that
    consults ROCm or the warp size (directly or as `prune_configs_by`), and config lists only used on
    NVIDIA.

    ## Why is this bad on ROCm?
    Triton launches `num_warps x warp_size` threads per block. CDNA GPUs (MI100-MI350) have 64-lane
    waves, so `num_warps=32` asks for 2048 threads, above the 1024-thread limit: the launch fails with
    a HIP "invalid argument" error (newer Triton rejects the config explicitly), and an autotuner that
    benchmarks such a config crashes. Sources: triton-lang/triton#4128, triton PR #6125,
    Dao-AILab/flash-attention#1534, openxla/xla#35026, pytorch/helion#1368 (AMD: at most 16 warps).

    ## Example
    ```python
    @triton.autotune(
        configs=[triton.Config({"BLOCK": 4096}, num_warps=16), triton.Config({"BLOCK": 4096}, num_warps=32)],
        key=["N"],
    )
    @triton.jit
    def row_sum_kernel(X, Y, N, BLOCK: tl.constexpr): ...
    ```

    ## Fix
    ```python
    configs = [triton.Config({"BLOCK": 4096}, num_warps=16), triton.Config({"BLOCK": 4096}, num_warps=32)]
    if torch.version.hip:
        configs = [c for c in configs if c.num_warps <= 16]

    @triton.autotune(configs=configs, key=["N"])
    @triton.jit
    def row_sum_kernel(X, Y, N, BLOCK: tl.constexpr): ...
    ```

    ## Fix safety
    No automatic fix: dropping or shrinking a config changes which kernels are tuned and the block
    shape a kernel assumes; RDNA GPUs (wave32) do accept 32 warps, so the right limit reads
    `torch.cuda.get_device_properties(d).warp_size`.
    """

    code = "ROC124"
    name = "triton-num-warps"
    severity = Severity.ERROR
    fix_availability = FixAvailability.NONE
    triggers = (b"num_warps",)

    def __init__(self) -> None:
        # Several configs may read one loop list: its literal is reported once (only once actually
        # reported, so a gated first use does not hide an ungated later one).
        self._reported: set[cst.CSTNode] = set()

    def visit_Call(self, node: cst.Call, ctx: PythonContext) -> None:
        argument = _num_warps_argument(node, ctx)
        if argument is None:
            return
        too_many = [s for s in _int_sources(argument.value, ctx, 0) if s.value > _MAX_WARPS_ON_WAVE64]
        if not too_many or _handled_for_rocm(node, ctx):
            return
        for source in too_many:
            reported = source.node if source.from_loop else report_site(ctx, source.node, argument.value)
            if reported in self._reported:
                continue
            if ctx.report(reported, _message(source.value), gate_on=(source.node, argument.value)):
                self._reported.add(reported)


def _num_warps_argument(call: cst.Call, ctx: PythonContext) -> cst.Arg | None:
    """`num_warps` of a `triton.Config(...)` or of a `kernel[grid](...)` launch."""
    keyword = ctx.semantic.keyword(call, "num_warps")
    if isinstance(call.func, cst.Subscript):
        return keyword
    if last_name(call.func) != "Config" or ctx.qualified_name(call.func) not in _CONFIG_CLASSES:
        return None
    return keyword or ctx.semantic.positional(call, 1)


# --- values ---------------------------------------------------------------------------------------
def _int_sources(expr: cst.BaseExpression, ctx: PythonContext, depth: int) -> list[_Source]:
    """Every integer `expr` may be, where it is known at lint time."""
    if depth > _MAX_DEPTH:
        return []
    if isinstance(expr, cst.Name):
        return _name_sources(expr, ctx, depth)
    if isinstance(expr, cst.Integer):
        return [_Source(int(expr.evaluated_value), expr)]
    if isinstance(expr, cst.IfExp):
        return _int_sources(expr.body, ctx, depth + 1) + _int_sources(expr.orelse, ctx, depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        apply = _BINARY_OPERATORS.get(type(expr.operator))
        left, right = _constant(expr.left, ctx, depth), _constant(expr.right, ctx, depth)
        if apply is None or left is None or right is None or not _safe_operands(expr.operator, right):
            return []
        return [_Source(apply(left, right), expr)]
    if isinstance(expr, cst.Call) and ctx.qualified_name(expr.func) in ("min", "max") and expr.args:
        values = [_constant(arg.value, ctx, depth) for arg in expr.args if not arg.star and arg.keyword is None]
        if len(values) != len(expr.args) or any(v is None for v in values):
            return []
        pick = min if ctx.qualified_name(expr.func) == "min" else max
        return [_Source(pick(v for v in values if v is not None), expr)]
    return []


def _safe_operands(operation: cst.BaseBinaryOp, right: int) -> bool:
    """No division by zero, no shifts that build huge integers."""
    if isinstance(operation, cst.FloorDivide):
        return right != 0
    if isinstance(operation, (cst.LeftShift, cst.RightShift)):
        return 0 <= right < 64
    return True


def _constant(expr: cst.BaseExpression, ctx: PythonContext, depth: int) -> int | None:
    """The single value of `expr` when it has exactly one (operands of arithmetic)."""
    sources = _int_sources(expr, ctx, depth + 1)
    return sources[0].value if len(sources) == 1 and not sources[0].from_loop else None


def _name_sources(name: cst.Name, ctx: PythonContext, depth: int) -> list[_Source]:
    # A loop variable takes the integer literals of the list it iterates (`for w in [4, 8, 32]`, a
    # tuple target of `[(64, 4), (128, 32)]`, `itertools.product([64, 128], [4, 8, 32])`).
    looped = ctx.semantic.loop_values(name)
    if looped is not None:
        return [_Source(int(v.evaluated_value), v, from_loop=True) for v in looped if isinstance(v, cst.Integer)]
    value = ctx.single_value(name)
    if value is None or value is name:
        return []
    return _int_sources(value, ctx, depth + 1)


# --- ROCm handling beyond plain gating ---------------------------------------------------------------
def _handled_for_rocm(call: cst.Call, ctx: PythonContext) -> bool:
    """A config the author already keeps from ROCm in a way plain gating cannot see."""
    return _under_rocm_aware_condition(call, ctx) or _flows_away_from_rocm(call, ctx, 0)


def _under_rocm_aware_condition(node: cst.CSTNode, ctx: PythonContext) -> bool:
    """A condition mentioning ROCm decides whether `node` runs (`if IS_ROCM and w > 16: continue`,
    `[... for w in ws if not (IS_HIP and w > 16)]`, `not IS_ROCM or small`), even if not fully."""
    return any(ctx.vendor_test(test).is_vendor_test for test in deciding_tests(ctx, node))


def _flows_away_from_rocm(expr: cst.CSTNode, ctx: PythonContext, depth: int) -> bool:
    """Whether the config list holding `expr` is pruned for ROCm or only used on NVIDIA."""
    if depth > _MAX_FLOW_DEPTH:
        return False
    root = _collection_root(expr, ctx)
    parent = ctx.parent(root)
    if isinstance(parent, cst.Arg):
        call = ctx.parent(parent)
        return isinstance(call, cst.Call) and _call_handles_configs(call, parent, ctx, depth)
    if isinstance(parent, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and parent.value is root:
        target = _assigned_name(parent)
        return target is not None and _name_flows_away(target, parent, ctx, depth)
    if isinstance(parent, cst.Return):
        function = next((a for a in ctx.ancestors(parent) if isinstance(a, _SCOPE_BOUNDARIES)), None)
        return isinstance(function, cst.FunctionDef) and _function_result_flows_away(function, ctx, depth)
    return False


def _collection_root(expr: cst.CSTNode, ctx: PythonContext) -> cst.CSTNode:
    """The outermost expression that is just the config list `expr` belongs to (list displays,
    comprehensions, `+`, conditional arms, `list(...)`)."""
    current = expr
    while True:
        parent = ctx.parent(current)
        if isinstance(parent, (cst.Element, cst.List, cst.Tuple, cst.Set, cst.StarredElement, cst.BinaryOperation)):
            current = parent
        elif isinstance(parent, (cst.ListComp, cst.SetComp, cst.GeneratorExp)) and current is parent.elt:
            current = parent
        elif isinstance(parent, cst.IfExp) and current is not parent.test:
            current = parent
        elif isinstance(parent, cst.Arg) and (call := ctx.parent(parent)) is not None and _is_wrapper_call(call, ctx):
            current = call
        else:
            return current


def _is_wrapper_call(node: cst.CSTNode | None, ctx: PythonContext) -> bool:
    return isinstance(node, cst.Call) and ctx.qualified_name(node.func) in _COLLECTION_WRAPPERS


def _assigned_name(statement: cst.Assign | cst.AugAssign | cst.AnnAssign) -> cst.Name | None:
    if isinstance(statement, cst.Assign):
        targets = [t.target for t in statement.targets]
        return targets[0] if len(targets) == 1 and isinstance(targets[0], cst.Name) else None
    return statement.target if isinstance(statement.target, cst.Name) else None


def _call_handles_configs(call: cst.Call, argument: cst.Arg, ctx: PythonContext, depth: int) -> bool:
    """The config list is an argument of `call`: an autotuner that prunes for ROCm, a builder call on a
    list (`configs.append(...)`), or a local function that consults ROCm (`config_prune(configs)`)."""
    name = ctx.qualified_name(call.func)
    if name in _AUTOTUNERS:
        return _prune_consults_rocm(call, ctx)
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in _COLLECTION_BUILDERS and isinstance(func.value, cst.Name):
        return _name_flows_away(func.value, call, ctx, depth)
    return argument.keyword is None and _consults_rocm(func, ctx)


def _prune_consults_rocm(autotune: cst.Call, ctx: PythonContext) -> bool:
    prune = ctx.semantic.keyword(autotune, "prune_configs_by")
    if prune is None:
        return False
    return any(_consults_rocm(function, ctx) for function in ctx.semantic.dict_entries(prune.value).values())


def _consults_rocm(function: cst.BaseExpression, ctx: PythonContext) -> bool:
    """Whether a local function (or lambda) reads a ROCm test or the device warp size."""
    if isinstance(function, cst.Lambda):
        body: cst.CSTNode = function.body
    elif isinstance(function, cst.Name):
        binding = ctx.semantic.lookup(function.value, function)
        if binding is None or binding.kind != "function" or binding.definition is None:
            return False
        body = binding.definition.body
    else:
        return False
    for node in ctx.semantic.descendants(body):
        if isinstance(node, (cst.Name, cst.Attribute)) and last_name(node) == "warp_size":
            return True
        if isinstance(node, _VENDOR_TEST_FORMS) and ctx.vendor_test(node).is_vendor_test:
            return True
    return False


def _name_flows_away(name: cst.Name, at: cst.CSTNode, ctx: PythonContext, depth: int) -> bool:
    """The list bound to `name` is read in ROCm-only code (pruning it), or every read of it is gated away
    from ROCm or flows into pruning."""
    binding = ctx.semantic.lookup(name.value, at)
    if binding is None or binding.kind != "value":
        return False
    reads = [ref for ref in ctx.semantic.reads(name.value, binding) if not _is_builder_receiver(ref, ctx)]
    if not reads:
        return False
    if any(ctx.is_nvidia_gated(ref) for ref in reads):
        return True
    return all(ctx.is_rocm_gated(ref) or _flows_away_from_rocm(ref, ctx, depth + 1) for ref in reads)


def _function_result_flows_away(function: cst.FunctionDef, ctx: PythonContext, depth: int) -> bool:
    """Every call of `function` (a module-level or nested def) is gated away from ROCm or pruned."""
    calls = [
        ref
        for ref in ctx.semantic.name_reads(ctx.module, function.name.value)
        if isinstance(ctx.parent(ref), cst.Call) and ctx.parent(ref).func is ref  # type: ignore[union-attr]
    ]
    if not calls:
        return False
    return all(
        ctx.is_rocm_gated(call) or _flows_away_from_rocm(call, ctx, depth + 1)
        for call in (ctx.parent(ref) for ref in calls)
        if call is not None
    )


def _is_builder_receiver(ref: cst.Name, ctx: PythonContext) -> bool:
    parent = ctx.parent(ref)
    return isinstance(parent, cst.Attribute) and parent.value is ref and parent.attr.value in _COLLECTION_BUILDERS


def _message(warps: int) -> str:
    return (
        f"num_warps={warps} asks for {warps * 64} threads per block on wave64 AMD GPUs (limit 1024), so the "
        "launch fails on ROCm; use at most 16 warps or prune such configs when torch.version.hip is set"
    )


TritonNumWarps.valid = (
    Valid(
        """
        def launch(kernel, x, grid):
            num_warps = 32 if x.device.type == "xpu" else 8
            kernel[grid](x, num_warps=num_warps)
        """,
    ),
    Valid(
        """
        import triton

        @triton.autotune(
            configs=[
                triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
                triton.Config({"BLOCK_SIZE": 2048}, num_warps=8),
                triton.Config({"BLOCK_SIZE": 4096}, num_warps=16),
            ],
            key=["n_elements"],
        )
        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            pass
        """,
    ),
    # Liger-style: a ROCm-aware conditional expression and a parameter the linter cannot know.
    Valid(
        """
        import torch

        def is_hip() -> bool:
            return torch.version.hip is not None

        num_warps = 32  # module default for the benchmark script

        def cross_entropy(logits, target, BLOCK_SIZE, num_warps=4):
            _cross_entropy_kernel[(logits.shape[0],)](
                logits, target, BLOCK_SIZE=BLOCK_SIZE, num_warps=32 if not is_hip() else 16,
            )
            _softmax_kernel[(logits.shape[0],)](logits, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
        """,
    ),
    # mamba-style: the config list goes through a pruning function that reads the warp size on ROCm.
    Valid(
        """
        import torch
        import triton

        def config_prune(configs):
            warp_size = 64 if torch.version.hip else 32
            max_num_warps = 1024 // warp_size
            return [config for config in configs if config.num_warps <= max_num_warps]

        configs_autotune = [
            triton.Config({}, num_warps=1),
            triton.Config({}, num_warps=8),
            triton.Config({}, num_warps=16),
            triton.Config({}, num_warps=32),
        ]
        pruned_configs_autotune = config_prune(configs_autotune)

        @triton.autotune(configs=pruned_configs_autotune, key=["N"])
        @triton.jit
        def _layer_norm_fwd_1pass_kernel(X, Y, N, BLOCK_N: tl.constexpr):
            pass
        """,
    ),
    Valid(
        """
        import torch
        import triton

        IS_ROCM = torch.version.hip is not None

        def get_configs():
            configs = []
            for block in [1024, 2048, 4096]:
                for num_warps in [4, 8, 16, 32]:
                    if IS_ROCM and num_warps > 16:
                        continue
                    configs.append(triton.Config({"BLOCK": block}, num_warps=num_warps))
            return configs
        """,
    ),
    Valid(
        """
        import torch
        import triton

        CUDA_CONFIGS = [triton.Config({'BLOCK_M': 128}, num_warps=w) for w in (8, 16, 32)]
        HIP_CONFIGS = [triton.Config({'BLOCK_M': 128, 'waves_per_eu': 2}, num_warps=w) for w in (4, 8)]

        @triton.autotune(configs=HIP_CONFIGS if torch.version.hip else CUDA_CONFIGS, key=['M'])
        @triton.jit
        def matmul_kernel(a_ptr, b_ptr, M, BLOCK_M: tl.constexpr):
            pass
        """,
    ),
    Valid(
        """
        import torch

        def softmax(x):
            if torch.version.hip:
                num_warps = 16
            else:
                num_warps = 32
            _softmax_kernel[(x.shape[0],)](x, num_warps=num_warps)

        def launch(x, spec):
            \"\"\"Launch with num_warps=32 on Hopper.\"\"\"
            print("num_warps=32")  # num_warps=32 is fastest on H100
            spec = {"num_warps": 32}
            run_benchmark(x, num_warps=32)
        """,
    ),
)
TritonNumWarps.invalid = (
    Invalid(
        """
        import triton
        import triton.language as tl

        @triton.autotune(
            configs=[
                triton.Config({'BLOCK_SIZE': 2048}, num_warps=16),
                triton.Config({'BLOCK_SIZE': 4096}, num_warps=32),
            ],
            key=['HW'],
        )
        @triton.jit
        def _fused_kernel(x_ptr, HW, BLOCK_SIZE: tl.constexpr):
            pass
        """,
        expect=("7:55-7:57",),
        message="2048 threads",
    ),
    Invalid(
        """
        import triton

        def triton_softmax(x, y):
            n_rows, n_cols = x.shape
            kernel_softmax[(n_rows,)](
                x, x.stride(0), y, y.stride(0), n_cols,
                BLOCK_SIZE=triton.next_power_of_2(n_cols),
                num_warps=32,
            )
        """,
        expect=("8:19-8:21",),
    ),
    Invalid(
        """
        from triton import Config

        NUM_WARPS = 32
        CONFIGS = [Config({'BLOCK_N': 8192}, num_warps=NUM_WARPS, num_stages=1)]
        """,
        expect=("4:48-4:57",),
    ),
    Invalid(
        """
        import triton

        def get_autotune_configs():
            return [
                triton.Config({'BLOCK_M': bm}, num_warps=num_warps)
                for bm in [64, 128]
                for num_warps in [4, 8, 32]
            ]
        """,
        expect=("7:33-7:35",),
    ),
    Invalid(
        """
        import itertools
        import triton

        configs = []
        for block, warps in itertools.product([1024, 4096], [8, 16, 32]):
            configs.append(triton.Config({'BLOCK': block}, num_warps=warps))
            configs.append(triton.Config({'BLOCK': block}, num_warps=warps, num_stages=1))
        """,
        expect=("5:61-5:63",),
    ),
    Invalid(
        """
        BLOCK_SIZE = 2048

        def rms_norm(x, w):
            num_warps = BLOCK_SIZE // 32
            _rms_norm_kernel[(x.shape[0],)](x, w, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
        """,
        expect=("5:76-5:85",),
        message="num_warps=64",
    ),
    Invalid(
        """
        import torch
        import triton

        def matmul(a, b, large: bool):
            if torch.cuda.is_available():
                _matmul_kernel[(1,)](a, b, num_warps=32 if large else 8)
        """,
        expect=("6:46-6:48",),
    ),
)
