"""ROC106 inductor-rocm-config."""

from __future__ import annotations

import ast

from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.python.fixes import choose_on_rocm, gate_statement, rocm_guard
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import environ_writes, in_registered_benchmark, is_truthy_constant, last_name, rocm_arm
from rocmlint.python.lexical import setting_key_pattern
from rocmlint.python.settings import Setting, compile_options, config_assignments, patch_settings
from rocmlint.rule import Invalid, Rule, Valid

_INDUCTOR_CONFIG = "torch._inductor.config"
_CUDAGRAPHS_WHY = "Inductor CUDA graphs are slow or hang on ROCm and cudagraph trees silently slowed training on MI300X"
_AUTOTUNE_WHY = "max-autotune benchmarks GEMM templates at compile time, which can take hours on ROCm"
_PLANNING_WHY = "Inductor's experimental static memory planning fails tests on ROCm"
# Config key (as `config.patch`/`torch.compile(options=...)` spell it) -> why it hurts on ROCm.
_RISKY_SETTINGS = {
    "triton.cudagraphs": _CUDAGRAPHS_WHY,
    "triton.cudagraph_trees": _CUDAGRAPHS_WHY,
    "max_autotune": _AUTOTUNE_WHY,
    "memory_planning": _PLANNING_WHY,
}
_RISKY_ATTRIBUTES = frozenset(key.rsplit(".", 1)[-1] for key in _RISKY_SETTINGS)
# Environment variables Inductor reads into the same settings (enabled by the value "1").
_RISKY_ENVIRONMENT = {
    "TORCHINDUCTOR_MAX_AUTOTUNE": "max_autotune",
    "TORCHINDUCTOR_CUDAGRAPHS": "triton.cudagraphs",
}
# The prefilter: a risky key set as an identifier (`config.max_autotune = ...`, `patch(memory_planning=...)`)
# or written as a whole string key (`"triton.cudagraphs"`, `"TORCHINDUCTOR_MAX_AUTOTUNE"`), not reads or prose.
_TRIGGER_PATTERN = setting_key_pattern(
    ("max_autotune", "memory_planning", "TORCHINDUCTOR_MAX_AUTOTUNE", "TORCHINDUCTOR_CUDAGRAPHS"),
    ("cudagraph_trees", "cudagraphs"),  # `triton.cudagraph_trees`, `triton.cudagraphs`
)


