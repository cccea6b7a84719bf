"""ROC108 rng-state-in-capture."""

from __future__ import annotations

import ast

from rocmlint.diagnostics import FixAvailability, Severity
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import last_name
from rocmlint.python.statements import after_open_call, with_items_around
from rocmlint.rule import AnchoredPattern, Invalid, Rule, Valid

_RNG_STATE_CALLS = frozenset(
    f"torch.cuda{module}.{function}"
    for module in ("", ".random")
    for function in ("get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all")
)
_GRAPH_CONTEXTS = frozenset({"torch.cuda.graph", "torch.cuda.graphs.graph"})
# The prefilter. A report needs a capture the rule resolves: `torch.cuda.graph`/`torch.cuda.graphs.graph`,
# whose last part is the identifier `graph` (as an attribute, an imported name, or in the dotted value an
# alias is assigned), or the method `capture_begin`. Python separates a token from the one before it only
# by spaces, tabs, form feeds or line breaks (comments and continuations end in one), and the token before
# that `graph` is `.`, `import`, `,` or `(`: so one of _CAPTURE_WORDS is in the file (not `cudagraph`,
# `fx_graph`, `CUDAGraph`). A reported call resolves to one of _RNG_STATE_CALLS, so the file spells
# `get_rng_state` or `set_rng_state` (the `_all` names contain them), in the call or in the import or
# assignment an alias comes from: `also_requires`.
_CAPTURE_WORDS = (
    *tuple(before + b"graph" for before in (b".", b" ", b"\t", b"\x0c", b"\n", b"\r", b",", b"(")),
    b"capture_begin",
)
# The same tokens, sharper (Rule.trigger_pattern): that `graph` is a whole word, not followed by `.` (`gm.graph.nodes`
# in FX code is never the capture, nor a binding of it), and the token before it is `.`, `import`, `,` or `(` with
# only spaces, line breaks or continuations between, or it starts its line (after a comment, which ends in one). A
# `graph` in prose (`# cached graph keys`) no longer counts: 18 PyTorch files (test_mps.py) are not parsed for it.
_NOT_AN_ATTRIBUTE_OWNER = r"graph(?!\w|\s*\.)"
_CAPTURE_TOKENS = (
    rf"(?:[.,(]|import)(?:\s|\\(?:\r\n|\r|\n))*{_NOT_AN_ATTRIBUTE_OWNER}"
    rf"|(?:(?m:^)|\r)[ \t\f]*{_NOT_AN_ATTRIBUTE_OWNER}|capture_begin"
)
# Searched from that `graph` or `capture_begin`: between a match's start and it lie spaces, line breaks and
# continuations, after at most `import` (six bytes) or a line's start. Six times faster than the engine's own search
# (over the 838 PyTorch files holding a trigger: 0.51 -> 0.08 CPU-s; `also_requires` leaves it few of them).
_CAPTURE_SEARCH = AnchoredPattern(
    _CAPTURE_TOKENS, rf"{_NOT_AN_ATTRIBUTE_OWNER}|capture_begin", skipped=b" \t\n\r\x0b\x0c\\", reach=len("import")
)


