"""`rocmlint lsp` driven over stdio by a real LSP client (pytest-lsp), plus its position conversions."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from rocmlint.diagnostics import Location
from rocmlint.lsp.convert import noqa_code_at, whole_text_edit
from rocmlint.lsp.text import code_units, encode_text, from_lsp, split_lines, to_lsp

# The emoji takes 2 UTF-16 code units, 4 UTF-8 ones and 1 code point: the ROC101 column tells which was used.
MODEL = 's = "\U0001f600"; m = torch.compile(m, mode="reduce-overhead")\nx = 1  # noqa: ROC101\n'
ROC101_START = {"utf-16": 31, "utf-8": 33, "utf-32": 30}
KERNEL = "__device__ float f(float v) {\n  return __shfl_xor_sync(0xffffffff, v, 16);\n}\n"
# ROC002 (unused noqa, off by default) is turned on by the workspace's configuration: it has a safe fix.
CONFIG = 'extend-select = ["ROC002"]\n'
TIMEOUT = 30

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "rocmlint", "lsp", "--debounce", "0.05"])


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient) -> None:
    """A started server; each test initializes it (with its own capabilities and workspace)."""

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams) -> None:
        """Accept the server's file watchers, as an editor would."""

    yield
    if lsp_client.capabilities is None:  # the test failed before initializing: still end the server cleanly
        await lsp_client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
    await lsp_client.shutdown_session()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # bounds the configuration and .gitignore search
    (tmp_path / "rocmlint.toml").write_text(CONFIG)
    return tmp_path


async def start(client: LanguageClient, root: Path, capabilities: types.ClientCapabilities) -> types.InitializeResult:
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="project")],
        )
    )


def open_document(client: LanguageClient, path: Path, text: str, language_id: str) -> str:
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text))
    )
    return uri


async def diagnostics_for(
    client: LanguageClient, uri: str, done: Callable[[Sequence[types.Diagnostic]], bool]
) -> Sequence[types.Diagnostic]:
    """The diagnostics published for `uri` once `done(diagnostics)` holds."""

    async def wait() -> Sequence[types.Diagnostic]:
        while uri not in client.diagnostics or not done(client.diagnostics[uri]):
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        return client.diagnostics[uri]

    try:
        return await asyncio.wait_for(wait(), TIMEOUT)
    except TimeoutError:
        pytest.fail(f"no matching diagnostics for {uri} in {TIMEOUT}s; last published: {client.diagnostics.get(uri)}")


def codes(diagnostics: Sequence[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diagnostics)


def apply_edits(text: str, edits: Sequence[types.TextEdit], encoding: str = "utf-16") -> str:
    """What an editor does with a WorkspaceEdit's TextEdits (positions in the negotiated encoding)."""
    lines = split_lines(text)
    starts = [0] + [match.end() for match in re.finditer(r"\r\n|\r|\n", text)]

    def offset(position: types.Position) -> int:
        location = from_lsp(position.line, position.character, lines, encoding)  # type: ignore[arg-type]
        return starts[location.line - 1] + location.column - 1

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def code_actions(
    client: LanguageClient, uri: str, diagnostics: Sequence[types.Diagnostic], only: list[str] | None = None
) -> list[types.CodeAction]:
    whole = types.Range(types.Position(0, 0), types.Position(0, 0))
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostics[0].range if diagnostics else whole,
            context=types.CodeActionContext(diagnostics=list(diagnostics), only=only),
        )
    )
    return [action for action in result or [] if isinstance(action, types.CodeAction)]


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    assert action.edit is not None and action.edit.changes is not None
    return list(action.edit.changes[uri])


@pytest.mark.asyncio
async def test_diagnostics_quick_fix_and_the_diagnostic_going_away(client: LanguageClient, workspace: Path) -> None:
    result = await start(client, workspace, client_capabilities("visual-studio-code"))
    assert result.capabilities.position_encoding == "utf-16"

    py_uri = open_document(client, workspace / "model.py", MODEL, "python")
    cu_uri = open_document(client, workspace / "kernel.cu", KERNEL, "cuda-cpp")
    py_diagnostics = await diagnostics_for(client, py_uri, lambda d: codes(d) == ["ROC002", "ROC101"])
    cu_diagnostics = await diagnostics_for(client, cu_uri, lambda d: "ROC210" in codes(d))

    roc101, roc002 = sorted(py_diagnostics, key=lambda d: str(d.code), reverse=True)
    assert (roc101.code, roc101.source, roc101.range.start) == (
        "ROC101",
        "rocmlint",
        types.Position(0, ROC101_START["utf-16"]),
    )
    assert roc101.code_description is not None and roc101.code_description.href.endswith("ROC101.md")
    assert roc101.severity == types.DiagnosticSeverity.Warning
    assert roc002.code == "ROC002" and roc002.range.start == types.Position(1, 7)
    assert roc002.data["fix"]["applicability"] == "safe"
    roc210 = next(d for d in cu_diagnostics if d.code == "ROC210")
    assert roc210.range.start == types.Position(1, 9) and roc210.severity == types.DiagnosticSeverity.Error

    # The quick fix carried in the diagnostic's data: applying it removes the unused noqa.
    actions = await code_actions(client, py_uri, [roc002], only=[types.CodeActionKind.QuickFix])
    titles = [a.title for a in actions]
    assert titles == ["Remove unused `noqa` directive (ROC002)", "Suppress ROC002 with `# noqa: ROC002`"]
    assert actions[0].is_preferred
    fixed = apply_edits(MODEL, edits_of(actions[0], py_uri))
    assert fixed.splitlines()[1] == "x = 1"

    change(client, py_uri, 2, fixed)
    after = await diagnostics_for(client, py_uri, lambda d: "ROC002" not in codes(d))
    assert codes(after) == ["ROC101"]


