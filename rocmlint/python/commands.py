"""Calls that run a program: which argument is the command, how it names the program, and whether the code
around the call copes with the program being missing (a presence check first, or a handler for the failure)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from rocmlint.python.conditions import guarded_by
from rocmlint.python.frontend import PythonContext
from rocmlint.python.idioms import (
    PROCESS_RUNNERS,
    handled_by_try,
    is_none,
    leaves_quietly,
    literal_text,
    literal_token,
    only_displayed,
)
from rocmlint.python.scopes import argument_values, dotted_name, unstarred
from rocmlint.python.semantic import FUNCTION_DEFS, MAX_DEPTH
from rocmlint.python.values import Follow, Through

# Runners that go through a shell: a missing program is exit status 127, not FileNotFoundError.
_SHELL_RUNNERS = frozenset(
    {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput", "asyncio.create_subprocess_shell"}
)
# Runners that return the exit status, and those that return it with the output (`status, output = ...`).
_STATUS_RUNNERS = frozenset({"os.system", "subprocess.call"})
_STATUS_AND_OUTPUT_RUNNERS = frozenset({"subprocess.getstatusoutput"})
# Runners whose first argument is the program alone (`create_subprocess_exec("nvidia-smi", "-L")`).
_PROGRAM_RUNNERS = frozenset({"asyncio.create_subprocess_exec", "sh.Command"})
_COMMAND_KEYWORDS = ("args", "cmd", "command", "program")
# Calls that look a program up on PATH by name (`find_executable`/`which` also when their import is not
# resolved).
EXECUTABLE_LOOKUPS = frozenset({"shutil.which", "distutils.spawn.find_executable", "find_executable", "which"})
# Calls that test whether a path (a program's, a toolkit's) exists.
PATH_TESTS = frozenset({"os.path.exists", "os.path.isfile", "os.path.isdir", "os.access"})
# nvcc as a program name, and the calls that read an environment variable.
NVCC_PROGRAMS = frozenset({"nvcc", "nvcc.exe"})
_ENV_READS = frozenset({"os.environ.get", "os.getenv"})
_PRESENCE_CHECKS = EXECUTABLE_LOOKUPS | PATH_TESTS
# What a missing program raises when it is executed directly.
MISSING_PROGRAM_ERRORS = frozenset({"FileNotFoundError", "OSError", "EnvironmentError", "IOError"})
# The handlers that catch every error.
BROAD_ERRORS = frozenset({"Exception", "BaseException"})
# Through a shell the program's absence shows as a failed command instead.
_FAILED_COMMAND_ERRORS = frozenset({"CalledProcessError", "SubprocessError"})
# A command line is followed through names, not through conditional arms.
_NO_ARMS = Follow(arms=False)
# The first string literal a text starts with (the shortest, so `"-O" "3"` is two), and its prefix and quote.


@dataclass(frozen=True)
class Command:
    """A call that runs a program (`subprocess.run(...)`, `os.system(...)`, ...)."""

    call: ast.Call
    argument: ast.expr  # an argv list, a shell string, or the program alone
    program_alone: bool  # the argument is the program itself, not a command line
    through_shell: bool


def command_of(ctx: PythonContext, call: ast.Call) -> Command | None:
    """The command `call` runs, when it is a process runner (the first argument, or `args=`/`cmd=`/...)."""
    runner = ctx.qualified_name(call.func)
    if runner not in PROCESS_RUNNERS:
        return None
    first = ctx.semantic.positional(call, 0)
    arguments = (
        [first] if first is not None else [ctx.semantic.argument(call, word, None) for word in _COMMAND_KEYWORDS]
    )
    argument = next((found for found in arguments if found is not None), None)
    if argument is None:
        return None
    shell = ctx.semantic.keyword(call, "shell")
    through_shell = runner in _SHELL_RUNNERS or (
        shell is not None and isinstance(shell.value, ast.Constant) and shell.value.value is True
    )
    return Command(call, argument, runner in _PROGRAM_RUNNERS, through_shell)


@dataclass(frozen=True)
class HelperRun:
    """A call of a def of this file that runs one of its arguments as a command (`run_and_read_all(run_lambda,
    "nvidia-smi topo -m")`, `allgather_run("nvidia-smi topo -m")`)."""

    command: Command  # the helper's call, with the argument it runs
    inner: Command | None  # the process runner inside the helper; None when it runs a runner it was handed


def helper_run(ctx: PythonContext, call: ast.Call) -> HelperRun | None:
    """`call` calls a def of this file (not a method) whose parameter is the command of a process runner in
    its body (as it is, or `shlex.split`/`.split()` of it), or the only argument of a call of another of its
    parameters (a runner handed to it: `rc, out, err = run_lambda(command)`)."""
    function = ctx.semantic.local_function(call.func)
    if function is None:
        return None
    parameters = [*function.args.posonlyargs, *function.args.args]
    for inner_call in (node for node in ast.walk(function) if isinstance(node, ast.Call)):
        inner = command_of(ctx, inner_call)
        if inner is not None:
            runs = _parameter_name(ctx, inner.argument)
        elif _is_parameter(inner_call.func, parameters):
            runs = _handed_runner_argument(inner_call)
        else:
            continue
        position = next((i for i, parameter in enumerate(parameters) if parameter.arg == runs), None)
        argument = ctx.semantic.argument(call, runs, position) if runs is not None else None
        if argument is not None:
            shell = inner.through_shell if inner is not None else False
            return HelperRun(Command(call, argument, program_alone=False, through_shell=shell), inner)
    return None


def tries_another_when_empty(ctx: PythonContext, call: ast.Call) -> bool:
    """`output = run_and_read_all(run, "nvidia-smi topo -m")` followed, in the same block, by `if output is
    None:` (or `if not output:`) that assigns `output` again: the other program is the fallback."""
    statement = ctx.parent(call)
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return False
    target = statement.targets[0]
    if not isinstance(target, ast.Name):
        return False
    block = ctx.semantic.block_of(statement)
    later = block[next(i for i, step in enumerate(block) if step is statement) + 1 :]
    return any(
        isinstance(step, ast.If) and _tests_empty(step.test, target.id) and _assigns(ctx, step, target.id)
        for step in later
    )


def _tests_empty(test: ast.expr, name: str) -> bool:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return isinstance(test.operand, ast.Name) and test.operand.id == name
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.Eq)):
        return isinstance(test.left, ast.Name) and test.left.id == name and is_none(test.comparators[0])
    return False


def _assigns(ctx: PythonContext, branch: ast.If, name: str) -> bool:
    """A statement of `branch`'s body (not its test or `else:`) assigns the variable `name`."""
    written = (found for found in ctx.references.names(name) if isinstance(found.ctx, ast.Store))
    return any(ctx.semantic.is_within(found, statement) for found in written for statement in branch.body)


