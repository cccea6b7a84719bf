"""`rocmlint report`: a porting-readiness report built from one check run (see docs/report.md).

`model.build_model` turns FileReports and text-scan facts into a `ReportModel`; `markdown`, `html` and
`json_report` render it.
"""
