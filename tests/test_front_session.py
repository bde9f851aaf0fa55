"""Front ends hold a Session (issue 25): what the watch does to the session it is given,
and what importing the API costs (the forwarding client reads it before anything loads)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_SHOW = "\nimport sys\nprint(' '.join(m for m in sys.modules if m.startswith('studykb')))"


def _loaded(code: str) -> set[str]:
    """The studykb modules a fresh interpreter holds after ``code``."""
    out = subprocess.run(
        [sys.executable, "-c", code + _SHOW],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(out.stdout.split())


def test_importing_the_api_loads_nothing_below_it() -> None:
    assert _loaded("import studykb.api") == {"studykb", "studykb.api"}


def test_a_constant_of_the_api_costs_its_module_only() -> None:
    """What ``studykb.launch.forward`` reads before it answers from a running watch."""
    loaded = _loaded("from studykb.api import STATE_DIR, find_vault")
    assert "studykb.config" in loaded
    assert not {m for m in loaded if m.startswith(("studykb.vault", "studykb.session"))}


def test_the_watch_reopens_the_session_it_was_given(make_vault) -> None:
    """The web view hands its own session to the watch: after another process wrote, and
    after studykb.toml changed, that session sees the vault as it is now."""
    from studykb.api import Session
    from studykb.editor.watch import Watcher

    root = make_vault({"notes/a.md": "# A\n", "drafts/d.md": "# D\n"})
    with Session.open(root) as kb:
        watcher = Watcher(kb)
        watcher.start()
        assert sorted(d.title for d in kb.documents().values()) == ["A", "D"]
        (root / "notes/b.md").write_text("# B\n", encoding="utf-8")
        with Session.open(root) as other:  # another process refreshes first
            assert other.refresh().changed
        change = watcher.refresh()
        assert change.stats.added == ["notes/b.md"]
        assert watcher.kb is kb
        assert sorted(d.title for d in kb.documents().values()) == ["A", "B", "D"]

        (root / "studykb.toml").write_text('exclude = ["drafts"]\n', encoding="utf-8")
        assert kb.settings_changed()
        watcher.reload_config()
        assert kb.config.exclude == ("drafts",) and not kb.settings_changed()
        watcher.refresh(force=True, config=True)
        assert sorted(d.title for d in kb.documents().values()) == ["A", "B"]


def test_session_of_wraps_a_vault_once(make_vault, open_vault) -> None:
    from studykb.api import Session

    vault = open_vault(make_vault({"a.md": "# A\n"}))
    kb = Session.of(vault)
    assert kb.vault is vault and Session.of(kb) is kb


def test_the_buffer_view_after_a_refresh_is_the_whole_one(make_vault) -> None:
    """``Session.buffer_view(base, stats)`` (the language server's incremental update)
    knows what a view built whole knows."""
    from studykb.api import Session

    root = make_vault({"notes/a.md": "# A\n\n[[b]]\n", "notes/b.md": "---\nid: b\n---\n# B\n"})
    with Session.open(root) as kb:
        kb.refresh()
        base = kb.buffer_view()
        Path(root / "notes/b.md").unlink()
        (root / "notes/c.md").write_text("---\nid: c\naliases: [see]\n---\n# C\n", encoding="utf-8")
        stats = kb.refresh()
        after, whole = kb.buffer_view(base, stats), kb.buffer_view()
        assert sorted(after.docs) == sorted(whole.docs) != sorted(base.docs)
        assert after.names.table == whole.names.table
        labels = sorted(c.label for c in after.index.cands)
        assert labels == sorted(c.label for c in whole.index.cands)
        assert "see" in labels and "b" not in labels
