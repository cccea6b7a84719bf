"""Calls that run a program (rocmlint/python/commands.py): the command argument, the program it names, and
whether the code around the call copes with the program missing."""

from __future__ import annotations

import ast

import pytest
from snippets import Snippet, in_order, parse

from rocmlint.python.commands import (
    Command,
    command_of,
    command_programs,
    copes_with_missing_program,
    helper_run,
    made_after_a_run,
    presence,
    program_name,
    rewritten_arguments,
    split_command,
    tries_another_when_empty,
)

_SMI = frozenset({"nvidia-smi"})


def _calls(snippet: Snippet) -> list[ast.Call]:
    return [node for node in in_order(snippet.module) if isinstance(node, ast.Call)]


def _first_command(code: str) -> tuple[Snippet, Command | None]:
    snippet = parse(code)
    commands = [command_of(snippet.ctx, call) for call in _calls(snippet)]
    return snippet, next((command for command in commands if command is not None), None)


@pytest.mark.parametrize(
    ("code", "argument", "alone", "shell"),
    [
        pytest.param('import subprocess\nsubprocess.run(["nvidia-smi", "-L"])\n', '["nvidia-smi", "-L"]', False, False),
        pytest.param('import subprocess\nsubprocess.run(args="nvidia-smi", shell=True)\n', '"nvidia-smi"', False, True),
        pytest.param('import os\nos.system("nvidia-smi")\n', '"nvidia-smi"', False, True),
        pytest.param(
            "import asyncio as a\na.create_subprocess_exec('nvidia-smi', '-L')\n", "'nvidia-smi'", True, False
        ),
    ],
)
def test_command_of(code: str, argument: str, alone: bool, shell: bool) -> None:
    snippet, command = _first_command(code)
    assert command is not None
    assert snippet.code(command.argument) == argument
    assert (command.program_alone, command.through_shell) == (alone, shell)


def test_no_command() -> None:
    assert _first_command("import subprocess\nsubprocess.run()\nprint('nvidia-smi')\n")[1] is None


@pytest.mark.parametrize(
    ("code", "split"),
    [('import shlex\nshlex.split("a b")\n', '"a b"'), ('"a b".split()\n', '"a b"'), ('"a,b".split(",")\n', None)],
)
def test_split_command(code: str, split: str | None) -> None:
    snippet = parse(code)
    found = split_command(snippet.ctx, _calls(snippet)[0])
    assert (snippet.code(found) if found is not None else None) == split


@pytest.mark.parametrize(
    ("text", "alone", "name"),
    [
        ("/usr/bin/nvidia-smi -L", False, "nvidia-smi"),
        ('"C:\\Tools\\NVIDIA-SMI.exe"', True, "nvidia-smi.exe"),
        ("nvidia-smi -L", True, None),
        ("", False, None),
    ],
)
def test_program_name(text: str, alone: bool, name: str | None) -> None:
    assert program_name(text, alone) == name


