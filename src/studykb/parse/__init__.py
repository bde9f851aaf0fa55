"""Parsing: the only package that imports markdown-it-py and python-frontmatter."""

from .document import parse_file
from .urls import normalize_url

__all__ = ["normalize_url", "parse_file"]
