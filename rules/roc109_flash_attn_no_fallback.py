"""ROC109 flash-attn-no-fallback."""

from __future__ import annotations

import re

import libcst as cst

from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.python.conditions import enclosing_tests, test_codes
from rocmlint.python.fixes import enclosing_statement, wrap_in_try
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import leaves_quietly
from rocmlint.python.imports import imported_modules, is_type_checking, module_path_names, sole_imported_name, top_level
from rocmlint.python.lexical import import_statement_pattern
from rocmlint.rule import Invalid, Rule, Valid

FA2 = "flash_attn"
# FlashAttention-3 (Hopper) module names: CUDA-only, no ROCm build at all.
FA3 = frozenset({"flash_attn_interface", "flash_attn_3"})
_DISTRIBUTIONS = (frozenset({FA2}), FA3)  # each one's top-level names
# A condition that names flash attention decides whether to take the flash-attn path: an availability
# helper (`is_flash_attn_2_available()`), `find_spec("flash_attn")`, an opt-in flag (`use_flash_attn`)
# or `attn_implementation == "flash_attention_2"`. The other branch is the fallback.
_FLASH_CONDITION = re.compile(r"flash_?att(?:n|ention)", re.IGNORECASE)

# The prefilter: an import statement naming `flash_attn`, `flash_attn_interface` or `flash_attn_3` as the
# top-level package, not the word's far more common uses (`vllm_flash_attn`, `flash_attn_varlen_func(...)`,
# `use_flash_attn`, `from vllm....backends.flash_attn import`).
_TRIGGER_PATTERN = import_statement_pattern(r"flash_attn(?:_interface|_3)?\b")


class FlashAttnNoFallback(Rule):
    """
    ## What it does
    Flags `import flash_attn`, `from flash_attn import flash_attn_func`,
    `from flash_attn.flash_attn_interface import ...`, and the FlashAttention-3 modules
    (`import flash_attn_interface`, `flash_attn_3`) imported with no fallback, at module level or
    inside a function.

    Not flagged: imports inside `try:` that catches `ImportError`, ROCm-gated imports, imports under
    `if TYPE_CHECKING:`, relative imports, files of the flash-attn packages themselves, and imports under
    (or after an early `return` on) a condition that names flash attention: an availability helper such as
    `is_flash_attn_2_available()` or `flash_attn_triton_available()`,
    `importlib.util.find_spec("flash_attn")`, a flag assigned from one, an opt-in setting such as
    `args.use_flash_attn`, or `attn_implementation == "flash_attention_2"`. Those conditions have
    another path when flash-attn is missing.

    ## Why is this bad on ROCm?
    The `flash-attn` wheels on PyPI are CUDA builds. On ROCm flash-attn exists only as AMD's CK build
    (CDNA: MI200/MI300) or the Triton build enabled with `FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE`
    (used by vLLM for RDNA, `flash_attn_triton_available()`), and many environments have neither, so
    an unconditional import stops the program before any fallback can run. FlashAttention-3
    (`flash_attn_interface`, `flash_attn_3`) is Hopper/CUDA-only and has no ROCm build
    (pytorch/torchtitan#4778).

    ## Example
    ```python
    from flash_attn import flash_attn_func
    ```

    ## Fix
    For `from flash_attn import flash_attn_func` (`--unsafe-fixes`), three tiers: flash-attn itself
    (on ROCm the CK or Triton build), else PyTorch SDPA, else eager attention:
    ```python
    try:
        from flash_attn import flash_attn_func
    except ImportError:
        # No flash-attn build (on ROCm: the CK or Triton one): PyTorch SDPA, else eager attention.
        def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, **options):
            ...  # (batch, seqlen, heads, head_dim) layout, GQA, bottom-right causal mask
    ```
    Other imports (`flash_attn_varlen_func`, FA3's `flash_attn_interface`) get no fix: their
    signatures have no small PyTorch equivalent.

    ## Fix safety
    Unsafe: the fallback is slower than flash-attn, raises `NotImplementedError` for options it does
    not implement (`window_size`, `alibi_slopes`, `return_attn_probs`, ...), and its numerics differ
    slightly from flash-attn's kernels; review the call sites.
    """

    code = "ROC109"
    name = "flash-attn-no-fallback"
    severity = Severity.WARNING
    fix_availability = FixAvailability.UNSAFE
    triggers = (b"flash_attn",)
    trigger_pattern = _TRIGGER_PATTERN

    def visit_Import(self, node: cst.Import, ctx: PythonContext) -> None:
        self._check(node, ctx)

    def visit_ImportFrom(self, node: cst.ImportFrom, ctx: PythonContext) -> None:
        self._check(node, ctx)

    @staticmethod
    def _check(node: cst.Import | cst.ImportFrom, ctx: PythonContext) -> None:
        for imported in imported_modules(node):
            distribution = _distribution(imported.module)
            if not distribution or distribution & set(module_path_names(ctx)) or _has_fallback(imported.name, ctx):
                continue  # not flash-attn, a file of flash-attn itself, or one with a fallback
            ctx.report(imported.name, _message(imported.module), fix=_fix(imported.name, imported.module, ctx))


