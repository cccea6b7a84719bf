"""ROC110 hip-device-string."""

from __future__ import annotations

import ast
import re

from rocmlint.diagnostics import Edit, Fix, FixAvailability, Severity
from rocmlint.python.conditions import outermost_conditional
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import fstring_prefix, last_name
from rocmlint.python.torch_api import device_arguments
from rocmlint.rule import Invalid, Rule, Valid

# A whole device string (`"hip"`, `"rocm:1"`), and the static start of a built one (`f"hip:{rank}"`).
_DEVICE_STRING = re.compile(r"(hip|rocm)(:\d+)?")
_DEVICE_PREFIX = re.compile(r"(hip|rocm):")
_CUDA_STRING = re.compile(r"cuda(:\d+)?")
_DEVICE_TYPE = re.compile(r"^(hip|rocm)")
# A string literal's source: its prefix and opening quote, what it holds, its closing quote.
_STRING_SOURCE = re.compile(r"([A-Za-z]*)('''|\"\"\"|'|\")(.*)\2", re.DOTALL)
# Targets named for a device (`device`, `self.dev`, `LOCAL_DEVICE`), but not for a label about one.
_DEVICE_HOLDER = re.compile(r"(^|_)dev($|_)|device", re.IGNORECASE)
_LABEL_WORDS = re.compile(r"name|vendor|backend|platform|label|kind", re.IGNORECASE)


class HipDeviceString(Rule):
    """
    ## What it does
    Flags the device strings `"hip"`, `"rocm"`, `"hip:N"`, `"rocm:N"` (also `f"hip:{rank}"` and
    `"hip:" + ...`) reaching a device-taking API: `torch.device(...)`, `.to(...)`, any `device=`
    keyword (`torch.empty(..., device="hip")`), `map_location=`, `device_type=` of a torch API,
    `torch.set_default_device(...)`, `torch.cuda.set_device(...)`, directly or through a name
    assigned once; the common `device = "hip" if torch.version.hip else "cuda"` (a conditional
    expression choosing between a HIP and a CUDA string, assigned to a device-named target); and
    comparisons of a device's `.type` with `"hip"`/`"rocm"`, which are always false on ROCm.

    Not flagged: the strings used as labels (log messages, `backend="hip"`, dict keys, Triton's
    `target.backend == "hip"`); and a project's own device kind: in a project whose package has a
    device class of its own comparing its kind with `"hip"` (`self.kind == "hip"`), the `device=` of
    that package's functions (`mylib.randn(n, device="hip")`) and the choice in its modules. The
    hazard is ROCm code itself, so it is reported even inside a ROCm-only branch.

    ## Why is this bad on ROCm?
    PyTorch on ROCm reuses the CUDA interfaces: AMD GPUs are `torch.device("cuda")`, `"hip"` and
    `"rocm"` are not valid device strings (`RuntimeError: Expected one of cpu, cuda, ... device type`)
    and `tensor.device.type` is `"cuda"`, so `device.type == "hip"` never matches. Source: PyTorch
    docs, "HIP (ROCm) semantics", "HIP Interfaces Reuse the CUDA Interfaces"
    (https://docs.pytorch.org/docs/stable/notes/hip.html).

    ## Example
    ```python
    device = "hip" if torch.version.hip else "cuda"
    x = torch.randn(8, 8, device=device)
    ```

    ## Fix
    ```python
    device = "cuda" if torch.version.hip else "cuda"  # simplify by hand
    x = torch.randn(8, 8, device=device)
    ```

    ## Fix safety
    Safe when the literal can only run on ROCm (a ROCm-only branch): NVIDIA never executes it and
    `"cuda"` is the ROCm device string. Otherwise it needs review.
    """

    code = "ROC110"
    name = "hip-device-string"
    severity = Severity.ERROR
    applies_to_tests = True  # a test's device string reaches torch as in any other code
    fix_availability = FixAvailability.SAFE
    # A device string's text from its opening quote: the whole string or its `hip:` start.
    triggers = (b'"hip"', b'"hip:', b"'hip'", b"'hip:", b'"rocm"', b'"rocm:', b"'rocm'", b"'rocm:")
    reports_gated = True

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        for value in device_arguments(ctx, node):
            literals = [lit for lit in _device_literals(value, ctx) if not _claimed_by_assignment(lit, ctx)]
            if literals and not _given_to_own_api(value, node, literals, ctx):
                ctx.report(value, _message(ctx, literals[0]), fix=_fix(literals, ctx))

    def visit_Assign(self, node: ast.Assign, ctx: PythonContext) -> None:
        if any(_is_device_holder(target) for target in node.targets):
            self._check_device_choice(node.value, ctx)

    def visit_AnnAssign(self, node: ast.AnnAssign, ctx: PythonContext) -> None:
        if node.value is not None and _is_device_holder(node.target):
            self._check_device_choice(node.value, ctx)

    def visit_Compare(self, node: ast.Compare, ctx: PythonContext) -> None:
        if len(node.ops) != 1:
            return
        operator, comparator = node.ops[0], node.comparators[0]
        if not isinstance(operator, (ast.Eq, ast.NotEq)):
            return
        for literal, other in ((comparator, node.left), (node.left, comparator)):
            value = literal.value if isinstance(literal, ast.Constant) and isinstance(literal.value, str) else None
            if value is not None and _DEVICE_STRING.fullmatch(value) and _is_device_type(other, ctx):
                outcome = "false" if isinstance(operator, ast.Eq) else "true"
                ctx.report(
                    literal,
                    f'a device\'s .type is "cuda" on ROCm, never "{value}", so this comparison is always '
                    f"{outcome}; test torch.version.hip to detect ROCm",
                )

    @staticmethod
    def _check_device_choice(value: ast.expr, ctx: PythonContext) -> None:
        if not _chooses_hip_or_cuda(value, ctx):
            return
        for literal in _device_literals(value, ctx, follow_names=False):
            if not ctx.own_device_kind(_kind(literal, ctx)):
                ctx.report(literal, _message(ctx, literal), fix=_fix([literal], ctx))


