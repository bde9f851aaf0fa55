"""Rendering a :class:`~studykb.web.pages.Page` with the Jinja2 templates (autoescaped)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

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


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True, auto_reload=False
    )


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
