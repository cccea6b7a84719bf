"""ROC103 alloc-conf-max-split."""

from __future__ import annotations

import ast

from rocmlint.diagnostics import Fix, FixAvailability, Severity
from rocmlint.python.fixes import (
    enclosing_statement,
    gate_statement,
    keep_on_nvidia,
    rocm_guard,
)
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import environ_writes, last_name, literal_token
from rocmlint.python.values import Follow
from rocmlint.rule import Invalid, Rule, Valid

_TOKEN = "max_split_size_mb"
# PYTORCH_ALLOC_CONF is the device-generic name PyTorch 2.9 introduced for the same settings.
_ALLOC_CONF_VARIABLES = frozenset({"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF"})
_SET_ALLOCATOR_SETTINGS = frozenset({"torch.cuda.memory._set_allocator_settings", "torch.cuda._set_allocator_settings"})
# Settings text is built with `+`, `%`, conditionals, `",".join([...])` and `"...".format(...)`.
_SETTINGS_TEXT = Follow(operators=(ast.Add, ast.Mod), joins=True, elements=True, text_methods=True)


class AllocConfMaxSplit(Rule):
    """
    ## What it does
    Flags Python code that puts `max_split_size_mb` into the caching-allocator configuration without
    a ROCm gate: `os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:128"` (also
    `PYTORCH_HIP_ALLOC_CONF` and `PYTORCH_ALLOC_CONF`, through `os.environ.setdefault`,
    `os.environ.update`, `os.putenv`), and
    `torch.cuda.memory._set_allocator_settings("max_split_size_mb:...")`. The value may be a literal,
    a name assigned once, an f-string, a concatenation or `str.format` whose literal text contains
    `max_split_size_mb`.

    ## Why is this bad on ROCm?
    ROCm builds of PyTorch run the same caching allocator on top of HIP and read these variables
    (`PYTORCH_HIP_ALLOC_CONF` is the ROCm spelling). AMD's porting checklist lists `max_split_size_mb`
    among the settings to remove on ROCm: the HIP allocator rejects it, and the process fails with a
    `RuntimeError` at startup. Where a stack accepts it, a limit tuned against CUDA fragmentation is
    still unsafe: combined with `expandable_segments:True`, reserved memory grows on every cycle until
    the device is full (pytorch/pytorch#123548, reproduced on ROCm 7.x), and on a ROCm 7.14 stack the
    combination was reported to silently zero a live allocation (ROCm/legacy-rocm-build#6603). Keep
    the key for NVIDIA only; `PYTORCH_HIP_ALLOC_CONF` lets a ROCm branch carry its own settings.

    ## In code written for ROCm
    Not flagged in code only ROCm runs: a ROCm-only branch chose its own allocator settings on the stack it runs.
    Still flagged elsewhere in a project written for AMD: the HIP allocator rejects the key whoever wrote it.

    ## Example
    ```python
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:128"
    ```

    ## Fix
    ```python
    _IS_ROCM = getattr(torch.version, "hip", None) is not None  # added once, after the imports
    if not _IS_ROCM:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:128"
    ```
    When the value carries other settings, they stay on ROCm:
    ```python
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True,max_split_size_mb:512" if not _IS_ROCM else "expandable_segments:True"
    ```

    ## Fix safety
    Safe: the `max_split_size_mb` key is dropped only when `_IS_ROCM` is true; NVIDIA keeps the
    original statement and value verbatim. No fix when the setting runs before the module imports
    torch (the fix must not move the torch import ahead of the allocator settings), nor for values
    built at run time that carry other settings too.
    """

    code = "ROC103"
    name = "alloc-conf-max-split"
    severity = Severity.ERROR
    applies_to_tests = True  # a suite that sets the key for its own runs fails at startup on ROCm
    fix_availability = FixAvailability.SAFE
    triggers = (_TOKEN.encode(),)

    def visit_Assign(self, node: ast.Assign, ctx: PythonContext) -> None:
        _check_environment(node, ctx)

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        func = node.func
        if not isinstance(func, ast.Attribute):
            return
        method = func.attr
        if method in ("setdefault", "putenv", "update"):
            _check_environment(node, ctx)
        elif method == "_set_allocator_settings" and ctx.qualified_name(func) in _SET_ALLOCATOR_SETTINGS:
            settings = ctx.semantic.positional(node, 0)
            if settings is not None:
                _check_value(settings, ctx)


