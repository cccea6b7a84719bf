"""Code written for another accelerator, known from where it sits.

A project that supports several accelerators keeps each one's code apart: a backend tree
(`backends/gaudi/server/...`), a platform module (`platforms/xpu.py`), a worker (`hpu_worker.py`), a test
folder (`test/xpu/`). A folder or file named for another accelerator holds code that runs on neither a ROCm
nor an NVIDIA GPU, so nothing in it is a porting hazard. Only the path below the project's root counts (a
checkout that itself sits in a folder called `xpu` is not XPU code), and only whole words of a name count
(`hpu_worker`, `vllm_hpu_extension`; not `cpu`, not `dumps`).
"""

from __future__ import annotations

import os
import re

from rocmlint.data import load

_WORDS = frozenset(load("vendor_packages")["other_accelerator_words"])
_WORD = re.compile(r"[a-z0-9]+")


def other_accelerator_in_path(path: str, root: str) -> str | None:
    """The word naming another accelerator in a folder of `path` below `root`, or in its file name; None
    when there is none (or `path` is not below `root`)."""
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    if relative.startswith(".."):
        return None
    parts = relative.replace("\\", "/").split("/")
    names = [*parts[:-1], os.path.splitext(parts[-1])[0]]
    for name in names:
        for word in _WORD.findall(name.lower()):
            if word in _WORDS:
                return word
    return None
