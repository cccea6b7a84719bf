"""PyTorch stand-ins for functions of optional CUDA packages: the code a fix defines, under the imported
name, when `from <package> import <function>` fails (`try: ... except ImportError: def <function>(...)`).

Which imports are a hazard stays in the rule; this module knows which functions PyTorch can stand in for
and how.
"""

from __future__ import annotations

import ast

from rocmlint.diagnostics import Edit
from rocmlint.python.fixes import enclosing_statement, indent_unit, wrap_in_try
from rocmlint.python.frontend import PythonContext
from rocmlint.python.imports import imported_modules, sole_imported_name

# flash_attn_func's contract: (batch, seqlen, heads, head_dim) tensors, GQA when k/v have fewer heads,
# causal masks aligned to the bottom-right corner when the query is shorter than the key. `{u}` is one
# indentation unit, `{name}` the name the import binds.
_FLASH_ATTN_FUNC = (
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
# Fully qualified function -> its stand-in. Only functions whose signature has a small PyTorch equivalent:
# flash-attn's varlen and kvcache variants and FlashAttention-3's functions (other return values) have none.
_STAND_INS = {"flash_attn.flash_attn_func": _FLASH_ATTN_FUNC}


def define_on_import_error(ctx: PythonContext, import_from: ast.ImportFrom) -> Edit | None:
    """For `from <module> import <function> [as <name>]` of a function with a stand-in: wrap the statement
    in `try:` and define `<name>` as the stand-in under `except ImportError:`. None for a relative import,
    several names or `*`, a function with no stand-in, or a statement that cannot be re-indented."""
    modules, imported = imported_modules(import_from), sole_imported_name(import_from)
    statement = enclosing_statement(ctx, import_from)
    if not modules or imported is None or statement is None:
        return None
    stand_in = _STAND_INS.get(f"{modules[0].module}.{imported[0]}")
    if stand_in is None:
        return None
    unit, name = indent_unit(ctx), imported[1]
    handler = [line.replace("{u}", unit).replace("{name}", name) for line in stand_in]
    return wrap_in_try(ctx, statement, "ImportError", handler)
