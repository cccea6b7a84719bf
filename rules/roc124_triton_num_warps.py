"""ROC124 triton-num-warps."""

from __future__ import annotations

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
# How many hops (a variable, a def's result) a config list is followed forward to where it is pruned.
_MAX_FLOW_DEPTH = 3
_VENDOR_TEST_FORMS = (cst.Name, cst.Attribute, cst.Call, cst.Comparison)


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
        too_many = [v for v in ctx.semantic.values.int_values(argument.value) if v.value > _MAX_WARPS_ON_WAVE64]
        if not too_many or _handled_for_rocm(node, ctx):
            return
        for source in too_many:
            reported = source.node if source.looped else report_site(ctx, source.node, argument.value)
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


# --- ROCm handling beyond plain gating ---------------------------------------------------------------
def _handled_for_rocm(call: cst.Call, ctx: PythonContext) -> bool:
    """A config the author already keeps from ROCm in a way plain gating cannot see."""
    return _under_rocm_aware_condition(call, ctx) or _flows_away_from_rocm(call, ctx, 0)


def _under_rocm_aware_condition(node: cst.CSTNode, ctx: PythonContext) -> bool:
    """A condition mentioning ROCm decides whether `node` runs (`if IS_ROCM and w > 16: continue`,
    `[... for w in ws if not (IS_HIP and w > 16)]`, `not IS_ROCM or small`), even if not fully."""
    return any(ctx.vendor_test(test).is_vendor_test for test in deciding_tests(ctx, node))


def _flows_away_from_rocm(expr: cst.CSTNode, ctx: PythonContext, depth: int) -> bool:
    """Whether the config list holding `expr` is pruned for ROCm or only used on NVIDIA: passed to a call
    that prunes it, read in ROCm-only code (pruning it), or every read of it (every call of the def
    returning it) gated away from ROCm or flowing into pruning."""
    destination = ctx.semantic.values.destination(expr) if depth <= _MAX_FLOW_DEPTH else None
    if destination is None:
        return False
    if destination.call is not None and destination.argument is not None:
        return _call_prunes(destination.call, destination.argument, ctx)
    if any(ctx.is_nvidia_gated(read) for read in destination.reads):
        return True
    uses = destination.reads or destination.calls
    return bool(uses) and all(ctx.is_rocm_gated(use) or _flows_away_from_rocm(use, ctx, depth + 1) for use in uses)


def _call_prunes(call: cst.Call, argument: cst.Arg, ctx: PythonContext) -> bool:
    """The config list is an argument of an autotuner that prunes for ROCm, or of a local function that
    consults ROCm (`config_prune(configs)`)."""
    if ctx.qualified_name(call.func) in _AUTOTUNERS:
        return _prune_consults_rocm(call, ctx)
    return argument.keyword is None and _consults_rocm(call.func, ctx)


def _prune_consults_rocm(autotune: cst.Call, ctx: PythonContext) -> bool:
    prune = ctx.semantic.keyword(autotune, "prune_configs_by")
    if prune is None:
        return False
    return any(_consults_rocm(function, ctx) for function in ctx.semantic.dict_entries(prune.value).values())


