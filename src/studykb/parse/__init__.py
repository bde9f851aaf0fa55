"""Parsing: the only package that imports markdown-it-py and python-frontmatter.

``parse_file`` is imported on first use (PEP 562), so importing ``studykb.parse.urls``
or the package itself does not load markdown-it, PyYAML and python-frontmatter: a
refresh with nothing to parse, ``check`` and ``backlinks`` start faster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from studykb.parse.urls import normalize_url

if TYPE_CHECKING:
    from studykb.parse.document import parse_file

__all__ = ["normalize_url", "parse_file"]


def __getattr__(name: str) -> Any:
    if name == "parse_file":
        # deferred: loads frontmatter, markdown_it, mdit_py_plugins, yaml
        from studykb.parse.document import parse_file

        return parse_file
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
