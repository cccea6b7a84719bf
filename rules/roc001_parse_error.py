"""ROC001 parse-error."""

from rocmlint.diagnostics import Severity
from rocmlint.rule import Invalid, ToolRule, Valid


class ParseError(ToolRule):
    """
    ## What it does
    Reports a file that cannot be checked: it is binary, not valid text in its declared encoding, too
    large, or not syntactically valid Python. The run goes on with the other files.

    Only files that some enabled rule needs to read are decoded and parsed: a broken file that contains
    none of the rules' trigger words (`torch.compile`, `allow_tf32`, `pynvml`, ...) is skipped unread,
    like every other file without triggers.

    ## Why is this bad on ROCm?
    A file rocmlint cannot read is a file whose ROCm hazards nobody has looked at. It usually also
    fails to import or compile, on every vendor.

    ## Example
    ```python
    torch.backends.cuda.matmul.allow_tf32 = (
    ```

    ## Fix
    Make the file parse (or exclude it with `extend-exclude` if it is generated or a template).

    ## Fix safety
    No fix is offered.
    """

    code = "ROC001"
    name = "parse-error"
    severity = Severity.ERROR
    valid = (
        Valid(
            """
            import torch

            torch.backends.cuda.matmul.allow_tf32 = False if IS_ROCM else True
            """,
        ),
        Valid(
            """
            def broken(:
                pass  # no rule has anything to look for here, so it is not read
            """,
        ),
    )
    invalid = (
        Invalid(
            """
            import torch
            model = torch.compile(model, mode='reduce-overhead'
            """,
            expect=("2:22-2:22",),
        ),
        Invalid(
            """
            import torch
            mode = 'reduce-overhead
            """,
            expect=("2:8-2:8",),
        ),
        Invalid(
            """
            if True:
            import pynvml
            """,
            expect=("2:1-2:1",),
        ),
        Invalid(
            """
            # -*- coding: latin-1 -*-
            import pynvml
            \x00\x01binary
            """,
            expect=("1:1-1:1",),
        ),
    )
