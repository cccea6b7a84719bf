"""The C/C++/CUDA speed work changes no result: ROC208's prefilter context and the front end's node order."""

from __future__ import annotations

from pathlib import Path

import pytest
import tree_sitter
from conftest import codes_with_prefilter

from rocmlint.config import Overrides, Settings
from rocmlint.cuda import frontend
from rocmlint.engine import prefilter_for
from rocmlint.registry import all_rules

SETTINGS = Overrides(select=("ROC2",)).apply(Settings(root=Path.cwd()))

# ROC208 findings whose names match its patterns only case-insensitively: the prefilter must keep them.
UNUSUAL_SPELLINGS = [
    "__global__ void k(int* out) {\n  int THREAD_ID = threadIdx.x;\n  out[THREAD_ID % 32] = 0;\n}\n",
    "__device__ void k(int TiD, int* out) {\n  out[TiD & 31] = 0;\n}\n",
    "__device__ void k(int Tx, int* out) {\n  out[Tx >> 5] = 0;\n}\n",
    "__device__ void k(int x, int* out) {\n  int WID = x >> 5;\n  out[WID] = 0;\n}\n",
    "#define K_WARP_Size 32\n",
    "__global__ void k(int* out) {\n  out[blockDim.x / 32] = 0;\n}\n",
    "#define WARP_SIZE 0x20\n",
]


def _codes(source: str, prefilter: bool) -> list[str]:
    return codes_with_prefilter("example.cu", source, SETTINGS, prefilter)


@pytest.mark.parametrize("source", UNUSUAL_SPELLINGS)
def test_roc208_context_keeps_every_spelling(source: str) -> None:
    assert "ROC208" in _codes(source, prefilter=False)
    assert _codes(source, prefilter=True) == _codes(source, prefilter=False)


def test_roc208_skips_numbers_without_warp_context() -> None:
    data = b"int table[32];\nfloat scale = 16.0f;\n"
    assert "ROC208" not in [rule.code for rule in prefilter_for("cuda", SETTINGS.enabled_codes).rules_for(data)]


def test_source_order_puts_outer_nodes_first() -> None:
    source = b"int f(int a) { return g(h(a) % 32) + a; }\nenum { A, B = 2 };\n"
    tree = frontend.parse(source)
    query = frontend._query(frontend.visited_types(tuple(r for r in all_rules() if r.language == "cuda")))
    nodes = tree_sitter.QueryCursor(query).captures(tree.root_node).get("node", [])
    expected = sorted(nodes, key=lambda n: (n.start_byte, -n.end_byte))
    assert [(n.start_byte, n.end_byte) for n in frontend._source_order(nodes)] == [
        (n.start_byte, n.end_byte) for n in expected
    ]
