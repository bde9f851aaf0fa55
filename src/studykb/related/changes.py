"""Which documents' related lists may differ between two engines of the same documents.

A static site made again after an edit ranks again only the documents whose scores may
have changed (:func:`rows_changed`), not every document. The answer is read off the
two engines' matrices, component by component, as :meth:`Engine.components` makes
them: a row of ``A[rows]`` changed where the row of ``A`` did; a row of ``A[rows] @ B``
changed where the row of ``A`` did, or where ``A`` (before or after) has an entry in a
column whose row of ``B`` changed (for the text component, whose rows keep only their
best matches, those rows' best matches are made with both engines and compared).
Every matrix is compared entry for entry, so a row left out has exactly the scores it
had, hence the same list. What the lists' reasons
read besides the scores (the titles and names of documents, shared links and words) is
the same for such a row as long as the documents' names are (a site makes every page
again when a title changes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from studykb.related.engine import ENGINE, TEXT_POOL, for_vault
from studykb.related.sparse import top_per_row
from studykb.vault.cache import key as cache_key

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from studykb.related.engine import Engine
    from studykb.related.sparse import Csr
    from studykb.vault import Vault

#: The engine's components as read by ``Engine.components``: a matrix alone (its rows
#: are the component's), or a product ``A @ B`` (the component of row i is A[i] @ B).
ALONE = ("L", "LT", "M", "MT")
PRODUCTS = (
    ("B", "BT"),
    ("QT", "Q"),
    ("Rin", "RinT"),
    ("RoutT", "Rout"),
    ("R", "R"),
    ("RT", "RT"),
    ("T", "TT"),
    ("G", "GT"),
    ("C", "CT"),
    ("K", "KT"),
    ("F", "FT"),
    ("Xq", "XT"),
)


def rows_changed(old: Engine, new: Engine) -> NDArray[np.bool_] | None:
    """Node -> whether its scores may differ from ``old``'s in ``new`` (None: they are
    engines of other documents, every list may)."""
    if old.n != new.n or not np.array_equal(old.keys_digest, new.keys_digest):
        return None
    out = np.zeros(new.n, dtype=bool)
    for name in ALONE:
        out |= _changed(getattr(old, name), getattr(new, name))[: new.n]
    for a_name, b_name in PRODUCTS:
        a_old, a_new = getattr(old, a_name), getattr(new, a_name)
        out |= _changed(a_old, a_new)[: new.n]
        cols = _changed(getattr(old, b_name), getattr(new, b_name))
        if not cols.any():
            continue
        touched = _with_cols(a_old, cols, new.n) | _with_cols(a_new, cols, new.n)
        if a_name == "Xq":  # only each row's best TEXT_POOL count: compare those
            touched &= ~out
            out |= _text_changed(old, new, np.nonzero(touched)[0])
        else:
            out |= touched
    return out


def _text_changed(old: Engine, new: Engine, rows: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Row -> whether the text matches of ``rows`` (each row's best, as the text
    component keeps them) differ between the engines."""
    out = np.zeros(new.n, dtype=bool)
    if not len(rows):
        return out
    before = top_per_row(old.Xq[rows] @ old.XT, TEXT_POOL)
    after = top_per_row(new.Xq[rows] @ new.XT, TEXT_POOL)
    before.sort_indices()
    after.sort_indices()
    out[rows[_changed(before, after)[: len(rows)]]] = True
    return out


def _changed(a: Csr, b: Csr) -> NDArray[np.bool_]:
    """Row -> whether it differs between ``a`` and ``b`` (a row only one has counts as
    changed)."""
    na, nb = a.shape[0], b.shape[0]
    m = min(na, nb)
    out = np.zeros(max(na, nb), dtype=bool)
    out[m:] = True
    la = np.diff(a.indptr[: m + 1])
    lb = np.diff(b.indptr[: m + 1])
    out[:m] = la != lb
    same = np.nonzero(la == lb)[0]
    lens = la[same]
    if not lens.sum():
        return out
    pa, pb = _positions(a.indptr[same], lens), _positions(b.indptr[same], lens)
    diff = (a.indices[pa] != b.indices[pb]) | (a.data[pa] != b.data[pb])
    out[np.repeat(same, lens)[diff]] = True
    return out


def _positions(starts: NDArray[Any], lens: NDArray[Any]) -> NDArray[np.int64]:
    """The entry positions of rows starting at ``starts`` with ``lens`` entries each."""
    total = int(lens.sum())
    offsets = np.repeat(np.cumsum(lens) - lens, lens)
    out: NDArray[np.int64] = np.arange(total, dtype=np.int64) - offsets
    return out + np.repeat(starts.astype(np.int64), lens)


def _with_cols(a: Csr, cols: NDArray[np.bool_], n: int) -> NDArray[np.bool_]:
    """Row -> whether ``a`` has an entry in one of the columns ``cols`` (first ``n`` rows)."""
    wide = np.zeros(max(a.shape[1], len(cols)), dtype=bool)
    wide[: len(cols)] = cols
    hit = wide[a.indices]
    rows = np.repeat(np.arange(a.shape[0], dtype=np.int64), np.diff(a.indptr))[hit]
    out = np.zeros(n, dtype=bool)
    out[rows[rows < n]] = True
    return out


# -- the lists a static site was made with ----------------------------------------------------
#: The cache entry: the engine the last site was made with and each page's list digest,
#: for the state it was made at (any folder whose last site was made at that state).
SITE_LISTS = "site-lists"


def to_rank(vault: Vault, state: str) -> tuple[set[str] | None, dict[str, str]]:
    """For a site last made at ``state``: the documents whose
    related lists may have changed since (None: every one) and the digests of the lists
    it was made with (:func:`keep`)."""
    data = vault.cache.get(SITE_LISTS, cache_key(SITE_LISTS), keep=False)
    if not isinstance(data, dict) or data.get("state") != state or not state:
        return None, {}
    try:
        old = ENGINE.load(data["engine"])
        digests = {str(k): str(v) for k, v in data["digests"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        return None, {}
    new = for_vault(vault)
    changed = rows_changed(old, new)
    if changed is None:
        return None, {}
    keys = new.ix.keys
    return {keys[n] for n in np.nonzero(changed)[0].tolist()}, digests


def keep(vault: Vault, state: str, digests: dict[str, str]) -> None:
    """Keep the engine of now and the lists' digests of a site made at ``state``, for
    :func:`to_rank` next time."""
    value = {"state": state, "engine": ENGINE.dump(for_vault(vault)), "digests": digests}
    vault.cache.put(SITE_LISTS, cache_key(SITE_LISTS), value, keep=False)
