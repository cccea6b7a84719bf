"""ROC109 flash-attn-no-fallback."""

from __future__ import annotations

import ast
import re

from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.python.conditions import enclosing_tests, exit_tests, in_def_named, probed_before, test_mentions
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import lazy_import_with_actionable_error, leaves_quietly
from rocmlint.python.imports import imported_modules, is_type_checking, module_name_range, module_path_names, top_level
from rocmlint.python.lexical import import_statement_pattern
from rocmlint.python.stand_ins import define_on_import_error
from rocmlint.rule import Invalid, Rule, Valid

# Each flash-attn distribution's top-level modules: FlashAttention-2, and FlashAttention-3 (Hopper, CUDA-only).
FA3 = frozenset({"flash_attn_interface", "flash_attn_3"})
_DISTRIBUTIONS = (frozenset({"flash_attn"}), FA3)
# A condition naming flash attention (`is_flash_attn_2_available()`, `use_flash_attn`, `_fa3_forward`) has another path.
_FLASH_CONDITION = re.compile(r"flash_?att(?:n|ention)|(?<![a-z0-9])fa[234](?![0-9])", re.IGNORECASE)
# The prefilter: an import naming one of those as the top-level package, not `vllm_flash_attn`,
# `flash_attn_varlen_func(...)`, `use_flash_attn` or `from vllm....backends.flash_attn import`.
_TRIGGER_PATTERN = import_statement_pattern(r"flash_attn(?:_interface|_3)?\b")


class FlashAttnNoFallback(Rule):
    """
    ## What it does
    Flags `import flash_attn`, `from flash_attn import ...` (also `flash_attn.flash_attn_interface`) and the
    FlashAttention-3 modules (`flash_attn_interface`, `flash_attn_3`) imported with no fallback, in a def too.

    Not flagged: imports in a `try:` catching `ImportError` (in a def, also one raising its own error with a message;
    `Exception` too), ROCm-gated, under `if TYPE_CHECKING:` or relative; files of flash-attn itself; imports under (or
    after an early `return` on) a condition naming flash attention (`is_flash_attn_2_available()`,
    `find_spec("flash_attn")`, a flag from one, `args.use_flash_attn`, `attn_implementation == "flash_attention_2"`),
    in a def named for it, or after a test's `pytest.importorskip("flash_attn")` (skipped without it): fallback.
    Nor FlashAttention-2 when the project's ROCm container recipe (`Dockerfile.rocm`, its vLLM ROCm base image) ships it.

    ## Why is this bad on ROCm?
    PyPI's `flash-attn` wheels are CUDA builds; on ROCm flash-attn exists only as AMD's CK build (CDNA: MI200/MI300) or
    the Triton build (`FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE`, used by vLLM for RDNA, `flash_attn_triton_available()`);
    many environments have neither, so an unconditional import stops the program before any fallback can run. FA3
    (`flash_attn_interface`, `flash_attn_3`) is Hopper/CUDA-only: it has no ROCm build (pytorch/torchtitan#4778).

    ## In code written for ROCm
    In a project written for AMD (its C/C++ is AMD's, its build HIP-only, or its declared requirements need ROCm),
    `flash_attn` is the ROCm build its authors run: not flagged. FlashAttention-3 still is: it has no ROCm build.

    ## Example
    ```python
    from flash_attn import flash_attn_func
    ```

    ## Fix
    `from flash_attn import flash_attn_func` (`--unsafe-fixes`): flash-attn (on ROCm the CK or Triton build), else
    PyTorch SDPA, else eager. Others (`flash_attn_varlen_func`, FA3) have no small PyTorch equivalent: no fix.
    ```python
    try:
        from flash_attn import flash_attn_func
    except ImportError:
        # No flash-attn build (on ROCm: the CK or Triton one): PyTorch SDPA, else eager attention.
        def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, **options):
            ...  # (batch, seqlen, heads, head_dim) layout, GQA, bottom-right causal mask
    ```

    ## Fix safety
    Unsafe: the fallback is slower than flash-attn, raises `NotImplementedError` for options it does not implement
    (`window_size`, `alibi_slopes`, `return_attn_probs`, ...), and its numerics differ slightly: review the calls.
    """

    code = "ROC109"
    name = "flash-attn-no-fallback"
    severity = Severity.WARNING
    applies_to_tests = True  # an unguarded import stops the suite's collection where flash-attn is missing
    fix_availability = FixAvailability.UNSAFE
    triggers = (b"flash_attn",)
    trigger_pattern = _TRIGGER_PATTERN

    def visit_Import(self, node: ast.Import | ast.ImportFrom, ctx: PythonContext) -> None:
        for imported in imported_modules(node):
            distribution = next((names for names in _DISTRIBUTIONS if top_level(imported.module) in names), None)
            if not distribution or distribution & set(module_path_names(ctx)) or _has_fallback(imported.name, ctx):
                continue  # not flash-attn, a file of flash-attn itself, or one with a fallback
            if distribution is not FA3 and (
                ctx.project_written_for_amd or ctx.rocm_image_installs("flash-attn", "flash-attention")
            ):
                continue  # FlashAttention-2 the project runs on ROCm, so AMD's build of it (which has no FA3)
            span = module_name_range(ctx, imported)
            ctx.report(imported.name, _message(imported.module), fix=_fix(node, ctx), span=span)

    visit_ImportFrom = visit_Import


