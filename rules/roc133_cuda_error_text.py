"""ROC133 cuda-error-text."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.python.fixes import needs_parens, original_text
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import last_name, report_site, whole_condition
from rocmlint.rule import Invalid, Rule, Valid


@dataclass(frozen=True)
class _Wording:
    """CUDA-only error wording (in the spellings code matches: as raised and lower-cased) and what
    ROCm builds say instead."""

    spellings: tuple[str, ...]
    on_rocm: str
    advice: str
    out_of_memory: bool = False


_WORDINGS = (
    _Wording(
        ("CUDA out of memory", "cuda out of memory"),
        'PyTorch reports "HIP out of memory"',
        'catch torch.cuda.OutOfMemoryError (raised on ROCm too) or also match "HIP out of memory"',
        out_of_memory=True,
    ),
    _Wording(
        ("CUDA error", "cuda error", "CUDA runtime error", "cuda runtime error"),
        'errors read "HIP error: ..."',
        'also match "HIP error"',
    ),
    _Wording(
        ("CUBLAS_STATUS_", "cublas_status_"),
        'BLAS failures are hipBLAS/rocBLAS statuses ("HIPBLAS_STATUS_...")',
        'also match "HIPBLAS_STATUS_"',
    ),
    _Wording(
        ("cuDNN error", "cudnn error", "CUDNN_STATUS_", "cudnn_status_"),
        "convolutions run on MIOpen and report MIOpen errors",
        'also match "MIOpen"',
    ),
)
# Text that shows the author already matches the ROCm spelling next to the CUDA one.
_ROCM_WORDING = re.compile(r"(?<![a-z])(?:hip|rocm|miopen|rocblas)", re.IGNORECASE)
_VENDOR_NEUTRAL_OOM = re.compile(r"(?<!cuda )(?<!hip )out of memory", re.IGNORECASE)
_STRING_METHODS = frozenset({"startswith", "endswith", "find", "rfind", "index", "rindex", "count", "__contains__"})
_REGEX_FUNCTION_NAMES = frozenset({"search", "match", "fullmatch", "findall", "finditer", "compile"})
_REGEX_FUNCTIONS = frozenset(f"{module}.{name}" for module in ("re", "regex") for name in _REGEX_FUNCTION_NAMES)
_REGEX_ASSERTIONS = frozenset({"assertRaisesRegex", "assertRaisesRegexp", "assertRegex", "assertNotRegex"})
_MEMBERSHIP_ASSERTIONS = frozenset({"assertIn", "assertNotIn"})


@dataclass(frozen=True)
class _Needle:
    """A string that may be searched for, the literal it is written at, and the other candidates
    searched with it (the rest of a tuple it came from)."""

    text: str
    literal: cst.CSTNode
    siblings: tuple[str, ...] = ()
    from_loop: bool = False


class CudaErrorText(Rule):
    """
    ## What it does
    Flags code that recognises errors by CUDA-only wording (`"CUDA out of memory" in str(e)`),
    which ROCm builds spell with HIP, hipBLAS or MIOpen.

    Covers `"CUDA out of memory"`, `"CUDA error"`, `"cuda runtime error"`, `"CUBLAS_STATUS_"`,
    `"cuDNN error"`/`"CUDNN_STATUS_"` (as raised or lower-cased) searched with `in`/`not in`,
    `str.startswith`/`endswith`/`find`, `re.search`/`re.match`/`re.compile`,
    `pytest.raises(match=...)`, `assertRaisesRegex`, `assertIn`; the wording may come
    from a name assigned once or from a tuple a loop or `any(...)` iterates (its literal is reported).
    Not flagged: vendor-neutral text (`"out of memory" in msg`), building or logging such a message
    (`raise RuntimeError("CUDA out of memory")`), `except torch.cuda.OutOfMemoryError`, and checks that
    also match the ROCm spelling in the same condition, `if`/`elif` chain, tuple or pattern
    (`"CUDA out of memory" in msg or "HIP out of memory" in msg`, `r"(CUDA|HIP) error"`,
    `isinstance(e, torch.cuda.OutOfMemoryError) or ...`).

    ## Why is this bad on ROCm?
    ROCm builds of PyTorch raise the same exception types with HIP wording: "HIP out of memory. Tried
    to allocate ...", "HIP error: invalid device function"; BLAS failures come from hipBLAS/rocBLAS
    ("HIPBLAS_STATUS_...") and convolution failures from MIOpen. A handler keyed on the CUDA text
    silently stops matching: OOM back-off and batch-size search never trigger, retry logic re-raises,
    and tests expecting the CUDA message fail.

    ## Example
    ```python
    try:
        loss = step(batch)
    except RuntimeError as e:
        if "CUDA out of memory" not in str(e):
            raise
        batch_size //= 2
    ```

    ## Fix
    ```python
    try:
        loss = step(batch)
    except torch.cuda.OutOfMemoryError:
        batch_size //= 2
    ```
    `--unsafe-fixes` widens a literal `in`/`not in` match on a name (or `str()` of one) to both
    spellings: `"CUDA out of memory" not in str(e) and "HIP out of memory" not in str(e)`.

    ## Fix safety
    Unsafe: catching `torch.cuda.OutOfMemoryError` or widening the match changes which exceptions the
    handler takes (the CUDA text may also come from non-PyTorch libraries), so the change needs review.
    """

    code = "ROC133"
    name = "cuda-error-text"
    severity = Severity.WARNING
    fix_availability = FixAvailability.UNSAFE
    triggers = tuple(spelling.encode() for wording in _WORDINGS for spelling in wording.spellings)

    def __init__(self) -> None:
        # Several checks may iterate one tuple of markers: its literals are reported once each (only
        # once actually reported, so a gated first use does not hide an ungated later one).
        self._reported: set[cst.CSTNode] = set()

    def visit_Comparison(self, node: cst.Comparison, ctx: PythonContext) -> None:
        if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn)):
            return
        self._check(node.left, node, ctx)

    def visit_Call(self, node: cst.Call, ctx: PythonContext) -> None:
        searched = _searched_text(node, ctx)
        if searched is not None:
            self._check(searched, node, ctx)

    def _check(self, needle: cst.BaseExpression, site: cst.CSTNode, ctx: PythonContext) -> None:
        for candidate in _needles(needle, ctx):
            wording = _cuda_wording(candidate.text)
            if wording is None or _matches_rocm_too(candidate, wording, site, ctx):
                continue
            reported = candidate.literal if candidate.from_loop else report_site(ctx, candidate.literal, needle)
            if reported in self._reported:
                continue
            fix = _fix(candidate.literal, site, ctx)
            if ctx.report(reported, _message(wording), gate_on=(candidate.literal, site), fix=fix):
                self._reported.add(reported)


def _fix(literal: cst.CSTNode, site: cst.CSTNode, ctx: PythonContext) -> Fix | None:
    """`("CUDA out of memory" in text or "HIP out of memory" in text)` for a literal written as the left
    operand of `in` (`not in`: `and ... not in`). Only when the searched text is a name, an attribute or
    `str()`/`repr()` of one, so evaluating it twice changes nothing."""
    if not isinstance(site, cst.Comparison) or site.left is not literal or not isinstance(literal, cst.SimpleString):
        return None
    target = site.comparisons[0]
    if not _is_plain_text(target.comparator, ctx):
        return None
    body = literal.value[len(literal.prefix) + len(literal.quote) : len(literal.value) - len(literal.quote)]
    hip = body.replace("CUDA", "HIP").replace("cuda", "hip")
    if hip == body:
        return None
    hip_literal = f"{literal.prefix}{literal.quote}{hip}{literal.quote}"
    searched = original_text(ctx, target.comparator)
    joiner, operator = ("or", "in") if isinstance(target.operator, cst.In) else ("and", "not in")
    new = f"{original_text(ctx, site)} {joiner} {hip_literal} {operator} {searched}"
    edit = ctx.replace(site, f"({new})" if needs_parens(ctx, site) else new)
    return ctx.fix("Also match the ROCm (HIP) wording", edit, safe=False)


def _is_plain_text(expr: cst.BaseExpression, ctx: PythonContext) -> bool:
    if isinstance(expr, cst.Call):
        if ctx.qualified_name(expr.func) not in ("str", "repr") or len(expr.args) != 1:
            return False
        expr = expr.args[0].value
    return isinstance(expr, (cst.Name, cst.Attribute))


def _searched_text(call: cst.Call, ctx: PythonContext) -> cst.BaseExpression | None:
    """The argument a call searches for in some text, when it is a text-matching call."""
    func = call.func
    last = last_name(func)
    if isinstance(func, cst.Attribute) and last in _STRING_METHODS:
        return _argument_value(call, None, 0, ctx)
    if last in _REGEX_ASSERTIONS:
        return _argument_value(call, "expected_regex", 1, ctx)
    if last in _MEMBERSHIP_ASSERTIONS:
        return _argument_value(call, "member", 0, ctx)
    if last == "raises" and ctx.qualified_name(func) == "pytest.raises":
        return _argument_value(call, "match", None, ctx)
    if last in _REGEX_FUNCTION_NAMES and ctx.qualified_name(func) in _REGEX_FUNCTIONS:
        return _argument_value(call, "pattern", 0, ctx)
    return None


def _argument_value(
    call: cst.Call, keyword: str | None, position: int | None, ctx: PythonContext
) -> cst.BaseExpression | None:
    found = ctx.semantic.argument(call, keyword, position)
    return found.value if found is not None else None


# --- what is searched for -------------------------------------------------------------------------
def _needles(expr: cst.BaseExpression, ctx: PythonContext) -> list[_Needle]:
    """Strings `expr` may be: a literal, a name assigned once, conditional arms, the members of a tuple
    (`startswith(("a", "b"))`), or the elements a loop/comprehension target takes."""
    if isinstance(expr, cst.Name):
        looped = _loop_needles(expr, ctx)
        if looped is not None:
            return looped
    resolved = ctx.single_value(expr)
    if isinstance(resolved, (cst.Tuple, cst.List)):
        return _element_needles([element.value for element in resolved.elements], ctx, from_loop=False)
    return [_Needle(text, literal) for text, literal in ctx.semantic.string_sources(expr)]


def _loop_needles(name: cst.Name, ctx: PythonContext) -> list[_Needle] | None:
    """The strings a `for`/comprehension target takes when `name` is one (None when it is not); the
    element of a tuple target (`for text, code in ...`) is not followed."""
    loop = ctx.semantic.loop_target(name)
    if loop is None:
        return None
    if loop.position is not None:
        return []
    return _element_needles(ctx.semantic.iterated_values(loop.iterable), ctx, from_loop=True)


def _element_needles(elements: Sequence[cst.BaseExpression], ctx: PythonContext, from_loop: bool) -> list[_Needle]:
    members = [(ctx.string_value(element), element) for element in elements]
    texts = tuple(text for text, _ in members if text is not None)
    return [
        _Needle(text, literal, siblings=texts, from_loop=from_loop) for text, literal in members if text is not None
    ]


def _cuda_wording(text: str) -> _Wording | None:
    for wording in _WORDINGS:
        if any(spelling in text for spelling in wording.spellings):
            return wording
    return None


# --- already matching ROCm ------------------------------------------------------------------------------
def _matches_rocm_too(needle: _Needle, wording: _Wording, site: cst.CSTNode, ctx: PythonContext) -> bool:
    """The same pattern, tuple or boolean condition also matches the ROCm spelling (or, for OOM, the
    vendor-neutral text or `torch.cuda.OutOfMemoryError`)."""
    texts = [needle.text, *needle.siblings]
    conditions = _related_conditions(site, ctx)
    texts.extend(text for condition in conditions for text in _string_texts(condition, ctx))
    if any(_ROCM_WORDING.search(text) for text in texts):
        return True
    if not wording.out_of_memory:
        return False
    if any(_VENDOR_NEUTRAL_OOM.search(text) and _cuda_wording(text) is None for text in texts):
        return True
    return any(_is_oom_exception_type(node) for condition in conditions for node in ctx.semantic.descendants(condition))


def _related_conditions(site: cst.CSTNode, ctx: PythonContext) -> list[cst.CSTNode]:
    """The whole `a or b and not c` expression `site` is a part of; when that is the test of an
    `if`/`elif`, every test of the chain (`elif "HIP out of memory" in msg:` matches ROCm too)."""
    condition = whole_condition(ctx, site)
    parent = ctx.parent(condition)
    if not isinstance(parent, cst.If) or parent.test is not condition:
        return [condition]
    head = parent
    while isinstance(ctx.parent(head), cst.If) and ctx.parent(head).orelse is head:  # type: ignore[union-attr]
        head = ctx.parent(head)  # type: ignore[assignment]
    tests: list[cst.CSTNode] = []
    branch: cst.If | None = head
    while branch is not None:
        tests.append(branch.test)
        branch = branch.orelse if isinstance(branch.orelse, cst.If) else None
    return tests


def _string_texts(root: cst.CSTNode, ctx: PythonContext) -> Iterator[str]:
    for node in ctx.semantic.descendants(root):
        if isinstance(node, cst.SimpleString):
            text = ctx.string_value(node)
            if text is not None:
                yield text


def _is_oom_exception_type(node: cst.CSTNode) -> bool:
    return isinstance(node, (cst.Name, cst.Attribute)) and last_name(node) == "OutOfMemoryError"


def _message(wording: _Wording) -> str:
    spelling = wording.spellings[0]
    return f'matching "{spelling}" in error text misses ROCm, where {wording.on_rocm}; {wording.advice}'


CudaErrorText.valid = (
    Valid(
        """
        import torch

        def find_batch_size(step, batch_size: int) -> int:
            while batch_size > 1:
                try:
                    step(batch_size)
                    return batch_size
                except torch.cuda.OutOfMemoryError:
                    batch_size //= 2
                except RuntimeError as e:
                    if "out of memory" not in str(e):
                        raise
                    batch_size //= 2
            return batch_size
        """,
    ),
    # Both spellings, the exception type, or a pattern covering HIP.
    Valid(
        """
        import re
        import torch

        def is_oom(e: BaseException) -> bool:
            msg = str(e)
            if "CUDA out of memory" in msg or "HIP out of memory" in msg:
                return True
            if isinstance(e, torch.cuda.OutOfMemoryError) or "CUDA out of memory" in msg:
                return True
            if msg.startswith(("CUDA error", "HIP error")):
                return True
            return re.search(r"(CUDA|HIP) error: out of memory", msg) is not None

        def oom_kind(msg: str) -> str:
            if "CUDA out of memory" in msg:
                return "cuda"
            elif "HIP out of memory" in msg:
                return "hip"
            return ""
        """,
    ),
    Valid(
        """
        import torch

        IS_ROCM = torch.version.hip is not None

        def is_oom(err: RuntimeError) -> bool:
            if IS_ROCM:
                return "HIP out of memory" in str(err)
            return "CUDA out of memory" in str(err)

        def is_launch_failure(err: RuntimeError) -> bool:
            return "HIP error" in str(err) if IS_ROCM else "CUDA error" in str(err)
        """,
    ),
    # Raising, logging and documenting the text is not matching it.
    Valid(
        """
        import logging

        logger = logging.getLogger(__name__)
        HINTS = {"CUDA out of memory": "lower --batch-size"}

        def allocate(n: int) -> None:
            \"\"\"Raises RuntimeError("CUDA out of memory") like torch does when the pool is full.\"\"\"
            if n > 1 << 40:
                logger.error("CUDA error: requested %d bytes", n)  # mimic "CUDA error" in str(e)
                raise RuntimeError("CUDA out of memory. Tried to allocate %d bytes" % n)
        """,
    ),
    Valid(
        """
        import torch
        from torch.testing._internal.common_utils import TestCase, skipIfRocm

        class TestCudaMallocAsync(TestCase):
            @skipIfRocm
            def test_oom_message(self):
                with self.assertRaisesRegex(RuntimeError, "CUDA out of memory"):
                    torch.empty(1 << 50, device="cuda")
        """,
    ),
)
CudaErrorText.invalid = (
    Invalid(
        """
        def train_step(model, batch):
            try:
                return model(batch)
            except RuntimeError as e:
                if "CUDA out of memory" in str(e):
                    return None
                raise
        """,
        expect=("5:12-5:32",),
        message="HIP out of memory",
        fixed="""
        def train_step(model, batch):
            try:
                return model(batch)
            except RuntimeError as e:
                if "CUDA out of memory" in str(e) or "HIP out of memory" in str(e):
                    return None
                raise
        """,
    ),
    Invalid(
        """
        def should_retry(err: Exception) -> bool:
            return str(err).startswith("CUDA error: an illegal memory access")
        """,
        expect=("2:32-2:70",),
        message="HIP error",
    ),
    Invalid(
        r"""
        import re

        OOM_PATTERN = re.compile(r"CUDA out of memory\. Tried to allocate ([\d.]+) (MiB|GiB)")
        """,
        expect=("3:26-3:86",),
    ),
    Invalid(
        """
        import pytest
        import torch

        def test_huge_allocation_fails():
            with pytest.raises(RuntimeError, match="CUDA out of memory"):
                torch.empty(1 << 50, device="cuda")
        """,
        expect=("5:44-5:64",),
    ),
    Invalid(
        """
        OOM_MARKERS = (
            "out of memory",
            "CUBLAS_STATUS_ALLOC_FAILED",
        )

        def is_oom(e: Exception) -> bool:
            return any(marker in str(e) for marker in OOM_MARKERS)
        """,
        expect=("3:5-3:33",),
        message="HIPBLAS_STATUS_",
    ),
    Invalid(
        """
        import unittest

        class TestConv(unittest.TestCase):
            def test_bad_workspace(self):
                with self.assertRaisesRegex(RuntimeError, "cuDNN error: CUDNN_STATUS_BAD_PARAM"):
                    run_conv()
        """,
        expect=("5:51-5:88",),
        message="MIOpen",
    ),
    Invalid(
        """
        def classify(exc: BaseException) -> str:
            msg = str(exc).lower()
            if "cuda error" in msg or "device-side assert" in msg:
                return "fatal"
            return "retry"
        """,
        expect=("3:8-3:20",),
        fixed="""
        def classify(exc: BaseException) -> str:
            msg = str(exc).lower()
            if ("cuda error" in msg or "hip error" in msg) or "device-side assert" in msg:
                return "fatal"
            return "retry"
        """,
    ),
)
