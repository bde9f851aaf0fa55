"""The state folder ``.studykb/``: made by studykb for this user, or not read at all.

Everything studykb keeps there is derived from the notes and can be rebuilt, and nearly
all of it is in formats that cannot run code (SQLite rows of JSON text, msgpack). The
one exception is the search index: whoosh pickles its table of contents and stored
fields. So before anything there is read, the folder must be provably studykb's own:

* it is a real folder (not a link), owned by the current user, and not writable by
  anyone else (studykb creates it with mode 0700, whatever the umask);
* it carries a stamp, ``.studykb/trust``: an HMAC, under a key only this user can read
  (``$XDG_STATE_HOME/studykb/key``, default ``~/.local/state/studykb/key``), of the
  folder's device and inode. A ``.studykb/`` that arrived any other way (committed to a
  repository and cloned, copied from another machine or vault, unpacked from an
  archive) has no valid stamp.

A folder owned by someone else, or writable by others, is refused with a clear message
(exit 2); the user decides what to do with it. A folder of the user's own without a
valid stamp (a clone, a copy, or a studykb version before the stamp) is emptied and
made anew, with a one-line notice: it only ever holds what can be rebuilt.

Where the user has no private place for the key (``$HOME`` and ``$XDG_STATE_HOME``
unwritable: a service account, ``nobody``), the key lives in this process only: a state
folder is trusted only when this process (or one it forked) made it, so every command
rebuilds the state it needs, slower but never reading what someone else planted.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import shutil
import stat
from pathlib import Path

from studykb.errors import VaultError
from studykb.runtime import process

TRUST_FILE = "trust"
KEY_BYTES = 32


def key_path() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return Path(base) / "studykb" / "key"


def _key() -> bytes:
    """This user's key (made on first use), else a key of this process only."""
    return _stored_key() or _process_key()


def _process_key() -> bytes:
    """The key of this process alone, drawn when the user has no private place to keep
    one (see the module's text); inherited by forked children, never written anywhere."""
    return process.once("vault.process-key", lambda: os.urandom(KEY_BYTES))


def keyless() -> bool:
    """Whether the key is this process's own (nowhere to keep a key of the user's)."""
    return _stored_key() is None


def _stored_key() -> bytes | None:
    """This user's key (made on first use); None where there is no home to keep it in."""
    path = key_path()
    try:
        with open(path, "rb") as fh:
            key = fh.read()
        if len(key) == KEY_BYTES:
            return key
    except OSError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first (or a bad one is there)
        try:
            key = path.read_bytes()
        except OSError:
            return None
        return key if len(key) == KEY_BYTES else None
    except OSError:
        return None
    key = os.urandom(KEY_BYTES)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
    return key


def _stamp(key: bytes, st: os.stat_result) -> str:
    message = f"studykb-state:{st.st_dev}:{st.st_ino}:{st.st_uid}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def prepare(folder: Path) -> str | None:
    """Make sure ``folder`` (a vault's ``.studykb/``) is studykb's own, creating it if needed.

    Returns a notice when an untrusted folder was set aside and made anew; raises
    :class:`~studykb.errors.VaultError` when it cannot be trusted or made. Safe when
    several processes start at once: the folder appears whole (stamp included) or not
    at all.
    """
    notice = None
    for _attempt in range(5):
        try:
            st = os.lstat(folder)
        except FileNotFoundError:
            if _make(folder):
                return notice
            continue  # another process made it meanwhile: check theirs
        except OSError as exc:
            raise VaultError(f"cannot use the state folder {folder}: {exc.strerror}") from None
        _refuse_foreign(folder, st)
        if _stamped(folder, st):
            return notice
        notice = (
            f"the state folder {folder.name}/ was not made by studykb on this machine "
            "(copied, cloned or made by an older version); rebuilt it"
            if not keyless()
            else f"no private folder for studykb's key ({key_path().parent} cannot be "
            f"written), so the state folder {folder.name}/ is not trusted and was rebuilt"
        )
        _set_aside(folder)
    raise VaultError(f"cannot make the state folder {folder}: it keeps changing under studykb.")


def adopt(folder: Path) -> None:
    """Vouch for a state folder the user copied with their own tools (a test's copy of a
    vault, a backup restored by hand): stamp it for its new place. Only code running as
    the user, with the user's key, can do this; studykb never does it by itself."""
    st = os.lstat(folder)
    _refuse_foreign(folder, st)
    (folder / TRUST_FILE).write_text(_stamp(_key(), st) + "\n", encoding="ascii")


def _refuse_foreign(folder: Path, st: os.stat_result) -> None:
    fix = (
        f"It only holds what studykb can rebuild: delete it (rm -rf '{folder}') and run "
        "the command again."
    )
    if stat.S_ISLNK(st.st_mode):
        raise VaultError(
            f"the state folder {folder} is a symbolic link; studykb does not follow it.", hint=fix
        )
    if not stat.S_ISDIR(st.st_mode):
        raise VaultError(
            f"{folder} is not a folder; studykb keeps its state there.", hint="Remove or rename it."
        )
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise VaultError(
            f"the state folder {folder} belongs to another user (uid "
            f"{st.st_uid}); studykb only reads a state folder of your own.",
            hint=fix,
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        mode = stat.S_IMODE(st.st_mode)
        raise VaultError(
            f"the state folder {folder} can be written by other users (mode "
            f"{mode:04o}), so what is in it cannot be trusted.",
            hint=fix,
        )


def _stamped(folder: Path, st: os.stat_result) -> bool:
    key = _key()
    try:
        written = (folder / TRUST_FILE).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return False
    return hmac.compare_digest(written, _stamp(key, st))


def _set_aside(folder: Path) -> None:
    """Move an untrusted state folder out of the way and delete it."""
    aside = folder.with_name(f"{folder.name}.untrusted-{os.urandom(4).hex()}")
    try:
        os.rename(folder, aside)
    except FileNotFoundError:
        return  # another process did it
    except OSError as exc:
        raise VaultError(
            f"cannot set aside the untrusted state folder {folder}: {exc.strerror}",
            hint=f"Delete it by hand: rm -rf '{folder}'",
        ) from None
    shutil.rmtree(aside, ignore_errors=True)


def _make(folder: Path) -> bool:
    """Create the folder whole (mode 0700, ``.gitignore``, stamp) under a temporary name,
    then give it its name; False when another process's folder got there first."""
    tmp = folder.with_name(f"{folder.name}.new-{os.getpid()}-{os.urandom(4).hex()}")
    try:
        tmp.mkdir(mode=0o700)
        try:
            os.chmod(tmp, 0o700)  # whatever the umask
            (tmp / ".gitignore").write_text("*\n", encoding="utf-8")
            (tmp / TRUST_FILE).write_text(_stamp(_key(), os.lstat(tmp)) + "\n", encoding="ascii")
            os.rename(tmp, folder)  # keeps the inode the stamp names
        except OSError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR):
                return False
            raise
    except OSError as exc:
        raise VaultError(
            f"cannot make the state folder {folder}: {exc.strerror}",
            hint="Make the vault folder writable, or remove what is in the way.",
        ) from None
    return True
