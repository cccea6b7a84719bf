"""ROC111's cheap test before its questions about a Name (`torch_api.names_that_may_hold`) never spares a Name one
of them says yes for: on the rule's examples, tricky bindings, the fixtures and the front end's own files."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from rocmlint.rules.roc111_torch_version_cuda import TORCH_VERSION_CUDA, TorchVersionCuda
from snippets import parse

from rocmlint.python.torch_api import flag_from_test_of, names_that_may_hold, unguarded_fallback_to

ROOT = Path(__file__).resolve().parent.parent
PYTHON_FILES = sorted(
    [*ROOT.glob("fixtures/**/*.py"), ROOT / "rocmlint/python/torch_api.py", ROOT / "rocmlint/python/values.py"]
)

BINDINGS = [
    "from torch.version import cuda\nint(cuda)\n",
    "from torch.version import cuda as v\nv.split('.')\n",
    "import torch.version.cuda as v\nv.split('.')\n",
    "import torch\nV = torch.version.cuda\nV.split('.')\n",
    "import torch, os\nV = os.getenv('X') or torch.version.cuda\nV.split('.')\n",
    "import torch\nif (v := torch.version.cuda) is None: pass\nv.split('.')\n",
    "import torch\ndef f():\n    global V\n    V = torch.version.cuda\nf()\nV.split('.')\n",
    "import torch\nfor v in [torch.version.cuda]:\n    v.split('.')\n",
    "import torch\nuse = torch.version.cuda is not None\nd = 'cuda' if use else 'cpu'\n",
    "import torch\nmatch torch.version.cuda:\n    case str() as v:\n        v.split('.')\n",
    "import torch\nf = lambda v=torch.version.cuda: v.split('.')\n",
    "import torch\ntry:\n    pass\nexcept E as v:\n    v.split('.')\n",
]


def _examples() -> list[str]:
    return [example.code for example in (*TorchVersionCuda.valid, *TorchVersionCuda.invalid)]


def _spared_names_say_no(code: str, path: str = "example.py") -> int:
    snippet = parse(code, path)
    ctx = snippet.ctx
    may_hold = names_that_may_hold(ctx, TORCH_VERSION_CUDA)
    spared = 0
    for node in snippet.semantic.parents:
        if not isinstance(node, ast.Name) or node.id in may_hold:
            continue
        spared += 1
        assert ctx.qualified_name(node) != TORCH_VERSION_CUDA, (code, node.id)
        assert not unguarded_fallback_to(ctx, node, TORCH_VERSION_CUDA), (code, node.id)
        assert not flag_from_test_of(ctx, node, TORCH_VERSION_CUDA), (code, node.id)
    return spared


@pytest.mark.parametrize("code", [*BINDINGS, *_examples()])
def test_a_spared_name_is_never_the_version_nor_holds_it(code: str) -> None:
    _spared_names_say_no(code)


@pytest.mark.parametrize("code", BINDINGS)
def test_every_binding_of_the_version_is_asked_about(code: str) -> None:
    snippet = parse(code)
    may_hold = names_that_may_hold(snippet.ctx, TORCH_VERSION_CUDA)
    assert {"v", "V", "cuda", "use"} & may_hold


def test_spared_names_on_real_files_say_no() -> None:
    spared = sum(_spared_names_say_no(path.read_text(encoding="utf-8"), str(path)) for path in PYTHON_FILES)
    assert spared > 500  # most names are imports and builtins