class InductorRocmConfig(Rule):
    """
    ## What it does
    Flags Inductor settings that are risky on ROCm when they are turned on without a ROCm gate:
    `torch._inductor.config.triton.cudagraphs`, `triton.cudagraph_trees`, `memory_planning` and
    `max_autotune` assigned `True` (through any import alias of `torch._inductor.config`), the same
    keys set to `True` in `torch._inductor.config.patch(...)` or `torch.compile(options={...})`,
    and `TORCHINDUCTOR_MAX_AUTOTUNE` / `TORCHINDUCTOR_CUDAGRAPHS` set to `"1"` in `os.environ`.
    Setting them to `False` is the fix and never reported; `torch.compile(mode="max-autotune")` is
    not this rule.

    Test files are not checked: tests turn these knobs on (`config.patch(max_autotune=True)`) to exercise
    the Inductor feature they test. Nor are the defs a benchmark harness registers (`@register_benchmark()`):
    a benchmark that turns a knob on measures it, on ROCm too.

    ## Why is this bad on ROCm?
    These knobs were tuned on NVIDIA. CUDA-graph capture through Inductor is slow or hangs on ROCm
    (the same mechanism as `mode="reduce-overhead"`, ROC101), and Inductor's `cudagraph_trees` has
    no HIP guard: on MI300X with ROCm 7.0 it made training converge markedly slower than eager mode
    (pytorch/pytorch#187715). `max_autotune` benchmarks Triton and Composable Kernel GEMM templates
    at compile time, which on ROCm can take hours before the first step (pytorch/pytorch#143687).
    `memory_planning` is an experimental, off-by-default pass whose tests fail on ROCm CI
    (pytorch/pytorch#180122).

    ## In code written for ROCm
    Not flagged in code only ROCm runs, nor anywhere in a project written for AMD (its C/C++ is AMD's, its build
    HIP-only, or its requirements need ROCm): its authors turn the knob on for AMD GPUs, and measure what it costs.

    ## Example
    ```python
    import torch._inductor.config as inductor_config

    inductor_config.triton.cudagraphs = True
    inductor_config.max_autotune = True
    ```

    ## Fix
    ```python
    _IS_ROCM = getattr(torch.version, "hip", None) is not None  # added once, after the imports
    if not _IS_ROCM:
        inductor_config.triton.cudagraphs = True
    if not _IS_ROCM:
        inductor_config.max_autotune = True
    model = torch.compile(model, options={"max_autotune": False if _IS_ROCM else True})
    ```

    ## Fix safety
    Safe: the setting is gated on `not _IS_ROCM`; on NVIDIA the original statement or value is kept
    verbatim. No fix for an `os.environ.update(...)` that also sets other variables.
    """

    code = "ROC106"
    name = "inductor-rocm-config"
    severity = Severity.WARNING
    applies_to_tests = False
    fix_availability = FixAvailability.SAFE
    triggers = tuple(sorted(name.encode() for name in (*_RISKY_ATTRIBUTES, *_RISKY_ENVIRONMENT)))
    trigger_pattern = _TRIGGER_PATTERN

    def visit_Assign(self, node: ast.Assign, ctx: PythonContext) -> None:
        for setting in config_assignments(ctx, node, _INDUCTOR_CONFIG, _RISKY_ATTRIBUTES):
            _check_setting(setting, ctx)
        _check_environment(node, ctx)

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        method = last_name(node.func)
        settings: list[Setting] = []
        if method == "patch" and ctx.qualified_name(node.func) == f"{_INDUCTOR_CONFIG}.patch":
            settings = patch_settings(ctx, node)
        elif method in ("compile", "partial"):
            settings = compile_options(ctx, node)
        elif method in ("setdefault", "putenv", "update"):
            _check_environment(node, ctx)
        for setting in settings:
            _check_setting(setting, ctx)


def _check_setting(setting: Setting, ctx: PythonContext) -> None:
    why = _RISKY_SETTINGS.get(setting.key)
    if why is None or _chosen_deliberately(setting.site, ctx):
        return
    arm = rocm_arm(ctx, setting.value, is_truthy_constant)
    if arm is not None:
        message, fix = _message(f"{setting.key}=True", why), _setting_fix(setting.site, arm, ctx)
        ctx.report(setting.site, message, gate_on=(arm,), fix=fix)


def _check_environment(node: ast.Assign | ast.Call, ctx: PythonContext) -> None:
    """`os.environ["TORCHINDUCTOR_MAX_AUTOTUNE"] = "1"` and the other ways of writing it."""
    for write in environ_writes(ctx, node):
        setting = _RISKY_ENVIRONMENT.get(write.key or "")
        if setting is None or _chosen_deliberately(write.site, ctx):
            continue
        arm = rocm_arm(ctx, write.value, lambda a: ctx.string_value(a) == "1")
        if arm is not None:
            # Wrapping `os.environ.update(...)` would drop its other variables on ROCm: no fix there.
            updates = isinstance(node, ast.Call) and last_name(node.func) == "update"
            fix = None if updates else gate_statement(ctx, write.site, _FIX)
            ctx.report(write.site, _message(f"{write.key}=1", _RISKY_SETTINGS[setting]), gate_on=(arm,), fix=fix)


_FIX = "Enable it only when not on ROCm"


