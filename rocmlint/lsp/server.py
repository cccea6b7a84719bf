"""The language server: push diagnostics, quick fixes, fix-all, noqa actions and hover on noqa codes.

Documents are linted from the editor's text on open and save, and after a pause in typing (the
debounce). Settings come from the same configuration files as `rocmlint check`, resolved again whenever
a configuration file changes or the client says its configuration changed.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from rocmlint import __version__
from rocmlint.config import CONFIG_FILES, ConfigError, ConfigResolver, Overrides, Settings
from rocmlint.diagnostics import Applicability, Diagnostic
from rocmlint.discovery import GitIgnore, is_path_excluded
from rocmlint.docs import rule_page
from rocmlint.engine import Engine, forget_project_models
from rocmlint.fix import fix_content
from rocmlint.lsp import convert
from rocmlint.lsp.text import Encoding, encode_text, from_lsp, source_encoding, split_lines
from rocmlint.registry import rule_by_code
from rocmlint.source import DecodeError, SourceFile, language_of

logger = logging.getLogger(__name__)

DEFAULT_DEBOUNCE = 0.3  # seconds of quiet after the last change before linting
# Editors' language ids for documents whose file name says nothing (untitled buffers).
_LANGUAGE_IDS = {"python": "python", "cuda": "cuda", "cuda-cpp": "cuda", "cpp": "cuda", "c": "cuda", "hip": "cuda"}
_CONFIG_GLOBS = tuple(f"**/{name}" for name in CONFIG_FILES)


@dataclass(frozen=True)
class Linted:
    """What was last published for a document: the version it describes (so a quick fix from a
    diagnostic's data is offered only while the text is unchanged) and the diagnostics."""

    version: int | None
    diagnostics: list[Diagnostic]


class RocmlintServer(LanguageServer):
    def __init__(self, debounce: float = DEFAULT_DEBOUNCE) -> None:
        # Full sync: the editor sends the whole text, so rocmlint always sees exactly the buffer.
        super().__init__("rocmlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.debounce = debounce
        self.engine = Engine()
        self.resolver = ConfigResolver(Overrides())
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.published: dict[str, Linted] = {}
        self.config_errors_shown: set[str] = set()
        # Per folder: the configuration files that could apply and their mtimes, to notice an edit
        # that the editor did not report (Neovim 0.7 has no file watching).
        self.config_stamps: dict[Path, tuple[tuple[str, int | None], ...]] = {}

    # -- settings ---------------------------------------------------------------------------------

    def reload_settings(self) -> None:
        """Forget every resolved configuration (a file changed) and lint the open documents again."""
        root = self._root()
        self.resolver = ConfigResolver(Overrides(), cwd=root)
        self.engine = Engine()  # its project index caches files that may have changed as well
        self.config_errors_shown.clear()
        self.config_stamps.clear()  # each lint below takes a fresh stamp
        for uri in list(self.workspace.text_documents):
            self.lint(uri)

    def _root(self) -> Path | None:
        root = self.workspace.root_path
        return Path(root) if root else None

    def settings_for(self, document: TextDocument) -> Settings | None:
        """The document's settings; None (and one message) when its configuration is broken."""
        try:
            path = _file_path(document)
            return self.resolver.for_file(path) if path else self.resolver.default()
        except ConfigError as error:
            message = f"rocmlint: {error}"
            if message not in self.config_errors_shown:
                self.config_errors_shown.add(message)
                self.window_show_message(types.ShowMessageParams(types.MessageType.Error, message))
            return None

    @property
    def encoding(self) -> Encoding:
        negotiated = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        # PositionEncodingKind is a str enum whose str() is its name: take the value ("utf-16").
        return cast(Encoding, getattr(negotiated, "value", negotiated))

    # -- linting ----------------------------------------------------------------------------------

    def check(self, document: TextDocument, text: str) -> tuple[list[Diagnostic], str, bytes] | None:
        """Lint `text` as `document`: (diagnostics, codec, the bytes linted), or None if not ours."""
        language = document_language(document)
        settings = self.settings_for(document) if language else None
        if language is None or settings is None or self._excluded(document, settings):
            return None
        data = encode_text(text, language)
        path = _file_path(document)
        name = str(path) if path else document.uri
        report = self.engine.check_bytes(name, data, settings, language)
        return report.diagnostics, source_encoding(data, language), data

    def _excluded(self, document: TextDocument, settings: Settings) -> bool:
        # As `check --force-exclude`: a file the configuration excludes gets no diagnostics.
        path = _file_path(document)
        return path is not None and is_path_excluded(path, settings, GitIgnore(), is_dir=False)

    def lint(self, uri: str) -> None:
        document = self.workspace.get_text_document(uri)
        if self._config_changed(document):
            self.reload_settings()  # lints every open document, this one included
            return
        text = document.source
        result = self.check(document, text)
        diagnostics = result[0] if result else []
        lines = split_lines(text)
        self.published[uri] = Linted(document.version, diagnostics)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri,
                version=document.version,
                diagnostics=[convert.to_lsp_diagnostic(d, lines, self.encoding) for d in diagnostics],
            )
        )

    def _config_changed(self, document: TextDocument) -> bool:
        path = _file_path(document)
        if path is None:
            return False
        stamp = _config_stamp(path.parent)
        previous = self.config_stamps.get(path.parent)
        self.config_stamps[path.parent] = stamp
        return previous is not None and previous != stamp

    def apply_client_settings(self, settings: object) -> None:
        """The client's own settings (`initializationOptions`, or `rocmlint` in `workspace/didChangeConfiguration`):
        `debounce`, the seconds of quiet after a change before linting (0 lints at once)."""
        if isinstance(settings, dict) and isinstance(settings.get("rocmlint"), dict):
            settings = settings["rocmlint"]
        debounce = settings.get("debounce") if isinstance(settings, dict) else None
        if isinstance(debounce, (int, float)) and not isinstance(debounce, bool) and debounce >= 0:
            self.debounce = float(debounce)

    def lint_later(self, uri: str) -> None:
        """Lint after `debounce` seconds without another change to this document (at once without one)."""
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        if self.debounce <= 0:
            self.lint(uri)
            return
        self.pending[uri] = asyncio.get_running_loop().create_task(self._lint_after_pause(uri))

    async def _lint_after_pause(self, uri: str) -> None:
        await asyncio.sleep(self.debounce)
        self.pending.pop(uri, None)
        if uri in self.workspace.text_documents:
            self.lint(uri)

    def forget(self, uri: str) -> None:
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self.published.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # -- code actions -----------------------------------------------------------------------------

    def fix_all(self, document: TextDocument) -> types.TextEdit | None:
        """Every safe fix, pass after pass as `check --fix` does, as one edit of the document."""
        text = document.source
        first = self.check(document, text)
        if first is None:
            return None
        language = document_language(document) or "python"

        def check(data: bytes) -> tuple[list[Diagnostic], str]:
            result = self.check(document, _decode(data, language))
            return (result[0], result[1]) if result else ([], "utf-8")

        outcome = fix_content(first[2], check)
        if not outcome.changed:
            return None
        return convert.whole_text_edit(text, _decode(outcome.data, language), self.encoding)

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        document = self.workspace.get_text_document(params.text_document.uri)
        wanted = params.context.only
        actions: list[types.CodeAction] = []
        if _wants(wanted, types.CodeActionKind.QuickFix):
            for diagnostic in params.context.diagnostics:
                if diagnostic.source == convert.SOURCE:
                    actions += self._quick_fixes(document, diagnostic)
        # Unasked (a plain lightbulb request), fix-all is offered only when a safe fix was published.
        if _wants(wanted, convert.FIX_ALL_KIND) and (wanted is not None or self._has_safe_fix(document.uri)):
            edit = self.fix_all(document)
            if edit is not None:
                actions.append(self._action("Fix all safe rocmlint problems", convert.FIX_ALL_KIND, document, [edit]))
        return actions

    def _quick_fixes(self, document: TextDocument, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
        actions = []
        code = str(diagnostic.code)
        fix = convert.fix_from_data(diagnostic.data)
        if fix is not None and self._is_current(document):
            title, unsafe, edits = fix
            label = f"{title} ({code}, unsafe fix: review the change)" if unsafe else f"{title} ({code})"
            action = self._action(label, types.CodeActionKind.QuickFix, document, edits, diagnostic)
            action.is_preferred = not unsafe
            actions.append(action)
        noqa = self._noqa_action(document, diagnostic, code)
        if noqa is not None:
            actions.append(noqa)
        return actions

    def _noqa_action(self, document: TextDocument, diagnostic: types.Diagnostic, code: str) -> types.CodeAction | None:
        language = document_language(document)
        if language is None:
            return None
        data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
        line = int(data.get("noqa_line", diagnostic.range.start.line))
        try:
            source = SourceFile.from_bytes(document.uri, encode_text(document.source, language), language)
        except DecodeError:
            return None
        edit = convert.noqa_edit(source, line, code, self.encoding)
        if edit is None:
            return None
        marker = "#" if language == "python" else "//"
        return self._action(
            f"Suppress {code} with `{marker} noqa: {code}`", types.CodeActionKind.QuickFix, document, [edit], diagnostic
        )

    def _has_safe_fix(self, uri: str) -> bool:
        linted = self.published.get(uri)
        return linted is not None and any(
            d.fix is not None and d.fix.applicability is Applicability.SAFE for d in linted.diagnostics
        )

    def _is_current(self, document: TextDocument) -> bool:
        """Whether the published diagnostics (and the fixes in their data) describe the text as it is."""
        linted = self.published.get(document.uri)
        return linted is not None and linted.version == document.version

    @staticmethod
    def _action(
        title: str,
        kind: str,
        document: TextDocument,
        edits: list[types.TextEdit],
        diagnostic: types.Diagnostic | None = None,
    ) -> types.CodeAction:
        return types.CodeAction(
            title=title,
            kind=kind,
            diagnostics=[diagnostic] if diagnostic else None,
            edit=types.WorkspaceEdit(changes={document.uri: edits}),
        )

    # -- hover --------------------------------------------------------------------------------------

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        document = self.workspace.get_text_document(params.text_document.uri)
        lines = split_lines(document.source)
        if params.position.line >= len(lines):
            return None
        column = from_lsp(params.position.line, params.position.character, lines, self.encoding).column - 1
        code = convert.noqa_code_at(lines[params.position.line], column)
        rule = rule_by_code(code) if code else None
        if rule is None:
            return None
        page = rule_page(rule) + f"\n[{rule.code} documentation]({rule.url()})\n"
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=page))