def _parameter_name(ctx: PythonContext, command: ast.expr) -> str | None:
    split = split_command(ctx, command) if isinstance(command, ast.Call) else None
    command = split if split is not None else command
    return command.id if isinstance(command, ast.Name) else None


def _handed_runner_argument(call: ast.Call) -> str | None:
    """`command` of `run_lambda(command)`: a plain call with one positional argument that is a name."""
    if not isinstance(call.func, ast.Name) or len(call.args) != 1 or call.keywords:
        return None
    return call.args[0].id if isinstance(call.args[0], ast.Name) else None


def _is_parameter(func: ast.expr, parameters: list[ast.arg]) -> bool:
    return isinstance(func, ast.Name) and any(parameter.arg == func.id for parameter in parameters)


def split_command(ctx: PythonContext, call: ast.Call) -> ast.expr | None:
    """The command string of `shlex.split("nvidia-smi -L")` or `"nvidia-smi -L".split()`."""
    arguments = argument_values(call)
    if ctx.qualified_name(call.func) == "shlex.split" and arguments:
        return arguments[0]
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "split" and not arguments:
        return func.value
    return None


def program_name(text: str, alone: bool) -> str | None:
    """The lower-case file name of the program a command line starts with (`nvidia-smi` for
    `"/usr/bin/nvidia-smi -L"`); with `alone`, only when the text is the program and nothing else."""
    words = text.split()
    if not words or (alone and len(words) != 1):
        return None
    return re.split(r"[\\/]", words[0].strip("\"'"))[-1].lower()