def _chosen_deliberately(site: ast.AST, ctx: PythonContext) -> bool:
    """A ROCm-only branch, AMD's own project, or a registered benchmark measuring the knob."""
    return ctx.is_nvidia_gated(site) or bool(ctx.project_written_for_amd) or in_registered_benchmark(ctx, site)


def _setting_fix(reported: ast.AST, arm: ast.expr, ctx: PythonContext) -> Fix | None:
    """An assignment to the config attribute is gated as a statement; a `patch(...)`/`options=` entry
    keeps its place and gets `False if IS_ROCM else <value>` (the key's default is False)."""
    if ctx.semantic.is_store(reported):
        return gate_statement(ctx, reported, _FIX)
    guard = rocm_guard(ctx, arm)
    if guard is None:
        return None
    return ctx.fix(_FIX, choose_on_rocm(ctx, arm, "False", guard.name), *guard.edits)


def _message(setting: str, why: str) -> str:
    return f"{setting}: {why}; enable it only when torch.version.hip is None"


InductorRocmConfig.valid = (
    Valid(
        """
        import torch
        import torch._inductor.config as inductor_config

        if torch.version.hip:
            inductor_config.triton.cudagraphs = False
        else:
            inductor_config.triton.cudagraphs = True
            inductor_config.max_autotune = True
        """,
    ),
    Valid(
        """
        import torch
        IS_ROCM = torch.version.hip is not None
        compile_options = {
            "max_autotune": not IS_ROCM,
            "triton.cudagraphs": False if IS_ROCM else True,
        }
        model = torch.compile(model, options=compile_options)
        """,
    ),
    Valid(
        """
        import os
        import torch

        def enable_autotune():
            if torch.version.hip is not None:
                return
            os.environ["TORCHINDUCTOR_MAX_AUTOTUNE"] = "1"
        """,
    ),
    Valid(
        """
        import torch
        from torch._inductor import config

        def compiled_step(fn):
            if torch.version.cuda is None:
                return torch.compile(fn)
            with config.patch(max_autotune=True, memory_planning=True):
                return torch.compile(fn)
        """,
    ),
    # Reading, logging and documenting the settings; a different config object with the same attribute.
    Valid(
        """
        import logging
        import torch._inductor.config as inductor_config
        def describe():
            \"\"\"Reports whether max_autotune and triton.cudagraphs are on.\"\"\"
            logging.info("max_autotune=%s", inductor_config.max_autotune)
            return {"max_autotune": inductor_config.max_autotune}
        class TrainConfig:
            max_autotune = True
        cfg = TrainConfig()
        cfg.max_autotune = True
        """,
    ),
    # Turning the settings off is the fix; `mode="max-autotune"` is ROC101's territory, not this rule; lookalikes the
    # trigger pattern skips (backend and mode names, longer names, reads, comparisons); a registered benchmark
    # measures the knob it turns on.
    Valid(
        """
        import os
        import torch
        import torch._inductor.config as inductor_config
        inductor_config.triton.cudagraphs = False
        inductor_config.memory_planning = False
        os.environ["TORCHINDUCTOR_MAX_AUTOTUNE"] = "0"
        model = torch.compile(model, mode="max-autotune")
        model = torch.compile(model, backend="cudagraphs")
        model = torch.compile(model, mode="max-autotune-no-cudagraphs")
        BENCHMARKS = {"inductor_no_cudagraphs": "--disable-cudagraphs"}
        inductor_config.max_autotune_gemm_backends = "TRITON"
        use_cudagraphs = True  # Dynamo's cudagraphs backend
        if inductor_config.max_autotune == True or inductor_config.triton.cudagraphs:
            print("max_autotune is on")
        class Operator:
            @register_benchmark()
            def pt2_triton_matmul(self, a, b):
                with inductor_config.patch(max_autotune=True, max_autotune_gemm_backends="TRITON"):
                    compiled = torch.compile(lambda a, b: a.matmul(b))
                return lambda: compiled(a, b)
        """,
    ),
)
InductorRocmConfig.invalid = (
    Invalid(
        """
        import torch._inductor.config as inductor_config

        inductor_config.triton.cudagraphs = True
        inductor_config.triton.cudagraph_trees = True
        """,
        expect=("3:1-3:34", "4:1-4:39"),
        message="triton.cudagraphs=True",
        fixed="""
        import torch._inductor.config as inductor_config
        import torch
        _IS_ROCM = getattr(torch.version, "hip", None) is not None

        if not _IS_ROCM:
            inductor_config.triton.cudagraphs = True
        if not _IS_ROCM:
            inductor_config.triton.cudagraph_trees = True
        """,
    ),
    Invalid(
        """
        import torch

        torch._inductor.config.coordinate_descent_tuning = True
        torch._inductor.config.max_autotune = True
        """,
        expect=("4:1-4:36",),
        message="max_autotune=True",
    ),
    Invalid(
        """
        import torch
        torch_compile_options = dict(
            epilogue_fusion=True,
            max_autotune=False,
            memory_planning=True,
        )
        model = torch.compile(model, fullgraph=True, options=torch_compile_options)
        """,
        expect=("7:46-7:75",),
        message="memory_planning=True",
    ),
    Invalid(
        """
        import torch
        model = torch.compile(model, options={"triton.cudagraphs": True, "shape_padding": True})
        """,
        expect=("2:60-2:64",),
        fixed="""
        import torch
        _IS_ROCM = getattr(torch.version, "hip", None) is not None
        model = torch.compile(model, options={"triton.cudagraphs": False if _IS_ROCM else True, "shape_padding": True})
        """,
    ),
    Invalid(
        """
        from torch._inductor import config

        @config.patch({"max_autotune": True, "max_autotune_gemm_backends": "TRITON"})
        def test_mm_autotune(self):
            pass
        """,
        expect=("3:32-3:36",),
    ),
    Invalid(
        """
        import os

        def main(args):
            if torch.cuda.is_available():
                os.environ.setdefault("TORCHINDUCTOR_MAX_AUTOTUNE", "1")
        """,
        expect=("5:61-5:64",),
        message="TORCHINDUCTOR_MAX_AUTOTUNE=1",
    ),
    # Odd spellings of the key the trigger pattern must still match: implicit concatenation across a
    # comment with a prefix, an escape spelling `.`, a comment before a keyword's `=`, a continuation.
    Invalid(
        """
        import torch
        model = torch.compile(model, options={
            "triton."  # CUDA graphs
            r"cudagraphs": True,
        })
        """,
        expect=("4:20-4:24",),
        message="triton.cudagraphs=True",
    ),
    Invalid(
        r"""
        import torch
        model = torch.compile(model, options={"triton\x2ecudagraph_trees": 1})
        """,
        expect=("2:68-2:69",),
        message="triton.cudagraph_trees=True",
    ),
    Invalid(
        """
        from torch._inductor import config

        @config.patch(
            memory_planning  # static planning
            =True,
        )
        def test_planned(self):
            pass
        """,
        expect=("4:5-5:10",),
        message="memory_planning=True",
    ),
    Invalid(
        r"""
        import torch._inductor.config as inductor_config

        (inductor_config.triton.cudagraphs) = False
        inductor_config.max_autotune \
            = True
        """,
        expect=("4:1-4:29",),
        message="max_autotune=True",
    ),
    Invalid(
        r"""
        from torch._inductor import config

        KEY = "max_autotune\
        "

        def tuned(fn):
            with config.patch(KEY, True):
                return fn()
        """,
        expect=("7:28-7:32",),
    ),
    Invalid(
        """
        import os

        os.environ.update(TORCHINDUCTOR_CUDAGRAPHS="1")
        """,
        expect=("3:19-3:47",),
        message="TORCHINDUCTOR_CUDAGRAPHS=1",
        no_fix=True,
    ),
)
