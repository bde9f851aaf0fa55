"""The vault's state (``.studykb/state.sqlite``): every SQL statement studykb runs on it.

One module per table, each a small class owning that table's statements
(:mod:`~studykb.vault.state.files`, :mod:`~studykb.vault.state.docs`,
:mod:`~studykb.vault.state.refs`, :mod:`~studykb.vault.state.problems`,
:mod:`~studykb.vault.state.texts`, :mod:`~studykb.vault.state.anchors`,
:mod:`~studykb.vault.state.names`, :mod:`~studykb.vault.state.meta`); the rows they take
and give, named (:mod:`~studykb.vault.state.rows`); the DDL
(:mod:`~studykb.vault.state.schema`); and the store (:mod:`~studykb.vault.state.store`):
the connection, the making of the tables, and the one write path,
:meth:`Store.transaction`, which hands out the tables a write may change.
"""

from __future__ import annotations

from studykb.vault.state.store import Store, inherited, reader, schema_version
from studykb.vault.state.tables import Tables

__all__ = ["Store", "Tables", "inherited", "reader", "schema_version"]