def command_programs(ctx: PythonContext, command: ast.expr) -> list[str]:
    """The programs (`program_name`) a command may start: the file an argv list or tuple starts with
    (`path_programs`), or the first word of a shell string; through names assigned once, `+` (its left
    side) and `split_command`, not conditional arms."""

    def visit(node: ast.expr) -> list[str] | Through | None:
        if isinstance(node, (ast.List, ast.Tuple)):
            return path_programs(ctx, unstarred(node.elts[0])) if node.elts else []
        if isinstance(node, ast.BinOp):
            return Through((node.left,))
        split = split_command(ctx, node) if isinstance(node, ast.Call) else None
        if split is not None:
            return Through((split,))
        text = literal_text(ctx, node)
        if text is None:
            return None
        name = program_name(text, alone=False)
        return [name] if name is not None else []

    return ctx.values.trace(command, visit, _NO_ARMS)


def path_programs(ctx: PythonContext, path: ast.expr) -> list[str]:
    """The file names (`program_name`) a path may end in: `"nvcc"`, `home + "/bin/nvcc"`,
    `Path(home) / "bin" / "nvcc"`, `f"{home}/bin/nvcc"`, the last argument of a call
    (`os.path.join(home, "bin", "nvcc")`, `shutil.which("nvcc")`); through names assigned once and both
    arms of conditionals (`"nvcc" if home is None else home + "/bin/nvcc"`)."""

    def visit(node: ast.expr) -> list[str] | Through | None:
        text = literal_text(ctx, node)
        if text is not None:
            name = program_name(text, alone=True)
            return [name] if name is not None else []
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
            return Through((node.right,))
        if isinstance(node, ast.Call):
            positional = [arg for arg in node.args if not isinstance(arg, ast.Starred)]
            return Through(tuple(positional[-1:]))
        return None

    return ctx.values.trace(path, visit)


def copes_with_missing_program(ctx: PythonContext, command: Command, programs: frozenset[str]) -> bool:
    """Whether the code around `command` (within its function) copes with its program (one of `programs`)
    missing: inside a presence check (`if shutil.which("nvidia-smi"):`), after an early exit when it is
    missing (a `raise` is no fallback), or in a `try:` whose handler catches the failure and does not
    re-raise (`FileNotFoundError`, `OSError`, `Exception`; `CalledProcessError` through a shell), or a def returns
    whether it succeeded through a shell (`answered_by_status`), or its output through a shell is only shown
    (`output_only_displayed`), or it is in a def made only after the program ran (`made_after_a_run`)."""
    failures = (
        MISSING_PROGRAM_ERRORS | BROAD_ERRORS | (_FAILED_COMMAND_ERRORS if command.through_shell else frozenset())
    )

    def is_check(expr: ast.expr) -> bool:
        return isinstance(expr, ast.Call) and _is_presence_check(ctx, expr, programs)

    def checks_presence(test: ast.expr, taken: bool) -> bool:
        return presence(ctx, test, is_check).guards(taken)

    if guarded_by(ctx, command.call, checks_presence, leaves_quietly) or handled_by_try(ctx, command.call, failures):
        return True
    if answered_by_status(ctx, command) or output_only_displayed(ctx, command) or leaves_on_failure(ctx, command):
        return True
    return callers_handle(ctx, command.call, failures) or made_after_a_run(ctx, command.call, programs, failures)


