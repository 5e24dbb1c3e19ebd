"""The pygls adapter: LSP messages in, pure feature modules, LSP messages out.

The event loop only reads messages, keeps the debounce clocks and writes replies. The
workspace model (buffers, parses, analyses) lives on one worker thread: every change is
applied there in arrival order, every analysis and every request that needs one runs
there, so a slow lint never stops the server reading (a `shutdown` is answered while a
large project is linted) and an analysis always sees every edit sent before it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from lsprotocol import types as lsp
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from .. import __version__
from ..config import CONFIG_NAME, ROOT_MARKERS
from ..discover import SUFFIX
from . import convert, wiring
from .disk import LocalDisk, read_config_text
from .early import Early
from .handlers import REQUESTS
from .positions import UTF16, LineIndex
from .stream import serve_stdin
from .workspace import Analysis, Wire, Workspace

log = logging.getLogger("prosec.lsp")

WATCHED = ("**/*" + SUFFIX, *(f"**/{marker}" for marker in ROOT_MARKERS))


@dataclass(slots=True)
class Round:
    """What one analysis of a project sends: each open file's diagnostics (and
    prose.toml's, with path None) with the version they are for."""

    root: Path
    triggers: set[Path]
    config_error: str | None = None
    files: list[tuple[Path | None, str, list[lsp.Diagnostic], int | None]] = field(
        default_factory=list
    )
    failure: str | None = None


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
        # the model's thread; `waiting` (under `_lock`) holds the roots whose analysis is
        # queued there and the files whose edits asked for it
        self.worker = concurrent.futures.ThreadPoolExecutor(1, "prosec-lsp-model")
        self.waiting: dict[Path, set[Path]] = {}
        self._lock = threading.Lock()

    # -- threads -----------------------------------------------------------------------------

    def start_io(
        self,
        stdin: BinaryIO | None = None,
        stdout: BinaryIO | None = None,
        early: Early | None = None,
    ) -> None:
        """Serve on stdin/stdout with the resynchronizing reader (stream.py), after what
        `early.answer_initialize` read (its reply to `initialize` is not sent twice)."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        if early is not None and early.answered is not None:
            _drop_reply(self.protocol, early.answered)
        try:
            asyncio.run(
                serve_stdin(
                    stdin or sys.stdin.buffer,
                    self.protocol,
                    self._stop_event.is_set,
                    self.report_stream,
                    early,
                )
            )
        except BrokenPipeError:
            log.error("the client closed the connection; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def shutdown(self) -> None:
        stop: Callable[[], None] = super().shutdown  # pygls leaves it unannotated
        stop()
        self.worker.shutdown(wait=False, cancel_futures=True)

    def report_stream(self, problem: str) -> None:
        """A framing or protocol problem: the log, and the client's output channel."""
        log.warning("%s", problem)
        self.window_log_message(
            lsp.LogMessageParams(type=lsp.MessageType.Warning, message=f"prosec: {problem}")
        )

    def on_model(self, function: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        """Run `function(*args)` on the model's thread (after everything queued before)."""
        return self.worker.submit(function, *args)

    def then(self, future: concurrent.futures.Future[Any], callback: Callable[[Any], None]) -> None:
        """Call `callback(result)` on the event loop once the model's job is done."""
        loop = asyncio.get_running_loop()

        def done(finished: concurrent.futures.Future[Any]) -> None:
            if finished.cancelled():
                return
            error = finished.exception()
            if error is not None:
                log.error("a workspace update failed", exc_info=error)
                return
            loop.call_soon_threadsafe(callback, finished.result())

        future.add_done_callback(done)

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
        """Queue an analysis of the project at `root` on the model's thread and send its
        diagnostics when it is done: for every open file, an unchanged list only to the
        files whose edit or save asked for this round. One analysis waits per project at
        most; it sees every edit sent before it runs."""
        pending = self.timers.pop(root, None)
        if pending is not None:
            pending.cancel()
        triggers = self.triggers.pop(root, set())
        with self._lock:
            queued = root in self.waiting
            self.waiting.setdefault(root, set()).update(triggers)
        if not queued:
            self.then(self.on_model(self._analyse, root), self._send)

    def _analyse(self, root: Path) -> Round:
        """On the model's thread: what one analysis of `root` has to send."""
        with self._lock:
            triggers = self.waiting.pop(root, set())
        result = Round(root=root, triggers=triggers)
        try:
            analysis = self.model.analysis(root)
            result.config_error = analysis.config_error
            for path in self.model.open_paths(root):
                display = analysis.display(path)
                if display is None:
                    continue
                index = analysis.index(display, self.encoding)
                found = [convert.diagnostic(d, index) for d in analysis.diagnostics_for(display)]
                result.files.append((path, self.uri_of(path), found, self.model.version(path)))
            text = read_config_text(analysis.root) or ""
            index = LineIndex(text.replace("\r\n", "\n"), self.encoding)
            found = [convert.diagnostic(d, index) for d in analysis.diagnostics_for(CONFIG_NAME)]
            result.files.append((None, self.uri_of(analysis.root / CONFIG_NAME), found, None))
        except Exception as exc:  # a bug here must not stop the server answering
            log.exception("publishing diagnostics for %s failed", root)
            result.failure = (
                f"prosec: internal error while linting {root}: {exc!r}; please report it"
            )
        return result

    def _send(self, result: Round) -> None:
        """On the loop: send what an analysis produced (an unchanged list only to the
        files whose edit asked for it; prose.toml's own findings to its URI)."""
        if result.failure is not None:
            self.window_log_message(
                lsp.LogMessageParams(type=lsp.MessageType.Error, message=result.failure)
            )
            return
        self.report_config(result.root, result.config_error)
        for path, uri, found, version in result.files:
            asked = path is not None and path in result.triggers
            if not asked and self.published.get(uri, []) == found:
                continue
            self.published[uri] = found
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=found, version=version)
            )
        self.active[result.root] = asyncio.get_running_loop().time()

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


