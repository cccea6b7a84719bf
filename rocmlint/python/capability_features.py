"""Capability tests that only decide a feature every AMD GPU has: "Ampere or newer" for bf16 or torch's fused
attention backends.

ROCm reports the gfx IP version as the compute capability (MI200 and MI300 9.x, RDNA 10.3-12.0), so a test such as
`major >= 8` or `cap >= (8, 0)` is true on every AMD GPU, as on an A100. Where that test only chooses bf16 (the
dtype, a flag named for it, a `should_use_bf16()` answer) or the flash/memory-efficient SDPA backends, every GPU
ROCm supports has the feature and True is the right answer there. Tests of later NVIDIA architectures (`>= (8, 9)`
for FP8, `major >= 9` for TMA or wgmma) are false on an A100 and stay out of this module's answer, as do tests that
pick anything else (kernels, tile sizes, stage counts).
"""

from __future__ import annotations

import ast
import re

from rocmlint.python.capability_values import value_at
from rocmlint.python.flow import truth_holder, value_uses
from rocmlint.python.frontend import PythonContext
from rocmlint.python.scopes import FUNCTION_DEFS

# The first "Ampere or newer" GPU, NVIDIA's last before it, and every GPU ROCm supports (CDNA 9.x, RDNA 10.3-12.0).
_AMPERE = (8, 0)
_TURING = (7, 5)
_ROCM_CAPABILITIES = ((9, 0), (9, 4), (9, 5), (10, 3), (11, 0), (11, 5), (12, 0))
# Values that choose bf16 or one of torch's fused attention backends (each in every ROCm build of torch).
_BF16_VALUES = frozenset({"torch.bfloat16"})
_BF16_TEXTS = frozenset({"bf16", "bfloat16"})
_SDPA_BACKENDS = frozenset({"FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH"})
_SDPA_CONTEXTS = frozenset({"torch.nn.attention.sdpa_kernel", "torch.backends.cuda.sdp_kernel"})
_SDPA_SWITCHES = frozenset({"torch.backends.cuda.enable_flash_sdp", "torch.backends.cuda.enable_mem_efficient_sdp"})
# A name for bf16 support: `bf16` with words that only ask or state it (`should_use_bf16`, `BF16_SUPPORTED`), not a
# narrower feature (`bf16_atomic_add`: MI250 has none).
_BF16_WORDS = frozenset({"bf16", "bfloat16"})
_SUPPORT_WORDS = frozenset(
    {"is", "use", "uses", "should", "can", "has", "have", "supports", "support", "supported", "enable", "enabled"}
    | {"available", "allow", "allowed", "native", "device", "gpu", "cuda", "torch", "self"}
)
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z0-9]+(?![a-z])")


def only_picks_an_ampere_feature(ctx: PythonContext, node: ast.AST) -> bool:
    """`node`, a capability comparison, is true on an A100 and on every AMD GPU and false on Turing (`major >= 8`,
    `cap >= (8, 0)`, `sm < 80` negated), and its truth only decides bf16 or a torch SDPA backend: the test of an
    `if` whose arm taken on an A100 does nothing else, of a conditional expression whose arm is such a value, the
    value of a bf16-named flag or of a bf16-named def's return, or of a flag every read of which is such a test."""
    if not isinstance(node, ast.Compare):
        return False
    ampere = value_at(ctx.semantic, ctx.values, node, _AMPERE)
    turing = value_at(ctx.semantic, ctx.values, node, _TURING)
    if ampere is None or turing is None or ampere == turing:
        return False
    if any(value_at(ctx.semantic, ctx.values, node, gpu) != ampere for gpu in _ROCM_CAPABILITIES):
        return False
    return _truth_picks_feature(ctx, node, ampere, follow=True)


