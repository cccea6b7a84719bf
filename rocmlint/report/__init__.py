"""`rocmlint report`: a porting-readiness report built from one check run (see docs/report.md).

`model.build_model` turns FileReports and text-scan facts into a `ReportModel`; `markdown`, `html` and
`json_report` render it.
"""

from __future__ import annotations

from collections.abc import Callable

from rocmlint.report import html, json_report, markdown
from rocmlint.report.model import ReportModel, build_model

FORMATS: dict[str, Callable[[ReportModel], str]] = {
    "markdown": markdown.render,
    "html": html.render,
    "json": json_report.render,
}

__all__ = ["FORMATS", "ReportModel", "build_model"]
