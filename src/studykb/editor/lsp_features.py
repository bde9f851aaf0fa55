"""The language server's features: what it answers to each request and notification.

The server itself (vault, snapshot, watcher, diagnostics plumbing, positions in the
client's units) is :class:`studykb.editor.lsp.StudyServer`; each handler here reads it and
turns :mod:`studykb.vault.buffers` values into protocol messages.
"""

from __future__ import annotations

import functools
import os
import traceback
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path, to_fs_path

from studykb.api import Candidate, code_candidates, complete, tags_for
from studykb.editor.assist import describe
from studykb.editor.completion import Completion, completion_context, insert_text
from studykb.editor.lsp import StudyServer
from studykb.editor.lsp_edits import register
from studykb.editor.watch import ServerFactory

#: Characters after which the client asks for completion.
TRIGGERS = ("[", "#", ",", " ", "-")


def guarded(func: Callable[..., Any]) -> Callable[..., Any]:
    """A handler that never takes the server down: errors go to the client's log."""

    @functools.wraps(func)
    def wrapper(ls: StudyServer, params: Any) -> Any:
        try:
            return func(ls, params)
        except Exception:
            if os.environ.get("STUDYKB_DEBUG"):
                raise
            ls.report(f"studykb: {func.__name__} failed:\n{traceback.format_exc()}")
            return None

    return wrapper


def request(func: Callable[..., Any]) -> Callable[..., Any]:
    """A request's handler: the buffer it names is read first (a large one in a worker
    thread, the loop answering other requests meanwhile: see ``lsp_work``), a position
    past its end is answered with an InvalidParams error, and other failures go to the
    client's log as :func:`guarded` sends them."""

    @functools.wraps(func)
    async def wrapper(ls: StudyServer, params: Any) -> Any:
        try:
            document = getattr(params, "text_document", None)
            uri = getattr(document, "uri", None)
            if isinstance(uri, str) and ls.ready:
                analysis = await ls.settled(uri)
                for position in _positions(params):
                    ls.check_position(analysis, position)
            return func(ls, params)
        except JsonRpcException:
            raise  # an answer for the client: pygls sends it as the error
        except Exception:
            if os.environ.get("STUDYKB_DEBUG"):
                raise
            ls.report(f"studykb: {func.__name__} failed:\n{traceback.format_exc()}")
            return None

    return wrapper


def _positions(params: Any) -> list[t.Position]:
    found = [getattr(params, "position", None)]
    where = getattr(params, "range", None)
    if isinstance(where, t.Range):
        found += [where.start, where.end]
    return [p for p in found if isinstance(p, t.Position)]


def build(vault_dir: str | None, commands: ServerFactory | None = None) -> StudyServer:
    """The server with its features registered (``commands``: see :class:`StudyServer`):
    notifications handled in the order they come, requests as :func:`request` says."""
    server = StudyServer(vault_dir, commands)
    for name, options, handler in FEATURES:
        notification = name == t.INITIALIZED or name.startswith("textDocument/did")
        server.feature(name, options)((guarded if notification else request)(handler))

    register(server, request, guarded)
    return server


def initialized(ls: StudyServer, _params: t.InitializedParams) -> None:
    ls.load()


def shutdown(ls: StudyServer, _params: Any) -> None:
    ls.close()