def _fix(node: ast.Import | ast.ImportFrom, ctx: PythonContext) -> Fix | None:
    """On ImportError, define the function on PyTorch (SDPA, else eager): `flash_attn_func` only."""
    edit = define_on_import_error(ctx, node) if isinstance(node, ast.ImportFrom) else None
    message = "Fall back to PyTorch attention (SDPA, else eager) when flash-attn is missing"
    return ctx.fix(message, edit, safe=False) if edit is not None else None


def _has_fallback(node: ast.AST, ctx: PythonContext) -> bool:
    """Under an `if` on a flash-attention condition (either branch) or `if TYPE_CHECKING:`, or after an early
    `return` on a flash-attention condition (a `raise` is no fallback, as a re-raising `except` is none)."""
    if any(is_type_checking(ctx, t) or test_mentions(ctx, t, _FLASH_CONDITION) for t in enclosing_tests(ctx, node)):
        return True
    if lazy_import_with_actionable_error(ctx, node) or in_def_named(ctx, node, _FLASH_CONDITION):
        return True
    probed = [package for package in probed_before(ctx, node) if _FLASH_CONDITION.search(package)]
    return bool(probed) or any(test_mentions(ctx, t, _FLASH_CONDITION) for t in exit_tests(ctx, node, leaves_quietly))


def _message(module: str) -> str:
    advice, sdpa = "catch ImportError and fall back to", "torch.nn.functional.scaled_dot_product_attention"
    if top_level(module) in FA3:
        fallback = f"flash_attn (ROCm CK/Triton build) or {sdpa}"
        return f"{module} is FlashAttention-3, which is CUDA-only and has no ROCm build; {advice} {fallback}"
    build = "the CK or Triton (FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE) build"
    return f"{module} is imported with no fallback, but on ROCm flash-attn exists only as {build}; {advice} {sdpa}"


