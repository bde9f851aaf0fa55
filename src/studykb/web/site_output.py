"""The output folder of ``studykb site`` and its manifest (``.studykb-site.json``):
every file the site wrote with a digest of its content, and for every document's page
the digest of what it was made from (:mod:`studykb.web.site_inputs`), the vault files it
shows and its size. Only real files inside the real output folder are written or
removed (see :mod:`studykb.web.site`)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from studykb.errors import UsageError
from studykb.runtime import process

MANIFEST = ".studykb-site.json"
MANIFEST_VERSION = 1


class Output:
    """The output folder: writes a file only when its content changed."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._root = os.fspath(folder)
        data = _manifest_data(folder)
        self.old, self.old_state, self.old_inputs = _read_manifest(data)
        self.old_sources, self.old_common, self.old_docs = _read_record(data, self.old_state)
        self.state = ""
        """What the site is made from (vault state, code, options); see :func:`made_from`."""
        self.new: dict[str, str] = {}
        self.inputs: dict[str, tuple[str, list[str]]] = {}
        """Page -> (digest of its inputs, the vault files it shows)."""
        self.sources: dict[str, str] = {}
        """Path -> content digest of every vault file the site is made from."""
        self.common = ""
        """What every page is made from (:func:`studykb.web.site_inputs.shared`)."""
        self.docs: dict[str, tuple[list[str], list[str]]] = {}
        """Document -> (its pages, the vault files its inputs read): see
        :mod:`studykb.web.site_changes`."""
        self.written: list[str] = []
        self.folders: set[Path] = set()
        """Folders known to exist (made or seen by this process)."""
        self.sizes: dict[str, int] = {}
        """The size of each file this process wrote or found as written (:meth:`kept`),
        for the manifest (the others' are looked up)."""

    def put(self, path: str, data: bytes) -> None:
        digest, written = self.write(path, data)
        self.record(path, digest, written)

    def write(self, path: str, data: bytes) -> tuple[str, bool]:
        """Write ``data`` unless the file already holds it: (digest, whether written).
        Safe in a worker process (nothing is recorded here but its size, which the
        parent looks up again when a worker wrote it)."""
        digest = _digest(data)
        self.sizes[path] = len(data)
        if self.old.get(path) == digest and _size(self._at(path)) == len(data):
            return digest, False
        target = self.folder / path
        self._real_folder(target.parent)
        if os.path.islink(target):
            raise UsageError(_link_message(self.folder, target))
        temporary = target.with_name(f".{target.name}.studykb-tmp")
        temporary.write_bytes(data)
        os.replace(temporary, target)
        return digest, True

    def record(self, path: str, digest: str, written: bool) -> None:
        self.new[path] = digest
        if written:
            self.written.append(path)

    def keep_all(self) -> None:
        """Keep the last build as it is: its files, and what the next build compares
        with (every page's inputs, the record of :mod:`studykb.web.site_changes`)."""
        self.new = dict(self.old)
        self.inputs = {p: (inputs, assets) for p, (inputs, assets, _n) in self.old_inputs.items()}
        self.sources, self.common, self.docs = self.old_sources, self.old_common, self.old_docs

    def kept(self, path: str, inputs: str) -> tuple[str, list[str]] | None:
        """(digest, vault files shown) of the page at ``path`` as the last build wrote it,
        if it was made from the same ``inputs`` and its file is still there, the same
        size; else None (it is made again)."""
        old = self.old_inputs.get(path)
        digest = self.old.get(path)
        if old is None or digest is None or old[0] != inputs:
            return None
        if _size(self._at(path)) != old[2]:
            return None
        self.sizes[path] = old[2]
        return digest, old[1]

    def _size_of(self, path: str) -> int:
        size = self.sizes.get(path)
        return _size(self._at(path)) if size is None else size

    def _at(self, path: str) -> str:
        """The file of the output folder at ``path`` (a manifest's path: never ``..``)."""
        return os.path.join(self._root, path)

    def old_bytes(self, path: str) -> bytes | None:
        """The file at ``path`` as the last build wrote it (its content still has the
        recorded digest); None otherwise."""
        try:
            data = (self.folder / path).read_bytes()
        except OSError:
            return None
        return data if _digest(data) == self.old.get(path) else None

    def _real_folder(self, folder: Path) -> None:
        """Make ``folder`` (inside the output) as needed; every part of it below the
        output folder must be a real folder, never a link."""
        if folder in self.folders:
            return
        if folder != self.folder:
            self._real_folder(folder.parent)
            try:
                st = os.lstat(folder)
            except FileNotFoundError:
                folder.mkdir(exist_ok=True)
                st = os.lstat(folder)
            if stat.S_ISLNK(st.st_mode):
                raise UsageError(_link_message(self.folder, folder))
            if not stat.S_ISDIR(st.st_mode):
                raise UsageError(f"{folder} is in the way of the site: it is not a folder.")
        self.folders.add(folder)

    def finish(self) -> list[str]:
        """Remove what an earlier build wrote that is no longer part of the site: only
        real files below real folders whose content is still what the site wrote."""
        removed = []
        for path in sorted(set(self.old) - set(self.new)):
            if self._remove(path):
                removed.append(path)
        manifest = {
            "version": MANIFEST_VERSION,
            "state": self.state,
            "files": dict(sorted(self.new.items())),
            "inputs": {
                path: [inputs, assets, self._size_of(path)]
                for path, (inputs, assets) in sorted(self.inputs.items())
                if path in self.new
            },
        }
        if self.common:  # what the next build compares with (site_changes)
            manifest["record"] = {
                "common": self.common,
                "vault": dict(sorted(self.sources.items())),
                "docs": {k: [p, d] for k, (p, d) in sorted(self.docs.items())},
            }
        # one line: the C encoder (an indent makes json use its Python one, ~10x slower);
        # ASCII (its paths escaped where they are not): a quarter faster at 10k documents
        data = json.dumps(manifest, separators=(",", ":")).encode()
        temporary = self.folder / (MANIFEST + ".tmp")
        temporary.write_bytes(data)
        os.replace(temporary, self.folder / MANIFEST)
        return removed

    def _remove(self, path: str) -> bool:
        target = self.folder / path
        parent = self.folder
        for part in Path(path).parts[:-1]:  # never through a link (refused before, but raced)
            parent = parent / part
            if not parent.is_dir() or parent.is_symlink():
                return False
        try:
            st = os.lstat(target)
            if not stat.S_ISREG(st.st_mode) or _digest(target.read_bytes()) != self.old[path]:
                return False  # not the file this site wrote: leave it
            target.unlink()
        except OSError:
            return False
        return True


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _link_message(out: Path, link: Path) -> str:
    try:
        points = os.readlink(link)
    except OSError:
        points = "?"
    return (
        f"{link} is a symbolic link (to {points}) inside the output folder {out}; "
        "studykb site writes and removes only real files there. Remove the link, or "
        "write the site to another folder."
    )


