"""Shared fixtures: small vaults in ``tmp_path``, a CLI runner, file hashing.

Golden files (tests/fixtures/parse/*.json) are rewritten instead of compared when
pytest runs with ``--update-golden`` or with ``STUDYKB_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

FIXTURES = Path(__file__).parent / "fixtures"
# The key that vouches for state folders (studykb.vault.statedir) lives in a folder of
# the test run's own, not in the developer's home. The first process of a run makes it
# and removes it when its session ends; xdist workers (started from that process, so
# they inherit STUDYKB_TEST_STATE) each make their own folder inside it, which goes with
# it even when a worker is stopped before its own session ends.
_RUN_STATE = os.environ.get("STUDYKB_TEST_STATE", "")
if _RUN_STATE and os.path.isdir(_RUN_STATE):
    STATE_HOME = tempfile.mkdtemp(prefix="worker-", dir=_RUN_STATE)
else:
    STATE_HOME = _RUN_STATE = tempfile.mkdtemp(prefix="studykb-test-state-")
    os.environ["STUDYKB_TEST_STATE"] = _RUN_STATE
os.environ["XDG_STATE_HOME"] = STATE_HOME
# Hugo's cache (else $TMPDIR/hugo_cache, left behind) goes with this process's folder
os.environ["HUGO_CACHEDIR"] = os.path.join(STATE_HOME, "hugo_cache")
FLAVOURS = FIXTURES / "flavours"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="Rewrite golden files (tests/fixtures/parse/*.json) from the code.",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "slow: takes seconds (real processes, some killed at random moments; a browser; "
        "large notes or vaults); runs first; leave out with -m 'not slow'",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow``, and those an ``xdist_group`` keeps on one worker (a group
    is handed out whole), run first; the others after them, each in the order of the
    files. pytest-xdist hands tests to its workers in this order: the long ones start at
    once on both workers and the short ones fill in the end, instead of one long test
    keeping one worker busy while the other has nothing left."""

    def later(item: pytest.Item) -> bool:
        return item.get_closest_marker("slow") is None and (
            item.get_closest_marker("xdist_group") is None
        )

    items.sort(key=later)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run leaves nothing behind: this process's state folder goes with it (the
    first process's, with every worker's inside)."""
    shutil.rmtree(STATE_HOME, ignore_errors=True)
    if os.environ.get("STUDYKB_TEST_STATE") == STATE_HOME:
        del os.environ["STUDYKB_TEST_STATE"]


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(
        request.config.getoption("--update-golden")
        or os.environ.get("STUDYKB_UPDATE_GOLDEN") == "1"
    )


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's vault settings or colours."""
    monkeypatch.delenv("STUDYKB_VAULT", raising=False)
    # a bug raises its traceback in tests (tests of the internal-error exit unset it)
    monkeypatch.setenv("STUDYKB_DEBUG", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "200")


def write_files(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write ``{vault path: text or bytes}`` below ``root`` (folders made as needed)."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
    return root


@pytest.fixture
def make_vault(tmp_path: Path) -> Callable[..., Path]:
    """``make_vault({"notes/a.md": "..."}, config="exclude = [...]")`` -> the vault folder."""
    counter = {"n": 0}

    def make(files: dict[str, str | bytes], config: str | None = "", name: str = "") -> Path:
        counter["n"] += 1
        root = tmp_path / (name or f"vault{counter['n']}")
        root.mkdir(parents=True)
        if config is not None:
            (root / "studykb.toml").write_text(config, encoding="utf-8")
        return write_files(root, files)

    return make


@pytest.fixture
def open_vault() -> Iterator[Callable[[Path], object]]:
    """``open_vault(path)`` -> a refreshed :class:`studykb.vault.Vault`, closed afterwards."""
    from studykb.vault import Vault

    opened: list[Vault] = []

    def do(path: Path, refresh: bool = True) -> Vault:
        vault = Vault.open(path)
        opened.append(vault)
        if refresh:
            vault.refresh()
        return vault

    yield do
    for vault in opened:
        vault.close()


@pytest.fixture
def flavour(tmp_path: Path) -> Callable[[str], Path]:
    """A copy of one fixture vault (tests/fixtures/flavours/NAME) in ``tmp_path``."""

    def copy(name: str) -> Path:
        dest = tmp_path / name
        shutil.copytree(FLAVOURS / name, dest, symlinks=True)
        return dest

    return copy


def _cli():  # type: ignore[no-untyped-def]
    from studykb.cli.app import cli, prepare

    prepare()
    return cli


@pytest.fixture
def run() -> Callable[..., Result]:
    """Run ``studykb ARGS`` in-process; the result has ``exit_code``, ``stdout``, ``stderr``.

    A traceback on either stream fails the test: bad input must never produce one.
    """
    cli = _cli()

    def invoke(
        *args: str,
        vault: Path | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        input: str | None = None,
    ) -> Result:
        argv = (["--vault", str(vault)] if vault is not None else []) + list(args)
        runner = CliRunner()
        old = Path.cwd()
        if cwd is not None:
            os.chdir(cwd)
        try:
            result = runner.invoke(cli, argv, env=env, input=input, catch_exceptions=True)
        finally:
            os.chdir(old)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        for stream in (result.stdout, result.stderr):
            assert "Traceback (most recent call last)" not in stream
        return result

    return invoke


def run_json(run: Callable[..., Result], *args: str, **kwargs: object) -> tuple[int, dict]:
    """Run a command with ``--json``; stdout must hold exactly one JSON object."""
    result = run(*args, "--json", **kwargs)
    data = json.loads(result.stdout)
    assert isinstance(data, dict), result.stdout
    return result.exit_code, data


def tree_hashes(root: Path) -> dict[str, str]:
    """Hash of every file below ``root`` outside ``.studykb/`` (to prove nothing was written)."""
    out = {}
    for folder, dirs, files in os.walk(root):  # does not follow folder links (loops)
        dirs[:] = [d for d in dirs if d != ".studykb"]
        for name in files:
            path = Path(folder) / name
            if path.is_symlink() or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def problem_codes(problems: list[dict] | list) -> list[tuple[str, int, str]]:
    """(path, line, code) of problems given as dicts or :class:`Problem` objects."""
    out = []
    for p in problems:
        if isinstance(p, dict):
            out.append((p["path"], p["line"], p["code"]))
        else:
            out.append((p.path, p.line, p.code))
    return sorted(out)


REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A copy of the repository's own vault (notes/, courses/, studykb.toml), made once per
    session (per xdist worker) so that its state and search index are built once.

    Tests only read it: one that changes a note copies it into its own ``tmp_path``.
    A test that wrote into it anyway fails the session's teardown, naming the files.
    """
    dest = tmp_path_factory.mktemp("bundled")
    for name in ("notes", "courses"):
        shutil.copytree(REPO / name, dest / name, ignore=shutil.ignore_patterns(".studykb"))
    shutil.copy(REPO / "studykb.toml", dest / "studykb.toml")
    before = tree_hashes(dest)
    yield dest
    after = tree_hashes(dest)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"a test changed the shared bundled vault: {changed[:10]}"
