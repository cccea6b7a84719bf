"""Capability tests that only decide a feature every AMD GPU has: "Ampere or newer" for bf16, torch's fused
attention backends, FlashAttention 2 or the TF32 switches.

ROCm reports the gfx IP version as the compute capability (MI200 and MI300 9.x, RDNA 10.3-12.0), so a test such as
`major >= 8` or `cap >= (8, 0)` is true on every AMD GPU, as on an A100. Where that test only chooses bf16 (the
dtype, a flag named for it, a `should_use_bf16()` answer), the flash/memory-efficient SDPA backends or
FlashAttention 2 (`"flash_attention_2"`, a `use_flash_attn` flag, `return False` for older GPUs in
`is_flash_attn_available()`; ROCm's flash-attn build has it), or only adds bf16 or fp16 to the dtypes a test
tries (`[torch.float32, torch.bfloat16] if major >= 8 else [torch.float32]`), every GPU ROCm supports has the feature and True is
the right answer there. An arm that only turns TF32 on is right there too: ROCm ignores the switches unless asked
(ROC102 reports the switch itself). Tests of later NVIDIA architectures (`>= (8, 9)` for FP8, `major >= 9` for TMA
or wgmma) are false on an A100 and stay out of this module's answer, as do tests that pick anything else (kernels,
tile sizes, stage counts).
"""

from __future__ import annotations

import ast
import re

from rocmlint.python.capability_values import value_at
from rocmlint.python.flow import truth_holder, value_uses
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import is_display_call
from rocmlint.python.scopes import FUNCTION_DEFS

# The first "Ampere or newer" GPU, NVIDIA's last before it, and every GPU ROCm supports (CDNA 9.x, RDNA 10.3-12.0).
_AMPERE = (8, 0)
_TURING = (7, 5)
_ROCM_CAPABILITIES = ((9, 0), (9, 4), (9, 5), (10, 3), (11, 0), (11, 5), (12, 0))
# Values that choose bf16, one of torch's fused attention backends (each in every ROCm build of torch) or FA2.
_BF16_VALUES = frozenset({"torch.bfloat16"})
_BF16_TEXTS = frozenset({"bf16", "bfloat16"})
# FlashAttention 2 by name (`"flash_attention_2"`, `"fa2"`, `"flash2-hub"`), not 3 or later.
_FA2_TEXT = re.compile(r"(?<![a-z0-9])(?:flash[-_ ]?(?:attn|attention)?[-_ ]?v?2|fa2)(?![0-9])")
_SDPA_BACKENDS = frozenset({"FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH"})
_SDPA_CONTEXTS = frozenset({"torch.nn.attention.sdpa_kernel", "torch.backends.cuda.sdp_kernel"})
_SDPA_SWITCHES = frozenset({"torch.backends.cuda.enable_flash_sdp", "torch.backends.cuda.enable_mem_efficient_sdp"})
# The 16-bit float dtypes every AMD GPU has: a list of dtypes to try that only gains them on an A100 tests no more.
_ORDERINGS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_HALF_DTYPES = frozenset({"torch.bfloat16", "torch.float16", "torch.half"})
# The TF32 switches: ROCm ignores them unless `HIPBLASLT_ALLOW_TF32` is set (ROC102 reports them on their own).
_TF32_FLAGS = frozenset({"torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32"})
_TF32_CALLS = frozenset({"torch.set_float32_matmul_precision"})
# A name for bf16 or FlashAttention 2 support: `bf16` or `flash` with words that only ask or state it
# (`should_use_bf16`, `BF16_SUPPORTED`, `use_flash_attn`), not a narrower feature (`bf16_atomic_add`: MI250 has
# none) nor a later one (`use_flash_attn_3`).
_FEATURE_WORDS = frozenset({"bf16", "bfloat16", "flash", "fa2"})
_FLASH_WORDS = frozenset({"attn", "attention", "2", "v2"})
_SUPPORT_WORDS = frozenset(
    {"is", "use", "uses", "should", "can", "has", "have", "supports", "support", "supported", "enable", "enabled"}
    | {"available", "allow", "allowed", "native", "device", "gpu", "cuda", "torch", "self"}
    | _FLASH_WORDS
)
# A name holding what a test asserts (`expected`, `expected_backend`).
_EXPECT = "expect"
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z0-9]+(?![a-z])")


