"""ROC124 triton-num-warps."""

from __future__ import annotations

import ast

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import report_site
from rocmlint.python.scopes import own_returns
from rocmlint.python.semantic import FUNCTION_DEFS
from rocmlint.python.triton import handled_for_rocm, num_warps_above, num_warps_argument, warps_above
from rocmlint.python.values import Follow, Names
from rocmlint.rule import Invalid, Rule, Valid

# 16 warps x 64 lanes = 1024 threads, the per-block limit of AMD GPUs.
_MAX_WARPS_ON_WAVE64 = 16
# Every value a variable is assigned (`num_warps = 4`, then `num_warps = 32` for large blocks), and what a
# helper of the file returns (`BLOCK_SIZE, num_warps = calculate_settings(n)`).
_WARP_VALUES = Follow(names=Names.ALL, returns=True)


class TritonNumWarps(Rule):
    """
    ## What it does
    Flags Triton `num_warps` values above 16 (more than 1024 threads on 64-lane AMD waves) in
    `triton.Config` and kernel launches not gated for ROCm.

    Covers `triton.Config(..., num_warps=N)` (also inside `@triton.autotune(configs=[...])`) and
    launches `kernel[grid](..., num_warps=N)`. The value may be a literal, either arm of a conditional
    expression, any value a variable is assigned (`num_warps = 32` for large blocks), simple constant
    arithmetic (`BLOCK // 32` with a constant `BLOCK`), what a helper of the file returns (`BLOCK_SIZE,
    num_warps = calculate_settings(n)`; its `32` is reported, once, also when only other modules call it and it
    returns a variable named `num_warps`), or an element of the list a `for` loop or
    comprehension iterates (`for num_warps in [4, 8, 32]`; the `32` is reported). Values the linter cannot
    know (a parameter) are not flagged, nor are configs gated for ROCm: `torch.version.hip` branches, conditions that
    mention ROCm (`if IS_ROCM and w > 16: continue`) or the device's warp size (`... if w * props.warp_size <= 1024`),
    config lists passed through a pruning function consulting either (also as `prune_configs_by`), NVIDIA-only lists.

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
    trigger_pattern = num_warps_above(_MAX_WARPS_ON_WAVE64)

    def __init__(self) -> None:
        # A loop list several configs read is reported once, once actually reported (a gated use hides nothing).
        self._reported: set[ast.AST] = set()

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        argument = num_warps_argument(ctx, node)
        if argument is None:
            return
        too_many = warps_above(ctx, ctx.values.int_values(argument, _WARP_VALUES), _MAX_WARPS_ON_WAVE64)
        if not too_many or handled_for_rocm(ctx, node):
            return
        for source in too_many:
            at_literal = source.looped or _returned_by_helper(ctx, source.node, argument)
            reported = source.node if at_literal else report_site(ctx, source.node, argument)
            if reported in self._reported:
                continue
            if ctx.report(reported, _message(source.value), gate_on=(source.node, argument)):
                self._reported.add(reported)

    def visit_FunctionDef(self, node: ast.FunctionDef, ctx: PythonContext) -> None:
        """A module-level helper that returns `num_warps` to launches in other modules only (Liger-Kernel's
        `calculate_settings` in its `utils.py`): its values are reported where assigned, as a launch here would."""
        if not ctx.semantic.is_module_level(node) or ctx.references.calls_of(node):
            return
        for returned in own_returns(node):
            values = returned.value.elts if isinstance(returned.value, ast.Tuple) else [returned.value]
            for value in values:
                if not (isinstance(value, ast.Name) and value.id == "num_warps"):
                    continue
                for source in warps_above(ctx, ctx.values.int_values(value, _WARP_VALUES), _MAX_WARPS_ON_WAVE64):
                    if source.node not in self._reported:
                        if ctx.report(source.node, _message(source.value), gate_on=(value,)):
                            self._reported.add(source.node)


def _returned_by_helper(ctx: PythonContext, literal: ast.AST, argument: ast.expr) -> bool:
    """The value comes from a def the launch is not in (a helper's `return 32`): reported there, once."""
    helper = next((a for a in ctx.ancestors(literal) if isinstance(a, FUNCTION_DEFS)), None)
    return helper is not None and not ctx.semantic.is_within(argument, helper)


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
        def norm_configs():  # the device's warp size (64 on CDNA) keeps 32 warps out
            warp_size = getattr(torch.cuda.get_device_properties(0), "warp_size", 32)
            return [triton.Config({}, num_warps=w) for w in [1, 8, 32] if w * warp_size <= 1024]

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
    # Liger-style: the helper picks a ROCm-sized value itself (called here, or only by other modules), or halves
    # it in a branch every ROCm build takes before returning it.
    Valid(
        """
        import torch
        import triton
        def is_hip() -> bool:
            return torch.version.hip is not None
        def calculate_settings(n):
            BLOCK_SIZE = triton.next_power_of_2(n)
            num_warps = 4
            if BLOCK_SIZE >= 32768:
                num_warps = 32 if not is_hip() else 16
            return BLOCK_SIZE, num_warps
        def get_num_warps(n):
            num_warps = 32 if not is_hip() else 16
            return num_warps
        def halved_on_rocm(n):
            num_warps = 32 if n >= 32768 else 8
            if torch.version.hip:
                num_warps //= 2
            return num_warps
        def rms_norm(x, w):
            BLOCK_SIZE, num_warps = calculate_settings(x.shape[-1])
            _rms_norm_kernel[(x.shape[0],)](x, w, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
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
    # A helper's return value (unsloth's `calculate_settings`): reported once, where the helper returns it.
    Invalid(
        """
        import triton

        def calculate_settings(n):
            BLOCK_SIZE = triton.next_power_of_2(n)
            num_warps = 4
            if BLOCK_SIZE >= 32768:
                num_warps = 32
            elif BLOCK_SIZE >= 8192:
                num_warps = 16
            return BLOCK_SIZE, num_warps

        def warps_for(block):
            return 64 if block >= 65536 else 8

        def layer_norm(x, w):
            BLOCK_SIZE, num_warps = calculate_settings(x.shape[-1])
            _layer_norm_fwd[(x.shape[0],)](x, w, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
            _layer_norm_bwd[(x.shape[0],)](x, w, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
            _rms_norm[(x.shape[0],)](x, w, BLOCK_SIZE=BLOCK_SIZE, num_warps=warps_for(BLOCK_SIZE))
        """,
        expect=("7:21-7:23", "13:12-13:14"),
        message="num_warps=32",
    ),
    # A helper of a utilities module whose callers (the launches) are in other modules.
    Invalid(
        """
        def calculate_settings(n):
            num_warps = 32 if n >= 32768 else 8
            return n, num_warps
        """,
        expect=("2:17-2:19",),
    ),
)
