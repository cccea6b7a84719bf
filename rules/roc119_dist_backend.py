"""ROC119 dist-backend."""

from __future__ import annotations

import ast

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

    Test files are not checked: a test names a backend to test that backend, behind the suite's own
    availability check (`dist.is_ucc_available()`), which skips it on builds without it.

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
    applies_to_tests = False
    fix_availability = FixAvailability.NONE
    triggers = (b"init_process_group", b"new_group", b"new_subgroups", b"init_distributed")
    also_requires = tuple(name.encode() for name in _UNSUPPORTED)  # every flagged backend is spelled in the file
    trigger_pattern = _TRIGGER_PATTERN

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        for site, value in backend_arguments(ctx, node):
            _check_backend(site, value, ctx)


def _check_backend(argument: ast.AST, value: ast.expr, ctx: PythonContext) -> None:
    """Report each unsupported backend `value` may name (through names assigned once and both arms of
    conditional expressions), gated on the arm that names it."""
    for arm in ctx.values.arms(value):
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
        """
        import torch.distributed as dist

        dist.init_process_group(backend="nccl", init_method="env://")
        cpu_group = dist.new_group(ranks=list(range(4)), backend="gloo")
        dist.init_process_group("cpu:gloo,cuda:nccl")
        """,
    ),
    # Unknown at lint time: the user picks it on the command line.
    Valid(
        """
        import argparse
        import torch.distributed as dist

        parser = argparse.ArgumentParser()
        parser.add_argument("--backend", default="mpi", choices=["nccl", "gloo", "mpi"])
        args = parser.parse_args()
        dist.init_process_group(backend=args.backend)
        """,
    ),
    Valid(
        """
        import torch
        import torch.distributed as dist

        IS_ROCM = torch.version.hip is not None
        dist.init_process_group(backend="nccl" if IS_ROCM else "ucc")
        """,
    ),
    Valid(
        """
        import torch
        import deepspeed

        def init_comm():
            if torch.version.hip:
                deepspeed.init_distributed(dist_backend="nccl")
                return
            deepspeed.init_distributed(dist_backend="mpi", auto_mpi_discovery=True)
        """,
    ),
    Valid(
        """
        import torch
        from torch.distributed import Backend, init_process_group

        def setup(world_size: int) -> None:
            \"\"\"Use init_process_group(backend="mpi") on the CPU cluster.\"\"\"
            print("falling back from mpi to nccl")  # backend="mpi" is slower here
            timeouts = {"mpi": 60, "nccl": 30}
            if dist_is_mpi() and Backend.MPI in available():
                pass
            init_process_group(Backend.NCCL, world_size=world_size)
        """,
    ),
    # A wrapper whose name only starts like a factory's (vLLM): the rule does not even run.
    Valid(
        """
        import torch
        from vllm.distributed import init_distributed_environment

        def init_worker(rank, model):
            init_distributed_environment(world_size=8, rank=rank, backend="nccl")
            return torch.compile(model)
        """,
    ),
    Valid(
        """
        import torch.distributed as dist

        def init_npu():
            dist.init_process_group(backend="hccl")

        def init_fake(store):
            dist.init_process_group("fake", store=store, rank=0, world_size=8)
        """,
    ),
)
DistBackend.invalid = (
    Invalid(
        """
        import torch.distributed as dist

        dist.init_process_group(backend="mpi")
        """,
        expect=("3:33-3:38",),
        message='backend "mpi"',
    ),
    Invalid(
        """
        import os
        import torch.distributed as dist

        BACKEND = "ucc"

        def init(rank: int, world_size: int) -> None:
            dist.init_process_group(BACKEND, rank=rank, world_size=world_size)
        """,
        expect=("7:29-7:36",),
    ),
    Invalid(
        """
        import torch
        import torch.distributed as dist

        def setup(use_mpi: bool) -> None:
            dist.init_process_group(
                backend=dist.Backend.MPI if use_mpi else dist.Backend.NCCL,
            )
        """,
        expect=("6:17-6:33",),
    ),
    Invalid(
        """
        import torch.distributed as dist

        dist.init_process_group(backend="cpu:gloo,cuda:ucc")
        """,
        expect=("3:33-3:52",),
    ),
    Invalid(
        """
        import deepspeed

        deepspeed.init_distributed(dist_backend="mpi", auto_mpi_discovery=True)
        """,
        expect=("3:41-3:46",),
    ),
    Invalid(
        """
        from torch import distributed

        def make_groups(ranks):
            return distributed.new_group(ranks, backend="ucc")
        """,
        expect=("4:49-4:54",),
    ),
    Invalid(
        """
        import torch
        import torch.distributed as dist

        if torch.version.hip:
            dist.init_process_group(backend="rccl")
        """,
        expect=("5:37-5:43",),
        message='no "rccl"',
    ),
    Invalid(
        """
        import torch.distributed as dist

        dist_kwargs = dict(backend="mpi", init_method="env://")
        dist.init_process_group(**dist_kwargs)
        """,
        expect=("4:25-4:38",),
    ),
    # The factory's name after a backslash continuation; the positional backend of the `_by_enumeration` form.
    Invalid(
        r"""
        import torch.distributed as dist

        groups = dist.\
            new_subgroups_by_enumeration([[0, 1], [2, 3]], None, "ucc")
        """,
        expect=("4:58-4:63",),
    ),
    # A parenthesised callee split by a comment, the backend assigned before it.
    Invalid(
        """
        import torch.distributed as dist

        BACKEND = "mpi"

        def warm_up():
            return 0

        def init():
            (dist  # the default process group
                .init_process_group)(backend=BACKEND)
        """,
        expect=("10:38-10:45",),
    ),
)
