"""The language server's edits: code actions, creating a missing note, rename, and
finding a note by name (workspace symbols).

Edits to text are handed to the editor as workspace edits (it applies them to its
buffers, where the user can undo them); a new note is written here, from its template,
through :meth:`studykb.session.Session.new` (never over an existing file).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from lsprotocol import types as t
from pygls.uris import from_fs_path, to_fs_path

from studykb.api import NewDoc, Session, complete
from studykb.editor.actions import Action, TextEdit, actions
from studykb.editor.lsp import StudyServer
from studykb.errors import StudyError
from studykb.model import Document

if TYPE_CHECKING:
    from studykb.api import Move

CREATE_NOTE = "studykb.createNote"


Handler = Callable[..., Any]


def register(
    server: StudyServer,
    request: Callable[[Handler], Handler],
    guarded: Callable[[Handler], Handler],
) -> None:
    """Add the handlers of this module to ``server`` (each request's wrapped by
    ``request``, the command's by ``guarded``)."""
    for name, options, handler in FEATURES:
        server.feature(name, options)(request(handler))

    @server.command(CREATE_NOTE)
    def create(ls: StudyServer, *args: Any) -> Any:
        strings = [None if a is None else str(a) for a in args]
        if len(strings) != 3 or not strings[0] or not strings[1]:
            return None
        return guarded(_create)(ls, strings)


def code_action(ls: StudyServer, params: t.CodeActionParams) -> list[t.CodeAction]:
    uri = params.text_document.uri
    analysis = ls.analysis(uri)
    start, end = params.range.start, params.range.end
    found: list[t.CodeAction] = []
    for line in range(start.line, end.line + 1):
        if line >= len(analysis.lines):
            break
        text = analysis.lines[line]
        first = ls.column(text, start.character) if line == start.line else 0
        last = ls.column(text, end.character) if line == end.line else len(text)
        found.extend(
            _action(ls, uri, a, params.context.diagnostics)
            for a in actions(ls.snap, analysis, line, first, last)
        )
    return found


def prepare_rename(ls: StudyServer, params: t.PrepareRenameParams) -> Any:
    found = renamed(ls, params.text_document.uri, params.position)
    if found is None:
        return None
    doc, span_range = found
    return t.PrepareRenamePlaceholder(range=span_range, placeholder=doc.id)


def rename(ls: StudyServer, params: t.RenameParams) -> t.WorkspaceEdit | None:
    found = renamed(ls, params.text_document.uri, params.position)
    if found is None:
        return None
    return rename_edit(ls, found[0], params.new_name)


def symbols(ls: StudyServer, params: t.WorkspaceSymbolParams) -> list[t.SymbolInformation]:
    return list(workspace_symbols(ls, params.query))


#: The requests of this module: (LSP method, its options, the handler), registered in order
#: after those of :mod:`studykb.editor.lsp_features`.
FEATURES: tuple[tuple[str, Any, Handler], ...] = (
    (
        t.TEXT_DOCUMENT_CODE_ACTION,
        t.CodeActionOptions(
            code_action_kinds=(t.CodeActionKind.QuickFix, t.CodeActionKind.Refactor)
        ),
        code_action,
    ),
    (t.TEXT_DOCUMENT_PREPARE_RENAME, None, prepare_rename),
    (t.TEXT_DOCUMENT_RENAME, None, rename),
    (t.WORKSPACE_SYMBOL, None, symbols),
)


def _create(ls: StudyServer, args: list[str | None]) -> dict[str, str] | None:
    doc_type, title, doc_id = args
    assert doc_type and title
    return create_note(ls, doc_type, title, doc_id)


def _action(
    ls: StudyServer, uri: str, action: Action, diagnostics: Sequence[t.Diagnostic]
) -> t.CodeAction:
    fixes = [d for d in diagnostics if action.code and d.code == action.code]
    out = t.CodeAction(
        title=action.title,
        kind=action.kind,
        diagnostics=fixes or None,
        is_preferred=action.title.startswith("Replace") or None,
    )
    if action.edits:
        out.edit = t.WorkspaceEdit(changes={uri: [_edit(ls, uri, e) for e in action.edits]})
    if action.create is not None:
        new = action.create
        out.command = t.Command(
            title=action.title, command=CREATE_NOTE, arguments=[new.type, new.title, new.id]
        )
    return out


def _edit(ls: StudyServer, uri: str, edit: TextEdit) -> t.TextEdit:
    lines = ls.analysis(uri).lines
    text = lines[edit.line] if edit.line < len(lines) else ""
    end_line = edit.end_line if edit.end_line is not None else edit.line
    start = ls.range(text, edit.line, edit.start, edit.start).start
    end_text = lines[end_line] if end_line < len(lines) else ""
    end = ls.range(end_text, end_line, edit.end, edit.end).start
    return t.TextEdit(range=t.Range(start, end), new_text=edit.text)


def fresh_vault(ls: StudyServer) -> Session:
    """The vault opened now (the loop's own keeps names it read before the last refresh)."""
    if ls.root is None:
        raise StudyError("no vault is open.")
    return Session.at(ls.root, ls.explicit)


def create_note(
    ls: StudyServer, doc_type: str, title: str, doc_id: str | None
) -> dict[str, str] | None:
    """Write the new document from its template; show it; its links resolve at the next
    refresh (the watch sees the file)."""
    try:
        with fresh_vault(ls) as kb:
            made = kb.new(NewDoc(doc_type, title, doc_id or None))
    except StudyError as exc:
        ls.message(f"studykb: {exc}", t.MessageType.Error)
        return None
    if not ls.watching:
        ls.refresh()
    uri = from_fs_path(str(made.file)) or made.file.as_uri()
    window = ls.client_capabilities.window
    if window is not None and window.show_document is not None:
        ls.window_show_document(t.ShowDocumentParams(uri=uri, take_focus=False))
    return {"path": made.path, "uri": uri}


def renamed(ls: StudyServer, uri: str, position: t.Position) -> tuple[Document, t.Range] | None:
    """The document a rename at ``position`` renames (the link's target, else the file
    itself) and the range to show."""
    analysis, line, col = ls.cursor(uri, position)
    span = analysis.span_at(line, col)
    doc = ls.snap.docs.get(span.target) if span is not None and span.target else None
    text = analysis.lines[line] if line < len(analysis.lines) else ""
    if doc is not None and span is not None:
        if doc.parent:
            doc = ls.snap.docs.get(doc.parent, doc)
        return doc, ls.range(text, line, span.start, span.end)
    here = analysis.documents[0] if analysis.documents else None
    if here is None or here.key not in ls.snap.docs or not to_fs_path(uri):
        return None
    return here, ls.range(text, line, col, col)


def rename_edit(ls: StudyServer, doc: Document, new_name: str) -> t.WorkspaceEdit | None:
    """The workspace edit that renames ``doc``: every reference rewritten in the editor's
    buffers (open ones as they are), then the file renamed."""
    assert ls.root is not None
    root = ls.root

    def read(path: str) -> str:
        uri = _uri(root / path)
        if uri in ls.workspace.text_documents:
            return ls.workspace.get_text_document(uri).source
        return (root / path).read_bytes().decode("utf-8", errors="surrogateescape")

    try:
        with fresh_vault(ls) as kb:
            move = kb.plan_move(doc, new_name, read)
    except StudyError as exc:
        ls.message(f"studykb: {exc}", t.MessageType.Error)
        return None
    edits: list[t.TextDocumentEdit | t.RenameFile] = []
    for path in move.files:
        edit = _file_edit(ls, _uri(root / path), move, path)
        if edit is not None:
            edits.append(edit)
    edits.append(
        t.RenameFile(
            kind="rename", old_uri=_uri(root / move.old_path), new_uri=_uri(root / move.new_path)
        )
    )
    return t.WorkspaceEdit(document_changes=edits)


def _file_edit(ls: StudyServer, uri: str, move: Move, path: str) -> t.TextDocumentEdit | None:
    """The edits of ``move`` in the file ``path`` (at ``uri``), for the version the editor
    has open; None when it has none."""
    lines = move.texts[path].split("\n")
    version = (
        ls.workspace.get_text_document(uri).version if uri in ls.workspace.text_documents else None
    )
    changes: list[t.TextEdit | t.AnnotatedTextEdit | t.SnippetTextEdit] = [
        t.TextEdit(
            range=t.Range(
                ls.range(lines[e.line], e.line, e.start, e.start).start,
                ls.range(lines[e.end_line], e.end_line, e.end, e.end).end,
            ),
            new_text=e.new,
        )
        for e in move.edits
        if e.path == path
    ]
    if not changes:
        return None
    return t.TextDocumentEdit(
        text_document=t.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
        edits=changes,
    )


def workspace_symbols(ls: StudyServer, query: str) -> Iterator[t.SymbolInformation]:
    """Documents whose id, alias or title fits ``query`` (as completion ranks them)."""
    if ls.root is None:
        return
    found, _cut = complete(ls.snap.index, query, limit=200)
    seen: set[str] = set()
    for cand in found:
        doc = ls.snap.docs.get(cand.key)
        if doc is None or cand.key in seen:
            continue
        seen.add(cand.key)
        line = doc.line - 1 if doc.type == "unit" else 0
        name = doc.title if cand.which != "alias" else f"{cand.label} → {doc.title}"
        yield t.SymbolInformation(
            name=name,
            kind=_SYMBOL.get(doc.type, t.SymbolKind.File),
            location=t.Location(
                uri=_uri(ls.root / doc.path),
                range=t.Range(t.Position(line, 0), t.Position(line, 0)),
            ),
            container_name=f"{doc.id} ({doc.type})",
        )


def _uri(path: Any) -> str:
    return str(from_fs_path(str(path)) or path.as_uri())


_SYMBOL = MappingProxyType(
    {
        "topic": t.SymbolKind.Class,
        "course": t.SymbolKind.Module,
        "unit": t.SymbolKind.Method,
        "list": t.SymbolKind.Enum,
        "entry": t.SymbolKind.Field,
        "note": t.SymbolKind.File,
    }
)
