"""ROC128 fork-start-method."""

from __future__ import annotations

import ast

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.flow import value_uses
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import last_name, name_words
from rocmlint.python.scopes import FUNCTION_DEFS
from rocmlint.rule import Invalid, Rule, Valid

# The multiprocessing calls that take a start method first or as `method=`; any call's `start_method=`
# (`torch.multiprocessing.start_processes`, `spawn`, `xmp.spawn`, launchers wrapping them).
_METHOD_CALLS = frozenset({"get_context", "set_start_method"})
_METHOD_KEYWORD = "start_method"
_TORCH_MULTIPROCESSING = "torch.multiprocessing."
# A DataLoader's workers load samples on the CPU: a context given only there starts no GPU worker.
_DATA_WORKERS_KEYWORD = "multiprocessing_context"
# torch_xla's launchers (`xmp.spawn`) start XLA devices (TPU); no HIP runtime is in their parent.
_XLA_PACKAGE = "torch_xla."
# Test decorators that skip on a condition and say why second (`unittest.skipIf(c, reason)`, `pytest.mark.skipif`),
# matched on the lower-cased last name without underscores.
_SKIP_DECORATORS = frozenset({"skipif", "skipunless"})
# The prefilter (Rule.trigger_pattern): the start method is a quoted word wherever it is reported.
_TRIGGER_PATTERN = r"""["']fork["']"""


class ForkStartMethod(Rule):
    """
    ## What it does
    Flags the `"fork"` start method chosen for GPU worker processes: `torch.multiprocessing.get_context("fork")`,
    `torch.multiprocessing.set_start_method("fork")` and any `start_method="fork"` argument
    (`torch.multiprocessing.start_processes`, launchers wrapping it), also through a variable or either arm of a
    conditional (`method = "spawn" if device == "xpu" else "fork"`), unless that arm or the call is gated away from
    ROCm (`"spawn" if torch.version.hip else "fork"`). `"spawn"`, `"forkserver"`, the standard library's
    `multiprocessing` (as often a CPU helper: a checkpoint writer, a cache test) and files that never name `torch` are
    not flagged, nor torch_xla's launchers (`xmp.spawn(..., start_method="fork")`: XLA devices), nor a context only
    given to DataLoaders (`multiprocessing_context=`: their workers load samples on the CPU).

    Test files are checked: a suite that forks its GPU workers hangs or fails on ROCm the same way. A test whose
    skip says it needs fork (`@unittest.skipIf(IS_WINDOWS, "Test needs to use fork multiprocessing")`) is not: it
    tests the fork start method itself, on purpose.

    ## Why is this bad on ROCm?
    A forked child inherits the parent's HIP runtime state, which it cannot use: once the parent has touched
    the GPU (on ROCm the device queries a launcher makes first, `torch.cuda.is_available()` among them, initialise
    HIP), workers fail or hang at their first GPU call. vLLM's ROCm platform forces `spawn` and logs that `fork` is
    not supported by ROCm; accelerate's notebook launcher spawns on ROCm since its ROCm port (hazard catalog ROC128).

    ## Example
    ```python
    import torch.multiprocessing as mp

    ctx = mp.get_context("fork")
    ```

    ## Fix
    ```python
    import torch
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn" if torch.version.hip else "fork")
    ```

    ## Fix safety
    No automatic fix: `spawn` pickles the worker function and its arguments and re-imports the main module,
    which closures, lambdas and notebook-defined functions do not survive; the launcher must be reviewed.
    """

    code = "ROC128"
    name = "fork-start-method"
    severity = Severity.WARNING
    applies_to_tests = True  # a suite forking its GPU workers fails on ROCm like the library does
    fix_availability = FixAvailability.NONE
    triggers = (b"fork",)
    also_requires = (b"torch",)
    trigger_pattern = _TRIGGER_PATTERN

    def __init__(self) -> None:
        self._reported: set[ast.expr] = set()

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        if ctx.in_test_suite and _in_test_of_fork(ctx, node):
            return
        for method in _start_methods(node, ctx):
            for text, literal in ctx.values.string_sources(method):
                if text != "fork" or literal in self._reported:
                    continue
                if ctx.report(literal, _MESSAGE, gate_on=(node,)):
                    self._reported.add(literal)


