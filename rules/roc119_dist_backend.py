"""ROC119 dist-backend."""

from __future__ import annotations

import libcst as cst

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import report_site
from rocmlint.python.torch_api import backend_arguments, backend_names
from rocmlint.rule import Invalid, Rule, Valid

# Backends PyTorch has on NVIDIA builds but not on ROCm builds, plus the name people guess on ROCm.
# Backends of other accelerators (hccl, xccl, ccl, ...) and test backends (fake, threaded) never target
# AMD GPUs and are left alone; unknown names are not reported.
_UNSUPPORTED = frozenset({"mpi", "ucc", "rccl"})
# The prefilter (Rule.trigger_pattern): a factory name as a whole word. visit_Call reports only a call
# whose callee's last identifier is a process-group factory's name (torch_api.backend_arguments), and an
# identifier is written whole (no escapes; `dist.\` + newline + `new_group` still has it whole), so every
# reported call holds a match, which marks its region; what the check reads besides (the backend's
# assignment, a `**kwargs` dict) is what the call names. A word, not a substring:
# `init_distributed_environment` (vLLM), `_new_group_with_tag` name other functions. The backend names stay
# the substrings of `also_requires`: the rule reads string values through escapes and implicit
# concatenation (`"\x6dpi"`, `"m" "pi"`), so what it reports requires no sharper spelling of them (a quoted
# `"mpi"` would miss `"cpu:gloo,cuda:mpi"` and `Backend.MPI` too).
_TRIGGER_PATTERN = r"\b(?:init_process_group|new_group|new_subgroups(?:_by_enumeration)?|init_distributed)\b"


class DistBackend(Rule):
    """
    ## What it does
    Flags `torch.distributed` process groups created with a backend ROCm builds of PyTorch do not
    have (`"mpi"`, `"ucc"`, `"rccl"`), unless the call is gated for ROCm.

    Covers `init_process_group`, `new_group`, `new_subgroups*` and `deepspeed.init_distributed`
    (keyword or positional backend), `Backend.MPI`/`Backend.UCC`, device-mapped strings with such a
    part (`"cpu:gloo,cuda:mpi"`), and `"rccl"` (not a PyTorch backend name). The backend may be a
    literal, a name assigned once, either arm of a conditional expression, or a `**kwargs` dict entry.
    `nccl`, `gloo`, their device-mapped combinations, backends of other accelerators (`hccl`, `xccl`,
    `ccl`), test backends (`fake`) and values the linter cannot know (`args.backend`) are not flagged.

    ## Why is this bad on ROCm?
    PyTorch documents that only the `nccl` and `gloo` `torch.distributed` backends are supported on
    ROCm (PyTorch "HIP (ROCm) semantics", section "torch.distributed backends"); `nccl` is backed by
    RCCL there. An MPI or UCC process group fails to initialise on a ROCm build, and `"rccl"` is
    rejected as an unknown backend.

    ## Example
    ```python
    import torch.distributed as dist

    dist.init_process_group(backend="mpi")
    ```

    ## Fix
    ```python
    import torch
    import torch.distributed as dist

    dist.init_process_group(backend="nccl" if torch.version.hip else "mpi")
    ```

    ## Fix safety
    No automatic fix: switching the transport changes how ranks are launched and discovered (MPI
    launchers set no `MASTER_ADDR`/`RANK` env vars), which needs a human decision.
    """

    code = "ROC119"
    name = "dist-backend"
    severity = Severity.ERROR
    fix_availability = FixAvailability.NONE
    triggers = (b"init_process_group", b"new_group", b"new_subgroups", b"init_distributed")
    also_requires = tuple(name.encode() for name in _UNSUPPORTED)  # every flagged backend is spelled in the file
    trigger_pattern = _TRIGGER_PATTERN

    def visit_Call(self, node: cst.Call, ctx: PythonContext) -> None:
        for site, value in backend_arguments(ctx, node):
            _check_backend(site, value, ctx)


def _check_backend(argument: cst.CSTNode, value: cst.BaseExpression, ctx: PythonContext) -> None:
    """Report each unsupported backend `value` may name (through names assigned once and both arms of
    conditional expressions), gated on the arm that names it."""
    for arm in ctx.semantic.value_arms(value):
        for backend in backend_names(ctx, arm):
            if backend in _UNSUPPORTED:
                ctx.report(report_site(ctx, arm, argument), _message(backend), gate_on=(arm,))


def _message(backend: str) -> str:
    if backend == "rccl":
        return (
            'PyTorch has no "rccl" process-group backend, so this fails on ROCm; use "nccl", which is '
            "backed by RCCL on ROCm builds"
        )
    return (
        f'torch.distributed backend "{backend}" is not available on ROCm builds of PyTorch (only nccl and '
        'gloo are); use "nccl" (RCCL) for GPU tensors or "gloo" for CPU tensors when torch.version.hip is set'
    )