@pytest.mark.asyncio
async def test_noqa_actions_fix_all_and_hover(client: LanguageClient, workspace: Path) -> None:
    await start(client, workspace, client_capabilities("neovim"))
    py_uri = open_document(client, workspace / "model.py", MODEL, "python")
    cu_uri = open_document(client, workspace / "kernel.cu", KERNEL, "cuda")
    py_diagnostics = await diagnostics_for(client, py_uri, lambda d: codes(d) == ["ROC002", "ROC101"])
    cu_diagnostics = await diagnostics_for(client, cu_uri, lambda d: "ROC210" in codes(d))

    # Suppressing ROC101 on line 1 adds a comment; in C++ it is a `//` comment.
    roc101 = next(d for d in py_diagnostics if d.code == "ROC101")
    suppress = [a for a in await code_actions(client, py_uri, [roc101]) if a.title.startswith("Suppress")]
    assert (
        apply_edits(MODEL, edits_of(suppress[0], py_uri))
        .splitlines()[0]
        .endswith('mode="reduce-overhead")  # noqa: ROC101')
    )
    roc210 = next(d for d in cu_diagnostics if d.code == "ROC210")
    suppress = [a for a in await code_actions(client, cu_uri, [roc210]) if a.title.startswith("Suppress")]
    assert apply_edits(KERNEL, edits_of(suppress[0], cu_uri)).splitlines()[1] == (
        "  return __shfl_xor_sync(0xffffffff, v, 16);  // noqa: ROC210"
    )

    # An existing noqa list gets the code appended.
    text = 'm = torch.compile(m, mode="reduce-overhead")  # noqa: ROC104\nimport pynvml  # noqa: ROC101\n'
    change(client, py_uri, 2, text)
    listed = await diagnostics_for(client, py_uri, lambda d: "ROC101" in codes(d) and d[0].range.start.line == 0)
    roc101 = next(d for d in listed if d.code == "ROC101")
    suppress = [a for a in await code_actions(client, py_uri, [roc101]) if a.title.startswith("Suppress")]
    assert apply_edits(text, edits_of(suppress[0], py_uri)).splitlines()[0].endswith("# noqa: ROC104, ROC101")

    # source.fixAll.rocmlint applies every safe fix (here: two ROC002 removals) in one edit.
    text = "x = 1  # noqa: ROC104\n\ny = 2  # noqa: ROC101, ROC116\n"
    change(client, py_uri, 3, text)
    await diagnostics_for(client, py_uri, lambda d: codes(d) == ["ROC002", "ROC002"])
    fix_all = await code_actions(client, py_uri, [], only=["source.fixAll.rocmlint"])
    assert [a.kind for a in fix_all] == ["source.fixAll.rocmlint"]
    assert apply_edits(text, edits_of(fix_all[0], py_uri)) == "x = 1\n\ny = 2\n"

    # Hover on a code inside a noqa comment shows the rule's page.
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri=py_uri), types.Position(line=2, character=18))
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.value.startswith("# reduce-overhead-compile (ROC101)")


@pytest.mark.asyncio
async def test_configuration_changes_are_picked_up(client: LanguageClient, workspace: Path) -> None:
    await start(client, workspace, client_capabilities("visual-studio-code"))
    uri = open_document(client, workspace / "model.py", MODEL, "python")
    await diagnostics_for(client, uri, lambda d: codes(d) == ["ROC002", "ROC101"])

    (workspace / "rocmlint.toml").write_text('ignore = ["ROC101"]\n')
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=(workspace / "rocmlint.toml").as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    assert codes(await diagnostics_for(client, uri, lambda d: "ROC101" not in codes(d))) == []

    (workspace / "rocmlint.toml").write_text(CONFIG)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    await diagnostics_for(client, uri, lambda d: codes(d) == ["ROC002", "ROC101"])


async def answered(client: LanguageClient, uri: str) -> None:
    """A request answered after everything sent before it was handled (the server reads in order)."""
    await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, 0))
    )


@pytest.mark.asyncio
async def test_the_debounce_is_a_client_setting(client: LanguageClient, workspace: Path) -> None:
    """`initializationOptions.debounce` and `rocmlint.debounce` in the configuration; 0 lints each change at once."""
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=workspace.as_uri(),
            initialization_options={"debounce": 600},
        )
    )
    uri = open_document(client, workspace / "model.py", MODEL, "python")
    await diagnostics_for(client, uri, lambda d: "ROC101" in codes(d))
    change(client, uri, 2, "x = 1\n")
    await answered(client, uri)
    assert "ROC101" in codes(client.diagnostics[uri])  # ten minutes of quiet first

    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"rocmlint": {"debounce": 0}})
    )
    await diagnostics_for(client, uri, lambda d: codes(d) == [])  # the open document linted again
    change(client, uri, 3, MODEL)
    await answered(client, uri)
    assert "ROC101" in codes(client.diagnostics[uri])  # linted before the next request was answered