@pytest.mark.parametrize(
    ("code", "copes"),
    [
        pytest.param('if shutil.which("nvidia-smi"):\n    subprocess.run(["nvidia-smi"])\n', True, id="which"),
        pytest.param(
            'if shutil.which("nvidia-smi") is None:\n    pass\nelse:\n    subprocess.run(["nvidia-smi"])\n',
            True,
            id="is-none-else",
        ),
        pytest.param(
            'def f():\n    if not shutil.which("nvidia-smi"):\n        return 0\n    subprocess.run(["nvidia-smi"])\n',
            True,
            id="early-return",
        ),
        pytest.param(
            'def f():\n    if not shutil.which("nvidia-smi"):\n        raise E()\n    subprocess.run(["nvidia-smi"])\n',
            False,
            id="raise-is-no-fallback",
        ),
        pytest.param('if shutil.which("amd-smi"):\n    subprocess.run(["nvidia-smi"])\n', False, id="other-program"),
        pytest.param(
            'try:\n    subprocess.run(["nvidia-smi"])\nexcept FileNotFoundError:\n    pass\n', True, id="handled"
        ),
        pytest.param(
            'try:\n    subprocess.run(["nvidia-smi"])\nexcept subprocess.CalledProcessError:\n    pass\n',
            False,
            id="failed-command-is-not-missing-program",
        ),
        pytest.param(
            'try:\n    os.system("nvidia-smi")\nexcept subprocess.CalledProcessError:\n    pass\n',
            True,
            id="through-a-shell-missing-is-failed",
        ),
        pytest.param(
            'def _smi():\n    subprocess.run(["nvidia-smi"])\ndef f():\n    try:\n        _smi()\n    except:\n        pass\n',
            True,
            id="every-caller-handles",
        ),
        pytest.param(
            'def _smi():\n    subprocess.run(["nvidia-smi"])\ndef f():\n    try:\n        _smi()\n    except:\n        pass\n'
            "    _smi()\n",
            False,
            id="one-caller-does-not",
        ),
        pytest.param(
            'def smi():\n    subprocess.run(["nvidia-smi"])\ndef f():\n    try:\n        smi()\n    except:\n        pass\n',
            False,
            id="public-importers-unknown",
        ),
        pytest.param('def _smi():\n    subprocess.run(["nvidia-smi"])\n', False, id="never-called"),
        pytest.param('def f():\n    return subprocess.call("nvidia-smi", shell=True) == 0\n', True, id="status-answer"),
        pytest.param('def f():\n    return 0 != os.system("nvidia-smi -L")\n', True, id="system-status-answer"),
        pytest.param(
            'def f():\n    return subprocess.run("nvidia-smi", shell=True).returncode == 0\n', True, id="returncode"
        ),
        pytest.param(
            'def f():\n    return subprocess.run("nvidia-smi", shell=True, check=True).returncode == 0\n',
            False,
            id="checked-run-raises",
        ),
        pytest.param('def f():\n    return subprocess.call(["nvidia-smi"]) == 0\n', False, id="no-shell-raises"),
        pytest.param(
            'def f():\n    if subprocess.call("nvidia-smi -pm 1", shell=True) != 0:\n        raise E()\n',
            False,
            id="status-tested-not-answered",
        ),
        pytest.param(
            'def f():\n    return subprocess.call("nvidia-smi", shell=True)\n', False, id="status-not-compared"
        ),
        pytest.param('print(subprocess.getoutput("nvidia-smi -L"))\n', True, id="output-printed"),
        pytest.param(
            'def f():\n    cp = subprocess.run("nvidia-smi", shell=True, capture_output=True)\n'
            '    logger.info(f"gpus: {cp.stdout.strip()}")\n',
            True,
            id="stdout-logged",
        ),
        pytest.param(
            'def f():\n    cp = subprocess.run("nvidia-smi", shell=True, capture_output=True)\n'
            "    print(cp.stdout)\n    return len(cp.stdout.splitlines())\n",
            False,
            id="stdout-also-counted",
        ),
        pytest.param('print(subprocess.check_output(["nvidia-smi"]))\n', False, id="no-shell-raises-before-print"),
        pytest.param('n = len(subprocess.getoutput("nvidia-smi -L").splitlines())\n', False, id="output-used"),
        pytest.param(
            'def f():\n    ret, out = subprocess.getstatusoutput("nvidia-smi -q")\n    if ret != 0: return None\n'
            "    return out.split()\n",
            True,
            id="status-checked-first",
        ),
        pytest.param(
            'def f():\n    ret, out = subprocess.getstatusoutput("nvidia-smi -q")\n    if ret:\n        return None\n'
            "    return out.split()\n",
            True,
            id="status-truth-checked-first",
        ),
        pytest.param(
            'def f():\n    ret, out = subprocess.getstatusoutput("nvidia-smi -q")\n    n = len(out)\n'
            "    if ret != 0: return None\n",
            False,
            id="output-read-before-check",
        ),
        pytest.param(
            'def f():\n    ret, out = subprocess.getstatusoutput("nvidia-smi -q")\n    if ret != 0: raise E(out)\n',
            False,
            id="status-check-raises",
        ),
        pytest.param(
            'def f():\n    ret, out = subprocess.getstatusoutput("nvidia-smi -q")\n    if ret == 0: return None\n'
            "    return out.split()\n",
            False,
            id="success-leaves",
        ),
    ],
)
def test_copes_with_missing_program(code: str, copes: bool) -> None:
    snippet, command = _first_command("import os, shutil, subprocess\n" + code)
    assert command is not None
    assert copes_with_missing_program(snippet.ctx, command, _SMI) is copes