def did_open(ls: StudyServer, params: t.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    fs = to_fs_path(uri)
    if fs and os.path.exists(fs):
        ls.on_disk.add(uri)
    ls.adopt(uri)
    ls.analyses.pop(uri, None)
    ls.schedule_lint(uri)


def did_change(ls: StudyServer, params: t.DidChangeTextDocumentParams) -> None:
    ls.analyses.pop(params.text_document.uri, None)
    ls.schedule_lint(params.text_document.uri)


def did_save(ls: StudyServer, params: t.DidSaveTextDocumentParams) -> None:
    if not ls.watching:
        ls.refresh()


def did_close(ls: StudyServer, params: t.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.analyses.pop(uri, None)
    ls.readings.forget(uri)
    ls.on_disk.discard(uri)
    ls.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def completion(ls: StudyServer, params: t.CompletionParams) -> t.CompletionList | None:
    analysis, line, col = ls.cursor(params.text_document.uri, params.position)
    ctx = completion_context(analysis.lines, line, col)
    if ctx is None:
        return None
    if not ls.ready:  # still reading the vault: ask again as the user types
        return t.CompletionList(is_incomplete=True, items=[])
    text = analysis.lines[line]
    edit_range = ls.range(text, line, ctx.start, col)
    if ctx.kind == "heading":
        return t.CompletionList(
            is_incomplete=False, items=_headings(ls, analysis.path, ctx, edit_range)
        )
    if ctx.kind == "tag":
        return t.CompletionList(is_incomplete=False, items=_tags(ls, ctx, edit_range))
    if ctx.kind in ("code", "symbol"):
        items = _code(ls, ctx, edit_range)
        if items or ctx.kind == "symbol":
            return t.CompletionList(is_incomplete=False, items=items)
        # no tracked repository of that name: the colon was part of a document's name
        start = text.rfind("[[", 0, col) + 2
        ctx = Completion("wikilink", text[start:col], start, ctx.close)
        edit_range = ls.range(text, line, start, col)
    return _documents(ls, analysis.path, ctx, edit_range)


def _code(ls: StudyServer, ctx: Completion, edit_range: t.Range) -> list[t.CompletionItem]:
    """In a code link: the repository's folders and files, or a file's symbols."""
    if ls.root is None:
        return []
    name, _, path = ctx.key.partition(":")
    found = code_candidates(ls.root, ls.snap.config, ls.snap.docs.values(), name, ctx.prefix, path)
    kind = t.CompletionItemKind.Function if path else t.CompletionItemKind.File
    return [
        t.CompletionItem(
            label=text,
            kind=t.CompletionItemKind.Folder if text.endswith("/") else kind,
            detail=detail,
            sort_text=f"{n:04d}",
            text_edit=t.TextEdit(
                range=edit_range, new_text=text if text.endswith("/") else text + ctx.close
            ),
        )
        for n, (text, detail) in enumerate(found)
    ]


def _tags(ls: StudyServer, ctx: Completion, edit_range: t.Range) -> list[t.CompletionItem]:
    """In front-matter ``tags``/``covers``: topics and tags already used."""
    return [
        t.CompletionItem(
            label=tag.label,
            detail=tag.detail,
            sort_text=f"{n:04d}",
            kind=t.CompletionItemKind.Class if tag.topic else t.CompletionItemKind.Keyword,
            text_edit=t.TextEdit(
                range=edit_range,
                new_text=insert_text(Candidate(tag.label, "", tag.label, "", "id", "", ""), ctx),
            ),
        )
        for n, tag in enumerate(tags_for(ls.snap.docs, ctx.key, ctx.prefix))
    ]


def _documents(
    ls: StudyServer, here: str, ctx: Completion, edit_range: t.Range
) -> t.CompletionList:
    """In ``[[`` or a front-matter reference: documents by id, alias or title."""
    found, cut = complete(
        ls.snap.index,
        ctx.prefix,
        here=here,
        prefer="course" if ctx.key == "course" else None,
    )
    items = []
    for n, cand in enumerate(found):
        detail = f"{cand.title} ({cand.type})"
        if cand.which != "id":
            detail += f" → {cand.insert}"
        items.append(
            t.CompletionItem(
                label=cand.label,
                kind=_KIND.get(cand.type, t.CompletionItemKind.File),
                detail=detail,
                sort_text=f"{n:04d}",
                filter_text=cand.label,
                text_edit=t.TextEdit(range=edit_range, new_text=insert_text(cand, ctx)),
            )
        )
    return t.CompletionList(is_incomplete=cut, items=items)


def definition(ls: StudyServer, params: t.DefinitionParams) -> t.Location | None:
    analysis, line, col = ls.cursor(params.text_document.uri, params.position)
    span = analysis.span_at(line, col)
    if span is None or span.target is None:
        return None
    return ls.location(span.target, span.ref.anchor)


def hover(ls: StudyServer, params: t.HoverParams) -> t.Hover | None:
    analysis, line, col = ls.cursor(params.text_document.uri, params.position)
    span = analysis.span_at(line, col)
    if span is None:
        return None
    doc = ls.snap.docs.get(span.target) if span.target else None
    if doc is not None:
        value = describe(doc)
        if span.state == "ambiguous":
            value += f"\n\n*ambiguous: {span.note}*"
    elif span.state == "dangling":
        value = f"`{span.ref.text}` resolves to no document"
    else:
        return None
    text = analysis.lines[line]
    return t.Hover(
        contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=value),
        range=ls.range(text, line, span.start, span.end),
    )


def references(ls: StudyServer, params: t.ReferenceParams) -> list[t.Location]:
    analysis, line, col = ls.cursor(params.text_document.uri, params.position)
    span = analysis.span_at(line, col)
    key = span.target if span is not None and span.target else None
    if key is None:
        doc = analysis.document_at(line)
        key = doc.key if doc is not None else analysis.path
    if ls.kb is None or ls.root is None:
        return []
    out = []
    cache: dict[str, list[str]] = {}
    for link in ls.kb.links_to(key):
        ref = link.ref
        file = ls.file_of(ref.path)
        if ref.path not in cache:
            cache[ref.path] = ls.file_lines(file)
        lines = cache[ref.path]
        index = min(max(ref.line - 1, 0), max(len(lines) - 1, 0))
        text = lines[index] if lines else ""
        start = text.find(ref.text)
        end = start + len(ref.text) if start != -1 else len(text)
        start = max(start, 0)
        uri = from_fs_path(str(file)) or file.as_uri()
        out.append(t.Location(uri=uri, range=ls.range(text, index, start, end)))
    return out


def document_links(ls: StudyServer, params: t.DocumentLinkParams) -> list[t.DocumentLink]:
    analysis = ls.analysis(params.text_document.uri)
    out = []
    for span in analysis.spans:
        doc = ls.snap.docs.get(span.target) if span.target else None
        if doc is None or ls.root is None:
            continue
        file = ls.file_of(doc.path)
        target = from_fs_path(str(file)) or file.as_uri()
        if doc.type == "unit":
            target += f"#L{doc.line}"
        out.append(
            t.DocumentLink(
                range=ls.range(analysis.lines[span.line], span.line, span.start, span.end),
                target=target,
                tooltip=f"{doc.title} ({doc.type})",
            )
        )
    return out


#: What the server answers: (LSP method, its options, the handler), registered in order,
#: each wrapped by :func:`guarded` (pygls passes the server as the first argument, ``ls``).
FEATURES: tuple[tuple[str, Any, Callable[..., Any]], ...] = (
    (t.INITIALIZED, None, initialized),
    (t.SHUTDOWN, None, shutdown),
    (t.TEXT_DOCUMENT_DID_OPEN, None, did_open),
    (t.TEXT_DOCUMENT_DID_CHANGE, None, did_change),
    (t.TEXT_DOCUMENT_DID_SAVE, None, did_save),
    (t.TEXT_DOCUMENT_DID_CLOSE, None, did_close),
    (
        t.TEXT_DOCUMENT_COMPLETION,
        t.CompletionOptions(trigger_characters=TRIGGERS),
        completion,
    ),
    (t.TEXT_DOCUMENT_DEFINITION, None, definition),
    (t.TEXT_DOCUMENT_HOVER, None, hover),
    (t.TEXT_DOCUMENT_REFERENCES, None, references),
    (t.TEXT_DOCUMENT_DOCUMENT_LINK, None, document_links),
)


def _headings(
    ls: StudyServer, here: str, ctx: Completion, edit_range: t.Range
) -> list[t.CompletionItem]:
    """After ``[[doc#``: a course's units (in order), then the document's headings."""
    key, _s, _n = ls.snap.names.resolve("", here, ctx.key, "name", "", False)
    doc = ls.snap.docs.get(key) if key else None
    if doc is None:
        return []
    items = []
    if doc.type == "course":
        units = sorted(
            (d for d in ls.snap.docs.values() if d.parent == doc.key), key=lambda d: d.line
        )
        for n, unit in enumerate(units):
            name = unit.id.split("#", 1)[-1]
            items.append(
                t.CompletionItem(
                    label=name,
                    kind=t.CompletionItemKind.Method,
                    sort_text=f"0{n:04d}",
                    detail=f"{unit.title} (unit of {doc.title})",
                    text_edit=t.TextEdit(range=edit_range, new_text=name + ctx.close),
                )
            )
    heads = list(ls.kb.headings(doc.path)) if ls.kb else []
    items.extend(
        t.CompletionItem(
            label=h,
            kind=t.CompletionItemKind.Reference,
            detail=f"heading in {doc.title}",
            sort_text=f"1{n:04d}",
            text_edit=t.TextEdit(range=edit_range, new_text=h + ctx.close),
        )
        for n, h in enumerate(heads)
    )
    return items


_KIND = MappingProxyType(
    {
        "topic": t.CompletionItemKind.Class,
        "course": t.CompletionItemKind.Module,
        "unit": t.CompletionItemKind.Method,
        "list": t.CompletionItemKind.Enum,
        "entry": t.CompletionItemKind.Reference,
        "note": t.CompletionItemKind.File,
    }
)
