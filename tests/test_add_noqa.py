"""`rocmlint check --add-noqa`: a comment per diagnostic where suppression reads it, merged into existing
directives, idempotent, never inside a string, with the file's encoding, line endings, BOM and mode kept."""

from __future__ import annotations

import codecs
import stat
from pathlib import Path

import pytest
from conftest import write_tree

from rocmlint import add_noqa
from rocmlint.fix import WriteRefused

COMPILE = 'm = torch.compile(m, mode="reduce-overhead")'  # ROC101
SHUFFLE = "__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 16); }"  # ROC208, ROC210

PYTHON = f"""\
import torch
{COMPILE}
{COMPILE}  # noqa: E501
{COMPILE}  # why this is here
k = torch.compile(m, mode=("reduce-overhead"
    if True else "default"))
src = \"\"\"
__global__ void k(float v) {{ __shfl_xor_sync(0xffffffff, v, 16); }}
\"\"\"
from torch.utils.cpp_extension import load_inline
mod = load_inline("k", cpp_sources="", cuda_sources=src)
y = torch.compile(m, \\
    mode="reduce-overhead")
"""
PYTHON_AFTER = f"""\
import torch
{COMPILE}  # noqa: ROC101
{COMPILE}  # noqa: E501, ROC101
{COMPILE}  # why this is here  # noqa: ROC101
k = torch.compile(m, mode=("reduce-overhead"  # noqa: ROC101
    if True else "default"))
src = \"\"\"
__global__ void k(float v) {{ __shfl_xor_sync(0xffffffff, v, 16); }}
\"\"\"  # noqa: ROC208, ROC210
from torch.utils.cpp_extension import load_inline
mod = load_inline("k", cpp_sources="", cuda_sources=src)
y = torch.compile(m, \\
    mode="reduce-overhead")  # noqa: ROC101
"""
CUDA = f"""\
#define SHUF(v) \\
  __shfl_xor_sync(0xffffffff, v, 16); \\
  int z = 0
{SHUFFLE}
{SHUFFLE} // noqa: ROC208
"""
CUDA_AFTER = f"""\
#define SHUF(v) /* noqa: ROC210 */ \\
  __shfl_xor_sync(0xffffffff, v, 16); \\
  int z = 0
{SHUFFLE}  // noqa: ROC208, ROC210
{SHUFFLE} // noqa: ROC208, ROC210
"""


def test_comments_go_where_suppression_reads_them_and_a_second_run_adds_nothing(project, cli):
    write_tree(project, {"a.py": PYTHON, "k.cu": CUDA})
    before = cli("check", "--output-format", "json")
    assert before.code == 1 and before.stdout.count('"code"') == 11
    first = cli("check", "--add-noqa")
    assert (first.code, first.stderr) == (0, "Added 9 noqa comments in 2 files.\n")
    assert (project / "a.py").read_text() == PYTHON_AFTER
    assert (project / "k.cu").read_text() == CUDA_AFTER
    assert cli("check", "--extend-select", "ROC002").stdout == "All checks passed!\n"
    second = cli("check", "--add-noqa")
    assert (second.code, second.stderr) == (0, "Added 0 noqa comments.\n")
    assert (project / "a.py").read_text() == PYTHON_AFTER


def test_a_bare_noqa_already_covers_the_line(project, cli):
    write_tree(project, {"a.py": f"import torch\n{COMPILE}  # noqa\n"})
    assert cli("check", "--add-noqa").stderr == "Added 0 noqa comments.\n"


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("crlf.py", f"import torch\r\n{COMPILE}\r\nx = 1\r\n".encode()),
        ("bom.py", codecs.BOM_UTF8 + f"import torch\n{COMPILE}\n".encode()),
        ("latin.py", f"# -*- coding: latin-1 -*-\nimport torch\n# caf\xe9\n{COMPILE}\n".encode("latin-1")),
        ("crlf_bom.cu", codecs.BOM_UTF8 + f"// kernels\r\n{SHUFFLE}\r\n".encode()),
        ("no_final_newline.cu", SHUFFLE.encode()),
    ],
)
def test_encoding_line_endings_bom_and_mode_are_kept(project, cli, name, data):
    path = project / name
    path.write_bytes(data)
    path.chmod(0o640)
    assert cli("check", "--add-noqa").code == 0
    after = path.read_bytes()
    added = b"  # noqa: ROC101" if name.endswith(".py") else b"  // noqa: ROC208, ROC210"
    assert after.replace(added, b"") == data
    assert after.count(added) == 1
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert cli("check").code == 0


def test_a_file_that_cannot_be_written_is_reported(project, cli, monkeypatch):
    def refuse(path: Path, original: bytes, new: bytes) -> None:
        raise WriteRefused("file is read-only; not fixed")

    monkeypatch.setattr(add_noqa, "write_if_unchanged", refuse)  # as root, a read-only mode stops nothing
    write_tree(project, {"a.py": f"import torch\n{COMPILE}\n", "b.py": f"import torch\n{COMPILE}\n"})
    result = cli("check", "--add-noqa")
    assert result.code == 1
    assert result.stderr.splitlines() == [
        "rocmlint: warning: a.py: file is read-only; not fixed",
        "rocmlint: warning: b.py: file is read-only; not fixed",
        "Added 0 noqa comments.",
    ]
    assert (project / "a.py").read_text() == f"import torch\n{COMPILE}\n"


def test_add_noqa_with_a_baseline_suppresses_only_what_the_baseline_does_not_hide(project, cli):
    write_tree(project, {"a.py": f"import torch\n{COMPILE}\n"})
    assert cli("check", "--baseline", "b.json", "--update-baseline").code == 0
    write_tree(project, {"a.py": f"import torch\n{COMPILE}\nn = {COMPILE[4:]}\n"})
    assert cli("check", "--baseline", "b.json", "--add-noqa").stderr.endswith("Added 1 noqa comment in 1 file.\n")
    assert (project / "a.py").read_text() == f"import torch\n{COMPILE}\nn = {COMPILE[4:]}  # noqa: ROC101\n"


def test_add_noqa_refuses_fixing_and_stdin(project, cli):
    assert cli("check", "--add-noqa", "--fix").code == 2
    assert cli("check", "--add-noqa", "-").code == 2


def test_parse_errors_get_no_comment(project, cli):
    write_tree(project, {"a.py": "def (:\n"})
    assert cli("check", "--add-noqa").stderr == "Added 0 noqa comments.\n"
    assert Path(project / "a.py").read_text() == "def (:\n"