def _drop_reply(protocol: Any, answered: int | str) -> None:
    """Send every message but the first reply to request `answered` (already sent)."""
    send = protocol._send_data
    pending = [answered]

    def filtered(data: Any) -> None:
        msg_id = getattr(data, "id", None)
        if pending and msg_id == pending[0] and not hasattr(data, "method"):
            pending.clear()
            return
        send(data)

    protocol._send_data = filtered


def build(debounce: float = 0.025, wire: Wire | None = None) -> ProseServer:
    """The server with every feature registered (started with `.start_io()`); it wires
    projects with `wiring.Wiring()` unless given another `wire`. Requests run on the
    model's thread."""
    server = ProseServer(debounce, wire or wiring.Wiring())
    for method, handler, options in HANDLERS:
        server.feature(method, options)(handler)
    for method, handler, options in REQUESTS:
        server.feature(method, options)(_on_model(handler))
    return server


def _on_model(handler: Callable[..., Any]) -> Callable[..., Any]:
    """A request handler run on the model's thread, after every change sent before it."""

    async def run(ls: ProseServer, params: Any) -> Any:
        return await asyncio.wrap_future(ls.on_model(handler, ls, params))

    run.__name__ = run.__qualname__ = handler.__name__
    return run


def _initialize(ls: ProseServer, params: lsp.InitializeParams) -> None:
    folders = [f.uri for f in params.workspace_folders or []]
    if not folders and params.root_uri:
        folders = [params.root_uri]
    paths = [p for p in (ls.path_of(uri) for uri in folders) if p is not None]
    ls.on_model(setattr, ls.model, "folders", paths)


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

    def opened(root: Path) -> None:
        ls.triggers.setdefault(root, set()).add(path)
        ls.publish(root)

    ls.then(ls.on_model(_open, ls, path, document.uri, document.text, document.version), opened)


def _open(ls: ProseServer, path: Path, uri: str, text: str, version: int) -> Path:
    ls.uris[path] = uri
    return ls.model.open(path, text, version)


async def _did_change(ls: ProseServer, params: lsp.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    path = ls.source_path(uri)
    if path is None:
        return
    text = ls.workspace.get_text_document(uri).source
    job = ls.on_model(ls.model.change, path, text, params.text_document.version)
    ls.then(job, lambda root: ls.schedule(root, path))


def _did_save(ls: ProseServer, params: lsp.DidSaveTextDocumentParams) -> None:
    path = ls.source_path(params.text_document.uri)
    if path is None:
        return

    def saved(roots: list[Path]) -> None:
        for root in roots:
            ls.triggers.setdefault(root, set()).add(path)
            ls.publish(root)

    ls.then(ls.on_model(lambda: ls.model.refresh([path]) or [ls.model.root_of(path)]), saved)


def _did_close(ls: ProseServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    path = ls.source_path(uri)
    if path is None:
        return

    def closed(root: Path) -> None:
        ls.clear(uri)  # after any analysis queued while it was open
        ls.publish(root)  # the file's disk text replaces its buffer for the others

    ls.then(ls.on_model(_close, ls, path), closed)


def _close(ls: ProseServer, path: Path) -> Path:
    ls.uris.pop(path, None)
    return ls.model.close(path)


def _did_change_watched(ls: ProseServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    paths = [p for p in (ls.path_of(change.uri) for change in params.changes) if p]

    def refreshed(roots: list[Path]) -> None:
        for root in roots:
            ls.publish(root)

    ls.then(ls.on_model(ls.model.refresh, paths), refreshed)


def _did_change_folders(ls: ProseServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
    removed = {ls.path_of(f.uri) for f in params.event.removed}
    added = [p for p in (ls.path_of(f.uri) for f in params.event.added) if p is not None]

    def change(model: Workspace) -> None:
        kept = [p for p in model.folders if p not in removed]
        model.folders = kept + [p for p in added if p not in kept]

    ls.on_model(change, ls.model)


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
)
