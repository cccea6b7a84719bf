"""The CUDA C++ front end: one tree-sitter-cuda parse, one preprocessor analysis, one query per file.

Rules define `visit_<tree-sitter node type>(self, node, ctx)` (for example `visit_call_expression`) and
may also define `visit_include(include, ctx)`, `visit_define(define, ctx)` and
`visit_directive(directive, ctx)` for preprocessor lines, which the front end reads from the text itself
so they survive the ERROR nodes macros leave in tree-sitter's tree. All enabled rules are served by one
query that collects the node types they ask for, in source order.
"""

from __future__ import annotations

import operator
import re
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import tree_sitter
import tree_sitter_cuda

from rocmlint.config import DEFAULT_ROCM_CONDITION
from rocmlint.cuda.preprocessor import Define, Directive, Include, Preprocessor, VendorMacros, analyse, parse_int
from rocmlint.diagnostics import Applicability, Diagnostic, Edit, Fix
from rocmlint.rule import Rule
from rocmlint.source import SourceFile
from rocmlint.vendor import EVERYWHERE, Branch

Node = tree_sitter.Node
PREPROCESSOR_HOOKS = ("include", "define", "directive")
# Wrappers that already pick the right intrinsic per vendor (RULES.md, "What gated means").
PORTABLE_MACROS = frozenset(
    {
        "WARP_SHFL", "WARP_SHFL_XOR", "WARP_SHFL_UP", "WARP_SHFL_DOWN", "WARP_BALLOT", "WARP_ANY", "WARP_ALL",
        "C10_WARP_SIZE", "VLLM_SHFL_XOR_SYNC", "VLLM_SHFL_SYNC", "VLLM_SHFL_XOR_SYNC_WIDTH", "VLLM_SHFL_UP_SYNC",
        "VLLM_SHFL_DOWN_SYNC", "VLLM_DevFuncAttribute_SET_MaxDynamicSharedMemorySize",
    }
)
# What a C++ fix wraps: the smallest of these around the hazard.
STATEMENT_TYPES = frozenset(
    {
        "expression_statement", "declaration", "return_statement", "field_declaration", "if_statement",
        "for_statement", "while_statement", "do_statement", "switch_statement", "alias_declaration",
        "type_definition", "static_assert_declaration", "template_declaration",
    }
)
_HIP_RUNTIME_HEADERS = frozenset({"hip/hip_runtime.h", "hip/hip_runtime_api.h"})


class Span(Protocol):
    """Anything with byte offsets into the file's content: a tree-sitter node, a Directive, an Include."""

    @property
    def start_byte(self) -> int: ...

    @property
    def end_byte(self) -> int: ...


@dataclass(frozen=True)
class CudaOptions:
    rocm_macros: tuple[str, ...] = ()
    portable_macros: tuple[str, ...] = ()
    nvidia_macros: tuple[str, ...] = ()
    rocm_condition: str = DEFAULT_ROCM_CONDITION  # what fixes test: `#if <rocm_condition>`


@lru_cache(maxsize=1)
def _language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_cuda.language())


@lru_cache(maxsize=64)
def _query(node_types: tuple[str, ...]) -> tree_sitter.Query:
    return tree_sitter.Query(_language(), "[" + " ".join(f"({t})" for t in node_types) + "] @node")


