"""What ``check`` says of the code links of one buffer, for the language server: the same
judgement (:func:`studykb.repos.check.judge`), against the snapshot's documents and the
clones as they are now, so the diagnostics of a saved file equal ``check``'s problems.

Each call opens the clones anew (a pull is seen at once); what each file says is kept in
``held`` (by blob id, so never stale), which the server keeps between calls: typing in a
note re-reads no file of the repository. A buffer without code links never comes here.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from studykb.config import Config
from studykb.model import Document, Problem
from studykb.parse.code_links import split_wikilink
from studykb.repos.check import Facts, Reader, clone_problems, judge
from studykb.repos.tracked import tracked_in
from studykb.vault import Link
from studykb.vault.buffers import Analysis

#: At most this many files' facts are kept between calls.
HELD = 20_000


def code_problems(
    root: Path,
    config: Config,
    docs: Iterable[Document],
    analysis: Analysis,
    held: dict[tuple[bytes, str], Facts] | None = None,
) -> list[Problem]:
    """The problems of the code links of ``analysis`` (and the bad clones declared in its
    file), severities as configured."""
    spans = [s for s in analysis.spans if s.ref.style == "code"]
    repos = tracked_in(root, config, docs)
    if held is not None and len(held) > HELD:
        held.clear()
    reader = Reader(repos, parsed=held if held is not None else {})
    out: list[Problem] = []
    try:
        for span in spans:
            code = split_wikilink(span.ref.text)
            if code is None:
                continue
            found = judge(reader, Link(span.ref, span.target, span.state, span.note), code)
            if found is not None:
                out.append(found)
        for repo in {r.name: r for r in repos.values()}.values():
            if repo.declared_at[0] != analysis.path:
                continue
            out.extend(clone_problems(reader, repo))
    finally:
        reader.close()
    shown = (config.as_configured(p) for p in out)
    return [p for p in shown if p is not None]
