"""The library API: what every front end (the command line, the watch, the language
server, the web view) and every script imports.

:class:`Session` (in :mod:`studykb.session`) owns one open vault and answers everything
about it; the types and the few pure functions a front end needs from the layers below
are named here too, so a front end imports this module, :mod:`studykb.outputs` and the
model's types, and nothing else (an import contract holds it). Everything here, the
session too, is imported on first use: ``import studykb.api`` loads nothing, a constant
(``STATE_DIR``) costs its module only (the command line's forwarding to a running watch
reads it before anything else loads), and a command that never builds a search query
never loads the search code.

    from studykb.api import Session

    with Session.open("~/notes") as kb:
        kb.refresh()
        plan = kb.plan(kb.find("FSDP2"))
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from studykb.config import CONFIG_NAME as CONFIG_NAME
    from studykb.config import STATE_DIR as STATE_DIR
    from studykb.config import Config as Config
    from studykb.config import NoVault as NoVault
    from studykb.config import find_vault as find_vault
    from studykb.graph import GraphOptions as GraphOptions
    from studykb.parse.code_html import code_lines as code_lines
    from studykb.parse.document import REF_KEYS as REF_KEYS
    from studykb.parse.frontmatter import fence_format as fence_format
    from studykb.parse.frontmatter import fences as fences
    from studykb.parse.outline import Outline as Outline
    from studykb.parse.placing import KEY_LINE as KEY_LINE
    from studykb.parse.render import IMAGE_EXTS as IMAGE_EXTS
    from studykb.parse.render import heading_anchor as heading_anchor
    from studykb.parse.render import heading_ids as heading_ids
    from studykb.parse.render import render_note as render_note
    from studykb.related.rank import RelatedOptions as RelatedOptions
    from studykb.repos.buffer import code_problems as code_problems
    from studykb.repos.complete import code_candidates as code_candidates
    from studykb.repos.files import CodeFile as CodeFile
    from studykb.repos.files import CodeTarget as CodeTarget
    from studykb.search.portable import HanTerms as HanTerms
    from studykb.search.portable import fold_name as fold_name
    from studykb.search.query import SearchOptions as SearchOptions
    from studykb.session import Session as Session
    from studykb.study.new import NewDoc as NewDoc
    from studykb.study.rename import Move as Move
    from studykb.vault import Ahead as Ahead
    from studykb.vault import BuildStats as BuildStats
    from studykb.vault import Link as Link
    from studykb.vault import Shown as Shown
    from studykb.vault import StateError as StateError
    from studykb.vault.buffers import Analysis as Analysis
    from studykb.vault.buffers import BufferView as BufferView
    from studykb.vault.buffers import Span as Span
    from studykb.vault.buffers import analyse as analyse
    from studykb.vault.buffers import anchor_line as anchor_line
    from studykb.vault.buffers import neighbours as neighbours
    from studykb.vault.names import Candidate as Candidate
    from studykb.vault.names import NameIndex as NameIndex
    from studykb.vault.names import Tag as Tag
    from studykb.vault.names import complete as complete
    from studykb.vault.names import tags_for as tags_for
    from studykb.vault.resolve import ID as ID
    from studykb.vault.resolve import fold as fold
    from studykb.vault.suggest import suggestible as suggestible

    KnowledgeBase = Session

#: The session and its values: name -> (module, its name there).
OWN: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "Session": ("studykb.session", "Session"),
        "GraphOptions": ("studykb.graph", "GraphOptions"),
        #: The former name of :class:`Session`, kept for scripts written against it.
        "KnowledgeBase": ("studykb.session", "Session"),
    }
)

#: Name -> the module below that defines it, or (module, its name there); imported when
#: the name is first read.
BELOW: Mapping[str, str | tuple[str, str]] = MappingProxyType(
    {
        "CONFIG_NAME": "studykb.config",
        "STATE_DIR": "studykb.config",
        "Config": "studykb.config",
        "NoVault": "studykb.config",
        "find_vault": "studykb.config",
        "code_lines": "studykb.parse.code_html",
        "REF_KEYS": "studykb.parse.document",
        "fence_format": "studykb.parse.frontmatter",
        "fences": "studykb.parse.frontmatter",
        "Outline": "studykb.parse.outline",
        "KEY_LINE": "studykb.parse.placing",
        "IMAGE_EXTS": "studykb.parse.render",
        "heading_anchor": "studykb.parse.render",
        "heading_ids": "studykb.parse.render",
        "render_note": "studykb.parse.render",
        "RelatedOptions": "studykb.related.rank",
        "code_candidates": "studykb.repos.complete",
        "code_problems": "studykb.repos.buffer",
        "CodeFile": "studykb.repos.files",
        "CodeTarget": "studykb.repos.files",
        "SearchOptions": "studykb.search.query",
        "HanTerms": "studykb.search.portable",
        "fold_name": "studykb.search.portable",
        "term_weights": ("studykb.search.portable", "weights"),
        "NewDoc": "studykb.study.new",
        "Move": "studykb.study.rename",
        "Ahead": "studykb.vault",
        "BuildStats": "studykb.vault",
        "Link": "studykb.vault",
        "Shown": "studykb.vault",
        "StateError": "studykb.vault",
        "Analysis": "studykb.vault.buffers",
        "BufferView": "studykb.vault.buffers",
        "Span": "studykb.vault.buffers",
        "analyse": "studykb.vault.buffers",
        "anchor_line": "studykb.vault.buffers",
        "neighbours": "studykb.vault.buffers",
        "Candidate": "studykb.vault.names",
        "NameIndex": "studykb.vault.names",
        "Tag": "studykb.vault.names",
        "complete": "studykb.vault.names",
        "tags_for": "studykb.vault.names",
        "ID": "studykb.vault.resolve",
        "fold": "studykb.vault.resolve",
        "suggestible": "studykb.vault.suggest",
    }
)


def __getattr__(name: str) -> Any:
    where = OWN.get(name) or BELOW.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, there = (where, name) if isinstance(where, str) else where
    value = getattr(importlib.import_module(module), there)
    globals()[name] = value
    return value


__all__ = [*OWN, *BELOW]
