"""ROC113 capability-compare."""

from __future__ import annotations

import ast

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.capability import arch_test, harmless_on_rocm, helper_test
from rocmlint.python.conditions import whole_condition
from rocmlint.python.fixes import gate_condition
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import last_name
from rocmlint.python.lexical import value_word_pattern
from rocmlint.rule import Invalid, Rule, Valid

# Where the rule could report or read: each read and helper named in the call or the import or assignment aliasing
# it; a helper not under an attribute (`.return_value`), a read as a value or under `.major`/`.minor`/`.to_int()`.
_HELPER_PATTERN = value_word_pattern(r"has_device_capability|is_device_capability(?:_family)?|has_cuda_capability")
_READ_PATTERN = value_word_pattern(
    "get_device_capability|get_device_properties", after_call=True, attributes=("major", "minor", "to_int")
)
_FIX = "Take the NVIDIA path only when not on ROCm: `(not IS_ROCM) and (...)`"
_COMPARISON_MESSAGE = (
    "ROCm reports the gfx IP version as the CUDA compute capability (MI250 is 9.0, MI300X 9.4), so this "
    "NVIDIA architecture check also passes on AMD GPUs; guard it with `not torch.version.hip` and pick the "
    "ROCm path from `gcnArchName`"
)
_LOOKUP_MESSAGE = (
    "ROCm reports the gfx IP version as the CUDA compute capability, so this table keyed by NVIDIA architecture "
    'gives AMD GPUs an NVIDIA entry (MI250 is 9.0: "sm90"); look up ROCm GPUs by `gcnArchName` instead'
)
_HELPER_MESSAGE = (
    "`{}` compares the CUDA compute capability, which ROCm reports as the gfx IP version "
    "(MI300X is 9.4), so this NVIDIA architecture check also passes on AMD GPUs; conjoin it with an "
    "NVIDIA-only test (`current_platform.is_cuda()`, `not torch.version.hip`)"
)


