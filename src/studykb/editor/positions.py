"""Positions as a language client counts them (UTF-16 code units unless it chose
UTF-8 or UTF-32) and the diagnostics placed with them."""

from __future__ import annotations

from types import MappingProxyType

from lsprotocol import types as t

from studykb.api import Analysis
from studykb.model import ERROR, Problem

SEVERITY = MappingProxyType(
    {ERROR: t.DiagnosticSeverity.Error, "warning": t.DiagnosticSeverity.Warning}
)


def units(text: str, encoding: str) -> int:
    """How many units the client counts in ``text``."""
    if encoding.endswith("32"):
        return len(text)
    if encoding.endswith("8"):
        return len(text.encode("utf-8", errors="surrogatepass"))
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


def text_range(text: str, line: int, start: int, end: int, encoding: str) -> t.Range:
    """The client's range of code points ``start:end`` of ``text`` on ``line``."""
    return t.Range(
        t.Position(line, units(text[:start], encoding)),
        t.Position(line, units(text[:end], encoding)),
    )


def column(text: str, character: int, encoding: str) -> int:
    """Client position -> code-point column in ``text``."""
    counted = 0
    for n, ch in enumerate(text):
        if counted >= character:
            return n
        counted += units(ch, encoding)
    return len(text)


def diagnostic(analysis: Analysis, p: Problem, encoding: str) -> t.Diagnostic:
    """``p`` as a diagnostic: under its line's text, or under the link it is about."""
    lines = analysis.lines
    line = min(max(p.line - 1, 0), max(len(lines) - 1, 0))
    text = lines[line] if lines else ""
    start, end = len(text) - len(text.lstrip()), len(text.rstrip())
    if p.code in ("dangling-ref", "ambiguous-ref", "dangling-anchor"):  # the link only
        for span in analysis.spans:
            if span.line == line and repr(span.ref.text) in p.message:
                start, end = span.start, span.end
                break
    return t.Diagnostic(
        range=text_range(text, line, start, end, encoding),
        message=p.message,
        severity=SEVERITY.get(p.severity, t.DiagnosticSeverity.Warning),
        code=p.code,
        source="studykb",
    )