class CudaContext:
    """What a CUDA C++ rule sees: the tree, the preprocessor's view of each byte, macros, and `report`."""

    def __init__(self, source: SourceFile, tree: tree_sitter.Tree, preprocessor: Preprocessor, options: CudaOptions) -> None:
        self.source = source
        self.tree = tree
        self.preprocessor = preprocessor
        self.options = options
        self.content = source.data[source.bom_length :]  # what tree-sitter parsed; offsets are into this
        self.portable_macros = PORTABLE_MACROS | frozenset(options.portable_macros)
        self.rule: type[Rule] | None = None
        self.diagnostics: list[Diagnostic] = []
        self._error_ranges: list[tuple[int, int]] | None = None
        self._declarations_by_name: dict[str, list[Node]] | None = None

    # --- gating -----------------------------------------------------------------------------------
    def branch(self, span: Span) -> Branch:
        """Whether the code at `span` is compiled on ROCm and on NVIDIA (True, False, None = unknown)."""
        return self.preprocessor.branch_at(span.start_byte)

    def is_rocm_gated(self, span: Span) -> bool:
        """True when a ROCm build never compiles `span` (it sits in an NVIDIA-only preprocessor branch)."""
        return self.branch(span).on_rocm is False

    def is_nvidia_gated(self, span: Span) -> bool:
        return self.branch(span).on_nvidia is False

    @property
    def is_rocm_source(self) -> bool:
        """A `.hip` file, or one that includes the HIP runtime header outside any vendor branch."""
        return is_rocm_source(self.source.path, self.preprocessor)

    def is_portable_macro(self, name: str) -> bool:
        return name in self.portable_macros

    # --- text, tree and macros -----------------------------------------------------------------------
    def text(self, span: Span) -> str:
        return self.content[span.start_byte : span.end_byte].decode("utf-8", "replace")

    def ancestors(self, node: Node) -> Iterator[Node]:
        parent = node.parent
        while parent is not None:
            yield parent
            parent = parent.parent

    def enclosing(self, node: Node, *types: str) -> Node | None:
        return next((a for a in self.ancestors(node) if a.type in types), None)

    def descendants(self, node: Node, *types: str) -> list[Node]:
        """The nodes of these types below `node` (one tree-sitter query, not a Python walk)."""
        return tree_sitter.QueryCursor(_query(tuple(sorted(types)))).captures(node).get("node", [])

    def function_of(self, node: Node) -> Node | None:
        return self.enclosing(node, "function_definition")

    def is_device_code(self, node: Node) -> bool:
        """Inside a `__global__` or `__device__` function (by its declaration specifiers)."""
        function = self.function_of(node)
        if function is None:
            return False
        body = function.child_by_field_name("body")
        head = self.content[function.start_byte : body.start_byte if body is not None else function.end_byte]
        return bool(re.search(rb"\b__(?:global|device)__\b", head))

    def in_error(self, span: Span) -> bool:
        """Whether `span` lies inside a region tree-sitter could not parse (reported, never fixed)."""
        if self._error_ranges is None:
            self._error_ranges = []
            root = self.tree.root_node
            if root.has_error:  # most files parse cleanly: no need to walk the tree for ERROR nodes
                cursor = tree_sitter.QueryCursor(_query(("ERROR",)))
                self._error_ranges = [(n.start_byte, n.end_byte) for n in cursor.captures(root).get("node", [])]
        return any(start <= span.start_byte and span.end_byte <= end for start, end in self._error_ranges)

    def define(self, name: str, before: Span) -> Define | None:
        """The object-like `#define name` a ROCm build sees before `before`, if this file has one."""
        define = self.preprocessor.define_of(name, before.start_byte)
        return define if define is not None and define.parameters is None else None

    def resolve(self, node: Node, depth: int = 4) -> str:
        """The node's text with a same-file object-like macro expanded (`FULL_MASK` -> `0xffffffff`)."""
        text = self.text(node).strip()
        for _ in range(depth):
            if not re.fullmatch(r"[A-Za-z_]\w*", text):
                break
            define = self.define(text, node)
            if define is None:
                break
            text = define.value
        return text

    def int_value(self, node: Node) -> int | None:
        """The integer a literal (or a same-file macro naming one) stands for."""
        return parse_int(self.resolve(node))

    def call_name(self, call: Node) -> str | None:
        """`f` for `f(...)`, `ns::f` for `ns::f(...)`, `f` for `f<T>(...)`; None for other callees."""
        function = call.child_by_field_name("function")
        if function is None:
            return None
        if function.type == "template_function":
            function = function.child_by_field_name("name") or function
        if function.type in ("identifier", "qualified_identifier", "field_identifier"):
            return self.text(function)
        return None

    def declaration_of(self, identifier: Node) -> Node | None:
        """The declaration, parameter or constant that introduces `identifier`'s name where it is used, as a
        ROCm build sees it: the last one before the use, compiled on ROCm, whose scope (block, function or
        file) contains the use."""
        name = self.text(identifier)
        best: Node | None = None
        for declaration in self._declarations().get(name, ()):
            if declaration.start_byte >= identifier.start_byte:
                break
            if self.is_rocm_gated(declaration):
                continue  # an NVIDIA-only `#else` twin: ROCm sees the other declaration
            scope = self._scope_of(declaration)
            if scope.start_byte <= identifier.start_byte < scope.end_byte:
                best = declaration
        return best

    def declared_type(self, identifier: Node) -> str | None:
        """The type written in `identifier`'s declaration (`unsigned int`, `const uint64_t`, `auto`)."""
        declaration = self.declaration_of(identifier)
        if declaration is None:
            return None
        type_node = declaration.child_by_field_name("type")
        if type_node is None:
            return None
        qualifiers = [self.text(c) for c in declaration.children if c.type == "type_qualifier" and c.start_byte < type_node.start_byte]
        return " ".join([*qualifiers, self.text(type_node)])

    def declared_value(self, identifier: Node) -> Node | None:
        """The initialiser of `identifier`'s declaration (`x` in `unsigned m = x;`), if it has one."""
        declaration = self.declaration_of(identifier)
        if declaration is None:
            return None
        if declaration.type == "optional_parameter_declaration":
            return declaration.child_by_field_name("default_value")
        name = self.text(identifier)
        for declarator in declaration.children_by_field_name("declarator"):
            if declarator.type == "init_declarator" and _declared_name(declarator, self) == name:
                return declarator.child_by_field_name("value")
        return None

    def _declarations(self) -> dict[str, list[Node]]:
        if self._declarations_by_name is None:
            found: dict[str, list[Node]] = {}
            cursor = tree_sitter.QueryCursor(_query(("declaration", "parameter_declaration", "optional_parameter_declaration", "field_declaration")))
            for declaration in sorted(cursor.captures(self.tree.root_node).get("node", []), key=lambda n: n.start_byte):
                for declarator in declaration.children_by_field_name("declarator"):
                    name = _declared_name(declarator, self)
                    if name is not None:
                        found.setdefault(name, []).append(declaration)
            self._declarations_by_name = found
        return self._declarations_by_name

    def _scope_of(self, declaration: Node) -> Node:
        if declaration.type in ("parameter_declaration", "optional_parameter_declaration"):
            return self.function_of(declaration) or self.tree.root_node
        return self.enclosing(declaration, "compound_statement", "field_declaration_list", "for_statement") or self.tree.root_node

    def arguments(self, call: Node) -> list[Node]:
        arguments = call.child_by_field_name("arguments")
        return [] if arguments is None else [a for a in arguments.named_children if a.type != "comment"]

    # --- reporting ------------------------------------------------------------------------------------
    def report(self, span: Span, message: str, *, fix: Fix | None = None) -> bool:
        """Report `span` for the running rule unless a ROCm build never compiles it.

        A fix is dropped inside regions tree-sitter could not parse: the tokens there are clear enough to
        report, not to rewrite. Returns True when the diagnostic was emitted.
        """
        rule = self.rule
        assert rule is not None, "report() called outside a rule callback"
        if not rule.reports_gated and self.is_rocm_gated(span):
            return False
        if fix is not None and self.in_error(span):
            fix = None
        base = self.source.bom_length
        start = self.source.location_of_byte(base + span.start_byte)
        end = self.source.location_of_byte(base + span.end_byte)
        self.diagnostics.append(
            Diagnostic(
                path=self.source.path,
                code=rule.code,
                name=rule.name,
                message=message,
                severity=rule.severity,
                location=start,
                end_location=end,
                fix=fix,
                url=rule.url(),
                noqa_line=start.line,
            )
        )
        return True

    # --- fixes: ROCm text behind a gate, the NVIDIA text unchanged ------------------------------------
    def statement_of(self, node: Node) -> Node | None:
        """The smallest statement or declaration holding `node` (`node` itself when it is one)."""
        current: Node | None = node
        while current is not None and current.type not in STATEMENT_TYPES:
            current = current.parent
        return current

    def outer_statement(self, statement: Node) -> Node | None:
        """The statement around `statement` in the same function (`if (big) f(x);`: the `if`), None at
        a function or lambda boundary: where a fix may widen to when `statement` itself cannot be gated."""
        parent = statement.parent
        while parent is not None and parent.type not in STATEMENT_TYPES:
            if parent.type in ("function_definition", "lambda_expression"):
                return None
            parent = parent.parent
        return parent

    def rocm_variant(self, span: Span, replacements: Sequence[tuple[Span, str]]) -> str:
        """The text of `span` with each (inner span, new text) replaced: the ROCm side of a gated fix."""
        pieces: list[bytes] = []
        cursor = span.start_byte
        for inner, text in sorted(replacements, key=lambda r: r[0].start_byte):
            pieces += [self.content[cursor : inner.start_byte], text.encode("utf-8")]
            cursor = inner.end_byte
        pieces.append(self.content[cursor : span.end_byte])
        return b"".join(pieces).decode("utf-8", "replace")

    def gated_fix(self, message: str, span: Span, rocm_text: str, *, safe: bool = True) -> Fix | None:
        """Put `rocm_text` in front of `span` (a statement, declaration or directive) behind the ROCm test:

            #if <rocm condition>
            <rocm_text>
            #else
            <span, byte for byte>
            #endif

        The NVIDIA compiler sees exactly the original tokens. None when `span` shares its lines with other
        code (a directive must start its own line) or lies in a region tree-sitter could not parse.
        """
        if self.in_error(span):
            return None
        line_start = self.content.rfind(b"\n", 0, span.start_byte) + 1
        line_end = _line_end(self.content, span.end_byte)
        indent = self.content[line_start : span.start_byte]
        after = self.content[span.end_byte : line_end]
        if indent.strip() or (after.strip() and not after.strip().startswith((b"//", b"/*"))):
            return None
        newline = self.source.newline
        rocm_lines = rocm_text.replace("\r\n", "\n").replace("\n", newline)
        opening = f"#if {self.options.rocm_condition}{newline}{indent.decode('utf-8', 'replace')}{rocm_lines}{newline}#else{newline}"
        original = self.content[span.start_byte : span.end_byte].decode("utf-8", "replace")
        return self.fix(
            message,
            self.edit(line_start, line_start, opening),
            # Rewriting the span with its own text claims it: a fix inside it (a statement in a wrapped
            # loop) then overlaps and waits for the next pass instead of nesting a second #if in #else.
            self.edit(span.start_byte, span.end_byte, original),
            self.edit(line_end, line_end, f"{newline}#endif"),
            safe=safe,
        )

    def edit(self, start: int, end: int, content: str) -> Edit:
        """An edit over the content's byte range [start, end)."""
        base = self.source.bom_length
        return self.source.edit(base + start, base + end, content)

    def fix(self, message: str, *edits: Edit, safe: bool = True) -> Fix:
        return Fix(message, tuple(edits), Applicability.SAFE if safe else Applicability.UNSAFE)


