"""ROC133 cuda-error-text."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.python.conditions import chain_tests
from rocmlint.python.embedded import string_token
from rocmlint.python.fixes import also_searched
from rocmlint.python.flow import only_picks_display, pairs_with_advice
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import caught_earlier, last_name, report_site
from rocmlint.python.text_search import Needle, is_text_of_name, membership_needle, needles, searched_text, string_texts
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
# Text that shows the author already matches the ROCm spelling next to the CUDA one (also after a pattern's `\b`).
_ROCM_WORDING = re.compile(r"(?:(?<![a-z])|(?<=\\b))(?:hip|rocm|miopen|rocblas)", re.IGNORECASE)
# "out of memory" with no device named before it (`" out of memory."`, `"error: out of memory"`), which ROCm's
# "HIP out of memory" contains too; "XPU out of memory." names another device.
_VENDOR_NEUTRAL_OOM = re.compile(r"(?<!\w )out of memory", re.IGNORECASE)
_OOM_TYPE = "OutOfMemoryError"  # torch's, raised by ROCm builds too


class CudaErrorText(Rule):
    """
    ## What it does
    Flags code that recognises errors by CUDA-only wording (`"CUDA out of memory" in str(e)`), which ROCm builds spell
    with HIP, hipBLAS or MIOpen.

    Covers `"CUDA out of memory"`, `"CUDA error"`, `"cuda runtime error"`, `"CUBLAS_STATUS_"`, `"cuDNN error"`/
    `"CUDNN_STATUS_"` (as raised or lower-cased) searched with `in`/`not in`, `str.startswith`/`endswith`/`find`,
    `re.search`/`re.match`/`re.compile`, `pytest.raises(match=...)`, `assertRaisesRegex`, `assertIn`; the wording may
    come from a name assigned once or from a tuple a loop or `any(...)` iterates (its literal is reported).
    Not flagged: vendor-neutral text (`"out of memory" in msg`, not `"XPU out of memory."`), a match only picking the
    message logged (or the advice beside it in a table), building or logging such a message (`raise RuntimeError("CUDA
    out of memory")`), `except torch.cuda.OutOfMemoryError` (or an earlier one), checks also matching the ROCm spelling
    in the same condition, chain (of `elif`s or conditional expressions), tuple (of patterns too) or pattern (`"CUDA
    out of memory" in msg or "HIP out of memory" in msg`, `r"(CUDA|HIP) error"`, `isinstance(e,
    torch.cuda.OutOfMemoryError) or ...`).

    Test files are not checked: a suite mostly matches CUDA wording in errors it raises itself (mocks, fakes) or asserts
    the message of an error it provokes, which fails visibly on ROCm; a handler in the library silently stops matching.

    ## Why is this bad on ROCm?
    ROCm builds of PyTorch raise the same exception types with HIP wording: "HIP out of memory. Tried to allocate ...",
    "HIP error: invalid device function"; BLAS failures come from hipBLAS/rocBLAS ("HIPBLAS_STATUS_...") and
    convolution failures from MIOpen. A handler keyed on the CUDA text silently stops matching: OOM back-off and
    batch-size search never trigger, retry logic re-raises, and tests expecting the CUDA message fail.

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
    applies_to_tests = False
    fix_availability = FixAvailability.UNSAFE
    triggers = tuple(spelling.encode() for wording in _WORDINGS for spelling in wording.spellings)

    def __init__(self) -> None:
        # Several checks may iterate one tuple of markers: its literals are reported once each (only
        # once actually reported, so a gated first use does not hide an ungated later one).
        self._reported: set[ast.AST] = set()

    def visit_Compare(self, node: ast.Compare, ctx: PythonContext) -> None:
        needle = membership_needle(node)
        if needle is not None:
            self._check(needle, node, ctx)

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        searched = searched_text(ctx, node)
        if searched is not None:
            self._check(searched, node, ctx)

    def _check(self, needle: ast.expr, site: ast.expr, ctx: PythonContext) -> None:
        if only_picks_display(ctx, site) or pairs_with_advice(ctx, site):
            return
        for candidate in needles(ctx, needle):
            wording = _cuda_wording(candidate.text)
            if wording is None or _matches_rocm_too(candidate, wording, site, ctx):
                continue
            reported = candidate.literal if candidate.from_loop else report_site(ctx, candidate.literal, needle)
            if reported in self._reported:
                continue
            fix = _fix(candidate.literal, site, ctx)
            if ctx.report(reported, _message(wording), gate_on=(candidate.literal, site), fix=fix):
                self._reported.add(reported)