def _truth_picks_feature(ctx: PythonContext, node: ast.AST, ampere: bool, follow: bool) -> bool:
    """`node`'s truth, `ampere` on an A100 and AMD GPUs, decides bf16 or SDPA only (`ampere` is the value of
    `node` itself: `not` between it and the whole condition flips the arm)."""
    holder = truth_holder(ctx, node)
    taken = ampere != _negations(ctx, node, holder)
    parent = ctx.parent(holder)
    if isinstance(parent, ast.If) and parent.test is holder:
        arm = parent.body if taken else parent.orelse
        return bool(arm) and all(_feature_statement(ctx, statement) for statement in arm)
    if isinstance(parent, ast.IfExp) and parent.test is holder:
        return _feature_value(ctx, parent.body if taken else parent.orelse)
    if isinstance(parent, ast.Return):
        return _in_bf16_def(ctx, parent)
    if isinstance(parent, ast.keyword):
        return parent.arg is not None and _names_bf16(parent.arg)
    if isinstance(parent, ast.Call) and holder in parent.args:
        return ctx.qualified_name(parent.func) in _SDPA_SWITCHES
    if not (isinstance(parent, ast.Assign) and parent.value is holder):
        return False
    if all(_names_bf16(_target_name(target)) for target in parent.targets):
        return True
    if not follow:
        return False
    verdicts = value_uses(
        ctx, holder, lambda read: None if read is holder else [_truth_picks_feature(ctx, read, taken, follow=False)]
    )
    return bool(verdicts) and all(verdicts)


def _negations(ctx: PythonContext, node: ast.AST, holder: ast.AST) -> bool:
    """An odd number of `not` between `node` and `holder`."""
    negated = False
    current = node
    while current is not holder:
        current = ctx.parent(current)  # type: ignore[assignment]
        negated ^= isinstance(current, ast.UnaryOp) and isinstance(current.op, ast.Not)
    return negated


def _feature_statement(ctx: PythonContext, statement: ast.stmt) -> bool:
    """A statement that only chooses bf16 or SDPA: `dtype = torch.bfloat16`, `use_bf16 = True`, `return True` in
    a bf16-named def, `torch.backends.cuda.enable_flash_sdp(True)`."""
    if isinstance(statement, ast.Assign):
        if all(_names_bf16(_target_name(target)) for target in statement.targets):
            return _is_true(statement.value) or _feature_value(ctx, statement.value)
        return _feature_value(ctx, statement.value)
    if isinstance(statement, ast.Return):
        if statement.value is None:
            return False
        if _feature_value(ctx, statement.value):
            return True
        return _is_true(statement.value) and _in_bf16_def(ctx, statement)
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        return ctx.qualified_name(statement.value.func) in _SDPA_SWITCHES
    return False


def _feature_value(ctx: PythonContext, value: ast.expr) -> bool:
    """`torch.bfloat16`, `"bf16"`, an SDPA backend, a list of them, or `sdpa_kernel(...)` of them."""
    if isinstance(value, (ast.List, ast.Tuple)):
        return bool(value.elts) and all(_feature_value(ctx, element) for element in value.elts)
    if isinstance(value, ast.Constant):
        return isinstance(value.value, str) and value.value.lower() in _BF16_TEXTS
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


def _is_true(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value is True


def _in_bf16_def(ctx: PythonContext, statement: ast.AST) -> bool:
    function = next((ancestor for ancestor in ctx.ancestors(statement) if isinstance(ancestor, FUNCTION_DEFS)), None)
    return function is not None and _names_bf16(function.name)


def _target_name(target: ast.expr) -> str:
    if isinstance(target, ast.Name):
        return target.id
    return target.attr if isinstance(target, ast.Attribute) else ""


def _names_bf16(name: str) -> bool:
    """`name` states bf16 support (`supports_bf16`, `BF16_AVAILABLE`, `useBf16`) and nothing narrower."""
    words = {word.lower() for word in _WORD.findall(name)}
    return bool(words & _BF16_WORDS) and words <= _BF16_WORDS | _SUPPORT_WORDS
