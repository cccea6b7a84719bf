"""ROC109 flash-attn-no-fallback."""

from __future__ import annotations

import re
from pathlib import PurePath

import libcst as cst

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import leaves_quietly, statements_before
from rocmlint.python.scopes import dotted_name
from rocmlint.rule import Invalid, Rule, Valid

FA2 = "flash_attn"
# FlashAttention-3 (Hopper) module names: CUDA-only, no ROCm build at all.
FA3 = frozenset({"flash_attn_interface", "flash_attn_3"})
# A condition that names flash attention decides whether to take the flash-attn path: an availability
# helper (`is_flash_attn_2_available()`), `find_spec("flash_attn")`, an opt-in flag (`use_flash_attn`)
# or `attn_implementation == "flash_attention_2"`. The other branch is the fallback.
_FLASH_CONDITION = re.compile(r"flash_?att(?:n|ention)", re.IGNORECASE)


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
    ```python
    try:
        from flash_attn import flash_attn_func
    except ImportError:
        flash_attn_func = None  # fall back to torch.nn.functional.scaled_dot_product_attention
    ```

    ## Fix safety
    Unsafe: the fallback needs a second attention path (ROCm flash-attn build, Triton build, or
    `scaled_dot_product_attention`, which takes a different tensor layout) at every call site.
    """

    code = "ROC109"
    name = "flash-attn-no-fallback"
    severity = Severity.WARNING
    fix_availability = FixAvailability.UNSAFE
    triggers = (b"flash_attn",)

    def visit_Import(self, node: cst.Import, ctx: PythonContext) -> None:
        for alias in node.names:
            module = dotted_name(alias.name) or ""
            if _flash_module(module) is not None:
                self._check(alias.name, module, ctx)

    def visit_ImportFrom(self, node: cst.ImportFrom, ctx: PythonContext) -> None:
        if node.relative or node.module is None:
            return
        module = dotted_name(node.module) or ""
        if _flash_module(module) is not None:
            self._check(node.module, module, ctx)

    def _check(self, reported: cst.CSTNode, module: str, ctx: PythonContext) -> None:
        if _inside_same_distribution(module, ctx) or _has_fallback(reported, ctx):
            return
        ctx.report(reported, _message(module))


def _flash_module(module: str) -> str | None:
    """The flash-attn distribution a module belongs to (`flash_attn` or a FA3 name), else None."""
    top = module.split(".", 1)[0]
    if top == FA2 or top in FA3:
        return top
    return None


def _inside_same_distribution(module: str, ctx: PythonContext) -> bool:
    """The importing file is part of flash-attn itself (`flash_attn/...`, `hopper/flash_attn_3/...`,
    `hopper/flash_attn_interface.py`)."""
    imported = _flash_module(module)
    parts = (ctx.semantic.package or "").split(".") + [PurePath(ctx.source.path).stem]
    packages = {_flash_module(part) for part in parts}
    return imported in packages or (imported in FA3 and bool(packages & FA3))


def _has_fallback(node: cst.CSTNode, ctx: PythonContext) -> bool:
    """Under an `if` on a flash-attention condition (either branch), after an early `return` on one,
    or under `if TYPE_CHECKING:`."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.If) and child in (ancestor.body, ancestor.orelse):
            if _is_type_checking(ancestor.test, ctx) or _names_flash_attention(ancestor.test, ctx):
                return True
        if isinstance(ancestor, (cst.IndentedBlock, cst.Module)) and _exits_early_on_flash_check(ancestor, child, ctx):
            return True
        child = ancestor
    return False


def _is_type_checking(test: cst.BaseExpression, ctx: PythonContext) -> bool:
    return (ctx.qualified_name(test) or "").rsplit(".", 1)[-1] == "TYPE_CHECKING"


def _exits_early_on_flash_check(
    block: cst.IndentedBlock | cst.Module, statement: cst.CSTNode, ctx: PythonContext
) -> bool:
    """`if not has_flash_attn: return ...` before `statement`: a path that skips the import and carries
    on (a `raise` is no fallback, as an `except ImportError:` that re-raises is none)."""
    return any(
        isinstance(earlier, cst.If) and leaves_quietly(earlier.body) and _names_flash_attention(earlier.test, ctx)
        for earlier in statements_before(block, statement)
    )


def _names_flash_attention(test: cst.CSTNode, ctx: PythonContext) -> bool:
    """The condition's code, or the value of a once-assigned name in it, mentions flash attention."""
    if _FLASH_CONDITION.search(ctx.code_of(test)):
        return True
    names = (node for node in ctx.semantic.descendants(test) if isinstance(node, cst.Name))
    for name in names:
        value = ctx.single_value(name)
        if value is not None and value is not name and _FLASH_CONDITION.search(ctx.code_of(value)):
            return True
    return False


def _message(module: str) -> str:
    if _flash_module(module) in FA3:
        return (
            f"{module} is FlashAttention-3, which is CUDA-only and has no ROCm build; catch ImportError and "
            "fall back to flash_attn (ROCm CK/Triton build) or torch.nn.functional.scaled_dot_product_attention"
        )
    return (
        f"{module} is imported with no fallback, but on ROCm flash-attn exists only as the CK or Triton "
        "(FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE) build; catch ImportError and fall back to "
        "torch.nn.functional.scaled_dot_product_attention"
    )


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
)
FlashAttnNoFallback.invalid = (
    Invalid(
        "import torch\nfrom flash_attn import flash_attn_func\n\nout = flash_attn_func(q, k, v, causal=True)\n",
        line=2,
        message="scaled_dot_product_attention",
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
)