def _fix(literal: ast.AST, site: ast.expr, ctx: PythonContext) -> Fix | None:
    """`("CUDA out of memory" in text or "HIP out of memory" in text)` for a literal written as the left
    operand of `in` (`not in`: `and ... not in`). Only when the searched text is a name, an attribute or
    `str()`/`repr()` of one, so evaluating it twice changes nothing."""
    if not isinstance(site, ast.Compare) or site.left is not literal or not isinstance(literal, ast.Constant):
        return None
    if not is_text_of_name(ctx, site.comparators[0]):
        return None
    written = string_token(ctx.code_of(literal))
    if written is None:
        return None
    prefix, quote, body = written.prefix, written.quote, written.body
    hip = body.replace("CUDA", "HIP").replace("cuda", "hip")
    if hip == body:
        return None
    edit = also_searched(ctx, site, f"{prefix}{quote}{hip}{quote}")
    return ctx.fix("Also match the ROCm (HIP) wording", edit, safe=False)


def _cuda_wording(text: str) -> _Wording | None:
    for wording in _WORDINGS:
        if any(spelling in text for spelling in wording.spellings):
            return wording
    return None


def _matches_rocm_too(needle: Needle, wording: _Wording, site: ast.expr, ctx: PythonContext) -> bool:
    """The same pattern, tuple or boolean condition also matches the ROCm spelling (or, for OOM, the
    vendor-neutral text or `torch.cuda.OutOfMemoryError`)."""
    texts = [needle.text, *needle.siblings]
    beside = ctx.parent(site)
    if isinstance(beside, (ast.Tuple, ast.List, ast.Set)):  # the patterns beside: `(re.compile(...), re.compile(...))`
        texts.extend(string_texts(ctx, beside))
    conditions = chain_tests(ctx, site)
    texts.extend(text for condition in conditions for text in string_texts(ctx, condition))
    if any(_ROCM_WORDING.search(text) for text in texts):
        return True
    if not wording.out_of_memory:
        return False
    if any(_VENDOR_NEUTRAL_OOM.search(text) and _cuda_wording(text) is None for text in texts):
        return True
    nodes = (node for condition in conditions for node in ctx.semantic.descendants(condition))
    typed = any(isinstance(node, (ast.Name, ast.Attribute)) and last_name(node) == _OOM_TYPE for node in nodes)
    return typed or caught_earlier(ctx, site, _OOM_TYPE)  # an earlier `except ...OutOfMemoryError:` takes ROCm's


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
                    if "CUDA out of memory" not in str(e):  # other OOMs: torch's (ROCm's too) is caught above
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
        LOG_ERRORS = (re.compile(r"\\bCUDA out of memory\\b", re.IGNORECASE), re.compile(r"\\bHIP out of memory\\b"))
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
    # A test suite's file: the error text is its own mock's.
    Valid(
        """
        import pytest
        from unittest import mock

        def test_step_gives_up_after_oom(trainer):
            with mock.patch.object(trainer, "step", side_effect=RuntimeError("CUDA out of memory")):
                with pytest.raises(RuntimeError, match="CUDA out of memory"):
                    trainer.fit()
        """,
        path="tests/test_trainer.py",
    ),
    # The match only picks which message is shown.
    Valid(
        """
        def probe_fbgemm(run):
            try:
                return run()
            except Exception as e:
                known = any(marker in str(e).lower() for marker in ("cuda error", "no kernel image"))
                if known:
                    print("FBGEMM cannot load; using Triton")
                else:
                    print(f"FBGEMM cannot load ({e}); using Triton")
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
        expect=("2:26-2:86",),
    ),
    Invalid(
        """
        import pytest
        import torch
        def test_huge_allocation_fails():
            with pytest.raises(RuntimeError, match="CUDA out of memory"):
                torch.empty(1 << 50, device="cuda")
        """,
        expect=("4:44-4:64",),
    ),
    Invalid(
        """
        OOM_MARKERS = ("out of memory", "CUBLAS_STATUS_ALLOC_FAILED")
        DEVICE_OOM = ["CUDA out of memory.", "XPU out of memory."]  # another device's text matches no HIP one
        def is_oom(e: Exception) -> bool:
            return any(marker in str(e) for marker in OOM_MARKERS) or any(m in str(e) for m in DEVICE_OOM)
        """,
        expect=("1:33-1:61", "2:15-2:36"),
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
        expect=("4:51-4:88",),
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