def _fix(reported: cst.CSTNode, module: str, ctx: PythonContext) -> Fix | None:
    """For `from flash_attn import flash_attn_func [as f]`: on ImportError, define it on PyTorch attention
    (SDPA, else eager). Other names get no fix: their signatures (varlen, kvcache, FA3's return values) have
    no small PyTorch equivalent."""
    statement_node = ctx.parent(reported)
    if module != FA2 or not isinstance(statement_node, cst.ImportFrom):
        return None
    imported, statement = sole_imported_name(statement_node), enclosing_statement(ctx, statement_node)
    if imported is None or imported[0] != "flash_attn_func" or statement is None:
        return None
    unit = ctx.module.default_indent
    handler = [line.replace("{u}", unit).replace("{name}", imported[1].value) for line in _FALLBACK]
    edit = wrap_in_try(ctx, statement, "ImportError", handler)
    return ctx.fix(_FIX, edit, safe=False) if edit is not None else None


_FIX = "Fall back to PyTorch attention (SDPA, else eager) when flash-attn is missing"
# flash_attn_func's contract: (batch, seqlen, heads, head_dim) tensors, GQA when k/v have fewer heads,
# causal masks aligned to the bottom-right corner when the query is shorter than the key.
_FALLBACK = (
    "# No flash-attn build (on ROCm: the CK or Triton one): PyTorch SDPA, else eager attention.",
    "def {name}(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, **options):",
    '{u}"""flash_attn_func on PyTorch: (batch, seqlen, heads, head_dim) in and out."""',
    "{u}import torch",
    "",
    "{u}for key, value in options.items():  # flash-attn options PyTorch lacks: only their defaults",
    "{u}{u}if value is None or isinstance(value, (bool, int, float)) and not value:",
    "{u}{u}{u}continue",
    "{u}{u}if isinstance(value, tuple) and value == (-1, -1):  # window_size: no sliding window",
    "{u}{u}{u}continue",
    '{u}{u}raise NotImplementedError(f"flash_attn_func fallback: {key}={value!r} is not supported")',
    "{u}q, k, v = (t.transpose(1, 2) for t in (q, k, v))",
    "{u}if k.shape[1] != q.shape[1]:  # grouped-query attention: repeat the key/value heads",
    "{u}{u}k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)",
    "{u}{u}v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)",
    '{u}sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)',
    "{u}if sdpa is not None and softmax_scale is None and (not causal or q.shape[2] == k.shape[2]):",
    "{u}{u}out = sdpa(q, k, v, dropout_p=dropout_p, is_causal=causal)",
    "{u}else:",
    "{u}{u}scale = q.shape[-1] ** -0.5 if softmax_scale is None else softmax_scale",
    "{u}{u}scores = torch.matmul(q, k.transpose(-2, -1)).float() * scale",
    "{u}{u}if causal:  # aligned to the bottom-right corner, as flash-attn's mask is",
    "{u}{u}{u}q_len, k_len = q.shape[2], k.shape[2]",
    "{u}{u}{u}keep = torch.ones(q_len, k_len, dtype=torch.bool, device=q.device).tril(k_len - q_len)",
    '{u}{u}{u}scores = scores.masked_fill(~keep, float("-inf"))',
    "{u}{u}weights = torch.nn.functional.dropout(scores.softmax(dim=-1), p=dropout_p).to(v.dtype)",
    "{u}{u}out = torch.matmul(weights, v)",
    "{u}return out.transpose(1, 2)",
)