def _consults_rocm(function: cst.BaseExpression, ctx: PythonContext) -> bool:
    """Whether a local function (or lambda) reads a ROCm test or the device warp size."""
    definition = function if isinstance(function, cst.Lambda) else ctx.semantic.local_function(function)
    if definition is None:
        return False
    for node in ctx.semantic.descendants(definition.body):
        if isinstance(node, (cst.Name, cst.Attribute)) and last_name(node) == "warp_size":
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
        'def launch(kernel, x, grid):\n'
        '    num_warps = 32 if x.device.type == "xpu" else 8\n'
        '    kernel[grid](x, num_warps=num_warps)\n'
    ),
    Valid(
        "import triton\n"
        "\n"
        "@triton.autotune(\n"
        "    configs=[\n"
        '        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),\n'
        '        triton.Config({"BLOCK_SIZE": 2048}, num_warps=8),\n'
        '        triton.Config({"BLOCK_SIZE": 4096}, num_warps=16),\n'
        "    ],\n"
        '    key=["n_elements"],\n'
        ")\n"
        "@triton.jit\n"
        "def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):\n"
        "    pass\n"
    ),
    # Liger-style: a ROCm-aware conditional expression and a parameter the linter cannot know.
    Valid(
        "import torch\n"
        "\n"
        "def is_hip() -> bool:\n"
        "    return torch.version.hip is not None\n"
        "\n"
        "num_warps = 32  # module default for the benchmark script\n"
        "\n"
        "def cross_entropy(logits, target, BLOCK_SIZE, num_warps=4):\n"
        "    _cross_entropy_kernel[(logits.shape[0],)](\n"
        "        logits, target, BLOCK_SIZE=BLOCK_SIZE, num_warps=32 if not is_hip() else 16,\n"
        "    )\n"
        "    _softmax_kernel[(logits.shape[0],)](logits, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)\n"
    ),
    # mamba-style: the config list goes through a pruning function that reads the warp size on ROCm.
    Valid(
        "import torch\n"
        "import triton\n"
        "\n"
        "def config_prune(configs):\n"
        "    warp_size = 64 if torch.version.hip else 32\n"
        "    max_num_warps = 1024 // warp_size\n"
        "    return [config for config in configs if config.num_warps <= max_num_warps]\n"
        "\n"
        "configs_autotune = [\n"
        "    triton.Config({}, num_warps=1),\n"
        "    triton.Config({}, num_warps=8),\n"
        "    triton.Config({}, num_warps=16),\n"
        "    triton.Config({}, num_warps=32),\n"
        "]\n"
        "pruned_configs_autotune = config_prune(configs_autotune)\n"
        "\n"
        '@triton.autotune(configs=pruned_configs_autotune, key=["N"])\n'
        "@triton.jit\n"
        "def _layer_norm_fwd_1pass_kernel(X, Y, N, BLOCK_N: tl.constexpr):\n"
        "    pass\n"
    ),
    Valid(
        "import torch\n"
        "import triton\n"
        "\n"
        "IS_ROCM = torch.version.hip is not None\n"
        "\n"
        "def get_configs():\n"
        "    configs = []\n"
        "    for block in [1024, 2048, 4096]:\n"
        "        for num_warps in [4, 8, 16, 32]:\n"
        "            if IS_ROCM and num_warps > 16:\n"
        "                continue\n"
        '            configs.append(triton.Config({"BLOCK": block}, num_warps=num_warps))\n'
        "    return configs\n"
    ),
    Valid(
        "import torch\n"
        "import triton\n"
        "\n"
        "CUDA_CONFIGS = [triton.Config({'BLOCK_M': 128}, num_warps=w) for w in (8, 16, 32)]\n"
        "HIP_CONFIGS = [triton.Config({'BLOCK_M': 128, 'waves_per_eu': 2}, num_warps=w) for w in (4, 8)]\n"
        "\n"
        "@triton.autotune(configs=HIP_CONFIGS if torch.version.hip else CUDA_CONFIGS, key=['M'])\n"
        "@triton.jit\n"
        "def matmul_kernel(a_ptr, b_ptr, M, BLOCK_M: tl.constexpr):\n"
        "    pass\n"
    ),
    Valid(
        "import torch\n"
        "\n"
        "def softmax(x):\n"
        "    if torch.version.hip:\n"
        "        num_warps = 16\n"
        "    else:\n"
        "        num_warps = 32\n"
        "    _softmax_kernel[(x.shape[0],)](x, num_warps=num_warps)\n"
        "\n"
        "def launch(x, spec):\n"
        '    """Launch with num_warps=32 on Hopper."""\n'
        '    print("num_warps=32")  # num_warps=32 is fastest on H100\n'
        '    spec = {"num_warps": 32}\n'
        "    run_benchmark(x, num_warps=32)\n"
    ),
)
TritonNumWarps.invalid = (
    Invalid(
        "import triton\n"
        "import triton.language as tl\n"
        "\n"
        "@triton.autotune(\n"
        "    configs=[\n"
        "        triton.Config({'BLOCK_SIZE': 2048}, num_warps=16),\n"
        "        triton.Config({'BLOCK_SIZE': 4096}, num_warps=32),\n"
        "    ],\n"
        "    key=['HW'],\n"
        ")\n"
        "@triton.jit\n"
        "def _fused_kernel(x_ptr, HW, BLOCK_SIZE: tl.constexpr):\n"
        "    pass\n",
        line=7,
        message="2048 threads",
    ),
    Invalid(
        "import triton\n"
        "\n"
        "def triton_softmax(x, y):\n"
        "    n_rows, n_cols = x.shape\n"
        "    kernel_softmax[(n_rows,)](\n"
        "        x, x.stride(0), y, y.stride(0), n_cols,\n"
        "        BLOCK_SIZE=triton.next_power_of_2(n_cols),\n"
        "        num_warps=32,\n"
        "    )\n",
        line=8,
    ),
    Invalid(
        "from triton import Config\n"
        "\n"
        "NUM_WARPS = 32\n"
        "CONFIGS = [Config({'BLOCK_N': 8192}, num_warps=NUM_WARPS, num_stages=1)]\n",
        line=4,
    ),
    Invalid(
        "import triton\n"
        "\n"
        "def get_autotune_configs():\n"
        "    return [\n"
        "        triton.Config({'BLOCK_M': bm}, num_warps=num_warps)\n"
        "        for bm in [64, 128]\n"
        "        for num_warps in [4, 8, 32]\n"
        "    ]\n",
        line=7,
    ),
    Invalid(
        "import itertools\n"
        "import triton\n"
        "\n"
        "configs = []\n"
        "for block, warps in itertools.product([1024, 4096], [8, 16, 32]):\n"
        "    configs.append(triton.Config({'BLOCK': block}, num_warps=warps))\n"
        "    configs.append(triton.Config({'BLOCK': block}, num_warps=warps, num_stages=1))\n",
        line=5,
    ),
    Invalid(
        "BLOCK_SIZE = 2048\n"
        "\n"
        "def rms_norm(x, w):\n"
        "    num_warps = BLOCK_SIZE // 32\n"
        "    _rms_norm_kernel[(x.shape[0],)](x, w, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)\n",
        line=5,
        message="num_warps=64",
    ),
    Invalid(
        "import torch\n"
        "import triton\n"
        "\n"
        "def matmul(a, b, large: bool):\n"
        "    if torch.cuda.is_available():\n"
        "        _matmul_kernel[(1,)](a, b, num_warps=32 if large else 8)\n",
        line=6,
    ),
)
