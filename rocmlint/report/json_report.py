"""The report as JSON, for dashboards and for diffing two runs. Same content as the other views."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from rocmlint.report.model import DirNode, ReportModel

SCHEMA = "rocmlint-report/1"
# Fields that hold (code, count) or (path, count) pairs: shown as objects, which read better than pairs.
_PAIRS = {"codes": ("code", "count"), "files": ("path", "count")}


def render(model: ReportModel) -> str:
    return json.dumps(to_data(model), indent=2, ensure_ascii=False) + "\n"


def to_data(model: ReportModel) -> dict[str, Any]:
    data: dict[str, Any] = {"schema": SCHEMA}
    for f in dataclasses.fields(model):
        value = getattr(model, f.name)
        data[f.name] = _directory(value) if isinstance(value, DirNode) else _plain(value, f.name)
    return data


def _directory(node: DirNode) -> dict[str, Any]:
    return {
        "path": node.path,
        "name": node.name,
        "total": node.total,
        "own": node.own,
        "files": node.files,
        "by_severity": dict(node.by_severity),
        "children": [_directory(child) for child in node.children],
    }


def _plain(value: Any, name: str = "") -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name), f.name) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        if name in _PAIRS and all(_is_pair(item) for item in value):
            first, second = _PAIRS[name]
            return [{first: a, second: b} for a, b in value]
        return [_plain(item) for item in value]
    return value


def _is_pair(item: Any) -> bool:
    return isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], int)