def _distribution(module: str) -> frozenset[str]:
    """The top-level names of the flash-attn distribution (FA2 or FA3) a module belongs to, else empty."""
    return next((names for names in _DISTRIBUTIONS if top_level(module) in names), frozenset())


def _has_fallback(node: cst.CSTNode, ctx: PythonContext) -> bool:
    """Under an `if` on a flash-attention condition (either branch) or `if TYPE_CHECKING:`, or after an
    early `return` on a flash-attention condition (a `raise` is no fallback, as an `except ImportError:`
    that re-raises is none)."""
    if any(is_type_checking(ctx, test) or _names_flash_attention(test, ctx) for test in enclosing_tests(ctx, node)):
        return True
    return any(_names_flash_attention(test, ctx) for test in enclosing_tests(ctx, node, exits=leaves_quietly))


def _names_flash_attention(test: cst.CSTNode, ctx: PythonContext) -> bool:
    """The condition's code, or the value of a once-assigned name in it, mentions flash attention."""
    return any(_FLASH_CONDITION.search(code) for code in test_codes(ctx, test))


def _message(module: str) -> str:
    if top_level(module) in FA3:
        fallback = f"flash_attn (ROCm CK/Triton build) or {_SDPA}"
        return f"{module} is FlashAttention-3, which is CUDA-only and has no ROCm build; {_ADVICE} {fallback}"
    build = "the CK or Triton (FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE) build"
    return f"{module} is imported with no fallback, but on ROCm flash-attn exists only as {build}; {_ADVICE} {_SDPA}"


_ADVICE = "catch ImportError and fall back to"
_SDPA = "torch.nn.functional.scaled_dot_product_attention"