def _check_environment(node: ast.Assign | ast.Call, ctx: PythonContext) -> None:
    """`os.environ["PYTORCH_CUDA_ALLOC_CONF"] = ...` and the other ways of writing it."""
    for write in environ_writes(ctx, node):
        if write.key in _ALLOC_CONF_VARIABLES:
            _check_value(write.value, ctx)


def _check_value(value: ast.expr, ctx: PythonContext) -> None:
    """Report `value` once when a literal carrying `max_split_size_mb` can reach it on ROCm."""
    if ctx.is_nvidia_gated(value):
        return  # a ROCm-only branch chose its own allocator settings
    for literal in _split_size_literals(value, ctx):
        if not ctx.is_rocm_gated(literal):
            ctx.report(value, _MESSAGE, gate_on=(literal,), fix=_fix(value, ctx))
            return


def _fix(value: ast.expr, ctx: PythonContext) -> Fix | None:
    """Drop the key on ROCm. A literal (written here or assigned once) with other settings becomes
    `"<orig>" if not IS_ROCM else "<orig minus max_split_size_mb>"`; a value holding nothing but the key
    gets its statement wrapped in `if not IS_ROCM:` (ROCm then keeps its default)."""
    literal = ctx.single_value(value) or value
    token = literal_token(ctx, literal)
    if token is not None:
        prefix, quote, body = token.prefix, token.quote, token.body
        remaining = _without_split_size(body)
        if remaining is None:
            return None
        if remaining:
            guard = rocm_guard(ctx, literal)
            if guard is None:
                return None
            rocm_text = f"{prefix}{quote}{remaining}{quote}"
            return ctx.fix(_FIX, keep_on_nvidia(ctx, literal, rocm_text, guard.name), *guard.edits)
        if literal is not value:
            return None  # a shared constant: only its uses know whether to skip the setting
    text = ctx.semantic.static_text(value)
    if text is None or not all(_TOKEN in entry for entry in text.split(",")):
        return None  # other settings would be lost with the statement
    if not _sets_one_variable(value, ctx):
        return None
    return gate_statement(ctx, value, _FIX)


def _without_split_size(body: str) -> str | None:
    """A literal's source text between its quotes with the max_split_size_mb entries removed; None
    when the text is not a plain comma-separated list (escapes)."""
    if "\\" in body:
        return None
    return ",".join(entry.strip() for entry in body.split(",") if _TOKEN not in entry and entry.strip())


def _sets_one_variable(value: ast.expr, ctx: PythonContext) -> bool:
    """The statement is one `os.environ[K] = v`, `setdefault`/`putenv` or `_set_allocator_settings` call
    (an `update` with other variables must stay). A statement sharing its line (`a; b`) passes here:
    `gate_statement` gives it no fix."""
    statement = enclosing_statement(ctx, value)
    if isinstance(statement, ast.Assign):
        return statement.value is value
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        return last_name(statement.value.func) in ("setdefault", "putenv", "_set_allocator_settings")
    return False


_FIX = "Drop max_split_size_mb from the allocator settings on ROCm"


def _split_size_literals(expr: ast.expr, ctx: PythonContext) -> list[ast.expr]:
    """The string literals (or f-string text parts) in `expr` that put `max_split_size_mb` into it. A call
    such as `conf.replace("max_split_size_mb:128", "")` that removes the key is not followed."""
    return ctx.values.trace(expr, lambda value: _split_size_step(value, ctx), _SETTINGS_TEXT)


def _split_size_step(expr: ast.expr, ctx: PythonContext) -> list[ast.expr] | None:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (str, bytes)):
        return [expr] if _TOKEN in (ctx.string_value(expr) or "") else []
    if isinstance(expr, ast.JoinedStr):
        return [part for part in expr.values if isinstance(part, ast.Constant) and _TOKEN in str(part.value)]
    return None


_MESSAGE = (
    "max_split_size_mb in the allocator config is rejected on ROCm (RuntimeError at startup) or, with "
    "expandable_segments, grows reserved memory until OOM; set it only when torch.version.hip is None"
)


