"""ROC002 unused-noqa."""

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.rule import Invalid, ToolRule, Valid


class UnusedNoqa(ToolRule):
    """
    ## What it does
    Reports a `# noqa: ROCxxx` (or `// noqa: ROCxxx`) directive whose ROC codes suppress nothing on
    that line. Off by default: enable it with `extend-select = ["ROC002"]`.

    ## Why is this bad on ROCm?
    A stale suppression hides the next real hazard on that line: once the code changes, the ROCm
    problem it now contains is silenced without anyone having looked at it.

    ## Example
    ```python
    torch.compile(model, mode="default")  # noqa: ROC101
    ```

    ## Fix
    ```python
    torch.compile(model, mode="default")
    ```

    ## Fix safety
    Safe: only the unused codes (or the whole comment, when no code is left) are removed. Codes of
    other tools and bare `# noqa` comments are never touched.
    """

    code = "ROC002"
    name = "unused-noqa"
    severity = Severity.INFO
    fix_availability = FixAvailability.SAFE
    enabled_by_default = False
    triggers = (b"noqa",)
    valid = (
        Valid(
            """
            import torch
            torch.compile(m, mode='reduce-overhead')  # noqa: ROC101
            """,
        ),
        Valid(
            """
            x = 1  # noqa: E501
            """,
        ),
        Valid(
            """
            x = 1  # noqa
            """,
        ),
    )
    invalid = (
        Invalid(
            """
            x = 1  # noqa: ROC101
            """,
            expect=("1:8-1:22",),
            fixed="""
            x = 1
            """,
        ),
        Invalid(
            """
            import torch
            torch.compile(m, mode='reduce-overhead')  # noqa: ROC101, ROC105
            """,
            expect=("2:43-2:65",),
            fixed="""
            import torch
            torch.compile(m, mode='reduce-overhead')  # noqa: ROC101
            """,
        ),
        Invalid(
            """
            y = 2  # noqa: E501, ROC102
            """,
            expect=("1:8-1:28",),
            fixed="""
            y = 2  # noqa: E501
            """,
        ),
    )