def _line_end(content: bytes, offset: int) -> int:
    """The offset of the line ending after `offset` (or the end of the content)."""
    ends = [i for i in (content.find(b"\n", offset), content.find(b"\r", offset)) if i >= 0]
    return min(ends) if ends else len(content)


def _declared_name(declarator: Node, ctx: CudaContext) -> str | None:
    """The name a declarator introduces: `m` in `m`, `m = 0`, `*m`, `m[32]`, `&m`."""
    current: Node | None = declarator
    while current is not None and current.type not in ("identifier", "field_identifier"):
        current = current.child_by_field_name("declarator")
    return ctx.text(current) if current is not None else None


def is_rocm_source(path: str, preprocessor: Preprocessor) -> bool:
    if path.lower().endswith(".hip"):
        return True
    return any(
        include.header in _HIP_RUNTIME_HEADERS and include.directive.branch == EVERYWHERE
        for include in preprocessor.includes
    )


def parse(content: bytes) -> tree_sitter.Tree:
    return tree_sitter.Parser(_language()).parse(content)


InternalErrorReporter = Callable[[type[Rule], BaseException, str], None]
# How deep in the syntax tree rules look (docs/robustness.md): real code stays in the low hundreds;
# the query cursor slows down sharply past 65,535 levels.
MAX_VISIT_DEPTH = 50_000
Callback = Callable[[object], None]


