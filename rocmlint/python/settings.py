"""Settings code passes by key: the entries of an options dict (`torch.compile(options={...})`) and what
PyTorch's `ConfigModule.patch` (`torch._inductor.config.patch(...)`, `torch._dynamo.config.patch(...)`) sets.

Which keys are a hazard stays in the rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import report_site


@dataclass(frozen=True)
class Setting:
    """One key set to a value, and where it is written in the call (to report at)."""

    key: str
    value: cst.BaseExpression
    site: cst.CSTNode  # the value literal when the call's argument holds it, else that argument


def option_settings(ctx: PythonContext, arg: cst.Arg) -> list[Setting]:
    """The entries of an options argument: `{"triton.cudagraphs": True, ...}`, a name bound to such a
    dict, or `dict(max_autotune=True)`."""
    entries = ctx.semantic.dict_entries(arg.value).items()
    return [Setting(key, value, report_site(ctx, value, arg)) for key, value in entries]


def patch_settings(ctx: PythonContext, call: cst.Call) -> list[Setting]:
    """What a `ConfigModule.patch` call sets: `patch("key", value)` (a string or a name bound to one),
    `patch({"key": value})` (or a name bound to the dict), and `patch(key=value)`."""
    first, second = ctx.semantic.positional(call, 0), ctx.semantic.positional(call, 1)
    settings: list[Setting] = []
    if first is not None and second is not None:
        key = ctx.string_value(first.value)
        if key is not None:
            settings.append(Setting(key, second.value, second))
    elif first is not None:
        settings.extend(option_settings(ctx, first))
    settings.extend(Setting(arg.keyword.value, arg.value, arg) for arg in call.args if arg.keyword is not None)
    return settings