AllocConfMaxSplit.valid = (
    Valid(
        """
        import os
        import torch
        if torch.version.hip:
            os.environ["PYTORCH_HIP_ALLOC_CONF"] = "garbage_collection_threshold:0.8"
        else:
            os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:128"
        """,
    ),
    Valid(
        """
        import os
        import torch
        IS_ROCM = torch.version.hip is not None

        def configure_allocator(split_mb: int) -> None:
            if IS_ROCM:
                return
            os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", f"max_split_size_mb:{split_mb}")
        """,
    ),
    Valid(
        """
        import os
        import torch
        IS_ROCM = torch.version.hip is not None
        conf = "expandable_segments:True" if IS_ROCM else "max_split_size_mb:512"
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = conf
        """,
    ),
    Valid(
        """
        import torch
        torch.version.cuda is not None and torch.cuda.memory._set_allocator_settings(
            "max_split_size_mb:256"
        )
        """,
    ),
    # Reading the setting, or mentioning it in a message or docstring, is fine.
    Valid(
        """
        import logging
        import os

        def check_allocator():
            \"\"\"Warn when PYTORCH_CUDA_ALLOC_CONF carries max_split_size_mb.\"\"\"
            conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
            if "max_split_size_mb" in conf:
                logging.warning("max_split_size_mb is set: %s", conf)
        """,
    ),
    # A different environment variable, and a value that removes the key.
    Valid(
        """
        import os
        os.environ["MY_APP_ALLOC_HINT"] = "max_split_size_mb:128"
        conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = conf.replace("max_split_size_mb:128", "")
        """,
    ),
)
AllocConfMaxSplit.invalid = (
    Invalid(
        """
        import os
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:128"
        import torch
        """,
        expect=("2:41-2:64",),
        message="max_split_size_mb",
    ),
    Invalid(
        """
        import os

        def main(args):
            if args.low_memory:
                os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", f"max_split_size_mb:{args.split_mb}")
        """,
        expect=("5:58-5:94",),
        fixed="""
        import os
        import torch
        _IS_ROCM = getattr(torch.version, "hip", None) is not None

        def main(args):
            if args.low_memory:
                if not _IS_ROCM:
                    os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", f"max_split_size_mb:{args.split_mb}")
        """,
    ),
    Invalid(
        """
        import os
        ALLOC_CONF = "expandable_segments:True,max_split_size_mb:512"
        os.environ.update({"PYTORCH_CUDA_ALLOC_CONF": ALLOC_CONF, "NCCL_DEBUG": "WARN"})
        """,
        expect=("3:47-3:57",),
        fixed="""
        import os
        import torch
        _IS_ROCM = getattr(torch.version, "hip", None) is not None
        ALLOC_CONF = "expandable_segments:True,max_split_size_mb:512" if not _IS_ROCM else "expandable_segments:True"
        os.environ.update({"PYTORCH_CUDA_ALLOC_CONF": ALLOC_CONF, "NCCL_DEBUG": "WARN"})
        """,
    ),
    Invalid(
        """
        import torch

        def load_weights(model, path):
            torch.cuda.memory._set_allocator_settings("max_split_size_mb:20")
            model.load_state_dict(torch.load(path))
        """,
        expect=("4:47-4:69",),
        fixed="""
        import torch
        _IS_ROCM = getattr(torch.version, "hip", None) is not None

        def load_weights(model, path):
            if not _IS_ROCM:
                torch.cuda.memory._set_allocator_settings("max_split_size_mb:20")
            model.load_state_dict(torch.load(path))
        """,
    ),
    Invalid(
        """
        from os import environ, putenv
        previous = environ.get("PYTORCH_HIP_ALLOC_CONF", "")
        environ["PYTORCH_HIP_ALLOC_CONF"] = previous + ",max_split_size_mb:256"
        putenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:{}".format(256))
        """,
        expect=("3:37-3:72",),
    ),
    Invalid(
        """
        import os
        if torch.cuda.is_available():
            os.environ["PYTORCH_CUDA_ALLOC_CONF"] = ",".join(
                ["garbage_collection_threshold:0.6", "max_split_size_mb:64"]
            )
        """,
        expect=("3:45-5:6",),
    ),
)