def only_picks_an_ampere_feature(ctx: PythonContext, node: ast.AST) -> bool:
    """`node`, a capability comparison, is true on an A100 and on every AMD GPU and false on Turing (`major >= 8`,
    `cap >= (8, 0)`, `sm < 80` negated), and its truth only decides bf16, a torch SDPA backend, FlashAttention 2
    or TF32: the test of an `if` whose arm taken on an A100 does nothing else (or that only refuses older GPUs in a
    def named for the feature), of a conditional expression whose arm is such a value, the value of a flag or a
    def's return named for bf16 or FlashAttention 2, or of a flag every read of which is such a test."""
    # A floor or a ceiling only: an equality names one NVIDIA GPU (`== (7, 5)`), an arch test ports replace.
    if not isinstance(node, ast.Compare) or not all(isinstance(op, _ORDERINGS) for op in node.ops):
        return False
    ampere = value_at(ctx.semantic, ctx.values, node, _AMPERE)
    turing = value_at(ctx.semantic, ctx.values, node, _TURING)
    if ampere is None or turing is None or ampere == turing:
        return False
    if any(value_at(ctx.semantic, ctx.values, node, gpu) != ampere for gpu in _ROCM_CAPABILITIES):
        return False
    return _truth_picks_feature(ctx, node, ampere, follow=True)


def _truth_picks_feature(ctx: PythonContext, node: ast.AST, ampere: bool, follow: bool) -> bool:
    """`node`'s truth, `ampere` on an A100 and AMD GPUs, decides bf16, SDPA, FA2 or TF32 only (`ampere` is the
    value of `node` itself: `not` between it and the whole condition flips the arm)."""
    holder = truth_holder(ctx, node)
    taken = ampere != _negations(ctx, node, holder)
    parent = ctx.parent(holder)
    if isinstance(parent, ast.If) and parent.test is holder:
        if not taken and not parent.orelse:
            return _refuses_older_gpus(ctx, parent)
        arm = parent.body if taken else parent.orelse
        return bool(arm) and all(_feature_statement(ctx, statement) for statement in arm)
    if isinstance(parent, ast.IfExp) and parent.test is holder:
        chosen, other = (parent.body, parent.orelse) if taken else (parent.orelse, parent.body)
        return _feature_value(ctx, chosen) or _only_adds_half_dtypes(ctx, chosen, other)
    if isinstance(parent, ast.Return):
        return _in_feature_def(ctx, parent)
    if isinstance(parent, ast.keyword):
        return parent.arg is not None and _names_feature(parent.arg)
    if isinstance(parent, ast.Call) and holder in parent.args:
        return ctx.qualified_name(parent.func) in _SDPA_SWITCHES
    if not (isinstance(parent, ast.Assign) and parent.value is holder):
        return False
    if not follow:
        return all(_names_feature(_target_name(target)) for target in parent.targets)
    if _expected_by_a_test(ctx, holder):
        return False
    if all(_names_feature(_target_name(target)) for target in parent.targets):
        return True
    verdicts = value_uses(
        ctx, holder, lambda read: None if read is holder else [_truth_picks_feature(ctx, read, taken, follow=False)]
    )
    return bool(verdicts) and all(verdicts)


def _expected_by_a_test(ctx: PythonContext, flag_value: ast.AST) -> bool:
    """A read of the flag `flag_value` is assigned to decides what a test asserts: `assert SUPPORTS_FLASH_ATTENTION`,
    or an arm it picks asserts or sets an expectation (`if SUPPORTS_FLASH_ATTENTION: expected = SDPBackend.FLASH_ATTENTION`).
    The floor then requires the feature where it only enabled it: GPUs of major 9 or more without it (MI100, RDNA
    without flash SDPA) fail the test, which NVIDIA's Turing is spared."""
    verdicts = value_uses(ctx, flag_value, lambda read: None if read is flag_value else [_decides_assertion(ctx, read)])
    return any(verdicts)


def _decides_assertion(ctx: PythonContext, read: ast.AST) -> bool:
    holder = truth_holder(ctx, read)
    parent = ctx.parent(holder)
    if isinstance(parent, ast.Assert):
        return True
    if not (isinstance(parent, ast.If) and parent.test is holder):
        return False
    arm = parent.orelse if _negations(ctx, read, holder) else parent.body
    return any(_asserts(statement) for statement in arm)


def _asserts(statement: ast.stmt) -> bool:
    """`statement` is or holds an `assert`, a `self.assertEqual(...)`-style call or sets an expected value."""
    for found in ast.walk(statement):
        if isinstance(found, ast.Assert):
            return True
        if isinstance(found, ast.Call) and _called_name(found.func).startswith("assert"):
            return True
        if isinstance(found, ast.Assign) and any(_EXPECT in _target_name(target).lower() for target in found.targets):
            return True
    return False


def _called_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _refuses_older_gpus(ctx: PythonContext, choice: ast.If) -> bool:
    """`choice`, taken on Turing only, shows a message at most and answers False in a def named for bf16 or
    FlashAttention 2 (`if major < 8: return False` in `is_flash_attn_available()`): on an A100 and on every AMD GPU
    the def goes on to its other checks (is the package installed)."""
    *shown, answer = choice.body
    if not (isinstance(answer, ast.Return) and isinstance(answer.value, ast.Constant) and answer.value.value is False):
        return False
    return all(_only_shows(ctx, statement) for statement in shown) and _in_feature_def(ctx, choice)


