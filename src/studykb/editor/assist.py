"""The editor's hovers: a document told in Markdown (what it resolves to is
:mod:`studykb.vault.buffers`'s, through :mod:`studykb.api`).
"""

from __future__ import annotations

from studykb.model import Document


def describe(doc: Document, summary_lines: int = 4) -> str:
    """Markdown for a hover: title, type, level, status, id and path, then the summary."""
    facts = [doc.type]
    if doc.level:
        facts.append(f"level {doc.level}")
    if doc.status:
        facts.append(doc.status)
    if doc.kind:
        facts.append(doc.kind)
    out = [f"**{doc.title}**", "", " · ".join(facts) + f" — `{doc.id}` in `{doc.path}`"]
    if doc.url:
        out.append(f"<{doc.url}>")
    if doc.summary and doc.summary != doc.title:
        words = doc.summary
        out.extend(["", _wrap(words, summary_lines)])
    return "\n".join(out)


def _wrap(text: str, max_lines: int, width: int = 80) -> str:
    lines: list[str] = []
    current = ""
    for word in text.split(" "):
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
            if len(lines) == max_lines:
                return "\n".join(lines) + " …"
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return "\n".join(lines[:max_lines])


__all__ = ["describe"]