def _start_methods(call: ast.Call, ctx: PythonContext) -> list[ast.expr]:
    """The start-method arguments of `call`: any call's `start_method=` (a launcher of GPU workers), and the
    method of torch.multiprocessing's `get_context`/`set_start_method` (first or `method=`), the module PyTorch
    code shares tensors with its workers through; the standard library's forks CPU helpers (a checkpoint
    writer, a cache test) as often."""
    callee = ctx.qualified_name(call.func) or ""
    if callee.startswith(_XLA_PACKAGE):
        return []
    found = [keyword.value for keyword in call.keywords if keyword.arg == _METHOD_KEYWORD]
    if callee.startswith(_TORCH_MULTIPROCESSING) and last_name(call.func) in _METHOD_CALLS:
        if _only_for_data_workers(ctx, call):
            return found
        method = ctx.semantic.argument(call, "method", 0)
        if method is not None:
            found.append(method)
    return found


def _in_test_of_fork(ctx: PythonContext, node: ast.AST) -> bool:
    """`node` is in a test whose skip says it needs fork: the test is about the fork start method (PyTorch's own
    suite asserts the error a forked GPU worker raises), not a launcher that happens to fork its workers."""
    return any(
        isinstance(ancestor, FUNCTION_DEFS) and any(_skip_names_fork(ctx, mark) for mark in ancestor.decorator_list)
        for ancestor in ctx.ancestors(node)
    )


def _skip_names_fork(ctx: PythonContext, decorator: ast.expr) -> bool:
    """`@unittest.skipIf(c, "... fork ...")`, `@pytest.mark.skipif(c, reason="... fork ...")`."""
    if (
        not isinstance(decorator, ast.Call)
        or last_name(decorator.func).replace("_", "").lower() not in _SKIP_DECORATORS
    ):
        return False
    reason = ctx.semantic.argument(decorator, "reason", 1)
    text = ctx.string_value(reason) if reason is not None else None
    return text is not None and "fork" in name_words(text)


def _only_for_data_workers(ctx: PythonContext, call: ast.Call) -> bool:
    """The context `call` makes goes only to DataLoaders (`multiprocessing_context=`), directly or through
    variables."""

    def visit(expr: ast.AST) -> list[bool] | None:
        parent = ctx.parent(expr)
        if isinstance(parent, ast.keyword):
            return [parent.arg == _DATA_WORKERS_KEYWORD]
        return None if expr is call else [False]

    verdicts = value_uses(ctx, call, visit)
    return bool(verdicts) and all(verdicts)


_MESSAGE = (
    'the "fork" start method makes workers inherit the parent\'s HIP runtime, which they cannot use on ROCm '
    '(torch.cuda queries initialise it there); use "spawn" when torch.version.hip is set'
)


