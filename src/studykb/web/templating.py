"""Rendering a :class:`~studykb.web.pages.Page` with the Jinja2 templates (autoescaped).

The contexts are plain dicts, so ``{{ doc.title }}`` finds a key: Jinja asks for the
attribute first, and the ``AttributeError`` of every such lookup cost about a tenth of
a page's template time. :class:`Environment` looks such a key up directly; it still
answers a dict's own attributes (``urls.get``, ``x.items``) first, as Jinja does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from studykb.runtime import process
from studykb.web.links import Linker
from studykb.web.pages import Page

WEB = Path(__file__).resolve().parent
TEMPLATES = WEB / "templates"
STATIC = WEB / "static"


@dataclass(frozen=True)
class Frame:
    """What every page of one front end shares."""

    vault_name: str
    mode: str
    """``serve`` or ``static``."""
    token: str | None = None
    """The write token (serve mode only)."""
    canonical_base: str | None = None
    """The published site's address (``--base-url``), for canonical links."""


#: The vault's name when studykb.toml has no ``title`` and its folder's name is no name.
DEFAULT_TITLE = "Study notes"
_NAME_PARTS = re.compile(r"[-_.\s]+")


def vault_title(title: str | None, folder: str) -> str:
    """The name every page shows for the vault: ``title`` from studykb.toml; else the
    folder's name read as words when it is written as several (``ai-infra_notes`` ->
    "Ai infra notes"); else :data:`DEFAULT_TITLE`: a one-word folder name (``vault1``,
    ``notes``, a clone's ``studykb``) is a place on disk, not what the notes are."""
    if title:
        return title
    words = [w for w in _NAME_PARTS.split(folder) if w]
    if len(words) < 2:
        return DEFAULT_TITLE
    text = " ".join(words)
    return text[0].upper() + text[1:]


#: What ``getattr`` finds on a plain dict (its methods): these win over its keys in Jinja.
_DICT_ATTRIBUTES = frozenset(dir(dict))


class Environment(jinja2.Environment):
    """Jinja's environment, reading a plain dict's keys without trying an attribute first
    (the same answers: a plain dict has no attributes but its class's)."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


#: What a name or path may hold that a page must not render as it is: C0 and C1
#: controls (a newline in a file name), DEL, and the marks that reorder or hide text.
_UNSEEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(text: object) -> str:
    """``text`` with its control characters shown, one for one, as the terminal shows
    them (``new␊line.md``): a file name with a newline reads as one name, not two."""
    return _UNSEEN.sub(_picture, str(text))


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    return chr(0x2400 + code) if code < 0x20 else "\ufffd"


@process.memo(maxsize=1)
def environment() -> jinja2.Environment:
    env = Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True, auto_reload=False
    )
    env.filters["visible"] = visible  # autoescaped after, like any value
    return env


def render(page: Page, frame: Frame, link: Linker, *, path: str = "", q: str = "") -> str:
    """The page's HTML; ``path`` is its place from the site root (for canonical links)."""
    context: dict[str, Any] = dict(page.context)
    if "body_html" in context:
        context["body_html"] = Markup(context["body_html"])  # made safe by parse.render
    context.update(
        vault_name=frame.vault_name,
        mode=frame.mode,
        root=link.root,
        urls=link.urls(),
        page_key=page.key,
        q=q or context.get("query", ""),
    )
    if frame.mode == "serve" and frame.token:
        context["token"] = frame.token
    if frame.canonical_base:
        context["canonical"] = frame.canonical_base.rstrip("/") + "/" + path
    return environment().get_template(page.template).render(context)
