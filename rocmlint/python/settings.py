"""Settings code passes by key: the entries of an options dict (`torch.compile(options={...})`), what
PyTorch's `ConfigModule.patch` (`torch._inductor.config.patch(...)`, `torch._dynamo.config.patch(...)`) sets, and
assignments to a config module's attributes (`torch._inductor.config.triton.cudagraphs = True`).

Which keys are a hazard stays in the rule.
"""

from __future__ import annotations

import ast
from collections.abc import Container
from dataclasses import dataclass

from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import called_function, report_site

# The compilers whose `options=` are Inductor settings.
_INDUCTOR_COMPILERS = frozenset({"torch.compile", "torch.compiler.compile"})


@dataclass(frozen=True)
class Setting:
    """One key set to a value, and where it is written in the call (to report at)."""

    key: str
    value: ast.expr
    site: ast.AST  # the value literal when the call's argument holds it, else that argument


def option_settings(ctx: PythonContext, argument: ast.expr | ast.keyword) -> list[Setting]:
    """The entries of an options argument (positional, or `options=...`): `{"triton.cudagraphs": True, ...}`,
    a name bound to such a dict, or `dict(max_autotune=True)`."""
    options = argument.value if isinstance(argument, ast.keyword) else argument
    entries = ctx.semantic.dict_entries(options).items()
    return [Setting(key, value, report_site(ctx, value, argument)) for key, value in entries]


def patch_settings(ctx: PythonContext, call: ast.Call) -> list[Setting]:
    """What a `ConfigModule.patch` call sets: `patch("key", value)` (a string or a name bound to one),
    `patch({"key": value})` (or a name bound to the dict), and `patch(key=value)`."""
    first, second = ctx.semantic.positional(call, 0), ctx.semantic.positional(call, 1)
    settings: list[Setting] = []
    if first is not None and second is not None:
        key = ctx.string_value(first)
        if key is not None:
            settings.append(Setting(key, second, second))
    elif first is not None:
        settings.extend(option_settings(ctx, first))
    settings.extend(
        Setting(keyword.arg, keyword.value, keyword) for keyword in call.keywords if keyword.arg is not None
    )
    return settings


def compile_options(ctx: PythonContext, call: ast.Call) -> list[Setting]:
    """The Inductor settings `torch.compile(..., options=...)` passes (also `functools.partial(torch.compile,
    options=...)`); empty for other calls."""
    options = ctx.semantic.keyword(call, "options")
    if options is None or called_function(ctx, call) not in _INDUCTOR_COMPILERS:
        return []
    return option_settings(ctx, options)


def config_assignments(
    ctx: PythonContext, assign: ast.Assign, config_module: str, attributes: Container[str]
) -> list[Setting]:
    """`<config_module>.a.b = value` through any alias of the module (`import torch._inductor.config as c`), each
    as `Setting("a.b", value, target)`; only targets whose last attribute is in `attributes` (the cheap test)."""
    prefix = f"{config_module}."
    settings: list[Setting] = []
    for target in assign.targets:
        if not isinstance(target, ast.Attribute) or target.attr not in attributes:
            continue
        name = ctx.qualified_name(target) or ""
        if name.startswith(prefix):
            settings.append(Setting(name[len(prefix) :], assign.value, target))
    return settings
