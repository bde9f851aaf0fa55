"""The web view: ``studykb serve`` (a local app) and ``studykb site`` (static pages)."""