def refuse_links(out: Path) -> None:
    """Refuse an output folder holding a symbolic link anywhere below it. Each entry's
    type is the one its folder's listing gives (no system call per file: a site of 10k
    documents holds some 11,500 files)."""
    folders = [os.fspath(out)]
    while folders:
        with os.scandir(folders.pop()) as listed:
            entries = sorted(listed, key=lambda e: e.name)
        for entry in entries:
            if entry.is_symlink():
                raise UsageError(_link_message(out, Path(entry.path)))
        # never into a folder link (refused above); in name order
        folders.extend(e.path for e in reversed(entries) if e.is_dir(follow_symlinks=False))


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


OldInputs = dict[str, tuple[str, list[str], int]]


def _manifest_data(folder: Path) -> Any:
    """The last build's manifest in ``folder`` as read (None: none readable): the one
    :func:`read_ahead` read, when the file is still the one it read."""
    path = folder / MANIFEST
    ahead = _ahead().pop(os.fspath(path), None)
    if ahead is not None and ahead[0] == _file_id(path):
        return ahead[1]
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _ahead() -> dict[str, tuple[tuple[int, ...], Any]]:
    """The manifests this process read ahead (:func:`read_ahead`), by path: (the file's
    identity, its data)."""
    return process.once("web.site-manifests", dict)


def read_ahead(folder: Path) -> None:
    """Read the manifest in ``folder`` before :class:`Output` is made for it (the site's
    start-up seam: while the refresh runs beside); taken only if the file is the same
    then (device, inode, size and modification time)."""
    path = folder.expanduser().resolve() / MANIFEST
    found = _file_id(path)
    if not found:
        return
    try:
        _ahead()[os.fspath(path)] = (found, json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return


def _file_id(path: Path) -> tuple[int, ...]:
    try:
        st = os.stat(path)
    except OSError:
        return ()
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _read_manifest(data: Any) -> tuple[dict[str, str], str, OldInputs]:
    """(path -> digest, state, page -> (digest of its inputs, vault files shown, size))
    of the last build's manifest ``data``."""
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict) or data.get("version") != MANIFEST_VERSION:
        return {}, "", {}
    state = data.get("state")
    kept = {
        p: d
        for p, d in files.items()
        if isinstance(p, str) and isinstance(d, str) and _safe_path(p)
    }
    return kept, state if isinstance(state, str) else "", _old_inputs(data.get("inputs"), kept)


def _old_inputs(data: Any, files: dict[str, str]) -> OldInputs:
    """The manifest's page inputs, every malformed entry left out (that page is made)."""
    out: OldInputs = {}
    if not isinstance(data, dict):
        return out
    for path, entry in data.items():
        if path not in files or not isinstance(entry, list) or len(entry) != 3:
            continue
        inputs, assets, size = entry
        if (
            isinstance(inputs, str)
            and isinstance(size, int)
            and isinstance(assets, list)
            and all(isinstance(a, str) for a in assets)
        ):
            out[path] = (inputs, assets, size)
    return out


Record = tuple[dict[str, str], str, dict[str, tuple[list[str], list[str]]]]


def _read_record(data: Any, state: str) -> Record:
    """(vault file digests, shared digest, document -> (pages, files its inputs read))
    the last build recorded (:mod:`studykb.web.site_changes`); empty when missing or
    malformed (every page's inputs are computed then)."""
    empty: Record = ({}, "", {})
    if not state or not isinstance(data, dict):
        return empty
    data = data.get("record")
    if not isinstance(data, dict):
        return empty
    vault, common, docs = data.get("vault"), data.get("common"), data.get("docs")
    if not (isinstance(vault, dict) and isinstance(common, str) and isinstance(docs, dict)):
        return empty
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in vault.items()):
        return empty
    out: dict[str, tuple[list[str], list[str]]] = {}
    for key, entry in docs.items():
        if not (isinstance(entry, list) and len(entry) == 2):
            return empty
        paths, deps = entry
        if not (_strings(paths) and _strings(deps)):
            return empty
        out[key] = (paths, deps)
    return vault, common, out


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _safe_path(path: str) -> bool:
    """A manifest entry that names a file inside the output folder (never ``..``)."""
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and all(p not in ("", ".", "..") for p in parts)