class RngStateInCapture(Rule):
    """
    ## What it does
    Flags `torch.cuda.get_rng_state()` / `torch.cuda.set_rng_state(...)` (also the `_all` variants and
    `torch.cuda.random.*`) called lexically inside a graph capture: the body of
    `with torch.cuda.graph(g):` (`torch.cuda.graphs.graph`, any extra arguments such as `pool=`), or
    between `g.capture_begin()` and `g.capture_end()` in the same block.

    Calls outside capture, and calls in a function merely defined inside the capture block, are not
    flagged.

    ## Why is this bad on ROCm?
    On ROCm `torch.cuda.graph` records a HIP graph through the same `CUDAGeneratorImpl`, and the
    generator's state is not capturable: inside capture `get_state` returns a capture-relative Philox
    offset (so a saved state is wrong on replay), a seed change raises, and offset reads and clones
    raise `Cannot call CUDAGeneratorImpl::get_offset/clone_impl during CUDA graph capture`
    (PyTorch `aten/src/ATen/cuda/CUDAGeneratorImpl.cpp`, pytorch/pytorch#170535). ROCm 7.0 also
    made HIP capture stricter, rejecting operations older ROCm tolerated (ROCm/rccl#2022,
    ROCm/hip#3876), so capture-unsafe bookkeeping that happened to run before now fails.
    The graph-safe generator API (`register_generator_state`, `graphsafe_get_state`,
    `graphsafe_set_state`) works on both vendors.

    ## Example
    ```python
    with torch.cuda.graph(g):
        state = torch.cuda.get_rng_state()
        out = model(static_input)
        torch.cuda.set_rng_state(state)
    ```

    ## Fix
    ```python
    gen = torch.cuda.default_generators[torch.cuda.current_device()]
    g.register_generator_state(gen)
    with torch.cuda.graph(g):
        state = gen.graphsafe_get_state()
        out = model(static_input)
        gen.graphsafe_set_state(state)
    ```

    ## Fix safety
    No fix: moving RNG state handling out of capture or to the graph-safe API changes what is
    recorded in the graph and needs review.
    """

    code = "ROC108"
    name = "rng-state-in-capture"
    severity = Severity.ERROR
    applies_to_tests = True  # capture-unsafe RNG bookkeeping fails the same way in a test
    fix_availability = FixAvailability.NONE
    triggers = _CAPTURE_WORDS  # no capture in the file, nothing to flag
    also_requires = (b"get_rng_state", b"set_rng_state")
    trigger_pattern = _CAPTURE_SEARCH

    def visit_Call(self, node: ast.Call, ctx: PythonContext) -> None:
        if "rng_state" not in last_name(node.func):
            return
        name = ctx.qualified_name(node.func)
        if name not in _RNG_STATE_CALLS:
            return
        # The manual `torch.cuda.CUDAGraph` API: `g.capture_begin()` before it, no `g.capture_end()` between.
        if _in_graph_context(node, ctx) or after_open_call(ctx, node, "capture_begin", "capture_end"):
            ctx.report(node, _message(name))


def _in_graph_context(node: ast.AST, ctx: PythonContext) -> bool:
    """Inside the body of `with torch.cuda.graph(...):` in the same function."""
    return any(
        isinstance(item, ast.Call) and ctx.qualified_name(item.func) in _GRAPH_CONTEXTS
        for item in with_items_around(ctx, node)
    )


def _message(name: str) -> str:
    if name.rsplit(".", 1)[1].startswith("get_"):
        effect, replacement = "saves a capture-relative state that is wrong on replay", "graphsafe_get_state()"
    else:
        effect, replacement = "raises on a new seed or only moves the captured offset", "graphsafe_set_state()"
    return (
        f"{name} is not graph-safe: inside (HIP) graph capture it {effect}; "
        f"register the generator with the graph and use gen.{replacement}"
    )


