"""ROC900 internal-error."""

from rocmlint.diagnostics import Severity
from rocmlint.rule import ToolRule


class InternalError(ToolRule):
    """
    ## What it does
    Reports that one of rocmlint's rules crashed on a file. The rule is skipped for the rest of that
    file; every other rule and file is still checked.

    ## Why is this bad on ROCm?
    The crashed rule did not look at this file, so hazards it would have found may be missing.

    ## Example
    ```text
    src/model.py:1:1: ROC900 rule ROC113 (capability-compare) crashed on this file: KeyError: ...
    ```

    ## Fix
    Please report it with the file (or a reduced version) attached; run with `--verbose` for the
    traceback. Meanwhile `# rocmlint: noqa: ROC900` or `per-file-ignores` silences it.

    ## Fix safety
    No fix is offered.
    """

    code = "ROC900"
    name = "internal-error"
    severity = Severity.ERROR