ForkStartMethod.valid = (
    # ROCm (and XPU) spawn; only the other GPUs fork.
    Valid(
        """
        import torch
        from torch.multiprocessing import start_processes

        def launch(worker, nprocs, device_type):
            method = "spawn" if device_type == "xpu" or torch.version.hip else "fork"
            start_processes(worker, nprocs=nprocs, start_method=method)
        """,
    ),
    Valid(
        """
        import torch
        import torch.multiprocessing as mp

        def make_queue():
            if torch.version.hip is not None:
                ctx = mp.get_context("spawn")
            else:
                ctx = mp.get_context("fork")
            return ctx.Queue()
        """,
    ),
    # Other start methods; a method nothing names at lint time.
    Valid(
        """
        import torch.multiprocessing as mp

        mp.set_start_method("forkserver")
        pool = mp.get_context("spawn").Pool(4)

        def start(method):
            return mp.get_context(method)
        """,
    ),
    # torch_xla's launcher starts TPU cores.
    Valid(
        """
        import torch
        import torch_xla.distributed.xla_multiprocessing as xmp

        def launch_on_tpu(launcher, args):
            xmp.spawn(launcher, args=args, start_method="fork")
        """,
    ),
    # Only macOS forks: it has no ROCm GPU.
    Valid(
        """
        import sys
        import torch.multiprocessing as mp

        method = "fork" if sys.platform == "darwin" else "spawn"
        mp.set_start_method(method, force=True)
        """,
    ),
    # A context only given to a DataLoader: its workers load samples on the CPU.
    Valid(
        """
        import torch
        from torch.utils.data import DataLoader

        def test_no_segfault(dataset):
            mp_ctx = torch.multiprocessing.get_context(method="fork")
            loader = DataLoader(dataset, num_workers=1, multiprocessing_context=mp_ctx)
            return list(loader)
        """,
    ),
    # The standard library's fork of a CPU helper (a background checkpoint cleaner).
    Valid(
        """
        import multiprocessing
        import torch

        def delete_async(path):
            ctx = multiprocessing.get_context("fork")
            ctx.Process(target=shutil.rmtree, args=(path,)).start()
        """,
    ),
    # A test about fork itself: its skip says it needs fork.
    Valid(
        """
        import torch.multiprocessing as mp
        import unittest

        class TestMultiprocessing(unittest.TestCase):
            @unittest.skipIf(IS_WINDOWS, "Test needs to use fork multiprocessing")
            def test_autograd_errors(self):
                ctx = mp.get_context("fork")
                with self.assertRaisesRegex(RuntimeError, r"Unable to handle autograd"):
                    ctx.Pool(3).map(simple_autograd_function, [1, 2, 3])
        """,
        path="test/test_multiprocessing.py",
    ),
    # No PyTorch in the file: a CPU tool forking its workers.
    Valid(
        """
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        """,
    ),
)
ForkStartMethod.invalid = (
    Invalid(
        """
        import torch.multiprocessing as mp

        def test_fault_tolerant():
            if is_xpu_available():
                ctx = mp.get_context("spawn")
            else:
                ctx = mp.get_context("fork")
            return ctx.Queue()
        """,
        expect=("7:30-7:36",),
        message='the "fork" start method',
        path="tests/test_notebook.py",
    ),
    # A skip that gives another reason; a skip naming fork outside a test suite.
    Invalid(
        """
        import torch.multiprocessing as mp
        import pytest

        @pytest.mark.skipif(not HAS_GPU, reason="needs a GPU")
        def test_workers():
            return mp.get_context("fork").Pool(2)
        """,
        expect=("6:27-6:33",),
        path="tests/test_workers.py",
    ),
    Invalid(
        """
        import torch.multiprocessing as mp
        import pytest

        @pytest.mark.skipif(IS_WINDOWS, reason="needs fork")
        def launch():
            return mp.get_context("fork").Pool(2)
        """,
        expect=("6:27-6:33",),
    ),
    # One diagnostic for a method two launches take.
    Invalid(
        """
        import torch
        from torch.multiprocessing import start_processes

        def notebook_launcher(worker, nprocs, device_type, debug):
            start_method = "spawn" if device_type == "xpu" else "fork"
            if debug:
                start_processes(worker, nprocs=nprocs, start_method=start_method)
            else:
                start_processes(worker, nprocs=nprocs, start_method=start_method, join=True)
        """,
        expect=("5:57-5:63",),
    ),
    Invalid(
        """
        import torch.multiprocessing as mp
        import torch

        mp.set_start_method(method="fork", force=True)
        workers = mp.get_context('fork').Pool(2)
        """,
        expect=("4:28-4:34", "5:26-5:32"),
    ),
)