FlashAttnNoFallback.valid = (
    # The usual try/except fallback; Megatron-style tiers: FA3, then FA2, then nothing; an opt-in backend's loader
    # that says what to install.
    Valid(
        """
        try:
            from flash_attn import flash_attn_func, flash_attn_varlen_func
            HAS_FLASH_ATTN = True
        except ImportError:
            HAS_FLASH_ATTN = False
        try:
            from flash_attn_3.flash_attn_interface import flash_attn_with_kvcache
            HAVE_FA3 = True
        except ImportError:
            try:
                from flash_attn import flash_attn_with_kvcache
            except ImportError:
                flash_attn_with_kvcache = None
            HAVE_FA3 = False
        def _load_fa4():
            try:
                from flash_attn.cute.interface import flash_attn_func
            except Exception as exc:  # ImportError among others
                raise ImportError("USE_FA4=1 needs flash-attn-4: pip install flash-attn-4") from exc
        """,
    ),
    # transformers-style availability helper, and a find_spec flag.
    Valid(
        """
        import importlib.util
        from transformers.utils import is_flash_attn_2_available
        if is_flash_attn_2_available():
            from flash_attn import flash_attn_func
        HAS_FA = importlib.util.find_spec('flash_attn') is not None
        def attention(q, k, v):
            if not HAS_FA:
                return sdpa(q, k, v)
            from flash_attn.flash_attn_interface import flash_attn_func
            return flash_attn_func(q, k, v)
        """,
    ),
    # ROCm-gated (FA3 only on NVIDIA), TYPE_CHECKING, a relative import, mentions in a docstring, comment and log.
    Valid(
        """
        \"\"\"Uses `from flash_attn import flash_attn_func` when available.\"\"\"
        import logging, torch
        IS_ROCM = torch.version.hip is not None
        if not IS_ROCM:
            import flash_attn_interface
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from flash_attn.layers.rotary import RotaryEmbedding
        from .flash_attn import attention  # local module, not the flash-attn package
        logging.warning("flash_attn not found, using SDPA")
        """,
    ),
    # Lookalikes the prefilter skips: vLLM's own flash-attn, a backend module named flash_attn, flags, calls.
    Valid(
        """
        from vllm.vllm_flash_attn import flash_attn_varlen_func
        from vllm.attention.backends.flash_attn import FlashAttentionBackend
        from vllm.v1.attention.backends import flash_attn as flash_attn_module
        import vllm.flash_attn
        use_flash_attn = True
        out = flash_attn_varlen_func(q, k, v, cu_seqlens_q=cu, max_seqlen_q=n)
        """,
    ),
    # An early-return flag far from the import; importorskip; defs named for FA3 or called only by flash-attn defs.
    Valid(
        """
        import pytest
        from transformers.utils import is_flash_attn_2_available
        FA_READY = is_flash_attn_2_available()
        def attention(q, k, v):
            if not FA_READY:
                return q
            from flash_attn import flash_attn_func
            return flash_attn_func(q, k, v)
        def test_unpad(x):
            pytest.importorskip("flash_attn")
            from flash_attn.bert_padding import unpad_input
        def _fa3_forward(q):
            from flash_attn_interface import _flash_attn_forward
        def _block(q):
            from flash_attn.flash_attn_interface import _flash_attn_varlen_forward
        def ring_flash_attn_forward(q):
            return _block(q)
        """,
    ),
)
FlashAttnNoFallback.invalid = (
    Invalid(
        """
        import torch
        from flash_attn import flash_attn_func

        out = flash_attn_func(q, k, v, causal=True)
        """,
        expect=("2:6-2:16",),
        message="scaled_dot_product_attention",
        fixed="""
        import torch
        try:
            from flash_attn import flash_attn_func
        except ImportError:
            # No flash-attn build (on ROCm: the CK or Triton one): PyTorch SDPA, else eager attention.
            def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, **options):
                \"\"\"flash_attn_func on PyTorch: (batch, seqlen, heads, head_dim) in and out.\"\"\"
                import torch

                for key, value in options.items():  # flash-attn options PyTorch lacks: only their defaults
                    if value is None or isinstance(value, (bool, int, float)) and not value:
                        continue
                    if isinstance(value, tuple) and value == (-1, -1):  # window_size: no sliding window
                        continue
                    raise NotImplementedError(f"flash_attn_func fallback: {key}={value!r} is not supported")
                q, k, v = (t.transpose(1, 2) for t in (q, k, v))
                if k.shape[1] != q.shape[1]:  # grouped-query attention: repeat the key/value heads
                    k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
                    v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)
                sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
                if sdpa is not None and softmax_scale is None and (not causal or q.shape[2] == k.shape[2]):
                    out = sdpa(q, k, v, dropout_p=dropout_p, is_causal=causal)
                else:
                    scale = q.shape[-1] ** -0.5 if softmax_scale is None else softmax_scale
                    scores = torch.matmul(q, k.transpose(-2, -1)).float() * scale
                    if causal:  # aligned to the bottom-right corner, as flash-attn's mask is
                        q_len, k_len = q.shape[2], k.shape[2]
                        keep = torch.ones(q_len, k_len, dtype=torch.bool, device=q.device).tril(k_len - q_len)
                        scores = scores.masked_fill(~keep, float("-inf"))
                    weights = torch.nn.functional.dropout(scores.softmax(dim=-1), p=dropout_p).to(v.dtype)
                    out = torch.matmul(weights, v)
                return out.transpose(1, 2)

        out = flash_attn_func(q, k, v, causal=True)
        """,
    ),
    Invalid(
        """
        import flash_attn_interface
        """,
        expect=("1:8-1:28",),
        message="FlashAttention-3",
    ),
    Invalid(
        """
        import torch as t, flash_attn_interface
        """,
        expect=("1:20-1:40",),
        message="FlashAttention-3",
    ),
    # A function-level import still fails when the function is called; a helper also called off the flash path.
    Invalid(
        """
        def forward(self, q, k, v):
            from flash_attn.flash_attn_interface import flash_attn_varlen_func
            return flash_attn_varlen_func(q, k, v, self.cu_seqlens, self.cu_seqlens, self.max_s, self.max_s)
        def _block(q):
            from flash_attn import flash_attn_func
        def ring_flash_attn_forward(q):
            return _block(q)
        def attention(q):
            return _block(q)
        """,
        expect=("2:10-2:41", "5:10-5:20"),
    ),
    # An availability check that only turns the failure into another error.
    Invalid(
        """
        from transformers.utils import is_flash_attn_2_available
        if not is_flash_attn_2_available():
            raise ImportError("pip install flash-attn")
        from flash_attn import flash_attn_varlen_func
        """,
        expect=("4:6-4:16",),
    ),
    # The last tier has no fallback; a handler that does not catch ImportError.
    Invalid(
        """
        try:
            from flash_attn_interface import flash_attn_func
        except ImportError:
            from flash_attn import flash_attn_func
        """,
        expect=("4:10-4:20",),
        fixed="""
        try:
            from flash_attn_interface import flash_attn_func
        except ImportError:
            try:
                from flash_attn import flash_attn_func
            except ImportError:
                # No flash-attn build (on ROCm: the CK or Triton one): PyTorch SDPA, else eager attention.
                def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, **options):
                    \"\"\"flash_attn_func on PyTorch: (batch, seqlen, heads, head_dim) in and out.\"\"\"
                    import torch

                    for key, value in options.items():  # flash-attn options PyTorch lacks: only their defaults
                        if value is None or isinstance(value, (bool, int, float)) and not value:
                            continue
                        if isinstance(value, tuple) and value == (-1, -1):  # window_size: no sliding window
                            continue
                        raise NotImplementedError(f"flash_attn_func fallback: {key}={value!r} is not supported")
                    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
                    if k.shape[1] != q.shape[1]:  # grouped-query attention: repeat the key/value heads
                        k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
                        v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)
                    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
                    if sdpa is not None and softmax_scale is None and (not causal or q.shape[2] == k.shape[2]):
                        out = sdpa(q, k, v, dropout_p=dropout_p, is_causal=causal)
                    else:
                        scale = q.shape[-1] ** -0.5 if softmax_scale is None else softmax_scale
                        scores = torch.matmul(q, k.transpose(-2, -1)).float() * scale
                        if causal:  # aligned to the bottom-right corner, as flash-attn's mask is
                            q_len, k_len = q.shape[2], k.shape[2]
                            keep = torch.ones(q_len, k_len, dtype=torch.bool, device=q.device).tril(k_len - q_len)
                            scores = scores.masked_fill(~keep, float("-inf"))
                        weights = torch.nn.functional.dropout(scores.softmax(dim=-1), p=dropout_p).to(v.dtype)
                        out = torch.matmul(weights, v)
                    return out.transpose(1, 2)
        """,
    ),
    Invalid(
        """
        try:
            import flash_attn
        except RuntimeError:
            flash_attn = None
        """,
        expect=("2:12-2:22",),
    ),
    # `torch.cuda.is_available()` is true on ROCm: not a fallback.
    Invalid(
        """
        import torch
        if torch.cuda.is_available():
            from flash_attn.bert_padding import pad_input, unpad_input
        """,
        expect=("3:10-3:33",),
    ),
    # Odd legal spellings: after other modules, aliases, non-ASCII, tabs, ` . `, `\`, `(...)`, `;`, a one-line `if`.
    Invalid(
        """
        import numpy as np, données as d, flash_attn_3.flash_attn_interface as fa3
        import\tflash_attn . bert_padding
        import os, flash_attn
        """,
        expect=("1:35-1:68", "2:8-2:33", "3:12-3:22"),
    ),
    Invalid(
        r"""
        from \
            flash_attn.bert_padding import pad_input
        import os, \
            flash_attn_interface as fa3
        """,
        expect=("2:5-2:28", "4:5-4:25"),
    ),
    Invalid(
        """
        from flash_attn import (
            flash_attn_varlen_func,
            flash_attn_with_kvcache,
        )
        """,
        expect=("1:6-1:16",),
    ),
    Invalid(
        """
        import torch

        class Attention(torch.nn.Module):
            def forward(self, q, k, v):
                if q.is_cuda: import torch.nn.functional as F; import flash_attn
                return q
        """,
        expect=("5:63-5:73",),
    ),
)
