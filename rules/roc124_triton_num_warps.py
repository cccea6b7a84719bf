"""ROC124 triton-num-warps."""

from __future__ import annotations

import ast

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.conditions import deciding_tests
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import last_name, report_site
from rocmlint.python.semantic import MAX_HOPS
from rocmlint.python.values import Argument
from rocmlint.rule import Invalid, Rule, Valid

# 16 warps x 64 lanes = 1024 threads, the per-block limit of AMD GPUs.
_MAX_WARPS_ON_WAVE64 = 16
_CONFIG_CLASSES = frozenset(
    {"triton.Config", "triton.runtime.Config", "triton.runtime.autotuner.Config", "helion.Config"}
)
_AUTOTUNERS = frozenset({"triton.autotune", "triton.runtime.autotune", "triton.runtime.autotuner.autotune"})
_VENDOR_TEST_FORMS = (ast.Name, ast.Attribute, ast.Call, ast.Compare)


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
    applies_to_tests = True  # a test config with more than 16 warps fails to launch on wave64 GPUs
    fix_availability = FixAvailability.NONE
    triggers = (b"num_warps",)

    def __init__(self) -> None:
        # Several configs may read one loop list: its literal is reported once (only once actually
        # reported, so a gated first use does not hide an ungated later one).
        self._reported: set[ast.AST] = set()

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        argument = _num_warps_argument(node, ctx)
        if argument is None:
            return
        too_many = [v for v in ctx.values.int_values(argument) if v.value > _MAX_WARPS_ON_WAVE64]
        if not too_many or _handled_for_rocm(node, ctx):
            return
        for source in too_many:
            reported = source.node if source.looped else report_site(ctx, source.node, argument)
            if reported in self._reported:
                continue
            if ctx.report(reported, _message(source.value), gate_on=(source.node, argument)):
                self._reported.add(reported)


def _num_warps_argument(call: ast.Call, ctx: PythonContext) -> ast.expr | None:
    """The `num_warps` value of a `triton.Config(...)` or of a `kernel[grid](...)` launch."""
    keyword = ctx.semantic.keyword(call, "num_warps")
    if isinstance(call.func, ast.Subscript):
        return keyword.value if keyword is not None else None
    if last_name(call.func) != "Config" or ctx.qualified_name(call.func) not in _CONFIG_CLASSES:
        return None
    return keyword.value if keyword is not None else ctx.semantic.positional(call, 1)


# --- ROCm handling beyond plain gating ---------------------------------------------------------------
def _handled_for_rocm(call: ast.Call, ctx: PythonContext) -> bool:
    """A config the author already keeps from ROCm in a way plain gating cannot see."""
    return _under_rocm_aware_condition(call, ctx) or _flows_away_from_rocm(call, ctx, 0)


def _under_rocm_aware_condition(node: ast.AST, ctx: PythonContext) -> bool:
    """A condition mentioning ROCm decides whether `node` runs (`if IS_ROCM and w > 16: continue`,
    `[... for w in ws if not (IS_HIP and w > 16)]`, `not IS_ROCM or small`), even if not fully."""
    return any(ctx.vendor_test(test).is_vendor_test for test in deciding_tests(ctx, node))


def _flows_away_from_rocm(expr: ast.AST, ctx: PythonContext, depth: int) -> bool:
    """Whether the config list holding `expr` is pruned for ROCm or only used on NVIDIA: passed to a call
    that prunes it, read in ROCm-only code (pruning it), or every read of it (every call of the def
    returning it) gated away from ROCm or flowing into pruning."""
    destination = ctx.values.destination(expr) if depth <= MAX_HOPS else None
    if destination is None:
        return False
    if destination.call is not None and destination.argument is not None:
        return _call_prunes(destination.call, destination.argument, ctx)
    if any(ctx.is_nvidia_gated(read) for read in destination.reads):
        return True
    uses = destination.reads or destination.calls
    return bool(uses) and all(ctx.is_rocm_gated(use) or _flows_away_from_rocm(use, ctx, depth + 1) for use in uses)


def _call_prunes(call: ast.Call, argument: Argument, ctx: PythonContext) -> bool:
    """The config list is an argument of an autotuner that prunes for ROCm, or an argument not passed by
    name to a local function that consults ROCm (`config_prune(configs)`)."""
    if ctx.qualified_name(call.func) in _AUTOTUNERS:
        return _prune_consults_rocm(call, ctx)
    by_name = isinstance(argument, ast.keyword) and argument.arg is not None
    return not by_name and _consults_rocm(call.func, ctx)


def _prune_consults_rocm(autotune: ast.Call, ctx: PythonContext) -> bool:
    prune = ctx.semantic.keyword(autotune, "prune_configs_by")
    if prune is None:
        return False
    return any(_consults_rocm(function, ctx) for function in ctx.semantic.dict_entries(prune.value).values())


def _consults_rocm(function: ast.expr, ctx: PythonContext) -> bool:
    """Whether a local function (or lambda) reads a ROCm test or the device warp size in its body."""
    if isinstance(function, ast.Lambda):
        return _reads_rocm_test(function.body, ctx)
    definition = ctx.semantic.local_function(function)
    if definition is None:
        return False
    return any(_reads_rocm_test(statement, ctx) for statement in definition.body)


def _reads_rocm_test(root: ast.AST, ctx: PythonContext) -> bool:
    for node in ctx.semantic.descendants(root):
        if isinstance(node, (ast.Name, ast.Attribute)) and last_name(node) == "warp_size":
            return True
        if isinstance(node, _VENDOR_TEST_FORMS) and ctx.vendor_test(node).is_vendor_test:
            return True
    return False


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