def check_cuda(
    source: SourceFile, rules: Sequence[type[Rule]], options: CudaOptions, on_internal_error: InternalErrorReporter
) -> list[Diagnostic]:
    """Run `rules` over one C/C++/CUDA file (or a CUDA snippet taken from a Python string)."""
    macros = VendorMacros().with_project_macros(options.rocm_macros, options.nvidia_macros)
    text = source.text[1:] if source.text.startswith("\ufeff") else source.text
    preprocessor = analyse(text, macros)
    tree = parse(source.data[source.bom_length :])
    context = CudaContext(source, tree, preprocessor, options)
    if context.is_rocm_source:
        # A ROCm source only meets ROCm hardware: the wave size is all that can still be wrong there.
        rules = [rule for rule in rules if rule.applies_to_rocm_sources]
    table = _dispatch_table(rules, context, on_internal_error)
    for directive in preprocessor.directives:
        for callback in table.get("directive", ()):
            callback(directive)
    for define in (d for defines in preprocessor.defines.values() for d in defines):
        for callback in table.get("define", ()):
            callback(define)
    for include in preprocessor.includes:
        for callback in table.get("include", ()):
            callback(include)
    if any(t not in PREPROCESSOR_HOOKS for t in table):
        # One query for what every CUDA rule visits, compiled once per process: compiling one per set
        # of triggered rules cost more than capturing a few node types nobody asked for in this file.
        wanted = {t for t in table if t not in PREPROCESSOR_HOOKS}
        node_types = _all_visited_types() if wanted <= set(_all_visited_types()) else tuple(sorted(wanted))
        cursor = tree_sitter.QueryCursor(_query(node_types))
        # tree-sitter's query cursor turns quadratic below ~65,000 levels (a 1,000,000-character
        # `1+1+...` line took minutes); no real code nests this deep, so deeper nodes are not visited.
        cursor.set_max_start_depth(MAX_VISIT_DEPTH)
        for node in _source_order(cursor.captures(tree.root_node).get("node", [])):
            for callback in table.get(node.type, ()):
                callback(node)
    return context.diagnostics