def _fix(literals: list[ast.expr], ctx: PythonContext) -> Fix | None:
    """`"cuda"` for each literal, only when every one of them sits in code that never runs on NVIDIA
    (elsewhere the string may mean something to NVIDIA code, so the change would need review)."""
    if not all(ctx.is_nvidia_gated(literal) for literal in literals):
        return None
    edits = [_cuda_literal(literal, ctx) for literal in literals]
    if any(edit is None for edit in edits):
        return None
    return ctx.fix('Use the "cuda" device type (ROCm builds of PyTorch reuse it)', *(e for e in edits if e is not None))


def _cuda_literal(literal: ast.expr, ctx: PythonContext) -> Edit | None:
    """The edit turning `"hip"`/`"rocm:0"`/`f"hip:{i}"`/`"hip:" + ...`'s device type into `cuda`."""
    written = _STRING_SOURCE.fullmatch(ctx.code_of(literal))
    if written is None:
        return None  # pieces written with different quotes: leave them to the user
    prefix, quote, body = written.groups()
    if isinstance(literal, ast.JoinedStr):
        device_type = _DEVICE_TYPE.match(body)
        if device_type is None:
            return None
        # Only the device type at the start of the f-string's text changes; its fields stay as written.
        opening = ctx.code_range(literal).start
        start = ctx.source.byte_offset(opening.line, opening.column + len(prefix) + len(quote))
        return ctx.source.edit(start, start + device_type.end(), "cuda")  # `hip`/`rocm`: ASCII, a byte each
    if not (_DEVICE_STRING.fullmatch(body) or _DEVICE_PREFIX.fullmatch(body)):
        return None  # escapes or other characters: leave it to the user
    return ctx.replace(literal, f"{prefix}{quote}{_DEVICE_TYPE.sub('cuda', body, count=1)}{quote}")