class CapabilityCompare(Rule):
    """
    ## What it does
    Flags tests of the CUDA compute capability against NVIDIA architectures that are not gated for ROCm:
    `torch.cuda.get_device_capability()` compared with a tuple, its `[0]`/`[1]`, names unpacked from it (`major >= 8`),
    `torch.cuda.get_device_properties(d).major`/`.minor`, `sm = major * 10 + minor` then `sm >= 80`, the capability
    kept on `self`, returned by a helper of the file, turned into text (`f"sm{major}{minor}" == "sm90"`, `"sm_%d%d" %
    cap in ("sm_90", "sm_100")`) or used as the key of a table of architectures (`KERNELS.get(f"sm{major}{minor}")`);
    and capability helpers (vLLM's `current_platform.has_device_capability(89)`, torchtitan's `has_cuda_capability`).

    Not flagged: printing or storing the capability, a test only one vendor runs, a value nothing reads, a test or-ed
    with a ROCm test, a helper false on ROCm (`return torch.version.hip is None and ...`), two capabilities compared,
    tables filled at run time, thresholds below major 8 (every GPU ROCm supports reports 9 or more); an `if` on equality
    with archs no AMD GPU met reports (`sm == 80`, `cap in [(8, 9), (12, 0)]` where only CDNA's 9.x is met, also
    returned by a private def only `if`s test: AMD takes the other GPUs' branch; a flag `is_sm75 = cap == (7, 5)` is
    still reported, and so is `== (9, 0)`, MI250's number); a test of archs above 9.5 whose value on every AMD GPU met
    is Turing's (`!= (10, 0)`, `major >= 10`, `< (10, 0)` on CDNA's 9.0-9.5; a project naming an RDNA target such as
    `gfx1100`, or whose `target-archs` does, meets RDNA's 10.x-12.x outside its tests too); a skip of every AMD GPU
    (`major >= 9`) or of a test that stops on ROCm anyway, but not `skipif(cap != (9, 0))` (runs on MI250); a def
    returning only floats by arch (a speed prior: `if major >= 9: return 5.0`); an early return of an effect-free probe
    that answers False on ROCm whatever the test picks (it then imports an NVIDIA-only package); `major >= 8` only
    picking bf16 (or adding only bf16/fp16 to tried dtypes), an SDPA backend, FA2 (or a flag or def named so) or TF32,
    unless a test asserts what it picks (`if SUPPORTS_FLASH: expected = FLASH`: MI100 and RDNA lack flash SDPA).
    `check --verbose` names the reading that left a test out.

    ## Why is this bad on ROCm?
    HIP reports the gfx IP version as the "compute capability": MI250 (gfx90a) is (9, 0), MI300X (gfx942) (9, 4), MI355X
    (gfx950) (9, 5), RDNA3 (11, x). Checks meant as "Ampere or newer" (`>= (8, 0)`), "native FP8" (`>= (8, 9)`) or
    "Hopper" (`major >= 9`) pass on AMD GPUs and select NVIDIA-only paths: FlashAttention 3 on gfx950
    (pytorch/torchtitan#4778), an SBO guard on MI355X (sgl-project/sglang#28486), FP8 kernels on MI250, which has no FP8
    (huggingface/trl#5917, pytorch/ao#3995, vLLM RFC #40620; ROCm GPU specs table).

    ## In code written for ROCm
    Not flagged in code only ROCm runs (gfx versions compared on purpose), nor a test naming only versions no NVIDIA GPU
    reports (`< (9, 5)`, `major == 9 and minor == 5`: NVIDIA's major 9 is Hopper's 9.0 alone). Elsewhere in a project
    written for AMD a test of NVIDIA archs still reads the gfx version (`major >= 8`), also behind `arch == "ampere"`.

    ## Example
    ```python
    if torch.cuda.get_device_capability() >= (9, 0):
        attention = flash_attn_3
    ```

    ## Fix
    ```python
    _IS_ROCM = getattr(torch.version, "hip", None) is not None  # added once, after the imports
    if (not _IS_ROCM) and (torch.cuda.get_device_capability() >= (9, 0)):
        attention = flash_attn_3
    ```
    The whole `and`/`or` condition is gated (`(not _IS_ROCM) and (major > 8 or minor >= 9)`); an `assert` gets no fix
    (it would always fail on ROCm). On ROCm choose the feature from the gfx architecture
    (`torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]`, vLLM's `on_mi3xx()`).

    ## Fix safety
    Safe: NVIDIA keeps the comparison verbatim (`_IS_ROCM` is false); ROCm takes the fallback (maybe a gfx path)."""

    code = "ROC113"
    name = "capability-compare"
    severity = Severity.ERROR
    applies_to_tests = True  # capability-based skips let NVIDIA-only tests run on MI300
    fix_availability = FixAvailability.SAFE
    triggers = (b"device_capability", b"get_device_properties", b"cuda_capability")
    trigger_pattern = f"{_HELPER_PATTERN}|{_READ_PATTERN}"

    def __init__(self) -> None:
        self._reported_conditions: set[ast.AST] = set()

    def _check(self, node: ast.Compare | ast.Subscript | ast.Call, ctx: PythonContext) -> None:
        """One diagnostic per condition: `major > 8 or (major == 8 and minor >= 9)` is one check."""
        test = arch_test(ctx, node)
        if test is None or harmless_on_rocm(ctx, node, test.sources):
            return
        condition = whole_condition(ctx, node)
        if condition in self._reported_conditions:
            return
        self._reported_conditions.add(condition)
        if test.lookup:
            ctx.report(node, _LOOKUP_MESSAGE, gate_on=test.sources)
            return
        ctx.report(node, _COMPARISON_MESSAGE, gate_on=test.sources, fix=lambda: gate_condition(ctx, condition, _FIX))

    visit_Compare = visit_Subscript = _check

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        if last_name(node.func) == "get":
            self._check(node, ctx)
            return
        helper = helper_test(ctx, node)
        if helper is not None:
            ctx.report(
                node, _HELPER_MESSAGE.format(helper), fix=lambda: gate_condition(ctx, whole_condition(ctx, node), _FIX)
            )


