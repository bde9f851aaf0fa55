"""The task items of a Markdown file: ``- [x] done`` and ``- [ ] open``.

Counted as the rendered page shows them, with markdown-it's tasklists plugin (the one
:mod:`studykb.parse.render` uses): an item of a list (at any depth, in a quote too) whose
paragraph starts with ``[ ]``, ``[x]`` or ``[X]`` and a space. A ``- [x]`` inside a code
block or fence, in a front matter or in an HTML block is no task.
"""

from __future__ import annotations

from dataclasses import dataclass

from markdown_it import MarkdownIt
from mdit_py_plugins.tasklists import tasklists_plugin

from studykb.parse.frontmatter import split
from studykb.runtime import process

_CHECKBOX = "task-list-item-checkbox"


@dataclass(frozen=True)
class Tasks:
    done: int
    total: int


def count_tasks(text: str) -> Tasks:
    """How many task items ``text`` (a whole file) holds, and how many are checked."""
    body = split(text, load=False).body
    done = total = 0
    for token in _markdown().parse(body):
        first = token.children[0] if token.type == "inline" and token.children else None
        if first is not None and first.type == "html_inline" and _CHECKBOX in first.content:
            total += 1
            done += 'checked="checked"' in first.content
    return Tasks(done, total)


@process.memo(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "typographer": False})
    md.use(tasklists_plugin)
    return md