def made_after_a_run(ctx: PythonContext, node: ast.AST, programs: frozenset[str], failures: frozenset[str]) -> bool:
    """`node` is in a def (a callback, at any depth) made in the body of a `try:` whose handler copes with the
    failure, after a statement of that body that runs one of `programs` directly (not through a shell): the def
    exists only where that run found the program, as the memory readers a GPU probe attaches to what it returns
    (`proc = Popen(["nvidia-smi", "-L"])`, then `def cbk(): Popen(["nvidia-smi", "--query-gpu=memory.used"])`)."""
    in_def = False
    child = node
    for ancestor in ctx.ancestors(node):
        in_def = in_def or isinstance(ancestor, FUNCTION_DEFS)
        if in_def and isinstance(ancestor, ast.Try) and child in ancestor.body and handled_by_try(ctx, child, failures):
            earlier = ancestor.body[: next(index for index, found in enumerate(ancestor.body) if found is child)]
            if any(_runs_directly(ctx, statement, earlier, programs) for statement in earlier):
                return True
        child = ancestor
    return False


def _runs_directly(ctx: PythonContext, statement: ast.stmt, block: list[ast.stmt], programs: frozenset[str]) -> bool:
    """`statement` of `block` (not a def it holds) runs one of `programs` without a shell, which raises when it is
    missing: a command written there, or a name the last assignment before it in `block` gives one."""
    scope = ctx.semantic.enclosing_scope_node(statement)
    for call in ast.walk(statement):
        command = command_of(ctx, call) if isinstance(call, ast.Call) else None
        if command is None or command.through_shell or ctx.semantic.enclosing_scope_node(call) is not scope:
            continue
        argument = command.argument
        if isinstance(argument, ast.Name):
            argument = _last_assigned(argument.id, block[: block.index(statement)]) or argument
        if programs.intersection(command_programs(ctx, argument)):
            return True
    return False


def _last_assigned(name: str, statements: list[ast.stmt]) -> ast.expr | None:
    """The value the last of `statements` assigning `name` alone gives it."""
    for statement in reversed(statements):
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target = statement.targets[0]
        if isinstance(target, ast.Name) and target.id == name:
            return statement.value
    return None


def output_only_displayed(ctx: PythonContext, command: Command) -> bool:
    """A shell run whose output is only shown: `print(subprocess.getoutput("nvidia-smi"))`, or a run assigned to a
    name whose every read in its scope is shown (`print(cp.stdout)`). A shell reports a missing program as a failed
    command, so the run prints an empty or "not found" text and nothing depends on it."""
    if not command.through_shell or ctx.semantic.keyword(command.call, "check") is not None:
        return False
    if only_displayed(ctx, command.call):
        return True
    statement = ctx.semantic.parents.get(command.call)
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return False
    target = statement.targets[0]
    if not isinstance(target, ast.Name):
        return False
    scope = ctx.semantic.enclosing_scope_node(statement)
    reads = [read for read in ctx.references.reads(target.id) if ctx.semantic.is_within(read, scope)]
    return bool(reads) and all(only_displayed(ctx, _output_of(ctx, read)) for read in reads)


def _output_of(ctx: PythonContext, read: ast.Name) -> ast.expr:
    """The run's output a read of its result stands for: `cp.stdout`, `cp.stderr`, or the read itself."""
    parent = ctx.semantic.parents.get(read)
    return parent if isinstance(parent, ast.Attribute) and parent.attr in ("stdout", "stderr") else read


def answered_by_status(ctx: PythonContext, command: Command) -> bool:
    """A def returns whether a shell run succeeded (`return subprocess.call("nvidia-smi", shell=True) == 0`, the
    `returncode` of a `subprocess.run` that does not check): the run is the def's test of whether the program
    works here, and a shell reports a missing program as exit status 127, so the def answers False, never raises."""
    if not command.through_shell:
        return False
    parent = ctx.semantic.parents.get(command.call)
    if isinstance(parent, ast.Attribute) and parent.attr == "returncode":
        if ctx.semantic.keyword(command.call, "check") is not None:
            return False
        parent = ctx.semantic.parents.get(parent)
    elif ctx.qualified_name(command.call.func) not in _STATUS_RUNNERS:
        return False
    return (
        isinstance(parent, ast.Compare)
        and _compares_with_zero(parent)
        and isinstance(ctx.semantic.parents.get(parent), ast.Return)
    )


