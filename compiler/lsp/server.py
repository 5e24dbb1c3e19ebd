"""The pygls adapter: LSP messages in, pure feature modules, LSP messages out."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from .. import __version__
from ..config import CONFIG_NAME, ROOT_MARKERS
from ..discover import SUFFIX
from . import convert, wiring
from .disk import LocalDisk, read_config_text
from .handlers import REQUESTS
from .positions import UTF16, LineIndex
from .workspace import Analysis, Wire, Workspace

log = logging.getLogger("prosec.lsp")

WATCHED = ("**/*" + SUFFIX, *(f"**/{marker}" for marker in ROOT_MARKERS))


class ProseServer(LanguageServer):
    """A pygls server holding the workspace model and the debounce timers."""

    def __init__(self, debounce: float, wire: Wire | None) -> None:
        super().__init__(
            "prosec", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental
        )
        self.debounce = debounce
        self.model = Workspace(LocalDisk(), wire)
        self.uris: dict[Path, str] = {}  # resolved path → the URI the client uses
        self.timers: dict[Path, asyncio.TimerHandle] = {}
        self.active: dict[Path, float] = {}  # loop time of the last change or lint, per root
        self.triggers: dict[Path, set[Path]] = {}
        self.published: dict[str, list[lsp.Diagnostic]] = {}
        self.config_errors: dict[Path, str | None] = {}

    # -- helpers -----------------------------------------------------------------------------

    @property
    def encoding(self) -> str:
        value = self.workspace.position_encoding
        return str(getattr(value, "value", value) or UTF16)

    def path_of(self, uri: str) -> Path | None:
        fs_path = to_fs_path(uri)
        return Path(fs_path).resolve() if fs_path else None

    def source_path(self, uri: str) -> Path | None:
        """The path of a `.prose.md` document; None for anything else (a client may send
        every Markdown file: those are not contracts and get nothing)."""
        path = self.path_of(uri)
        return path if path is not None and path.name.endswith(SUFFIX) else None

    def uri_of(self, path: Path) -> str:
        return self.uris.get(path.resolve()) or from_fs_path(str(path)) or path.as_uri()

    def analysis_at(self, uri: str) -> tuple[Analysis, str, LineIndex] | None:
        """The analysis of the project holding `uri`, its display path and its line index."""
        path = self.source_path(uri)
        if path is None:
            return None
        analysis = self.model.analysis(self.model.root_of(path))
        display = analysis.display(path)
        if display is None:
            return None
        return analysis, display, analysis.index(display, self.encoding)

    # -- diagnostics -------------------------------------------------------------------------

    def schedule(self, root: Path, trigger: Path) -> None:
        """Debounce on both edges: the first change after a quiet spell is linted at once;
        changes that follow it (or that queued up while a lint ran) are linted together
        once they pause for `self.debounce` seconds."""
        self.triggers.setdefault(root, set()).add(trigger)
        loop = asyncio.get_running_loop()
        now = loop.time()
        quiet = now - self.active.get(root, float("-inf")) >= self.debounce
        self.active[root] = now
        pending = self.timers.pop(root, None)
        if pending is not None:
            pending.cancel()
        if self.debounce <= 0 or (quiet and pending is None):
            self.publish(root)
            return
        self.timers[root] = loop.call_later(self.debounce, self.publish, root)

    def publish(self, root: Path) -> None:
        """Send diagnostics for every open file of the project (an unchanged list only to
        the files whose edit or save triggered this round)."""
        pending = self.timers.pop(root, None)
        if pending is not None:
            pending.cancel()
        triggers = self.triggers.pop(root, set())
        try:
            self._publish(root, triggers)
            self.active[root] = asyncio.get_running_loop().time()
        except Exception as exc:  # a bug here must not stop the server answering
            log.exception("publishing diagnostics for %s failed", root)
            self.window_log_message(
                lsp.LogMessageParams(
                    type=lsp.MessageType.Error,
                    message=f"prosec: internal error while linting {root}: {exc!r}; "
                    "please report it",
                )
            )

    def _publish(self, root: Path, triggers: set[Path]) -> None:
        analysis = self.model.analysis(root)
        self.report_config(root, analysis.config_error)
        for path in self.model.open_paths(root):
            display = analysis.display(path)
            if display is None:
                continue
            index = analysis.index(display, self.encoding)
            found = [convert.diagnostic(d, index) for d in analysis.diagnostics_for(display)]
            uri = self.uri_of(path)
            if path not in triggers and self.published.get(uri) == found:
                continue
            self.published[uri] = found
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(
                    uri=uri, diagnostics=found, version=self.model.version(path)
                )
            )
        self.publish_config(analysis)

    def publish_config(self, analysis: Analysis) -> None:
        """Findings about prose.toml itself (stale wiring pins) go to its own URI."""
        path = analysis.root / CONFIG_NAME
        uri = self.uri_of(path)
        text = read_config_text(analysis.root) or ""
        index = LineIndex(text.replace("\r\n", "\n"), self.encoding)
        found = [convert.diagnostic(d, index) for d in analysis.diagnostics_for(CONFIG_NAME)]
        if self.published.get(uri, []) == found:
            return
        self.published[uri] = found
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=found)
        )

    def report_config(self, root: Path, error: str | None) -> None:
        if self.config_errors.get(root) == error:
            return
        self.config_errors[root] = error
        if error is not None:
            message = f"prosec: {error}; using the default settings until it is fixed"
            self.window_show_message(
                lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=message)
            )
            self.window_log_message(
                lsp.LogMessageParams(type=lsp.MessageType.Warning, message=message)
            )

    def clear(self, uri: str) -> None:
        self.published.pop(uri, None)
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )


def build(debounce: float = 0.025, wire: Wire | None = None) -> ProseServer:
    """The server with every feature registered (started with `.start_io()`); it wires
    projects with `wiring.Wiring()` unless given another `wire`."""
    server = ProseServer(debounce, wire or wiring.Wiring())
    for method, handler, options in HANDLERS:
        server.feature(method, options)(handler)
    return server


def _initialize(ls: ProseServer, params: lsp.InitializeParams) -> None:
    folders = [f.uri for f in params.workspace_folders or []]
    if not folders and params.root_uri:
        folders = [params.root_uri]
    ls.model.folders = [p for p in (ls.path_of(uri) for uri in folders) if p is not None]


def _initialized(ls: ProseServer, params: lsp.InitializedParams) -> None:
    capabilities = ls.client_capabilities.workspace
    watched = capabilities.did_change_watched_files if capabilities else None
    if watched is None or not watched.dynamic_registration:
        return
    options = lsp.DidChangeWatchedFilesRegistrationOptions(
        watchers=[lsp.FileSystemWatcher(glob_pattern=glob) for glob in WATCHED]
    )
    registration = lsp.Registration(
        id="prosec-watch",
        method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=options,
    )
    ls.client_register_capability(lsp.RegistrationParams(registrations=[registration]))


def _did_open(ls: ProseServer, params: lsp.DidOpenTextDocumentParams) -> None:
    document = params.text_document
    path = ls.source_path(document.uri)
    if path is None:
        return
    ls.uris[path] = document.uri
    root = ls.model.open(path, document.text, document.version)
    ls.triggers.setdefault(root, set()).add(path)
    ls.publish(root)


async def _did_change(ls: ProseServer, params: lsp.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    path = ls.source_path(uri)
    if path is None:
        return
    text = ls.workspace.get_text_document(uri).source
    root = ls.model.change(path, text, params.text_document.version)
    ls.schedule(root, path)


def _did_save(ls: ProseServer, params: lsp.DidSaveTextDocumentParams) -> None:
    path = ls.source_path(params.text_document.uri)
    if path is None:
        return
    for root in ls.model.refresh([path]) or [ls.model.root_of(path)]:
        ls.triggers.setdefault(root, set()).add(path)
        ls.publish(root)


def _did_close(ls: ProseServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    path = ls.source_path(uri)
    if path is None:
        return
    root = ls.model.close(path)
    ls.uris.pop(path, None)
    ls.clear(uri)
    ls.publish(root)  # the file's disk text replaces its buffer for the others


def _did_change_watched(ls: ProseServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    paths = [p for p in (ls.path_of(change.uri) for change in params.changes) if p]
    for root in ls.model.refresh(paths):
        ls.publish(root)


def _did_change_folders(ls: ProseServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
    removed = {ls.path_of(f.uri) for f in params.event.removed}
    added = [p for p in (ls.path_of(f.uri) for f in params.event.added) if p is not None]
    kept = [p for p in ls.model.folders if p not in removed]
    ls.model.folders = kept + [p for p in added if p not in kept]


def _shutdown(ls: ProseServer, params: Any) -> None:
    for handle in ls.timers.values():
        handle.cancel()
    ls.timers.clear()


# every notification the server handles, then the requests it answers
HANDLERS: tuple[tuple[str, Callable[..., Any], Any], ...] = (
    (lsp.INITIALIZE, _initialize, None),
    (lsp.INITIALIZED, _initialized, None),
    (lsp.TEXT_DOCUMENT_DID_OPEN, _did_open, None),
    (lsp.TEXT_DOCUMENT_DID_CHANGE, _did_change, None),
    (lsp.TEXT_DOCUMENT_DID_SAVE, _did_save, None),
    (lsp.TEXT_DOCUMENT_DID_CLOSE, _did_close, None),
    (lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, _did_change_watched, None),
    (lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, _did_change_folders, None),
    (lsp.SHUTDOWN, _shutdown, None),
    *REQUESTS,
)