_START_BYTE = operator.attrgetter("start_byte")
_END_BYTE = operator.attrgetter("end_byte")


def _source_order(nodes: list[Node]) -> list[Node]:
    """The captured nodes by start, an outer node before the inner ones that start with it: the order
    (start, -end) in two stable sorts keyed in C. The query cursor returns captures in no useful order,
    and a Python key function building a tuple per node cost as much as the query itself."""
    ordered = sorted(nodes, key=_END_BYTE, reverse=True)
    ordered.sort(key=_START_BYTE)
    return ordered


def _dispatch_table(
    rules: Sequence[type[Rule]], context: CudaContext, on_internal_error: InternalErrorReporter
) -> dict[str, list[Callback]]:
    table: dict[str, list[Callback]] = {}
    known_types = _node_types()
    for rule_class in rules:
        rule = rule_class()
        state = {"failed": False}
        for attribute in dir(rule_class):
            if not attribute.startswith("visit_"):
                continue
            node_type = attribute[len("visit_") :]
            if node_type not in known_types and node_type not in PREPROCESSOR_HOOKS:
                raise ValueError(f"{rule_class.code}: {attribute} names no tree-sitter-cuda node type")
            table.setdefault(node_type, []).append(_guarded(rule_class, getattr(rule, attribute), context, state, on_internal_error))
    return table


@lru_cache(maxsize=1)
def _all_visited_types() -> tuple[str, ...]:
    from rocmlint.registry import all_rules  # the registry imports rule modules, which import this one

    visited = {
        attribute[len("visit_") :]
        for rule in all_rules()
        if rule.language == "cuda"
        for attribute in dir(rule)
        if attribute.startswith("visit_")
    }
    return tuple(sorted(visited & _node_types()))


@lru_cache(maxsize=1)
def _node_types() -> frozenset[str]:
    language = _language()
    return frozenset(language.node_kind_for_id(i) or "" for i in range(language.node_kind_count))


def _guarded(
    rule_class: type[Rule],
    method: Callable[[object, CudaContext], None],
    context: CudaContext,
    state: dict[str, bool],
    on_internal_error: InternalErrorReporter,
) -> Callback:
    """Call a rule's visit method; a crash disables that rule for the rest of the file and is reported once."""

    def callback(node: object) -> None:
        if state["failed"]:
            return
        context.rule = rule_class
        try:
            method(node, context)
        except Exception as error:  # noqa: BLE001 - one broken rule must not stop the others
            state["failed"] = True
            on_internal_error(rule_class, error, traceback.format_exc())

    return callback


__all__ = ["CudaContext", "CudaOptions", "Define", "Directive", "Include", "Node", "check_cuda"]
