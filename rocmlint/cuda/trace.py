"""The depth policy of C++ value tracing, below every front-end module that walks values (the context's
macro resolver in frontend.py, the tracer in values.py, masks, warps): each step into a name's initialiser,
a macro's value or an operand costs one level of MAX_TRACE_DEPTH, and a name already followed on the walk is
not followed again (`m = m | b` in a loop)."""

from __future__ import annotations

from dataclasses import dataclass

# The one depth policy of C++ value tracing: how many steps a walk may take from the expression it starts at.
MAX_TRACE_DEPTH = 6


@dataclass(frozen=True)
class Trace:
    """Where a walk through a value stands: how many steps it took, and the names whose values it followed."""

    depth: int = 0
    names: frozenset[str] = frozenset()

    def step(self) -> Trace | None:
        """The walk one step further (into an operand), or None past MAX_TRACE_DEPTH."""
        return None if self.depth >= MAX_TRACE_DEPTH else Trace(self.depth + 1, self.names)

    def into(self, name: str) -> Trace | None:
        """The walk one step further, into what `name` stands for; None past MAX_TRACE_DEPTH or when the walk
        already followed `name` (a value defined through itself)."""
        if name in self.names or self.depth >= MAX_TRACE_DEPTH:
            return None
        return Trace(self.depth + 1, self.names | {name})


START = Trace()
