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
        Valid("import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = False if IS_ROCM else True\n"),
        Valid("def broken(:\n    pass  # no rule has anything to look for here, so it is not read\n"),
    )
    invalid = (
        Invalid("import torch\nmodel = torch.compile(model, mode='reduce-overhead'\n"),
        Invalid("import torch\nmode = 'reduce-overhead\n", line=2),
        Invalid("if True:\nimport pynvml\n"),
        Invalid("# -*- coding: latin-1 -*-\nimport pynvml\n\x00\x01binary\n"),
    )