CapabilityCompare.valid = (
    Valid(
        """
        import cutlass, torch
        def validate(x):
            if torch.cuda.get_device_capability(x.device) != (9, 0):
                raise RuntimeError("this CuTe DSL kernel needs an sm90 GPU")
        """,
    ),
    # Both branches of an is-ROCm test (on ROCm, gfx versions compared on purpose); a capability read on NVIDIA only;
    # an IS_ROCM alias conjoined with `not`, a conditional expression, or-ed (true on ROCm whatever the test says).
    Valid(
        """
        import logging, torch
        if torch.version.hip:
            use_fa3 = torch.cuda.get_device_capability()[0] >= 12
        else:
            use_fa3 = torch.cuda.get_device_capability() >= (9, 0)
        cap = torch.cuda.get_device_capability() if torch.version.cuda else (0, 0)
        if cap >= (8, 0):
            dtype = torch.bfloat16
        CUDA_VERSION = tuple(map(int, torch.version.cuda.split("."))) if torch.version.cuda else (0, 0)
        use_fa3 = torch.cuda.get_device_capability()[0] >= 8 and CUDA_VERSION >= (12, 3)  # (0, 0) on ROCm
        IS_ROCM = torch.version.hip is not None
        if not IS_ROCM and torch.cuda.get_device_capability()[0] >= 8:
            torch.backends.cuda.matmul.allow_tf32 = True
        impl = "triton" if IS_ROCM else ("fa3" if torch.cuda.get_device_capability()[0] >= 9 else "fa2")
        can_exllama = torch.cuda.get_device_capability()[0] >= 8 or IS_ROCM
        # Early return for ROCm first; a helper and-ed with `is_cuda()`; printing, storing it; helpers gated here or
        # false on ROCm (`hip is None` conjunct); a flag read conjoined with an NVIDIA test; a helper testing "gfx".
        from vllm.platforms import current_platform
        def supports_fp8() -> bool:
            if current_platform.is_rocm():
                return "gfx94" in torch.cuda.get_device_properties(0).gcnArchName
            major, minor = torch.cuda.get_device_capability()
            return major * 10 + minor >= 89
        use_cutlass_fp8 = current_platform.is_cuda() and current_platform.has_device_capability(89)
        major, minor = torch.cuda.get_device_capability()
        logging.info("compute capability %d.%d", major, minor)
        logging.debug("ampere or newer: %s", (major, minor) >= (8, 0))
        print(f"capability: {torch.cuda.get_device_capability(0)}")
        env_info = {"capability": torch.cuda.get_device_capability(0)}
        big_gpu = torch.cuda.get_device_properties(0).total_memory >= 40 * 1024**3
        IS_ROCM = torch.version.hip is not None
        def has_cuda_capability(major: int, minor: int) -> bool:
            return not IS_ROCM and torch.cuda.get_device_capability() >= (major, minor)
        if has_cuda_capability(9, 0):
            attention = 'fa3'
        class CudaPlatform:
            def has_device_capability(self, capability):
                return torch.version.hip is None and torch.cuda.get_device_capability()[0] * 10 >= capability
        platform = CudaPlatform()
        if platform.has_device_capability(90):
            attention = 'fa3'
        def pick_attention():
            has_sm90 = torch.cuda.get_device_capability() >= (9, 0)
            return "fa3" if torch.version.cuda and has_sm90 else "fa2"
        def amd_gpu():
            return "gfx" in torch.cuda.get_device_properties(0).gcnArchName
        use_fp8 = not amd_gpu() and torch.cuda.get_device_capability() >= (8, 9)
        def fp4_available() -> bool:  # an effect-free probe: CUTLASS's DSL does not import on ROCm, False there anyway
            if torch.cuda.get_device_capability()[0] < 8: return False
            import cutlass.utils.blackwell_helpers as helpers
            return hasattr(helpers, "partition_fragment_SFA")
        # Versions only AMD GPUs report (MI300 9.4, MI355X 9.5), compared, listed or keyed: gfx IP versions on purpose.
        def is_gfx950():
            return (props.major, props.minor) == (9, 5) or props.major == 9 and props.minor == 5
        TILES, contiguous = {(9, 4): 128, (9, 5): 256}, torch.cuda.get_device_capability() < (9, 5)
        def tile(cap=torch.cuda.get_device_capability()):
            return TILES[cap] if cap in ((9, 4), (9, 5)) else 64, contiguous
        """,
    ),
    # Two devices; a capability-keyed cache; thresholds below sm80 (sm80 for bf16); harmless skips (newer GPUs, every
    # AMD GPU, a test that needs an NVIDIA-only package); unread values; archs no AMD GPU reports; sm_75 answers.
    Valid(
        """
        import pytest, torch
        class KernelCache:
            def __init__(self):
                self._capability = None
                self._kernels = {}
            def lookup(self, key):
                capability = torch.cuda.get_device_capability()
                is_hopper = capability >= (9, 0)
                if capability != self._capability or capability != saved.get("capability"):
                    self._kernels.clear()
                    self._capability = capability
                if capability not in self._kernels:
                    self._kernels[capability] = build(key)
                return self._kernels[capability]
        same_arch = torch.cuda.get_device_capability(0) == torch.cuda.get_device_capability(1)
        major, minor = torch.cuda.get_device_capability()
        HALF, BF16 = (torch.float16 if major >= 7 else torch.float32), (torch.bfloat16 if major >= 8 else torch.float16)
        ATTENTION = "flash_attention_2" if major >= 8 else "sdpa"  # ROCm's flash-attn build has FA2
        DTYPES = [torch.float32, torch.bfloat16] if major >= 8 else [torch.float32]  # only adds bf16: AMD has it
        def prior_speed(): return 5.0 if major >= 9 else (4.0 if minor == 9 else 2.0) if major == 8 else 1.0  # a prior
        def _fast_fp8(): return (major, minor) == (8, 9)  # a private predicate only tested by `if`s: as an `if`
        if _fast_fp8(): kernel = "scaled_mm"
        def tiles(): return 64 if major * 10 + minor == 80 else 128 if (major, minor) in {(8, 6), (12, 0)} else 256
        assert torch.cuda.get_device_capability() != (10, 0) or have_sm100_kernels(), "sm100 kernels missing"
        @pytest.mark.skipif(major >= 12, reason="no sm_120 kernel")  # a skip of newer GPUs only
        def test_probe():
            if torch.cuda.get_device_capability()[0] >= 9:
                pytest.skip("flaky on H100 and newer")  # a skip of every AMD GPU
        @pytest.mark.skipif(major < 9, reason="needs sm90")
        def test_deep_gemm():
            pytest.importorskip("deep_gemm")  # an NVIDIA-only package: on ROCm the test stops here
            run_deep_gemm()
        scale_format = "ue8m0" if major >= 10 else "fp32"  # Blackwell arms: every CDNA GPU takes Turing's
        if torch.cuda.get_device_capability() < (10, 0):
            raise RuntimeError("NVFP4 needs an sm100 GPU")
        """,
    ),
)
CapabilityCompare.invalid = (
    Invalid(
        """
        import torch
        if torch.cuda.get_device_capability() >= (8, 0):
            gemm = "cp_async_gemm"
        """,
        expect=("2:4-2:48",),
        message="gfx IP version",
        fixed="""
        import torch
        _IS_ROCM = getattr(torch.version, "hip", None) is not None
        if (not _IS_ROCM) and (torch.cuda.get_device_capability() >= (8, 0)):
            gemm = "cp_async_gemm"
        """,
    ),
    Invalid(
        """
        import torch as T
        def pick_attention():
            major, minor = T.cuda.get_device_capability()
            use_fa3 = major >= 9
            return use_fa3
        props = T.cuda.get_device_properties(0)
        if T.cuda.is_available() and props.major >= 8:
            gemm = "cp_async_gemm"  # an arm only turning TF32 on (ROC102's case) is not reported
        major, minor = T.cuda.get_device_capability(device)
        sm = major * 10 + minor
        fp8_supported = sm >= 89
        ampere = T.cuda.get_device_properties(0).major >= 8
        is_hopper = T.cuda.get_device_capability()[0] == 9 or T.version.cuda is not None
        is_sm80 = T.cuda.get_device_capability() == (8, 0)
        is_sm75 = T.cuda.get_device_capability("cuda") == (7, 5)  # an equality names one GPU whatever its major
        RDNA_TARGETS = ("gfx1100", "gfx1201")  # a project run on AMD's consumer GPUs: RDNA3 reports 11.0
        use_tcgen05 = T.cuda.get_device_capability()[0] >= 10
        fp8_gpus = T.cuda.get_device_capability() in ((9, 0), (9, 4))  # MI250 reports Hopper's 9.0
        kernel = "sm120" if T.cuda.get_device_capability() in [(8, 9), (12, 0)] else "generic"  # RDNA4 is 12.0
        dtype = T.bfloat16 if major >= 9 else T.float16  # bf16 decided by a later arch (MI250 is 9.0, as Hopper)
        """,
        expect=(
            *("4:15-4:25", "7:30-7:46", "11:17-11:25", "12:10-12:52", "13:13-13:51", "14:11-14:51", "15:11-15:57"),
            *("17:15-17:54", "18:12-18:62", "19:21-19:72", "20:23-20:33"),
        ),
    ),
    # The capability as text, compared or looked up in a table of architectures.
    Invalid(
        """
        import torch
        GEMM_KERNELS = {"sm80": "ampere_gemm", "sm90": "hopper_gemm"}
        TILE_SIZES = {(8, 0): 128, (9, 0): 256}
        def attention_backend():
            major, minor = torch.cuda.get_device_capability()
            arch = f"sm{major}{minor}"
            if arch == "sm90":
                return "fa3"
            if "sm_%d%d" % (major, minor) in ("sm_90", "sm_100"):
                return "trtllm"
            return "fa2"
        def gemm_kernel():
            cc = torch.cuda.get_device_capability()
            return GEMM_KERNELS.get(f"sm{cc[0]}{cc[1]}", "generic_gemm"), TILE_SIZES[cc]
        """,
        expect=("7:8-7:22", "9:8-9:57", "14:12-14:65", "14:67-14:81"),
        message="gfx IP version",
    ),
    # Kept on `self` (also as `self.major`) and compared in another method; a helper returning the pair; a dataclass
    # field given it; the newest of every GPU's capabilities.
    Invalid(
        """
        import dataclasses, torch
        def compute_capability(device=0):
            props = torch.cuda.get_device_properties(device)
            return props.major, props.minor
        class Attention:
            def __init__(self):
                self.capability = compute_capability()
            def forward(self, q, k, v):
                if self.capability >= (9, 0):
                    return fa3(q, k, v)
                return fa2(q, k, v)
        @dataclasses.dataclass
        class Specs:
            highest: tuple
            def has_wgmma(self):
                return self.highest >= (9, 0)
        def specs():
            return Specs(torch.cuda.get_device_capability())
        class Runner:
            def __init__(self):
                self.major = torch.cuda.get_device_capability()[0]
            def use_tma(self):
                return self.major >= 9
        def newest_gpu_is_hopper():
            return sorted(torch.cuda.get_device_capability(i) for i in range(8))[-1] >= (9, 0)
        """,
        expect=("9:12-9:37", "16:16-16:38", "23:16-23:31", "25:12-25:87"),
    ),
    # One diagnostic for the whole condition (torchao test_vllm style).
    Invalid(
        """
        import torch
        def fp8_supported():
            major, minor = torch.cuda.get_device_capability()
            return major > 8 or (major == 8 and minor >= 9)
        """,
        expect=("4:12-4:21",),
        fixed="""
        import torch
        _IS_ROCM = getattr(torch.version, "hip", None) is not None
        def fp8_supported():
            major, minor = torch.cuda.get_device_capability()
            return (not _IS_ROCM) and (major > 8 or (major == 8 and minor >= 9))
        """,
    ),
    Invalid(
        """
        from torchtitan.tools.utils import has_cuda_capability
        from vllm.platforms import current_platform
        if current_platform.has_device_capability(89):
            kernel = 'cutlass_fp8'
        def get_flash_attention_impl():
            if has_cuda_capability(9, 0):
                return 'fa3'
            return 'fa2'
        """,
        expect=("3:4-3:46", "6:8-6:33"),
        message="has_device_capability",
    ),
    # Spellings the trigger pattern must still reach (each alone: tests/test_python_speed_triggers.py): `.major`
    # after a spaced or wrapped call, aliases of the function, `to_int()`, inside an f-string, a spaced helper call.
    Invalid(
        r"""
        import torch
        from torch.cuda import get_device_capability as capability
        from vllm.platforms import current_platform
        read_capability = torch.cuda.get_device_capability
        def ampere(device):
            return (torch.cuda.get_device_properties (torch.cuda.device(device).idx)
                    .major) >= 8
        def hopper(device):
            return torch.cuda.get_device_properties(device) \
                .major >= 9
        def use_fa3():
            return capability()[0] >= 9 or read_capability() >= (9, 0)
        def fp8_supported():
            return current_platform.get_device_capability().to_int() >= 89
        LABEL = f"hopper={torch.cuda.get_device_capability()[0] >= 9}"
        if current_platform.is_device_capability_family (100):
            backend = 'trtllm'
        """,
        expect=("6:12-7:25", "9:12-10:20", "12:12-12:32", "14:12-14:67", "15:19-15:61", "16:4-16:54"),
    ),
)