def document_language(document: TextDocument) -> str | None:
    """The document's language ("python" or "cuda"): from the file name, else from the editor's language id."""
    path = _file_path(document)
    language = language_of(path.name) if path else None
    return language or _LANGUAGE_IDS.get(document.language_id or "")


def _file_path(document: TextDocument) -> Path | None:
    path = to_fs_path(document.uri) if document.uri.startswith("file:") else None
    return Path(path) if path else None


def _config_stamp(folder: Path) -> tuple[tuple[str, int | None], ...]:
    """The mtime of every configuration file name in `folder` and above (None: absent)."""
    stamp: list[tuple[str, int | None]] = []
    for candidate_folder in (folder, *folder.parents):
        for name in CONFIG_FILES:
            candidate = candidate_folder / name
            try:
                stamp.append((str(candidate), candidate.stat().st_mtime_ns))
            except OSError:
                stamp.append((str(candidate), None))
    return tuple(stamp)


def _decode(data: bytes, language: str) -> str:
    return data.decode(source_encoding(data, language), errors="surrogateescape")


def _wants(only: Sequence[str] | None, kind: str) -> bool:
    """Whether a request limited to `only` kinds asks for `kind` (kinds are hierarchical, dot-separated)."""
    return only is None or any(kind == wanted or kind.startswith(wanted + ".") for wanted in only)