def _only_shows(ctx: PythonContext, statement: ast.stmt) -> bool:
    """`print(...)`, `logger.debug(...)`: a message, no effect on what the def answers."""
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and is_display_call(ctx, statement.value)
    )


def _negations(ctx: PythonContext, node: ast.AST, holder: ast.AST) -> bool:
    """An odd number of `not` between `node` and `holder`."""
    negated = False
    current = node
    while current is not holder:
        current = ctx.parent(current)  # type: ignore[assignment]
        negated ^= isinstance(current, ast.UnaryOp) and isinstance(current.op, ast.Not)
    return negated


def _feature_statement(ctx: PythonContext, statement: ast.stmt) -> bool:
    """A statement that only chooses bf16, SDPA or FlashAttention 2, or turns TF32 on: `dtype = torch.bfloat16`,
    `use_bf16 = True`, `return True` in a bf16-named def, `torch.backends.cuda.enable_flash_sdp(True)`,
    `torch.backends.cuda.matmul.allow_tf32 = True`."""
    if isinstance(statement, ast.Assign):
        if any(_EXPECT in _target_name(target).lower() for target in statement.targets):
            return False  # what a test expects (`expected = SDPBackend.FLASH_ATTENTION`) requires, not enables
        if all(ctx.qualified_name(target) in _TF32_FLAGS for target in statement.targets):
            return True
        if all(_names_feature(_target_name(target)) for target in statement.targets):
            return _is_true(statement.value) or _feature_value(ctx, statement.value)
        return _feature_value(ctx, statement.value)
    if isinstance(statement, ast.Return):
        if statement.value is None:
            return False
        if _feature_value(ctx, statement.value):
            return True
        return _is_true(statement.value) and _in_feature_def(ctx, statement)
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        return ctx.qualified_name(statement.value.func) in _SDPA_SWITCHES | _TF32_CALLS
    return False


def _feature_value(ctx: PythonContext, value: ast.expr) -> bool:
    """`torch.bfloat16`, `"bf16"`, `"flash_attention_2"`, an SDPA backend, a list of them, or `sdpa_kernel(...)` of
    them."""
    if isinstance(value, (ast.List, ast.Tuple)):
        return bool(value.elts) and all(_feature_value(ctx, element) for element in value.elts)
    if isinstance(value, ast.Constant):
        if not isinstance(value.value, str):
            return False
        text = value.value.lower()
        return text in _BF16_TEXTS or _FA2_TEXT.search(text) is not None
    if isinstance(value, ast.Call):
        return ctx.qualified_name(value.func) in _SDPA_CONTEXTS and all(
            _feature_value(ctx, argument) for argument in value.args
        )
    name = ctx.qualified_name(value)
    if name is None:
        return False
    if name in _BF16_VALUES:
        return True
    owner, _, member = name.rpartition(".")
    return owner.endswith("SDPBackend") and member in _SDPA_BACKENDS


def _only_adds_half_dtypes(ctx: PythonContext, chosen: ast.expr, other: ast.expr) -> bool:
    """`chosen`, the dtypes an A100 and every AMD GPU try, holds all of `other` (what older GPUs try) and adds only
    bf16 or fp16 (`[torch.float32, torch.bfloat16] if major >= 8 else [torch.float32]`), or the arms are the same:
    FP8, TF32 or any other dtype, or an arm that drops one, keeps the test's answer meaningful."""
    chosen_dtypes = _dtype_names(ctx, chosen)
    other_dtypes = _dtype_names(ctx, other)
    if chosen_dtypes is None or other_dtypes is None:
        return False
    return other_dtypes <= chosen_dtypes and chosen_dtypes - other_dtypes <= _HALF_DTYPES


def _dtype_names(ctx: PythonContext, value: ast.expr) -> frozenset[str] | None:
    """The `torch.*` dtypes a list or tuple display holds, or None when it holds anything else or nothing."""
    if not isinstance(value, (ast.List, ast.Tuple)) or not value.elts:
        return None
    names = [ctx.qualified_name(element) for element in value.elts]
    if not all(name is not None and name.startswith("torch.") for name in names):
        return None
    return frozenset(name for name in names if name is not None)


def _is_true(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value is True


def _in_feature_def(ctx: PythonContext, statement: ast.AST) -> bool:
    function = next((ancestor for ancestor in ctx.ancestors(statement) if isinstance(ancestor, FUNCTION_DEFS)), None)
    return function is not None and _names_feature(function.name)


def _target_name(target: ast.expr) -> str:
    if isinstance(target, ast.Name):
        return target.id
    return target.attr if isinstance(target, ast.Attribute) else ""


def _names_feature(name: str) -> bool:
    """`name` states bf16 or FlashAttention 2 support (`supports_bf16`, `BF16_AVAILABLE`, `useBf16`,
    `use_flash_attn`) and nothing narrower or later."""
    words = {word.lower() for word in _WORD.findall(name)}
    return bool(words & _FEATURE_WORDS) and words <= _FEATURE_WORDS | _SUPPORT_WORDS