def leaves_on_failure(ctx: PythonContext, command: Command) -> bool:
    """`status, output = subprocess.getstatusoutput("nvidia-smi -q")` followed by `if status != 0: return None`
    (or `if status:`): a shell reports a missing program as exit status 127, so where the program is missing the
    def leaves quietly before it reads the output, as a `try:` falling back would."""
    if ctx.qualified_name(command.call.func) not in _STATUS_AND_OUTPUT_RUNNERS:
        return False
    statement = ctx.semantic.parents.get(command.call)
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return False
    target = statement.targets[0]
    if not (isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name)):
        return False
    block = ctx.semantic.block_of(statement)
    following = block[block.index(statement) + 1 :]
    return bool(following) and _leaves_when_failed(following[0], target.elts[0].id)


def _leaves_when_failed(statement: ast.stmt, status: str) -> bool:
    """`if status != 0: return ...` or `if status: continue`: a non-zero status leaves the block quietly."""
    if not isinstance(statement, ast.If) or not leaves_quietly(statement.body):
        return False
    test = statement.test
    if isinstance(test, ast.Name):
        return test.id == status
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.ops[0], ast.NotEq)
        and _compares_with_zero(test)
        and any(isinstance(side, ast.Name) and side.id == status for side in (test.left, *test.comparators))
    )


def _compares_with_zero(compare: ast.Compare) -> bool:
    """`status == 0` or `status != 0` (either way round)."""
    if len(compare.ops) != 1 or not isinstance(compare.ops[0], (ast.Eq, ast.NotEq)):
        return False
    return any(isinstance(side, ast.Constant) and side.value == 0 for side in (compare.left, *compare.comparators))


def callers_handle(ctx: PythonContext, node: ast.AST, failures: frozenset[str]) -> bool:
    """`node` is in a module-level def that is only called in this file, each call in a `try:` whose handler
    catches the failure (`try: memory = nvidia_gpu_memory() except: pass`, then the `rocm-smi` reader): a
    public one also read by no module of the project that imports this one."""
    function = next((ancestor for ancestor in ctx.ancestors(node) if isinstance(ancestor, FUNCTION_DEFS)), None)
    if function is None or not ctx.is_module_level(function):
        return False
    uses = ctx.references.uses_of(function)
    if not uses or not all(isinstance(use, ast.Call) and handled_by_try(ctx, use, failures) for use in uses):
        return False
    return ctx.gates.unread_by_importers(function.name)


class Presence(NamedTuple):
    """What a test says about whether something exists (a program, a toolkit)."""

    implied: bool  # the test is true => it exists
    when_missing: bool  # it is missing => the test is true

    def guards(self, taken: bool) -> bool:
        """Code where the test is `taken` (true; False: false) runs only when the thing exists; code
        under the other branch (`not taken`) is where it is missing."""
        return self.implied if taken else self.when_missing


_UNKNOWN = Presence(implied=False, when_missing=False)


def presence(ctx: PythonContext, test: ast.expr, present: Callable[[ast.expr], bool], depth: int = 0) -> Presence:
    """What `test` says about whether something exists, given `present(expr)`: `expr` is truthy exactly
    when it exists (`shutil.which("nvidia-smi")`, `CUDA_HOME`). Through `not`, comparisons with None
    (`x is None`, `None is not x`), `and`/`or`, and names assigned once."""
    if depth > MAX_DEPTH:
        return _UNKNOWN
    if present(test):
        return Presence(implied=True, when_missing=False)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = presence(ctx, test.operand, present, depth + 1)
        return Presence(implied=inner.when_missing, when_missing=inner.implied)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return _none_comparison(ctx, test, present, depth)
    if isinstance(test, ast.BoolOp):
        operands = [presence(ctx, value, present, depth + 1) for value in test.values]
        implied, when_missing = [found.implied for found in operands], [found.when_missing for found in operands]
        if isinstance(test.op, ast.And):
            return Presence(any(implied), all(when_missing))
        return Presence(all(implied), any(when_missing))
    if isinstance(test, ast.Name):
        value = ctx.single_value(test)
        if value is not None and value is not test:
            return presence(ctx, value, present, depth + 1)
    return _UNKNOWN