def _teaches_project_model(uri: str) -> bool:
    """A C/C++ file or a build file: what the C++ project model learns from."""
    path = to_fs_path(uri) or ""
    name = os.path.basename(path)
    return language_of(path) == "cuda" or name in ("setup.py", "CMakeLists.txt") or name.endswith(".cmake")


def _is_config_file(uri: str) -> bool:
    return os.path.basename(to_fs_path(uri) or uri) in CONFIG_FILES


def create_server(debounce: float = DEFAULT_DEBOUNCE) -> RocmlintServer:
    server = RocmlintServer(debounce)

    @server.feature(types.INITIALIZE)
    def initialize(ls: RocmlintServer, params: types.InitializeParams) -> None:
        ls.apply_client_settings(params.initialization_options)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: RocmlintServer, params: types.InitializedParams) -> None:
        ls.resolver = ConfigResolver(Overrides(), cwd=ls._root())
        if _can_watch_files(ls.client_capabilities):
            watchers = [types.FileSystemWatcher(glob_pattern=glob) for glob in _CONFIG_GLOBS]
            registration = types.Registration(
                id="rocmlint-config-files",
                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
            )
            try:
                await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
            except Exception as error:  # noqa: BLE001 - without watchers, saving a config file still reloads
                logger.warning("cannot watch configuration files: %s", error)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RocmlintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.lint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RocmlintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.lint_later(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: RocmlintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if _is_config_file(uri):
            ls.reload_settings()
        elif _teaches_project_model(uri):
            # A saved header or build file can change what every open C++ file's gates and constants mean.
            forget_project_models()
            for open_uri in list(ls.workspace.text_documents):
                ls.lint(open_uri)
        elif uri in ls.workspace.text_documents:
            ls.lint(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RocmlintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: RocmlintServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(_is_config_file(change.uri) for change in params.changes):
            ls.reload_settings()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: RocmlintServer, params: types.DidChangeConfigurationParams) -> None:
        ls.apply_client_settings(params.settings)
        ls.reload_settings()

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, convert.FIX_ALL_KIND],
            resolve_provider=False,
        ),
    )
    def code_action(ls: RocmlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return ls.code_actions(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: RocmlintServer, params: types.HoverParams) -> types.Hover | None:
        return ls.hover(params)

    return server


def _can_watch_files(capabilities: types.ClientCapabilities) -> bool:
    workspace = capabilities.workspace
    watched = workspace.did_change_watched_files if workspace else None
    return bool(watched and watched.dynamic_registration)


def serve(debounce: float = DEFAULT_DEBOUNCE, log_file: str | None = None) -> None:
    """Run the server on stdin/stdout until the client says exit."""
    if log_file:
        logging.basicConfig(filename=log_file, level=logging.INFO)
    create_server(debounce).start_io()