def _device_literals(expr: ast.expr, ctx: PythonContext, follow_names: bool = True) -> list[ast.expr]:
    """The HIP device-string literals `expr` may evaluate to (names assigned once, both arms of a
    conditional expression, f-strings and `+`/`%` built from a `"hip:"` prefix)."""
    found: list[ast.expr] = []
    for arm in ctx.values.arms(expr, follow_names=follow_names):
        literal = _hip_device_literal(arm, ctx)
        if literal is not None:
            found.append(literal)
    return found


def _hip_device_literal(value: ast.expr, ctx: PythonContext) -> ast.expr | None:
    """The literal that makes `value` a HIP device string: itself, or the `"hip:"` it is built from."""
    if isinstance(value, ast.Constant):
        string = ctx.string_value(value)
        return value if string is not None and _DEVICE_STRING.fullmatch(string) else None
    if isinstance(value, ast.JoinedStr):
        return value if _DEVICE_PREFIX.match(fstring_prefix(value)) else None
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Mod)):
        left = ctx.string_value(value.left) if isinstance(value.left, ast.Constant) else None
        return value.left if left is not None and _DEVICE_PREFIX.match(left) else None
    return None


def _kind(literal: ast.expr, ctx: PythonContext) -> str:
    """The device type a HIP device literal (`_hip_device_literal`) names: "hip" for `"hip:0"`, `f"hip:{i}"`."""
    text = fstring_prefix(literal) if isinstance(literal, ast.JoinedStr) else ctx.string_value(literal) or ""
    found = _DEVICE_TYPE.match(text)
    return found.group(1) if found else text


def _given_to_own_api(value: ast.expr, call: ast.Call, literals: list[ast.expr], ctx: PythonContext) -> bool:
    """`device=` of a function of the project's own package whose device class names each literal's device type a
    kind of its own (`mylib.randn(n, device="hip")` beside `class Device: ... self.kind == "hip"`): the project's
    vocabulary, not torch's."""
    if not isinstance(ctx.parent(value), ast.keyword):
        return False
    return all(ctx.own_device_kind(_kind(literal, ctx), call.func) for literal in literals)


def _is_device_holder(target: ast.expr) -> bool:
    """`device`, `self.device`, `DEVICE`, `dev`, `local_device`: a target named for a device."""
    name = last_name(target)
    return bool(_DEVICE_HOLDER.search(name)) and not _LABEL_WORDS.search(name)


def _chooses_hip_or_cuda(value: ast.AST, ctx: PythonContext) -> bool:
    """A conditional expression with a HIP device string in one arm and a CUDA one in another."""
    if not isinstance(value, ast.IfExp):
        return False
    strings = [ctx.string_value(arm) for arm in ctx.values.arms(value, follow_names=False)]
    return any(s is not None and _CUDA_STRING.fullmatch(s) for s in strings) and any(
        s is not None and _DEVICE_STRING.fullmatch(s) for s in strings
    )


def _claimed_by_assignment(literal: ast.expr, ctx: PythonContext) -> bool:
    """The literal is an arm of a `device = "hip" if ... else "cuda"` choice, reported where it is assigned."""
    choice = outermost_conditional(ctx, literal)
    if choice is None or not _chooses_hip_or_cuda(choice, ctx) or ctx.own_device_kind(_kind(literal, ctx)):
        return False
    parent = ctx.parent(choice)
    if isinstance(parent, ast.Assign):
        return any(_is_device_holder(target) for target in parent.targets)
    return isinstance(parent, ast.AnnAssign) and _is_device_holder(parent.target)


def _is_device_type(expr: ast.expr, ctx: PythonContext) -> bool:
    """`x.device.type`, `device.type`, `torch.device(...).type`."""
    if not isinstance(expr, ast.Attribute) or expr.attr != "type":
        return False
    owner = expr.value
    if isinstance(owner, ast.Call):
        return ctx.qualified_name(owner.func) == "torch.device"
    return _is_device_holder(owner)


