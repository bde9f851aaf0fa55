"""The repo tracker: study repositories as part of the knowledge base.

A vault tracks repositories (:mod:`~studykb.repos.tracked`), its notes link into their
code (``[[NAME:path#L10-40@commit]]``, :mod:`studykb.parse.code_links`), ``check`` judges
those links in the local clones (:mod:`~studykb.repos.check`), read with dulwich
(:mod:`~studykb.repos.git`) and tree-sitter (:mod:`~studykb.repos.symbols`), and
``status`` reads a course's progress from its repository's history
(:mod:`~studykb.repos.progress`). Nothing here writes into a clone or runs its code.
"""