_PROBE = """
import subprocess
def gpu_info():
    try:
        cmd = ["nvidia-smi", "-L"]
        out = subprocess.check_output(cmd)
        cmd = "ignored"
        def used():
            return subprocess.check_output(["nvidia-smi", "--query-gpu=memory.used"])
        return out, used
    except OSError:
        pass
    return subprocess.check_output(["rocm-smi"])
"""


@pytest.mark.parametrize(
    ("code", "made_after"),
    [
        pytest.param(_PROBE, True, id="callback-after-probe"),
        pytest.param(_PROBE.replace("OSError", "ValueError"), False, id="handler-misses-failure"),
        pytest.param(_PROBE.replace('["nvidia-smi", "-L"]', '["lspci"]'), False, id="probe-runs-another-program"),
        pytest.param(_PROBE.replace("subprocess.check_output(cmd)", "os.system(cmd)"), False, id="probe-through-shell"),
        pytest.param(
            _PROBE.replace("def used():\n            return", "if True:\n            x ="), False, id="no-def"
        ),
    ],
)
def test_made_after_a_run(code: str, made_after: bool) -> None:
    snippet = parse(code)
    callback = [call for call in _calls(snippet) if "memory.used" in snippet.code(call)][-1]
    assert made_after_a_run(snippet.ctx, callback, _SMI, frozenset({"OSError"})) is made_after


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ('subprocess.run(["nvcc", "-V"])', ["nvcc"]),
        ('subprocess.run([home + "/bin/nvcc", "-V"])', ["nvcc"]),
        ('subprocess.run([os.path.join(home, "bin", "nvcc.exe"), "-V"])', ["nvcc.exe"]),
        ('subprocess.run([Path(home) / "bin" / "nvcc"])', ["nvcc"]),
        ('subprocess.run([f"{home}/bin/nvcc", "-V"])', ["nvcc"]),
        ('subprocess.run(["nvcc" if home is None else home + "/bin/hipcc"])', ["nvcc", "hipcc"]),
        ('subprocess.run(shlex.split("/usr/bin/nvidia-smi -L"))', ["nvidia-smi"]),
        ('subprocess.run("nvcc --version".split())', ["nvcc"]),
        ('os.system("nvcc -V" + " > out.txt")', ["nvcc"]),
        ('subprocess.run("nvcc -V" if cuda else "hipcc --version", shell=True)', []),
        ("subprocess.run(command)", []),
    ],
)
def test_command_programs(code: str, expected: list[str]) -> None:
    snippet = parse(code + "\n")
    command = command_of(snippet.ctx, _calls(snippet)[0])
    assert command is not None
    assert command_programs(snippet.ctx, command.argument) == expected