RngStateInCapture.valid = (
    # Saved before capture, restored after it.
    Valid(
        """
        import torch
        g = torch.cuda.CUDAGraph()
        state = torch.cuda.get_rng_state()
        with torch.cuda.graph(g):
            out = model(static_input)
        torch.cuda.set_rng_state(state)
        """,
    ),
    # The graph-safe API inside capture.
    Valid(
        """
        import torch
        gen = torch.cuda.default_generators[0]
        g.register_generator_state(gen)
        with torch.cuda.graph(g, pool=mempool):
            state = gen.graphsafe_get_state()
            y = torch.nn.functional.dropout(x, 0.1)
            gen.graphsafe_set_state(state)
        """,
    ),
    # The manual capture API, RNG state handled after capture_end().
    Valid(
        """
        import torch
        def capture(g, fn, x):
            g.capture_begin()
            y = fn(x)
            g.capture_end()
            torch.cuda.set_rng_state(torch.cuda.get_rng_state())
            return y
        """,
    ),
    # A function defined (not called) in the capture block; another context manager; CPU RNG state.
    Valid(
        """
        import torch
        with torch.cuda.graph(g):
            def restore(s):
                torch.cuda.set_rng_state(s)
            out = model(x)
        with torch.cuda.stream(side):
            torch.cuda.set_rng_state(state)
        with torch.cuda.graph(g):
            cpu_state = torch.get_rng_state()
        """,
    ),
    # ROCm-gated: the NVIDIA-only branch keeps the old code.
    Valid(
        """
        import torch
        IS_ROCM = torch.version.hip is not None
        with torch.cuda.graph(g):
            if not IS_ROCM:
                state = torch.cuda.get_rng_state()
            out = model(x)
        """,
    ),
    # Only mentioned in a comment and a log message.
    Valid(
        """
        import logging, torch
        with torch.cuda.graph(g):
            # do not call torch.cuda.get_rng_state() here
            logging.debug("skipping torch.cuda.get_rng_state during capture")
            out = model(x)
        """,
    ),
    # A module-level capture that has ended before the RNG state is read.
    Valid(
        """
        import torch
        g = torch.cuda.CUDAGraph()
        g.capture_begin()
        out = model(static_input)
        g.capture_end()
        rng = torch.cuda.get_rng_state()
        """,
    ),
    # No capture the rule reads (`CUDAGraph` and `make_graphed_callables` only): it does not even run.
    Valid(
        """
        import torch
        def record(model, x):
            state = torch.cuda.get_rng_state()
            g = torch.cuda.CUDAGraph()
            model = torch.cuda.make_graphed_callables(model, (x,))
            torch.cuda.set_rng_state(state)
            return model, g
        """,
    ),
    # Other RNG-state helpers, in a file that builds FX graphs: the rule does not even run.
    Valid(
        """
        import torch
        from torch._prims.rng_prims import run_and_save_rng_state

        def trace(gm, op, x):
            with torch.cuda.graph(gm.graph_pool):
                state, out = run_and_save_rng_state(op, x)
            return gm.graph, state
        """,
    ),
)
RngStateInCapture.invalid = (
    Invalid(
        """
        import torch
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            state = torch.cuda.get_rng_state()
            out = model(static_input)
            torch.cuda.set_rng_state(state)
        """,
        expect=("4:13-4:39", "6:5-6:36"),
        message="get_rng_state",
    ),
    # Megatron-style checkpoint helper captured with a memory pool and a side stream.
    Invalid(
        """
        import torch
        from torch.cuda import graph as cuda_graph

        def capture_layer(layer, x, pool, stream):
            g = torch.cuda.CUDAGraph()
            with torch.cuda.stream(stream), cuda_graph(g, pool=pool, stream=stream):
                if layer.training:
                    fwd_state = torch.cuda.get_rng_state_all()
                y = layer(x)
            return g, y
        """,
        expect=("8:25-8:55",),
    ),
    Invalid(
        """
        import torch
        from torch.cuda import random as cuda_random
        with torch.cuda.graphs.graph(g):
            cuda_random.set_rng_state(saved)
        """,
        expect=("4:5-4:37",),
    ),
    # The manual capture API.
    Invalid(
        """
        import torch
        def warmup_and_capture(g, fn, x):
            g.capture_begin()
            for _ in range(2):
                rng = torch.cuda.get_rng_state()
                y = fn(x)
            g.capture_end()
            return y
        """,
        expect=("5:15-5:41",),
    ),
    # The manual capture API at module level (a script): each call is a statement of its own.
    Invalid(
        """
        import torch
        g = torch.cuda.CUDAGraph()
        g.capture_begin()
        rng = torch.cuda.get_rng_state()
        g.capture_end()
        """,
        expect=("4:7-4:33",),
    ),
    # `torch.cuda.is_available()` does not gate anything away from ROCm.
    Invalid(
        """
        import torch
        with torch.cuda.graph(g):
            if torch.cuda.is_available():
                torch.cuda.set_rng_state(state)
        """,
        expect=("4:9-4:40",),
    ),
    # Aliases from a multi-line import: the callee says `rng_state` but not `get_rng_state`, the capture
    # says neither `torch.cuda.graph` nor `graph(`.
    Invalid(
        """
        import torch
        from torch.cuda import (
            get_rng_state as cuda_rng_state,
            graph as capture,
        )

        def warm_up(model, x):
            return model(x)

        def step(g, model, x):
            with capture(g):
                saved = cuda_rng_state()
                y = model(x)
            return y, saved
        """,
        expect=("12:17-12:33",),
        message="get_rng_state",
    ),
    # A backslash continuation inside the callee; the capture opened at module level.
    Invalid(
        r"""
        import torch
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            torch.cuda.\
                set_rng_state_all(states)
        """,
        expect=("4:5-5:34",),
        message="set_rng_state_all",
    ),
)
