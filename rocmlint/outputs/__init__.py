"""Output formats: thin views over the same list of Diagnostics."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rocmlint.diagnostics import Diagnostic
from rocmlint.outputs import github, gitlab, json_format, sarif, text

Renderer = Callable[[Sequence[Diagnostic]], str]

FORMATS: dict[str, Renderer] = {
    "text": text.render,
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github.render,
    "gitlab": gitlab.render,
}
