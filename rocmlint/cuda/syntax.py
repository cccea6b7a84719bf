"""C++ syntax questions several CUDA rules ask of tree-sitter's tree: operands through parentheses and casts,
what an expression is assigned to, loop counters, declaration specifiers, where C++ needs a constant
expression, and text patterns that find an operator with a literal operand before any parse."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from rocmlint.cuda.frontend import STATEMENT_TYPES, CudaContext, Node, Span

_COMPARISONS = frozenset({"==", "!=", "<", ">", "<=", ">="})


def bare(node: Node) -> Node:
    """`x` for `(x)`, `(int)x`, `((unsigned)(x))`: the operand under parentheses and C casts."""
    while True:
        if node.type == "parenthesized_expression" and node.named_child_count == 1:
            node = node.named_children[0]
        elif node.type == "cast_expression" and node.child_by_field_name("value") is not None:
            node = node.child_by_field_name("value")  # type: ignore[assignment]
        else:
            return node


def outermost(node: Node) -> Node:
    """The outermost node that is `node` wrapped in parentheses or casts (`((int)x)` for `x`)."""
    while node.parent is not None and node.parent.type in ("parenthesized_expression", "cast_expression"):
        node = node.parent
    return node


def outermost_signed(node: Node) -> Node:
    """The outermost node that is `node` under unary operators and parentheses (`-(448.f)` for `448.f`)."""
    while node.parent is not None and node.parent.type in ("unary_expression", "parenthesized_expression"):
        node = node.parent
    return node


def without_parentheses(node: Node) -> Node:
    """`x` for `(x)`, `((x))`, `(x /* why */)`: `node` without the parentheses (and comments) around it."""
    while node.type == "parenthesized_expression":
        inner = [child for child in node.named_children if child.type != "comment"]
        if len(inner) != 1:
            return node
        node = inner[0]
    return node


def _operator_of(node: Node, ctx: CudaContext) -> str | None:
    """The operator of a binary expression (`&&`, `<`, ...); None for other nodes."""
    operator = node.child_by_field_name("operator") if node.type == "binary_expression" else None
    return None if operator is None else ctx.text(operator)


def whole_condition(node: Node, ctx: CudaContext) -> Node:
    """The whole `&&`/`||` chain (and the parentheses around it) that `node` is a term of."""
    while node.parent is not None and (
        node.parent.type == "parenthesized_expression" or _operator_of(node.parent, ctx) in ("&&", "||")
    ):
        node = node.parent
    return node


def largest_terms(node: Node, ctx: CudaContext, holds: Callable[[Node], bool]) -> list[Node]:
    """The largest parts of the `&&`/`||` chain `node` for each of whose comparisons `holds` is true: `node`
    itself when all are, else such parts of its sides (`force || (a >= 8 && b >= 0)`: the parenthesised part)."""
    if _all_terms(node, ctx, holds):
        return [node]
    inner = without_parentheses(node)
    if _operator_of(inner, ctx) not in ("&&", "||"):
        return []
    sides = (inner.child_by_field_name("left"), inner.child_by_field_name("right"))
    return [term for side in sides if side is not None for term in largest_terms(side, ctx, holds)]


def _all_terms(node: Node, ctx: CudaContext, holds: Callable[[Node], bool]) -> bool:
    inner = without_parentheses(node)
    if _operator_of(inner, ctx) in ("&&", "||"):
        sides = (inner.child_by_field_name("left"), inner.child_by_field_name("right"))
        return all(side is not None and _all_terms(side, ctx, holds) for side in sides)
    return _operator_of(inner, ctx) in _COMPARISONS and holds(inner)


def short_circuited(node: Node, ctx: CudaContext) -> bool:
    """Inside `false && (...)` within its statement (how fixes disable a test on ROCm), or after a conjunct false
    wherever ROCm compiles it (`haveArch && (major * 10 + minor == 120)` where ROCm's declaration is `bool haveArch
    = false;`, the `#else` of `#ifndef USE_ROCM`): never evaluated on ROCm."""
    child = node
    for ancestor in ctx.ancestors(node):
        if ancestor.type in STATEMENT_TYPES:
            return False
        if _operator_of(ancestor, ctx) == "&&" and child == ancestor.child_by_field_name("right"):
            left = ancestor.child_by_field_name("left")
            if left is not None and _false_on_rocm(left, ctx):
                return True
        child = ancestor
    return False


def _false_on_rocm(node: Node, ctx: CudaContext) -> bool:
    """`false`, a conjunction with such a term, or a local flag whose ROCm declaration initialises it to `false`
    and which nothing ROCm compiles assigns, increments or takes the address of (a value the ROCm build never
    sets)."""
    inner = without_parentheses(node)
    if inner.type == "false":
        return True
    if _operator_of(inner, ctx) == "&&":
        sides = (inner.child_by_field_name("left"), inner.child_by_field_name("right"))
        return any(side is not None and _false_on_rocm(side, ctx) for side in sides)
    if inner.type != "identifier":
        return False
    value = ctx.declared_value(inner)
    declarator = value.parent if value is not None else None
    if value is None or without_parentheses(value).type != "false" or declarator is None:
        return False
    uses = ctx.local_uses(declarator)
    return uses is not None and not any(_written(use, ctx) for use in uses if not ctx.is_rocm_gated(use))


def _written(identifier: Node, ctx: CudaContext) -> bool:
    """Whether a use of a variable may change it: assigned (`x = ...`, `x |= ...`), incremented, or its address
    or a reference to it taken (`&x`, an argument a callee may bind to a reference)."""
    parent = outermost(identifier).parent
    if parent is None:
        return False
    if parent.type == "assignment_expression":
        return parent.child_by_field_name("left") == outermost(identifier)
    if parent.type in ("update_expression", "argument_list"):
        return True
    return parent.type == "pointer_expression" and ctx.text(parent).startswith("&")


# Where `false && (<test>)` can replace a test without parentheses around it (lowest-precedence slots).
_LOOSE_SLOTS = frozenset(
    {
        "condition_clause",
        "init_declarator",
        "argument_list",
        "parenthesized_expression",
        "return_statement",
        "expression_statement",
    }
)


def disabled(test: Node, ctx: CudaContext) -> str:
    """`false && (<test>)`, the test never evaluated (what `short_circuited` recognises), in parentheses as a
    whole unless it stands where any expression may (a condition, an initialiser, an argument)."""
    inner = ctx.text(test) if test.type == "parenthesized_expression" else f"({ctx.text(test)})"
    loose = test.parent is not None and test.parent.type in _LOOSE_SLOTS
    return f"false && {inner}" if loose else f"(false && {inner})"


_ARITHMETIC = frozenset({"+", "-", "*"})
_NumberUse = tuple[Literal["comparison", "switch", "arithmetic"], Node]


def number_use(value: Node, ctx: CudaContext) -> _NumberUse | None:
    """What the number `value` decides, through parentheses, casts and the `+`/`-`/`*` arithmetic around it:
    ("comparison", the comparison), ("switch", the `switch` statement), or ("arithmetic", the largest such
    expression) when it only computes another number (`major * 10 + minor`); None for other uses."""
    top = outermost(value)
    computed = False
    while top.parent is not None and _operator_of(top.parent, ctx) in _ARITHMETIC:
        top = outermost(top.parent)
        computed = True
    parent = top.parent
    if parent is not None and _operator_of(parent, ctx) in _COMPARISONS:
        return "comparison", parent
    if parent is not None and parent.type == "condition_clause":
        statement = parent.parent
        if statement is not None and statement.type == "switch_statement":
            return "switch", statement
    return ("arithmetic", top) if computed else None


def binary_parts(node: Node | None, ctx: CudaContext) -> tuple[Node, str, Node] | None:
    """(left, operator text, right) of a binary expression; None for anything else."""
    if node is None or node.type != "binary_expression":
        return None
    left, operator, right = (node.child_by_field_name(f) for f in ("left", "operator", "right"))
    if left is None or operator is None or right is None:
        return None
    return left, ctx.text(operator), right


def assigned_name(node: Node, ctx: CudaContext) -> str | None:
    """The variable `node` initialises or is assigned to (through parentheses and casts): `lane` for the
    `threadIdx.x & 31` of `int lane = (int)(threadIdx.x & 31);`."""
    current = outermost(node)
    parent = current.parent
    if parent is None:
        return None
    if parent.type == "init_declarator" and parent.child_by_field_name("value") == current:
        target = parent.child_by_field_name("declarator")
    elif parent.type == "assignment_expression" and parent.child_by_field_name("right") == current:
        target = parent.child_by_field_name("left")
    else:
        return None
    return ctx.text(target) if target is not None and target.type == "identifier" else None


def loop_counter(loop: Node, ctx: CudaContext) -> tuple[str, Node] | None:
    """(the counter's name, its initial value) of `for (int i = 16; ...)` or `for (i = 16; ...)`."""
    initializer = loop.child_by_field_name("initializer")
    if initializer is None:
        return None
    if initializer.type == "declaration":
        declarator = initializer.child_by_field_name("declarator")
        if declarator is None or declarator.type != "init_declarator":
            return None
        name, value = declarator.child_by_field_name("declarator"), declarator.child_by_field_name("value")
    elif initializer.type == "assignment_expression":
        name, value = initializer.child_by_field_name("left"), initializer.child_by_field_name("right")
    else:
        return None
    if name is None or value is None or name.type != "identifier":
        return None
    return ctx.text(name), value


def array_dimensions(declarator: Node) -> tuple[Node | None, list[Node]]:
    """The name and the size expressions of the declarator `s[A][B]` (outermost first)."""
    sizes: list[Node] = []
    current: Node | None = declarator
    while current is not None and current.type == "array_declarator":
        size = current.child_by_field_name("size")
        if size is not None:
            sizes.append(size)
        current = current.child_by_field_name("declarator")
    return current, sizes


def _has_specifier(declaration: Node, ctx: CudaContext, *words: str) -> bool:
    """Whether the declaration says one of `words` as a qualifier or storage class (`const`, `constexpr`,
    `static`, ...)."""
    return any(
        child.type in ("type_qualifier", "storage_class_specifier") and ctx.text(child) in words
        for child in declaration.children
    )


def named_constants(node: Node, ctx: CudaContext) -> list[tuple[Node, Node]]:
    """(name, value) of each named value a declaration, member or enumerator defines: the initialised
    declarators of a `const`/`constexpr`/`static` declaration (not a loop counter), such a member's
    (`static constexpr int kWarpSize = 32;`), an enumerator's (`THREADS_PER_WARP = 32`)."""
    if node.type == "enumerator":
        pairs = [(node.child_by_field_name("name"), node.child_by_field_name("value"))]
    elif not _has_specifier(node, ctx, "const", "constexpr", "static"):
        return []
    elif node.type == "field_declaration":
        pairs = [(node.child_by_field_name("declarator"), node.child_by_field_name("default_value"))]
    else:
        pairs = [
            (declarator.child_by_field_name("declarator"), declarator.child_by_field_name("value"))
            for declarator in node.children_by_field_name("declarator")
            if declarator.type == "init_declarator"
        ]
    return [
        (name, value)
        for name, value in pairs
        if name is not None and value is not None and name.type in ("identifier", "field_identifier")
    ]


def identifiers_in(ctx: CudaContext, span: Span) -> list[Node]:
    """The identifiers and type identifiers inside `span` (a node or a byte span), in source order."""
    found: list[Node] = []
    stack = [ctx.tree.root_node.descendant_for_byte_range(span.start_byte, span.end_byte)]
    while stack:
        current = stack.pop()
        if current is None:
            continue
        if (
            current.type in ("identifier", "type_identifier")
            and span.start_byte <= current.start_byte
            and current.end_byte <= span.end_byte
        ):
            found.append(current)
        stack.extend(current.children)
    return sorted(found, key=lambda n: n.start_byte)


def is_certainly_device(node: Node, ctx: CudaContext) -> bool:
    """Inside a `__global__`/`__device__` function, or a `__shared__` declaration."""
    if ctx.is_device_code(node):
        return True
    declaration = ctx.enclosing(node, "declaration")
    return declaration is not None and b"__shared__" in ctx.content[declaration.start_byte : declaration.end_byte]


def is_certainly_host(node: Node, ctx: CudaContext) -> bool:
    """Host code, or file scope (seen by the host pass too); not where a parse error hides the function."""
    function = ctx.function_of(node)
    if function is None:
        return not ctx.in_error(node)
    if ctx.is_device_code(node):
        return False
    # `__shared__` only exists in device code, whatever the (possibly mis-parsed) function head says.
    declaration = ctx.enclosing(node, "declaration")
    return declaration is None or b"__shared__" not in ctx.content[declaration.start_byte : declaration.end_byte]


_KERNEL_LAUNCH = re.compile(rb"<<<|\b\w*LaunchKernel\w*\s*\(")


def launches_kernels(node: Node, ctx: CudaContext) -> bool:
    """The function around `node` launches a kernel (`k<<<grid, block>>>(...)`, `hipLaunchKernelGGL(k, ...)`):
    host code, whatever macros its head holds (`DEVICE_INLINE` may expand to `__device__`)."""
    function = ctx.function_of(node)
    return (
        function is not None and _KERNEL_LAUNCH.search(ctx.content[function.start_byte : function.end_byte]) is not None
    )


def qualified_segments(node: Node, ctx: CudaContext) -> list[str]:
    """`["nvcuda", "wmma", "fragment"]` for `nvcuda::wmma::fragment<...>` (template arguments dropped)."""
    segments: list[str] = []
    current: Node | None = node
    while current is not None and current.type == "qualified_identifier":
        scope = current.child_by_field_name("scope")
        if scope is not None:
            segments.append(ctx.text(scope) if scope.type == "namespace_identifier" else _base_name(scope, ctx))
        current = current.child_by_field_name("name")
    if current is not None:
        segments.append(_base_name(current, ctx))
    return segments


def _base_name(node: Node, ctx: CudaContext) -> str:
    name = node.child_by_field_name("name") if node.type in ("template_type", "template_function") else None
    return ctx.text(name if name is not None else node)


def declares_void_pointer(declaration: Node, name: str, ctx: CudaContext) -> bool:
    """`void* k`, `const void* k`: already the type HIP wants."""
    type_node = declaration.child_by_field_name("type")
    if type_node is None or ctx.text(type_node) != "void":
        return False
    for declarator in declaration.children_by_field_name("declarator"):
        current: Node | None = declarator
        if current is not None and current.type == "init_declarator":
            current = current.child_by_field_name("declarator")
        if current is not None and current.type == "pointer_declarator":
            inner = current.child_by_field_name("declarator")
            if inner is not None and ctx.text(inner) == name:
                return True
    return False


# --- constant expressions -------------------------------------------------------------------------------
# Where the search for an enclosing constant context stops: beyond these the value is a run-time one.
_RUNTIME_BOUNDARIES = frozenset(
    {
        "compound_statement",
        "expression_statement",
        "argument_list",
        "function_definition",
        "return_statement",
        "lambda_expression",
        "parameter_list",
        "translation_unit",
        "field_declaration_list",
        "declaration_list",
        "for_statement",
        "while_statement",
        "do_statement",
        "subscript_expression",
        "initializer_list",
        "new_expression",
        "assignment_expression",
        "field_initializer_list",
        "preproc_if",
        "preproc_ifdef",
    }
)
_CONSTEXPR = ("constexpr", "consteval", "constinit")


def constant_context(node: Node, ctx: CudaContext) -> str | None:
    """What requires a constant expression around `node` (`a template argument`, `an array size`, ...), if
    anything: C++ rejects a run-time value there."""
    child, every_path = node, True  # whether every evaluation of the enclosing expression evaluates `node`
    for ancestor in ctx.ancestors(node):
        kind = ancestor.type
        every_path = every_path and not _chooses_operands(ancestor, ctx)
        if kind == "template_argument_list":
            return "a template argument"
        if kind == "template_parameter_list":
            return "a template parameter default"
        if kind == "static_assert_declaration":
            return "a `static_assert`"
        if kind == "launch_bounds":
            return "`__launch_bounds__`"
        if kind in _CONSTANT_FIELDS:
            description, field = _CONSTANT_FIELDS[kind]
            return description if child == ancestor.child_by_field_name(field) else None
        if kind == "init_declarator":
            declaration = ancestor.parent
            constant = (
                declaration is not None
                and child == ancestor.child_by_field_name("value")
                and _has_specifier(declaration, ctx, *_CONSTEXPR)
            )
            return "a `constexpr` initialiser" if constant else None
        if kind == "field_declaration":
            constant = child == ancestor.child_by_field_name("default_value") and _has_specifier(
                ancestor, ctx, *_CONSTEXPR
            )
            return "a `constexpr` initialiser" if constant else None
        if kind == "if_statement":
            constant = child == ancestor.child_by_field_name("condition") and any(
                c.type == "constexpr" for c in ancestor.children
            )
            return "an `if constexpr` condition" if constant else None
        if kind == "return_statement":
            constant = every_path and _constexpr_function_return(ancestor, ctx)
            return "the `return` of a `constexpr` function" if constant else None
        if kind in _RUNTIME_BOUNDARIES:
            return None
        child = ancestor
    return None


def _chooses_operands(expression: Node, ctx: CudaContext) -> bool:
    """`c ? a : b`, `a && b`, `a || b`: an expression evaluating some operands only on some paths."""
    if expression.type == "conditional_expression":
        return True
    operator = expression.child_by_field_name("operator") if expression.type == "binary_expression" else None
    return operator is not None and ctx.text(operator) in ("&&", "||")


def _constexpr_function_return(statement: Node, ctx: CudaContext) -> bool:
    """Whether the `return` is the whole body of a `constexpr` function (`constexpr int get_warp_size() { return
    warpSize; }`): with an expression evaluating the name on every path, such a function never produces a constant,
    which C++ requires of it (clang's `-Winvalid-constexpr`, an error by default)."""
    body = statement.parent
    function = body.parent if body is not None and body.type == "compound_statement" else None
    if function is None or function.type != "function_definition":
        return False
    statements = [child for child in body.named_children if child.type != "comment"] if body is not None else []
    return statements == [statement] and _has_specifier(function, ctx, *_CONSTEXPR)


# Node type -> (what it is, the field that must hold a constant).
_CONSTANT_FIELDS = {
    "enumerator": ("an enumerator", "value"),
    "case_statement": ("a `case` label", "value"),
    "array_declarator": ("an array size", "size"),
}


# --- text before any parse --------------------------------------------------------------------------------
# What tree-sitter may skip between an operator and its right operand: whitespace (Unicode's too, in UTF-8),
# line continuations and comments. Possessive, so that a file full of `//` does not backtrack.
_GAP = (
    rb"(?:[ \t\n\r\f\v]++|\xc2\xa0|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80|\xef\xbb\xbf"
    rb"|\\\r?\n|/\*.*?\*/|//(?:[^\r\n\\]++|\\(?:\r?\n|.))*+)*+"
)


def literal_pattern(value: int) -> bytes:
    """A regular expression for a whole integer literal token worth `value`, in the spellings parse_int reads."""
    hex_digits = "".join(f"[{c}{c.upper()}]" if c.isalpha() else c for c in f"{value:x}")
    return f"(?:0[xX]0*{hex_digits}|0+{value:o}|{value})[uUlL]*(?![\\w.'])".encode()


def operator_with_literal(operator: str, value: int) -> re.Pattern[bytes]:
    """Where the content may hold `<operator> <literal worth value>` (`% 32`, `>>/*lanes*/5`): every binary
    expression of that shape starts its right-hand side after a match's operator. It starts with the operator's
    text, which re searches for quickly."""
    return re.compile(re.escape(operator.encode()) + _GAP + literal_pattern(value), re.DOTALL)


__all__ = [
    "STATEMENT_TYPES",
    "array_dimensions",
    "assigned_name",
    "bare",
    "binary_parts",
    "constant_context",
    "declares_void_pointer",
    "disabled",
    "identifiers_in",
    "is_certainly_device",
    "is_certainly_host",
    "is_own_name",
    "is_scoped_member",
    "largest_terms",
    "launches_kernels",
    "literal_pattern",
    "loop_counter",
    "named_constants",
    "number_use",
    "operator_with_literal",
    "outermost",
    "outermost_signed",
    "qualified_segments",
    "short_circuited",
    "whole_condition",
    "without_parentheses",
]


def is_own_name(node: Node, ctx: CudaContext) -> bool:
    """Whether `node` names something the code itself defines or declares where it is used: a function, type
    or enumerator (`is_defined_name`), macro, or a variable or parameter in scope (`GaussClusterable *this_cluster = ...;
    this_cluster->count()`). Such a name is the project's, not the CUDA API it happens to spell."""
    if is_defined_name(node) or _is_macro_name(node):
        return True
    if node.type == "type_identifier":
        return _is_template_type_parameter(node, ctx)
    return node.type == "identifier" and ctx.declaration_of(node) is not None


def _is_template_type_parameter(node: Node, ctx: CudaContext) -> bool:
    """Whether a type name is a type parameter of a template around it (`template <typename curandState>`): the
    code's own name for whatever type the template is given."""
    name = ctx.text(node)
    for template in (a for a in ctx.ancestors(node) if a.type == "template_declaration"):
        parameters = template.child_by_field_name("parameters")
        for parameter in parameters.named_children if parameters is not None else ():
            if parameter.type not in ("type_parameter_declaration", "optional_type_parameter_declaration"):
                continue
            declared = parameter.child_by_field_name("name") or next(
                (child for child in parameter.named_children if child.type == "type_identifier"), None
            )
            if declared is not None and ctx.text(declared) == name:
                return True
    return False


def is_builtin_warpsize(node: Node, ctx: CudaContext) -> bool:
    """Whether `node` is `warpSize` naming HIP's built-in: not a member of the code's own class or namespace
    (`DeviceTraits::warpSize`, a `static constexpr` a header may set to 64 for HIP; `cfg.warpSize` is a field, never an
    identifier), nor a template parameter or variable of the code's own that shadows it where it is used. `::warpSize`
    is the built-in."""
    return ctx.text(node) == "warpSize" and not is_scoped_member(node) and ctx.declaration_of(node) is None


def is_scoped_member(node: Node) -> bool:
    """Whether `node` is the name in `X::name` (`DeviceTraits::warpSize`, `ns::cfg::warpSize`): a member of a named
    class or namespace, the code's own, not the global name it spells. `::name` names the global one."""
    parent = node.parent
    return (
        parent is not None
        and parent.type == "qualified_identifier"
        and parent.child_by_field_name("name") == node
        and parent.child_by_field_name("scope") is not None
    )


def _is_macro_name(node: Node) -> bool:
    """`__syncwarp` in `#define __syncwarp() ...`: the project's own spelling of the name."""
    parent = node.parent
    return (
        parent is not None
        and parent.type in ("preproc_def", "preproc_function_def")
        and parent.child_by_field_name("name") == node
    )


def is_defined_name(node: Node) -> bool:
    """Whether `node` is a name the code itself defines: the function a declarator introduces (`cudaError_t
    cudaFoo(int)`), a type a `typedef` introduces, a struct/enum/union given a body under that name, or an
    enumerator of an enum it defines (`enum CUresult { CUDA_ERROR_NOT_PERMITTED, ... }`). The project's own
    definition of a CUDA name (a stub for ROCm) is not a use of the API."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "enumerator":
        return parent.child_by_field_name("name") == node
    if parent.type == "function_declarator":
        return parent.child_by_field_name("declarator") == node
    if parent.type == "type_definition":
        return node in parent.children_by_field_name("declarator")
    if parent.type in ("enum_specifier", "struct_specifier", "union_specifier", "class_specifier"):
        return parent.child_by_field_name("name") == node and parent.child_by_field_name("body") is not None
    return False


def defines_type(ctx: CudaContext, *names: str) -> bool:
    """Whether the file defines a type under one of `names`: a struct, class, union or enum with a body, a
    `typedef` or a `using` alias (a CPU stand-in or HIP shim for a CUDA type, whose members are what it
    declares). Found from the names' occurrences, each a leaf looked up in the tree."""
    root = ctx.tree.root_node
    for name in names:
        for offset in ctx.word_offsets(name):
            end = offset + len(name.encode())
            leaf = root.descendant_for_byte_range(offset, end)
            if leaf is None or leaf.type != "type_identifier" or (leaf.start_byte, leaf.end_byte) != (offset, end):
                continue  # part of a longer name, no type's name, or inside a comment or string
            if is_defined_name(leaf) or _is_alias_name(leaf):
                return True
    return False


def defines_name(ctx: CudaContext, name: str) -> bool:
    """Whether the file defines `name` where a ROCm build compiles the definition (`is_defined_name`): a function
    (`static __device__ int __dp4a(int a, int b, int c)` in a HIP branch, the project's own version of a CUDA
    intrinsic), a type (`typedef struct {...} CUmemFabricHandle_v1;`, a stand-in for toolkits that lack it) or an
    enumerator (`enum cudaError_t { cudaErrorStubLibrary = 34 };`). Its uses then name the project's own, not the
    API. A definition only NVIDIA compiles leaves ROCm's uses to the API."""
    return any(ctx.branch(leaf).on_rocm is not False for leaf in definitions_of(ctx, name))


def definitions_of(ctx: CudaContext, name: str) -> list[Node]:
    """The occurrences of `name` where the file defines it (`is_defined_name`), in source order."""
    root, found = ctx.tree.root_node, []
    for offset in ctx.word_offsets(name):
        end = offset + len(name.encode())
        leaf = root.descendant_for_byte_range(offset, end)
        if leaf is None or (leaf.start_byte, leaf.end_byte) != (offset, end) or leaf.parent is None:
            continue  # part of a longer name, or inside a comment or string
        if is_defined_name(leaf):
            found.append(leaf)
    return found


def _is_alias_name(node: Node) -> bool:
    parent = node.parent
    return parent is not None and parent.type == "alias_declaration" and parent.child_by_field_name("name") == node