@pytest.mark.parametrize(
    ("test", "implied", "when_missing"),
    [
        ("CUDA_HOME", True, False),
        ("not CUDA_HOME", False, True),
        ("CUDA_HOME is None", False, True),
        ("None is not CUDA_HOME", True, False),
        ("CUDA_HOME is not None and fast", True, False),
        ("CUDA_HOME is None and ROCM_HOME is None", False, False),
        ("CUDA_HOME is None or ROCM_HOME is None", False, True),
        ("CUDA_HOME is not None or ROCM_HOME is not None", False, False),
        ("have_cuda", True, False),
        ("CUDA_HOME < 3", False, False),
    ],
)
def test_presence(test: str, implied: bool, when_missing: bool) -> None:
    snippet = parse(f"have_cuda = CUDA_HOME is not None\nok = {test}\n")

    def is_cuda_home(expr: ast.expr) -> bool:
        return isinstance(expr, ast.Name) and expr.id == "CUDA_HOME"

    found = presence(snippet.ctx, snippet.value("ok"), is_cuda_home)
    assert (found.implied, found.when_missing) == (implied, when_missing)
    assert found.guards(True) is implied and found.guards(False) is when_missing


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ('["-O3", "-gencode", "arch=compute_80", "-lineinfo", "-O3"]', '["-O3"]'),
        ('["-O3", "-gencode", "-lineinfo", *extra]', '["-O3", *extra]'),
        ("['-U__CUDA_NO_HALF__', NAME]", "['-U__HIP_NO_HALF__', NAME]"),
        ('["-O3 -lineinfo"]', None),
        ('["-O3", f"-lineinfo{x}"]', '["-O3", f"-lineinfo{x}"]'),
        ('["-O3", "-line" "info"]', None),  # implicitly concatenated: no one literal to rewrite
        ("[r'-U__CUDA_NO_HALF__']", "[r'-U__HIP_NO_HALF__']"),  # prefix and quote kept
    ],
)
def test_rewritten_arguments(code: str, expected: str | None) -> None:
    snippet = parse(f"flags = {code}\n")
    arguments = snippet.value_as("flags", ast.List)

    def rewrite(text: str) -> str | None:
        if "CUDA" in text:
            return text.replace("CUDA", "HIP")
        return "" if "-gencode" in text or "-lineinfo" in text.split() else None

    assert rewritten_arguments(snippet.ctx, arguments, rewrite, frozenset({"-gencode"})) == expected


@pytest.mark.parametrize(
    ("code", "argument", "inner"),
    [
        pytest.param(
            'def run(cmd):\n    return subprocess.run(shlex.split(cmd))\nrun("nvidia-smi -L")\n',
            '"nvidia-smi -L"',
            "subprocess.run",
            id="runner-in-the-helper",
        ),
        pytest.param(
            'def read(runner, command):\n    return runner(command)\nread(run, command="nvidia-smi topo -m")\n',
            '"nvidia-smi topo -m"',
            None,
            id="runner-handed-to-the-helper",
        ),
        pytest.param('def show(text):\n    print(text)\nshow("nvidia-smi -L")\n', None, None, id="not-run"),
        pytest.param(
            'def read(runner, command):\n    return other(command)\nread(run, "nvidia-smi -L")\n',
            None,
            None,
            id="not-a-parameter-called",
        ),
        pytest.param('subprocess.run("nvidia-smi -L")\n', None, None, id="not-a-def-of-this-file"),
    ],
)
def test_helper_run(code: str, argument: str | None, inner: str | None) -> None:
    snippet = parse("import shlex, subprocess\n" + code)
    found = helper_run(snippet.ctx, _calls(snippet)[-1])
    if argument is None:
        assert found is None
        return
    assert found is not None
    assert snippet.code(found.command.argument) == argument
    assert (None if found.inner is None else snippet.code(found.inner.call.func)) == inner


@pytest.mark.parametrize(
    ("code", "tries"),
    [
        ('out = read("nvidia-smi")\nif out is None:\n    out = read("rocm-smi")\n', True),
        ('out = read("nvidia-smi")\nif not out:\n    out = read("rocm-smi")\n', True),
        ('out = read("nvidia-smi")\nif out is None:\n    print("none")\n', False),
        ('out = read("nvidia-smi")\nif out:\n    out = read("rocm-smi")\n', False),
        ('print(read("nvidia-smi"))\n', False),
    ],
)
def test_tries_another_when_empty(code: str, tries: bool) -> None:
    snippet = parse(code)
    assert tries_another_when_empty(snippet.ctx, _calls(snippet)[0]) is tries