def _none_comparison(
    ctx: PythonContext, test: ast.Compare, present: Callable[[ast.expr], bool], depth: int
) -> Presence:
    """`x is not None` means the same as `x`; `x is None` its negation (None on either side)."""
    operator, right = test.ops[0], test.comparators[0]
    subject = test.left if is_none(right) else right if is_none(test.left) else None
    if subject is None:
        return _UNKNOWN
    inner = presence(ctx, subject, present, depth + 1)
    if isinstance(operator, (ast.IsNot, ast.NotEq)):
        return inner
    if isinstance(operator, (ast.Is, ast.Eq)):
        return Presence(implied=inner.when_missing, when_missing=inner.implied)
    return _UNKNOWN


def _is_presence_check(ctx: PythonContext, call: ast.Call, programs: frozenset[str]) -> bool:
    arguments = argument_values(call)
    if ctx.qualified_name(call.func) not in _PRESENCE_CHECKS or not arguments:
        return False
    path = ctx.string_value(arguments[0])
    return path is not None and program_name(path, alone=True) in programs


def rewritten_arguments(
    ctx: PythonContext, arguments: ast.List, rewrite: Callable[[str], str | None], takes_value: frozenset[str]
) -> str | None:
    """The text of an argument list literal with its string arguments rewritten one by one: `rewrite(text)`
    gives the new text, "" to drop the argument (and its value, the next argument unless that starts with
    `-`, when the option is in `takes_value`: `"-gencode", "arch=..."`), or None to keep it as written.
    Repeated arguments are kept once. None when an argument to rewrite is not one plain string holding one
    option (it cannot be split safely)."""
    kept: list[str] = []
    drop_value = False
    for element in arguments.elts:
        text = None if isinstance(element, ast.Starred) else literal_text(ctx, element)
        if drop_value and text is not None and not text.startswith("-"):
            drop_value = False
            continue
        drop_value = False
        new = rewrite(text) if text is not None else None
        if text is None or new is None:
            kept.append(ctx.code_of(element).strip())
            continue
        token = literal_token(ctx, element)
        if len(text.split()) != 1 or token is None:
            return None
        if new:
            kept.append(f"{token.prefix}{token.quote}{new}{token.quote}")
        else:
            drop_value = text in takes_value
    return "[" + ", ".join(dict.fromkeys(kept)) + "]"


def is_cuda_home(ctx: PythonContext, expr: ast.expr) -> bool:
    """`CUDA_HOME`, `torch.utils.cpp_extension.CUDA_HOME`, a `cuda_home` alias, `os.getenv("CUDA_HOME")`,
    `shutil.which("nvcc")`, `os.path.exists(os.path.join(CUDA_HOME, "bin", "nvcc"))`: the CUDA toolkit's presence."""
    if isinstance(expr, (ast.Name, ast.Attribute)):
        names = (ctx.qualified_name(expr) or "", dotted_name(expr) or "")  # resolved, and as written
        return any(name.rsplit(".", 1)[-1].lower() == "cuda_home" for name in names)
    if isinstance(expr, ast.Call):
        callee = ctx.qualified_name(expr.func) or ""
        argument = ctx.semantic.positional(expr, 0)
        value = ctx.string_value(argument) if argument is not None else None
        if callee in _ENV_READS:
            return value == "CUDA_HOME"
        if callee in EXECUTABLE_LOOKUPS:
            return value == "nvcc"
        if callee in PATH_TESTS and argument is not None:
            return _mentions_cuda_toolkit(ctx, argument)
    return False


def _mentions_cuda_toolkit(ctx: PythonContext, expr: ast.expr) -> bool:
    for node in ctx.semantic.descendants(expr):
        if isinstance(node, (ast.Name, ast.Attribute)) and is_cuda_home(ctx, node):
            return True
        text = literal_text(ctx, node)
        if text is not None and program_name(text, alone=True) in NVCC_PROGRAMS:
            return True
    return False
