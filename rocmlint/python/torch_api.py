"""Where PyTorch APIs take a device: the arguments a device-taking call interprets as a device
(`torch.device(...)`, `.to(...)`, `device=`, `map_location=`, `device_type=`).

Which device strings are a hazard stays in the rule.
"""

from __future__ import annotations

import libcst as cst

from rocmlint.python.frontend import PythonContext

# Keyword arguments that take a device on any call (torch.load's `map_location` included).
_DEVICE_KEYWORDS = frozenset({"device", "map_location"})
# Calls whose first positional argument is a device.
_DEVICE_CALLS = frozenset(
    {
        "torch.device",
        "torch.set_default_device",
        "torch.cuda.set_device",
        "torch.cuda.device",
        "torch.autocast",
        "torch.amp.autocast",
        "torch.amp.GradScaler",
    }
)


def device_arguments(ctx: PythonContext, call: cst.Call) -> list[cst.BaseExpression]:
    """The argument expressions of `call` a device-taking API interprets as a device: `device=` and
    `map_location=` of any call, every positional argument of `.to(...)`, `device_type=` of a torch API,
    and the first positional argument of `torch.device`, `torch.cuda.set_device`, `torch.autocast`, ..."""
    values = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value in _DEVICE_KEYWORDS]
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
    if method == "to":
        values.extend(arg.value for arg in call.args if arg.keyword is None and not arg.star)
        return values
    device_type = ctx.semantic.keyword(call, "device_type")
    first = ctx.semantic.positional(call, 0)
    if device_type is None and first is None:
        return values
    name = ctx.qualified_name(call.func) or ""
    if device_type is not None and name.startswith("torch."):
        values.append(device_type.value)  # torch.autocast(device_type=...), torch.amp.GradScaler(...)
    if first is not None and name in _DEVICE_CALLS:
        values.append(first.value)
    return values