DistBackend.valid = (
    Valid(
        "import torch.distributed as dist\n"
        "\n"
        'dist.init_process_group(backend="nccl", init_method="env://")\n'
        'cpu_group = dist.new_group(ranks=list(range(4)), backend="gloo")\n'
        'dist.init_process_group("cpu:gloo,cuda:nccl")\n'
    ),
    # Unknown at lint time: the user picks it on the command line.
    Valid(
        "import argparse\n"
        "import torch.distributed as dist\n"
        "\n"
        "parser = argparse.ArgumentParser()\n"
        'parser.add_argument("--backend", default="mpi", choices=["nccl", "gloo", "mpi"])\n'
        "args = parser.parse_args()\n"
        "dist.init_process_group(backend=args.backend)\n"
    ),
    Valid(
        "import torch\n"
        "import torch.distributed as dist\n"
        "\n"
        "IS_ROCM = torch.version.hip is not None\n"
        'dist.init_process_group(backend="nccl" if IS_ROCM else "ucc")\n'
    ),
    Valid(
        "import torch\n"
        "import deepspeed\n"
        "\n"
        "def init_comm():\n"
        "    if torch.version.hip:\n"
        '        deepspeed.init_distributed(dist_backend="nccl")\n'
        "        return\n"
        '    deepspeed.init_distributed(dist_backend="mpi", auto_mpi_discovery=True)\n'
    ),
    Valid(
        "import torch\n"
        "from torch.distributed import Backend, init_process_group\n"
        "\n"
        "def setup(world_size: int) -> None:\n"
        '    """Use init_process_group(backend="mpi") on the CPU cluster."""\n'
        '    print("falling back from mpi to nccl")  # backend="mpi" is slower here\n'
        '    timeouts = {"mpi": 60, "nccl": 30}\n'
        "    if dist_is_mpi() and Backend.MPI in available():\n"
        "        pass\n"
        "    init_process_group(Backend.NCCL, world_size=world_size)\n"
    ),
    # A wrapper whose name only starts like a factory's (vLLM): the rule does not even run.
    Valid(
        "import torch\n"
        "from vllm.distributed import init_distributed_environment\n"
        "\n"
        "def init_worker(rank, model):\n"
        '    init_distributed_environment(world_size=8, rank=rank, backend="nccl")\n'
        "    return torch.compile(model)\n"
    ),
    Valid(
        "import torch.distributed as dist\n"
        "\n"
        "def init_npu():\n"
        '    dist.init_process_group(backend="hccl")\n'
        "\n"
        "def init_fake(store):\n"
        '    dist.init_process_group("fake", store=store, rank=0, world_size=8)\n'
    ),
)
DistBackend.invalid = (
    Invalid(
        "import torch.distributed as dist\n\ndist.init_process_group(backend=\"mpi\")\n",
        line=3,
        message='backend "mpi"',
    ),
    Invalid(
        "import os\n"
        "import torch.distributed as dist\n"
        "\n"
        'BACKEND = "ucc"\n'
        "\n"
        "def init(rank: int, world_size: int) -> None:\n"
        "    dist.init_process_group(BACKEND, rank=rank, world_size=world_size)\n",
        line=7,
    ),
    Invalid(
        "import torch\n"
        "import torch.distributed as dist\n"
        "\n"
        "def setup(use_mpi: bool) -> None:\n"
        "    dist.init_process_group(\n"
        '        backend=dist.Backend.MPI if use_mpi else dist.Backend.NCCL,\n'
        "    )\n",
        line=6,
    ),
    Invalid(
        "import torch.distributed as dist\n"
        "\n"
        'dist.init_process_group(backend="cpu:gloo,cuda:ucc")\n',
        line=3,
    ),
    Invalid(
        "import deepspeed\n"
        "\n"
        'deepspeed.init_distributed(dist_backend="mpi", auto_mpi_discovery=True)\n',
        line=3,
    ),
    Invalid(
        "from torch import distributed\n"
        "\n"
        "def make_groups(ranks):\n"
        '    return distributed.new_group(ranks, backend="ucc")\n',
        line=4,
    ),
    Invalid(
        "import torch\n"
        "import torch.distributed as dist\n"
        "\n"
        "if torch.version.hip:\n"
        '    dist.init_process_group(backend="rccl")\n',
        line=5,
        message='no "rccl"',
    ),
    Invalid(
        "import torch.distributed as dist\n"
        "\n"
        'dist_kwargs = dict(backend="mpi", init_method="env://")\n'
        "dist.init_process_group(**dist_kwargs)\n",
        line=4,
    ),
    # The factory's name after a backslash continuation; the positional backend of the `_by_enumeration` form.
    Invalid(
        "import torch.distributed as dist\n"
        "\n"
        "groups = dist.\\\n"
        '    new_subgroups_by_enumeration([[0, 1], [2, 3]], None, "ucc")\n',
        line=4,
    ),
    # A parenthesised callee split by a comment, the backend assigned before it.
    Invalid(
        "import torch.distributed as dist\n"
        "\n"
        'BACKEND = "mpi"\n'
        "\n"
        "def warm_up():\n"
        "    return 0\n"
        "\n"
        "def init():\n"
        "    (dist  # the default process group\n"
        "        .init_process_group)(backend=BACKEND)\n",
        line=10,
    ),
)
