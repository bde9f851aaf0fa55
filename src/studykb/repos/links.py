"""Code links and the repositories they name, read without git.

What a code link says is judged in the clone (:mod:`studykb.repos.check`, with dulwich
and tree-sitter); which repository it names, and that it names one at all, needs no
clone. A vault whose repositories are all tracked by URL only (the bundled one) is
checked here alone, and git's library is never loaded for it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from studykb.model import ERROR, Problem, fold
from studykb.parse.code_links import CodeLink, split_wikilink
from studykb.repos.tracked import Tracked, tracked
from studykb.vault import Link, Vault


def code_links(vault: Vault) -> Iterator[tuple[Link, CodeLink]]:
    """Every code link of the vault with where it points, in file and line order."""
    for link in vault.code_links():
        code = split_wikilink(link.ref.text)
        if code is not None:
            yield link, code


def repo_of(repos: dict[str, Tracked], link: Link, code: CodeLink) -> Tracked | None:
    """The repository a code link names: the document its name resolves to, else the
    ``[repos.NAME]`` of that name."""
    if link.target and link.target in repos:
        return repos[link.target]
    return repos.get(fold(code.repo))


def unknown_repo(repos: dict[str, Tracked], link: Link, code: CodeLink) -> Problem | None:
    """The problem of a code link that names no tracked repository (None when it names
    one), with the closest name."""
    if repo_of(repos, link, code) is not None:
        return None
    names = sorted({r.name for r in repos.values()})
    close = difflib.get_close_matches(code.repo, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    ref = link.ref
    message = f"{ref.text!r}: {code.repo!r} names no tracked repository{hint}"
    return Problem(ref.path, ref.line, ERROR, "dangling-code", message)


def without_clones(vault: Vault, found: list[Problem]) -> list[Problem] | None:
    """``found`` with the code links' problems when no tracked repository is cloned here
    (then only a link naming no repository is wrong); None when one is, and the clones
    must be read (:func:`studykb.repos.check.with_code_problems`)."""
    repos = tracked(vault)
    if any(repo.cloned for repo in repos.values()):
        return None
    out = [p for link, code in code_links(vault) if (p := unknown_repo(repos, link, code))]
    shown = [p for p in (vault.config.as_configured(p) for p in out) if p is not None]
    merged = list(dict.fromkeys(found + shown))
    return sorted(merged, key=lambda p: (p.path, p.line, p.code, p.message))