FlashAttnNoFallback.valid = (
    # The usual try/except fallback.
    Valid(
        "import torch.nn.functional as F\n"
        "try:\n"
        "    from flash_attn import flash_attn_func, flash_attn_varlen_func\n"
        "    HAS_FLASH_ATTN = True\n"
        "except ImportError:\n"
        "    HAS_FLASH_ATTN = False\n"
    ),
    # Megatron-style tiers: FA3, then FA2, then nothing.
    Valid(
        "try:\n"
        "    from flash_attn_3.flash_attn_interface import flash_attn_with_kvcache\n"
        "    HAVE_FA3 = True\n"
        "except ImportError:\n"
        "    try:\n"
        "        from flash_attn import flash_attn_with_kvcache\n"
        "    except ImportError:\n"
        "        flash_attn_with_kvcache = None\n"
        "    HAVE_FA3 = False\n"
    ),
    # transformers-style availability helper, and a find_spec flag.
    Valid(
        "import importlib.util\n"
        "from transformers.utils import is_flash_attn_2_available\n"
        "if is_flash_attn_2_available():\n"
        "    from flash_attn import flash_attn_func\n"
        "HAS_FA = importlib.util.find_spec('flash_attn') is not None\n"
        "\n"
        "def attention(q, k, v):\n"
        "    if not HAS_FA:\n"
        "        return sdpa(q, k, v)\n"
        "    from flash_attn.flash_attn_interface import flash_attn_func\n"
        "    return flash_attn_func(q, k, v)\n"
    ),
    # ROCm-gated: FA3 only on NVIDIA.
    Valid(
        "import torch\n"
        "IS_ROCM = torch.version.hip is not None\n"
        "if not IS_ROCM:\n"
        "    import flash_attn_interface\n"
    ),
    # TYPE_CHECKING, a relative import, and mentions in a docstring, comment and log message.
    Valid(
        '"""Uses `from flash_attn import flash_attn_func` when available."""\n'
        "import logging\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from flash_attn.layers.rotary import RotaryEmbedding\n"
        "from .flash_attn import attention  # local module, not the flash-attn package\n"
        'logging.warning("flash_attn not found, using SDPA")\n'
    ),
    # Lookalikes the prefilter skips: vLLM's own flash-attn, a backend module named flash_attn, flags, calls.
    Valid(
        "from vllm.vllm_flash_attn import flash_attn_varlen_func\n"
        "from vllm.attention.backends.flash_attn import FlashAttentionBackend\n"
        "from vllm.v1.attention.backends import flash_attn as flash_attn_module\n"
        "import vllm.flash_attn\n"
        "use_flash_attn = True\n"
        "out = flash_attn_varlen_func(q, k, v, cu_seqlens_q=cu, max_seqlen_q=n)\n"
    ),
    # The early-return flag is assigned far from the import, in a statement with no import in it.
    Valid(
        "from transformers.utils import is_flash_attn_2_available\n"
        "FA_READY = is_flash_attn_2_available()\n"
        "\n"
        "\n"
        "def attention(q, k, v):\n"
        "    if not FA_READY:\n"
        "        return q\n"
        "    from flash_attn import flash_attn_func\n"
        "    return flash_attn_func(q, k, v)\n"
    ),
)
FlashAttnNoFallback.invalid = (
    Invalid(
        "import torch\nfrom flash_attn import flash_attn_func\n\nout = flash_attn_func(q, k, v, causal=True)\n",
        line=2,
        message="scaled_dot_product_attention",
        fixed=(
            "import torch\n"
            "try:\n"
            "    from flash_attn import flash_attn_func\n"
            "except ImportError:\n"
            "    # No flash-attn build (on ROCm: the CK or Triton one): PyTorch SDPA, else eager attention.\n"
            "    def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, **options):\n"
            '        """flash_attn_func on PyTorch: (batch, seqlen, heads, head_dim) in and out."""\n'
            "        import torch\n"
            "\n"
            "        for key, value in options.items():  # flash-attn options PyTorch lacks: only their defaults\n"
            "            if value is None or isinstance(value, (bool, int, float)) and not value:\n"
            "                continue\n"
            "            if isinstance(value, tuple) and value == (-1, -1):  # window_size: no sliding window\n"
            "                continue\n"
            '            raise NotImplementedError(f"flash_attn_func fallback: {key}={value!r} is not supported")\n'
            "        q, k, v = (t.transpose(1, 2) for t in (q, k, v))\n"
            "        if k.shape[1] != q.shape[1]:  # grouped-query attention: repeat the key/value heads\n"
            "            k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)\n"
            "            v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)\n"
            '        sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)\n'
            "        if sdpa is not None and softmax_scale is None and (not causal or q.shape[2] == k.shape[2]):\n"
            "            out = sdpa(q, k, v, dropout_p=dropout_p, is_causal=causal)\n"
            "        else:\n"
            "            scale = q.shape[-1] ** -0.5 if softmax_scale is None else softmax_scale\n"
            "            scores = torch.matmul(q, k.transpose(-2, -1)).float() * scale\n"
            "            if causal:  # aligned to the bottom-right corner, as flash-attn's mask is\n"
            "                q_len, k_len = q.shape[2], k.shape[2]\n"
            "                keep = torch.ones(q_len, k_len, dtype=torch.bool, device=q.device).tril(k_len - q_len)\n"
            '                scores = scores.masked_fill(~keep, float("-inf"))\n'
            "            weights = torch.nn.functional.dropout(scores.softmax(dim=-1), p=dropout_p).to(v.dtype)\n"
            "            out = torch.matmul(weights, v)\n"
            "        return out.transpose(1, 2)\n"
            "\n"
            "out = flash_attn_func(q, k, v, causal=True)\n"
        ),
    ),
    Invalid("import torch\nimport flash_attn_interface\n", line=2, message="FlashAttention-3"),
    # A function-level import still fails when the function is called.
    Invalid(
        "def forward(self, q, k, v):\n"
        "    from flash_attn.flash_attn_interface import flash_attn_varlen_func\n"
        "    return flash_attn_varlen_func(q, k, v, self.cu_seqlens, self.cu_seqlens, self.max_s, self.max_s)\n",
        line=2,
    ),
    # An availability check that only turns the failure into another error.
    Invalid(
        "from transformers.utils import is_flash_attn_2_available\n"
        "if not is_flash_attn_2_available():\n"
        '    raise ImportError("pip install flash-attn")\n'
        "from flash_attn import flash_attn_varlen_func\n",
        line=4,
    ),
    # The last tier has no fallback; a handler that does not catch ImportError.
    Invalid(
        "try:\n"
        "    from flash_attn_interface import flash_attn_func\n"
        "except ImportError:\n"
        "    from flash_attn import flash_attn_func\n",
        line=4,
        fixed=(
            "try:\n"
            "    from flash_attn_interface import flash_attn_func\n"
            "except ImportError:\n"
            "    try:\n"
            "        from flash_attn import flash_attn_func\n"
            "    except ImportError:\n"
            "        # No flash-attn build (on ROCm: the CK or Triton one): PyTorch SDPA, else eager attention.\n"
            "        def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, **options):\n"
            '            """flash_attn_func on PyTorch: (batch, seqlen, heads, head_dim) in and out."""\n'
            "            import torch\n"
            "\n"
            "            for key, value in options.items():  # flash-attn options PyTorch lacks: only their defaults\n"
            "                if value is None or isinstance(value, (bool, int, float)) and not value:\n"
            "                    continue\n"
            "                if isinstance(value, tuple) and value == (-1, -1):  # window_size: no sliding window\n"
            "                    continue\n"
            '                raise NotImplementedError(f"flash_attn_func fallback: {key}={value!r} is not supported")\n'
            "            q, k, v = (t.transpose(1, 2) for t in (q, k, v))\n"
            "            if k.shape[1] != q.shape[1]:  # grouped-query attention: repeat the key/value heads\n"
            "                k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)\n"
            "                v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)\n"
            '            sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)\n'
            "            if sdpa is not None and softmax_scale is None and (not causal or q.shape[2] == k.shape[2]):\n"
            "                out = sdpa(q, k, v, dropout_p=dropout_p, is_causal=causal)\n"
            "            else:\n"
            "                scale = q.shape[-1] ** -0.5 if softmax_scale is None else softmax_scale\n"
            "                scores = torch.matmul(q, k.transpose(-2, -1)).float() * scale\n"
            "                if causal:  # aligned to the bottom-right corner, as flash-attn's mask is\n"
            "                    q_len, k_len = q.shape[2], k.shape[2]\n"
            "                    keep = torch.ones(q_len, k_len, dtype=torch.bool, device=q.device).tril(k_len - q_len)\n"
            '                    scores = scores.masked_fill(~keep, float("-inf"))\n'
            "                weights = torch.nn.functional.dropout(scores.softmax(dim=-1), p=dropout_p).to(v.dtype)\n"
            "                out = torch.matmul(weights, v)\n"
            "            return out.transpose(1, 2)\n"
        ),
    ),
    Invalid(
        "import torch\n"
        "try:\n"
        "    import flash_attn\n"
        "except RuntimeError:\n"
        "    flash_attn = None\n",
        line=3,
    ),
    # `torch.cuda.is_available()` is true on ROCm: not a fallback.
    Invalid(
        "import torch\n"
        "if torch.cuda.is_available():\n"
        "    from flash_attn.bert_padding import pad_input, unpad_input\n",
        line=3,
    ),
    # Odd but legal spellings: a module after others in one `import`, aliases, a non-ASCII name, tabs,
    # spaces around dots, backslash continuations, a parenthesised name list, `;` and a one-line `if`.
    Invalid("import os, flash_attn\n", line=1),
    Invalid("import torch as t, flash_attn_interface\n", line=1, message="FlashAttention-3"),
    Invalid("import numpy as np, donn\u00e9es as d, flash_attn_3.flash_attn_interface as fa3\n", line=1),
    Invalid("import\tflash_attn . bert_padding\n", line=1),
    Invalid("from \\\n    flash_attn.bert_padding import pad_input\n", line=2),
    Invalid("import os, \\\n    flash_attn_interface as fa3\n", line=2),
    Invalid(
        "from flash_attn import (\n    flash_attn_varlen_func,\n    flash_attn_with_kvcache,\n)\n",
        line=1,
    ),
    Invalid(
        "import torch\n"
        "\n"
        "class Attention(torch.nn.Module):\n"
        "    def forward(self, q, k, v):\n"
        "        if q.is_cuda: import torch.nn.functional as F; import flash_attn\n"
        "        return q\n",
        line=5,
    ),
)