@pytest.mark.asyncio
async def test_a_saved_header_changes_what_the_project_model_gates(client: LanguageClient, workspace: Path) -> None:
    """The C++ project model is learned again when a header is saved: the kernel's gate follows the header."""
    await start(client, workspace, client_capabilities("visual-studio-code"))
    header = workspace / "compat.cuh"
    header.write_text("#pragma once\n#ifdef __HIP_PLATFORM_AMD__\n#define XYZ_PORTED 1\n#endif\n")
    kernel = '#include "compat.cuh"\n#ifndef XYZ_PORTED\n#include <cub/cub.cuh>\n#endif\n'
    uri = open_document(client, workspace / "kernel.cu", kernel, "cuda")
    assert codes(await diagnostics_for(client, uri, lambda d: True)) == []

    header.write_text("#pragma once\n#define XYZ_OTHER 1\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=header.as_uri())))
    await diagnostics_for(client, uri, lambda d: codes(d) == ["ROC205"])


@pytest.mark.asyncio
@pytest.mark.parametrize("encoding", ["utf-8", "utf-32"])
async def test_negotiated_position_encoding(client: LanguageClient, workspace: Path, encoding: str) -> None:
    capabilities = client_capabilities("visual-studio-code")
    capabilities.general = types.GeneralClientCapabilities(position_encodings=[encoding, "utf-16"])
    result = await start(client, workspace, capabilities)
    assert result.capabilities.position_encoding == encoding
    uri = open_document(client, workspace / "model.py", MODEL, "python")
    diagnostics = await diagnostics_for(client, uri, lambda d: "ROC101" in codes(d))
    roc101 = next(d for d in diagnostics if d.code == "ROC101")
    assert roc101.range.start == types.Position(0, ROC101_START[encoding])


# -- the conversions on their own -------------------------------------------------------------------


@pytest.mark.parametrize(("encoding", "character"), [("utf-16", 8), ("utf-8", 11), ("utf-32", 7)])
def test_location_to_lsp_and_back(encoding: str, character: int) -> None:
    lines = split_lines('x = "\U0001f600é" + y\n')
    # Location column 8 (1-based code points) is the `"` after é.
    assert to_lsp(Location(1, 8), lines, encoding) == (0, character)  # type: ignore[arg-type]
    assert from_lsp(0, character, lines, encoding) == Location(1, 8)  # type: ignore[arg-type]
    # Past the end of the text: the end of the last line.
    assert to_lsp(Location(9, 1), lines, encoding) == (1, 0)  # type: ignore[arg-type]


def test_lines_end_where_lsp_says() -> None:
    assert split_lines("a\r\nb\rc\nd\u2028e") == ["a", "b", "c", "d\u2028e"]  # U+2028 is no LSP line end
    assert code_units("\U0001f600", "utf-16") == 2


def test_encode_text_keeps_a_coding_cookie() -> None:
    text = "# -*- coding: latin-1 -*-\ns = 'é'\n"
    assert encode_text(text, "python") == text.encode("latin-1")
    assert encode_text(text, "cuda") == text.encode("utf-8")


def test_noqa_code_under_the_cursor() -> None:
    line = "import pynvml  # noqa: ROC104, roc101"
    assert noqa_code_at(line, line.index("ROC104") + 2) == "ROC104"
    assert noqa_code_at(line, line.index("roc101")) == "ROC101"
    assert noqa_code_at(line, 3) is None


def test_whole_text_edit_is_trimmed_and_never_splits_crlf() -> None:
    edit = whole_text_edit("a\r\nx = 1  # noqa: ROC101\r\nb\r\n", "a\r\nx = 1\r\nb\r\n", "utf-16")
    assert (edit.range.start, edit.range.end, edit.new_text) == (types.Position(1, 5), types.Position(1, 21), "")
    assert apply_edits("a\r\nx\r\n", [whole_text_edit("a\r\nx\r\n", "a\nx\r\n", "utf-16")]) == "a\nx\r\n"


@pytest.mark.asyncio
async def test_an_unreported_configuration_edit_is_noticed_on_the_next_change(
    client: LanguageClient, workspace: Path
) -> None:
    """Clients without file watching (Neovim 0.7) say nothing when rocmlint.toml changes."""
    await start(client, workspace, client_capabilities("neovim@v0.7.0"))
    uri = open_document(client, workspace / "model.py", MODEL, "python")
    await diagnostics_for(client, uri, lambda d: codes(d) == ["ROC002", "ROC101"])
    (workspace / "rocmlint.toml").write_text('ignore = ["ROC101"]\n')
    change(client, uri, 2, MODEL + "\n")
    await diagnostics_for(client, uri, lambda d: codes(d) == [])