def _message(ctx: PythonContext, literal: ast.expr) -> str:
    where = " (this branch only runs on ROCm)" if ctx.is_nvidia_gated(literal) else ""
    return (
        f"{ctx.code_of(literal)} is not a valid torch device{where}: PyTorch on ROCm addresses AMD GPUs with the "
        '"cuda" device type; use "cuda" (or "cuda:N")'
    )


HipDeviceString.valid = (
    Valid(
        """
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        """,
    ),
    # Labels: logging, a backend name, dict keys, Triton's backend test.
    Valid(
        """
        import logging, torch
        backend = "hip" if torch.version.hip else "cuda"
        logging.info("running on %s", "rocm" if torch.version.hip else "cuda")
        KERNELS = {"hip": "ck", "cuda": "cutlass"}
        kernel = KERNELS[backend]
        if triton.runtime.driver.active.get_current_target().backend == "hip":
            BLOCK = 64
        """,
    ),
    # The ROCm-gated branch already uses "cuda".
    Valid(
        """
        import torch
        IS_ROCM = torch.version.hip is not None
        if IS_ROCM:
            x = x.to("cuda", non_blocking=True)
        else:
            x = x.to("cuda:0")
        """,
    ),
    # Comparing a platform label (not a device's .type), a different keyword, and a docstring.
    Valid(
        """
        \"\"\"Move tensors to the GPU (never torch.device("hip")).\"\"\"
        import torch
        if args.platform == "rocm":
            torch.backends.cuda.matmul.allow_tf32 = False
        os.environ.setdefault("HSA_OVERRIDE_GFX_VERSION", "11.0.0")
        x = torch.ones(3, device="cuda", layout=torch.strided)
        accelerator = get_accelerator(name="hip")
        """,
    ),
    # Detecting ROCm the right way before choosing the device string.
    Valid(
        """
        import torch
        vendor = "rocm" if torch.version.hip else "cuda"
        device = torch.device("cuda", local_rank)
        model.to(device)
        """,
    ),
    # The project's own device class names "hip" a kind of its own; its own functions take it.
    Valid(
        """
        class Device:
            def __init__(self, kind):
                self.kind = kind
            def is_hip(self):
                return self.kind == "hip"
        def randn(shape, device="cuda"):
            return Tensor(shape, Device(device))
        x = randn([4, 4], device="hip")
        device = "cuda" if available() else "hip"
        """,
    ),
)
HipDeviceString.invalid = (
    Invalid(
        """
        import torch
        device = "hip" if torch.version.hip else "cuda"
        model = model.to(device)
        """,
        expect=("2:10-2:15",),
        message="this branch only runs on ROCm",
        fixed="""
        import torch
        device = "cuda" if torch.version.hip else "cuda"
        model = model.to(device)
        """,
    ),
    Invalid(
        """
        import torch
        x = torch.empty(1024, 1024, dtype=torch.float16, device="hip")
        """,
        expect=("2:57-2:62",),
    ),
    Invalid(
        """
        import os, torch
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(f"hip:{local_rank}")
        """,
        expect=("3:23-3:42",),
    ),
    Invalid(
        """
        import torch
        DEV = "rocm:0"

        def load(path):
            return torch.load(path, map_location=DEV)
        """,
        expect=("5:42-5:45",),
    ),
    Invalid(
        """
        import torch
        IS_ROCM = torch.version.hip is not None
        if IS_ROCM:
            torch.set_default_device("hip")
        """,
        expect=("4:30-4:35",),
        fixed="""
        import torch
        IS_ROCM = torch.version.hip is not None
        if IS_ROCM:
            torch.set_default_device("cuda")
        """,
    ),
    Invalid(
        """
        def cast_inputs(batch, device):
            if device.type == "hip":
                batch = batch.half()
            return batch
        """,
        expect=("2:23-2:28",),
        message="always false",
    ),
    Invalid(
        """
        import torch
        with torch.autocast(device_type="hip", dtype=torch.bfloat16):
            y = model(x)
        """,
        expect=("2:33-2:38",),
    ),
)
